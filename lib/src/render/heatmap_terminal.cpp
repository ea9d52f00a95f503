// --format heatmap: the run in a few lines, then per stage its heading, formula and
// warnings, then per tensor its panels (side by side as the width allows, each
// batch item on new lines) and one legend.
//
// A panel:
//   batch 0, head 1
//       key  0 1 2 3 4
//   query 0 ██ · · · ·
//         1 ████ · · ·
// A position table's panel says "position" and "feature" (or "dim") instead.
// Key numbers of two or more digits stand in columns, like a ruler: the tens
// digit over each multiple of ten.
#include "attn/render/text_headings.hpp"
#include "attn/render/heatmap_terminal.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "attn/render/colormap.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "attn/render/table_parts.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {
namespace {

using heatmap::cell_kind;

constexpr std::size_t panel_gap = 2;  // columns between panels side by side
constexpr const char* shade_ramp[] = {" ", "░", "▒", "▓", "█"};  // the colourless cells, low to high
constexpr int shade_levels = 5;
const std::string reset = "\x1b[0m";

/// One line of output and how many columns it takes (escape codes take none).
struct text_line {
    std::string text;
    std::size_t width = 0;

    void add(std::string_view s) {
        text += s;
        width += table::text_width(s);
    }
    /// Text between escape codes that take no columns.
    void add_styled(std::string_view style, std::string_view s) {
        if (style.empty()) return add(s);
        text += style;
        add(s);
        text += reset;
    }
    void pad_to(std::size_t w) {
        if (width < w) add(std::string(w - width, ' '));
    }
};

std::string background(const rgb& c) {
    return "\x1b[48;2;" + std::to_string(rgb::byte(c.r)) + ";" + std::to_string(rgb::byte(c.g)) + ";" +
           std::to_string(rgb::byte(c.b)) + "m";
}

const std::string grey = "\x1b[38;2;128;128;128m";   // marks: readable on dark and light terminals
const std::string nan_red = "\x1b[1;38;2;230;50;50m";  // NaN stands out, as in the table

/// The two columns of a marked cell, and their colour.
std::string_view mark_of(cell_kind k) {
    switch (k) {
        case cell_kind::masked: return " ·";
        case cell_kind::neg_inf: return "-∞";
        case cell_kind::pos_inf: return "+∞";
        case cell_kind::nan: return "??";
        case cell_kind::value: break;
    }
    return "  ";
}

std::string_view mark_style(cell_kind k, bool color) {
    if (!color) return {};
    return k == cell_kind::nan ? std::string_view(nan_red) : std::string_view(grey);
}

/// A cell at `position` of the scale: coloured spaces, or two shade characters.
void add_value_cell(text_line& line, double position, bool color) {
    if (color) {
        line.add_styled(background(viridis(position)), "  ");
    } else {
        const char* shade = shade_ramp[shade_level(position, shade_levels)];
        line.add(std::string(shade) + shade);
    }
}

std::size_t digits(std::size_t n) { return std::to_string(n).size(); }

/// The key numbers over the columns, as a ruler: one line per digit, the last
/// labelled `name` ("key") in the label column.
void add_key_ruler(std::vector<text_line>& lines, const std::vector<std::size_t>& keys, std::string_view name,
                   std::size_t label_width, bool color) {
    const std::size_t rows = digits(keys.empty() ? 0 : keys.back());
    for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t below = rows - 1 - r;  // digits below this one
        std::size_t power = 1;
        for (std::size_t k = 0; k < below; ++k) power *= 10;
        text_line line;
        if (r + 1 == rows) {
            line.add(std::string(label_width - name.size(), ' '));
            line.add_styled(color ? grey : "", name);
        } else {
            line.add(std::string(label_width, ' '));
        }
        line.add(" ");
        for (std::size_t j : keys) {
            const bool shown = below == 0 || (j % power == 0 && j >= power);
            line.add(shown ? std::string(" ") + char('0' + (j / power) % 10) : "  ");
        }
        lines.push_back(std::move(line));
    }
}

/// One panel as lines: its place, a note when cut, the key ruler, then a line per query.
std::vector<text_line> panel_lines(const heatmap::tensor_heatmap& h, const heatmap::panel& p, bool color) {
    std::vector<text_line> lines;
    text_line head;
    head.add_styled(color ? "\x1b[1m" : "", heatmap::place(p));
    lines.push_back(std::move(head));
    const std::string note = heatmap::crop_note(h, p);
    if (!note.empty()) {
        text_line line;
        line.add_styled(color ? grey : "", note + " (--full draws all)");
        lines.push_back(std::move(line));
    }
    // each row labelled with its number, or its token (--vocab), the first with the axis's name
    const auto row_label = [&](std::size_t r) {
        const std::string text = h.row_text(p.queries[r]);
        return r == 0 ? std::string(h.rows.one) + " " + text : text;
    };
    std::size_t label_width = h.columns.one.size();
    for (std::size_t r = 0; r < p.queries.size(); ++r) label_width = std::max(label_width, table::text_width(row_label(r)));
    if (!h.column_labels.empty()) {  // the keys' tokens, numbered as the ruler numbers the columns
        text_line line;
        std::string keys = std::string(h.columns.one) + "s:";
        for (std::size_t j : p.keys) keys += " " + std::to_string(j) + " " + h.column_text(j);
        line.add_styled(color ? grey : "", keys);
        lines.push_back(std::move(line));
    }
    add_key_ruler(lines, p.keys, h.columns.one, label_width, color);
    for (std::size_t r = 0; r < p.queries.size(); ++r) {
        const std::size_t i = p.queries[r];
        text_line line;
        const std::string label = row_label(r);
        line.add(std::string(label_width - table::text_width(label), ' '));
        line.add_styled(color ? grey : "", label);
        line.add(" ");
        for (std::size_t j : p.keys) {
            const cell_kind k = h.kind(p, i, j);
            if (k == cell_kind::value)
                add_value_cell(line, h.scale.position(h.at(p, i, j)), color);
            else
                line.add_styled(mark_style(k, color), mark_of(k));
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

/// Panels side by side: row k of the output is row k of each panel, padded.
void print_side_by_side(std::ostream& out, const std::vector<std::vector<text_line>>& panels) {
    std::size_t height = 0;
    for (const auto& p : panels) height = std::max(height, p.size());
    std::vector<std::size_t> widths;
    for (const auto& p : panels) {
        std::size_t w = 0;
        for (const text_line& line : p) w = std::max(w, line.width);
        widths.push_back(w);
    }
    for (std::size_t row = 0; row < height; ++row) {
        text_line joined;
        std::size_t column = 0;  // where panel k starts
        for (std::size_t k = 0; k < panels.size(); ++k) {
            joined.pad_to(column);
            if (row < panels[k].size()) {
                joined.text += panels[k][row].text;
                joined.width += panels[k][row].width;
            }
            column += widths[k] + panel_gap;
        }
        // Trailing blanks of a colourless line serve nothing.
        std::string& s = joined.text;
        s.erase(s.find_last_not_of(' ') + 1);
        out << "  " << s << '\n';
    }
}

/// "0.0312 [  ░░▒▒▓▓██] 1.0000   · masked   ?? NaN": the scale and the marks present.
void print_legend(std::ostream& out, const heatmap::tensor_heatmap& h, const render_options& options) {
    const bool color = options.color;
    text_line line;
    line.add("  ");
    if (h.boolean()) {
        if (h.has(cell_kind::value) || h.from->id() != stage_id::mask) {
            add_value_cell(line, 1.0, color);
            line.add(" true   ");
            if (h.from->id() != stage_id::mask) {
                add_value_cell(line, 0.0, color);
                line.add(" false   ");
            }
        }
    } else if (h.has(cell_kind::value)) {
        line.add(heatmap::number_text(h.scale.lo, options.precision) + " ");
        if (color) {
            constexpr int steps = 16;
            for (int k = 0; k < steps; ++k) add_value_cell(line, k / double(steps - 1), true);
        } else {
            line.add("[");
            for (int k = 0; k < shade_levels; ++k) add_value_cell(line, static_cast<double>(k) / (shade_levels - 1), false);
            line.add("]");
        }
        line.add(" " + heatmap::number_text(h.scale.hi, options.precision) + "   ");
    }
    for (cell_kind k : {cell_kind::masked, cell_kind::neg_inf, cell_kind::pos_inf, cell_kind::nan}) {
        if (!h.has(k)) continue;
        line.add_styled(mark_style(k, color), mark_of(k));
        line.add(" " + std::string(heatmap::kind_name(k)) + "   ");
    }
    std::string& s = line.text;
    s.erase(s.find_last_not_of(' ') + 1);
    out << s << '\n';
}

/// One tensor: a header line, its panels (a batch item's heads side by side within
/// `width`, each batch item on new lines), its legend.
void print_tensor(std::ostream& out, const heatmap::tensor_heatmap& h, const render_options& options,
                  std::size_t width) {
    const bool color = options.color;
    const auto& shape = h.values->values.shape();
    std::string sizes, dims;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        sizes += (a ? "," : "") + std::to_string(shape[a]);
        dims += (a ? ", " : "") + (a < h.values->dims.size() ? h.values->dims[a] : std::string());
    }
    out << (color ? "\x1b[1m" : "") << h.values->name << (color ? reset : "") << " [" << sizes << "] (" << dims << ")\n";
    std::vector<std::vector<text_line>> row;
    std::size_t row_width = 0, batch = h.panels.front().batch;
    for (const heatmap::panel& p : h.panels) {
        std::vector<text_line> lines = panel_lines(h, p, color);
        std::size_t w = 0;
        for (const text_line& line : lines) w = std::max(w, line.width);
        const bool fits = row.empty() || row_width + panel_gap + w + 2 <= width;
        if (!row.empty() && (p.batch != batch || !fits)) {
            print_side_by_side(out, row);
            out << '\n';
            row.clear();
            row_width = 0;
        }
        batch = p.batch;
        row_width += (row.empty() ? 0 : panel_gap) + w;
        row.push_back(std::move(lines));
    }
    print_side_by_side(out, row);
    print_legend(out, h, options);
}

}  // namespace

void render_heatmap_terminal(const trace& t, const render_options& options, std::ostream& out, std::size_t width) {
    const bool color = options.color;
    const heading_style style = make_heading_style(color);
    const std::vector<heatmap::tensor_heatmap> heatmaps = heatmap::collect(t, options, terminal_max_side);  // may refuse
    print_run_header(out, t.cfg, style);
    const stage* current = nullptr;
    for (const heatmap::tensor_heatmap& h : heatmaps) {
        if (h.from != current) {
            current = h.from;
            out << '\n';
            print_stage_heading(out, t.cfg, *current, style);
            print_stage_warnings(out, t, *current, style);
        }
        out << '\n';
        print_tensor(out, h, options, width);
        if (options.stats) out << style.dim << heatmap::stats_text(t.cfg, h, options) << style.reset << '\n';
    }
}

}  // namespace attn
