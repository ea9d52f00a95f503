// The mistakes' ids (CLI.md), their ways, where each is made, and which runs cannot make them.
#include "attn/compute/mistake.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "attn/compute/config.hpp"

namespace attn {
namespace {

struct mistake_entry {
    mistake m;
    std::string_view id;
    int variants;
    std::optional<stage_id> stage;  // where it is made (way 2 of the projections' mistakes: output)
};

constexpr std::array<mistake_entry, 32> mistake_table{{
    {mistake::none, "none", 1, std::nullopt},
    {mistake::softmax_axis, "softmax_axis", 2, stage_id::softmax},
    {mistake::missing_scale, "missing_scale", 1, stage_id::scaled},
    {mistake::wrong_scale, "wrong_scale", 3, stage_id::scaled},
    {mistake::mask_inverted, "mask_inverted", 1, stage_id::mask},
    {mistake::fill_value, "fill_value", 2, stage_id::masked},
    {mistake::split_without_transpose, "split_without_transpose", 1, stage_id::transpose},
    {mistake::merge_without_transpose, "merge_without_transpose", 1, stage_id::merge},
    {mistake::weight_not_transposed, "weight_not_transposed", 3, stage_id::projections},
    {mistake::q_k_swapped, "q_k_swapped", 1, stage_id::scores},
    {mistake::missing_bias, "missing_bias", 3, stage_id::projections},
    {mistake::dropout_not_rescaled, "dropout_not_rescaled", 1, stage_id::dropout},
    {mistake::dropout_keep_inverted, "dropout_keep_inverted", 1, stage_id::dropout},
    {mistake::weights_transposed, "weights_transposed", 1, stage_id::context},
    {mistake::mask_not_applied, "mask_not_applied", 1, stage_id::masked},
    {mistake::mask_or_instead_of_and, "mask_or_instead_of_and", 1, stage_id::mask},
    {mistake::causal_only, "causal_only", 1, stage_id::mask},
    {mistake::padding_only, "padding_only", 1, stage_id::mask},
    {mistake::padding_on_queries, "padding_on_queries", 1, stage_id::mask},
    {mistake::diagonal_masked, "diagonal_masked", 1, stage_id::mask},
    {mistake::window_off_by_one, "window_off_by_one", 2, stage_id::mask},
    {mistake::masked_after_softmax, "masked_after_softmax", 1, stage_id::masked},  // masked = scaled, and the softmax zeroes
    {mistake::nan_replaced, "nan_replaced", 1, stage_id::softmax},
    {mistake::log_softmax, "log_softmax", 1, stage_id::softmax},
    {mistake::sigmoid_instead_of_softmax, "sigmoid_instead_of_softmax", 1, stage_id::softmax},
    {mistake::scale_multiplied, "scale_multiplied", 1, stage_id::scaled},
    {mistake::heads_interleaved, "heads_interleaved", 1, stage_id::transpose},
    {mistake::causal_misaligned, "causal_misaligned", 1, stage_id::mask},
    {mistake::kv_heads_tiled, "kv_heads_tiled", 1, stage_id::repeat_kv},
    {mistake::rope_positions_from_zero, "rope_positions_from_zero", 1, stage_id::rope},
    {mistake::rope_pairs_mixed, "rope_pairs_mixed", 1, stage_id::rope},  // and the cache's keys, rotated by the same code
    {mistake::alibi_sign, "alibi_sign", 1, stage_id::alibi},             // and biased, which adds it
}};

const mistake_entry& entry_of(mistake m) {
    for (const auto& e : mistake_table)
        if (e.m == m) return e;
    return mistake_table[0];
}

std::string n(std::int64_t value) { return std::to_string(value); }

/// x·W for q (and k, v): [B,S,Din]·[D,Din] multiplies only when Din == D.
std::string untransposed_projection_problem(const config& c) {
    if (c.sources.from_projections)
        return "the run starts at the projections (--q --k --v), so there are no q, k, v weights to use untransposed";
    const auto problem = [&](const char* x, const char* w, const char* width, std::int64_t in, std::int64_t seq) {
        const std::int64_t rows = c.batch * seq;  // torch.matmul folds [B,S,in] to [B*S,in]
        return std::string(x) + "·" + w + " multiplies " + x + " [B,S," + width + "] = [" + n(c.batch) + "," +
               n(seq) + "," + n(in) + "] by " + w + " [D," + width + "] = [" + n(c.d_model) + "," + n(in) +
               "], which needs " + width + " == D (here " + width + " = " + n(in) +
               ", D = " + n(c.d_model) + "); PyTorch stops with \"mat1 and mat2 shapes cannot be multiplied (" +
               n(rows) + "x" + n(in) + " and " + n(c.d_model) + "x" + n(in) + ")\". Give --d-in " + n(c.d_model) +
               (c.cross() ? " --d-kv-in " + n(c.d_model) : std::string()) + " to see this mistake";
    };
    if (c.d_in != c.d_model) return problem("x", "W_q", "Din", c.d_in, c.seq);
    if (c.d_kv_in != c.d_model) return problem("x_kv", "W_k", "Dkv", c.d_kv_in, c.kv_seq);
    return {};
}

const char* no_out_proj = "this run has no output projection (--no-out-proj)";

const char* needs_rope = "it needs rotary positions (--pos rope): without them nothing is rotated";

const char* needs_mask = "it needs a mask (--mask, --mask-file or --key-padding-mask): without one nothing is masked";

/// How many of the rule kinds causal, padding, window the mask has.
int rule_kinds(const mask_spec& m) { return int{m.causal} + int{m.padding} + int{m.window}; }

/// Why the mask-rule mistake `m` cannot be made with the mask `spec`; empty when it can.
std::string mask_rule_problem(mistake m, const mask_spec& spec) {
    switch (m) {
        case mistake::mask_or_instead_of_and:
            return rule_kinds(spec) >= 2 ? std::string()
                                         : "it needs two mask kinds of causal, padding and window (--mask "
                                           "causal+padding): with one there is nothing to join";
        case mistake::causal_only:
            return spec.causal && rule_kinds(spec) >= 2
                       ? std::string()
                       : "it needs the causal mask and another kind (--mask causal+padding) to leave out";
        case mistake::padding_only:
            return spec.padding && rule_kinds(spec) >= 2
                       ? std::string()
                       : "it needs the padding mask and another kind (--mask causal+padding) to leave out";
        case mistake::padding_on_queries:
            return spec.padding ? std::string() : "it needs the padding mask (--mask padding --lengths ...)";
        case mistake::diagonal_masked:
        case mistake::causal_misaligned:
            return spec.causal ? std::string() : "it needs the causal mask (--mask causal)";
        case mistake::window_off_by_one:
            return spec.window ? std::string() : "it needs the window mask (--mask window --window W)";
        default: return {};
    }
}

}  // namespace

std::string_view mistake_id(mistake m) { return entry_of(m).id; }

std::optional<mistake> parse_mistake(std::string_view id) {
    for (const auto& e : mistake_table)
        if (e.id == id) return e.m;
    return std::nullopt;
}

const std::vector<mistake>& all_mistakes() {
    static const std::vector<mistake> all = [] {
        std::vector<mistake> v;
        for (const auto& e : mistake_table)
            if (e.m != mistake::none) v.push_back(e.m);
        return v;
    }();
    return all;
}

int mistake_variants(mistake m) { return entry_of(m).variants; }

bool changes_mask_rules(mistake m) { return m != mistake::mask_inverted && entry_of(m).stage == stage_id::mask; }

std::optional<stage_id> mistake_stage(mistake m, int variant) {
    const std::optional<stage_id> stage = entry_of(m).stage;
    return stage == stage_id::projections && variant == 2 ? stage_id::output : stage;
}

float mistaken_fill(const config& c, int variant) {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    if (variant == 0) return c.fill == 0.0f ? neg_inf : 0.0f;  // masked_fill(mask == 0, 0): "zero the masked scores"
    return std::isinf(c.fill) ? -1e9f : neg_inf;                // -1e9 for -inf, and the other way round
}

std::string mistake_problem(const config& c) {
    const mistake m = c.mistake;
    const int way = c.mistake_variant;
    if (way < 0 || way >= mistake_variants(m)) return "there is no way " + n(way) + " to make it";
    switch (m) {
        case mistake::mask_inverted:
        case mistake::fill_value:
        case mistake::mask_not_applied:
        case mistake::masked_after_softmax:
            return c.mask.any() ? std::string() : needs_mask;
        case mistake::nan_replaced:
            if (!c.mask.any()) return needs_mask;
            if (!std::isinf(c.fill) || c.safe_softmax)
                return "it needs rows that softmax makes NaN: a fill of -inf (the default) without --safe-softmax";
            return {};
        case mistake::q_k_swapped:
            if (c.seq != c.kv_seq)
                return "K·Qᵀ is [B,H,Sk,Sq] = [" + n(c.batch) + "," + n(c.heads) + "," + n(c.kv_seq) + "," + n(c.seq) +
                       "], which the softmax's weights·V ([B,H,Sk,dk]) and a mask [B,1,Sq,Sk] cannot take when "
                       "Sq != Sk (here Sq = " + n(c.seq) + ", Sk = " + n(c.kv_seq) +
                       "); give --kv-seq " + n(c.seq) + " to see this mistake";
            return {};
        case mistake::dropout_not_rescaled:
        case mistake::dropout_keep_inverted:
            if (!c.dropout.applied())
                return "it needs dropout in training mode (--dropout P with P > 0 and --train): without it no "
                       "weight is dropped";
            return {};
        case mistake::weights_transposed:
            if (c.seq != c.kv_seq)
                return "weightsᵀ·V multiplies weightsᵀ [B,H,Sk,Sq] = [" + n(c.batch) + "," + n(c.heads) + "," +
                       n(c.kv_seq) + "," + n(c.seq) + "] by V [B,H,Sk,dk], which needs Sq == Sk (here Sq = " +
                       n(c.seq) + ", Sk = " + n(c.kv_seq) + "); give --kv-seq " + n(c.seq) + " to see this mistake";
            return {};
        case mistake::causal_misaligned:
            if (!c.mask.causal || c.seq != c.kv_seq) return mask_rule_problem(m, c.mask);
            return "with Sq == Sk both alignments are the same mask; give --past N (a KV-cache step: Sq new tokens "
                   "after N cached ones) or --kv-seq to see this mistake";
        case mistake::kv_heads_tiled:
            if (c.kv_head_count() > 1 && c.grouped()) return {};
            return "it needs --kv-heads G with 1 < G < --heads " + n(c.heads) +
                   ": with one kv head, or one per query head, tiling and repeat_interleave give the same heads";
        case mistake::rope_positions_from_zero:
            if (c.pos != position_encoding::rope) return needs_rope;
            if (c.past > 0) return {};
            return "it needs a decoding step (--past N with N > 0): without a cache the new tokens are at "
                   "positions 0..Sq-1, where counting from 0 is right";
        case mistake::rope_pairs_mixed:
            if (c.pos != position_encoding::rope) return needs_rope;
            if (c.head_dim() > 2) return {};
            return "with dk = 2 both pairings rotate the one pair (0, 1); give a head width dk = --d-model / "
                   "--heads of 4 or more to see this mistake";
        case mistake::alibi_sign:
            return c.pos == position_encoding::alibi ? std::string()
                                                     : "it needs ALiBi's bias (--pos alibi): without it there is no sign to flip";
        case mistake::weight_not_transposed:
            if (way == 2) return c.out_proj ? std::string() : no_out_proj;
            if (way == 1 && !c.out_proj) return no_out_proj;
            if (c.grouped())
                return "x·W_k multiplies x [B,S,Dkv] by W_k [G·dk,Dkv], which needs Dkv == G·dk; with --kv-heads "
                       "G < --heads it does not (G·dk < D = Dkv)";
            return untransposed_projection_problem(c);
        case mistake::missing_bias:
            if (way >= 1 && !c.out_proj) return no_out_proj;
            if (way == 2) return {};
            if (c.sources.from_projections) return "the run starts at the projections (--q --k --v): they have no bias to leave out";
            if (!c.qkv_bias) return "this run's q, k and v have no bias (--no-qkv-bias), so leaving it out changes nothing";
            return {};
        default: return mask_rule_problem(m, c.mask);  // the other mask-rule mistakes; {} for the rest
    }
}

}  // namespace attn
