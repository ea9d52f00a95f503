// --format table: every stage as labelled 2-D slices over the last two axes,
// for reading next to a notebook.
//
// Each stage: its heading and formula, its warnings, a note on the notation
// when it is scientific, then its tensors in column widths they share. The parts
// (table_parts.hpp): one notation per stage (table_numbers.cpp), one tensor's
// slices and labels (table_tensor.cpp).
#include "attn/render_table.hpp"

#include <algorithm>
#include <vector>

#include "attn/table_parts.hpp"

namespace attn {

namespace {

using table::palette;

/// "── 6 · scores ── every query against every key, per head", then the formula.
void print_stage_heading(std::ostream& out, const stage& s, const palette& p) {
    out << p.bold << "── " << s.info->step << " · " << s.name() << " ── " << s.info->title << p.reset
        << '\n';
    out << "   " << s.formula << '\n';
}

/// "   ! batch 1, query 3: no key may be attended ...": the warnings about this stage.
void print_stage_warnings(std::ostream& out, const trace& t, const stage& s, const palette& p) {
    for (const warning* w : t.warnings_of(s.name())) out << p.red << "   ! " << w->text << p.reset << '\n';
}

/// The stage's tensors, after a note on their notation when it is scientific,
/// their columns lined up: one label width and one value width for all of them.
void print_tensors(std::ostream& out, const trace& t, const stage& s, const render_options& options,
                   const palette& p) {
    const table::stage_numbers numbers = table::choose_stage_numbers(s, t.cfg, options);
    if (!numbers.note.empty()) out << p.dim << "   " << numbers.note << p.reset << '\n';
    std::vector<table::tensor_printer> printers;
    printers.reserve(s.tensors.size());
    table::column_widths shared;
    for (const tensor& x : s.tensors) {
        printers.emplace_back(x, numbers, options, p);
        shared.label = std::max(shared.label, printers.back().widths().label);
        shared.value = std::max(shared.value, printers.back().widths().value);
    }
    for (auto& printer : printers) printer.print(out, shared);
}

}  // namespace

void render_table(const trace& t, const render_options& options, std::ostream& out) {
    const palette p = table::make_palette(options.color);
    bool first = true;
    for (const stage& s : t.stages) {
        if (!options.shows(s.name())) continue;
        if (!first) out << '\n';  // one blank line between stages
        first = false;
        print_stage_heading(out, s, p);
        print_stage_warnings(out, t, s, p);  // before the tensors, where they are seen
        print_tensors(out, t, s, options, p);
    }
}

}  // namespace attn
