#pragma once
// attn mask's output: one mask in PyTorch's four conventions (mask_conventions.hpp).
//
// --format table: the mask's kinds and sizes, the Python setup, per convention
// what true means, who writes masks so, the expression that builds it, how
// PyTorch applies and takes it and what a row with no allowed key becomes; then
// the four side by side (T = True, F = False), per batch item when they differ.
//
// --format json:
//   { "format": "attn.mask/1", "config": {...}, "setup": "B, Sq, Sk = 2, 5, 5\n...",
//     "shape": [2,5,5], "dims": ["batch","query","key"],
//     "conventions": [ { "name": "keep", "meaning": "true = may attend", "used_by": ...,
//                        "torch": "torch.tril(...)", "apply": ..., ["pass": ...,]
//                        "fully_masked_row": ..., "dtype": "bool", "data": [[...]] }, ... ],
//     "rows_without_key": [[batch, query], ...], "warnings": [...] }
#include <ostream>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"
#include "attn/teach/mask_conventions.hpp"

namespace attn {

/// keep [B,1,Sq,Sk] is the mask `views` describes; warnings are printed under the header.
void render_mask_table(const config& c, const mask_views& views, const xt::xarray<bool>& keep,
                       const warning_list& warnings, std::ostream& out);

void render_mask_json(const config& c, const mask_views& views, const xt::xarray<bool>& keep,
                      const warning_list& warnings, std::ostream& out);

}  // namespace attn
