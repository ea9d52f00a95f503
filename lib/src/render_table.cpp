// --format table: every stage as labelled 2-D slices over the last two axes.
//
// Numbers are chosen and summarised the way PyTorch's print does
// (torch/_tensor_str.py), so a student can hold this output next to a notebook
// and see the same digits:
//   * one notation per tensor (_Formatter; options.notation is sci_mode),
//     decided over the finite nonzero values that are printed;
//   * a tensor of more than 1000 elements keeps only the first and last 3
//     entries of every axis longer than 6 (get_summarized_data).
// Both rules live in torch_format, shared with --format torch.
#include "attn/render_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "attn/torch_format.hpp"

namespace attn {

namespace {

constexpr std::string_view column_gap = "  ";
constexpr std::string_view ellipsis = "...";

/// ANSI codes, or empty strings when colour is off, so no caller has to branch.
struct palette {
    std::string_view bold, dim, red, reset;
};

palette make_palette(bool color) {
    if (!color) return {};
    return {"\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[0m"};
}

void write_spaces(std::ostream& out, std::size_t n) {
    static constexpr char spaces[] = "                                ";
    while (n > 0) {
        const std::size_t k = std::min(n, sizeof spaces - 1);
        out.write(spaces, static_cast<std::streamsize>(k));
        n -= k;
    }
}

/// `text` right-aligned in `width` columns, coloured when `colour` is not empty.
/// The padding stays outside the escape codes so widths are counted in visible characters.
void write_right(std::ostream& out, std::string_view text, std::size_t width,
                 std::string_view colour, const palette& p) {
    if (text.size() < width) write_spaces(out, width - text.size());
    out << colour << text;
    if (!colour.empty()) out << p.reset;
}

/// `text` left-aligned in `width` columns (row labels).
void write_left(std::ostream& out, std::string_view text, std::size_t width,
                std::string_view colour, const palette& p) {
    out << colour << text;
    if (!colour.empty()) out << p.reset;
    if (text.size() < width) write_spaces(out, width - text.size());
}

std::string index_label(std::string_view dim, std::size_t index) {
    return std::string(dim) + " " + std::to_string(index);
}

/// Prints one tensor: its header line, then its values as labelled 2-D slices.
class tensor_printer {
public:
    tensor_printer(const tensor& t, const render_options& options, const palette& p,
                   const float* faint_value);
    void print(std::ostream& out) const;

private:
    std::string dim_name(std::size_t axis) const;
    std::size_t rank() const { return grid_.shape.size(); }
    void measure();
    void print_header(std::ostream& out) const;
    void print_leading(std::ostream& out, std::size_t axis, std::vector<std::size_t>& index,
                       std::ptrdiff_t base) const;
    void print_skipped(std::ostream& out, std::size_t axis, const std::vector<std::size_t>& index,
                       std::size_t first, std::size_t last) const;
    void print_slice(std::ostream& out, const std::vector<std::size_t>& index,
                     std::ptrdiff_t base) const;
    void print_column_labels(std::ostream& out) const;
    void print_row(std::ostream& out, std::string_view label, std::ptrdiff_t base) const;
    void print_value(std::ostream& out, float v) const;
    bool faint(float v) const;

    const tensor& t_;
    const palette& p_;
    const float* faint_value_;  // entries equal to it are dimmed (the mask's fill), or nullptr
    bool summarise_;
    element_grid grid_;
    number_format format_;
    std::size_t column_width_ = 0;  // one width for every value column of the tensor
    std::size_t label_width_ = 0;   // the row-label column
};

tensor_printer::tensor_printer(const tensor& t, const render_options& options, const palette& p,
                               const float* faint_value)
    : t_(t),
      p_(p),
      faint_value_(faint_value),
      summarise_(summarised(t, options)),
      grid_(make_grid(t, summarise_)) {
    if (t.values.size() == 0) return;  // nothing to measure or print
    format_ = choose_format(t, grid_, options);
    measure();
}

/// The dimension's name, or "dim N" when the trace gives none for it.
std::string tensor_printer::dim_name(std::size_t axis) const {
    if (axis < t_.dims.size()) return t_.dims[axis];
    return "dim" + std::to_string(axis);
}

/// Widths: every value and column label fits the value columns, every row label
/// fits the label column.
void tensor_printer::measure() {
    char buf[number_buffer_size];
    for_each_shown(grid_, [&](float v) {
        column_width_ = std::max(column_width_, format_number(v, format_, buf).size());
    });
    if (rank() == 0) return;
    const std::size_t cols = rank() - 1;
    column_width_ = std::max(column_width_, ellipsis.size());
    for (std::size_t c : grid_.shown[cols])
        column_width_ = std::max(column_width_, index_label(dim_name(cols), c).size());
    if (rank() == 1) {
        label_width_ = t_.name.size();  // a 1-D tensor's only row is labelled with its name
        return;
    }
    label_width_ = ellipsis.size();
    for (std::size_t r : grid_.shown[rank() - 2])
        label_width_ = std::max(label_width_, index_label(dim_name(rank() - 2), r).size());
}

void tensor_printer::print(std::ostream& out) const {
    print_header(out);
    if (t_.values.size() == 0) return;
    if (rank() == 0) {
        print_value(out, grid_.at(0));
        out << '\n';
    } else if (rank() == 1) {
        print_column_labels(out);
        print_row(out, t_.name, 0);
    } else {
        std::vector<std::size_t> index;
        print_leading(out, 0, index, 0);
    }
}

/// "scores [2,4,5,5] (batch, head, query, key)", and a note when summarised.
void tensor_printer::print_header(std::ostream& out) const {
    out << t_.name << " [";
    for (std::size_t a = 0; a < rank(); ++a) out << (a ? "," : "") << grid_.shape[a];
    out << ']';
    if (rank() > 0) {
        out << ' ' << p_.dim << '(';
        for (std::size_t a = 0; a < rank(); ++a) out << (a ? ", " : "") << dim_name(a);
        out << ')' << p_.reset;
    }
    if (summarise_) out << " (summarised: --full prints all " << t_.values.size() << " values)";
    out << '\n';
}

/// Walks the leading axes (all but the last two) and prints one slice per
/// index combination; `index` holds the indices chosen so far.
void tensor_printer::print_leading(std::ostream& out, std::size_t axis, std::vector<std::size_t>& index,
                                   std::ptrdiff_t base) const {
    if (axis + 2 == rank()) {
        print_slice(out, index, base);
        return;
    }
    const auto& shown = grid_.shown[axis];
    for (std::size_t k = 0; k < shown.size(); ++k) {
        if (gap_before(shown, k)) print_skipped(out, axis, index, shown[k - 1] + 1, shown[k] - 1);
        index.push_back(shown[k]);
        print_leading(out, axis + 1, index, base + grid_.step(axis, shown[k]));
        index.pop_back();
    }
}

/// "... (8 more slices: batch=0, head=3..6) ...": the slices a summary leaves out.
void tensor_printer::print_skipped(std::ostream& out, std::size_t axis,
                                   const std::vector<std::size_t>& index, std::size_t first,
                                   std::size_t last) const {
    std::size_t slices = last - first + 1;
    for (std::size_t a = axis + 1; a + 2 < rank(); ++a) slices *= grid_.shape[a];
    out << p_.dim << "... (" << slices << " more slices: ";
    for (std::size_t a = 0; a < index.size(); ++a) out << dim_name(a) << '=' << index[a] << ", ";
    out << dim_name(axis) << '=' << first << ".." << last << ") ..." << p_.reset << '\n';
}

/// One 2-D slice: "scores[batch=0, head=1]" (for 3-D and up), column labels, rows.
void tensor_printer::print_slice(std::ostream& out, const std::vector<std::size_t>& index,
                                 std::ptrdiff_t base) const {
    if (!index.empty()) {
        out << p_.dim << t_.name << '[';
        for (std::size_t a = 0; a < index.size(); ++a)
            out << (a ? ", " : "") << dim_name(a) << '=' << index[a];
        out << ']' << p_.reset << '\n';
    }
    print_column_labels(out);
    const std::size_t rows = rank() - 2;
    const auto& shown = grid_.shown[rows];
    for (std::size_t k = 0; k < shown.size(); ++k) {
        if (gap_before(shown, k)) {
            write_left(out, ellipsis, 0, p_.dim, p_);
            out << '\n';
        }
        print_row(out, index_label(dim_name(rows), shown[k]), base + grid_.step(rows, shown[k]));
    }
}

/// "          key 0    key 1 ...": one label per printed column.
void tensor_printer::print_column_labels(std::ostream& out) const {
    const std::size_t cols = rank() - 1;
    const auto& shown = grid_.shown[cols];
    write_spaces(out, label_width_);
    for (std::size_t k = 0; k < shown.size(); ++k) {
        if (gap_before(shown, k)) {
            out << column_gap;
            write_right(out, ellipsis, ellipsis.size(), p_.dim, p_);
        }
        out << column_gap;
        write_right(out, index_label(dim_name(cols), shown[k]), column_width_, p_.dim, p_);
    }
    out << '\n';
}

/// One row of values along the last axis, starting at element offset `base`.
void tensor_printer::print_row(std::ostream& out, std::string_view label, std::ptrdiff_t base) const {
    const std::size_t cols = rank() - 1;
    const auto& shown = grid_.shown[cols];
    write_left(out, label, label_width_, p_.dim, p_);
    for (std::size_t k = 0; k < shown.size(); ++k) {
        if (gap_before(shown, k)) {
            out << column_gap;
            write_right(out, ellipsis, ellipsis.size(), p_.dim, p_);
        }
        out << column_gap;
        print_value(out, grid_.at(base + grid_.step(cols, shown[k])));
    }
    out << '\n';
}

/// One value, right-aligned; -inf and masked-out entries dim, nan red.
void tensor_printer::print_value(std::ostream& out, float v) const {
    char buf[number_buffer_size];
    const std::string_view text = format_number(v, format_, buf);
    std::string_view colour;
    if (std::isnan(v))
        colour = p_.red;
    else if (faint(v))
        colour = p_.dim;
    write_right(out, text, column_width_, colour, p_);
}

/// Entries that carry no information for attention: False in a mask, -inf,
/// and the fill value where the mask removed a key.
bool tensor_printer::faint(float v) const {
    if (format_.kind == number_kind::boolean) return v == 0.0f;
    if (v == -std::numeric_limits<float>::infinity()) return true;
    return faint_value_ != nullptr && v == *faint_value_;
}

/// "── 6 · scores ── every query against every key, per head", then the formula.
void print_stage_heading(std::ostream& out, const stage& s, const palette& p) {
    out << p.bold << "── " << s.info->step << " · " << s.name() << " ── " << s.info->title << p.reset
        << '\n';
    out << "   " << s.formula << '\n';
}

/// "   ! batch 1, query 3: no key may be attended": the warnings about this stage.
void print_stage_warnings(std::ostream& out, const trace& t, const stage& s, const palette& p) {
    for (const warning* w : t.warnings_of(s.name())) out << p.red << "   ! " << w->text << p.reset << '\n';
}

}  // namespace

void render_table(const trace& t, const render_options& options, std::ostream& out) {
    const palette p = make_palette(options.color);
    bool first = true;
    for (const stage& s : t.stages) {
        if (!options.shows(s.name())) continue;
        if (!first) out << '\n';  // one blank line between stages
        first = false;
        print_stage_heading(out, s, p);
        // In the masked stage the fill value marks the entries the mask removed.
        const float* faint_value = s.name() == "masked" ? &t.cfg.fill : nullptr;
        for (const tensor& x : s.tensors) tensor_printer(x, options, p, faint_value).print(out);
        print_stage_warnings(out, t, s, p);
    }
}

}  // namespace attn
