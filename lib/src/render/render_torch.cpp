// --format torch: print(t) of PyTorch 1.13, character for character.
//
// The layout follows torch/_tensor_str.py function by function:
//   _tensor_str_with_formatter -> print_block: one "[...]" per leading axis, slices
//       joined by "," and dim-1 newlines (so 3-D and up get blank lines between
//       blocks), each nesting level indented one more column;
//   _vector_str -> print_vector: the last axis, as many numbers per line as fit in 80
//       columns at the current indentation, each right-aligned to the formatter's width;
//   summaries put "..." in place of the left-out slices and " ..." in place of the
//       left-out numbers of a row (it counts as one number when lines are filled).
// The numbers themselves (_Formatter) come from torch_format.
#include "attn/render/render_torch.hpp"

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string_view>

#include "attn/render/render_stats.hpp"
#include "attn/render/selection.hpp"
#include "attn/render/torch_format.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/index_text.hpp"

namespace attn {

namespace {

constexpr std::string_view prefix = "tensor(";  // its length is the first indentation
constexpr std::ptrdiff_t line_width = 80;       // PyTorch's default linewidth
constexpr std::string_view row_ellipsis = " ...";
constexpr std::string_view slice_ellipsis = "...";

void write_spaces(std::ostream& out, std::size_t n) {
    for (; n > 0; --n) out.put(' ');
}

/// Prints one non-empty tensor as "tensor(...)".
class torch_printer {
public:
    torch_printer(const tensor& t, element_grid grid, const render_options& options, std::ostream& out);
    void print();

private:
    void print_block(std::size_t axis, std::ptrdiff_t base, std::size_t indent);
    void print_separator(std::size_t dims_left, std::size_t indent);
    void print_vector(std::ptrdiff_t base, std::size_t indent);
    void print_number(float v);

    std::ostream& out_;
    element_grid grid_;
    number_format format_;
};

torch_printer::torch_printer(const tensor& t, element_grid grid, const render_options& options, std::ostream& out)
    : out_(out), grid_(std::move(grid)), format_(choose_format(t, grid_, options)) {}

void torch_printer::print() {
    out_ << prefix;
    if (grid_.rank() == 0)
        print_number(grid_.at(0));  // _scalar_str
    else
        print_block(0, 0, prefix.size());
    out_ << ')';
}

/// The sub-tensor from `axis` on, starting at element offset `base`, as "[...]".
void torch_printer::print_block(std::size_t axis, std::ptrdiff_t base, std::size_t indent) {
    if (axis + 1 == grid_.rank()) {
        print_vector(base, indent);
        return;
    }
    const std::size_t dims_left = grid_.rank() - axis;  // PyTorch's self.dim() at this level
    const auto& shown = grid_.shown[axis];
    out_ << '[';
    for (std::size_t k = 0; k < shown.size(); ++k) {
        if (k > 0) print_separator(dims_left, indent);
        if (gap_before(shown, k)) {
            out_ << slice_ellipsis;
            print_separator(dims_left, indent);
        }
        print_block(axis + 1, base + grid_.step(axis, shown[k]), indent + 1);
    }
    out_ << ']';
}

/// Between two slices of a `dims_left`-D block: ",", dims_left - 1 newlines, indentation.
void torch_printer::print_separator(std::size_t dims_left, std::size_t indent) {
    out_ << ',';
    for (std::size_t i = 1; i < dims_left; ++i) out_ << '\n';
    write_spaces(out_, indent + 1);
}

/// One row along the last axis, wrapped so each line holds `per_line` entries.
void torch_printer::print_vector(std::ptrdiff_t base, std::size_t indent) {
    // Each entry takes the formatter's width plus ", "; PyTorch floors, and keeps at least one.
    const auto entry = static_cast<std::ptrdiff_t>(format_.width) + 2;
    const std::ptrdiff_t fit = (line_width - static_cast<std::ptrdiff_t>(indent)) / entry;
    const std::size_t per_line = static_cast<std::size_t>(std::max<std::ptrdiff_t>(1, fit));
    std::size_t on_line = 0;
    auto next_entry = [&] {
        if (on_line == per_line) {
            out_ << ",\n";
            write_spaces(out_, indent + 1);
            on_line = 0;
        } else if (on_line > 0) {
            out_ << ", ";
        }
        ++on_line;
    };
    const std::size_t last = grid_.rank() - 1;
    const auto& shown = grid_.shown[last];
    out_ << '[';
    for (std::size_t k = 0; k < shown.size(); ++k) {
        if (gap_before(shown, k)) {
            next_entry();
            out_ << row_ellipsis;
        }
        next_entry();
        print_number(grid_.at(base + grid_.step(last, shown[k])));
    }
    out_ << ']';
}

/// One number, right-aligned to the formatter's width (wider text, such as -inf, is not cut).
void torch_printer::print_number(float v) {
    char buf[number_buffer_size];
    const std::string_view text = format_number(v, format_, buf);
    if (text.size() < format_.width) write_spaces(out_, format_.width - text.size());
    out_ << text;
}

/// An empty tensor: "tensor([])", with its shape unless it is 1-D and, since no
/// element shows it, its dtype unless float32 ("tensor([], size=(2, 0))").
void write_empty(const tensor_shape& shape, element_type type, std::ostream& out) {
    out << prefix << "[]";
    if (shape.size() != 1) out << ", size=" << python_tuple(shape);
    if (type == element_type::boolean) out << ", dtype=torch.bool";
    out << ')';
}

/// print(t) of `t` read through `grid`, or of the empty tensor of `shape`.
void write_torch(const tensor& t, const tensor_shape& shape, element_grid grid, const render_options& options,
                 std::ostream& out) {
    if (t.values.size() == 0)
        write_empty(shape, t.type, out);
    else
        torch_printer(t, std::move(grid), options, out).print();
}

}  // namespace

std::string format_torch(const tensor& t, const render_options& options) {
    std::ostringstream out;
    write_torch(t, {t.values.shape().begin(), t.values.shape().end()}, make_grid(t, summarised(t, options)), options,
                out);
    return out.str();
}

torch_stream::torch_stream(const render_options& options, std::ostream& out) : printing_sink(options), out_(out) {}

void torch_stream::print(const trace&, const stage& s, const std::vector<element_grid>& grids) {
    for (std::size_t k = 0; k < s.tensors.size(); ++k) {
        // With a view, print(t[1:2, 2:3]): the selected part (its grid's), under a header naming it.
        const tensor& x = s.tensors[k];
        const tensor_selection selection = select_in(x, options_);
        out_ << "# " << s.name() << '.' << x.name << torch_index(selection) << '\n';
        write_torch(x, selection.shape, grids[k], options_, out_);
        out_ << '\n';
        if (options_.stats) out_ << "# " << stats_line(stats_of(k), s.name(), options_.precision) << '\n';
    }
}

void render_torch(const trace& t, const render_options& options, std::ostream& out) {
    torch_stream(options, out).print_all(t);
}

}  // namespace attn
