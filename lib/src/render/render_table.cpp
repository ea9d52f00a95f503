// --format table: the run in a few lines, then each stage: its heading and formula,
// its warnings, a note on the notation when it is scientific, then its tensors in
// column widths they share (the params stage: one line per tensor). Where stages 8-9
// or 11 are absent between two shown stages, one line says so. With --explain
// (table_explain.hpp): an opening, each stage's explanation, and a summary at the end.
#include "attn/render/text_headings.hpp"
#include "attn/render/render_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/render/render_stats.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/render/table_parts.hpp"
#include "attn/render/table_explain.hpp"
#include "attn/text/join.hpp"

namespace attn {

namespace {

using table::palette;

/// The stage's tensors (read through `grids`, one each), after a note on their notation
/// when it is scientific, their columns lined up: one label width and one value width for all of them.
/// With --stats, `stats` holds each tensor's: a "stats:" line under it, and each printed row
/// of weights followed by its entropy and largest weight.
void print_tensors(std::ostream& out, const config& c, const stage& s, const std::vector<element_grid>& grids,
                   const std::vector<tensor_stats>& stats, const render_options& options, const palette& p) {
    const table::stage_numbers numbers = table::choose_stage_numbers(s, grids, c, options);
    if (!numbers.note.empty()) out << p.dim << "   " << numbers.note << p.reset << '\n';
    std::vector<table::tensor_printer> printers;
    printers.reserve(s.tensors.size());
    table::column_widths shared;
    for (std::size_t k = 0; k < s.tensors.size(); ++k) {
        printers.emplace_back(s.tensors[k], grids[k], numbers, options, p, &c.sources.token_labels);
        if (k < stats.size() && stats[k].kind == stats_kind::weights) printers.back().show_row_stats(&stats[k]);
        shared.label = std::max(shared.label, printers.back().widths().label);
        shared.value = std::max(shared.value, printers.back().widths().value);
    }
    for (std::size_t k = 0; k < printers.size(); ++k) {
        printers[k].print(out, shared);
        if (k < stats.size())  // "   stats: min ..." under it
            out << p.dim << "   " << stats_line(stats[k], s.name(), options.precision) << p.reset << '\n';
    }
}

/// Stages a run has not, between two that are shown, so the numbers do not
/// jump unexplained: 8-9 without a mask, 11 without dropout in training mode.
struct skipped_stages {
    stage_id before;           // the stage they would precede
    std::string_view numbers;  // "8-9"
    std::string_view names;    // "mask, masked"
    stage_id first;            // the stage whose absence stage_absence explains
};

constexpr skipped_stages skippable[] = {
    {stage_id::softmax, "8-9", "mask, masked", stage_id::mask},
    {stage_id::context, "11", "dropout", stage_id::dropout},
};

/// The last stage before `id` that a run of `c` has (scaled before mask; biased with ALiBi).
stage_id in_run_before(const config& c, stage_id id) {
    stage_id last = stage_table.front().id;
    for (const stage_info& info : stage_table)
        if (info.id < id && stage_in_run(c, info.id)) last = info.id;
    return last;
}

/// "── 11 · dropout ── skipped: no --dropout, so ...", when `s` follows the stage
/// shown before it (`previous`, the stage the run has before them) across stages this run has not.
void print_skipped_before(std::ostream& out, const config& c, const stage& s, stage_id previous, const palette& p) {
    for (const skipped_stages& k : skippable) {
        if (s.id() != k.before || previous != in_run_before(c, k.first)) continue;
        const std::string why = stage_absence(c, k.first);
        if (why.empty()) continue;
        out << p.dim << "── " << k.numbers << " · " << k.names << " ── skipped: " << why << p.reset << "\n\n";
    }
}

/// The params stage is summarised unless it is asked for by name or --full.
bool summarise_params(const render_options& options) {
    return !options.full && (options.stages & stage_bit(stage_id::params)) == 0;
}

/// min, mean and max of one tensor; min and max leave NaN out, the mean does not.
struct min_mean_max {
    float min = std::numeric_limits<float>::quiet_NaN();
    float mean = std::numeric_limits<float>::quiet_NaN();
    float max = std::numeric_limits<float>::quiet_NaN();
};

min_mean_max range_of(const tensor& x) {
    min_mean_max st;
    if (x.values.size() == 0) return st;
    double sum = 0.0;
    for (const float v : x.values) {
        sum += v;
        if (std::isnan(v)) continue;
        if (!(v >= st.min)) st.min = v;  // also replaces the initial NaN
        if (!(v <= st.max)) st.max = v;
    }
    st.mean = static_cast<float>(sum / static_cast<double>(x.values.size()));
    return st;
}

/// "w_q [8,8] (d_model, d_in)": the tensor's name, shape and dimension names.
std::string shape_label(const tensor& x) {
    std::string label = x.name + " [";
    for (std::size_t a = 0; a < x.values.dimension(); ++a)
        label += (a ? "," : "") + std::to_string(x.values.shape()[a]);
    return label + "] (" + join(x.dims, ", ") + ")";
}

/// The params stage in a few lines: one per tensor with its min, mean and max,
/// in one notation (decided over the min and max; a mean near 0 may print as 0.0000).
void print_param_summary(std::ostream& out, const stage& s, const render_options& options, const palette& p) {
    out << p.dim << "   (each tensor as min, mean and max: --stage params or --full prints them whole)" << p.reset
        << '\n';
    std::vector<min_mean_max> stats;
    table::notation_survey survey;
    for (const tensor& x : s.tensors) {
        stats.push_back(range_of(x));
        survey.add(stats.back().min);
        survey.add(stats.back().max);
    }
    const table::stage_numbers numbers = survey.decide(options);
    if (!numbers.note.empty()) out << p.dim << "   " << numbers.note << p.reset << '\n';
    char buf[number_buffer_size];
    std::size_t label_width = 0, value_width = std::string_view("mean").size();
    for (std::size_t k = 0; k < s.tensors.size(); ++k) {
        label_width = std::max(label_width, table::text_width(shape_label(s.tensors[k])));
        for (const float v : {stats[k].min, stats[k].mean, stats[k].max})
            value_width = std::max(value_width, format_number(v, numbers.format, buf).size());
    }
    table::write_spaces(out, label_width);
    for (const char* head : {"min", "mean", "max"}) {
        out << "  ";
        table::write_right(out, head, value_width, p.dim, p);
    }
    out << '\n';
    for (std::size_t k = 0; k < s.tensors.size(); ++k) {
        table::write_left(out, shape_label(s.tensors[k]), label_width, {}, p);
        for (const float v : {stats[k].min, stats[k].mean, stats[k].max}) {
            out << "  ";
            table::write_right(out, format_number(v, numbers.format, buf), value_width, std::isnan(v) ? p.red : "", p);
        }
        out << '\n';
    }
}

}  // namespace

table_stream::table_stream(const config& c, const render_options& options, std::ostream& out)
    : printing_sink(options), c_(c), out_(out), style_(make_heading_style(options.color)) {
    print_run_header(out, c, style_, options.seed_secret);
    out << '\n';
    if (options.explain) table::print_explain_intro(out, c, style_);
}

void table_stream::print(const trace& so_far, const stage& s, const std::vector<element_grid>& grids) {
    if (previous_) {
        out_ << '\n';  // one blank line between stages
        print_skipped_before(out_, c_, s, *previous_, style_);
    }
    previous_ = s.id();
    print_stage_heading(out_, c_, s, style_);
    if (options_.explain) table::print_stage_explanation(out_, c_, s, style_);
    print_stage_warnings(out_, so_far, s, style_);  // before the tensors, where they are seen
    std::vector<tensor_stats> stats;  // --stats: each tensor's, over every row
    if (options_.stats)
        for (std::size_t k = 0; k < s.tensors.size(); ++k) stats.push_back(stats_of(k));
    if (s.id() == stage_id::params && summarise_params(options_)) {
        print_param_summary(out_, s, options_, style_);
        for (std::size_t k = 0; k < stats.size(); ++k)  // "   w_q stats: ..."
            out_ << style_.dim << "   " << s.tensors[k].name << ' ' << stats_line(stats[k], s.name(), options_.precision)
                 << style_.reset << '\n';
    } else {
        print_tensors(out_, c_, s, grids, stats, options_, style_);
    }
}

void table_stream::finish() {
    if (options_.explain) table::print_explain_summary(out_, c_, style_);
}

void render_table(const trace& t, const render_options& options, std::ostream& out) {
    table_stream table(t.cfg, options, out);
    table.print_all(t);
    table.finish();
}

}  // namespace attn
