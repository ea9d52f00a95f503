#pragma once
// The [B,H,Sq,Sk] stages, scores -> scaled -> masked -> softmax -> dropout, and the product
// weights·V that ends them, on a block [rows, W] of query rows of one (batch, head) plane, in
// place. A block of the whole plane gives the whole tensor's bits; a smaller one may differ
// in the products (bmm_rows). R = Sq and W = Sk, or the other way with --mistake q_k_swapped.
#include <cstddef>
#include <cstdint>

#include "attn/compute/config.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/tensor.hpp"
#include "attn/compute/weak_fill.hpp"

namespace attn {

/// What the chain reads, fixed for a run.
struct plane_chain {
    const config* cfg = nullptr;
    const tensor* rows_of = nullptr;     // [B,H,R,dk]: q (k when swapped), one row per score row
    const tensor* columns_of = nullptr;  // [B,H,W,dk]: k (q when swapped)
    const tensor* values = nullptr;      // v [B,H,Sk,dk], for weights·V; null when not needed
    const mask_rows* mask = nullptr;     // [B,1,Sq,Sk] a row at a time (true = may attend); null without a mask
    float divisor = 1.0f;                // scaled = scores / divisor
    float fill = 0.0f;                   // masked = fill where the mask is false
    const float* alibi_slopes = nullptr; // [H]: biased = scaled + slope_h·(j - i) (--pos alibi); else null
    std::int64_t first_query_position = 0;  // the absolute position of query row 0 (keys start at 0)
    std::size_t batch = 0, heads = 0, rows = 0, width = 0;  // B, H, R, W

    std::size_t planes() const { return batch * heads; }
};

/// The chain as `c` runs it on q, k [B,H,S,dk] (views), v (or null) and the mask (or null).
plane_chain make_plane_chain(const config& c, const tensor& q, const tensor& k, const tensor* v,
                             const mask_rows* mask);

/// Rows [first_row, first_row + rows) of plane (batch, head), held at `data` [rows, W].
/// A step after scores reads the previous stage's rows from `source` when it is set (the
/// step writes a second tensor: the sink still writes the first out), else from `data`.
struct plane_block {
    std::size_t batch = 0, head = 0, first_row = 0, rows = 0;
    float* data = nullptr;
    const float* source = nullptr;
    const float* input() const { return source != nullptr ? source : data; }
};

/// 6. scores: block = rows_of[b,h,rows] · columns_of[b,h]ᵀ   [rows,dk] · [dk,W] -> [rows,W]
void block_scores(const plane_chain& chain, const plane_block& block);

/// 7. scaled: block / divisor.
void block_scale(const plane_chain& chain, const plane_block& block);

/// 22. biased: block + bias[h,i,j], bias = -m_h·(i - j) (alibi_bias_at), made as it goes.
void block_bias(const plane_chain& chain, const plane_block& block);

/// 9. masked: fill where the mask is false. With a finding, also gathers what
/// weak_fill_warning reports from these rows.
void block_mask(const plane_chain& chain, const plane_block& block, weak_fill_finding* finding);

/// 10. softmax over each row (--safe-softmax: rows of -inf only, and rows with no allowed key, 0).
void block_softmax(const plane_chain& chain, const plane_block& block);

/// 11. dropout, as nn.Dropout(p) but with a reproducible keep: torch.manual_seed(seed); keep =
/// torch.rand(B,H,Sq,Sk) < 1 - p, then weights · keep / (1 - p) as aten (p = 1 gives 0).
/// `draws` [rows, W] are the block's numbers of torch.rand; keep_out [rows, W] may be null.
void block_dropout(const plane_chain& chain, const plane_block& block, const float* draws, float* keep_out);

/// 12. context[b,h,rows] = block · values[b,h]   [rows,Sk] · [Sk,dk] -> [rows,dk], in the
/// whole row-major [B,H,Sq,dk] `context`.
void block_context(const plane_chain& chain, const plane_block& block, float* context);

/// keep = draws < 1 - p (compared in float32), 1 or 0, in place.
void keep_from_draws(float* draws, std::size_t count, double p);

}  // namespace attn
