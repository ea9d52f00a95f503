#pragma once
// attn trace's --format values, one row each carrying every fact a run needs about the
// format: what its sink keeps of the stages (and so what the run holds), whether it needs
// --out when stdout is a terminal, whether and what it draws, the fewest bytes an element
// takes (the free-space check), whether it shows the plan alone (--shapes, the graph), and
// the sink that writes it. A new format is one row here and one case in write_output.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// What a format's sink keeps of the stages, and so what the run holds (plan_memory).
enum class format_keeps {
    nothing,       // each stage written as it comes
    printed_rows,  // each stage printed as it is complete; one in rows kept in the rows printed
                   // (with --full every row: the run is planned as holding whole stages)
    everything,    // a whole trace, drawn at the end
};

/// What a format does with the run's graph (--graph, --format dot).
enum class format_graph {
    none,    // --graph is refused
    drawn,   // --graph: the graph drawn by Graphviz instead of the stages (svg, png)
    beside,  // --graph: the graph beside the stages (html)
    text,    // the format is the graph, as dot's text: nothing computed (dot)
};

/// The sink that writes a format (write_output).
enum class format_sink { json, jsonl, npz, table, torch, py, heatmap, svg, png, html, row_bars, plan };

struct output_format {
    std::string_view name;
    format_keeps keeps;
    std::string_view writes;  // what it writes that a terminal cannot show: --out needed there ("" for text)
    bool drawable_only;       // draws only the drawable stages (heatmap::drawable): softmax unless --stage names others
    bool colour_scale;        // colours values on a scale: --vmin, --vmax
    bool page;                // lays panels out on a page: --layout slide
    bool marks_masked;        // draws the masked keys: the run shows the mask too
    // The fewest bytes a float32 and a boolean element take where every element is written
    // (json, jsonl, npz; table and torch with --full); 0: no estimate.
    std::uint64_t float_bytes, bool_bytes;
    bool shapes;  // --shapes prints it
    format_graph graph;
    format_sink sink;
};

/// The --format values, in --help's order: "table", "json", ..., "dot".
std::vector<std::string> output_format_names();

/// The format called `name`; with `row` (--row), the table's bars. Throws usage_error for
/// a name that is no format's.
const output_format& output_format_named(std::string_view name, bool row);

/// Whether a run of `format` shows its plan alone, nothing computed: --shapes, --format dot,
/// or --graph with a format that draws the graph instead of the stages.
bool plan_only(const output_format& format, bool shapes, bool graph);

/// Settles `view` for `format` before the plan: a picture format draws softmax unless
/// --stage (`stages_flag`, for the message) names others, one of which must be drawable;
/// py refuses what its script cannot compute (check_py_run). Throws usage_error.
void fit_view_to_format(const config& c, const output_format& format, const std::string& stages_flag,
                        render_options& view);

/// The plan of a run of `c` written as `format` with `view`: the stages shown (and the mask
/// where the format marks masked keys), laid out to fit c.limits.max_memory (0: no limit) as
/// plan_memory chooses, `block_rows` > 0 forcing blocks of rows (--block-rows); and where the
/// format prints only some rows of a tensor, only those rows computed (but every row with
/// --stats, whose statistics are the whole tensor's, and with q_k_swapped, whose planes are
/// [Sk,Sq]).
stage_plan plan_output(const config& c, const output_format& format, const render_options& view,
                       std::size_t block_rows);

/// What `format` refuses from the sizes alone, refused before the run: a PNG whose canvas
/// would be larger than c.limits.max_memory or a PNG's side (check_png_size). Throws attn::error.
void check_format_fits(const config& c, const output_format& format, const render_options& view,
                       const stage_plan& plan);

/// The fewest bytes `format` writes for a run of `c` with `view`, from the sizes alone: the
/// shown stages' elements (as view.batch_index, head and row select them; an axis they may
/// not select counts whole, so this stays a lower bound) at the format's bytes an element.
/// 0 when it has no estimate (pictures, summaries). Saturates.
std::uint64_t least_format_bytes(const config& c, const output_format& format, const render_options& view);

/// What a run tells whoever watches it (the progress line).
class run_watcher {
public:
    virtual ~run_watcher() = default;
    /// Stage `name` is complete.
    virtual void stage_done(std::string_view name) = 0;
    /// Every stage is computed; a whole format is being drawn.
    virtual void writing() = 0;
};

/// Where the output goes and what its sinks need besides the view.
struct output_target {
    std::ostream& out;
    std::string what;          // in messages: "--out trace.npz", "standard output"
    std::string command_line;  // py's first line: the command that made the script
    std::size_t columns = 80;  // heatmap: the terminal's width
};

/// Computes `plan`'s stages from `in` (moved in: x is let go after the projections) into
/// `format`'s sink, written to target.out, telling `watcher`. Returns the run's warnings, with
/// the notes of a picture that leaves panels out after them.
warning_list write_output(const output_format& format, const config& c, inputs in, const stage_plan& plan,
                          const render_options& view, const output_target& target, run_watcher& watcher);

/// A plan-only run (plan_only): the graph drawn (`graph` with svg or png), the graph as dot's
/// text, or every stage's shapes and strides as a table or JSON; nothing computed.
void write_plan(const config& c, const output_format& format, bool graph, const render_options& view,
                std::ostream& out);

}  // namespace attn
