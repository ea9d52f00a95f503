// advice: the warnings about settings, here those about a causal mask with Sq != Sk,
// which name the alignment used, what it means for the first and last queries, and
// the --causal-align for the other one.
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/teach/advice.hpp"

namespace {

attn::config causal(std::int64_t sq, std::int64_t sk, attn::causal_alignment align) {
    attn::config c;
    c.seq = sq;
    c.kv_seq = sk;
    c.mask.causal = true;
    c.mask.causal_align = align;
    return c;
}

}  // namespace

TEST_SUITE("advice") {

TEST_CASE("causal with Sq != Sk: the alignment used, and the flag for the other") {
    using attn::causal_alignment;
    SUBCASE("upper-left, Sq < Sk: the last keys are attended by no query") {
        const attn::warning_list w = attn::settings_advice(causal(3, 5, causal_alignment::upper_left));
        REQUIRE(w.size() == 1);
        CHECK(w[0].stage == "mask");
        CHECK(w[0].text ==
              "causal with Sq = 3 queries and Sk = 5 keys is aligned upper-left (--causal-align upper-left, the "
              "default), as torch.tril(torch.ones(3, 5)) and SDPA's is_causal: query i may attend keys j <= i, so "
              "the last 2 keys are attended by no query; a KV-cache decoder aligns lower-right: --causal-align "
              "lower-right");
    }
    SUBCASE("upper-left, Sq > Sk: the last queries may attend every key") {
        const attn::warning_list w = attn::settings_advice(causal(5, 3, causal_alignment::upper_left));
        REQUIRE(w.size() == 1);
        CHECK(w[0].text.find("so queries 3..4 may attend every key; a KV-cache decoder aligns lower-right: "
                             "--causal-align lower-right") != std::string::npos);
    }
    SUBCASE("lower-right, Sq < Sk: tril's diagonal Sk - Sq, and the flag for upper-left") {
        const attn::warning_list w = attn::settings_advice(causal(2, 5, causal_alignment::lower_right));
        REQUIRE(w.size() == 1);
        CHECK(w[0].text ==
              "causal with Sq = 2 queries and Sk = 5 keys is aligned lower-right (--causal-align lower-right), as "
              "torch.tril(torch.ones(2, 5), diagonal=3), flash-attention and KV-cache decoding: query i may attend "
              "keys j <= i + 3, so query 0 sees keys 0..3 (3 earlier keys, as a KV cache holds, and its own) and "
              "the last query sees every key; torch.tril and SDPA's is_causal align upper-left: --causal-align "
              "upper-left");
    }
    SUBCASE("lower-right, Sq > Sk: the first queries may attend no key") {
        const attn::warning_list w = attn::settings_advice(causal(5, 2, causal_alignment::lower_right));
        REQUIRE(w.size() == 1);
        CHECK(w[0].text.find("as torch.tril(torch.ones(5, 2), diagonal=-3), flash-attention and KV-cache "
                             "decoding: query i may attend keys j <= i - 3, so queries 0..2 may attend no key") !=
              std::string::npos);
    }
    SUBCASE("Sq == Sk: both alignments are the same mask, no warning") {
        CHECK(attn::settings_advice(causal(4, 4, causal_alignment::upper_left)).empty());
        CHECK(attn::settings_advice(causal(4, 4, causal_alignment::lower_right)).empty());
    }
}

}
