// stage_text: the formulas that change with --causal-align and --safe-softmax,
// and the run summary's mask line.
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/teach/stage_text.hpp"

namespace {

std::string mask_line(const attn::config& c) {
    for (const attn::run_line& line : attn::run_summary(c))
        if (line.label == "mask") return line.text;
    return {};
}

}  // namespace

TEST_SUITE("stage_text") {

TEST_CASE("the mask formula shows the causal alignment when Sq != Sk") {
    attn::config c;
    c.mask.causal = true;
    const std::string tail = "; true = query i may attend key j, the same for every head";
    SUBCASE("Sq == Sk: j <= i, whichever the alignment") {
        CHECK(attn::stage_formula(c, "mask") == "mask[b,0,i,j] = (j <= i)" + tail);
        c.mask.causal_align = attn::causal_alignment::lower_right;
        CHECK(attn::stage_formula(c, "mask") == "mask[b,0,i,j] = (j <= i)" + tail);
    }
    SUBCASE("Sq != Sk, upper-left") {
        c.kv_seq = 6;
        CHECK(attn::stage_formula(c, "mask") == "mask[b,0,i,j] = (j <= i, upper-left)" + tail);
    }
    SUBCASE("Sq < Sk, lower-right: j <= i + Sk - Sq, with the number") {
        c.kv_seq = 6;
        c.mask.causal_align = attn::causal_alignment::lower_right;
        c.mask.padding = true;
        c.mask.lengths = {4};
        CHECK(attn::stage_formula(c, "mask") ==
              "mask[b,0,i,j] = (j <= i + Sk - Sq = i + 2) AND (j < lengths[b])" + tail);
        CHECK(mask_line(c) == "causal+padding (lower-right; lengths 4), fill -inf");
    }
    SUBCASE("Sq > Sk, lower-right: a negative diagonal") {
        c.kv_seq = 1;
        c.mask.causal_align = attn::causal_alignment::lower_right;
        CHECK(attn::stage_formula(c, "mask") == "mask[b,0,i,j] = (j <= i + Sk - Sq = i - 3)" + tail);
    }
}

TEST_CASE("the softmax formula says what --safe-softmax does to an empty row") {
    attn::config c;
    CHECK(attn::stage_formula(c, "softmax") == "weights = softmax(scaled, dim=-1)");
    c.mask.causal = true;
    CHECK(attn::stage_formula(c, "softmax") == "weights = softmax(masked, dim=-1)");
    c.safe_softmax = true;
    CHECK(attn::stage_formula(c, "softmax") ==
          "weights = softmax(masked, dim=-1); a row with no allowed key (all -inf) gets 0 weights, not NaN "
          "(--safe-softmax, as torch._safe_softmax)");
    CHECK(mask_line(c) == "causal, fill -inf, --safe-softmax");
}

TEST_CASE("under --mistake, the title of the stage where it is made says what this run computes there") {
    attn::config c;
    CHECK(attn::stage_title(c, "scaled") == "scores scaled by the square root of the head width");
    c.mistake = attn::mistake::missing_scale;
    CHECK(attn::stage_title(c, "scaled") ==
          "the scores are not divided by √dk = 2 (--mistake missing_scale, on purpose)");
    CHECK(attn::stage_title(c, "softmax") == "attention weights: softmax over the key axis (last)");  // unchanged
    c.mistake = attn::mistake::softmax_axis;
    CHECK(attn::stage_title(c, "softmax") ==
          "softmax over the queries (dim=-2) instead of the keys (dim=-1) (--mistake softmax_axis, on purpose)");
    c.mistake = attn::mistake::weight_not_transposed;
    c.mistake_variant = 1;  // every linear layer
    CHECK(attn::stage_title(c, "projections").find("(--mistake weight_not_transposed, on purpose)") != std::string::npos);
    CHECK(attn::stage_title(c, "output").find("(--mistake weight_not_transposed, on purpose)") != std::string::npos);
}

}
