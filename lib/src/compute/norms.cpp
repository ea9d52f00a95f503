// The normalisations (norms.hpp). A first version in double sums, within a float32 rounding
// or two of PyTorch's; the kernels' own order of operations is to come.
#include "attn/compute/norms.hpp"

#include <cmath>

namespace attn {

void layer_norm_rows(const float* x, std::size_t rows, std::size_t width, const float* weight, const float* bias,
                     float eps, float* y) {
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = x + r * width;
        double sum = 0.0;
        for (std::size_t j = 0; j < width; ++j) sum += row[j];
        const double mean = sum / static_cast<double>(width);
        double squares = 0.0;
        for (std::size_t j = 0; j < width; ++j) squares += (row[j] - mean) * (row[j] - mean);
        const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(width) + eps);
        for (std::size_t j = 0; j < width; ++j)
            y[r * width + j] = static_cast<float>((row[j] - mean) * rstd * weight[j] + (bias ? bias[j] : 0.0f));
    }
}

void rms_norm_rows(const float* x, std::size_t rows, std::size_t width, const float* weight, float eps, float* y) {
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = x + r * width;
        double squares = 0.0;
        for (std::size_t j = 0; j < width; ++j) squares += static_cast<double>(row[j]) * row[j];
        const float rstd = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(width) + eps));
        for (std::size_t j = 0; j < width; ++j) y[r * width + j] = weight[j] * (row[j] * rstd);
    }
}

}  // namespace attn
