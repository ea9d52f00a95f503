// --row Q with --format table: one query's row as horizontal bars (render_row.hpp). The
// charts of a stage share one notation (the table's rule) and one value width, so they line up.
#include "attn/render/text_headings.hpp"
#include "attn/render/render_row.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "attn/compute/tensor_stats.hpp"
#include "attn/render/render_stats.hpp"
#include "attn/render/selection.hpp"
#include "attn/render/table_parts.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {

namespace {

constexpr std::size_t bar_width = 40;       // columns of a weight of 1; of both halves for scores
constexpr std::size_t top_count = 3;        // keys ranked and named under each chart
constexpr std::size_t long_row = 40;        // a row of more keys shows only its largest ...
constexpr std::size_t keys_of_long_row = 10;  // ... this many, unless --full

// A block of n/8 of a column, for n = 1..7 (the bar's last, partial column).
constexpr std::string_view eighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
constexpr std::string_view full_block = "█";
constexpr std::string_view right_half = "▐";  // a negative bar's partial column, next to the axis side
constexpr std::string_view axis_line = "│";

/// The headings' ANSI codes and the bars' (cyan), or empty strings when colour is off.
struct colours : heading_style {
    std::string_view bar;
};

colours make_colours(bool on) { return {make_heading_style(on), on ? "\x1b[36m" : ""}; }

/// Weights are drawn from 0; scores (which may be negative) left or right of an axis.
enum class row_kind { weights, scores };

row_kind kind_of(std::string_view stage_name) {
    return stage_name == "softmax" || stage_name == "dropout" ? row_kind::weights : row_kind::scores;
}

/// A [B,H,Sq,Sk] float tensor: a plane of one value per (query, key), per head.
bool is_plane(const tensor& x) {
    return x.type == element_type::float32 && x.dims == std::vector<std::string>{"batch", "head", "query", "key"};
}

/// One key of a row, as its chart shows it.
struct key_entry {
    std::size_t key = 0;
    float value = 0.0f;
    bool masked = false;   // the mask forbids it (from the masked stage on)
    bool dropped = false;  // dropout's keep is false
    std::size_t rank = 0;  // 1..top_count among the keys attended most; 0 otherwise
    bool shown = true;     // false: a long row leaves it out
};

/// One chart: the row `query` of one (batch, head) of one tensor.
struct row_chart {
    std::string title;  // "weights[batch=0, head=1, query=3]"
    std::vector<key_entry> keys;
    std::vector<std::size_t> order;  // the rankable keys (not masked, dropped or nan), largest value first
    std::size_t left_out = 0;        // keys a long row does not show
    std::size_t row = 0;             // the row over the tensor's [B,H,Sq], row-major (--stats)
};

/// Ranks the keys that are neither masked, dropped nor nan: largest value first, the
/// lower key first among equals. A long row then keeps only its largest keys.
void rank_keys(row_chart& chart, const render_options& options) {
    for (const key_entry& e : chart.keys)
        if (!e.masked && !e.dropped && !std::isnan(e.value)) chart.order.push_back(e.key);
    std::stable_sort(chart.order.begin(), chart.order.end(),
                     [&](std::size_t a, std::size_t b) { return chart.keys[a].value > chart.keys[b].value; });
    for (std::size_t r = 0; r < chart.order.size() && r < top_count; ++r) chart.keys[chart.order[r]].rank = r + 1;
    if (options.full || chart.keys.size() <= long_row) return;
    for (key_entry& e : chart.keys) e.shown = false;
    for (std::size_t r = 0; r < chart.order.size() && r < keys_of_long_row; ++r) chart.keys[chart.order[r]].shown = true;
    for (const key_entry& e : chart.keys) chart.left_out += e.shown ? 0 : 1;
}

/// The row `q` of `x` at (b, h), with the keys the mask forbids and dropout dropped marked.
row_chart read_row(const trace& t, const stage& s, const tensor& x, std::size_t b, std::size_t h, std::size_t q,
                   const render_options& options) {
    const stage* mask_stage = t.find(stage_id::mask);
    const bool after_mask = mask_stage != nullptr && s.info->id >= stage_id::masked;
    const tensor* keep = s.id() == stage_id::dropout ? &s.at("keep") : nullptr;
    row_chart chart;
    chart.title = x.name + "[batch=" + std::to_string(b) + ", head=" + std::to_string(h) +
                  ", query=" + std::to_string(q) + "]";
    const std::size_t keys = x.values.shape()[3];
    for (std::size_t k = 0; k < keys; ++k) {
        key_entry e;
        e.key = k;
        e.value = x.values(b, h, q, k);
        e.masked = after_mask && mask_stage->at("mask").values(b, 0, q, k) == 0.0f;  // [B,1,Sq,Sk]
        e.dropped = keep != nullptr && keep->values(b, h, q, k) == 0.0f;
        chart.keys.push_back(e);
    }
    rank_keys(chart, options);
    return chart;
}

/// The batch items or heads a view selects: the one asked for, or all `n`.
std::vector<std::size_t> selected(const std::optional<std::size_t>& index, std::size_t n) {
    if (index) return {*index};
    std::vector<std::size_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    return all;
}

/// Every chart of stage `s`: its plane tensors (not dropout's boolean keep), each
/// selected batch item, each selected head.
std::vector<row_chart> charts_of(const trace& t, const stage& s, const render_options& options) {
    std::vector<row_chart> charts;
    for (const tensor& x : s.tensors) {
        if (!is_plane(x)) continue;
        select_in(x, options);  // throws when an index is outside its axis (the program checks first)
        const auto& shape = x.values.shape();
        for (const std::size_t b : selected(options.batch_index, shape[0]))
            for (const std::size_t h : selected(options.head, shape[1])) {
                charts.push_back(read_row(t, s, x, b, h, *options.row, options));
                charts.back().row = (b * shape[1] + h) * shape[2] + *options.row;
            }
    }
    return charts;
}

/// How the charts of one stage write their values.
struct chart_numbers {
    number_format format;
    std::string fill_text;  // the masked stage writes its fill as typed ("-1e9", "-inf")
    std::size_t width = 0;  // of the widest value
    bool masked_stage = false;

    std::string text(const key_entry& e) const {
        if (masked_stage && e.masked) return fill_text;
        char buf[number_buffer_size];
        return std::string(format_number(e.value, format, buf));
    }
};

/// One notation for all the charts of a stage, as the table decides it (the fill left out).
chart_numbers choose_numbers(const std::vector<row_chart>& charts, const stage& s, const config& c,
                             const render_options& options) {
    chart_numbers n;
    n.masked_stage = s.id() == stage_id::masked;
    n.fill_text = fill_text(c);
    table::notation_survey survey;
    for (const row_chart& chart : charts)
        for (const key_entry& e : chart.keys)
            if (e.shown && !(n.masked_stage && e.masked)) survey.add(e.value);
    n.format = survey.decide(options).format;
    for (const row_chart& chart : charts)
        for (const key_entry& e : chart.keys)
            if (e.shown) n.width = std::max(n.width, table::text_width(n.text(e)));
    return n;
}

std::string repeat(std::string_view piece, std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += piece;
    return s;
}

/// A weight's bar from 0, to the nearest eighth of a column, `bar_width` columns being
/// `scale`; padded with spaces to bar_width columns.
std::string weight_bar(float v, float scale) {
    std::size_t units = 0;  // eighths of a column
    if (v > 0.0f && std::isfinite(v))
        units = std::min<std::size_t>(bar_width * 8, static_cast<std::size_t>(std::lround(v / scale * bar_width * 8)));
    const std::size_t columns = (units + 7) / 8;
    return repeat(full_block, units / 8) + std::string(eighths[units % 8]) + std::string(bar_width - columns, ' ');
}

/// A score's bar, to the nearest half column, right of the axis when positive and left
/// of it when negative, each side bar_width / 2 columns being `scale`; no bar without one.
std::string score_bar(float v, float scale, bool has_bar) {
    const std::size_t half = bar_width / 2;
    std::size_t units = 0;  // half columns
    if (has_bar && std::isfinite(v) && scale > 0.0f)
        units = std::min<std::size_t>(half * 2, static_cast<std::size_t>(std::lround(std::fabs(v) / scale * half * 2)));
    const std::size_t columns = (units + 1) / 2;
    const std::string blocks = repeat(full_block, units / 2);
    if (v < 0.0f)
        return std::string(half - columns, ' ') + std::string(units % 2 ? right_half : "") + blocks +
               std::string(axis_line) + std::string(half, ' ');
    return std::string(half, ' ') + std::string(axis_line) + blocks + std::string(units % 2 ? eighths[4] : "") +
           std::string(half - columns, ' ');
}

/// The value `bar_width` columns stand for: weights 1 (or more, when dropout scaled one
/// above it); scores the largest |value| among the keys with a bar.
float bar_scale(const row_chart& chart, row_kind kind) {
    float scale = kind == row_kind::weights ? 1.0f : 0.0f;
    for (const key_entry& e : chart.keys)
        if (std::isfinite(e.value) && (kind == row_kind::weights || !e.masked))
            scale = std::max(scale, std::fabs(e.value));
    return scale;
}

constexpr std::string_view rank_names[] = {"", "1st", "2nd", "3rd"};

/// "  key 1  ████▊    0.3199  ◀ 1st": one key of a chart.
void print_key(std::ostream& out, const key_entry& e, std::size_t label_width, const std::string& bar,
               const chart_numbers& numbers, const colours& col) {
    const bool faint = e.masked || e.dropped;
    const std::string label = "key " + std::to_string(e.key);
    out << "  " << (faint ? col.dim : "") << label << (faint ? col.reset : "");
    table::write_spaces(out, label_width - label.size() + 2);
    out << col.bar << bar << col.reset << "  ";
    const std::string text = numbers.text(e);
    table::write_spaces(out, numbers.width - table::text_width(text));
    const std::string_view colour = std::isnan(e.value) ? col.red : faint ? col.dim : "";
    out << colour << text << (colour.empty() ? "" : col.reset);
    if (e.masked)
        out << "  " << col.dim << "masked" << col.reset;
    else if (e.dropped)
        out << "  " << col.dim << "dropped" << col.reset;
    else if (e.rank != 0)
        out << "  " << col.bold << "◀ " << rank_names[e.rank] << col.reset;
    out << '\n';
}

/// "query 3 attends most to key 1 (0.3199), key 2 (0.2839), key 0 (0.2580)", or why no key ranks.
std::string summary_line(const row_chart& chart, std::string_view stage_name, std::size_t query,
                         const chart_numbers& numbers) {
    const std::string who = "query " + std::to_string(query);
    const std::size_t ranked = std::min(chart.order.size(), top_count);
    if (ranked == 0) {
        const bool all_masked = std::all_of(chart.keys.begin(), chart.keys.end(), [](const key_entry& e) { return e.masked; });
        const bool any_nan = std::any_of(chart.keys.begin(), chart.keys.end(), [](const key_entry& e) { return std::isnan(e.value); });
        if (all_masked) return who + " may attend no key: every key is masked" + (any_nan ? ", so its weights are nan" : "");
        if (stage_name == "dropout") return "after dropout, " + who + " keeps no key: dropout dropped every one it may attend";
        return who + " has no value to rank: every one it may attend is nan";
    }
    const bool only = kind_of(stage_name) == row_kind::weights && chart.order.size() == 1 &&
                      std::count_if(chart.keys.begin(), chart.keys.end(), [](const key_entry& e) { return !e.masked; }) == 1;
    std::string line = stage_name == "dropout" ? "after dropout, " + who : who;
    line += kind_of(stage_name) == row_kind::scores ? " scores highest on " : only ? " attends only to " : " attends most to ";
    for (std::size_t r = 0; r < ranked; ++r) {
        const key_entry& e = chart.keys[chart.order[r]];
        line += (r ? ", key " : "key ") + std::to_string(e.key) + " (" + numbers.text(e) + ")";
    }
    return line;
}

void print_chart(std::ostream& out, const row_chart& chart, std::string_view stage_name, std::size_t query,
                 const chart_numbers& numbers, const colours& col) {
    const row_kind kind = kind_of(stage_name);
    out << col.dim << chart.title;
    if (chart.left_out != 0)
        out << " (its " << chart.keys.size() - chart.left_out << " largest of " << chart.keys.size()
            << " keys: --full shows them all)";
    out << col.reset << '\n';
    std::size_t label_width = 0;
    for (const key_entry& e : chart.keys) label_width = std::max(label_width, ("key " + std::to_string(e.key)).size());
    const float scale = bar_scale(chart, kind);
    std::size_t skipped = 0;  // keys left out since the last one printed
    const auto print_skipped = [&] {
        if (skipped != 0) out << "  " << col.dim << "... (" << skipped << (skipped == 1 ? " key)" : " keys)") << col.reset << '\n';
        skipped = 0;
    };
    for (const key_entry& e : chart.keys) {
        if (!e.shown) {
            ++skipped;
            continue;
        }
        print_skipped();
        const std::string bar = kind == row_kind::weights ? weight_bar(e.value, scale) : score_bar(e.value, scale, !e.masked);
        print_key(out, e, label_width, bar, numbers, col);
    }
    print_skipped();
    out << "  " << summary_line(chart, stage_name, query, numbers) << '\n';
}

void print_stage(std::ostream& out, const trace& t, const stage& s, const render_options& options,
                 const colours& col) {
    print_stage_heading(out, t.cfg, s, col);
    print_stage_warnings(out, t, s, col);
    const std::vector<row_chart> charts = charts_of(t, s, options);
    const chart_numbers numbers = choose_numbers(charts, s, t.cfg, options);
    // --stats: the plane tensor's statistics (the whole tensor's), and each weights row's entropy
    std::optional<tensor_stats> stats;
    for (const tensor& x : s.tensors)
        if (options.stats && !stats && is_plane(x))
            stats = stats_of(x, stats_kind_of(s.id(), x.name), static_cast<double>(t.cfg.head_dim()));
    for (const row_chart& chart : charts) {
        out << '\n';
        print_chart(out, chart, s.name(), *options.row, numbers, col);
        if (stats && stats->kind == stats_kind::weights)
            out << "  " << col.dim << "row: " << row_stats_text(*stats, chart.row, options.precision) << col.reset << '\n';
    }
    if (stats) out << '\n' << col.dim << stats_line(*stats, s.name(), options.precision) << col.reset << '\n';
}

}  // namespace

bool row_view_shows(stage_id id) { return view_of(id).row_bars; }

void render_row(const trace& t, const render_options& options, std::ostream& out) {
    const colours col = make_colours(options.color);
    print_run_header(out, t.cfg, col);
    for (const stage& s : t.stages) {
        if (!row_view_shows(s.id())) continue;
        if (options.stages == 0 ? s.id() != stage_id::softmax : !options.shows(s.id())) continue;
        out << '\n';
        print_stage(out, t, s, options, col);
    }
}

}  // namespace attn
