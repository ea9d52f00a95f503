#include "attn/render/text_headings.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "attn/io/tensor_file.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {

heading_style make_heading_style(bool color) {
    if (!color) return {};
    return {"\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[0m"};
}

void print_run_header(std::ostream& out, const config& c, const heading_style& style, bool seed_secret) {
    const std::vector<run_line> lines = run_summary(c, seed_secret);
    std::size_t width = 0;
    for (const run_line& line : lines) width = std::max(width, line.label.size());
    for (const run_line& line : lines)
        out << style.dim << line.label << style.reset << std::string(width + 2 - line.label.size(), ' ') << line.text
            << '\n';
}

void print_stage_heading(std::ostream& out, const config& c, const stage& s, const heading_style& style) {
    out << style.bold << "── " << s.info->step.text() << " · " << s.name() << " ── " << stage_title(c, s.name()) << style.reset << '\n';
    out << "   " << stage_formula(c, s.name()) << '\n';
    const std::vector<run_line> sources = stage_sources(c, s.id());  // a model's file: "   w_q ← h.1.attn.c_attn.weight[:, 0:16]ᵀ"
    std::size_t width = 0;
    for (const run_line& line : sources) width = std::max(width, line.label.size());
    for (const run_line& line : sources)
        out << "   " << style.dim << line.label << std::string(width - line.label.size(), ' ') << " ← " << line.text
            << style.reset << '\n';
}

void print_stage_warnings(std::ostream& out, const trace& t, const stage& s, const heading_style& style) {
    if (!s.figures.empty()) {  // "   max_abs_diff = 2.98e-08, tolerance = 1.2e-05"
        out << "  ";
        for (std::size_t i = 0; i < s.figures.size(); ++i)
            out << (i == 0 ? " " : ", ") << s.figures[i].name << " = " << fill_to_string(static_cast<float>(s.figures[i].value));
        out << '\n';
    }
    for (const warning* w : t.warnings_of(s.name())) out << style.red << "   ! " << printable_text(w->text) << style.reset << '\n';
}

}  // namespace attn
