// The panels every picture draws: which tensors, which batch items, heads, queries
// and keys (or positions and features), what each cell is, and the scale of each tensor.
#include "attn/render/heatmap_panels.hpp"

#include "attn/compute/tensor_stats.hpp"
#include "attn/render/render_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "attn/compute/error.hpp"
#include "attn/compute/stage_table.hpp"

namespace attn::heatmap {
namespace {

/// The stages that apply the run's mask to their weights or scores.
bool applies_mask(const stage& s, const tensor& x) {
    return x.type == element_type::float32 &&
           (s.id() == stage_id::masked || s.id() == stage_id::softmax || s.id() == stage_id::dropout);
}

/// Whether `x` is [B,H,Sq,Sk]: its dims are batch, head, query, key.
bool is_query_by_key(const tensor& x) {
    return x.values.dimension() == 4 && x.dims.size() == 4 && x.dims[0] == "batch" && x.dims[1] == "head" &&
           x.dims[2] == "query" && x.dims[3] == "key";
}

/// Whether `x` is a position table [S,F]: pe [S,Din] (pe_kv [Sk,Dkv]) of the positions
/// stage, or rope's cos and sin [Sq,dk]; rows are positions.
bool is_position_table(const tensor& x) {
    if (x.values.dimension() != 2 || x.dims.size() != 2) return false;
    const bool positions = x.dims[0] == "seq" || x.dims[0] == "kv_seq";
    const bool features = x.dims[1] == "d_in" || x.dims[1] == "d_kv_in" || x.dims[1] == "head_dim";
    return positions && features;
}

/// 0, 1, ..., n-1, cut to the first `limit` unless `full`.
std::vector<std::size_t> first_indices(std::size_t n, std::size_t limit, bool full) {
    std::vector<std::size_t> indices(full ? n : std::min(n, limit));
    std::iota(indices.begin(), indices.end(), 0);
    return indices;
}

/// --batch-index, --head and --row must name an item, head and query of this run.
void check_view(const config& c, const render_options& options) {
    const auto check = [](const std::optional<std::size_t>& given, std::int64_t size, const char* flag,
                          const char* items) {
        if (given && *given >= static_cast<std::size_t>(size))
            throw usage_error(std::string(flag) + " " + std::to_string(*given) + ": this run has " + items + " 0 to " +
                              std::to_string(size - 1));
    };
    check(options.batch_index, c.batch, "--batch-index", "batch items");
    check(options.head, c.heads, "--head", "heads");
    check(options.row, c.seq, "--row", "queries");
}

/// The one panel of a position table [S,F]: the same for every batch item and head. --row
/// keeps one row when the rows are the queries' positions (seq), as it does in JSON.
std::vector<panel> table_panels(const tensor& x, const render_options& options, std::size_t max_side) {
    panel p;
    p.every_batch = true;
    const bool query_rows = x.dims[0] == "seq";
    p.queries = options.row && query_rows ? std::vector<std::size_t>{*options.row}
                                          : first_indices(x.values.shape()[0], max_side, options.full);
    p.keys = first_indices(x.values.shape()[1], max_side, options.full);
    return {p};
}

/// The panels of `x`: one per batch item and head, within --batch-index and --head.
/// `every_batch`: x's batch axis has size 1, the same for every item (alibi's bias), and
/// --batch-index does not pick in it.
std::vector<panel> panels_of(const tensor& x, const render_options& options, std::size_t max_side, bool every_batch) {
    const auto& shape = x.values.shape();  // [B,H,Sq,Sk]
    const bool every_head = x.type == element_type::boolean && shape[1] == 1;  // the mask [B,1,Sq,Sk]
    panel base;
    base.every_batch = every_batch;
    base.queries = options.row ? std::vector<std::size_t>{*options.row} : first_indices(shape[2], max_side, options.full);
    base.keys = first_indices(shape[3], max_side, options.full);
    std::vector<panel> panels;
    for (std::size_t b = 0; b < shape[0]; ++b) {
        if (options.batch_index && *options.batch_index != b && !every_batch) continue;
        for (std::size_t h = 0; h < shape[1]; ++h) {
            if (!every_head && options.head && *options.head != h) continue;
            panels.push_back(base);
            panels.back().batch = b;
            if (!every_head) panels.back().head = h;
        }
    }
    return panels;
}

/// The scale of a tensor with values of both signs (scores, scaled, masked): -m .. m,
/// m the largest |value| drawn, so that 0 is always the middle colour and a cell's
/// sign reads from its side of the middle; a tensor of zeros is all middle.
value_scale symmetric_scale(float lo, float hi) {
    const float m = std::max(std::fabs(lo), std::fabs(hi));
    return {-m, m};
}

/// `scale` with the ends --vmin and --vmax give in their place; a usage error when the
/// scale left is empty ("--vmin 2.0000 is not below the top of the scale of softmax.weights (1.0000)").
value_scale forced(value_scale scale, const render_options& options, const std::string& tensor_name) {
    if (options.vmin) scale.lo = *options.vmin;
    if (options.vmax) scale.hi = *options.vmax;
    if (scale.lo < scale.hi) return scale;
    const std::string lo = number_text(scale.lo, options.precision), hi = number_text(scale.hi, options.precision);
    if (options.vmin && !options.vmax)
        throw usage_error("--vmin " + lo + " is not below the top of the scale of " + tensor_name + " (" + hi +
                          "): give --vmax too");
    throw usage_error("--vmax " + hi + " is not above the bottom of the scale of " + tensor_name + " (" + lo +
                      "): give --vmin too");
}

/// The scale and the kinds of cell present, over every drawn cell. Attention weights
/// are shares of 1: they are drawn on 0 .. 1 (after dropout, 0 .. 1/(1-p)) whatever
/// this run's range, so that 0.47 and 0.53 look alike, as they are. The position
/// tables are sines and cosines: drawn on -1 .. 1, so that a position's stripes keep
/// their colours whatever rows are drawn. Scores (and the bias) are drawn on a scale
/// symmetric around 0. --vmin and --vmax replace either end (not the mask's: booleans
/// are false and true).
void survey(tensor_heatmap& h, const config& c, const render_options& options) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (const panel& p : h.panels)
        for (std::size_t i : p.queries)
            for (std::size_t j : p.keys) {
                const cell_kind k = h.kind(p, i, j);
                h.present[static_cast<std::size_t>(k)] = true;
                if (k != cell_kind::value) continue;
                lo = std::min(lo, h.at(p, i, j));
                hi = std::max(hi, h.at(p, i, j));
            }
    const bool weights = !h.boolean() && (h.from->id() == stage_id::softmax || h.from->id() == stage_id::dropout);
    if (h.boolean()) {
        h.scale = {0.0f, 1.0f};  // false at the low end, true at the high end
        return;
    }
    if (h.table())
        h.scale = {-1.0f, 1.0f};
    else if (weights && h.from->id() == stage_id::dropout)
        h.scale = {0.0f, static_cast<float>(1.0 / (1.0 - c.dropout.p))};
    else if (weights)
        h.scale = {0.0f, 1.0f};
    else if (lo <= hi)
        h.scale = symmetric_scale(lo, hi);
    else
        h.scale = {0.0f, 0.0f};  // no finite value to draw
    if (options.vmin || options.vmax) h.scale = forced(h.scale, options, h.name());
}

/// "queries 0–47 of 512": the part of one axis drawn, or empty when it is all of it.
/// Numbered from `first` ("positions 3–130 of 3–514") when its indices are not its labels.
std::string axis_note(const std::vector<std::size_t>& shown, std::size_t size, const axis& a, std::size_t first = 0) {
    if (shown.size() == size || shown.empty()) return {};
    const std::string of = first == 0 ? std::to_string(size)
                                      : std::to_string(first) + "–" + std::to_string(first + size - 1);
    if (shown.size() == 1) return std::string(a.one) + " " + std::to_string(first + shown.front()) + " of " + of;
    return std::string(a.many) + " " + std::to_string(first + shown.front()) + "–" + std::to_string(first + shown.back()) +
           " of " + of;
}

}  // namespace

namespace {

std::string drawable_stages_text(const config* c) {
    std::string text;
    for (const stage_info& info : stage_table)
        if (drawable(info.id) && (c == nullptr || stage_in_run(*c, info.id)))
            text += (text.empty() ? "" : ", ") + std::string(info.name);
    return text;
}

}  // namespace

std::string drawable_stages_text(const config& c) { return drawable_stages_text(&c); }
std::string drawable_stages_text() { return drawable_stages_text(nullptr); }

float tensor_heatmap::at(const panel& p, std::size_t query, std::size_t key) const {
    if (table()) return values->values(query, key);
    return values->values(p.batch, p.head.value_or(0), query, key);
}

cell_kind tensor_heatmap::kind(const panel& p, std::size_t query, std::size_t key) const {
    const float v = at(p, query, key);
    if (std::isnan(v)) return cell_kind::nan;  // before masked: a row with no allowed key shows its NaN
    const bool is_mask = from->id() == stage_id::mask;
    if ((is_mask && v == 0.0f) || (mask != nullptr && mask->values(p.batch, 0, query, key) == 0.0f))
        return cell_kind::masked;
    if (std::isinf(v)) return v < 0 ? cell_kind::neg_inf : cell_kind::pos_inf;
    return cell_kind::value;
}

std::string tensor_heatmap::name() const { return std::string(from->name()) + "." + values->name; }

std::string stats_text(const config& c, const tensor_heatmap& h, const render_options& options) {
    const tensor_stats s = stats_of(*h.values, stats_kind_of(h.from->id(), h.values->name),
                                    static_cast<double>(c.head_dim()));
    return stats_line(s, h.from->name(), options.precision);
}

std::string place(const panel& p) {
    if (p.every_batch)
        return p.head ? "head " + std::to_string(*p.head) + " (every batch item)" : "every batch item and head";
    const std::string batch = "batch " + std::to_string(p.batch);
    return p.head ? batch + ", head " + std::to_string(*p.head) : batch + " (every head)";
}

std::string title(const tensor_heatmap& h, const panel& p) { return h.name() + " — " + place(p); }

std::string crop_note(const tensor_heatmap& h, const panel& p) {
    const std::string queries = axis_note(p.queries, h.query_count(), h.rows, h.first_row);
    const std::string keys = axis_note(p.keys, h.key_count(), h.columns);
    if (queries.empty() || keys.empty()) return queries + keys;
    return queries + ", " + keys;
}

std::string panels_span(const tensor_heatmap& h) {
    const panel &first = h.panels.front(), &last = h.panels.back();
    if (first.every_batch) {
        const std::size_t a = first.head.value_or(0), b = last.head.value_or(0);
        return (a != b ? "heads " + std::to_string(a) + "–" : "head ") + std::to_string(b);
    }
    return "batch " + std::to_string(first.batch) + (last.batch != first.batch ? "–" + std::to_string(last.batch) : "");
}

std::string panels_note(const tensor_heatmap& h) {
    if (h.panels.size() >= h.panels_in_view) return {};
    return std::to_string(h.panels.size()) + " of " + std::to_string(h.panels_in_view) + " panels: " + panels_span(h);
}

std::vector<tensor_heatmap> collect(const trace& t, const render_options& options, std::size_t max_side,
                                    std::size_t max_panels) {
    check_view(t.cfg, options);
    const stage* mask_stage = t.find(stage_id::mask);
    const tensor* mask = mask_stage != nullptr ? &mask_stage->at("mask") : nullptr;
    std::vector<tensor_heatmap> heatmaps;
    for (const stage& s : t.stages) {
        if (!options.shows(s.id()) || !drawable(s.id())) continue;
        for (const tensor& x : s.tensors) {
            const bool table = is_position_table(x);
            if (!table && !is_query_by_key(x)) continue;
            tensor_heatmap h;
            h.from = &s;
            h.values = &x;
            if (applies_mask(s, x)) h.mask = mask;
            if (table) {
                h.rows = position_axis;
                h.columns = x.dims[1] == "head_dim" ? head_dim_axis : feature_axis;
                // rope's cos and sin hold the queries' positions: N.. in a decoding step
                h.first_row = x.dims[0] == "seq" ? static_cast<std::size_t>(first_query_position(t.cfg)) : 0;
                h.panels = table_panels(x, options, max_side);
            } else {
                h.panels = panels_of(x, options, max_side, s.id() == stage_id::alibi);
                // --tokens with --vocab: a layer's own tokens are its queries and keys (self-attention, no cache)
                const std::vector<std::string>& tokens = t.cfg.sources.token_labels;
                if (!tokens.empty() && t.cfg.past == 0) {
                    if (h.query_count() == tokens.size()) h.row_labels = tokens;
                    if (h.key_count() == tokens.size()) h.column_labels = tokens;
                }
            }
            if (h.panels.empty()) continue;
            h.panels_in_view = h.panels.size();
            if (!options.full && h.panels.size() > max_panels) h.panels.resize(max_panels);
            survey(h, t.cfg, options);
            heatmaps.push_back(std::move(h));
        }
    }
    return heatmaps;
}

std::string number_text(float v, int digits, bool boolean) {
    if (boolean) return v != 0.0f ? "true" : "false";
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    const double a = std::fabs(static_cast<double>(v));
    const bool scientific = a >= 1e5 || (a > 0 && a < 0.5 * std::pow(10.0, -digits));
    if (scientific)
        std::snprintf(buf, sizeof buf, "%.*e", std::max(1, digits - 1), static_cast<double>(v));
    else
        std::snprintf(buf, sizeof buf, "%.*f", digits, static_cast<double>(v));
    return buf;
}

std::string_view kind_name(cell_kind k) {
    switch (k) {
        case cell_kind::masked: return "masked";
        case cell_kind::neg_inf: return "-inf";
        case cell_kind::pos_inf: return "inf";
        case cell_kind::nan: return "NaN";
        case cell_kind::value: break;
    }
    return "value";
}

}  // namespace attn::heatmap
