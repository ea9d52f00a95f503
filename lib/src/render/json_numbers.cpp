#include "attn/render/json_numbers.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace attn {
namespace {

/// The longest element text: "-1.17549435e-38" is 15 characters, "false" 5; then a ','.
constexpr std::size_t longest_element = 16;
/// About this many elements make one block of rows, formatted by one thread.
constexpr std::size_t block_elements = std::size_t{1} << 17;

inline char* put_text(char* p, const char* text, std::size_t n) {
    std::memcpy(p, text, n);
    return p + n;
}

inline char* put_element(char* p, float v, bool boolean) {
    if (boolean) return v != 0.0f ? put_text(p, "true", 4) : put_text(p, "false", 5);
    if (std::isnan(v)) return put_text(p, "\"nan\"", 5);
    if (std::isinf(v)) return v < 0 ? put_text(p, "\"-inf\"", 6) : put_text(p, "\"inf\"", 5);
    return std::to_chars(p, p + longest_element, v).ptr;  // the shortest text that reads back the same
}

/// Rows [first_row, end_row) of the [rows, width] row view of the tensor, appended to `text`.
/// Row r opens with ',' (r > 0) and a '[' for each outer axis whose index is 0 there, plus its
/// own; it closes with its own ']' and one for each outer axis at its last index.
class row_writer {
public:
    row_writer(const float* first, const tensor_shape& shape, const tensor_strides& strides, bool boolean)
        : first_(first), shape_(shape), strides_(strides), boolean_(boolean), outer_(shape.size() - 1) {}

    std::size_t rows() const {
        std::size_t n = 1;
        for (std::size_t a = 0; a < outer_; ++a) n *= shape_[a];
        return n;
    }
    std::size_t width() const { return shape_.back(); }

    void write(std::size_t first_row, std::size_t end_row, std::string& text) const {
        const std::size_t width = shape_.back();
        const std::ptrdiff_t step = strides_.back();
        text.resize((end_row - first_row) * (width * longest_element + 2 * outer_ + 3));
        char* p = text.data();
        std::vector<std::size_t> index(outer_);  // of first_row
        for (std::size_t a = outer_, r = first_row; a-- > 0;) {
            index[a] = r % shape_[a];
            r /= shape_[a];
        }
        for (std::size_t r = first_row; r < end_row; ++r) {
            if (r != 0) *p++ = ',';
            const float* row = first_;
            std::size_t opening = 0;
            bool leading = true;  // the axes after this one are all at index 0
            for (std::size_t a = outer_; a-- > 0;) {
                row += static_cast<std::ptrdiff_t>(index[a]) * strides_[a];
                leading = leading && index[a] == 0;
                if (leading) ++opening;
            }
            p = std::fill_n(p, opening + 1, '[');
            for (std::size_t j = 0; j < width; ++j) {
                if (j != 0) *p++ = ',';
                p = put_element(p, row[static_cast<std::ptrdiff_t>(j) * step], boolean_);
            }
            *p++ = ']';
            for (std::size_t a = outer_; a-- > 0;) {  // the next row's index, closing finished axes
                if (++index[a] < shape_[a]) break;
                index[a] = 0;
                *p++ = ']';
            }
        }
        text.resize(static_cast<std::size_t>(p - text.data()));
    }

private:
    const float* first_;
    const tensor_shape& shape_;
    const tensor_strides& strides_;
    bool boolean_;
    std::size_t outer_;  // the axes before the last
};

/// Tensors with no elements along some axis, and 0-d ones: element by element.
void write_axis(const float* first, const tensor_shape& shape, const tensor_strides& strides, bool boolean,
                std::size_t axis, std::ostream& out) {
    if (axis == shape.size()) {
        char text[longest_element];
        out.write(text, put_element(text, *first, boolean) - text);
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
    const std::size_t rows = writer.rows();
    const std::size_t rows_per_block = std::max<std::size_t>(1, block_elements / writer.width());
    const std::size_t blocks = (rows + rows_per_block - 1) / rows_per_block;
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, blocks));

    std::vector<std::string> texts(threads);
    for (std::size_t block = 0; block < blocks; block += threads) {  // `threads` blocks at a time
        const std::size_t round = std::min<std::size_t>(threads, blocks - block);
        const auto format = [&](std::size_t i) {
            const std::size_t begin = (block + i) * rows_per_block;
            writer.write(begin, std::min(rows, begin + rows_per_block), texts[i]);
        };
        std::vector<std::thread> helpers;
        for (std::size_t i = 1; i < round; ++i) helpers.emplace_back(format, i);
        format(0);
        for (std::thread& h : helpers) h.join();
        for (std::size_t i = 0; i < round; ++i) out.write(texts[i].data(), static_cast<std::streamsize>(texts[i].size()));
    }
}

}  // namespace attn
