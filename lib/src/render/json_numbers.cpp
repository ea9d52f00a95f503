#include "attn/render/json_numbers.hpp"

#include "attn/compute/threads.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <omp.h>

namespace attn {
namespace {

/// The longest element text: "-1.17549435e-38" is 15 characters, "false" 5; then a ','.
constexpr std::size_t longest_element = 16;
/// About this many elements make one block of rows, formatted by one thread.
constexpr std::size_t block_elements = std::size_t{1} << 17;

/// The room write_json_element needs at `p`.
constexpr std::size_t json_element_room = 20;

char* put_text(char* p, const char* text, std::size_t n) {
    std::memcpy(p, text, n);
    return p + n;
}

/// One element as the document writes it, at `p`; returns the end of its text.
char* write_json_element(char* p, float v, bool boolean) {
    if (boolean) return v != 0.0f ? put_text(p, "true", 4) : put_text(p, "false", 5);
    if (std::isnan(v)) return put_text(p, "\"nan\"", 5);
    if (std::isinf(v)) return v < 0 ? put_text(p, "\"-inf\"", 6) : put_text(p, "\"inf\"", 5);
    return std::to_chars(p, p + json_element_room, v).ptr;  // the shortest text that reads back the same
}

/// Rows [first_row, end_row) of the [rows, width] row view of the tensor, written into
/// `text`. Row r opens with ',' (r > 0) and a '[' for each outer axis whose index is 0
/// there, plus its own; it closes with its own ']' and one for each outer axis at its
/// last index: each row's text depends on r alone, so blocks of rows can be formatted
/// apart and in parallel.
class row_writer {
public:
    /// Element (i0, i1, ...) at first[i0*strides[0] + i1*strides[1] ...].
    row_writer(const float* first, const tensor_shape& shape, const tensor_strides& strides, bool boolean)
        : first_(first), shape_(shape), strides_(&strides), boolean_(boolean), outer_(shape.size() - 1) {}
    /// Only rows [given_first, ...) of a C-order tensor, `rows` holding them one after another.
    row_writer(const float* rows, std::size_t given_first, const tensor_shape& shape, bool boolean)
        : first_(rows), shape_(shape), boolean_(boolean), outer_(shape.size() - 1), given_first_(given_first),
          given_rows_(true) {}

    std::size_t rows() const {
        std::size_t n = 1;
        for (std::size_t a = 0; a < outer_; ++a) n *= shape_[a];
        return n;
    }
    std::size_t width() const { return shape_.back(); }

    void write(std::size_t first_row, std::size_t end_row, std::string& text) const {
        const std::size_t width = shape_.back();
        const std::ptrdiff_t step = given_rows_ ? 1 : strides_->back();
        text.resize((end_row - first_row) * (width * longest_element + 2 * outer_ + 3) + json_element_room);
        char* p = text.data();
        std::vector<std::size_t> index(outer_);  // of first_row
        for (std::size_t a = outer_, r = first_row; a-- > 0;) {
            index[a] = r % shape_[a];
            r /= shape_[a];
        }
        for (std::size_t r = first_row; r < end_row; ++r) {
            if (r != 0) *p++ = ',';
            const float* row = given_rows_ ? first_ + (r - given_first_) * width : first_;
            std::size_t opening = 0;
            bool leading = true;  // the axes after this one are all at index 0
            for (std::size_t a = outer_; a-- > 0;) {
                if (!given_rows_) row += static_cast<std::ptrdiff_t>(index[a]) * (*strides_)[a];
                leading = leading && index[a] == 0;
                if (leading) ++opening;
            }
            p = std::fill_n(p, opening + 1, '[');
            p = put_row(p, row, width, step);
            p[-1] = ']';  // over the last ','
            for (std::size_t a = outer_; a-- > 0;) {  // the next row's index, closing finished axes
                if (++index[a] < shape_[a]) break;
                index[a] = 0;
                *p++ = ']';
            }
        }
        text.resize(static_cast<std::size_t>(p - text.data()));
    }

private:
    /// The row's `width` (> 0) elements, each followed by ','.
    char* put_row(char* p, const float* row, std::size_t width, std::ptrdiff_t step) const {
        for (std::size_t j = 0; j < width; ++j) {
            p = write_json_element(p, row[static_cast<std::ptrdiff_t>(j) * step], boolean_);
            *p++ = ',';
        }
        return p;
    }

    const float* first_;
    const tensor_shape& shape_;
    const tensor_strides* strides_ = nullptr;  // null: given rows
    bool boolean_;
    std::size_t outer_;  // the axes before the last
    std::size_t given_first_ = 0;
    bool given_rows_ = false;
};

/// Rows [first_row, end_row) through `writer`, in blocks of rows, on `threads` threads
/// (OpenMP's, which attn's loops use too). Thread t formats blocks t, t + threads, ...
/// into its own buffer and writes it when the block before has been written (an
/// ordered loop), then formats its next block: while one thread writes, the others
/// format. The bytes are those of one thread writing every block in turn.
void write_rows(const row_writer& writer, std::size_t first_row, std::size_t end_row, std::ostream& out,
                unsigned threads) {
    const std::size_t rows_per_block = std::max<std::size_t>(1, block_elements / writer.width());
    const auto blocks = static_cast<std::ptrdiff_t>((end_row - first_row + rows_per_block - 1) / rows_per_block);
    if (threads == 0) threads = static_cast<unsigned>(thread_count());
    threads = static_cast<unsigned>(std::clamp<std::ptrdiff_t>(blocks, 1, threads));
    std::vector<std::string> texts(threads);  // one per thread
    std::exception_ptr failed;                // the first error (a write_error, bad_alloc): no more blocks
    std::atomic<bool> stop{false};
#pragma omp parallel for ordered num_threads(threads) schedule(static, 1) if (threads > 1)
    for (std::ptrdiff_t block = 0; block < blocks; ++block) {
        std::string& text = texts[static_cast<std::size_t>(omp_get_thread_num())];
        const std::size_t begin = first_row + static_cast<std::size_t>(block) * rows_per_block;
        std::exception_ptr caught;  // an exception may not leave an OpenMP loop
        try {
            if (!stop) writer.write(begin, std::min(end_row, begin + rows_per_block), text);
        } catch (...) {
            caught = std::current_exception();
        }
#pragma omp ordered
        {
            if (!failed) failed = caught;
            try {
                if (!failed) out.write(text.data(), static_cast<std::streamsize>(text.size()));
            } catch (...) {
                failed = std::current_exception();
            }
            if (failed) stop = true;
        }
    }
    if (failed) std::rethrow_exception(failed);
}

/// Tensors with no elements along some axis, and 0-d ones: element by element.
void write_axis(const float* first, const tensor_shape& shape, const tensor_strides& strides, bool boolean,
                std::size_t axis, std::ostream& out) {
    if (axis == shape.size()) {
        char text[json_element_room];
        out.write(text, write_json_element(text, *first, boolean) - text);
        return;
    }
    out.put('[');
    for (std::size_t i = 0; i < shape[axis]; ++i) {
        if (i != 0) out.put(',');
        write_axis(first + static_cast<std::ptrdiff_t>(i) * strides[axis], shape, strides, boolean, axis + 1, out);
    }
    out.put(']');
}

}  // namespace

void write_json_data(const float* first, const tensor_shape& shape, const tensor_strides& strides, bool boolean,
                     std::ostream& out, unsigned threads) {
    if (shape.empty() || std::find(shape.begin(), shape.end(), 0) != shape.end()) {
        write_axis(first, shape, strides, boolean, 0, out);
        return;
    }
    const row_writer writer(first, shape, strides, boolean);
    write_rows(writer, 0, writer.rows(), out, threads);
}

void write_json_rows(const float* rows, std::size_t first_row, std::size_t count, const tensor_shape& shape,
                     bool boolean, std::ostream& out, unsigned threads) {
    if (count == 0) return;
    const row_writer writer(rows, first_row, shape, boolean);
    write_rows(writer, first_row, first_row + count, out, threads);
}

}  // namespace attn
