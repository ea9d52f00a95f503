// --row Q with --format table: one query's row as bars (render_row).
//
// Traces built by hand with values exact in binary, so each bar's length (40
// columns = a weight of 1, in eighths of a column) can be worked out on paper.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "attn/teach/stage_text.hpp"

#include "attn/compute/error.hpp"
#include "attn/render/render_row.hpp"
#include "support.hpp"

namespace {

using attn::element_type;
using attn::render_options;
using attn::stage;
using attn::tensor;
using attn::trace;



/// `n` full blocks.
std::string blocks(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += "█";
    return s;
}

/// A weight's bar: `n` full blocks and a partial one, then spaces to the bar's 40 columns.
std::string bar(std::size_t n, std::string_view partial = "") {
    return blocks(n) + std::string(partial) + std::string(40 - n - (partial.empty() ? 0 : 1), ' ');
}

std::string render_row_text(const trace& t, const render_options& options) {
    std::ostringstream out;
    attn::render_row(t, options, out);
    return out.str();
}

/// The charts: everything from the first chart title (after the run header and the heading).
std::string charts(const trace& t, render_options options, std::string_view title_start = "weights[") {
    const std::string text = render_row_text(t, options);
    const std::size_t at = text.find(std::string("\n") + std::string(title_start));
    REQUIRE(at != std::string::npos);
    return text.substr(at + 1);
}

render_options row(std::size_t q) {
    render_options o;
    o.row = q;
    return o;
}

// weights [1,1,2,4] under a causal-like mask [1,1,2,4]: query 0 may attend key 0,
// query 1 keys 0..2.
trace masked_weights(xt::xarray<float> weights, xt::xarray<float> mask) {
    trace t;
    t.stages.push_back(make_stage("mask", {{"mask", bhqk, std::move(mask), element_type::boolean}}));
    t.stages.push_back(make_stage("softmax", {{"weights", bhqk, std::move(weights)}}));
    return t;
}

trace weights_only(xt::xarray<float> weights) {
    trace t;
    t.stages.push_back(make_stage("softmax", {{"weights", bhqk, std::move(weights)}}));
    return t;
}

}  // namespace

TEST_SUITE("render_row") {

TEST_CASE("a row of weights: bars from 0 (40 columns = 1), values, the top 3 marked and named, masked keys marked") {
    const trace t = masked_weights({{{{1.0f, 0.0f, 0.0f, 0.0f}, {0.5f, 0.125f, 0.375f, 0.0f}}}},
                                   {{{{1, 0, 0, 0}, {1, 1, 1, 0}}}});
    CHECK(charts(t, row(1)) ==
          "weights[batch=0, head=0, query=1]\n"
          "  key 0  " + bar(20) + "  0.5000  ◀ 1st\n"
          "  key 1  " + bar(5) + "  0.1250  ◀ 3rd\n"
          "  key 2  " + bar(15) + "  0.3750  ◀ 2nd\n"
          "  key 3  " + bar(0) + "  0.0000  masked\n"
          "  query 1 attends most to key 0 (0.5000), key 2 (0.3750), key 1 (0.1250)\n");
}

TEST_CASE("the run header and the stage's heading come first, as in the table") {
    trace t = masked_weights({{{{1.0f, 0.0f, 0.0f, 0.0f}, {0.5f, 0.125f, 0.375f, 0.0f}}}}, {{{{1, 0, 0, 0}, {1, 1, 1, 0}}}});
    t.warnings.push_back({"softmax", "a warning about the weights"});
    const std::string text = render_row_text(t, row(1));
    CHECK(text.rfind("run    self-attention", 0) == 0);
    CHECK(text.find("\n── 10 · softmax ── attention weights: softmax over the key axis (last)\n"
                    "   " + attn::stage_formula(t.cfg, "softmax") + "\n"
                    "   ! a warning about the weights\n"
                    "\nweights[batch=0, head=0, query=1]\n") != std::string::npos);
    CHECK(text.find("── 8 · mask") == std::string::npos);  // the mask stage has no row to draw
}

TEST_CASE("a query with one key it may attend attends only to it") {
    const trace t = masked_weights({{{{1.0f, 0.0f, 0.0f, 0.0f}, {0.5f, 0.125f, 0.375f, 0.0f}}}},
                                   {{{{1, 0, 0, 0}, {1, 1, 1, 0}}}});
    const std::string text = charts(t, row(0));
    CHECK(text.find("  key 0  " + bar(40) + "  1.0000  ◀ 1st\n") != std::string::npos);
    CHECK(text.find("  key 1  " + bar(0) + "  0.0000  masked\n") != std::string::npos);
    CHECK(text.find("  query 0 attends only to key 0 (1.0000)\n") != std::string::npos);
}

TEST_CASE("bars end in eighths of a column, to the nearest eighth") {
    // 1/64 is 5/8 of a column, 3/64 one column and 7/8, 1/128 2.5/8, rounded away from 0 to 3/8
    const trace t = weights_only({{{{1.0f / 64, 3.0f / 64, 1.0f / 128, 0.921875f}}}});
    CHECK(charts(t, row(0)) ==
          "weights[batch=0, head=0, query=0]\n"
          "  key 0  " + bar(0, "▋") + "  0.0156  ◀ 3rd\n"
          "  key 1  " + bar(1, "▉") + "  0.0469  ◀ 2nd\n"
          "  key 2  " + bar(0, "▍") + "  0.0078\n"
          "  key 3  " + bar(36, "▉") + "  0.9219  ◀ 1st\n"  // 0.921875 * 320 = 295 eighths = 36 columns + 7/8
          "  query 0 attends most to key 3 (0.9219), key 1 (0.0469), key 0 (0.0156)\n");
}

TEST_CASE("equal weights rank the lower key first") {
    const trace t = weights_only({{{{0.25f, 0.25f, 0.25f, 0.25f}}}});
    const std::string text = charts(t, row(0));
    CHECK(text.find("  key 2  " + bar(10) + "  0.2500  ◀ 3rd\n  key 3  " + bar(10) + "  0.2500\n") != std::string::npos);
    CHECK(text.find("attends most to key 0 (0.2500), key 1 (0.2500), key 2 (0.2500)\n") != std::string::npos);
}

TEST_CASE("a row with no key it may attend: every key masked, nan weights, nothing ranked") {
    const trace t = masked_weights({{{{not_a_number, not_a_number, not_a_number, not_a_number}, {0.5f, 0.125f, 0.375f, 0.0f}}}},
                                   {{{{0, 0, 0, 0}, {1, 1, 1, 0}}}});
    CHECK(charts(t, row(0)) ==
          "weights[batch=0, head=0, query=0]\n"
          "  key 0  " + bar(0) + "  nan  masked\n"
          "  key 1  " + bar(0) + "  nan  masked\n"
          "  key 2  " + bar(0) + "  nan  masked\n"
          "  key 3  " + bar(0) + "  nan  masked\n"
          "  query 0 may attend no key: every key is masked, so its weights are nan\n");
}

TEST_CASE("a finite fill: masked keys keep the weight they get, and their bar, but are never ranked") {
    const trace t = masked_weights({{{{0.25f, 0.25f, 0.25f, 0.25f}, {0.5f, 0.125f, 0.375f, 0.0f}}}},
                                   {{{{0, 0, 0, 0}, {1, 1, 1, 0}}}});
    const std::string text = charts(t, row(0));
    CHECK(text.find("  key 0  " + bar(10) + "  0.2500  masked\n") != std::string::npos);
    CHECK(text.find("  query 0 may attend no key: every key is masked\n") != std::string::npos);
}

TEST_CASE("scores: bars left or right of an axis, to the nearest half column, the row's largest |score| = 20 columns") {
    trace t;
    t.stages.push_back(make_stage("scaled", {{"scaled", bhqk, xt::xarray<float>{{{{0.5f, -0.25f, 1.0f, -1.0f, 0.525f, -0.025f}}}}}}));
    render_options o = row(0);
    o.stages = attn::stages(attn::stage_id::scaled);
    const std::string half(20, ' ');  // an empty side of the axis
    CHECK(charts(t, o, "scaled[") ==
          "scaled[batch=0, head=0, query=0]\n"
          "  key 0  " + half + "│" + blocks(10) + std::string(10, ' ') + "   0.5000  ◀ 3rd\n"
          "  key 1  " + std::string(15, ' ') + blocks(5) + "│" + half + "  -0.2500\n"
          "  key 2  " + half + "│" + blocks(20) + "   1.0000  ◀ 1st\n"
          "  key 3  " + blocks(20) + "│" + half + "  -1.0000\n"
          "  key 4  " + half + "│" + blocks(10) + "▌" + std::string(9, ' ') + "   0.5250  ◀ 2nd\n"
          "  key 5  " + std::string(19, ' ') + "▐│" + half + "  -0.0250\n"
          "  query 0 scores highest on key 2 (1.0000), key 4 (0.5250), key 0 (0.5000)\n");
}

TEST_CASE("the masked stage: a masked key shows the fill as typed, no bar, and is left out of the scale") {
    trace t;
    t.cfg.fill = -1e9f;
    t.cfg.fill_text = "-1e9";
    t.stages.push_back(make_stage("mask", {{"mask", bhqk, xt::xarray<float>{{{{1, 1, 0}}}}, element_type::boolean}}));
    t.stages.push_back(make_stage("masked", {{"masked", bhqk, xt::xarray<float>{{{{0.5f, -0.25f, -1e9f}}}}}}));
    render_options o = row(0);
    o.stages = attn::stages(attn::stage_id::masked);
    const std::string half(20, ' ');
    CHECK(charts(t, o, "masked[") ==
          "masked[batch=0, head=0, query=0]\n"
          "  key 0  " + half + "│" + blocks(20) + "   0.5000  ◀ 1st\n"
          "  key 1  " + std::string(10, ' ') + blocks(10) + "│" + half + "  -0.2500  ◀ 2nd\n"
          "  key 2  " + half + "│" + half + "     -1e9  masked\n"
          "  query 0 scores highest on key 0 (0.5000), key 1 (-0.2500)\n");
}

TEST_CASE("the scores before the mask: no key is masked yet") {
    trace t;
    t.stages.push_back(make_stage("scores", {{"scores", bhqk, xt::xarray<float>{{{{0.5f, -0.25f}}}}}}));
    t.stages.push_back(make_stage("mask", {{"mask", bhqk, xt::xarray<float>{{{{1, 0}}}}, element_type::boolean}}));
    render_options o = row(0);
    o.stages = attn::stages(attn::stage_id::scores);
    const std::string text = charts(t, o, "scores[");
    CHECK(text.find("masked") == std::string::npos);
    CHECK(text.find("  query 0 scores highest on key 0 (0.5000), key 1 (-0.2500)\n") != std::string::npos);
}

TEST_CASE("dropout: dropped keys marked, bars scaled to the largest weight when one is over 1") {
    trace t;
    t.stages.push_back(make_stage("softmax", {{"weights", bhqk, xt::xarray<float>{{{{0.75f, 0.25f, 0.0f}}}}}}));
    // p = 0.5: weights · keep / 0.5
    t.stages.push_back(make_stage("dropout", {{"weights", bhqk, xt::xarray<float>{{{{1.5f, 0.0f, 0.0f}}}}},
                                              {"keep", bhqk, xt::xarray<float>{{{{1, 0, 1}}}}, element_type::boolean}}));
    render_options o = row(0);
    o.stages = attn::stages(attn::stage_id::dropout);
    CHECK(charts(t, o) ==
          "weights[batch=0, head=0, query=0]\n"
          "  key 0  " + bar(40) + "  1.5000  ◀ 1st\n"
          "  key 1  " + bar(0) + "  0.0000  dropped\n"
          "  key 2  " + bar(0) + "  0.0000  ◀ 2nd\n"
          "  after dropout, query 0 attends most to key 0 (1.5000), key 2 (0.0000)\n");
    CHECK(render_row_text(t, o).find("── 10 · softmax") == std::string::npos);
}

TEST_CASE("one chart per selected batch item and head") {
    const trace t = weights_only(xt::ones<float>({2, 3, 1, 2}) * 0.5f);
    const auto titles = [&](render_options o) {
        std::string text = render_row_text(t, o), found;
        for (std::size_t at = text.find("\nweights["); at != std::string::npos; at = text.find("\nweights[", at + 1))
            found += text.substr(at + 1, text.find('\n', at + 1) - at - 1) + ";";
        return found;
    };
    render_options o = row(0);
    CHECK(titles(o) ==
          "weights[batch=0, head=0, query=0];weights[batch=0, head=1, query=0];weights[batch=0, head=2, query=0];"
          "weights[batch=1, head=0, query=0];weights[batch=1, head=1, query=0];weights[batch=1, head=2, query=0];");
    o.batch_index = 1;
    CHECK(titles(o) == "weights[batch=1, head=0, query=0];weights[batch=1, head=1, query=0];weights[batch=1, head=2, query=0];");
    o.head = 2;
    CHECK(titles(o) == "weights[batch=1, head=2, query=0];");
    o.head = 3;
    CHECK_THROWS_AS(render_row_text(t, o), attn::error);
}

TEST_CASE("a row of more than 40 keys shows its 10 largest, unless --full") {
    xt::xarray<float> w = xt::zeros<float>({1, 1, 1, 50});
    // (17 k) mod 50 takes each of 0..49 once; the 10 largest, 40..49, are at k = 20, 23, ..., 47
    for (std::size_t k = 0; k < 50; ++k) w(0, 0, 0, k) = static_cast<float>((k * 17) % 50) / 1225.0f;
    const trace t = weights_only(w);
    const std::string text = charts(t, row(0));
    std::size_t keys = 0;
    for (std::size_t at = text.find("  key "); at != std::string::npos; at = text.find("  key ", at + 1)) ++keys;
    CHECK(keys == 10);
    CHECK(text.rfind("weights[batch=0, head=0, query=0] (its 10 largest of 50 keys: --full shows them all)\n", 0) == 0);
    CHECK(text.find("\n  ... (20 keys)\n  key 20  ") != std::string::npos);  // the keys left out, counted
    CHECK(text.find("\n  ... (2 keys)\n  key 23  ") != std::string::npos);
    CHECK(text.find("\n  key 47  ") < text.find("\n  ... (2 keys)\n  query 0 attends most to key 47 (0.0400)"));
    render_options full = row(0);
    full.full = true;
    const std::string all = charts(t, full);
    keys = 0;
    for (std::size_t at = all.find("  key "); at != std::string::npos; at = all.find("  key ", at + 1)) ++keys;
    CHECK(keys == 50);
    CHECK(all.find("...") == std::string::npos);
}

TEST_CASE("softmax by default; options.stages picks the stages with a row to draw") {
    trace t;
    t.stages.push_back(make_stage("scaled", {{"scaled", bhqk, xt::xarray<float>{{{{0.5f, -0.25f}}}}}}));
    t.stages.push_back(make_stage("softmax", {{"weights", bhqk, xt::xarray<float>{{{{0.75f, 0.25f}}}}}}));
    t.stages.push_back(make_stage("context", {{"context", {"batch", "head", "seq", "head_dim"}, xt::xarray<float>(xt::ones<float>({1, 1, 1, 1}))}}));
    const auto headings = [&](render_options o) {
        std::string text = render_row_text(t, o), found;
        for (std::size_t at = text.find("── "); at != std::string::npos; at = text.find("── ", text.find('\n', at)))
            found += text.substr(at, text.find(" ──", at + 4) - at) + ";";
        return found;
    };
    render_options o = row(0);
    CHECK(headings(o) == "── 10 · softmax;");
    o.stages = attn::stages(attn::stage_id::scaled, attn::stage_id::softmax, attn::stage_id::context);
    CHECK(headings(o) == "── 7 · scaled;── 10 · softmax;");
    CHECK(attn::row_view_shows(attn::stage_id::masked));
    CHECK(attn::row_view_shows(attn::stage_id::dropout));
    CHECK(attn::row_view_shows(attn::stage_id::biased));  // ALiBi's scores: a plane like scaled
    CHECK_FALSE(attn::row_view_shows(attn::stage_id::alibi));  // the bias alone, [1,H,Sq,Sk]
    CHECK_FALSE(attn::row_view_shows(attn::stage_id::mask));
    CHECK_FALSE(attn::row_view_shows(attn::stage_id::context));
}

TEST_CASE("colour only with options.color") {
    const trace t = masked_weights({{{{1.0f, 0.0f, 0.0f, 0.0f}, {0.5f, 0.125f, 0.375f, 0.0f}}}},
                                   {{{{1, 0, 0, 0}, {1, 1, 1, 0}}}});
    render_options o = row(1);
    CHECK(render_row_text(t, o).find('\x1b') == std::string::npos);
    o.color = true;
    const std::string text = render_row_text(t, o);
    CHECK(text.find("\x1b[36m" + bar(20) + "\x1b[0m") != std::string::npos);  // the bar
    CHECK(text.find("\x1b[1m◀ 1st\x1b[0m") != std::string::npos);             // the top key's mark
    CHECK(text.find("\x1b[2mmasked\x1b[0m") != std::string::npos);            // a masked key, faint
}

}  // TEST_SUITE
