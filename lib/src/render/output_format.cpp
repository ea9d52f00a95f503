// The format table (output_format.hpp), the run policy it implies, and each format's sink.
#include "attn/render/output_format.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "attn/compute/error.hpp"
#include "attn/compute/memory.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/io/npz_writer.hpp"
#include "attn/render/heatmap_cairo.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "attn/render/heatmap_svg.hpp"
#include "attn/render/heatmap_terminal.hpp"
#include "attn/render/render_graph.hpp"
#include "attn/render/render_html.hpp"
#include "attn/render/render_json.hpp"
#include "attn/render/render_npz.hpp"
#include "attn/render/render_py.hpp"
#include "attn/render/render_row.hpp"
#include "attn/render/render_shapes.hpp"
#include "attn/render/render_table.hpp"
#include "attn/render/render_torch.hpp"
#include "attn/render/selection.hpp"

namespace attn {
namespace {

/// Every --format, in --help's order, and the table with --row: one query's weights as bars.
struct format_table {
    std::vector<output_format> formats;
    output_format row_bars;
};

const format_table& format_rows() {
    using keeps = format_keeps;
    using graph = format_graph;
    using sink = format_sink;
    //  name       keeps                writes           drawable colour page   masked bytes  shapes graph          sink
    static const format_table table{{
        // --format
        {"table",   keeps::printed_rows, "",              false, false, false, false, 2, 4, true,  graph::none,   sink::table},
        {"json",    keeps::nothing,      "",              false, false, false, false, 2, 4, true,  graph::none,   sink::json},
        {"jsonl",   keeps::nothing,      "",              false, false, false, false, 2, 4, false, graph::none,   sink::jsonl},
        {"npz",     keeps::nothing,      "a zip archive", false, false, false, false, 4, 1, false, graph::none,   sink::npz},
        {"torch",   keeps::printed_rows, "",              false, false, false, false, 2, 4, false, graph::none,   sink::torch},
        {"py",      keeps::everything,   "",              false, false, false, false, 0, 0, false, graph::none,   sink::py},
        {"heatmap", keeps::everything,   "",              true,  true,  false, true,  0, 0, false, graph::none,   sink::heatmap},
        {"svg",     keeps::everything,   "a picture",     true,  true,  true,  true,  0, 0, false, graph::drawn,  sink::svg},
        {"png",     keeps::everything,   "a picture",     true,  true,  true,  true,  0, 0, false, graph::drawn,  sink::png},
        {"html",    keeps::everything,   "a page",        false, true,  true,  true,  0, 0, false, graph::beside, sink::html},
        {"dot",     keeps::nothing,      "",              false, false, false, false, 0, 0, false, graph::text,   sink::plan},
    },  // --format table --row
        {"table",   keeps::everything,   "",              false, false, false, true,  2, 4, true,  graph::none,   sink::row_bars}};
    return table;
}

constexpr std::uint64_t saturated_output_bytes = std::numeric_limits<std::uint64_t>::max();

/// The elements of `t` that an output with `view`'s selection writes (an axis the view may
/// not select counts whole, so this stays a lower bound).
std::uint64_t selected_elements(const planned_tensor& t, const render_options& view) {
    std::uint64_t n = 1;
    for (std::size_t axis = 0; axis < t.dims.size(); ++axis) {
        const std::string& dim = t.dims[axis];
        const bool selected = (dim == "batch" && view.batch_index) || (dim == "head" && view.head) ||
                              ((dim == "query" || dim == "seq") && view.row);
        const auto size = static_cast<std::uint64_t>(t.layout.shape[axis]);
        if (__builtin_mul_overflow(n, selected ? std::min<std::uint64_t>(size, 1) : size, &n))
            return saturated_output_bytes;
    }
    return n;
}

/// Tells the watcher which stages are complete, and hands everything on to `next`.
class watched_sink : public stage_sink {
public:
    watched_sink(stage_sink& next, run_watcher& watcher) : next_(next), watcher_(watcher) {}
    void begin(const trace& so_far, const stage& s) override { next_.begin(so_far, s); }
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) override {
        next_.rows(index, first_row, count, data);
    }
    void end(const trace& so_far, const stage& s) override {
        next_.end(so_far, s);
        watcher_.stage_done(s.name());
    }

private:
    stage_sink& next_;
    run_watcher& watcher_;
};

/// A run and its watcher, for the sinks of write_output.
struct watched_run {
    const config& c;
    inputs& in;
    const stage_plan& plan;
    run_watcher& watcher;

    warning_list into(stage_sink& s) const {
        watched_sink told(s, watcher);
        return compute_stages(c, std::move(in), plan, told);
    }

    /// The whole trace, kept, then drawn by `draw`, whose notes (panels a slide leaves out)
    /// join the warnings.
    template <class Draw>
    warning_list whole(Draw draw) const {
        trace t;
        t.cfg = c;
        trace_keeper keeper(t);
        t.warnings = into(keeper);
        watcher.writing();
        for (std::string& note : draw(t)) t.warnings.push_back({"", std::move(note)});
        return t.warnings;
    }
};

}  // namespace

std::vector<std::string> output_format_names() {
    std::vector<std::string> names;
    for (const output_format& f : format_rows().formats) names.emplace_back(f.name);
    return names;
}

const output_format& output_format_named(std::string_view name, bool row) {
    if (name == "table" && row) return format_rows().row_bars;
    for (const output_format& f : format_rows().formats)
        if (f.name == name) return f;
    throw usage_error("--format " + std::string(name) + ": no such format");
}

bool plan_only(const output_format& format, bool shapes, bool graph) {
    return shapes || format.graph == format_graph::text || (graph && format.graph != format_graph::beside);
}

void fit_view_to_format(const config& c, const output_format& format, const std::string& stages_flag,
                        render_options& view) {
    if (format.sink == format_sink::py) check_py_run(c, view);
    if (!format.drawable_only) return;
    if (view.stages == 0) {
        view.stages = stage_bit(stage_id::softmax);
        return;
    }
    for (const stage_info& info : stage_table)
        if (view.shows(info.id) && heatmap::drawable(info.id)) return;
    throw usage_error("--stage " + stages_flag + ": --format " + std::string(format.name) +
                      " draws the stages with a picture (in this run " + heatmap::drawable_stages_text(c) +
                      "), and these have none");
}

stage_plan plan_output(const config& c, const output_format& format, const render_options& view,
                       std::size_t block_rows) {
    stage_plan plan = stage_plan::of(view.stages);
    if (c.mask.any() && format.marks_masked) plan.show(stage_id::mask);
    plan.row_statistics = view.stats;
    // --max-memory 0 or none: no limit (check_addressable still refuses what no machine holds)
    const std::uint64_t limit = c.limits.max_memory != 0 ? c.limits.max_memory : std::numeric_limits<std::uint64_t>::max();
    const bool printed_rows = format.keeps == format_keeps::printed_rows;
    plan_memory(c, plan, format.keeps == format_keeps::everything || (printed_rows && view.full), limit, block_rows);
    if (printed_rows && c.mistake != mistake::q_k_swapped && !view.stats) show_printed_rows_only(c, view, plan);
    return plan;
}

void check_format_fits(const config& c, const output_format& format, const render_options& view,
                       const stage_plan& plan) {
    if (format.sink == format_sink::png) check_png_size(c, plan, view);
}

std::uint64_t least_format_bytes(const config& c, const output_format& format, const render_options& view) {
    if (format.float_bytes == 0 || (format.keeps != format_keeps::nothing && !view.full)) return 0;
    std::uint64_t total = 0;
    for (const planned_stage& s : make_plan(c).stages) {
        if (!view.shows(s.id)) continue;
        for (const planned_tensor& t : s.tensors) {
            std::uint64_t bytes = 0;
            const std::uint64_t each = t.type == element_type::boolean ? format.bool_bytes : format.float_bytes;
            if (__builtin_mul_overflow(selected_elements(t, view), each, &bytes) ||
                __builtin_add_overflow(total, bytes, &total))
                return saturated_output_bytes;
        }
    }
    return total;
}

warning_list write_output(const output_format& format, const config& c, inputs in, const stage_plan& plan,
                          const render_options& view, const output_target& target, run_watcher& watcher) {
    using sink = format_sink;
    using notes = std::vector<std::string>;  // a picture's notes: none
    const watched_run r{c, in, plan, watcher};
    std::ostream& out = target.out;
    switch (format.sink) {
        case sink::json:
        case sink::jsonl: {
            json_stream json(c, view, out, format.sink == sink::jsonl);
            const warning_list warnings = r.into(json);
            json.finish(warnings);
            return warnings;
        }
        case sink::npz: {
            npz_writer zip(out, target.what);
            npz_stream npz(c, view, zip);
            const warning_list warnings = r.into(npz);
            npz.finish();
            return warnings;
        }
        case sink::table: {
            table_stream table(c, view, out);
            const warning_list warnings = r.into(table);
            table.finish();
            return warnings;
        }
        case sink::torch: {
            torch_stream torch(view, out);
            return r.into(torch);
        }
        case sink::py: return r.whole([&](const trace& t) { render_py(t, view, target.command_line, out); return notes{}; });
        case sink::heatmap:
            return r.whole([&](const trace& t) { render_heatmap_terminal(t, view, out, target.columns); return notes{}; });
        case sink::row_bars: return r.whole([&](const trace& t) { render_row(t, view, out); return notes{}; });
        case sink::svg: return r.whole([&](const trace& t) { return render_svg(t, view, out); });
        case sink::png: return r.whole([&](const trace& t) { return render_png(t, view, out); });
        case sink::html: return r.whole([&](const trace& t) { return render_html(t, view, out); });
        case sink::plan: break;
    }
    throw error("--format " + std::string(format.name) + " computes nothing: it writes the plan (write_plan)");
}

void write_plan(const config& c, const output_format& format, bool graph, const render_options& view,
                std::ostream& out) {
    const std::vector<planned_stage> stages = make_plan(c).stages;
    if (graph && format.graph == format_graph::drawn) {  // laid out and drawn by Graphviz
        std::ostringstream dot;
        render_plan_dot(c, stages, view, dot);
        draw_graph(dot.str(), format.name, out);
    } else if (format.graph == format_graph::text) render_plan_dot(c, stages, view, out);
    else if (format.sink == format_sink::json) render_shapes_json(c, stages, view, out);
    else render_shapes_table(c, stages, view, out);
}

}  // namespace attn
