// The plan's work: what each stage a run computes costs, worked out by hand for small runs.
#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/compute/work.hpp"

namespace {

/// B 2, Sq 6, Sk 5 (cross-attention), Din 3, Dkv 4, D 8, H 2 (dk 4), no mask.
attn::config cross_config() {
    attn::config c;
    c.batch = 2;
    c.seq = 6;
    c.kv_seq = 5;
    c.d_in = 3;
    c.d_kv_in = 4;
    c.d_model = 8;
    c.heads = 2;
    attn::validate(c);
    return c;
}

attn::work of(const attn::run_plan& plan, attn::stage_id id) {
    const attn::planned_stage* s = plan.find(id);
    REQUIRE(s != nullptr);
    CHECK(s->computed);
    return s->cost;
}

bool in_list(const attn::run_plan& plan, attn::stage_id id) {
    const attn::planned_stage* s = plan.find(id);
    return s && s->computed;
}

}  // namespace

TEST_SUITE("work") {
    TEST_CASE("every stage, whole tensors: the products and the draws by hand") {
        const attn::config c = cross_config();
        const auto list = attn::make_plan(c, attn::stage_plan::every_stage());
        // weights: w_q 8·3, w_k and w_v 8·4 each, w_o 8·8; x 2·6·3, x_kv 2·5·4
        CHECK(of(list, attn::stage_id::input).draws == 24 + 64 + 64 + 36 + 40);
        // q: 2·(2·6)·3·8; k and v: 2·(2·5)·4·8 each
        CHECK(of(list, attn::stage_id::projections).flops == 576 + 2 * 640);
        // per plane [6,4] · [4,5], 4 planes
        CHECK(of(list, attn::stage_id::scores).flops == 2 * 6 * 5 * 4 * 4);
        CHECK(of(list, attn::stage_id::softmax).elements == 6 * 5 * 4);
        CHECK(of(list, attn::stage_id::context).flops == 2 * 6 * 5 * 4 * 4);  // [6,5] · [5,4] per plane
        CHECK(of(list, attn::stage_id::output).flops == 2 * 12 * 8 * 8);
        CHECK_FALSE(in_list(list, attn::stage_id::mask));  // no mask, no dropout: not in the run
        CHECK_FALSE(in_list(list, attn::stage_id::dropout));
    }

    TEST_CASE("in rows, only the rows shown count, and a shown stage is a pass from the scores") {
        const attn::config c = cross_config();
        attn::stage_plan plan = attn::stage_plan::of({"softmax"});
        plan.layout = attn::plane_layout::in_rows;
        plan.block_rows = 1;
        plan.shown_query = {true, false, false, false, false, true};  // 2 of 6 rows
        plan.shown_head = {false, true};                               // 1 of 2 heads
        const auto list = attn::make_plan(c, plan);
        CHECK(of(list, attn::stage_id::scores).flops == 0);  // not a pass of its own
        // softmax's pass: the scores of 2 rows of 2 planes ([2,4] · [4,5]), then scaled and softmax
        CHECK(of(list, attn::stage_id::softmax).flops == 2 * 2 * 5 * 4 * 2);
        CHECK(of(list, attn::stage_id::softmax).elements == 2 * (2 * 5) * 2);
        CHECK_FALSE(in_list(list, attn::stage_id::output));  // nothing after softmax is computed
        // x is drawn whether input is shown or not
        CHECK(of(list, attn::stage_id::input).draws > 0);
    }

    TEST_CASE("given projections draw nothing before them; seconds add up the three kinds") {
        attn::config c = cross_config();
        c.sources.from_projections = true;
        const auto list = attn::make_plan(c, attn::stage_plan::every_stage());
        CHECK_FALSE(in_list(list, attn::stage_id::input));
        CHECK(of(list, attn::stage_id::projections).flops == 0);
        CHECK(attn::seconds_of({10, 20, 30}, {10, 10, 10}) == doctest::Approx(6));
    }

    TEST_CASE("every stage does work: the elementwise stages make each element of their tensors once") {
        attn::config c = cross_config();  // made self-attention: Sq = Sk = 5, Din = Dkv = 3
        c.seq = c.kv_seq = 5;
        c.d_kv_in = c.d_in;
        c.pos = attn::position_encoding::alibi;
        c.mask.causal = true;
        attn::validate(c);
        const auto plan = attn::make_plan(c, attn::stage_plan::every_stage());
        CHECK(of(plan, attn::stage_id::alibi).elements == 2 * 5 * 5);       // bias [1,H,Sq,Sk]
        CHECK(of(plan, attn::stage_id::biased).elements == 2 * 2 * 5 * 5);  // a plane step
        CHECK(of(plan, attn::stage_id::mask).elements == 2 * 5 * 5);        // [B,1,Sq,Sk]
        CHECK(of(plan, attn::stage_id::concat).elements == 2 * 5 * 8);      // merge.contiguous() [B,Sq,D]
        CHECK(of(plan, attn::stage_id::view).elements == 0);                // views: no work
        c.pos = attn::position_encoding::rope;
        c.mask.causal = false;
        attn::validate(c);
        // cos, sin [Sq,dk] and the rotated q [B,H,Sq,dk] and k [B,H,Sk,dk]
        CHECK(of(attn::make_plan(c), attn::stage_id::rope).elements == 2 * 5 * 4 + 2 * (2 * 2 * 5 * 4));
    }
}
