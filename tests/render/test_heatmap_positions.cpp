// The pictures of the position stages (heatmap_panels.hpp): the sinusoidal table pe
// [S,Din] and rope's cos and sin [Sq,dk] as one panel each, positions down; alibi's
// bias [1,H,Sq,Sk] as one panel per head, the same for every batch item. The trace is
// built by hand (values chosen so that each check can fail), then a real run checks that
// the stages' tensors, as compute names their dims, are the ones drawn.
#include <cmath>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/render/heatmap_figure.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "attn/render/heatmap_terminal.hpp"
#include "support.hpp"

namespace {

/// Two batch items, two heads, three queries and keys, Din 4, dk 2; a decoding step
/// with `past` cached tokens (the table's rows then hold positions past.. of the queries).
attn::trace position_trace(std::int64_t past = 0) {
    attn::trace t;
    t.cfg.batch = 2;
    t.cfg.heads = 2;
    t.cfg.seq = 3;
    t.cfg.kv_seq = 3 + past;
    t.cfg.past = past;
    t.cfg.d_in = t.cfg.d_model = 4;
    // pe [S,Din]: 0.1·(4p + f) - 0.5, signed; never beyond ±1 (the fixed scale's ends)
    xt::xarray<float> pe = xt::zeros<float>({3, 4});
    for (std::size_t p = 0; p < 3; ++p)
        for (std::size_t f = 0; f < 4; ++f) pe(p, f) = 0.1f * static_cast<float>(4 * p + f) - 0.5f;
    const xt::xarray<float> cos = {{1.0f, 1.0f}, {0.5f, 0.9f}, {-0.4f, 0.8f}};  // [Sq,dk]
    const xt::xarray<float> sin = {{0.0f, 0.0f}, {0.8f, 0.1f}, {0.9f, 0.2f}};
    xt::xarray<float> bias = xt::zeros<float>({1, 2, 3, 3});  // -m_h·(i - j), m = 1/4, 1/16
    for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 3; ++j)
                bias(0, h, i, j) = -(h == 0 ? 0.25f : 0.0625f) * (static_cast<float>(i) - static_cast<float>(j));
    const xt::xarray<float> x = xt::zeros<float>({2, 3, 4});
    const xt::xarray<float> q = xt::zeros<float>({2, 2, 3, 2});
    t.stages.push_back(make_stage("positions", {{"pe", {past == 0 ? "seq" : "kv_seq", "d_in"}, pe},
                                                {"x", {"batch", past == 0 ? "seq" : "kv_seq", "d_in"}, x}}));
    t.stages.push_back(make_stage("rope", {{"cos", {"seq", "head_dim"}, cos},
                                           {"sin", {"seq", "head_dim"}, sin},
                                           {"q", {"batch", "head", "seq", "head_dim"}, q}}));
    t.stages.push_back(make_stage("alibi", {{"bias", bhqk, bias}}));
    return t;
}

const attn::heatmap::tensor_heatmap& find_drawn(const std::vector<attn::heatmap::tensor_heatmap>& hs,
                                                std::string_view name) {
    for (const auto& h : hs)
        if (h.name() == name) return h;
    FAIL("no heatmap " << name);
    return hs.front();
}

}  // namespace

TEST_SUITE("heatmap positions") {
    TEST_CASE("the position tables and the bias are drawn; x and the rotated q are not") {
        const attn::trace t = position_trace();
        const auto hs = attn::heatmap::collect(t, {}, 64);
        REQUIRE(hs.size() == 4);
        CHECK(hs[0].name() == "positions.pe");
        CHECK(hs[1].name() == "rope.cos");
        CHECK(hs[2].name() == "rope.sin");
        CHECK(hs[3].name() == "alibi.bias");
        CHECK(attn::heatmap::drawable(attn::stage_id::positions));
        CHECK(attn::heatmap::drawable(attn::stage_id::rope));
        CHECK(attn::heatmap::drawable(attn::stage_id::alibi));
        CHECK_FALSE(attn::heatmap::drawable(attn::stage_id::projections));
    }

    TEST_CASE("a table is one panel, positions down and features across, the same for every batch item and head") {
        const attn::trace t = position_trace();
        const auto hs = attn::heatmap::collect(t, {}, 64);
        const auto& pe = find_drawn(hs, "positions.pe");
        REQUIRE(pe.panels.size() == 1);
        CHECK(pe.table());
        CHECK(pe.panels[0].every_batch);
        CHECK_FALSE(pe.panels[0].head.has_value());
        CHECK(pe.panels[0].queries == std::vector<std::size_t>{0, 1, 2});
        CHECK(pe.panels[0].keys == std::vector<std::size_t>{0, 1, 2, 3});
        CHECK(pe.at(pe.panels[0], 2, 3) == doctest::Approx(0.6f));  // pe[2,3] = 0.1·11 - 0.5
        CHECK(pe.rows.label == "position");
        CHECK(pe.columns.label == "feature");
        CHECK(find_drawn(hs, "rope.cos").columns.label == "head dim");
        CHECK(attn::heatmap::place(pe.panels[0]) == "every batch item and head");
        CHECK(attn::heatmap::title(pe, pe.panels[0]) == "positions.pe — every batch item and head");
        CHECK(attn::heatmap::panel_id(pe, pe.panels[0]) == "positions-pe");
    }

    TEST_CASE("sines and cosines are drawn on -1 .. 1, whatever the values drawn; --vmin and --vmax still rule") {
        const attn::trace t = position_trace();
        auto hs = attn::heatmap::collect(t, {}, 64);
        for (const char* name : {"positions.pe", "rope.cos", "rope.sin"}) {
            const auto& h = find_drawn(hs, name);
            CHECK(h.scale.lo == -1.0f);
            CHECK(h.scale.hi == 1.0f);
        }
        attn::render_options forced;
        forced.vmax = 0.5f;
        hs = attn::heatmap::collect(t, forced, 64);
        CHECK(find_drawn(hs, "positions.pe").scale.lo == -1.0f);
        CHECK(find_drawn(hs, "positions.pe").scale.hi == 0.5f);
    }

    TEST_CASE("the bias: a panel per head, the same for every batch item, on one scale symmetric around 0") {
        const attn::trace t = position_trace();
        const auto hs = attn::heatmap::collect(t, {}, 64);
        const auto& bias = find_drawn(hs, "alibi.bias");
        REQUIRE(bias.panels.size() == 2);  // [1,H,Sq,Sk]: not one per batch item of the run
        CHECK_FALSE(bias.table());
        CHECK(bias.panels[1].head == std::optional<std::size_t>(1));
        CHECK(bias.panels[1].every_batch);
        CHECK(attn::heatmap::place(bias.panels[1]) == "head 1 (every batch item)");
        CHECK(attn::heatmap::panel_id(bias, bias.panels[1]) == "alibi-bias-h1");
        CHECK(bias.scale.lo == -0.5f);  // head 0's corner: -(1/4)·2, shared by head 1's panel
        CHECK(bias.scale.hi == 0.5f);
        CHECK(bias.rows.label == "query i");
    }

    TEST_CASE("--batch-index keeps the tables and the bias; --head picks the bias's head, not the tables'") {
        const attn::trace t = position_trace();
        attn::render_options view;
        view.batch_index = 1;
        view.head = 1;
        const auto hs = attn::heatmap::collect(t, view, 64);
        REQUIRE(hs.size() == 4);
        CHECK(find_drawn(hs, "positions.pe").panels.size() == 1);
        const auto& bias = find_drawn(hs, "alibi.bias");
        REQUIRE(bias.panels.size() == 1);
        CHECK(bias.panels[0].head == std::optional<std::size_t>(1));
        CHECK(bias.panels[0].batch == 0);  // the bias's only batch index
    }

    TEST_CASE("--row keeps a query's row of a table whose rows are the queries' positions") {
        const attn::trace t = position_trace();
        attn::render_options row;
        row.row = 2;
        auto hs = attn::heatmap::collect(t, row, 64);
        const auto& cos = find_drawn(hs, "rope.cos");
        CHECK(cos.panels[0].queries == std::vector<std::size_t>{2});
        CHECK(attn::heatmap::crop_note(cos, cos.panels[0]) == "position 2 of 3");
        // In a decoding step pe covers the cache's positions too (kv_seq): kept whole.
        const attn::trace step = position_trace(2);
        hs = attn::heatmap::collect(step, row, 64);
        CHECK(find_drawn(hs, "positions.pe").panels[0].queries.size() == 3);
    }

    TEST_CASE("in a decoding step rope's rows are numbered from the first query's position") {
        const attn::trace t = position_trace(5);
        const auto hs = attn::heatmap::collect(t, {}, 2);
        const auto& cos = find_drawn(hs, "rope.cos");
        CHECK(cos.first_row == 5);
        CHECK(cos.row_number(1) == 6);
        CHECK(attn::heatmap::crop_note(cos, cos.panels[0]) == "positions 5–6 of 5–7");
        CHECK(find_drawn(hs, "positions.pe").first_row == 0);  // kv_seq: every position from 0
        const auto& pe = find_drawn(hs, "positions.pe");
        CHECK(attn::heatmap::crop_note(pe, pe.panels[0]) == "positions 0–1 of 3, features 0–1 of 4");
    }

    TEST_CASE("the terminal labels a table's axes position and feature, its rows by position") {
        const attn::trace t = position_trace(5);
        attn::render_options options;
        options.stages = attn::stages(attn::stage_id::rope);
        std::ostringstream out;
        attn::render_heatmap_terminal(t, options, out, 80);
        const std::string text = out.str();
        // cos [[1, 1], [0.5, 0.9], [-0.4, 0.8]] on -1 .. 1: 1 is the top shade, 0.5 (at 0.75 of the
        // scale) the one below, -0.4 (at 0.3) the middle one: the scale is not the values' 0.5 .. 1
        const std::string expected =
            "cos [3,2] (seq, head_dim)\n"
            "  every batch item and head\n"
            "         dim  0 1\n"
            "  position 5 ████\n"
            "           6 ▓▓██\n"
            "           7 ▒▒██\n"
            "  -1.0000 [  ░░▒▒▓▓██] 1.0000\n";
        CHECK(text.find(expected) != std::string::npos);
        if (text.find(expected) == std::string::npos) MESSAGE(text);
    }

    TEST_CASE("the message lists the drawable stages this run has") {
        attn::config c;
        c.pos = attn::position_encoding::alibi;
        CHECK(attn::heatmap::drawable_stages_text(c) == "scores, scaled, alibi, biased, softmax");
        c.pos = attn::position_encoding::sinusoidal;
        c.mask.causal = true;
        CHECK(attn::heatmap::drawable_stages_text(c) == "positions, scores, scaled, mask, masked, softmax");
    }

    TEST_CASE("a real run: pe, cos and sin, and the bias as compute names their axes, are drawn") {
        attn::config c;
        c.seq = c.kv_seq = 3;
        c.pos = attn::position_encoding::sinusoidal;
        attn::render_options options;
        options.stages = attn::stages(attn::stage_id::positions);
        attn::trace t = run(c);
        auto hs = attn::heatmap::collect(t, options, 64);
        REQUIRE(hs.size() == 1);
        CHECK(hs[0].name() == "positions.pe");
        CHECK(hs[0].at(hs[0].panels[0], 1, 0) == doctest::Approx(std::sin(1.0)));  // pe[1,0] = sin(1)
        CHECK(hs[0].at(hs[0].panels[0], 1, 1) == doctest::Approx(std::cos(1.0)));  // pe[1,1] = cos(1)

        c.pos = attn::position_encoding::rope;
        c.past = 2;
        c.kv_seq = 5;
        options.stages = attn::stages(attn::stage_id::rope);
        t = run(c);
        hs = attn::heatmap::collect(t, options, 64);
        REQUIRE(hs.size() == 2);
        CHECK(hs[0].name() == "rope.cos");
        CHECK(hs[0].first_row == 2);
        CHECK(hs[0].at(hs[0].panels[0], 0, 0) == doctest::Approx(std::cos(2.0)));  // position 2, θ = 2·1

        c.pos = attn::position_encoding::alibi;
        c.past = 0;
        c.kv_seq = 3;
        c.batch = 2;
        options.stages = attn::stages(attn::stage_id::alibi);
        t = run(c);
        hs = attn::heatmap::collect(t, options, 64);
        REQUIRE(hs.size() == 1);
        CHECK(hs[0].panels.size() == static_cast<std::size_t>(c.heads));
        CHECK(hs[0].at(hs[0].panels[0], 2, 0) < 0.0f);  // below the diagonal: -m·(i - j)
    }
}
