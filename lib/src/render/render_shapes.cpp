// attn trace --shapes (render_shapes.hpp): a line per stage, or the JSON without data.
#include "attn/render/render_shapes.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "attn/compute/mistake.hpp"
#include "attn/io/config_fields.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/render/render_json.hpp"
#include "attn/render/table_parts.hpp"
#include "attn/render/text_headings.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/join.hpp"

namespace attn {
namespace {

/// The letters of t's axes; the mask's head axis, of size 1 and broadcast over the heads, is "1".
std::vector<std::string> axis_letters(const planned_stage& s, const planned_tensor& t) {
    std::vector<std::string> letters;
    for (const std::string& dim : t.dims)
        letters.push_back(s.id == stage_id::mask && dim == "head" ? "1" : dim_letter(dim));
    return letters;
}

/// "[B,H,Sq,dk]"
std::string letters_text(const std::vector<std::string>& letters) { return "[" + join(letters, ",") + "]"; }

/// "projections" of "projections.q".
std::string stage_of(const std::string& path) { return path.substr(0, path.find('.')); }

/// "view of projections, not contiguous", "copy of merge (.contiguous())", "own", "own, bool".
std::string memory_text(const planned_tensor& t) {
    std::string text = !t.view_of.empty()   ? "view of " + stage_of(t.view_of)
                       : !t.copy_of.empty() ? "copy of " + stage_of(t.copy_of) + " (" + t.copy_by + ")"
                                            : "own";
    if (!is_contiguous(t.layout)) text += ", not contiguous";
    if (t.type == element_type::boolean) text += ", bool";
    return text;
}

/// One printed line: the stage (on its first line only) and tensors of one layout.
struct shapes_line {
    std::string step, stage, names, letters, sizes, strides, memory;
};

std::vector<shapes_line> shapes_lines(const std::vector<planned_stage>& stages, const render_options& options) {
    std::vector<shapes_line> lines;
    for (const planned_stage& s : stages) {
        const stage_info& info = info_of(s.id);
        if (!options.shows(info.id)) continue;
        const std::size_t stage_start = lines.size();
        for (const planned_tensor& t : s.tensors) {
            shapes_line line{"", "", t.name, letters_text(axis_letters(s, t)), tensor_index_text(t.layout.shape),
                             python_tuple(t.layout.strides), memory_text(t)};
            const auto same = std::find_if(lines.begin() + static_cast<std::ptrdiff_t>(stage_start), lines.end(),
                                           [&line](const shapes_line& l) {
                                               return l.letters == line.letters && l.sizes == line.sizes &&
                                                      l.strides == line.strides && l.memory == line.memory;
                                           });
            if (same != lines.end()) same->names += " " + t.name;  // q k v, or b_q b_k b_v: one line
            else lines.push_back(std::move(line));
        }
        if (lines.size() > stage_start) {  // the stage is named on its first line
            lines[stage_start].step = info.step.text();
            lines[stage_start].stage = info.name;
        }
    }
    return lines;
}

/// `text` as a dot string: quotes and backslashes escaped, each line ended left-justified (\\l).
std::string dot_quoted(const std::string& text) {
    std::string quoted = "\"";
    for (const char ch : text) {
        if (ch == '\n') {
            quoted += "\\l";
            continue;
        }
        if (ch == '"' || ch == '\\') quoted += '\\';
        quoted += ch;
    }
    return quoted + '"';
}

}  // namespace

void render_plan_dot(const config& c, const std::vector<planned_stage>& stages, const render_options& options,
                     std::ostream& out) {
    const std::optional<stage_id> mistaken = mistake_stage(c.mistake, c.mistake_variant);
    std::ostringstream header;  // the run's lines on top (the html page has them already)
    if (!options.graph) print_run_header(header, c, make_heading_style(false), options.seed_secret);
    out << "// attn trace --format dot: the run's stages, what each reads, and its tensors' layouts\n"
        << "digraph attn {\n"
        << "  graph [rankdir=TB, fontname=\"DejaVu Sans Mono\", labelloc=t, labeljust=l, label=" << dot_quoted(header.str())
        << "];\n"
        << "  node [shape=box, fontname=\"DejaVu Sans Mono\", fontsize=10];\n"
        << "  edge [fontname=\"DejaVu Sans Mono\", fontsize=9];\n";
    const std::vector<shapes_line> lines = shapes_lines(stages, options);
    std::size_t line = 0;
    for (const planned_stage& s : stages) {
        const stage_info& info = info_of(s.id);
        if (!options.shows(info.id)) continue;
        std::string label = info.step.text() + " · " + std::string(info.name) + "\n";
        for (bool first = true; line < lines.size() && (first || lines[line].stage.empty()); ++line, first = false)
            label += lines[line].names + "  " + lines[line].letters + " = " + lines[line].sizes + "  " +
                     lines[line].strides + "  " + lines[line].memory + "\n";
        out << "  " << info.name << " [label=" << dot_quoted(label);
        if (options.graph) out << ", URL=\"#stage-" << info.name << "\"";  // the html page's section
        if (mistaken == info.id)
            out << ", color=red, fontcolor=red, xlabel=" << dot_quoted("--mistake " + std::string(mistake_id(c.mistake)) +
                                                                     " replaces this step");
        out << "];\n";
    }
    // edges: from each stage read, or from the nearest stages shown before it when not shown
    for (const planned_stage& s : stages) {
        const stage_info& info = info_of(s.id);
        if (!options.shows(info.id)) continue;
        std::vector<stage_id> sources = s.reads, drawn;
        for (std::size_t i = 0; i < sources.size(); ++i) {
            const stage_id from = sources[i];
            if (!options.shows(from)) {  // left out: what it reads instead
                const auto planned = std::find_if(stages.begin(), stages.end(), [from](const planned_stage& p) { return p.id == from; });
                for (stage_id up : planned->reads) sources.push_back(up);
            } else if (std::find(drawn.begin(), drawn.end(), from) == drawn.end()) {
                drawn.push_back(from);
            }
        }
        std::sort(drawn.begin(), drawn.end());
        for (const stage_id from : drawn) {
            const std::string prefix = std::string(info_of(from).name) + ".";
            const auto copies = std::find_if(s.tensors.begin(), s.tensors.end(), [&](const planned_tensor& t) {
                return t.copy_of.compare(0, prefix.size(), prefix) == 0;
            });
            const bool all_views = std::all_of(s.tensors.begin(), s.tensors.end(),
                                               [](const planned_tensor& t) { return !t.view_of.empty(); });
            out << "  " << info_of(from).name << " -> " << info.name;
            if (all_views) out << " [style=dashed, label=\"view\"]";
            else if (copies != s.tensors.end()) out << " [label=" << dot_quoted("copy (" + copies->copy_by + ")") << "]";
            out << ";\n";
        }
    }
    out << "}\n";
}

void render_shapes_table(const config& c, const std::vector<planned_stage>& stages, const render_options& options,
                         std::ostream& out) {
    const heading_style style = make_heading_style(options.color);
    print_run_header(out, c, style, options.seed_secret);
    const std::vector<shapes_line> lines = shapes_lines(stages, options);
    shapes_line widths_of{" #", "stage", "tensors", "shape", "", "strides", "memory"};
    std::vector<std::size_t> w(6, 0);
    const auto measure = [&w](const shapes_line& l) {
        const std::string cells[] = {l.step, l.stage, l.names, l.letters, l.sizes, l.strides};
        for (std::size_t i = 0; i < 6; ++i) w[i] = std::max(w[i], table::text_width(cells[i]));  // "G·dk": 4 columns
    };
    measure(widths_of);
    for (const shapes_line& l : lines) measure(l);
    const auto pad = [&out](const std::string& text, std::size_t width, bool right) {
        const std::string spaces(width - std::min(width, table::text_width(text)), ' ');
        out << (right ? spaces + text : text + spaces);
    };
    const auto print_line = [&](const shapes_line& l, std::string_view stage_style) {
        pad(l.step, w[0], true);
        out << "  " << stage_style;
        pad(l.stage, w[1], false);
        out << (stage_style.empty() ? "" : style.reset) << "  ";
        pad(l.names, w[2], false);
        out << "  ";
        pad(l.letters, w[3], false);
        out << (l.sizes.empty() ? "   " : " = ");  // the heading's "shape" spans letters and sizes
        pad(l.sizes, w[4], false);
        out << "  ";
        pad(l.strides, w[5], false);
        out << "  " << l.memory;
    };
    out << '\n' << style.dim;
    print_line(widths_of, "");
    out << style.reset << '\n';
    for (const shapes_line& l : lines) {
        print_line(l, style.bold);
        out << '\n';
    }
}

void render_shapes_json(const config& c, const std::vector<planned_stage>& stages, const render_options& options,
                        std::ostream& out) {
    nlohmann::ordered_json doc{{"format", "attn.shapes/1"}, {"config", config_to_json(c)}};
    if (options.seed_secret) doc["config"].erase("seed");
    nlohmann::ordered_json& by_stage = doc["stages"] = nlohmann::ordered_json::object();
    for (const planned_stage& s : stages) {
        const stage_info& info = info_of(s.id);
        if (!options.shows(info.id)) continue;
        nlohmann::ordered_json stage{{"step", step_json(info.step)}, {"title", info.title}};
        nlohmann::ordered_json& tensors = stage["tensors"] = nlohmann::ordered_json::object();
        for (const planned_tensor& t : s.tensors) {
            nlohmann::ordered_json j{{"shape", t.layout.shape},
                                     {"dims", t.dims},
                                     {"letters", axis_letters(s, t)},
                                     {"dtype", t.type == element_type::boolean ? "bool" : "float32"},
                                     {"strides", t.layout.strides},
                                     {"contiguous", is_contiguous(t.layout)},
                                     {"memory", !t.view_of.empty() ? "view" : !t.copy_of.empty() ? "copy" : "own"}};
            if (!t.view_of.empty()) j["view_of"] = t.view_of;
            if (!t.copy_of.empty()) j["copy_of"] = t.copy_of;
            tensors[t.name] = std::move(j);
        }
        by_stage[std::string(info.name)] = std::move(stage);
    }
    out << doc.dump() << '\n';
}

}  // namespace attn
