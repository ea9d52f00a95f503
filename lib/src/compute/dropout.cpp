#include "attn/compute/dropout.hpp"

#include <vector>

#include "attn/compute/generator.hpp"

namespace attn {

xt::xarray<bool> dropout_keep(const std::vector<std::size_t>& shape, std::uint64_t seed, double p) {
    xt::xarray<bool> keep = xt::xarray<bool>::from_shape(shape);
    std::vector<float> draws(keep.size());
    torch_generator(seed).rand(draws.data(), draws.size());
    // a float tensor compared with a Python float: the scalar becomes float32
    const auto threshold = static_cast<float>(1.0 - p);
    for (std::size_t e = 0; e < draws.size(); ++e) keep.data()[e] = draws[e] < threshold;
    return keep;
}

xt::xarray<float> apply_dropout(const xt::xarray<float>& weights, const xt::xarray<bool>& keep, double p) {
    // aten: noise = keep.float().div_(1 - p); out = weights * noise (p == 1: weights * 0)
    const float scale = p >= 1.0 ? 0.0f : 1.0f / static_cast<float>(1.0 - p);
    xt::xarray<float> out = xt::xarray<float>::from_shape(weights.shape());
    for (std::size_t e = 0; e < out.size(); ++e)
        out.data()[e] = weights.data()[e] * (keep.data()[e] ? scale : 0.0f);
    return out;
}

}  // namespace attn
