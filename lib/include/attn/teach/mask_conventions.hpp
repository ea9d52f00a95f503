#pragma once
// One mask in the four conventions PyTorch users meet (attn mask), each with the
// PyTorch that builds it, applies it and takes it, and what it makes of a row
// with no allowed key:
//
//   keep      true = may attend      attn's mask stage; seed notebook 000's tril mask
//   mha       true = may NOT attend  nn.MultiheadAttention's boolean attn_mask and
//                                    key_padding_mask; seed notebook 003's triu(..., 1).bool()
//   sdpa      true = may attend      F.scaled_dot_product_attention's boolean attn_mask
//   additive  0 = may attend,        a float attn_mask, added to the scores
//             -inf = may not
//
// The expressions are Python: run `setup` first, then each view's
// `name = build` in order (additive reads keep); each builds exactly `data`.
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"

namespace attn {

/// The mask in one convention.
struct mask_view {
    std::string name;       // "keep", "mha", "sdpa" or "additive"; also its Python variable
    std::string meaning;    // "true = may attend"
    std::string used_by;    // who writes masks this way: "nn.MultiheadAttention's boolean attn_mask ..."
    std::string build;      // Python that builds `data`: "torch.tril(torch.ones(Sq, Sk, dtype=torch.bool))"
    std::string apply;      // the weights, applied by hand to scores [B,H,Sq,Sk]:
                            // "torch.softmax(scores.masked_fill(mha, float('-inf')), dim=-1)"
    std::string pass;       // how PyTorch's own layer takes it; empty for keep (attn's own)
    std::string empty_row;  // what a row with no allowed key becomes under it, in one line
    bool boolean = true;    // data holds true/false (1/0); additive holds 0 and the fill
    xt::xarray<float> data;  // [Sq,Sk], or [B,Sq,Sk] when the mask differs per batch item
};

/// The four views of one mask, and the Python names their expressions use.
struct mask_views {
    std::string setup;     // "B, Sq, Sk = 2, 5, 5\nlengths = torch.tensor([3, 5])"
    bool per_batch = false;  // data is [B,Sq,Sk] (padding, random, mask files), else [Sq,Sk]
    std::vector<mask_view> views;  // keep, mha, sdpa, additive
};

/// The mask `c.mask` asks for, `keep` [B,1,Sq,Sk] (true = may attend, as
/// build_mask makes it), in the four conventions. The mask files (--mask-file,
/// --key-padding-mask), `files` [B,1,Sq,Sk] as read (true = may attend), enter
/// as a literal tensor, file_keep in `setup` (without `files`, keep stands in).
mask_views describe_mask(const config& c, const xt::xarray<bool>& keep, const xt::xarray<bool>* files = nullptr);

/// A float as Python reads it back to the same float32: "float('-inf')", "-1e9", "-0.10000000149011612".
std::string python_float(float value);

}  // namespace attn
