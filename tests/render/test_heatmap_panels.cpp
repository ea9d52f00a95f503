// What every picture draws (heatmap_panels.hpp): which tensors and panels, what each
// cell is, the scale, and the views --batch-index, --head, --row. The trace is built
// by hand: two batch items, two heads, three queries and keys; batch 1 has no key
// it may attend (so its weights are NaN, as PyTorch gives with -inf).
#include <cmath>
#include <limits>
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "support.hpp"

namespace {

using attn::heatmap::cell_kind;


/// v[b,h,i,j] = 0.25·(3i + j) + h: exact in float, 0 .. 3 across the heads.
float value(std::size_t h, std::size_t i, std::size_t j) { return 0.25f * static_cast<float>(3 * i + j) + h; }

attn::trace panel_trace() {
    attn::trace t;
    t.cfg.batch = 2;
    t.cfg.heads = 2;
    t.cfg.seq = t.cfg.kv_seq = 3;
    xt::xarray<float> mask = xt::zeros<float>({2, 1, 3, 3});    // batch 0: keys 0 and 1; batch 1: none
    xt::xarray<float> scores = xt::zeros<float>({2, 2, 3, 3});
    xt::xarray<float> masked = scores, weights = scores;
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 3; ++j) {
                mask(b, 0, i, j) = b == 0 && j < 2 ? 1.0f : 0.0f;
                for (std::size_t h = 0; h < 2; ++h) {
                    scores(b, h, i, j) = value(h, i, j);
                    masked(b, h, i, j) = mask(b, 0, i, j) != 0 ? value(h, i, j) : -1e9f;  // --fill -1e9
                    weights(b, h, i, j) = b == 1 ? not_a_number : mask(b, 0, i, j) != 0 ? 0.5f : 0.0f;
                }
            }
    scores(0, 0, 0, 1) = -inf;
    scores(0, 0, 1, 0) = inf;
    scores(0, 0, 2, 2) = not_a_number;
    t.stages.push_back(make_stage("input", {{"x", {"batch", "seq", "d_in"}, xt::zeros<float>({2, 3, 4})}}));
    t.stages.push_back(make_stage("scores", {{"scores", bhqk, scores}}));
    t.stages.push_back(make_stage("mask", {{"mask", bhqk, mask, attn::element_type::boolean}}));
    t.stages.push_back(make_stage("masked", {{"masked", bhqk, masked}}));
    t.stages.push_back(make_stage("softmax", {{"weights", bhqk, weights}}));
    return t;
}

const attn::heatmap::tensor_heatmap& find(const std::vector<attn::heatmap::tensor_heatmap>& hs, std::string_view name) {
    for (const auto& h : hs)
        if (h.name() == name) return h;
    FAIL("no heatmap " << name);
    return hs.front();
}

}  // namespace

TEST_SUITE("heatmap panels") {
    TEST_CASE("every [B,H,Sq,Sk] tensor of the shown stages, in stage order; nothing else") {
        const attn::trace t = panel_trace();
        const auto all = attn::heatmap::collect(t, {}, 64);
        REQUIRE(all.size() == 4);
        CHECK(all[0].name() == "scores.scores");
        CHECK(all[1].name() == "mask.mask");
        CHECK(all[2].name() == "masked.masked");
        CHECK(all[3].name() == "softmax.weights");
        attn::render_options only;
        only.stages = attn::stages(attn::stage_id::input, attn::stage_id::softmax);
        const auto some = attn::heatmap::collect(t, only, 64);
        REQUIRE(some.size() == 1);
        CHECK(some[0].name() == "softmax.weights");
        CHECK(attn::heatmap::drawable(attn::stage_id::dropout));
        CHECK_FALSE(attn::heatmap::drawable(attn::stage_id::context));
    }

    TEST_CASE("one panel per batch item and head; the mask one per batch item, for every head") {
        const attn::trace t = panel_trace();
        const auto hs = attn::heatmap::collect(t, {}, 64);
        const auto& masked = find(hs, "masked.masked");
        REQUIRE(masked.panels.size() == 4);
        CHECK(masked.panels[1].batch == 0);
        CHECK(masked.panels[1].head == std::optional<std::size_t>(1));
        CHECK(masked.panels[2].batch == 1);
        CHECK(attn::heatmap::title(masked, masked.panels[1]) == "masked.masked — batch 0, head 1");
        const auto& mask = find(hs, "mask.mask");
        REQUIRE(mask.panels.size() == 2);
        CHECK_FALSE(mask.panels[0].head.has_value());
        CHECK(attn::heatmap::place(mask.panels[1]) == "batch 1 (every head)");
        CHECK(mask.panels[0].queries == std::vector<std::size_t>{0, 1, 2});
        CHECK(attn::heatmap::crop_note(mask, mask.panels[0]).empty());
    }

    TEST_CASE("cells: masked where the mask is false (from the mask stage on), NaN before masked, ±inf") {
        const attn::trace t = panel_trace();
        const auto hs = attn::heatmap::collect(t, {}, 64);
        const auto& scores = find(hs, "scores.scores");  // before the mask: nothing is masked yet
        const auto& p00 = scores.panels[0];
        CHECK(scores.kind(p00, 0, 1) == cell_kind::neg_inf);
        CHECK(scores.kind(p00, 1, 0) == cell_kind::pos_inf);
        CHECK(scores.kind(p00, 2, 2) == cell_kind::nan);
        CHECK(scores.kind(p00, 0, 2) == cell_kind::value);
        CHECK(scores.kind(scores.panels[2], 0, 0) == cell_kind::value);  // batch 1: no mask applied in scores

        const auto& mask = find(hs, "mask.mask");
        CHECK(mask.kind(mask.panels[0], 0, 1) == cell_kind::value);
        CHECK(mask.kind(mask.panels[0], 0, 2) == cell_kind::masked);

        const auto& masked = find(hs, "masked.masked");
        CHECK(masked.kind(masked.panels[0], 1, 2) == cell_kind::masked);  // key 2 of batch 0
        CHECK(masked.kind(masked.panels[3], 0, 0) == cell_kind::masked);  // batch 1: every key

        const auto& weights = find(hs, "softmax.weights");
        CHECK(weights.kind(weights.panels[0], 2, 2) == cell_kind::masked);
        CHECK(weights.kind(weights.panels[2], 0, 0) == cell_kind::nan);  // the row with no allowed key
        CHECK(weights.has(cell_kind::nan));
        CHECK(weights.has(cell_kind::masked));
        CHECK_FALSE(weights.has(cell_kind::neg_inf));
    }

    TEST_CASE("one scale per tensor: scores symmetric around 0 over the drawn finite unmasked values; weights on 0 .. 1") {
        const attn::trace t = panel_trace();
        const auto hs = attn::heatmap::collect(t, {}, 64);
        const auto& masked = find(hs, "masked.masked");  // the -1e9 fill is left out
        CHECK(masked.scale.lo == -value(1, 2, 1));        // -2.75 .. 2.75: head 1, query 2, key 1 (key 2 is masked)
        CHECK(masked.scale.hi == value(1, 2, 1));
        CHECK(masked.scale.position(0.0f) == 0.5);        // 0 is the middle colour though every value is >= 0
        const auto& scores = find(hs, "scores.scores");  // ±inf and NaN left out
        CHECK(scores.scale.lo == -value(1, 2, 2));
        CHECK(scores.scale.hi == value(1, 2, 2));
        const auto& mask = find(hs, "mask.mask");  // booleans: false low, true high
        CHECK(mask.scale.lo == 0.0f);
        CHECK(mask.scale.hi == 1.0f);
        const auto& weights = find(hs, "softmax.weights");  // batch 0's 0.5, the rest masked or NaN:
        CHECK(weights.scale.lo == 0.0f);                     // shares of 1, drawn on 0 .. 1 all the same
        CHECK(weights.scale.hi == 1.0f);
    }

    TEST_CASE("a scale of values below 0 only is symmetric too: the largest |value| is its bottom") {
        attn::trace t;
        t.cfg.batch = t.cfg.heads = 1;
        t.cfg.seq = t.cfg.kv_seq = 2;
        xt::xarray<float> scaled = {{{{-4.0f, -1.0f}, {-2.0f, -0.5f}}}};
        t.stages.push_back(make_stage("scaled", {{"scaled", bhqk, scaled}}));
        const auto hs = attn::heatmap::collect(t, {}, 64);
        REQUIRE(hs.size() == 1);
        CHECK(hs[0].scale.lo == -4.0f);
        CHECK(hs[0].scale.hi == 4.0f);
        CHECK(hs[0].scale.position(-1.0f) == doctest::Approx(0.375));
    }

    TEST_CASE("--vmin and --vmax replace the ends of every tensor's scale but the mask's") {
        const attn::trace t = panel_trace();
        attn::render_options both;
        both.vmin = -1.0f;
        both.vmax = 0.5f;
        const auto hs = attn::heatmap::collect(t, both, 64);
        for (const char* name : {"scores.scores", "masked.masked", "softmax.weights"}) {
            CAPTURE(name);
            CHECK(find(hs, name).scale.lo == -1.0f);
            CHECK(find(hs, name).scale.hi == 0.5f);
        }
        CHECK(find(hs, "mask.mask").scale.hi == 1.0f);
        CHECK(find(hs, "softmax.weights").scale.position(0.75f) == 1.0);  // above the top: drawn as the top
        attn::render_options low;
        low.vmin = 0.25f;  // the top stays each tensor's own
        const auto lows = attn::heatmap::collect(t, low, 64);
        CHECK(find(lows, "softmax.weights").scale.lo == 0.25f);
        CHECK(find(lows, "softmax.weights").scale.hi == 1.0f);
        CHECK(find(lows, "scores.scores").scale.hi == value(1, 2, 2));
        attn::render_options too_high;
        too_high.vmin = 2.0f;
        CHECK_THROWS_WITH_AS(attn::heatmap::collect(t, too_high, 64),
                             "--vmin 2.0000 is not below the top of the scale of softmax.weights (1.0000): give --vmax too",
                             attn::usage_error);
    }

    TEST_CASE("--batch-index and --head keep that item and head; the mask ignores --head") {
        const attn::trace t = panel_trace();
        attn::render_options view;
        view.head = 1;
        auto hs = attn::heatmap::collect(t, view, 64);
        const auto& masked = find(hs, "masked.masked");
        REQUIRE(masked.panels.size() == 2);
        CHECK(masked.panels[0].head == std::optional<std::size_t>(1));
        CHECK(masked.panels[1].batch == 1);
        CHECK(find(hs, "mask.mask").panels.size() == 2);

        view.batch_index = 1;
        view.head = 0;
        hs = attn::heatmap::collect(t, view, 64);
        const auto& one = find(hs, "softmax.weights");
        REQUIRE(one.panels.size() == 1);
        CHECK(one.panels[0].batch == 1);
        CHECK(one.panels[0].head == std::optional<std::size_t>(0));
        CHECK(find(hs, "mask.mask").panels.size() == 1);
    }

    TEST_CASE("a --batch-index, --head or --row beyond the run is a usage error") {
        const attn::trace t = panel_trace();
        attn::render_options view;
        view.head = 2;
        CHECK_THROWS_WITH_AS(attn::heatmap::collect(t, view, 64), "--head 2: this run has heads 0 to 1",
                             attn::usage_error);
        view.head.reset();
        view.batch_index = 5;
        CHECK_THROWS_WITH_AS(attn::heatmap::collect(t, view, 64), "--batch-index 5: this run has batch items 0 to 1",
                             attn::usage_error);
        view.batch_index.reset();
        view.row = 3;
        CHECK_THROWS_WITH_AS(attn::heatmap::collect(t, view, 64), "--row 3: this run has queries 0 to 2",
                             attn::usage_error);
    }

    TEST_CASE("large planes are cut to their first max_side queries and keys, unless full; --row keeps one query") {
        const attn::trace t = panel_trace();
        auto hs = attn::heatmap::collect(t, {}, 2);
        const auto& w = find(hs, "softmax.weights");
        CHECK(w.panels[0].queries == std::vector<std::size_t>{0, 1});
        CHECK(w.panels[0].keys == std::vector<std::size_t>{0, 1});
        CHECK(attn::heatmap::crop_note(w, w.panels[0]) == "queries 0–1 of 3, keys 0–1 of 3");

        attn::render_options full;
        full.full = true;
        hs = attn::heatmap::collect(t, full, 2);
        CHECK(find(hs, "softmax.weights").panels[0].keys.size() == 3);

        attn::render_options row;
        row.row = 2;
        hs = attn::heatmap::collect(t, row, 64);
        const auto& r = find(hs, "masked.masked");
        CHECK(r.panels[0].queries == std::vector<std::size_t>{2});
        CHECK(attn::heatmap::crop_note(r, r.panels[0]) == "query 2 of 3");
        CHECK(r.scale.hi == value(1, 2, 1));  // the scale is over what is drawn: query 2's largest |value|
        CHECK(r.scale.lo == -value(1, 2, 1));
    }

    TEST_CASE("max_panels keeps the first panels of a tensor, and says how many were in view") {
        const attn::trace t = panel_trace();
        auto hs = attn::heatmap::collect(t, {}, 64, 3);
        const auto& masked = find(hs, "masked.masked");
        REQUIRE(masked.panels.size() == 3);
        CHECK(masked.panels_in_view == 4);
        CHECK(attn::heatmap::panels_note(masked) == "3 of 4 panels: batch 0–1");
        CHECK(masked.scale.hi == value(1, 2, 1));  // over the panels drawn
        const auto& mask = find(hs, "mask.mask");  // two panels: nothing cut
        CHECK(mask.panels.size() == 2);
        CHECK(attn::heatmap::panels_note(mask).empty());
        hs = attn::heatmap::collect(t, {}, 64, 1);
        CHECK(attn::heatmap::panels_note(find(hs, "softmax.weights")) == "1 of 4 panels: batch 0");
        attn::render_options full;
        full.full = true;
        hs = attn::heatmap::collect(t, full, 64, 1);
        CHECK(find(hs, "softmax.weights").panels.size() == 4);
    }

    TEST_CASE("numbers for legends and tooltips") {
        using attn::heatmap::number_text;
        CHECK(number_text(0.5f, 4) == "0.5000");
        CHECK(number_text(-1.25f, 2) == "-1.25");
        CHECK(number_text(0.0f, 4) == "0.0000");
        CHECK(number_text(0.00001f, 4) == "1.000e-05");  // would print as 0.0000
        CHECK(number_text(-1e9f, 4) == "-1.000e+09");
        CHECK(number_text(-inf, 4) == "-inf");
        CHECK(number_text(not_a_number, 4) == "nan");
        CHECK(number_text(1.0f, 4, true) == "true");
        CHECK(number_text(0.0f, 4, true) == "false");
    }
}
