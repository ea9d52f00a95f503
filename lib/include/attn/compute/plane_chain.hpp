#pragma once
// The [B,H,Sq,Sk] stages, scores -> scaled -> biased -> masked -> softmax -> dropout, and the
// product weights·V that ends them, on a block of query rows of some (batch, head) planes, in
// place. A block of whole planes gives the whole tensor's bits; a smaller one may differ in the
// products (bmm_rows). R = Sq and W = Sk, or the other way when the scores' operands swap.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "attn/compute/config.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/tensor.hpp"
#include "attn/compute/weak_fill.hpp"

namespace attn {

/// What dropout multiplies a kept and a dropped weight by.
struct dropout_scales {
    float kept = 1.0f, dropped = 0.0f;
};

/// What the chain reads, fixed for a run.
struct plane_chain {
    const tensor* rows_of = nullptr;     // [B,H,R,dk]: q, one row per score row
    const tensor* columns_of = nullptr;  // [B,H,W,dk]: k
    const tensor* values = nullptr;      // v [B,H,Sk,dk], for weights·V; null when not needed
    const mask_rows* mask = nullptr;     // [B,1,Sq,Sk] a row at a time (true = may attend); null without a mask
    float divisor = 1.0f;                // scaled = scores / divisor
    float fill = 0.0f;                   // masked = fill where the mask is false
    const float* alibi_slopes = nullptr; // [H]: biased = scaled + slope_h·(j - i) (--pos alibi); else null
    std::int64_t first_query_position = 0;  // the absolute position of query row 0 (keys start at 0)
    bool safe_softmax = false;           // --safe-softmax: torch._safe_softmax's rows
    double dropout_p = 0.0;              // keep = draws < 1 - p
    dropout_scales dropout;              // weights · (keep ? kept : dropped)
    std::size_t batch = 0, heads = 0, rows = 0, width = 0;  // B, H, R, W

    std::size_t planes() const { return batch * heads; }
};

/// Rows [first_row, first_row + rows) of plane (batch, head), held at `data` [rows, W]. The
/// step reads the previous stage's rows from `source` when it is set (the step writes a
/// second tensor: the sink still writes the first out), else from `data`.
struct plane_block {
    std::size_t batch = 0, head = 0, first_row = 0, rows = 0;
    float* data = nullptr;
    const float* source = nullptr;
    const float* input() const { return source != nullptr ? source : data; }
};

/// Rows [first_row, first_row + rows) of planes [first_plane, first_plane + planes) of the
/// [B,H,R,W] tensor, at `data` [planes, rows, W] (`source` as plane_block's), and what the
/// steps read besides.
struct rows_block {
    std::size_t first_plane = 0, planes = 0, first_row = 0, rows = 0;
    float* data = nullptr;
    const float* source = nullptr;
    weak_fill_finding* finding = nullptr;  // masked: gathers weak_fill_warning's finding, when set
    const float* draws = nullptr;          // dropout: torch.rand's numbers of these rows [planes, rows, W]
    float* keep = nullptr;                 // dropout: keep (1 or 0) out [planes, rows, W], or null
    float* context = nullptr;              // context: the whole row-major [B,H,R,dk] the rows go into
};

/// The [m,k]·[k,n] product a step makes per plane (none: 0).
struct plane_product {
    std::size_t m = 0, n = 0, k = 0;
};

/// Runs fn on every plane of `block`: in parallel when there are enough of them (each BLAS
/// call then on its own thread), else one after another, each with every thread. A `product`
/// OpenBLAS splits among its threads goes one plane after another, as PyTorch's bmm.
void for_each_plane(const plane_chain& chain, const rows_block& block,
                    const std::function<void(const plane_block&)>& fn, plane_product product = {});

/// A step of the chain on a block of rows (forward_steps.hpp names which the run takes).
using plane_step = void (*)(const plane_chain& chain, const rows_block& block);

/// 6. scores: rows_of[b,h,rows] · columns_of[b,h]ᵀ   [rows,dk] · [dk,W] -> [rows,W]
void scores_step(const plane_chain& chain, const rows_block& block);

/// 7. scaled: block / divisor.
void scale_step(const plane_chain& chain, const rows_block& block);

/// 7b. biased: block + bias[h,i,j], bias = -m_h·(i - j) (alibi_bias_at), made as it goes.
void bias_step(const plane_chain& chain, const rows_block& block);

/// 9. masked: fill where the mask is false; with block.finding, also gathers what
/// weak_fill_warning reports from these rows.
void mask_step(const plane_chain& chain, const rows_block& block);

/// 10. softmax over each row (--safe-softmax: rows of -inf only, and rows with no allowed key, 0).
void softmax_step(const plane_chain& chain, const rows_block& block);

/// 11. dropout, as nn.Dropout(p) but with a reproducible keep: torch.manual_seed(seed); keep =
/// torch.rand(B,H,Sq,Sk) < 1 - p, then weights · keep / (1 - p) as aten (p = 1 gives 0):
/// weights · (keep ? kept : dropped) with reference_dropout_scales(p).
void dropout_step(const plane_chain& chain, const rows_block& block);

/// 12. context[b,h,rows] = block · values[b,h]   [rows,Sk] · [Sk,dk] -> [rows,dk], into block.context.
void context_step(const plane_chain& chain, const rows_block& block);

/// aten's dropout: noise = keep.float().div_(1 - p), so {1 / (1 - p), 0}; p = 1 gives {0, 0}.
dropout_scales reference_dropout_scales(double p);

/// keep = draws < 1 - p (compared in float32), 1 or 0, in place.
void keep_from_draws(float* draws, std::size_t count, double p);

}  // namespace attn
