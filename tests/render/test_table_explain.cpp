// table_explain: --explain in the table: the wrapping, and where the blocks go.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/render/render_table.hpp"
#include "attn/render/table_explain.hpp"

namespace {

using lines = std::vector<std::string>;

std::string table(const attn::config& c, bool explain) {
    attn::render_options options;
    options.explain = explain;
    std::ostringstream out;
    attn::render_table(attn::compute_trace(c, attn::draw_inputs(c)), options, out);
    return out.str();
}

lines split_lines(const std::string& text) {
    lines out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

}  // namespace

TEST_SUITE("table_explain") {
    TEST_CASE("wrap_words: at spaces, within the width, keeping short code whole") {
        CHECK(attn::table::wrap_words("aa bb cc dd", 5) == lines{"aa bb", "cc dd"});
        CHECK(attn::table::wrap_words("aa  # c", 10) == lines{"aa  # c"});  // inner spaces kept
        CHECK(attn::table::wrap_words("averyveryverylongword x", 5) == lines{"averyveryverylongword", "x"});
        // a call, a shape and a tuple stay on one line; a remark in parentheses may break
        CHECK(attn::table::wrap_words("then merged.view(B, Sq, D) raises", 20) ==
              lines{"then", "merged.view(B, Sq, D)", "raises"});
        CHECK(attn::table::wrap_words("strides (40, 2, 8, 1) here", 12) == lines{"strides", "(40, 2, 8, 1)", "here"});
        CHECK(attn::table::wrap_words("-> out [2,5,8]", 8) == lines{"->", "out [2,5,8]"});
        CHECK(attn::table::wrap_words("a (remark in words) b", 10) == lines{"a (remark", "in words)", "b"});
        CHECK(attn::table::wrap_words("√dk = √2 ok", 8) == lines{"√dk = √2", "ok"});  // columns, not bytes
    }

    TEST_CASE("each stage's heading and formula, then its block; an opening and a summary") {
        attn::config c;
        c.mask.causal = true;
        const lines out = split_lines(table(c, true));
        CHECK(out[4] == "── multi-head attention, explained ──");
        int blocks = 0, headings = 0;
        for (std::size_t i = 0; i + 2 < out.size(); ++i) {
            if (out[i].rfind("── ", 0) != 0 || out[i].find(" · ") == std::string::npos ||
                out[i].find("skipped") != std::string::npos)
                continue;
            ++headings;
            CAPTURE(out[i]);
            CHECK(out[i + 2].rfind("   what    ", 0) == 0);  // after the formula line
            blocks += out[i + 2].rfind("   what    ", 0) == 0;
        }
        CHECK(headings == 14);  // all but dropout
        CHECK(blocks == headings);
        const auto summary = std::find(out.begin(), out.end(), "── summary ──");
        REQUIRE(summary != out.end());
        CHECK(summary[1].rfind("   shapes  x [1,4,8] -> ", 0) == 0);
        CHECK(std::find_if(summary, out.end(), [](const std::string& l) { return l.rfind("   cost    ", 0) == 0; }) !=
              out.end());
    }

    TEST_CASE("without --explain the table has none of it") {
        attn::config c;
        const std::string plain = table(c, false), explained = table(c, true);
        CHECK(plain.find("   what ") == std::string::npos);
        CHECK(plain.find("explained") == std::string::npos);
        CHECK(plain.find("summary") == std::string::npos);
        // and the explained table is the plain one with lines added, none changed
        const lines p = split_lines(plain), e = split_lines(explained);
        std::size_t at = 0;
        for (const std::string& line : e)
            if (at < p.size() && line == p[at]) ++at;
        CHECK(at == p.size());
    }
}
