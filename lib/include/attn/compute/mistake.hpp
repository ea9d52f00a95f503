#pragma once
// The common mistakes of attention code, which attn makes on purpose (attn trace --mistake ID)
// and recognises in an answer (attn check). The ids are CLI.md's diagnosis ids.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "attn/compute/stage_table.hpp"

namespace attn {

/// CLI.md's diagnosis ids, without `unknown` (no mistake fits) and with `none`.
enum class mistake {
    none,
    softmax_axis,             // softmax over the query axis (dim=-2) instead of the keys
    missing_scale,            // no / √dk
    wrong_scale,              // / √D, / D or / dk instead of / √dk
    mask_inverted,            // the mask's polarity flipped
    fill_value,               // masked positions filled with another value than asked (-1e9 for -inf, 0, ...)
    split_without_transpose,  // [B,S,D] reshaped straight to [B,H,S,dk]
    merge_without_transpose,  // [B,H,Sq,dk] reshaped straight to [B,Sq,D]
    weight_not_transposed,    // x·W instead of x·Wᵀ
    q_k_swapped,              // K·Qᵀ instead of Q·Kᵀ
    missing_bias,             // the projections without their bias
    dropout_not_rescaled,     // weights · keep, without the / (1 - p)
    dropout_keep_inverted,    // weights · ~keep / (1 - p): the dropped weights kept
    weights_transposed,       // weightsᵀ·V instead of weights·V
    mask_not_applied,         // masked = scaled: the mask built but never used
    mask_or_instead_of_and,   // the mask kinds joined by OR (causal | padding) instead of AND
    causal_only,              // of several mask kinds, only the causal one
    padding_only,             // of several mask kinds, only the padding one
    padding_on_queries,       // padding on the query axis (i < length) instead of the keys
    diagonal_masked,          // torch.tril(ones, -1): a query may not attend itself
    window_off_by_one,        // |i - j| < W or <= W + 1 instead of <= W
    masked_after_softmax,     // softmax of the unmasked scores, then the masked weights set to 0
    nan_replaced,             // torch.nan_to_num after softmax: a fully masked row 0, not NaN
    log_softmax,              // log_softmax instead of softmax
    sigmoid_instead_of_softmax,  // sigmoid(scores) instead of softmax
    scale_multiplied,         // scores · √dk instead of / √dk
    heads_interleaved,        // q.view(B,S,dk,H).permute(0,3,1,2): head h takes every H-th feature
    causal_misaligned,        // Sq != Sk: the causal mask aligned upper-left for lower-right (a KV-cache step), or back
    kv_heads_tiled,           // --kv-heads G: k.repeat(1, H/G, 1, 1) (tiling) instead of k.repeat_interleave(H/G, dim=1)
    rope_positions_from_zero,  // --pos rope --past N: the new q and k rotated at 0..Sq-1, not N..N+Sq-1
    rope_pairs_mixed,         // --pos rope: q and k rotated with the other pairing (rotate_half for interleaved, or back)
    alibi_sign,               // --pos alibi: bias +m_h·(i - j), far keys favoured, instead of -m_h·(i - j)
};
inline constexpr std::size_t mistake_count = static_cast<std::size_t>(mistake::alibi_sign) + 1;  // none included

/// "softmax_axis", ...; "none" for mistake::none. And back: nullopt for an unknown id ("unknown" too).
std::string_view mistake_id(mistake m);
std::optional<mistake> parse_mistake(std::string_view id);
/// Every mistake but none, in CLI.md's order.
const std::vector<mistake>& all_mistakes();

/// How many ways attn knows to make `m` (attn check tries each; attn trace
/// --mistake makes way 0, config::mistake_variant picks one):
///   softmax_axis             0: dim=-2 (the queries)  1: dim=1 (the heads)
///   wrong_scale              0: / √D  1: / D  2: / dk
///   fill_value               0: 0 (-inf when the fill is 0)  1: -1e9 when the fill is -inf, else -inf
///   weight_not_transposed    0: x·W for q, k, v  1: and concat·W_o  2: concat·W_o only
///   missing_bias             0: q, k, v without bias  1: and the output  2: the output only
///   window_off_by_one        0: |i - j| < W  1: |i - j| <= W + 1
/// and 1 for the others.
int mistake_variants(mistake m);

/// The stage where way `variant` of `m` is made (softmax); nullopt for none.
std::optional<stage_id> mistake_stage(mistake m, int variant = 0);

/// Whether `m` changes which keys the mask allows (the mask stage's mistakes but
/// mask_inverted): the mistake changes the mask's rules (mask_rules) as it makes them.
bool changes_mask_rules(mistake m);

}  // namespace attn
