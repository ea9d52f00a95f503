// The mistakes in words (mistake_text.hpp): the sentences are share/attn/text/mistakes.md's;
// here the values they name, and which section a run's mistake reads.
#include "attn/teach/mistake_text.hpp"

#include <cmath>
#include <vector>

#include "attn/teach/prose.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {
namespace {

/// A fill as Python writes it: float('-inf'), -1e9, 0.
std::string python_fill(float fill, const std::string& typed) {
    if (std::isinf(fill)) return fill < 0 ? "float('-inf')" : "float('inf')";
    return typed.empty() ? fill_to_string(fill) : typed;
}

/// wrong_scale's divisor: "√D = 2.8284", "D = 8", "dk = 2".
std::string wrong_divisor(const config& c) {
    if (c.mistake_variant == 0) return "√D = " + short_number(std::sqrt(static_cast<double>(c.d_model)));
    if (c.mistake_variant == 1) return "D = " + std::to_string(c.d_model);
    return "dk = " + std::to_string(c.head_dim());
}

/// A rope pairing's pairs, its rotate function and its emb, as Python writes them.
struct rope_words {
    const char *pairs, *rotate, *emb;
};
rope_words words_of(rope_pairing p) {
    if (p == rope_pairing::half) return {"(i, i + dk/2)", "rotate_half", "torch.cat((freqs, freqs), -1)"};
    return {"(2i, 2i + 1)", "rotate_every_two", "freqs.repeat_interleave(2, -1)"};
}

/// The values mistakes.md's sections name, for this run.
std::vector<prose_arg> mistake_values(const config& c) {
    const float wrong = mistaken_fill(c, c.mistake_variant);
    const bool lower_right = c.mask.causal_align == causal_alignment::lower_right;
    const rope_words right_rope = words_of(c.rope_style);
    const rope_words wrong_rope =
        words_of(c.rope_style == rope_pairing::half ? rope_pairing::interleaved : rope_pairing::half);
    return {{"id", std::string(mistake_id(c.mistake))},
            {"first", c.past},
            {"last", c.past + c.seq - 1},
            {"sq_last", c.seq - 1},
            {"past_last", c.past - 1},
            {"style", std::string(rope_pairing_name(c.rope_style))},
            {"pairs", right_rope.pairs},
            {"rotate", right_rope.rotate},
            {"emb", right_rope.emb},
            {"wrong_pairs", wrong_rope.pairs},
            {"wrong_rotate", wrong_rope.rotate},
            {"logits", c.mask.any() ? "masked" : "scaled"},
            {"dk", c.head_dim()},
            {"sqrt_dk", short_number(std::sqrt(static_cast<double>(c.head_dim())))},
            {"divisor", wrong_divisor(c)},
            {"fill", fill_text(c)},
            {"wrong_fill", fill_to_string(wrong)},
            {"right_python", python_fill(c)},
            {"wrong_python", python_fill(wrong, wrong == -1e9f ? "-1e9" : "")},
            {"window", c.mask.window_size.value_or(0)},
            {"align", lower_right ? "lower-right" : "upper-left"},
            {"wrong_align", lower_right ? "upper-left" : "lower-right"},
            {"diagonal", lower_right ? c.kv_seq - c.seq : 0},
            {"wrong_diagonal", lower_right ? 0 : c.kv_seq - c.seq},
            {"sq", c.seq},
            {"sk", c.kv_seq},
            {"align_note", lower_right ? "lower-right: the last query sees every key, as a KV-cache step needs"
                                       : "upper-left: query i sees keys j <= i, as torch.tril(ones) and is_causal"},
            {"window_wider", static_cast<std::uint64_t>(c.mask.window_size.value_or(0)) + 1},  // W >= 0: 2^63 fits
            {"G", c.kv_head_count()},
            {"per", c.heads / c.kv_head_count()},
            {"projections", projections_formula(c, c.mistake != mistake::weight_not_transposed,
                                                c.mistake != mistake::missing_bias)}};
}

/// Section "ID.PART" of mistakes.md, or "ID.PART.WAY" for the mistakes whose ways differ in words.
std::string mistake_prose(const config& c, const std::string& part) {
    std::string id = "mistakes." + std::string(mistake_id(c.mistake)) + "." + part;
    const bool ways_differ = c.mistake == mistake::softmax_axis || c.mistake == mistake::weight_not_transposed ||
                             c.mistake == mistake::missing_bias || c.mistake == mistake::window_off_by_one;
    if (ways_differ && part != "formula.projections" && part != "formula.output")
        id += "." + std::to_string(c.mistake_variant);
    return prose(id, mistake_values(c));
}

/// The formula of `stage` with the mistake, before the "(--mistake ID, on purpose)" note; empty when unchanged.
std::string changed_formula(const config& c, std::string_view stage) {
    if (c.mistake == mistake::none) return {};
    const int way = c.mistake_variant;
    if (c.mistake == mistake::weight_not_transposed || c.mistake == mistake::missing_bias) {
        // way 0: Q, K, V; way 1: every linear layer; way 2: the output projection
        if (stage == "projections" && way <= 1) return mistake_prose(c, "formula.projections");
        if (stage == "output" && way >= 1) return mistake_prose(c, "formula.output");
        return {};
    }
    return stage == info_of(*mistake_stage(c.mistake, way)).name ? mistake_prose(c, "formula") : std::string();
}

}  // namespace

std::string mistake_formula(const config& c, std::string_view stage) {
    const std::string f = changed_formula(c, stage);
    if (f.empty()) return f;
    return prose("mistakes.formula", {{"formula", f}, {"id", std::string(mistake_id(c.mistake))}});
}

std::string mistake_title(const config& c, std::string_view stage) {
    if (changed_formula(c, stage).empty()) return {};
    return prose("mistakes.title", {{"done", mistake_prose(c, "done")}, {"id", std::string(mistake_id(c.mistake))}});
}

std::string mistake_warning(const config& c) {
    if (c.mistake == mistake::none) return {};
    const bool every_linear = c.mistake == mistake::weight_not_transposed || c.mistake == mistake::missing_bias;
    return prose(every_linear && c.mistake_variant == 1 ? "mistakes.warning.again" : "mistakes.warning",
                 {{"id", std::string(mistake_id(c.mistake))}, {"done", mistake_prose(c, "done")}});
}

std::string mistake_diagnosis(const config& c) {
    if (c.mistake == mistake::none) return {};
    if (c.mistake != mistake::fill_value) return mistake_prose(c, "diagnosis");
    if (c.mistake_variant == 0 && mistaken_fill(c, 0) == 0.0f) return mistake_prose(c, "diagnosis.zero");
    return mistake_prose(c, std::isinf(c.fill) ? "diagnosis.uniform" : "diagnosis.nan");
}

}  // namespace attn
