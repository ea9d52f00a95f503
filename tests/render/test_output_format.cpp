// The format table (output_format.hpp) and the run policy it implies: which formats show the
// plan alone, what a run of each holds and computes, and what the free-space check counts.
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/render/output_format.hpp"

namespace {

attn::config format_config() {
    attn::config c;
    c.batch = 2;
    c.seq = c.kv_seq = 40;  // planes of 1600 elements: the table prints some rows only
    c.heads = 2;
    c.d_model = c.d_in = c.d_kv_in = 8;
    c.mask.causal = true;
    return c;
}

}  // namespace

TEST_SUITE("output_format") {
    TEST_CASE("every --format has one row, dot last; --row makes the table's bars") {
        const std::vector<std::string> names = attn::output_format_names();
        CHECK(names == std::vector<std::string>{"table", "json", "jsonl", "npz", "torch", "py", "heatmap", "svg", "png",
                                                "html", "dot"});
        CHECK(attn::output_format_named("table", true).sink == attn::format_sink::row_bars);
        CHECK(attn::output_format_named("json", true).sink == attn::format_sink::json);
        CHECK_THROWS_WITH_AS(attn::output_format_named("csv", false), "--format csv: no such format", attn::usage_error);
    }

    TEST_CASE("plan_only: --shapes, dot, and --graph where the graph replaces the stages") {
        const auto& table = attn::output_format_named("table", false);
        const auto& html = attn::output_format_named("html", false);
        const auto& svg = attn::output_format_named("svg", false);
        CHECK(attn::plan_only(table, true, false));
        CHECK_FALSE(attn::plan_only(table, false, false));
        CHECK(attn::plan_only(attn::output_format_named("dot", false), false, false));
        CHECK(attn::plan_only(svg, false, true));
        CHECK_FALSE(attn::plan_only(html, false, true));  // the graph beside the stages
        CHECK(attn::plan_only(table, false, true));       // refused there, with the flags named
    }

    TEST_CASE("a picture draws softmax unless --stage names a drawable stage") {
        const attn::config c = format_config();
        attn::render_options view;
        attn::fit_view_to_format(c, attn::output_format_named("png", false), "", view);
        CHECK(view.stages == attn::stage_bit(attn::stage_id::softmax));
        attn::render_options input_only;
        input_only.stages = attn::stage_bit(attn::stage_id::input);
        CHECK_THROWS_AS(attn::fit_view_to_format(c, attn::output_format_named("svg", false), "input", input_only),
                        attn::usage_error);
        attn::render_options all;
        attn::fit_view_to_format(c, attn::output_format_named("json", false), "", all);
        CHECK(all.stages == 0);
    }

    TEST_CASE("plan_output: a streaming format keeps nothing, pictures keep every stage and show the mask") {
        const attn::config c = format_config();
        attn::render_options softmax;
        softmax.stages = attn::stage_bit(attn::stage_id::softmax);
        const attn::stage_plan json = attn::plan_output(c, attn::output_format_named("json", false), softmax, 0);
        CHECK_FALSE(json.sink_keeps);
        CHECK_FALSE(json.shows(attn::stage_id::mask));
        const attn::stage_plan png = attn::plan_output(c, attn::output_format_named("png", false), softmax, 0);
        CHECK(png.sink_keeps);
        CHECK(png.shows(attn::stage_id::mask));  // the masked keys are drawn
    }

    TEST_CASE("plan_output: the table computes only the rows it prints, but every row with --stats or --full") {
        const attn::config c = format_config();
        const attn::output_format& table = attn::output_format_named("table", false);
        attn::render_options view;
        view.stages = attn::stage_bit(attn::stage_id::softmax);
        CHECK(attn::plan_output(c, table, view, 0).shown_query.size() == 40);  // marks the first and last 3 rows
        view.stats = true;
        CHECK(attn::plan_output(c, table, view, 0).shown_query.empty());  // empty: every row
        attn::render_options full;
        full.stages = view.stages;
        full.full = true;
        CHECK(attn::plan_output(c, table, full, 0).shown_query.empty());
        CHECK(attn::plan_output(c, table, full, 0).sink_keeps);  // --full: whole stages
    }

    TEST_CASE("least_format_bytes: json 2 bytes an element, npz 4, the table only with --full, pictures none") {
        const attn::config c = format_config();
        attn::render_options weights;  // softmax's weights [B,H,Sq,Sk] = [2,2,40,40]: 6400 elements
        weights.stages = attn::stage_bit(attn::stage_id::softmax);
        CHECK(attn::least_format_bytes(c, attn::output_format_named("json", false), weights) == 12800);
        CHECK(attn::least_format_bytes(c, attn::output_format_named("npz", false), weights) == 25600);
        CHECK(attn::least_format_bytes(c, attn::output_format_named("table", false), weights) == 0);
        CHECK(attn::least_format_bytes(c, attn::output_format_named("png", false), weights) == 0);
        CHECK(attn::least_format_bytes(c, attn::output_format_named("py", false), weights) == 0);
        weights.row = 7;  // [2,2,1,40]
        CHECK(attn::least_format_bytes(c, attn::output_format_named("jsonl", false), weights) == 320);
        weights.full = true;
        CHECK(attn::least_format_bytes(c, attn::output_format_named("torch", false), weights) == 320);
        attn::render_options mask;  // the mask [B,1,Sq,Sk] = [2,1,40,40]: booleans, 4 bytes in JSON, 1 in npz
        mask.stages = attn::stage_bit(attn::stage_id::mask);
        CHECK(attn::least_format_bytes(c, attn::output_format_named("json", false), mask) == 12800);
        CHECK(attn::least_format_bytes(c, attn::output_format_named("npz", false), mask) == 3200);
    }
}
