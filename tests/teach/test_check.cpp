// check: an answer against a stage of the run, and the mistake a wrong one makes.
//
// The answers are PyTorch's (tests/reference/make_mistake_fixtures.py: plain torch ops, each
// mistake written as a student writes it), never attn's own: each wrong one must be named by
// its id at the stage where it is made and at later ones, each right one must match. The
// wrong shapes are made here from the right answer (a missing transpose, a transposed
// plane, a lost head axis, ...) and their notes checked word for word.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "attn/compute/attention.hpp"
#include "attn/compute/error.hpp"
#include "attn/teach/check.hpp"
#include "support.hpp"

namespace {

attn::config checked_seed24() {
    attn::config c;
    c.seed = 24, c.batch = 2, c.seq = c.kv_seq = 5, c.d_model = c.d_in = c.d_kv_in = 8, c.heads = 4;
    c.mask.causal = true;
    attn::validate(c);
    return c;
}

/// The right run's tensor (what the PyTorch fixtures' right answers equal, test_mistakes.cpp).
xt::xarray<float> right_tensor(const attn::config& c, const std::string& stage, const std::string& tensor) {
    return run(c).find(stage)->at(tensor).values;
}

attn::check_report check(const attn::config& c, const std::string& stage, const std::string& tensor,
                         xt::xarray<float> answer) {
    return attn::check_answer(c, attn::draw_inputs(c), stage, tensor, answer_of(std::move(answer)));
}

}  // namespace

TEST_SUITE("check") {
    TEST_CASE("every PyTorch-made wrong answer is named by its mistake, at the stage made and later; right ones match") {
        std::size_t wrong = 0, right = 0;
        for (const auto& a : mistake_fixtures::all()) {
            CAPTURE(a.file);
            const attn::check_report r =
                attn::check_answer(a.cfg, attn::draw_inputs(a.cfg), a.stage, a.tensor, mistake_fixtures::read(a));
            CHECK(r.stage == a.stage);
            CHECK(r.tensor == a.tensor);
            if (a.mistake == "none") {
                CHECK(r.match);
                CHECK(r.diagnosis_id.empty());
                ++right;
            } else {
                CHECK_FALSE(r.match);
                CHECK(r.diagnosis_id == a.mistake);
                CHECK(r.diagnosis_stage == a.made_at);
                CHECK_FALSE(r.diagnosis_message.empty());
                wrong += a.stage != a.made_at;  // recognised downstream of where it is made
            }
        }
        CHECK(right >= 15);
        CHECK(wrong >= 40);
    }

    TEST_CASE("a mismatch reports the largest error, where, both values and how many elements differ") {
        const attn::config c = checked_seed24();
        xt::xarray<float> answer = right_tensor(c, "softmax", "weights");  // [2,4,5,5]
        const float was = answer(1, 2, 3, 1);
        answer(1, 2, 3, 1) += 0.25f;
        answer(0, 0, 4, 4) += 0.001f;
        const attn::check_report r = check(c, "softmax", "", answer);
        CHECK_FALSE(r.match);
        CHECK(r.tensor == "weights");
        CHECK(r.step.text() == "10");
        CHECK(r.max_error == doctest::Approx(0.25).epsilon(1e-5));
        CHECK(r.max_error_at == std::vector<std::size_t>{1, 2, 3, 1});
        CHECK(r.expected_at == doctest::Approx(was));
        CHECK(r.answer_at == doctest::Approx(was + 0.25f));
        CHECK(r.mismatched == 2);
        CHECK(r.diagnosis_id == "rows_not_normalized");  // the structure: row [1][2][3] sums to 1.25
        CHECK(r.diagnosis_stage.empty());
        CHECK(r.expected_dims == std::vector<std::string>{"batch", "head", "query", "key"});
    }

    TEST_CASE("within the tolerance is a match; the tolerance can be widened") {
        const attn::config c = checked_seed24();
        xt::xarray<float> answer = right_tensor(c, "context", "context");
        answer(0, 1, 2, 0) += 5e-6f;
        CHECK(check(c, "context", "", answer).match);
        answer(0, 1, 2, 0) += 1e-3f;
        CHECK_FALSE(check(c, "context", "", answer).match);
        CHECK(attn::check_answer(c, attn::draw_inputs(c), "12", "", answer_of(answer), {1e-2, 0}).match);
    }

    TEST_CASE("all_close: |a - e| <= atol + rtol·|e|, NaN equals NaN, an infinity only itself") {
        const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
        const attn::check_tolerance tol{0.1, 0.5};
        CHECK(attn::all_close(xt::xarray<float>{1.0f, nan, -inf}, xt::xarray<float>{1.5f, nan, -inf}, tol));
        CHECK_FALSE(attn::all_close(xt::xarray<float>{1.7f}, xt::xarray<float>{1.0f}, tol));  // 0.7 > 0.1 + 0.5
        CHECK_FALSE(attn::all_close(xt::xarray<float>{0.0f}, xt::xarray<float>{nan}, tol));
        CHECK_FALSE(attn::all_close(xt::xarray<float>{nan}, xt::xarray<float>{0.0f}, tol));
        CHECK_FALSE(attn::all_close(xt::xarray<float>{inf}, xt::xarray<float>{-inf}, tol));
        CHECK_FALSE(attn::all_close(xt::xarray<float>{1.0f, 2.0f}, xt::xarray<float>{{1.0f, 2.0f}}, tol));
    }

    TEST_CASE("a wrong shape: what it suggests") {
        const attn::config c = checked_seed24();  // B=2 Sq=5 D=8 H=4 dk=2
        SUBCASE("transpose answered with the view stage's [B,Sq,H,dk]") {
            const attn::check_report r = check(c, "transpose", "k", right_tensor(c, "view", "k"));
            CHECK(r.answer_shape == std::vector<std::size_t>{2, 5, 4, 2});
            CHECK(r.expected_shape == std::vector<std::size_t>{2, 4, 5, 2});
            CHECK(r.shape_note == "this is the view stage's shape [B,Sk,H,dk]: the transpose(1, 2) is missing");
            // [B,Sk,H,dk]'s numbers in order are k.view(B,H,Sk,dk)'s: a plain view, viewed back
            CHECK(r.diagnosis_id == "split_without_transpose");
        }
        SUBCASE("merge answered with context's [B,H,Sq,dk]") {
            CHECK(check(c, "merge", "", right_tensor(c, "context", "context")).shape_note ==
                  "this is the context stage's shape [B,H,Sq,dk]: the transpose(1, 2) back is missing");
        }
        SUBCASE("concat answered with merge's [B,Sq,H,dk]") {
            CHECK(check(c, "concat", "", right_tensor(c, "merge", "context")).shape_note ==
                  "this is the merge stage's shape [B,Sq,H,dk]: the heads are not joined: .contiguous().view(B, Sq, D); "
                  "the numbers are right, in order: .view(2, 5, 8) gives [B,Sq,D]");
        }
        SUBCASE("softmax without the head axis") {
            const xt::xarray<float> one_head = xt::view(right_tensor(c, "softmax", "weights"), xt::all(), 0);
            CHECK(check(c, "softmax", "", one_head).shape_note ==
                  "the head axis (H = 4, axis 1 of [B,H,Sq,Sk]) is missing: the heads are not kept apart (one "
                  "head's result, or summed or averaged over heads?)");
        }
        SUBCASE("the mask without its axis of size 1") {
            const xt::xarray<float> mask = xt::view(right_tensor(c, "mask", "mask"), xt::all(), 0);
            CHECK(check(c, "mask", "", mask).shape_note ==
                  "the head axis (H = 1, axis 1 of [B,H,Sq,Sk]) is missing: put it back with .unsqueeze(1) (the "
                  "mask is [B,1,Sq,Sk], one plane for every head); the numbers are right, in order: "
                  ".view(2, 1, 5, 5) gives [B,H,Sq,Sk]");
        }
        SUBCASE("an extra axis of size 1") {
            xt::xarray<float> out = right_tensor(c, "output", "out");
            out.reshape({1, 2, 5, 8});
            CHECK(check(c, "output", "", out).shape_note ==
                  "an extra axis of size 1 at position 0: .squeeze(0); the numbers are right, in order: "
                  ".view(2, 5, 8) gives [B,Sq,D]");
            xt::xarray<float> wrong = out * 2.0f;
            CHECK(check(c, "output", "", wrong).shape_note == "an extra axis of size 1 at position 0: .squeeze(0)");
        }
        SUBCASE("the axes in another order") {
            const xt::xarray<float> permuted = xt::transpose(right_tensor(c, "concat", "concat"), {1, 0, 2});
            CHECK(check(c, "concat", "", permuted).shape_note ==
                  "your axes are [Sq,B,D]: permute them to [B,Sq,D]");
        }
        SUBCASE("other sizes altogether") {
            CHECK(check(c, "concat", "", xt::zeros<float>({3, 3})).shape_note ==
                  "9 elements instead of 80 [B,Sq,D] = [2,5,8]");
            const attn::check_report r = check(c, "concat", "", xt::zeros<float>({3, 3}));
            CHECK(r.diagnosis_message ==
                  "no mistake attn knows gives an answer of this shape and these values: start from the shape");
        }
    }

    TEST_CASE("K·Qᵀ with Sq != Sk: a transposed plane, named by shape and diagnosed by values") {
        attn::config c;
        c.seq = 3, c.kv_seq = 5, c.d_model = c.d_in = c.d_kv_in = 4, c.heads = 2;
        attn::validate(c);
        const xt::xarray<float> swapped = xt::transpose(right_tensor(c, "scores", "scores"), {0, 1, 3, 2});
        const attn::check_report r = check(c, "scores", "", swapped);
        CHECK(r.shape_note ==
              "the last two axes are swapped ([B,H,Sk,Sq], not [B,H,Sq,Sk]): a transposed matrix, as K·Qᵀ gives "
              "instead of Q·Kᵀ (or a .transpose(-2, -1) too many)");
        CHECK(r.diagnosis_id == "q_k_swapped");
    }

    TEST_CASE("the stage by number; a stage or tensor the run lacks is a usage error") {
        const attn::config c = checked_seed24();
        const xt::xarray<float> w = right_tensor(c, "softmax", "weights");
        CHECK(check(c, "10", "", w).match);
        CHECK_THROWS_WITH_AS(check(c, "dropout", "", w),
                             "--stage dropout: this run has no dropout stage (it needs --dropout P with P > 0 and "
                             "--train)",
                             attn::usage_error);
        CHECK_THROWS_WITH_AS(check(c, "transpose", "x", w),
                             "--tensor x: the transpose stage has no tensor x (it has q, k, v)", attn::usage_error);
        CHECK_THROWS_AS(check(c, "99", "", w), attn::usage_error);
    }

    TEST_CASE("the run checked against is the right one, whatever config::mistake says") {
        attn::config c = checked_seed24();
        const xt::xarray<float> w = right_tensor(c, "softmax", "weights");
        c.mistake = attn::mistake::softmax_axis;
        CHECK(check(c, "softmax", "", w).match);
    }

    TEST_CASE("the right numbers in another shape: right_values_other_shape, with the view that fixes them") {
        const attn::config c = checked_seed24();  // weights [2,4,5,5]
        xt::xarray<float> bmm = right_tensor(c, "softmax", "weights");
        bmm.reshape({8, 5, 5});  // torch.bmm's [B·H,Sq,Sk]
        const attn::check_report r = check(c, "softmax", "", bmm);
        CHECK_FALSE(r.match);
        CHECK(r.diagnosis_id == "right_values_other_shape");
        CHECK(r.diagnosis_message == "your numbers are right; only the shape differs: .view(2, 4, 5, 5) gives [B,H,Sq,Sk]");
        CHECK(r.shape_note == "[B·H,Sq,Sk]: the axes B and H joined into one, as torch.bmm takes them; the numbers are "
                              "right, in order: .view(2, 4, 5, 5) gives [B,H,Sq,Sk]");
        attn::config one;  // B = H = 1: [Sq,Sk] for [1,1,Sq,Sk]
        one.seq = one.kv_seq = 4, one.heads = 1;
        attn::validate(one);
        xt::xarray<float> plane = right_tensor(one, "softmax", "weights");
        plane.reshape({4, 4});
        CHECK(check(one, "softmax", "", plane).diagnosis_id == "right_values_other_shape");
        SUBCASE("a mistake's numbers in another shape: the mistake, and the reshape") {
            attn::config wrong = c;
            wrong.mistake = attn::mistake::softmax_axis;
            xt::xarray<float> w = right_tensor(wrong, "softmax", "weights");
            w.reshape({8, 5, 5});
            const attn::check_report m = check(c, "softmax", "", w);
            CHECK(m.diagnosis_id == "softmax_axis");
            CHECK(m.diagnosis_message.find("; and the shape differs too: the numbers are the mistake's in order, so "
                                           ".view(2, 4, 5, 5) gives its shape") != std::string::npos);
        }
    }

    TEST_CASE("the structure: where a mask mistake shows; what departs when no mistake fits") {
        const attn::config c = checked_seed24();  // causal: query 0 may attend key 0 only
        const xt::xarray<float> w = right_tensor(c, "softmax", "weights");
        SUBCASE("a named mistake says where it first shows") {
            attn::config wrong = c;
            wrong.mistake = attn::mistake::mask_not_applied;
            const attn::check_report r = check(c, "softmax", "", right_tensor(wrong, "softmax", "weights"));
            CHECK(r.diagnosis_id == "mask_not_applied");
            CHECK(r.diagnosis_message.find("; it shows first where query 0 → key 1 (batch 0, head 0) has weight ") !=
                  std::string::npos);
            CHECK(r.diagnosis_message.find(" where the causal mask forbids it") != std::string::npos);
        }
        SUBCASE("weight where the mask forbids") {
            xt::xarray<float> a = w;
            a(1, 2, 1, 3) = 0.25f;
            const attn::check_report r = check(c, "softmax", "", a);
            CHECK(r.diagnosis_id == "weight_where_masked");
            CHECK(r.diagnosis_message ==
                  "query 1 → key 3 (batch 1, head 2) has weight 0.25 where the causal mask forbids it: the causal "
                  "mask was not applied there; fill the forbidden scores with float('-inf') before the softmax: "
                  "scores.masked_fill(mask == 0, ...)");
        }
        SUBCASE("a score other than the fill where the mask forbids, at the masked stage") {
            xt::xarray<float> a = right_tensor(c, "masked", "masked");
            a(0, 0, 0, 4) = -1e9f;
            CHECK(check(c, "masked", "", a).diagnosis_id == "weight_where_masked");
        }
        SUBCASE("no weight where the mask allows") {
            xt::xarray<float> a = w;
            a(0, 1, 3, 2) = 0.0f;
            const attn::check_report r = check(c, "softmax", "", a);
            CHECK(r.diagnosis_id == "zero_where_allowed");
            CHECK(r.diagnosis_message.rfind("query 3 → key 2 (batch 0, head 1) has weight 0 where the mask allows it "
                                            "(expected 0.",
                                            0) == 0);
        }
        SUBCASE("rows not summing to 1") {
            const attn::check_report r = check(c, "softmax", "", xt::xarray<float>(w * 0.5f));
            CHECK(r.diagnosis_id == "rows_not_normalized");
            CHECK(r.diagnosis_message == "the weights of query 0 (batch 0, head 0) sum to 0.5, not 1: softmax over the "
                                         "keys makes each row sum to 1: torch.softmax(scores, dim=-1)");
        }
        SUBCASE("each plane transposed") {
            const xt::xarray<float> t = xt::transpose(w, {0, 1, 3, 2});
            const attn::check_report r = check(c, "softmax", "", t);
            CHECK(r.diagnosis_id == "planes_transposed");
            CHECK(r.diagnosis_message == "each [Sq,Sk] plane of your weights is the right one transposed: query i → key j "
                                         "holds query j → key i's; a .transpose(-2, -1) too many (or the rows read as "
                                         "columns)");
        }
        SUBCASE("another stage has no structure to read") {
            xt::xarray<float> a = right_tensor(c, "scaled", "scaled") * 3.0f;
            CHECK(check(c, "scaled", "", a).diagnosis_id == "unknown");
        }
    }
}
