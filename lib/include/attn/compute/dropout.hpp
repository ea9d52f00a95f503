#pragma once
// Dropout on the attention weights (stage 11, training mode only).
//
// nn.Dropout(p) zeroes each weight with probability p and scales the rest by
// 1/(1-p), so the expected sum of a row stays 1. PyTorch draws its keep mask
// with bernoulli_, whose numbers depend on how PyTorch was built (vectorised
// or not, MKL or not); attn draws it reproducibly instead:
//   torch.manual_seed(seed); keep = torch.rand(B,H,Sq,Sk) < 1 - p
// and applies it as aten's dropout does: weights * (keep / (1 - p)).
#include <cstdint>

#include <xtensor/xarray.hpp>

namespace attn {

/// keep[b,h,i,j]: whether weight (b,h,i,j) survives. Shape `shape` ([B,H,Sq,Sk]).
xt::xarray<bool> dropout_keep(const std::vector<std::size_t>& shape, std::uint64_t seed, double p);

/// weights · keep / (1 - p), in float32 as PyTorch computes it; p = 1 gives zeros.
xt::xarray<float> apply_dropout(const xt::xarray<float>& weights, const xt::xarray<bool>& keep, double p);

}  // namespace attn
