#pragma once
// Where the positions of the tokens enter attention (--pos): rotary embeddings of q and k
// (rope), a bias on the scaled scores (alibi), or a table added to x (sinusoidal). Each as the
// reference code composes it in float32 torch ops, so that the bits are PyTorch's; cos and
// sin are rounded from double, where torch runs SLEEF's (both within an ulp: see positions.cpp).
#include <cstddef>
#include <cstdint>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/rope_frequencies.hpp"
#include "attn/compute/tensor.hpp"

namespace attn {

/// rope's angles for `count` positions from `first`, as Hugging Face's Llama makes them:
/// inv_freq = 1.0 / (base ** (torch.arange(0, dk, 2).float() / dk)); freqs = torch.outer(t, inv_freq);
/// emb = torch.cat((freqs, freqs), -1) (interleaved: freqs.repeat_interleave(2, -1)).
struct rope_angles {
    xt::xarray<float> cos, sin;  // [S,dk] = emb.cos(), emb.sin()
};
/// cos and sin laid out for `pairing` (c.rope_style, or rotation_pairing(c)).
rope_angles make_rope_angles(const config& c, std::int64_t first, std::size_t count, rope_pairing pairing);

/// The pairing a run rotates with: c.rope_style; the other one with --mistake rope_pairs_mixed
/// (rotate_half where the run says interleaved, rotate_every_two where it says half).
rope_pairing rotation_pairing(const config& c);


/// x [B,H',S,dk] (any strides) rotated: x·cos + rotate_half(x)·sin, rotate_half(x) = cat((-x2, x1), -1)
/// (interleaved: rotate_every_two(x) = stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)). A new
/// contiguous [B,H',S,dk], as torch's elementwise ops make it.
xt::xarray<float> rotate(const tensor& x, const rope_angles& angles, rope_pairing pairing);

/// ALiBi's slopes m_h, as Press et al.'s get_slopes(H) computes them in Python floats, then
/// torch.Tensor(...) in float32: 2^(-8(h+1)/H) for H a power of 2; else those of the closest
/// power of 2 below, then every other one of get_slopes(2·that).
std::vector<float> alibi_slopes(std::int64_t heads);

/// bias[h,i,j] = -m_h·(i - j), written slopes[h] · (j - i) in float32 (the same bits): the
/// query at absolute position i, the key at j. (+ 0: a negated slope makes -0 at i == j, where
/// torch's slopes · (i - j) has +0.)
inline float alibi_bias_at(float slope, std::int64_t query_position, std::int64_t key_position) {
    return slope * static_cast<float>(key_position - query_position) + 0.0f;
}

/// The slopes a run multiplies (j - i) by: alibi_slopes(H), each negated with --mistake
/// alibi_sign, whose bias is +m_h·(i - j) (the same bits as torch's slopes · (i - j)).
std::vector<float> run_alibi_slopes(const config& c);

/// The bias [1,H,Sq,Sk] of a run (run_alibi_slopes): queries from first_query_position(c), keys from 0.
xt::xarray<float> alibi_bias(const config& c);
/// The same with `slopes` [H].
xt::xarray<float> alibi_bias(const config& c, const std::vector<float>& slopes);

/// The Annotated Transformer's PositionalEncoding, rows first..first+count-1 of pe [max_len,width]:
/// position = torch.arange(0, max_len).unsqueeze(1); div_term = torch.exp(torch.arange(0, width, 2) *
/// -(math.log(10000.0) / width)); pe[:, 0::2] = torch.sin(position * div_term); pe[:, 1::2] =
/// torch.cos(position * div_term). `width` must be even.
xt::xarray<float> sinusoidal_table(std::int64_t first, std::size_t count, std::size_t width);

/// x [B,S,W] + pe [S,W], broadcast over the batch: a new tensor.
xt::xarray<float> add_positions(const xt::xarray<float>& x, const xt::xarray<float>& pe);

}  // namespace attn
