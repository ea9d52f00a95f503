#pragma once
// Stage 23, flash: flash attention's tiled (online) softmax, next to the exact one. For each
// query row the keys are read in blocks of N; a running max m, a running sum l and an
// accumulator acc are updated block by block, and context = acc / l at the end. No [Sq,Sk]
// plane is ever formed: memory O(Sq·N) per head instead of O(Sq·Sk).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/compute/mask.hpp"
#include "attn/compute/tensor.hpp"

namespace attn {

/// What the flash recurrence reads: the q, k, v the scores step reads (after every stage that
/// changes them), the mask as the planes apply it, and the planes' divisor and fill.
struct flash_inputs {
    const tensor* q = nullptr;        // [B,H,Sq,dk] (any strides)
    const tensor* k = nullptr;        // [B,H,Sk,dk]
    const tensor* v = nullptr;        // [B,H,Sk,dk]
    const mask_rows* mask = nullptr;  // [B,1,Sq,Sk] a row at a time (true = may attend); null without a mask
    float divisor = 1.0f;             // S_j = Q·K_jᵀ / divisor
    float fill = 0.0f;                // S_j = fill where the mask is false
    std::size_t block = 1;            // N keys per block (the last block may be shorter)
    const float* alibi_slopes = nullptr;   // --pos alibi: S_j + bias, bias = -m_h·(i - j); null without
    std::int64_t first_query_position = 0; // i of query row 0 (N in a decoding step)
};

/// The flash stage's tensors, nb = ceil(Sk/N), each after block j = 0..nb-1:
///   m       [B,H,Sq,nb]     running max of the scores so far (-inf while every key so far is masked)
///   l       [B,H,Sq,nb]     running sum of e^(S - m)
///   rescale [B,H,Sq,nb]     e^(m_old - m_new) applied to l and acc at block j; at block 0 m_old = -inf,
///                           so 0 (nothing to rescale yet). While m_new is -inf, the exponents take
///                           m_new as 0 (FlashAttention-2): rescale 0 and e^(S - m) 0, never NaN
///   acc     [B,H,Sq,nb,dk]  rescale·acc + e^(S_j - m)·V_j, before the final division
///   context [B,H,Sq,dk]     acc_last / l_last; a row with no allowed key has l = 0 and gives 0
///                           (FlashAttention-2), where the exact softmax with fill -inf gives NaN.
/// Each step as torch computes it in float32 (tests/reference/make_flash_fixtures.py): the
/// block products as torch.matmul's bmm (bmm_rows), exp as torch.exp, sums left to right.
std::vector<tensor> flash_attention(const flash_inputs& in);

/// The largest |flash - exact| over the elements of two [B,H,Sq,dk] contexts, leaving out
/// those where either is NaN (rows with no allowed key under fill -inf); 0 when none are left.
double max_abs_difference(const tensor& flash_context, const tensor& exact_context);

/// The tolerance the flash context is held to: 1e-5 × max(1, the largest |v|), since the
/// context is a weighted mean of the rows of v and the two paths differ only in rounding.
double flash_tolerance(const tensor& v);

}  // namespace attn
