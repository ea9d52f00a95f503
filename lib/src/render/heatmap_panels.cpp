// The panels every picture draws: which tensors, which batch items, heads, queries
// and keys, what each cell is, and the scale of each tensor.
#include "attn/render/heatmap_panels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "attn/compute/error.hpp"

namespace attn::heatmap {
namespace {

/// The stages that apply the run's mask to their weights or scores.
bool applies_mask(const stage& s, const tensor& x) {
    const std::string_view n = s.name();
    return x.type == element_type::float32 && (n == "masked" || n == "softmax" || n == "dropout");
}

/// Whether `x` is [B,H,Sq,Sk]: its dims are batch, head, query, key.
bool is_query_by_key(const tensor& x) {
    return x.values.dimension() == 4 && x.dims.size() == 4 && x.dims[0] == "batch" && x.dims[1] == "head" &&
           x.dims[2] == "query" && x.dims[3] == "key";
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

/// The panels of `x`: one per batch item and head, within --batch-index and --head.
std::vector<panel> panels_of(const tensor& x, const render_options& options, std::size_t max_side) {
    const auto& shape = x.values.shape();  // [B,H,Sq,Sk]
    const bool every_head = x.type == element_type::boolean && shape[1] == 1;  // the mask [B,1,Sq,Sk]
    panel base;
    base.queries = options.row ? std::vector<std::size_t>{*options.row} : first_indices(shape[2], max_side, options.full);
    base.keys = first_indices(shape[3], max_side, options.full);
    std::vector<panel> panels;
    for (std::size_t b = 0; b < shape[0]; ++b) {
        if (options.batch_index && *options.batch_index != b) continue;
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
/// this run's range, so that 0.47 and 0.53 look alike, as they are. Scores are drawn
/// on a scale symmetric around 0. --vmin and --vmax replace either end (not the
/// mask's: booleans are false and true).
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
    if (weights && h.from->id() == stage_id::dropout)
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
std::string axis_note(const std::vector<std::size_t>& shown, std::size_t size, const char* one, const char* many) {
    if (shown.size() == size || shown.empty()) return {};
    if (shown.size() == 1) return std::string(one) + " " + std::to_string(shown.front()) + " of " + std::to_string(size);
    return std::string(many) + " " + std::to_string(shown.front()) + "–" + std::to_string(shown.back()) + " of " +
           std::to_string(size);
}

}  // namespace

bool drawable(std::string_view stage_name) {
    return std::find(drawable_stages.begin(), drawable_stages.end(), stage_name) != drawable_stages.end();
}

float tensor_heatmap::at(const panel& p, std::size_t query, std::size_t key) const {
    return values->values(p.batch, p.head.value_or(0), query, key);
}

cell_kind tensor_heatmap::kind(const panel& p, std::size_t query, std::size_t key) const {
    const float v = at(p, query, key);
    if (std::isnan(v)) return cell_kind::nan;  // before masked: a row with no allowed key shows its NaN
    const bool is_mask = from->name() == "mask";
    if ((is_mask && v == 0.0f) || (mask != nullptr && mask->values(p.batch, 0, query, key) == 0.0f))
        return cell_kind::masked;
    if (std::isinf(v)) return v < 0 ? cell_kind::neg_inf : cell_kind::pos_inf;
    return cell_kind::value;
}

std::string tensor_heatmap::name() const { return std::string(from->name()) + "." + values->name; }

std::string place(const panel& p) {
    const std::string batch = "batch " + std::to_string(p.batch);
    return p.head ? batch + ", head " + std::to_string(*p.head) : batch + " (every head)";
}

std::string title(const tensor_heatmap& h, const panel& p) { return h.name() + " — " + place(p); }

std::string crop_note(const tensor_heatmap& h, const panel& p) {
    const std::string queries = axis_note(p.queries, h.query_count(), "query", "queries");
    const std::string keys = axis_note(p.keys, h.key_count(), "key", "keys");
    if (queries.empty() || keys.empty()) return queries + keys;
    return queries + ", " + keys;
}

std::string panels_note(const tensor_heatmap& h) {
    if (h.panels.size() >= h.panels_in_view) return {};
    const std::size_t first = h.panels.front().batch, last = h.panels.back().batch;
    return std::to_string(h.panels.size()) + " of " + std::to_string(h.panels_in_view) + " panels: batch " +
           std::to_string(first) + (last != first ? "–" + std::to_string(last) : "");
}

std::vector<tensor_heatmap> collect(const trace& t, const render_options& options, std::size_t max_side,
                                    std::size_t max_panels) {
    check_view(t.cfg, options);
    const stage* mask_stage = t.find("mask");
    const tensor* mask = mask_stage != nullptr ? &mask_stage->at("mask") : nullptr;
    std::vector<tensor_heatmap> heatmaps;
    for (const stage& s : t.stages) {
        if (!options.shows(s.name()) || !drawable(s.name())) continue;
        for (const tensor& x : s.tensors) {
            if (!is_query_by_key(x)) continue;
            tensor_heatmap h;
            h.from = &s;
            h.values = &x;
            if (applies_mask(s, x)) h.mask = mask;
            h.panels = panels_of(x, options, max_side);
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
