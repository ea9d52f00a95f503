#include "attn/compute/linalg.hpp"

#include "attn/compute/threads.hpp"
#include "attn/compute/torch_exp.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <omp.h>
#include <xtensor-blas/xblas.hpp>
#include <xtensor/xadapt.hpp>

namespace attn {
namespace {

/// The first product OpenBLAS splits among its threads starts them, one per core as in
/// PyTorch's process (unless the user chose): the split changes some last bits, so the count
/// is PyTorch's, whatever --threads says.
void gemm_threads_for_large_products(std::size_t m, std::size_t n, std::size_t k) {
    static bool started = false;
    if (started || blas_threads_chosen_by_user() || blas_runs_on_one_thread(m, n, k)) return;
    if (omp_in_parallel()) return;  // inside attn's loops (threads.hpp): later, outside them
    started = true;
    blas_threads_for_large_products();  // as many as OpenBLAS starts by itself: as in PyTorch
}

/// A [rows, cols] row-major matrix over memory owned elsewhere: no copy is made.
auto matrix_over(const float* data, std::size_t rows, std::size_t cols) {
    const std::array<std::size_t, 2> shape{rows, cols};
    // xt::adapt wants a mutable pointer; gemm only reads its operands.
    return xt::adapt(const_cast<float*>(data), rows * cols, xt::no_ownership(), shape);
}

/// The sum of a row as aten's vec::reduce_all adds it with 8-float AVX2 vectors:
/// under 8 values one after another; else 8 lane sums over the row (the tail
/// added to the first lanes), then lanes i+4, i^2 and i^1 combined pairwise.
float torch_sum(const float* v, std::size_t n) {
    constexpr std::size_t lanes = 8;
    if (n < lanes) {
        float sum = v[0];
        for (std::size_t i = 1; i < n; ++i) sum += v[i];
        return sum;
    }
    std::array<float, lanes> acc{};
    std::copy(v, v + lanes, acc.begin());
    std::size_t d = lanes;
    for (; d + lanes <= n; d += lanes)
        for (std::size_t i = 0; i < lanes; ++i) acc[i] += v[d + i];
    for (std::size_t i = 0; d + i < n; ++i) acc[i] += v[d + i];
    std::array<float, lanes> half{}, quarter{};
    for (std::size_t i = 0; i < lanes; ++i) half[i] = acc[i] + acc[(i + 4) % lanes];   // 128-bit swap
    for (std::size_t i = 0; i < lanes; ++i) quarter[i] = half[i] + half[i ^ 2];        // 64-bit swap
    return quarter[0] + quarter[1];                                                     // 32-bit swap
}

}  // namespace

void matmul(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
            bool b_transposed, bool accumulate) {
    if (m == 0 || n == 0) return;
    auto a_mk = matrix_over(a, m, k);
    auto b_kn = b_transposed ? matrix_over(b, n, k) : matrix_over(b, k, n);
    auto c_mn = matrix_over(c, m, n);
    if (k == 0) {
        if (!accumulate) std::fill(c, c + m * n, 0.0f);
        return;
    }
    gemm_threads_for_large_products(m, n, k);
    xt::blas::gemm(a_mk, b_kn, c_mn, false, b_transposed, 1.0f, accumulate ? 1.0f : 0.0f);
}

bool blas_runs_on_one_thread(std::size_t m, std::size_t n, std::size_t k) {
    constexpr double one_thread_products = 65536.0 * 4;  // OpenBLAS 0.3: interface/gemm.c
    return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <= one_thread_products;
}

void bmm_rows(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
              bool b_transposed, std::size_t plane_rows) {
    constexpr std::size_t aten_small_product = 400;  // contraction_size * res_rows * res_cols < 400
    if (k * plane_rows * n >= aten_small_product) {
        matmul(a, b, c, m, n, k, b_transposed);
        return;
    }
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (std::size_t p = 0; p < k; ++p)  // this file is built with -ffp-contract=off: no FMA
                acc += a[i * k + p] * (b_transposed ? b[j * k + p] : b[p * n + j]);
            c[i * n + j] = acc;
        }
}

xt::xarray<float> linear(const xt::xarray<float>& x, const xt::xarray<float>& w, const xt::xarray<float>* bias) {
    return linear(x.data(), {x.shape().begin(), x.shape().end()}, w, bias);
}

xt::xarray<float> linear(const float* x, const std::vector<std::size_t>& x_shape, const xt::xarray<float>& w,
                         const xt::xarray<float>* bias) {
    const std::size_t out_features = w.shape()[0];
    const std::size_t in_features = w.shape()[1];
    std::size_t rows = 1;  // every leading axis folded into one
    for (std::size_t a = 0; a + 1 < x_shape.size(); ++a) rows *= x_shape[a];

    auto y_shape = x_shape;
    y_shape.back() = out_features;
    auto y = xt::xarray<float>::from_shape(y_shape);
    if (bias == nullptr) {  // F.linear without a bias: matmul(x, Wᵀ)
        matmul(x, w.data(), y.data(), rows, out_features, in_features, true);  // [rows,in] · [out,in]ᵀ
        return y;
    }
    // F.linear with a bias, on a contiguous input: addmm(b, x, Wᵀ). Every row of y starts as
    // the bias and the GEMM adds its k-blocks to it (beta 1): ((b + S_1) + S_2) + ..., which
    // is not (S_1 + S_2 + ...) + b once in_features spans two blocks (over 128 on OpenBLAS's
    // Prescott kernel).
    float* row = y.data();
    for (std::size_t r = 0; r < rows; ++r, row += out_features)
        std::copy(bias->data(), bias->data() + out_features, row);
    matmul(x, w.data(), y.data(), rows, out_features, in_features, true, true);
    return y;
}

xt::xarray<float> conv1d(const xt::xarray<float>& x, const xt::xarray<float>& w, const xt::xarray<float>* bias) {
    const std::size_t in_features = w.shape()[0], out_features = w.shape()[1];
    const std::size_t rows = in_features == 0 ? 0 : x.size() / in_features;
    std::vector<std::size_t> y_shape(x.shape().begin(), x.shape().end());
    y_shape.back() = out_features;
    auto y = xt::xarray<float>::from_shape(y_shape);
    if (bias == nullptr) {
        matmul(x.data(), w.data(), y.data(), rows, out_features, in_features, false);  // [rows,in] · [in,out]
        return y;
    }
    float* row = y.data();  // addmm: each row starts as the bias, the GEMM adds to it (beta 1)
    for (std::size_t r = 0; r < rows; ++r, row += out_features) std::copy(bias->data(), bias->data() + out_features, row);
    matmul(x.data(), w.data(), y.data(), rows, out_features, in_features, false, true);
    return y;
}

namespace {

/// One row of softmax_last_axis, in place.
void softmax_row(float* row, std::size_t width) {
    float max = row[0];
    for (std::size_t j = 1; j < width; ++j) max = row[j] > max ? row[j] : max;  // inlined, unlike std::fmax
    exp_shifted(row, width, max);
    const float inverse = 1.0f / torch_sum(row, width);  // aten multiplies by the inverse of the sum
    for (std::size_t j = 0; j < width; ++j) row[j] *= inverse;
}

}  // namespace

void softmax_last_axis(xt::xarray<float>& x) {
    const std::size_t width = x.shape().back();
    if (width == 0) return;
    softmax_rows(x.data(), x.size() / width, width);
}

void softmax_rows(float* x, std::size_t rows, std::size_t width) {
    if (width == 0) return;
    for (std::size_t r = 0; r < rows; ++r) softmax_row(x + r * width, width);
}

void safe_softmax_rows(float* x, std::size_t rows, std::size_t width) {
    if (width == 0) return;
    float* row = x;
    for (std::size_t r = 0; r < rows; ++r, row += width) {
        const bool all_neg_inf = std::all_of(row, row + width, [](float v) { return std::isinf(v) && v < 0; });
        if (all_neg_inf)
            std::fill(row, row + width, 0.0f);
        else
            softmax_row(row, width);
    }
}

}  // namespace attn
