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
//
// Both are written as they go, a row of the mask at a time (mask_stream.hpp): what they
// hold is a row [Sk] and its text, whatever B, Sq and Sk are. The mask is read in passes
// (the table: is every batch item's plane the same? then the planes; the JSON: each
// convention's data, then the rows with no allowed key), each from its first row.
#include <ostream>

#include "attn/compute/config.hpp"
#include "attn/compute/mask_stream.hpp"
#include "attn/compute/warning.hpp"
#include "attn/teach/mask_conventions.hpp"

namespace attn {

/// `mask` reads the mask `views` describes (each pass reads a copy of it, from row (0, 0));
/// warnings are printed under the header.
void render_mask_table(const config& c, const mask_views& views, const mask_stream& mask,
                       const warning_list& warnings, std::ostream& out);

void render_mask_json(const config& c, const mask_views& views, const mask_stream& mask,
                      const warning_list& warnings, std::ostream& out);

}  // namespace attn
