// json_stream: --format json and jsonl written as the stages come, whole or in rows,
// give render_json's and render_json_line's bytes.
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/render/render_json.hpp"

namespace {

attn::config stream_config() {
    attn::config c;
    c.batch = 2;
    c.seq = c.kv_seq = 5;
    c.d_model = c.d_in = c.d_kv_in = 8;
    c.heads = 2;
    c.mask.causal = true;
    c.dropout.p = 0.25;
    c.dropout.train = true;
    attn::validate(c);
    return c;
}

std::string streamed(const attn::config& c, const attn::inputs& in, const attn::render_options& view, bool lines,
                     std::size_t block_rows) {
    std::ostringstream out;
    attn::stage_plan plan = attn::stage_plan::of(view.stages);
    plan.sink_keeps = false;  // it writes each stage out: the run goes on in place
    if (block_rows != 0) {
        plan.layout = attn::plane_layout::in_rows;
        plan.block_rows = block_rows;
    }
    attn::json_stream json(c, view, out, lines);
    json.finish(attn::compute_stages(c, in, plan, json));
    return out.str();
}

}  // namespace

TEST_SUITE("json_stream") {
    TEST_CASE("the streamed document is render_json's, whole or in rows of any size") {
        const attn::config c = stream_config();
        const attn::inputs in = attn::draw_inputs(c);
        const attn::trace t = attn::compute_trace(c, in);
        attn::render_options view;
        SUBCASE("every stage") {}
        SUBCASE("two stages") { view.stages = attn::stages(attn::stage_id::scores, attn::stage_id::dropout); }
        SUBCASE("a view") {
            view.head = 1;
            view.row = 3;
        }
        std::ostringstream expected;
        if (view.stages == 0) {
            attn::render_json(t, view, expected);
        } else {  // the trace of the shown stages only
            attn::trace shown;
            shown.cfg = t.cfg;
            shown.warnings = t.warnings;
            for (const attn::stage& s : t.stages)
                if (view.shows(s.id())) shown.stages.push_back(s);
            attn::render_json(shown, view, expected);
        }
        for (std::size_t rows : {0, 1, 2, 5}) {
            CAPTURE(rows);
            CHECK(streamed(c, in, view, false, rows) == expected.str());
        }
    }

    TEST_CASE("json lines: one stage a line, render_json_line's") {
        const attn::config c = stream_config();
        const attn::inputs in = attn::draw_inputs(c);
        const attn::trace t = attn::compute_trace(c, in);
        std::ostringstream expected;
        for (const attn::stage& s : t.stages) attn::render_json_line(t, s, attn::render_options{}, expected);
        CHECK(streamed(c, in, attn::render_options{}, true, 0) == expected.str());
        CHECK(streamed(c, in, attn::render_options{}, true, 3) == expected.str());
    }
}
