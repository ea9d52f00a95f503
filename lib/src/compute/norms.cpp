// The normalisations (norms.hpp) in PyTorch 1.13's order of operations, as Debian's torch
// runs them on a CPU with AVX2 (its AVX2 kernels: 8 float lanes).
//
// LayerNorm (aten/src/ATen/native/cpu/layer_norm_kernel.cpp, RowwiseMoments in
// aten/src/ATen/native/cpu/moments_utils.h): the row's first W/8·8 values are 8 interleaved
// lanes (lane l: x[l], x[8+l], ...). Each chunk of 16 vectors runs Welford's update per lane
// (m1 += δ·(1/k), m2 += δ·(x - m1)); each chunk's moments merge into level 0 of a binary
// cascade (after every 2^j chunks level j-1 merges into level j), the levels then into level 0. The last W mod 8 values
// run a scalar Welford (m1 += δ/k), into which the 8 lanes merge in order. All of it plain
// multiplies and adds. Then rstd = 1/sqrt(m2/W + eps), shift = -rstd·mean, and
// y = fma(fma(x, rstd, shift), weight, bias): these two are fused, the moments are not
// (docs/kernels.md, "Norms").
// RMSNorm (Hugging Face's expression, one aten kernel per op): x·x; mean() is sum() then a
// division by W, in sum's order, cascade_sum's inner reduction (aten/src/ATen/native/cpu/
// SumKernel.cpp): 4 vector accumulators over the W/8 vectors, flushed into a cascade of
// levels every 16 steps, the left-over vectors added to the first, the four summed, then the
// W mod 8 last values and the 8 lanes in order (fewer than 8 values: 4 scalar accumulators the
// same way); then r = 1/sqrt(mean + eps) and weight·(x·r). Rows do not depend on each other
// ([B,S,D] or [rows, D] give the same bits), except a lone row of 32768 values or more
// (docs/kernels.md). The fixtures are tests/reference/make_norm_fixtures.py's.
#include "attn/compute/norms.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

namespace attn {
namespace {

constexpr std::size_t norm_lanes = 8;  // Vectorized<float> on AVX2
using norm_lane_floats = std::array<float, norm_lanes>;

/// ceil(log2 x), 1 for x <= 2 (aten's utils::CeilLog2).
std::size_t norms_ceil_log2(std::size_t x) {
    if (x <= 2) return 1;
    std::size_t bits = 0;
    for (std::size_t v = x - 1; v != 0; v >>= 1) ++bits;
    return bits;
}

// --- LayerNorm's moments -------------------------------------------------------------------

/// Welford's count, mean and sum of squared deviations, per lane.
struct norm_lane_moments {
    std::size_t count = 0;
    norm_lane_floats m1{}, m2{};
};

/// Merges `add` into `into` (aten's AddMomentsVec): the mean moves by c·δ, c = n_add/n.
[[gnu::always_inline]] inline void merge_lane_moments(const norm_lane_moments& add, norm_lane_moments& into) {
    const std::size_t n = into.count + add.count;
    const float c = n == 0 ? 0.0f : static_cast<float>(add.count) / static_cast<float>(n);
    const float m0 = static_cast<float>(into.count);
    for (std::size_t l = 0; l < norm_lanes; ++l) {
        const float delta = add.m1[l] - into.m1[l];
        into.m1[l] += c * delta;
        into.m2[l] += add.m2[l] + delta * delta * c * m0;
    }
    into.count = n;
}

/// The row's mean and biased variance as RowwiseMoments computes them. `stack`: room for
/// the cascade of chunks' moments.
[[gnu::always_inline]] inline std::pair<float, float> layer_norm_moments(const float* x, std::size_t width,
                                                                         std::vector<norm_lane_moments>& stack) {
    constexpr std::size_t chunk = 16;
    const std::size_t vectors = width / norm_lanes;
    const std::size_t chunks = (vectors + chunk - 1) / chunk;
    const std::size_t depth = norms_ceil_log2(chunks);
    stack.assign(depth, norm_lane_moments{});

    for (std::size_t i = 0; i < chunks; ++i) {
        norm_lane_moments part;
        part.count = std::min(chunk, vectors - i * chunk);
        for (std::size_t j = 0; j < part.count; ++j) {
            const float* v = x + (i * chunk + j) * norm_lanes;
            const float inverse = 1.0f / static_cast<float>(j + 1);
            for (std::size_t l = 0; l < norm_lanes; ++l) {
                const float delta = v[l] - part.m1[l];
                part.m1[l] += delta * inverse;
                part.m2[l] += delta * (v[l] - part.m1[l]);
            }
        }
        merge_lane_moments(part, stack[0]);
        std::size_t mask = i + 1;
        for (std::size_t j = 1; j < depth && (mask & 1) == 0; ++j, mask >>= 1) {
            merge_lane_moments(stack[j - 1], stack[j]);
            stack[j - 1] = norm_lane_moments{};
        }
    }
    for (std::size_t j = 1; j < depth; ++j) merge_lane_moments(stack[j], stack[0]);

    std::size_t m0 = 0;  // the last width mod 8 values, one at a time
    float m1 = 0.0f, m2 = 0.0f;
    for (std::size_t k = vectors * norm_lanes; k < width; ++k) {
        const float delta = x[k] - m1;
        ++m0;
        m1 += delta / static_cast<float>(m0);
        m2 += delta * (x[k] - m1);
    }
    for (std::size_t l = 0; l < norm_lanes; ++l) {  // then each lane's `vectors` values (AddMoments)
        const std::size_t n = m0 + vectors;
        const float c = n == 0 ? 0.0f : static_cast<float>(vectors) / static_cast<float>(n);
        const float delta = stack[0].m1[l] - m1;
        m1 += c * delta;
        m2 += stack[0].m2[l] + delta * delta * c * static_cast<float>(m0);
        m0 = n;
    }
    return {m1, m2 / static_cast<float>(width)};
}

// --- RMSNorm's sum -------------------------------------------------------------------------

/// What cascade_sum adds: floats, or 8 lanes of them.
template <typename T>
[[gnu::always_inline]] inline T norms_plus(const T& a, const T& b) {
    if constexpr (std::is_same_v<T, float>) {
        return a + b;
    } else {
        T s;
        for (std::size_t l = 0; l < norm_lanes; ++l) s[l] = a[l] + b[l];
        return s;
    }
}

/// aten's multi_row_sum with 4 columns: column k sums item(4i + k) over i < size, each
/// accumulator flushed into a cascade of 4 levels every 2^level_power items.
template <typename T, typename Item>
[[gnu::always_inline]] inline std::array<T, 4> norms_multi_row_sum(std::size_t size, const Item& item) {
    constexpr std::size_t levels = 4;
    const std::size_t level_power = std::max<std::size_t>(4, norms_ceil_log2(size) / levels);
    const std::size_t level_step = std::size_t(1) << level_power;
    const std::size_t level_mask = level_step - 1;
    std::array<std::array<T, 4>, levels> acc{};

    std::size_t i = 0;
    while (i + level_step <= size) {
        for (std::size_t j = 0; j < level_step; ++j, ++i)
            for (std::size_t k = 0; k < 4; ++k) acc[0][k] = norms_plus(acc[0][k], item(4 * i + k));
        for (std::size_t j = 1; j < levels; ++j) {
            for (std::size_t k = 0; k < 4; ++k) {
                acc[j][k] = norms_plus(acc[j][k], acc[j - 1][k]);
                acc[j - 1][k] = T{};
            }
            if ((i & (level_mask << (j * level_power))) != 0) break;
        }
    }
    for (; i < size; ++i)
        for (std::size_t k = 0; k < 4; ++k) acc[0][k] = norms_plus(acc[0][k], item(4 * i + k));
    for (std::size_t j = 1; j < levels; ++j)
        for (std::size_t k = 0; k < 4; ++k) acc[0][k] = norms_plus(acc[0][k], acc[j][k]);
    return acc[0];
}

/// aten's row_sum: 4 accumulators over `size` items, the last size mod 4 into the first.
template <typename T, typename Item>
[[gnu::always_inline]] inline T norms_row_sum(std::size_t size, const Item& item) {
    std::array<T, 4> partial = norms_multi_row_sum<T>(size / 4, item);
    for (std::size_t i = size / 4 * 4; i < size; ++i) partial[0] = norms_plus(partial[0], item(i));
    for (std::size_t k = 1; k < 4; ++k) partial[0] = norms_plus(partial[0], partial[k]);
    return partial[0];
}

/// The sum of the row as torch's sum(-1) adds it (cascade_sum, an inner reduction).
[[gnu::always_inline]] inline float torch_row_sum(const float* x, std::size_t width) {
    if (width < norm_lanes) return 0.0f + norms_row_sum<float>(width, [x](std::size_t i) { return x[i]; });
    const std::size_t vectors = width / norm_lanes;
    const norm_lane_floats by_lane = norms_row_sum<norm_lane_floats>(vectors, [x](std::size_t i) {
        norm_lane_floats v;
        std::copy(x + i * norm_lanes, x + (i + 1) * norm_lanes, v.begin());
        return v;
    });
    float sum = 0.0f;
    for (std::size_t k = vectors * norm_lanes; k < width; ++k) sum += x[k];
    for (std::size_t l = 0; l < norm_lanes; ++l) sum += by_lane[l];
    return 0.0f + sum;  // the output, filled with 0, then added to
}

/// One row of layer_norm_rows. `stack`: room for the moments' cascade, reused row to row.
[[gnu::always_inline]] inline void layer_norm_row(const float* row, std::size_t width, const float* weight,
                                                  const float* bias, float eps, float* out,
                                                  std::vector<norm_lane_moments>& stack) {
    const auto [mean, variance] = layer_norm_moments(row, width, stack);
    const float rstd = 1.0f / std::sqrt(variance + eps);
    const float shift = -rstd * mean;
    for (std::size_t j = 0; j < width; ++j)
        out[j] = std::fma(std::fma(row[j], rstd, shift), weight[j], bias ? bias[j] : 0.0f);
}

/// One row of rms_norm_rows. `squares`: room for the row's x·x.
[[gnu::always_inline]] inline void rms_norm_row(const float* row, std::size_t width, const float* weight, float eps,
                                                float* out, std::vector<float>& squares) {
    for (std::size_t j = 0; j < width; ++j) squares[j] = row[j] * row[j];
    const float mean = torch_row_sum(squares.data(), width) / static_cast<float>(width);
    const float rstd = 1.0f / std::sqrt(mean + eps);
    for (std::size_t j = 0; j < width; ++j) out[j] = weight[j] * (row[j] * rstd);
}

// Each built twice: plain, and for AVX2 with FMA (std::fma an instruction rather than a
// call, the lanes' loops vectorised). Nothing is contracted (-ffp-contract=off), so both
// give the same bits (tests/compute/test_norms.cpp).

[[gnu::always_inline]] inline void layer_norm_rows_body(const float* x, std::size_t rows, std::size_t width,
                                                        const float* weight, const float* bias, float eps, float* y) {
    std::vector<norm_lane_moments> stack;
    for (std::size_t r = 0; r < rows; ++r) layer_norm_row(x + r * width, width, weight, bias, eps, y + r * width, stack);
}

[[gnu::always_inline]] inline void rms_norm_rows_body(const float* x, std::size_t rows, std::size_t width,
                                                      const float* weight, float eps, float* y) {
    std::vector<float> squares(width);
    for (std::size_t r = 0; r < rows; ++r) rms_norm_row(x + r * width, width, weight, eps, y + r * width, squares);
}

void layer_norm_rows_plain(const float* x, std::size_t rows, std::size_t width, const float* weight, const float* bias,
                           float eps, float* y) {
    layer_norm_rows_body(x, rows, width, weight, bias, eps, y);
}
[[gnu::target("avx2,fma")]] void layer_norm_rows_avx2(const float* x, std::size_t rows, std::size_t width,
                                                      const float* weight, const float* bias, float eps, float* y) {
    layer_norm_rows_body(x, rows, width, weight, bias, eps, y);
}
void rms_norm_rows_plain(const float* x, std::size_t rows, std::size_t width, const float* weight, float eps,
                         float* y) {
    rms_norm_rows_body(x, rows, width, weight, eps, y);
}
[[gnu::target("avx2,fma")]] void rms_norm_rows_avx2(const float* x, std::size_t rows, std::size_t width,
                                                    const float* weight, float eps, float* y) {
    rms_norm_rows_body(x, rows, width, weight, eps, y);
}

/// The fastest build this CPU runs.
norm_kernel norm_kernel_here() {
    static const norm_kernel here =
        norm_kernel_runs_here(norm_kernel::avx2) ? norm_kernel::avx2 : norm_kernel::plain;
    return here;
}

}  // namespace

bool norm_kernel_runs_here(norm_kernel k) {
    return k == norm_kernel::plain || (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
}

void layer_norm_rows_with(norm_kernel k, const float* x, std::size_t rows, std::size_t width, const float* weight,
                          const float* bias, float eps, float* y) {
    (k == norm_kernel::avx2 ? layer_norm_rows_avx2 : layer_norm_rows_plain)(x, rows, width, weight, bias, eps, y);
}

void rms_norm_rows_with(norm_kernel k, const float* x, std::size_t rows, std::size_t width, const float* weight,
                        float eps, float* y) {
    (k == norm_kernel::avx2 ? rms_norm_rows_avx2 : rms_norm_rows_plain)(x, rows, width, weight, eps, y);
}

void layer_norm_rows(const float* x, std::size_t rows, std::size_t width, const float* weight, const float* bias,
                     float eps, float* y) {
    layer_norm_rows_with(norm_kernel_here(), x, rows, width, weight, bias, eps, y);
}

void rms_norm_rows(const float* x, std::size_t rows, std::size_t width, const float* weight, float eps, float* y) {
    rms_norm_rows_with(norm_kernel_here(), x, rows, width, weight, eps, y);
}

}  // namespace attn
