#pragma once
// The numbers attention starts from: the token embeddings and the weights.
#include <optional>

#include <xtensor/xarray.hpp>

#include "attn/config.hpp"

namespace attn {

using optional_tensor = std::optional<xt::xarray<float>>;

/// Weights in PyTorch's nn.Linear layout [out, in]; y = x·Wᵀ + b.
/// The biases are absent with --no-qkv-bias, w_o and b_o with --no-out-proj.
struct parameters {
    xt::xarray<float> w_q;  // [D,Din]
    xt::xarray<float> w_k;  // [D,Dkv]
    xt::xarray<float> w_v;  // [D,Dkv]
    optional_tensor b_q, b_k, b_v;  // [D] each
    optional_tensor w_o;    // [D,D]
    optional_tensor b_o;    // [D]
};

struct inputs {
    xt::xarray<float> x;    // [B,Sq,Din]
    optional_tensor x_kv;   // [B,Sk,Dkv]; absent for self-attention (keys and values come from x)
    parameters params;
};

/// Draws every input from the seed exactly as PyTorch would (CLI.md):
///   torch.manual_seed(seed)
///   nn.Linear(Din,D) for q, nn.Linear(Dkv,D) for k and v, nn.Linear(D,D) for the output
///   x = torch.randn(B,Sq,Din); for cross-attention only, x_kv = torch.randn(B,Sk,Dkv)
inputs draw_inputs(const config& c);

}  // namespace attn
