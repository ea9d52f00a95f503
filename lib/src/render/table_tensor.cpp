// --format table, layout and labels: one tensor as labelled 2-D slices over its
// last two axes, "scores[batch=0, head=1]" above each, "key 0 ..." over the
// columns and "query 0 ..." before the rows. A tensor of more than 1000 elements
// keeps the first and last 3 entries of every axis longer than 6, as PyTorch's
// print does (torch_format's shown_indices). A [B,S,H,dk] tensor (view, merge) is one
// [S, H·dk] table per batch item instead: the heads' columns side by side, "│" between
// heads, "head 0 ..." above them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "attn/render/render_stats.hpp"

#include "attn/render/table_parts.hpp"

namespace attn::table {

namespace {

constexpr std::string_view column_gap = "  ";
constexpr std::string_view ellipsis = "...";

std::string plain_index_label(std::string_view dim, std::size_t index) {
    return std::string(dim) + " " + std::to_string(index);
}

/// A boolean tensor with a "head" axis of size 1 before its last two: a mask
/// broadcast over the heads ([B,1,Sq,Sk]), the same for every head.
bool broadcast_over_heads(const tensor& t) {
    if (t.type != element_type::boolean) return false;
    const std::size_t rank = t.values.dimension();
    for (std::size_t a = 0; a + 2 < rank && a < t.dims.size(); ++a)
        if (t.dims[a] == "head" && t.values.shape()[a] == 1) return true;
    return false;
}

/// [B,S,H,dk] (the view and merge stages: a position's heads next to each other): printed
/// as one [S, H·dk] table per batch item rather than a [H,dk] table per position.
bool heads_side_by_side(const tensor& t) {
    return t.values.dimension() == 4 && t.dims.size() == 4 && t.dims[2] == "head" && t.dims[3] == "head_dim";
}

constexpr std::string_view head_separator = " │";

/// The cells of one head's columns: the head_dim indices printed, and a "..." for each
/// run of them a summary leaves out.
std::size_t head_cells(const std::vector<std::size_t>& shown) {
    std::size_t cells = shown.size();
    for (std::size_t k = 0; k < shown.size(); ++k) cells += gap_before(shown, k) ? 1 : 0;
    return cells;
}

/// Across the printed columns `shown`: cell(index) for each after the column gap, "..."
/// before one that follows columns a summary left out; then the line's end.
template <class Cell>
void across_columns(std::ostream& out, const std::vector<std::size_t>& shown, const palette& p, Cell&& cell) {
    for (std::size_t k = 0; k < shown.size(); ++k) {
        if (gap_before(shown, k)) {
            out << column_gap;
            write_right(out, ellipsis, ellipsis.size(), p.dim, p);
        }
        out << column_gap;
        cell(shown[k]);
    }
    out << '\n';
}

}  // namespace

void write_spaces(std::ostream& out, std::size_t n) {
    static constexpr char spaces[] = "                                ";
    while (n > 0) {
        const std::size_t k = std::min(n, sizeof spaces - 1);
        out.write(spaces, static_cast<std::streamsize>(k));
        n -= k;
    }
}

void write_right(std::ostream& out, std::string_view text, std::size_t width, std::string_view colour,
                 const palette& p) {
    const std::size_t w = text_width(text);
    if (w < width) write_spaces(out, width - w);
    out << colour << text;
    if (!colour.empty()) out << p.reset;
}

void write_left(std::ostream& out, std::string_view text, std::size_t width, std::string_view colour,
                const palette& p) {
    out << colour << text;
    if (!colour.empty()) out << p.reset;
    const std::size_t w = text_width(text);
    if (w < width) write_spaces(out, width - w);
}

std::size_t text_width(std::string_view text) {
    // Count the bytes that start a UTF-8 code point (not 10xxxxxx).
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

tensor_printer::tensor_printer(const tensor& t, element_grid grid, const stage_numbers& numbers,
                               const render_options& options, const palette& p, const std::vector<std::string>* tokens)
    : t_(t),
      p_(p),
      numbers_(numbers),
      selection_(select_in(t, options)),
      summarise_(summarised(selection_, options)),
      grid_(std::move(grid)),
      format_(numbers.format),
      broadcast_head_(broadcast_over_heads(t)),
      side_by_side_(heads_side_by_side(t)),
      tokens_(tokens),
      precision_(options.precision) {
    if (t.type == element_type::boolean) format_ = number_format{number_kind::boolean, 0, 1};
    if (t.values.size() == 0) return;  // nothing to measure or print
    measure();
}

/// The dimension's name, or "dim N" when the trace gives none for it.
std::string tensor_printer::dim_name(std::size_t axis) const {
    if (axis < t_.dims.size()) return t_.dims[axis];
    return "dim" + std::to_string(axis);
}

std::string tensor_printer::index_label(std::string_view dim, std::size_t index) const {
    if (token_axis(dim) && tokens_ && index < tokens_->size()) return std::string(dim) + " " + (*tokens_)[index];
    return plain_index_label(dim, index);
}

/// Whether slice labels name this leading axis: not a head axis a mask is broadcast over.
bool tensor_printer::labelled(std::size_t axis) const {
    return !(broadcast_head_ && dim_name(axis) == "head" && grid_.shape[axis] == 1);
}

/// Widths: every value and column label fits the value columns, every row label
/// fits the label column.
void tensor_printer::measure() {
    char buf[number_buffer_size];
    std::size_t& value = widths_.value;
    for_each_shown(grid_, [&](float v) { value = std::max(value, text_width(value_text(v, format_, numbers_, buf))); });
    if (rank() == 0) return;
    value = std::max(value, ellipsis.size());
    if (side_by_side_) {
        measure_side_by_side();
        return;
    }
    const std::size_t cols = rank() - 1;
    for (std::size_t c : grid_.shown[cols]) value = std::max(value, text_width(index_label(dim_name(cols), c)));
    if (rank() == 1) {
        widths_.label = t_.name.size();  // a 1-D tensor's only row is labelled with its name
        return;
    }
    widths_.label = ellipsis.size();
    for (std::size_t r : grid_.shown[rank() - 2])
        widths_.label = std::max(widths_.label, text_width(index_label(dim_name(rank() - 2), r)));
}

/// Side by side: rows labelled "seq 3", columns by their head_dim index under a
/// "head_dim" label, and each head's columns at least as wide as "head 3".
void tensor_printer::measure_side_by_side() {
    std::size_t& value = widths_.value;
    for (std::size_t e : grid_.shown[3]) value = std::max(value, std::to_string(e).size());
    widths_.label = std::max(ellipsis.size(), dim_name(3).size());
    for (std::size_t r : grid_.shown[1]) widths_.label = std::max(widths_.label, text_width(index_label(dim_name(1), r)));
    const std::size_t cells = head_cells(grid_.shown[3]);
    for (std::size_t h : grid_.shown[2]) {
        const std::size_t title = index_label(dim_name(2), h).size() + 1;  // " head 3"
        while (cells * (column_gap.size() + value) < title) ++value;
    }
}

void tensor_printer::print(std::ostream& out, column_widths w) {
    used_ = w;
    print_header(out);
    if (t_.values.size() == 0) return;
    if (rank() == 0) {
        print_value(out, grid_.at(0), 0);  // a lone value: no column to line up with
        out << '\n';
    } else if (rank() == 1) {
        print_column_labels(out);
        print_row(out, t_.name, 0);
    } else if (side_by_side_) {
        print_side_by_side(out);
    } else {
        std::vector<std::size_t> index;
        print_leading(out, 0, index, 0);
    }
}

/// Per batch item: "q[batch=0]", a line naming the heads, a line of head_dim indices, then
/// a row per position with each head's values between "│" separators.
void tensor_printer::print_side_by_side(std::ostream& out) const {
    const auto& batches = grid_.shown[0];
    for (std::size_t k = 0; k < batches.size(); ++k) {
        if (gap_before(batches, k))
            out << p_.dim << "... (" << batches[k] - batches[k - 1] - 1 << " more batch items: " << dim_name(0) << '='
                << batches[k - 1] + 1 << ".." << batches[k] - 1 << ") ..." << p_.reset << '\n';
        out << p_.dim << t_.name << '[' << dim_name(0) << '=' << batches[k] << ']' << p_.reset << '\n';
        const std::ptrdiff_t base = grid_.step(0, batches[k]);
        write_spaces(out, used_.label);
        across_heads(out, [&](std::size_t h, std::size_t width) {
            write_left(out, " " + index_label(dim_name(2), h), width, p_.dim, p_);
        });
        write_left(out, dim_name(3), used_.label, p_.dim, p_);
        across_heads(out, [&](std::size_t, std::size_t) {
            across_head_dims(out, [&](std::size_t e) { write_right(out, std::to_string(e), used_.value, p_.dim, p_); });
        });
        const auto& rows = grid_.shown[1];
        for (std::size_t r = 0; r < rows.size(); ++r) {
            if (gap_before(rows, r)) {
                write_left(out, ellipsis, 0, p_.dim, p_);
                out << '\n';
            }
            const std::ptrdiff_t row = base + grid_.step(1, rows[r]);
            write_left(out, index_label(dim_name(1), rows[r]), used_.label, p_.dim, p_);
            across_heads(out, [&](std::size_t h, std::size_t) {
                const std::ptrdiff_t head = row + grid_.step(2, h);
                across_head_dims(out, [&](std::size_t e) { print_value(out, grid_.at(head + grid_.step(3, e)), used_.value); });
            });
        }
    }
}

/// For each printed head: the separator, then cell(head, width of a head's columns, or 0 for
/// the last head, which needs no padding); a
/// "..." group where a summary leaves heads out; then the line's end.
template <class Cell>
void tensor_printer::across_heads(std::ostream& out, Cell&& cell) const {
    const auto& heads = grid_.shown[2];
    const std::size_t cells = head_cells(grid_.shown[3]);
    for (std::size_t k = 0; k < heads.size(); ++k) {
        if (gap_before(heads, k)) {
            out << p_.dim << head_separator << p_.reset << column_gap;
            write_right(out, ellipsis, ellipsis.size(), p_.dim, p_);
        }
        out << p_.dim << head_separator << p_.reset;
        cell(heads[k], k + 1 < heads.size() ? cells * (column_gap.size() + used_.value) : 0);  // the last unpadded
    }
    out << '\n';
}

/// The printed head_dim columns of one head: cell(index) after the column gap, "..." where
/// a summary leaves some out.
template <class Cell>
void tensor_printer::across_head_dims(std::ostream& out, Cell&& cell) const {
    const auto& dims = grid_.shown[3];
    for (std::size_t k = 0; k < dims.size(); ++k) {
        out << column_gap;
        if (gap_before(dims, k)) {
            write_right(out, ellipsis, used_.value, p_.dim, p_);
            out << column_gap;
        }
        cell(dims[k]);
    }
}

/// "scores [2,4,5,5] (batch, head, query, key)", its memory layout, then ", only head=1"
/// when a view shows part of it, and a note when summarised.
void tensor_printer::print_header(std::ostream& out) const {
    out << t_.name << " [";
    for (std::size_t a = 0; a < rank(); ++a) out << (a ? "," : "") << t_.values.shape()[a];
    out << ']';
    if (rank() > 0) {
        out << ' ' << p_.dim << '(';
        for (std::size_t a = 0; a < rank(); ++a) out << (a ? ", " : "") << dim_name(a);
        out << ')' << p_.reset;
    }
    print_layout(out);
    for (std::size_t k = 0; k < selection_.picks.size(); ++k)
        out << (k == 0 ? ", only " : ", ") << selection_.picks[k].dim << '=' << selection_.picks[k].index;
    if (summarise_) out << " (summarised: --full prints all " << selection_.size() << " values)";
    out << '\n';
}

/// " strides [32,4,8,1], not contiguous: a view of projections.q": how the tensor lies
/// in memory, as PyTorch's t.stride() and t.is_contiguous() say, and whose storage it reads.
void tensor_printer::print_layout(std::ostream& out) const {
    out << ' ' << p_.dim << "strides [";
    for (std::size_t a = 0; a < t_.strides.size(); ++a) out << (a ? "," : "") << t_.strides[a];
    out << "], " << (t_.contiguous() ? "contiguous" : "not contiguous");
    if (t_.is_view()) out << ": a view of " << t_.view_of;
    out << p_.reset;
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
void tensor_printer::print_skipped(std::ostream& out, std::size_t axis, const std::vector<std::size_t>& index,
                                   std::size_t first, std::size_t last) const {
    std::size_t slices = last - first + 1;
    for (std::size_t a = axis + 1; a + 2 < rank(); ++a) slices *= grid_.shape[a];
    out << p_.dim << "... (" << slices << " more slices: ";
    for (std::size_t a = 0; a < index.size(); ++a)
        if (labelled(a)) out << dim_name(a) << '=' << index[a] << ", ";
    out << dim_name(axis) << '=' << first << ".." << last << ") ..." << p_.reset << '\n';
}

/// One 2-D slice: "scores[batch=0, head=1]" (for 3-D and up), column labels, rows.
/// A mask broadcast over the heads says so instead of "head=0".
void tensor_printer::print_slice(std::ostream& out, const std::vector<std::size_t>& index,
                                 std::ptrdiff_t base) const {
    if (!index.empty()) {
        out << p_.dim << t_.name;
        bool first = true;
        for (std::size_t a = 0; a < index.size(); ++a) {
            if (!labelled(a)) continue;
            out << (first ? "[" : ", ") << dim_name(a) << '=' << index[a];
            first = false;
        }
        if (!first) out << ']';
        if (broadcast_head_) out << " (the same for every head)";
        out << p_.reset << '\n';
    }
    print_column_labels(out);
    const std::size_t rows = rank() - 2;
    const auto& shown = grid_.shown[rows];
    for (std::size_t k = 0; k < shown.size(); ++k) {
        if (gap_before(shown, k)) {
            write_left(out, ellipsis, 0, p_.dim, p_);
            out << '\n';
        }
        print_row(out, index_label(dim_name(rows), shown[k]), base + grid_.step(rows, shown[k]), &index, shown[k]);
    }
}

/// "          key 0    key 1 ...": one label per printed column.
void tensor_printer::print_column_labels(std::ostream& out) const {
    const std::size_t cols = rank() - 1;
    write_spaces(out, used_.label);
    across_columns(out, grid_.shown[cols], p_,
                   [&](std::size_t c) { write_right(out, index_label(dim_name(cols), c), used_.value, p_.dim, p_); });
}

/// One row of values along the last axis, starting at element offset `base`.
/// With row stats (--stats on weights), `index` (the leading axes') and `row` say which row
/// it is, and its entropy and largest weight follow the values.
void tensor_printer::print_row(std::ostream& out, std::string_view label, std::ptrdiff_t base,
                               const std::vector<std::size_t>* index, std::size_t row) const {
    const std::size_t cols = rank() - 1;
    write_left(out, label, used_.label, p_.dim, p_);
    const auto values = [&](std::ostream& to) {
        across_columns(to, grid_.shown[cols], p_,
                       [&](std::size_t c) { print_value(to, grid_.at(base + grid_.step(cols, c)), used_.value); });
    };
    if (row_stats_ == nullptr || index == nullptr) {
        values(out);
        return;
    }
    std::ostringstream line;  // across_columns ends the line: the row's stats go before its end
    values(line);
    std::string text = line.str();
    text.pop_back();
    std::size_t flat = 0;  // the row over the leading axes of the whole tensor, row-major
    for (std::size_t a = 0; a < index->size(); ++a) flat = flat * t_.values.shape()[a] + (*index)[a];
    flat = flat * t_.values.shape()[rank() - 2] + row;
    out << text << "   " << p_.dim << row_stats_text(*row_stats_, flat, precision_, tokens_) << p_.reset << '\n';
}

std::string_view value_text(float v, const number_format& f, const stage_numbers& n, char* buf) {
    if (f.kind != number_kind::boolean && n.fill_as_text && v == *n.fill) return n.fill_text;
    return format_number(v, f, buf);
}

bool faint_value(float v, const number_format& f, const stage_numbers& n) {
    if (f.kind == number_kind::boolean) return v == 0.0f;
    if (v == -std::numeric_limits<float>::infinity()) return true;
    return n.fill && v == *n.fill;
}

/// One value, right-aligned in `width`; -inf and masked-out entries dim, nan red.
void tensor_printer::print_value(std::ostream& out, float v, std::size_t width) const {
    char buf[number_buffer_size];
    std::string_view colour;
    if (std::isnan(v))
        colour = p_.red;
    else if (faint_value(v, format_, numbers_))
        colour = p_.dim;
    write_right(out, value_text(v, format_, numbers_, buf), width, colour, p_);
}

}  // namespace attn::table
