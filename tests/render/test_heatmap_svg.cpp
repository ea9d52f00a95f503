// The SVG the pictures write by hand (heatmap_svg.hpp): labels as <text> elements in
// DejaVu Sans, escaped; no glyph outlines; the same panel in a page and inlined alone.
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "attn/render/heatmap_svg.hpp"
#include "support.hpp"

namespace {

/// One batch item, one head, 2x2 weights, in a tensor whose name holds markup.
attn::trace markup_trace() {
    attn::trace t;
    t.cfg.batch = t.cfg.heads = 1;
    t.cfg.seq = t.cfg.kv_seq = 2;
    xt::xarray<float> weights = {{{{1.0f, 0.0f}, {0.25f, 0.75f}}}};
    t.stages.push_back(make_stage("softmax", {{"<b>w&amp;", bhqk, weights}}));
    return t;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_SUITE("heatmap svg") {
    TEST_CASE("labels are <text> in DejaVu Sans, their markup escaped; no glyph outlines") {
        const attn::trace t = markup_trace();
        std::ostringstream out;
        attn::render_svg(t, {}, out);
        const std::string svg = out.str();
        CHECK(svg.find("<text x=\"14\" y=\"27\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"13\" "
                       "font-weight=\"bold\" fill=\"#212121\">softmax.&lt;b&gt;w&amp;amp; — batch 0, head 0</text>") !=
              std::string::npos);
        CHECK(svg.find("<b>") == std::string::npos);
        CHECK(svg.find(">0.25</text>") != std::string::npos);  // a cell's value
        CHECK(svg.find(">key j</text>") != std::string::npos);
        CHECK(svg.find("<symbol") == std::string::npos);
        CHECK(svg.find("<use") == std::string::npos);
    }

    TEST_CASE("a panel inlined alone is the panel of the page, with its own root and the same drawing") {
        const attn::trace t = markup_trace();
        const auto heatmaps = attn::heatmap::collect(t, {}, 64);
        REQUIRE(heatmaps.size() == 1);
        const auto panels = attn::heatmap::draw_svg_panels(heatmaps[0], {});
        REQUIRE(panels.size() == 1);
        const std::string& alone = panels[0].svg;
        CHECK(alone.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"panel\" id=\"softmax-_b_w_amp_-b0-h0\"", 0) == 0);
        std::ostringstream out;
        attn::render_svg(t, {}, out);
        const std::string page = out.str();
        const std::string body = alone.substr(alone.find(">\n") + 2);  // the drawing after the root tag
        CHECK(page.find(body) != std::string::npos);
        CHECK(occurrences(alone, "<text") == occurrences(page, "<text"));
        // The grid: cells of 36 points from (grid.x, grid.y), as the hover layer of html needs.
        CHECK(panels[0].grid.cell == 36);
        CHECK(alone.find("<path fill=\"#fde725\" d=\"M" + std::to_string(static_cast<int>(panels[0].grid.x) ) ) !=
              std::string::npos);
    }
}
