// --format heatmap: the characters a student sees, written out literally, for a causal
// 3x3 softmax built by hand (weights 1 | .5 .5 | .25 .25 .5).
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "attn/render/heatmap_terminal.hpp"
#include "support.hpp"

namespace {


attn::trace causal_trace() {
    attn::trace t;
    t.cfg.batch = 1;
    t.cfg.heads = 1;
    t.cfg.seq = t.cfg.kv_seq = 3;
    const xt::xarray<float> mask = {{{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}}};
    const xt::xarray<float> weights = {{{{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.0f}, {0.25f, 0.25f, 0.5f}}}};
    t.stages.push_back(make_stage("mask", {{"mask", bhqk, mask, attn::element_type::boolean}}));
    t.stages.push_back(make_stage("softmax", {{"weights", bhqk, weights}}));
    return t;
}

std::string render_terminal(const attn::trace& t, const attn::render_options& options) {
    std::ostringstream out;
    attn::render_heatmap_terminal(t, options, out, 80);
    return out.str();
}

}  // namespace

TEST_SUITE("heatmap terminal") {
    TEST_CASE("without colour: a shade per cell, ' ·' where masked, key numbers over the columns, a legend") {
        attn::render_options options;
        options.stages = attn::stages(attn::stage_id::softmax);
        const std::string text = render_terminal(causal_trace(), options);
        // Weights are drawn on 0 .. 1 whatever the run's range: 1 is the top shade, 0.5 the
        // middle one, 0.25 the first above the blank (which only 0 itself would get).
        const std::string expected =
            "── 10 · softmax ── attention weights: softmax over the key axis (last)\n"
            "   weights = softmax(scaled, dim=-1)\n"
            "\n"
            "weights [1,1,3,3] (batch, head, query, key)\n"
            "  batch 0, head 0\n"
            "      key  0 1 2\n"
            "  query 0 ██ · ·\n"
            "        1 ▒▒▒▒ ·\n"
            "        2 ░░░░▒▒\n"
            "  0.0000 [  ░░▒▒▓▓██] 1.0000    · masked\n";
        REQUIRE(text.find("──") != std::string::npos);
        CHECK(text.substr(text.find("──")) == expected);
        CHECK(text.find('\x1b') == std::string::npos);
    }

    TEST_CASE("the mask: true cells at the top of the map, false ones masked") {
        attn::render_options options;
        options.stages = attn::stages(attn::stage_id::mask);
        const std::string text = render_terminal(causal_trace(), options);
        CHECK(text.find("  batch 0 (every head)\n"
                        "      key  0 1 2\n"
                        "  query 0 ██ · ·\n"
                        "        1 ████ ·\n"
                        "        2 ██████\n"
                        "  ██ true    · masked\n") != std::string::npos);
    }

    TEST_CASE("with colour: 24-bit backgrounds from the colour map; 1.0 is viridis' yellow #fde725") {
        attn::render_options options;
        options.stages = attn::stages(attn::stage_id::softmax);
        options.color = true;
        const std::string text = render_terminal(causal_trace(), options);
        CHECK(text.find("\x1b[48;2;253;231;37m  \x1b[0m") != std::string::npos);   // weight 1: the top
        CHECK(text.find("\x1b[48;2;68;1;84m  \x1b[0m") != std::string::npos);      // the legend's 0: the bottom, #440154
        CHECK(text.find("\x1b[38;2;128;128;128m ·\x1b[0m") != std::string::npos);  // masked, grey
        CHECK(text.find("░") == std::string::npos);
    }

    TEST_CASE("keys from 10 on are numbered like a ruler: the tens digit over each multiple of ten") {
        attn::trace t;
        t.cfg.seq = 1;
        t.cfg.kv_seq = 12;
        t.cfg.heads = 1;
        xt::xarray<float> w = xt::zeros<float>({1, 1, 1, 12});
        t.stages.push_back(make_stage("softmax", {{"weights", bhqk, w}}));
        const std::string text = render_terminal(t, {});
        CHECK(text.find("                               1\n"
                        "      key  0 1 2 3 4 5 6 7 8 9 0 1\n") != std::string::npos);
    }
}
