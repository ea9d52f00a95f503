// --format html: the page's parts in order: head (style, an error catcher), the
// run (run_summary) and a contents line, a section per shown stage (stages this run
// skips between two shown ones get a line, as in the table), the hover script.
//
// A heatmap is <figure class="heatmap" data-stage data-tensor data-batch data-head>:
// the SVG of the panel (heatmap_svg.hpp), over whose cells lies one transparent <rect class="grid">
// holding the cells' values (data-values, row by row, "*" after a masked one), the
// row and column numbers (data-queries, data-keys) and what they number (data-row-name
// "query" or "position", data-column-name "key", "feature" or "dim"; data-batch and
// data-head are "all" for a tensor the same for every one); the script writes the value under the pointer below the
// figure and outlines its cell. (A <title> per cell would do without a script, but
// costs ten times the bytes.) The script marks the page data-ready="yes" when it has
// run, and any script error marks it data-script-error, for tests in a headless browser.
#include "attn/compute/tensor_stats.hpp"
#include "attn/render/render_stats.hpp"
#include "attn/render/render_html.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/io/tensor_file.hpp"
#include "attn/render/heatmap_svg.hpp"
#include "attn/render/render_graph.hpp"
#include "attn/render/render_shapes.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "attn/render/table_parts.hpp"
#include "attn/render/torch_format.hpp"
#include "attn/teach/explain.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/join.hpp"

namespace attn {
namespace {

using heatmap::cell_kind;

constexpr const char* style = R"css(
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d1f23; --muted: #5f6670; --line: #d9dde3;
        --panel: #f5f6f8; --accent: #33608f; --red: #c0282d; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15171b; --fg: #e4e6ea; --muted: #a0a7b1; --line: #31363e; --panel: #1e2127;
          --accent: #8cb4e6; --red: #ff7a7a; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 84rem; padding: 1.5rem 1.5rem 4rem; background: var(--bg); color: var(--fg);
       font: 16px/1.55 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
code, pre, table.numbers { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
h1 { font-size: 1.6rem; margin: 0 0 .5rem; }
h2 { font-size: 1.3rem; margin: 0 0 .4rem; display: flex; gap: .6rem; align-items: baseline; flex-wrap: wrap; }
h2 .step { display: inline-block; min-width: 2rem; text-align: center; border-radius: 1rem; padding: 0 .5rem;
           background: var(--accent); color: var(--bg); font-size: 1rem; }
h2 .title { font-weight: normal; color: var(--muted); font-size: 1.05rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .5rem; }
h3 .dims, .note { color: var(--muted); font-weight: normal; }
dl.run { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: 0 0 1rem; }
dl.run dt { color: var(--muted); }
dl.run dd { margin: 0; }
nav { font-size: .95rem; line-height: 1.9; }
nav a { color: var(--accent); text-decoration: none; margin-right: .8rem; white-space: nowrap; }
section.stage { border-top: 1px solid var(--line); padding: 1.5rem 0 .5rem; }
p.skipped { border-top: 1px solid var(--line); padding-top: 1rem; color: var(--muted); }
.formula { font-size: 1.05rem; margin: .2rem 0 .8rem; }
.formula code { background: var(--panel); padding: .15rem .45rem; border-radius: .3rem; }
dl.explain { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: .5rem 0 1rem;
             background: var(--panel); border-radius: .5rem; padding: .7rem 1rem; }
dl.explain dt { color: var(--muted); }
dl.explain dd { margin: 0; }
ul.warnings { color: var(--red); padding-left: 1.2rem; }
.heatmaps { display: flex; flex-wrap: wrap; gap: .8rem; }
figure.heatmap { margin: 0; }
figure.slide { margin: 0 0 1.5rem; }
figure.slide svg { display: block; width: 100%; height: auto; }
figure.heatmap svg { display: block; max-width: 100%; height: auto; }
figure.heatmap figcaption { font-size: .85rem; color: var(--muted); min-height: 1.4em; padding-left: .3rem; }
rect.grid { fill: #ffffff; fill-opacity: 0; cursor: crosshair; }
rect.pointed { fill: none; stroke: #e8362d; stroke-width: 2; pointer-events: none; }
.with-graph { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 3fr); gap: 1.5rem; align-items: start; }
aside.graph { position: sticky; top: 0; max-height: 100vh; overflow: auto; padding-top: 1rem; }
aside.graph svg { display: block; width: 100%; height: auto; }
aside.graph p { font-size: .85rem; color: var(--muted); margin: 0 0 .5rem; }
details { margin: .6rem 0; }
summary { cursor: pointer; color: var(--accent); }
.slices { display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: flex-start; }
table.numbers { border-collapse: collapse; font-size: .85rem; margin: .3rem 0; }
table.numbers caption { text-align: left; color: var(--muted); padding-bottom: .2rem; }
table.numbers th { color: var(--muted); font-weight: normal; padding: .1rem .5rem; text-align: right; }
table.numbers td { padding: .1rem .5rem; text-align: right; border-top: 1px solid var(--line); }
table.numbers .faint { color: var(--muted); opacity: .7; }
table.numbers .nan { color: var(--red); font-weight: bold; }
p.stats { color: var(--muted); font-size: .85rem; }
footer { margin-top: 2rem; color: var(--muted); font-size: .85rem; }
)css";

/// In <head>, before anything else runs: a script error marks the page (tests look for it).
constexpr const char* error_catcher = R"js(
window.addEventListener('error', function () { document.documentElement.setAttribute('data-script-error', 'yes'); });
)js";

/// At the end of <body>: the value of the cell under the pointer, under its figure.
constexpr const char* hover_script = R"js(
document.querySelectorAll('figure.heatmap').forEach(function (figure) {
  var readout = figure.querySelector('figcaption'), resting = readout.textContent;
  var grid = figure.querySelector('rect.grid'), pointed = figure.querySelector('rect.pointed');
  var x0 = Number(grid.getAttribute('x')), y0 = Number(grid.getAttribute('y')), cell = Number(grid.dataset.cell);
  var queries = grid.dataset.queries.split(' '), keys = grid.dataset.keys.split(' ');
  var values = grid.dataset.values.split(' ');
  var queryTokens = JSON.parse(grid.dataset.queryTokens || '[]'), keyTokens = JSON.parse(grid.dataset.keyTokens || '[]');
  function named(number, tokens, i) { return number + (i < tokens.length ? ' ' + tokens[i] : ''); }
  grid.addEventListener('mousemove', function (event) {
    var point = grid.ownerSVGElement.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    point = point.matrixTransform(grid.getScreenCTM().inverse());
    var c = Math.floor((point.x - x0) / cell), r = Math.floor((point.y - y0) / cell);
    if (r < 0 || c < 0 || r >= queries.length || c >= keys.length) return;
    var value = values[r * keys.length + c];
    var masked = value.slice(-1) === '*';
    readout.textContent = grid.dataset.rowName + ' ' + named(queries[r], queryTokens, r) + ', ' +
                          grid.dataset.columnName + ' ' + named(keys[c], keyTokens, c) + ': ' +
                          (masked ? value.slice(0, -1) + ' (masked)' : value);
    pointed.setAttribute('x', x0 + c * cell);
    pointed.setAttribute('y', y0 + r * cell);
    pointed.setAttribute('visibility', 'visible');
  });
  grid.addEventListener('mouseleave', function () {
    readout.textContent = resting;
    pointed.setAttribute('visibility', 'hidden');
  });
});
document.documentElement.setAttribute('data-ready', 'yes');
)js";

std::string dims_text(const tensor& x) { return "(" + join(x.dims, ", ") + ")"; }

// --- the run and the contents -----------------------------------------------------------

void write_head(std::ostream& out, const trace& t) {
    const std::vector<run_line> run = run_summary(t.cfg);
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<meta name=\"color-scheme\" content=\"light dark\">\n"
        << "<title>attn trace: " << heatmap::xml_escape(run.empty() ? "" : run.front().text) << "</title>\n"
        << "<script>" << error_catcher << "</script>\n<style>" << style << "</style>\n</head>\n<body>\n";
}

void write_run(std::ostream& out, const trace& t, const render_options& options) {
    out << "<header>\n<h1>attn trace</h1>\n<dl class=\"run\">\n";
    for (const run_line& line : run_summary(t.cfg))
        out << "<dt>" << heatmap::xml_escape(line.label) << "</dt><dd>" << heatmap::xml_escape(line.text) << "</dd>\n";
    out << "</dl>\n<nav>";
    for (const stage& s : t.stages)
        if (options.shows(s.id()))
            out << "<a href=\"#stage-" << s.name() << "\">" << s.info->step.text() << " " << s.name() << "</a> ";
    out << "</nav>\n</header>\n<main>\n";
}

// --- a stage -------------------------------------------------------------------------------

/// The explanation's filled-in fields, each labelled; code-like ones as code.
void write_explanation(std::ostream& out, const stage& s, const config& c) {
    const stage_explanation e = explain_stage(c, s.id());
    struct field {
        const char* label;
        const std::string& text;
        bool code;
    };
    const field fields[] = {
        {"in words", e.words, false},
        {"in symbols", e.symbols == stage_formula(c, s.name()) ? std::string() : e.symbols, true},  // the formula is above
        {"shapes", e.shapes, true},
        {"einsum", e.einsum, true},
        {"PyTorch", e.torch, true},
        {"memory", e.memory, false},
        {"why", e.why, false},
    };
    std::string items;
    for (const field& f : fields) {
        if (f.text.empty()) continue;
        items += std::string("<dt>") + f.label + "</dt><dd>" + (f.code ? "<code>" : "") + heatmap::xml_escape(f.text) +
                 (f.code ? "</code>" : "") + "</dd>\n";
    }
    if (!items.empty()) out << "<dl class=\"explain\">\n" << items << "</dl>\n";
}

std::string joined(const std::vector<std::size_t>& numbers, std::size_t first = 0) {
    std::string text;
    for (std::size_t n : numbers) text += (text.empty() ? "" : " ") + std::to_string(first + n);
    return text;
}

/// ` name="json"`, or nothing when `json` is empty.
std::string token_attribute(const char* name, const std::string& json) {
    return json.empty() ? "" : std::string(" ") + name + "=\"" + heatmap::xml_escape(json) + "\"";
}

/// --vocab's tokens of the panel's rows or columns as a JSON array, for the readout; empty
/// without --vocab (the labels are numbers).
std::string tokens_json(const std::vector<std::size_t>& shown, const std::vector<std::string>& labels) {
    if (labels.empty()) return "";
    nlohmann::json tokens = nlohmann::json::array();
    for (std::size_t n : shown) tokens.push_back(n < labels.size() ? labels[n] : "");
    return tokens.dump();
}

/// The layer the script reads: one transparent rectangle over the grid with every cell's
/// value (and with --vocab the tokens of its rows and columns), and the outline it moves to
/// the cell under the pointer.
std::string hover_layer(const heatmap::tensor_heatmap& h, const heatmap::panel& p, const heatmap::cell_grid& g,
                        const render_options& options) {
    std::string values;
    for (std::size_t i : p.queries)
        for (std::size_t j : p.keys) {
            if (!values.empty()) values += ' ';
            values += heatmap::number_text(h.at(p, i, j), options.precision, h.boolean());
            if (h.kind(p, i, j) == cell_kind::masked) values += '*';
        }
    char geometry[200];
    std::snprintf(geometry, sizeof geometry, "x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" data-cell=\"%g\"", g.x, g.y,
                  g.cell * static_cast<double>(p.keys.size()), g.cell * static_cast<double>(p.queries.size()), g.cell);
    char outline[120];
    std::snprintf(outline, sizeof outline, "<rect class=\"pointed\" width=\"%g\" height=\"%g\" visibility=\"hidden\"/>\n",
                  g.cell, g.cell);
    return std::string("<rect class=\"grid\" ") + geometry + " data-row-name=\"" + std::string(h.rows.one) +
           "\" data-column-name=\"" + std::string(h.columns.one) + "\" data-queries=\"" + joined(p.queries, h.first_row) +
           "\" data-keys=\"" + joined(p.keys) + "\" data-values=\"" + heatmap::xml_escape(values) + "\"" +
           token_attribute("data-query-tokens", tokens_json(p.queries, h.row_labels)) +
           token_attribute("data-key-tokens", tokens_json(p.keys, h.column_labels)) + "/>\n" + outline;
}

/// The panels of one tensor, each an inline SVG with a hover layer over its cells.
void write_heatmaps(std::ostream& out, const heatmap::tensor_heatmap& h, const render_options& options) {
    const std::vector<heatmap::svg_panel> drawn = heatmap::draw_svg_panels(h, options);
    out << "<div class=\"heatmaps\">\n";
    for (std::size_t n = 0; n < drawn.size(); ++n) {
        const heatmap::panel& p = h.panels[n];
        std::string svg = drawn[n].svg;
        svg.insert(svg.rfind("</svg>"), hover_layer(h, p, drawn[n].grid, options));
        out << "<figure class=\"heatmap\" data-stage=\"" << h.from->name() << "\" data-tensor=\"" << heatmap::xml_escape(h.values->name)
            << "\" data-batch=\"" << (p.every_batch ? "all" : std::to_string(p.batch))
            << "\" data-head=\"" << (p.head ? std::to_string(*p.head) : "all")
            << "\">\n"
            << svg << "<figcaption>" << heatmap::xml_escape(heatmap::place(p)) << ": point at a cell for its value</figcaption>\n"
            << "</figure>\n";
    }
    out << "</div>\n";
}

/// One 2-D slice (or the row of a 1-D tensor, or a lone value) as a table, with the
/// stage's notation and the rows and columns a summary keeps.
class table_writer {
public:
    /// `tokens`: --vocab's labels of the token axes (query, key, seq, kv_seq), else empty.
    table_writer(const tensor& x, const table::stage_numbers& numbers, const render_options& options,
                 const std::vector<std::string>& tokens)
        : x_(x), numbers_(numbers), grid_(make_grid(x, summarised(x, options))), format_(numbers.format), tokens_(tokens) {
        if (x.type == element_type::boolean) format_ = number_format{number_kind::boolean, 0, 1};
    }

    void write(std::ostream& out) {
        if (x_.values.size() == 0) return;
        out << "<div class=\"slices\">\n";
        std::vector<std::size_t> index;
        write_leading(out, 0, index, 0);
        out << "</div>\n";
    }

private:
    std::string dim(std::size_t axis) const { return axis < x_.dims.size() ? x_.dims[axis] : "dim" + std::to_string(axis); }
    std::size_t rank() const { return grid_.shape.size(); }
    /// "key 3", or "key Ġrobot" on a token axis with --vocab (escaped by the caller).
    std::string index_text(std::size_t axis, std::size_t i) const {
        const std::string d = dim(axis);
        return d + " " + (table::token_axis(d) && i < tokens_.size() ? tokens_[i] : std::to_string(i));
    }

    void write_leading(std::ostream& out, std::size_t axis, std::vector<std::size_t>& index, std::ptrdiff_t base) {
        if (rank() < 2 || axis + 2 == rank()) return write_slice(out, index, base);
        const auto& shown = grid_.shown[axis];
        for (std::size_t k = 0; k < shown.size(); ++k) {
            if (gap_before(shown, k))
                out << "<p class=\"note\">… " << dim(axis) << " " << shown[k - 1] + 1 << "–" << shown[k] - 1
                    << " left out …</p>\n";
            index.push_back(shown[k]);
            write_leading(out, axis + 1, index, base + grid_.step(axis, shown[k]));
            index.pop_back();
        }
    }

    std::string cell(float v) const {
        char buf[number_buffer_size];
        const bool faint = table::faint_value(v, format_, numbers_);
        const char* cls = std::isnan(v) ? " class=\"nan\"" : faint ? " class=\"faint\"" : "";
        return "<td" + std::string(cls) + ">" + heatmap::xml_escape(table::value_text(v, format_, numbers_, buf)) + "</td>";
    }

    void write_slice(std::ostream& out, const std::vector<std::size_t>& index, std::ptrdiff_t base) {
        out << "<table class=\"numbers\">";
        if (!index.empty()) {
            out << "<caption>" << heatmap::xml_escape(x_.name) << "[";
            for (std::size_t a = 0; a < index.size(); ++a) out << (a ? ", " : "") << dim(a) << "=" << index[a];
            out << "]</caption>";
        }
        out << '\n';
        if (rank() == 0) {
            out << "<tr>" << cell(grid_.at(0)) << "</tr></table>\n";
            return;
        }
        const std::size_t cols = rank() - 1;
        out << "<tr><th></th>";
        for (std::size_t k = 0; k < grid_.shown[cols].size(); ++k) {
            if (gap_before(grid_.shown[cols], k)) out << "<th>…</th>";
            out << "<th>" << heatmap::xml_escape(index_text(cols, grid_.shown[cols][k])) << "</th>";
        }
        out << "</tr>\n";
        const auto row = [&](const std::string& label, std::ptrdiff_t at) {
            out << "<tr><th>" << heatmap::xml_escape(label) << "</th>";
            for (std::size_t k = 0; k < grid_.shown[cols].size(); ++k) {
                if (gap_before(grid_.shown[cols], k)) out << "<td class=\"faint\">…</td>";
                out << cell(grid_.at(at + grid_.step(cols, grid_.shown[cols][k])));
            }
            out << "</tr>\n";
        };
        if (rank() == 1) {
            row(x_.name, base);
        } else {
            const std::size_t rows = rank() - 2;
            for (std::size_t k = 0; k < grid_.shown[rows].size(); ++k) {
                if (gap_before(grid_.shown[rows], k)) out << "<tr><th>…</th></tr>\n";
                row(index_text(rows, grid_.shown[rows][k]), base + grid_.step(rows, grid_.shown[rows][k]));
            }
        }
        out << "</table>\n";
    }

    const tensor& x_;
    const table::stage_numbers& numbers_;
    element_grid grid_;
    number_format format_;
    const std::vector<std::string>& tokens_;
};

void write_stage(std::ostream& out, const trace& t, const stage& s, const std::vector<heatmap::tensor_heatmap>& heatmaps,
                 const render_options& options) {
    out << "<section class=\"stage\" id=\"stage-" << s.name() << "\">\n<h2><span class=\"step\">" << s.info->step.text()
        << "</span><code>" << s.name() << "</code><span class=\"title\">" << heatmap::xml_escape(stage_title(t.cfg, s.name())) << "</span></h2>\n"
        << "<p class=\"formula\"><code>" << heatmap::xml_escape(stage_formula(t.cfg, s.name())) << "</code></p>\n";
    write_explanation(out, s, t.cfg);
    const std::vector<const warning*> warnings = t.warnings_of(s.name());
    if (!warnings.empty()) {
        out << "<ul class=\"warnings\">\n";
        for (const warning* w : warnings) out << "<li>" << heatmap::xml_escape(printable_text(w->text)) << "</li>\n";
        out << "</ul>\n";
    }
    std::vector<element_grid> printed;  // what the table shows of each tensor: its notation is the table's
    for (const tensor& x : s.tensors) printed.push_back(printing_grid(x, options));
    const table::stage_numbers numbers = table::choose_stage_numbers(s, printed, t.cfg, options);
    for (const tensor& x : s.tensors) {
        out << "<div class=\"tensor\">\n<h3><code>" << heatmap::xml_escape(x.name) << "</code> "
            << tensor_index_text({x.values.shape().begin(), x.values.shape().end()})
            << " <span class=\"dims\">" << heatmap::xml_escape(dims_text(x)) << "</span></h3>\n";
        const heatmap::tensor_heatmap* drawn = nullptr;
        for (const auto& h : heatmaps)
            if (h.values == &x) drawn = &h;
        const bool summary = summarised(x, options);
        if (drawn != nullptr) {
            std::string note = heatmap::panels_note(*drawn);
            const std::string crop = heatmap::crop_note(*drawn, drawn->panels.front());
            if (!crop.empty()) note += (note.empty() ? "" : "; ") + crop;
            if (!note.empty()) out << "<p class=\"note\">" << heatmap::xml_escape(note) << " (--full draws all)</p>\n";
            write_heatmaps(out, *drawn, options);
            out << "<details><summary>the numbers" << (summary ? " (summarised)" : "") << "</summary>\n";
        } else if (summary) {
            out << "<p class=\"note\">summarised: the first and last 3 along each axis (--full shows all "
                << x.values.size() << " values)</p>\n";
        }
        table_writer(x, numbers, options, t.cfg.sources.token_labels).write(out);
        if (drawn != nullptr) out << "</details>\n";
        if (options.stats)  // --stats: of the whole tensor
            out << "<p class=\"stats\"><code>"
                << heatmap::xml_escape(stats_line(stats_of(x, stats_kind_of(s.id(), x.name), static_cast<double>(t.cfg.head_dim())),
                                                  s.name(), options.precision))
                << "</code></p>\n";
        out << "</div>\n";
    }
    out << "</section>\n";
}

/// "8 mask: skipped (no --mask ...)", for each stage between `from` and `to` (two stages
/// shown one after the other) that the run has not.
void write_skipped(std::ostream& out, const config& c, stage_id from, stage_id to) {
    for (const stage_info& info : stage_table) {
        if (info.id <= from || info.id >= to || stage_in_run(c, info.id)) continue;
        const std::string why = stage_absence(c, info.id);
        if (why.empty()) continue;
        out << "<p class=\"skipped\">" << info.step.text() << " <code>" << info.name
            << "</code>: skipped: " << heatmap::xml_escape(why) << "</p>\n";
    }
}

/// --graph: the run's graph (render_plan_dot, laid out by Graphviz) as an inline <svg>,
/// each box a link to its stage's section.
std::string graph_svg(const config& c, const render_options& options) {
    std::ostringstream dot, svg;
    render_plan_dot(c, make_plan(c).stages, options, dot);
    draw_graph(dot.str(), "svg", svg);
    const std::string drawn = svg.str();
    const std::size_t start = drawn.find("<svg");  // after Graphviz's XML prolog and DOCTYPE
    return start == std::string::npos ? std::string() : drawn.substr(start);
}

}  // namespace

std::vector<std::string> render_html(const trace& t, const render_options& options, std::ostream& out) {
    const std::vector<heatmap::tensor_heatmap> heatmaps =
        heatmap::collect(t, options, html_max_side, html_max_panels);
    std::vector<std::string> notes;
    std::ostringstream stages;
    const stage* previous = nullptr;  // the stage shown last
    for (const stage& s : t.stages) {
        if (!options.shows(s.id())) continue;
        if (previous != nullptr) write_skipped(stages, t.cfg, previous->id(), s.id());
        previous = &s;
        write_stage(stages, t, s, heatmaps, options);
    }
    write_head(out, t);
    write_run(out, t, options);
    if (options.layout == picture_layout::slide)
        out << "<figure class=\"slide\">\n" << svg_page_element(t, options, notes) << "</figure>\n";
    if (options.graph)
        out << "<div class=\"with-graph\">\n<aside class=\"graph\">\n<p>The run's graph: each box is a stage with its "
               "tensors' shapes and strides, each arrow what it reads (dashed: a view, no data moves). Click a box "
               "to go to its stage.</p>\n"
            << graph_svg(t.cfg, options) << "</aside>\n<div class=\"stages\">\n"
            << stages.str() << "</div>\n</div>\n";
    else
        out << stages.str();
    out << "</main>\n<footer>Made by attn: every number is PyTorch 1.13's for this run. This page needs no "
           "network.</footer>\n<script>"
        << hover_script << "</script>\n</body>\n</html>\n";
    return notes;
}

}  // namespace attn
