#include "attn/teach/mistake_text.hpp"

#include <cmath>

#include "attn/teach/stage_text.hpp"

namespace attn {
namespace {

/// A fill as Python writes it: float('-inf'), -1e9, 0.
std::string python_fill(float fill, const std::string& typed) {
    if (std::isinf(fill)) return fill < 0 ? "float('-inf')" : "float('inf')";
    return typed.empty() ? fill_to_string(fill) : typed;
}

std::string right_fill(const config& c) { return python_fill(c.fill, fill_text(c)); }

std::string wrong_fill(const config& c) {
    const float f = mistaken_fill(c, c.mistake_variant);
    return python_fill(f, f == -1e9f ? "-1e9" : "");
}

std::string sqrt_dk(const config& c) { return short_number(std::sqrt(static_cast<double>(c.head_dim()))); }

/// wrong_scale's divisor in words: "√D = 2.8284", "D = 8", "dk = 2".
std::string wrong_divisor(const config& c) {
    if (c.mistake_variant == 0) return "√D = " + short_number(std::sqrt(static_cast<double>(c.d_model)));
    if (c.mistake_variant == 1) return "D = " + std::to_string(c.d_model);
    return "dk = " + std::to_string(c.head_dim());
}

/// What the mistake does, in a few words, for the warning.
std::string what_is_done(const config& c) {
    const int way = c.mistake_variant;
    switch (c.mistake) {
        case mistake::softmax_axis:
            return way == 0 ? "softmax over the queries (dim=-2) instead of the keys (dim=-1)"
                            : "softmax over the heads (dim=1) instead of the keys (dim=-1)";
        case mistake::missing_scale: return "the scores are not divided by √dk = " + sqrt_dk(c);
        case mistake::wrong_scale:
            return "the scores are divided by " + wrong_divisor(c) + " instead of √dk = " + sqrt_dk(c);
        case mistake::mask_inverted:
            return "the mask is inverted (each query may attend exactly the keys it must not)";
        case mistake::fill_value:
            return "masked positions get " + fill_to_string(mistaken_fill(c, way)) + " instead of " + fill_text(c);
        case mistake::split_without_transpose:
            return "the heads are split with a plain q.view(B,H,S,dk), without view(B,S,H,dk).transpose(1, 2)";
        case mistake::merge_without_transpose:
            return "the heads are merged with a plain context.view(B,Sq,D), without transpose(1, 2) first";
        case mistake::weight_not_transposed:
            return way == 0   ? "Q, K, V = x·W, not x·Wᵀ"
                   : way == 1 ? "every projection is x·W, not x·Wᵀ (Q, K, V and the output)"
                              : "out = concat·W_o, not concat·W_oᵀ";
        case mistake::q_k_swapped: return "the scores are K·Qᵀ instead of Q·Kᵀ";
        case mistake::missing_bias:
            return way == 0   ? "Q, K, V without their biases b_q, b_k, b_v"
                   : way == 1 ? "every projection without its bias (b_q, b_k, b_v and b_o)"
                              : "the output projection without its bias b_o";
        case mistake::none: break;
    }
    return {};
}

std::string projections_formula(const config& c, bool transposed, bool bias) {
    const std::string x_kv = c.cross() ? "X_kv" : "X";
    const auto one = [&](const char* out, const std::string& x, const char* letter) {
        std::string f = std::string(out) + " = " + x + "·W_" + letter + (transposed ? "ᵀ" : "");
        if (bias && c.qkv_bias) f += std::string(" + b_") + letter;
        return f;
    };
    return one("Q", "X", "q") + ", " + one("K", x_kv, "k") + ", " + one("V", x_kv, "v");
}

/// The formula of `stage` with the mistake, before the "(--mistake ID, on purpose)" note; empty when unchanged.
std::string changed_formula(const config& c, std::string_view stage) {
    const int way = c.mistake_variant;
    const std::string logits = c.mask.any() ? "masked" : "scaled";
    switch (c.mistake) {
        case mistake::softmax_axis:
            if (stage != "softmax") return {};
            return way == 0 ? "weights = softmax(" + logits + ", dim=-2): over the queries, not the keys"
                            : "weights = softmax(" + logits + ", dim=1): over the heads, not the keys";
        case mistake::missing_scale:
            return stage == "scaled" ? "scaled = scores, not scores / √dk" : "";
        case mistake::wrong_scale:
            return stage == "scaled" ? "scaled = scores / " + wrong_divisor(c) + ", not / √dk = " + sqrt_dk(c) : "";
        case mistake::mask_inverted:
            return stage == "mask" ? "mask = NOT the right mask: true where query i may NOT attend key j" : "";
        case mistake::fill_value:
            return stage == "masked" ? "masked = scaled.masked_fill(mask == false, " +
                                           fill_to_string(mistaken_fill(c, way)) + "), not " + fill_text(c)
                                     : "";
        case mistake::split_without_transpose:
            return stage == "transpose" ? "q = projections.q.view(B,H,S,dk): [B,S,D] read straight as [B,H,S,dk], "
                                          "without .view(B,S,H,dk).transpose(1, 2)"
                                        : "";
        case mistake::merge_without_transpose:
            return stage == "merge" ? "context.view(B,Sq,H,dk): [B,H,Sq,dk] read straight as [B,Sq,H,dk], "
                                      "without .transpose(1, 2)"
                                    : "";
        case mistake::weight_not_transposed:
            if (stage == "projections" && way <= 1) return projections_formula(c, false, true) + ": W not transposed";
            if (stage == "output" && way >= 1) return "out = concat·W_o + b_o: W_o not transposed";
            return {};
        case mistake::q_k_swapped:
            return stage == "scores" ? "K·Qᵀ, not Q·Kᵀ: [B,H,Sk,dk]·[B,H,dk,Sq] -> [B,H,Sk,Sq]" : "";
        case mistake::missing_bias:
            if (stage == "projections" && way <= 1) return projections_formula(c, true, false) + ": no biases";
            if (stage == "output" && way >= 1) return "out = concat·W_oᵀ: no b_o";
            return {};
        case mistake::none: break;
    }
    return {};
}

}  // namespace

std::string mistake_formula(const config& c, std::string_view stage) {
    const std::string f = changed_formula(c, stage);
    if (f.empty()) return f;
    return f + " (--mistake " + std::string(mistake_id(c.mistake)) + ", on purpose)";
}

std::string mistake_warning(const config& c) {
    if (c.mistake == mistake::none) return {};
    std::string text = "--mistake " + std::string(mistake_id(c.mistake)) + ": " + what_is_done(c) +
                       ", on purpose; every later stage follows from it";
    const bool every_linear = c.mistake == mistake::weight_not_transposed || c.mistake == mistake::missing_bias;
    if (every_linear && c.mistake_variant == 1)
        text += " (the output stage makes it again)";
    return text;
}

std::string mistake_diagnosis(const config& c) {
    const int way = c.mistake_variant;
    switch (c.mistake) {
        case mistake::softmax_axis:
            return way == 0 ? "your weights sum to 1 over the queries (dim=-2), not over the keys: use "
                              "torch.softmax(scores, dim=-1)"
                            : "your weights sum to 1 over the heads (dim=1), not over the keys: use "
                              "torch.softmax(scores, dim=-1), the last axis of [B,H,Sq,Sk]";
        case mistake::missing_scale:
            return "the scores are not divided by √dk = " + sqrt_dk(c) + ": use scores / math.sqrt(dk) with dk = D / H = " +
                   std::to_string(c.head_dim());
        case mistake::wrong_scale:
            return "the scores are divided by " + wrong_divisor(c) + ", not by √dk = " + sqrt_dk(c) +
                   " (dk = D / H, the head width): use scores / math.sqrt(dk)";
        case mistake::mask_inverted:
            return "your mask is inverted: each query attends exactly the keys it must not; with a keep-mask "
                   "(true = may attend, as torch.tril) fill where it is false: scores.masked_fill(mask == 0, " +
                   right_fill(c) + ")";
        case mistake::fill_value:
            if (way == 0 && mistaken_fill(c, way) == 0.0f)
                return "the masked scores are set to 0, not " + fill_text(c) +
                       ": a score of 0 still gets weight after softmax: use scores.masked_fill(mask == 0, " +
                       right_fill(c) + ")";
            return "the masked scores are " + wrong_fill(c) + ", not " + right_fill(c) +
                   ": a row with no allowed key then becomes " + (std::isinf(c.fill) ? "uniform, not NaN" : "NaN, not uniform") +
                   " (and the masked stage differs): use scores.masked_fill(mask == 0, " + right_fill(c) + ")";
        case mistake::split_without_transpose:
            return "the heads were split with a plain q.view(B, H, S, dk), which cuts the sequence instead of "
                   "the model width: use q.view(B, S, H, dk).transpose(1, 2)";
        case mistake::merge_without_transpose:
            return "the heads were merged with a plain context.view(B, Sq, D), which mixes positions and heads: "
                   "use context.transpose(1, 2).contiguous().view(B, Sq, D)";
        case mistake::weight_not_transposed:
            return std::string(way == 0   ? "the projections compute x·W"
                               : way == 1 ? "every projection, the output's too, computes x·W"
                                          : "the output projection computes concat·W_o") +
                   ", not x·Wᵀ: nn.Linear keeps W as [out, in], so use x @ W.T + b (or F.linear(x, W, b))";
        case mistake::q_k_swapped:
            return "the scores are K·Qᵀ, not Q·Kᵀ, so each row belongs to a key instead of a query: use "
                   "q @ k.transpose(-2, -1)";
        case mistake::missing_bias:
            return std::string(way == 0   ? "the projections leave out their biases b_q, b_k, b_v"
                               : way == 1 ? "every projection leaves out its bias (b_q, b_k, b_v and b_o)"
                                          : "the output projection leaves out its bias b_o") +
                   ": nn.Linear adds it, so use x @ W.T + b (or F.linear(x, W, b))";
        case mistake::none: break;
    }
    return {};
}

}  // namespace attn
