#pragma once
// Masks read from files (--mask-file, --key-padding-mask), in the conventions
// PyTorch users meet:
//   keep      true/1 = may attend          F.scaled_dot_product_attention's boolean mask, attn's own
//   mha       true/1 = may NOT attend      nn.MultiheadAttention's attn_mask and key_padding_mask,
//                                          seed notebook 003's torch.triu(..., diagonal=1).bool()
//   additive  0 = may attend, -inf or a large negative (<= -1e4) = may not, added to the scores
// Everything becomes attn's keep-mask [B,1,Sq,Sk], shared by every head.
#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// The keep value (true = may attend) of every element of `t` read in convention `m`.
/// Throws attn::error naming `what` and the element for a value `m` does not allow
/// (a boolean convention given 0/-inf floats is told to use --mask-convention additive).
std::vector<bool> mask_keep_values(const loaded_tensor& t, mask_convention m, const std::string& what);

/// keep [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk] (a leading 1 broadcasts) -> [B,1,Sq,Sk].
xt::xarray<bool> expand_attn_mask(const std::vector<bool>& keep, const std::vector<std::size_t>& shape,
                                  std::size_t batch);

/// A key-padding mask read as keep [B,Sk] (true = a real key) -> [B,1,Sq,Sk].
xt::xarray<bool> expand_key_padding(const std::vector<bool>& keep, std::size_t batch, std::size_t sq,
                                    std::size_t sk);

/// Hints when a mask file looks written in another convention than it was read in: a
/// keep-mask that is strictly upper-triangular (notebook 003's mha mask), a mask that
/// leaves a row empty, a key-padding mask that pads every key of a batch item (1 =
/// real token, notebook 002). `flag_and_file` is "--mask-file m.npy".
void mask_convention_hints(const xt::xarray<bool>& keep, mask_convention read_as, bool key_padding,
                           const std::string& flag_and_file, warning_list& out);

}  // namespace attn
