#include "attn/linalg.hpp"

#include <array>
#include <cmath>

#include <xtensor-blas/xblas.hpp>
#include <xtensor/xadapt.hpp>

namespace attn {
namespace {

/// A [rows, cols] row-major matrix over memory owned elsewhere: no copy is made.
auto matrix_over(const float* data, std::size_t rows, std::size_t cols) {
    const std::array<std::size_t, 2> shape{rows, cols};
    // xt::adapt wants a mutable pointer; gemm only reads its operands.
    return xt::adapt(const_cast<float*>(data), rows * cols, xt::no_ownership(), shape);
}

}  // namespace

void matmul(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
            bool b_transposed) {
    if (m == 0 || n == 0) return;
    auto a_mk = matrix_over(a, m, k);
    auto b_kn = b_transposed ? matrix_over(b, n, k) : matrix_over(b, k, n);
    auto c_mn = matrix_over(c, m, n);
    if (k == 0) {
        std::fill(c, c + m * n, 0.0f);
        return;
    }
    xt::blas::gemm(a_mk, b_kn, c_mn, false, b_transposed);
}

xt::xarray<float> linear(const xt::xarray<float>& x, const xt::xarray<float>& w, const xt::xarray<float>* bias) {
    const std::size_t out_features = w.shape()[0];
    const std::size_t in_features = w.shape()[1];
    const std::size_t rows = x.size() / in_features;  // every leading axis folded into one

    auto y_shape = x.shape();
    y_shape.back() = out_features;
    auto y = xt::xarray<float>::from_shape(y_shape);
    matmul(x.data(), w.data(), y.data(), rows, out_features, in_features, true);  // [rows,in] · [out,in]ᵀ
    if (bias != nullptr) {
        float* row = y.data();
        for (std::size_t r = 0; r < rows; ++r, row += out_features)
            for (std::size_t o = 0; o < out_features; ++o) row[o] += bias->data()[o];
    }
    return y;
}

void softmax_last_axis(xt::xarray<float>& x) {
    const std::size_t width = x.shape().back();
    if (width == 0) return;
    const std::size_t rows = x.size() / width;
    float* row = x.data();
    for (std::size_t r = 0; r < rows; ++r, row += width) {
        float max = row[0];
        for (std::size_t j = 1; j < width; ++j) max = row[j] > max ? row[j] : max;  // inlined, unlike std::fmax
        float sum = 0.0f;
        for (std::size_t j = 0; j < width; ++j) {
            row[j] = std::exp(row[j] - max);
            sum += row[j];
        }
        for (std::size_t j = 0; j < width; ++j) row[j] /= sum;
    }
}

}  // namespace attn
