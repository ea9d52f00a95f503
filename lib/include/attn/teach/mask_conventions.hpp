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
// The expressions are Python: run the setup lines first, then each view's
// `name = build` in order (additive reads keep); each builds exactly the mask
// whose cells value() gives. Nothing here holds the mask [B,Sq,Sk]: a renderer
// reads it row by row (mask_stream.hpp) and asks each view for its cells, so
// that attn mask writes any size in bounded memory.
#include <cstddef>
#include <ostream>
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
    bool boolean = true;    // cells are true/false (1/0); additive's are 0 and the fill
    bool inverted = false;  // boolean: true = may NOT attend (mha)
    float fill = 0.0f;      // additive: the cell of a key that may not be attended (--fill)

    /// The cell of a key `allowed` (true = may attend) in this convention: 1 or 0, or 0 or the fill.
    float value(bool allowed) const {
        if (boolean) return allowed != inverted ? 1.0f : 0.0f;
        return allowed ? 0.0f : fill;
    }
};

/// The four views of one mask, and the Python names their expressions use.
struct mask_views {
    // The Python lines that give every name the expressions use, in order: "B, Sq, Sk = 2, 5, 5",
    // "lengths = torch.tensor([3, 5])  # valid keys per batch item", ... The mask files' line,
    // "file_keep = {literal}  # ...", holds the literal's place: write_setup_line writes it out.
    std::vector<std::string> setup;
    const xt::xarray<bool>* files = nullptr;  // the mask files [B,1,Sq,Sk] file_keep holds, as read
    bool per_batch = false;  // the mask shown is [B,Sq,Sk] (padding, random, mask files), else [Sq,Sk]
    std::vector<std::size_t> shape;  // [B,Sq,Sk] or [Sq,Sk]
    std::vector<mask_view> views;  // keep, mha, sdpa, additive
};

/// The mask `c.mask` asks for in the four conventions. The mask files (--mask-file,
/// --key-padding-mask), `files` [B,1,Sq,Sk] as read (true = may attend; needed when c has
/// them, and must outlive the views), enter as a literal tensor, file_keep in the setup.
mask_views describe_mask(const config& c, const xt::xarray<bool>* files = nullptr);

/// Setup line n to `out`, its text through `quote` (JSON's escapes, or none), the mask files'
/// literal written out in place a row at a time ("torch.tensor([[[1, 0], [1, 1]]],
/// dtype=torch.bool)": [B,Sq,Sk], three bytes a cell; digits, brackets, commas and spaces).
void write_setup_line(std::ostream& out, const mask_views& views, std::size_t n,
                      std::string (*quote)(const std::string&) = nullptr);

/// The whole setup, lines joined by "\n" (for small masks and tests).
std::string setup_text(const mask_views& views);

/// A float as Python reads it back to the same float32: "float('-inf')", "-1e9", "-0.10000000149011612".
std::string python_float(float value);

}  // namespace attn
