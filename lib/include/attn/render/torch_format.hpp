#pragma once
// PyTorch's print rules (torch/_tensor_str.py, version 1.13) that the text formats
// share: which elements a summary keeps (get_summarized_data) and how each number
// of a tensor is written (_Formatter). render_table lays the numbers out in labelled
// slices, render_torch exactly as print(t) does; both choose them here.
#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "attn/render/render_options.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

// PyTorch's default print options (torch.set_printoptions).
inline constexpr std::size_t summarise_threshold = 1000;  // more elements than this are summarised

/// Whether print(t) summarises: more than 1000 elements, unless options.full
/// (PyTorch's profile="full", threshold=inf).
bool summarised(const tensor& t, const render_options& options);

/// True when entries were left out between shown[k - 1] and shown[k] (an ellipsis goes there).
bool gap_before(const std::vector<std::size_t>& shown, std::size_t k);

/// The printed elements of a tensor: per axis, the indices shown.
struct element_grid {
    const float* data = nullptr;
    std::vector<std::size_t> shape;
    std::vector<std::ptrdiff_t> strides;          // in elements, as xtensor stores them
    std::vector<std::vector<std::size_t>> shown;  // per axis, ascending
    /// `data` holds the shown indices of the leading axes only, one after another (a
    /// stage that came in rows, kept in the rows printed), row-major, whole along the last.
    bool packed = false;

    std::size_t rank() const { return shape.size(); }
    float at(std::ptrdiff_t offset) const { return data[offset]; }
    /// How far index `i` of `axis` (a shown one, when packed) lies from index 0, in elements.
    std::ptrdiff_t step(std::size_t axis, std::size_t i) const {
        if (packed && axis + 1 < rank())
            i = static_cast<std::size_t>(std::lower_bound(shown[axis].begin(), shown[axis].end(), i) - shown[axis].begin());
        return static_cast<std::ptrdiff_t>(i) * strides[axis];
    }
};

element_grid make_grid(const tensor& t, bool summarise);

/// Calls f(value) for every printed element, in row-major order (the grid must not be empty).
template <class F>
void for_each_shown(const element_grid& g, F&& f) {
    const std::size_t rank = g.rank();
    std::vector<std::size_t> pos(rank, 0);  // position within each axis' shown list
    for (;;) {
        std::ptrdiff_t offset = 0;
        for (std::size_t a = 0; a < rank; ++a) offset += g.step(a, g.shown[a][pos[a]]);
        f(g.at(offset));
        // Odometer: advance the last axis, carry into the ones before it.
        std::size_t a = rank;
        for (; a > 0; --a) {
            if (++pos[a - 1] < g.shown[a - 1].size()) break;
            pos[a - 1] = 0;
        }
        if (a == 0) return;
    }
}

/// How every number of one tensor is written: "0.5000", "1.", "1.0000e-03", "True".
enum class number_kind { fixed, integer, scientific, boolean };

/// PyTorch's _Formatter for one tensor.
struct number_format {
    number_kind kind = number_kind::fixed;
    int precision = 4;
    // _Formatter.max_width: every number is right-aligned to it. It is measured over the
    // finite nonzero printed values only (so "-inf" can be wider) and in the notation
    // chosen before options.notation overrides it, exactly as PyTorch does.
    std::size_t width = 1;
};

/// _Formatter(get_summarized_data(t)): over the finite nonzero values of the grid,
/// integers print as "1." (integer), and scientific notation is chosen when
/// max/min > 1000 or max > 1e8 or (unless all are integers) min < 1e-4.
/// options.notation on/off then forces it, except for a tensor without any finite
/// nonzero value, which PyTorch leaves as integers ("0.", "nan").
number_format choose_format(const tensor& t, const element_grid& g, const render_options& options);

/// Enough for "%.40e" or "%.40f" of any float (39 digits, sign, point, 40 decimals).
inline constexpr std::size_t number_buffer_size = 128;

/// `v` as PyTorch writes it (Python's '{:.4f}', '{:.4e}', '{:.0f}.', True/False,
/// nan, inf, -inf), unpadded; the text lives in `buf` or is a literal.
std::string_view format_number(float v, const number_format& f, char* buf);

}  // namespace attn
