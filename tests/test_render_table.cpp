// --format table: the exact text students compare with their PyTorch notebooks.
//
// Every trace here is built by hand with small, exactly representable values,
// so the expected text can be written out literally.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "attn/render_table.hpp"

namespace {

using attn::element_type;
using attn::render_options;
using attn::stage;
using attn::tensor;
using attn::trace;

constexpr float inf = std::numeric_limits<float>::infinity();

const std::vector<std::string> bhqk = {"batch", "head", "query", "key"};

stage make_stage(std::string_view name, std::vector<tensor> tensors) {
    stage s;
    s.info = attn::find_stage_info(name);
    REQUIRE(s.info != nullptr);
    s.formula = std::string(s.info->formula);
    s.tensors = std::move(tensors);
    return s;
}

trace make_trace(std::vector<stage> stages) {
    trace t;
    t.stages = std::move(stages);
    return t;
}

std::string render(const trace& t, const render_options& options = {}) {
    std::ostringstream out;
    attn::render_table(t, options, out);
    return out.str();
}

// scores [1,2,3,3]: two heads of a 3x3 score matrix.
tensor small_scores() {
    xt::xarray<float> v = {{{{0.5f, -1.25f, 2.0f}, {0.0f, 3.125f, -0.75f}, {1.0f, 0.25f, -2.5f}},
                            {{-0.125f, 0.375f, 1.5f}, {2.25f, -0.5f, 0.0625f}, {-1.75f, 1.125f, 0.875f}}}};
    return {"scores", bhqk, v};
}

// A causal mask [1,1,3,3]: query i may attend keys j <= i.
tensor causal_mask() {
    xt::xarray<float> v = {{{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}}};
    return {"mask", bhqk, v, element_type::boolean};
}

// A [2,1,40,40] tensor (3200 elements, more than PyTorch's threshold of 1000)
// holding 0, 1, 2, ... in row-major order.
tensor counting_weights() {
    xt::xarray<float> v = xt::zeros<float>({2, 1, 40, 40});
    for (std::size_t i = 0; i < v.size(); ++i) v.data()[i] = static_cast<float>(i);
    return {"weights", bhqk, v};
}

std::size_t count_lines(const std::string& text) {
    std::size_t n = 0;
    for (char c : text) n += c == '\n';
    return n;
}

}  // namespace

TEST_SUITE("render_table") {

TEST_CASE("a stage prints its heading, formula, shape and labelled 2-D slices") {
    const std::string expected =
        "── 6 · scores ── every query against every key, per head\n"
        "   Q·Kᵀ\n"
        "scores [1,2,3,3] (batch, head, query, key)\n"
        "scores[batch=0, head=0]\n"
        "           key 0    key 1    key 2\n"
        "query 0   0.5000  -1.2500   2.0000\n"
        "query 1   0.0000   3.1250  -0.7500\n"
        "query 2   1.0000   0.2500  -2.5000\n"
        "scores[batch=0, head=1]\n"
        "           key 0    key 1    key 2\n"
        "query 0  -0.1250   0.3750   1.5000\n"
        "query 1   2.2500  -0.5000   0.0625\n"
        "query 2  -1.7500   1.1250   0.8750\n";
    CHECK(render(make_trace({make_stage("scores", {small_scores()})})) == expected);
}

TEST_CASE("a 3-D tensor is sliced over its leading axis") {
    xt::xarray<float> x = {{{1.5f, -2.0f, 0.25f}, {3.0f, 0.5f, -1.0f}},
                           {{0.0f, 10.5f, -0.125f}, {2.0f, -3.5f, 4.0f}}};
    const std::string expected =
        "── 1 · input ── the token embeddings\n"
        "   x = torch.randn(B,Sq,Din); x_kv = torch.randn(B,Sk,Dkv) if cross\n"
        "x [2,2,3] (batch, seq, d_in)\n"
        "x[batch=0]\n"
        "        d_in 0   d_in 1   d_in 2\n"
        "seq 0   1.5000  -2.0000   0.2500\n"
        "seq 1   3.0000   0.5000  -1.0000\n"
        "x[batch=1]\n"
        "        d_in 0   d_in 1   d_in 2\n"
        "seq 0   0.0000  10.5000  -0.1250\n"
        "seq 1   2.0000  -3.5000   4.0000\n";
    CHECK(render(make_trace({make_stage("input", {{"x", {"batch", "seq", "d_in"}, x}})})) == expected);
}

TEST_CASE("a 2-D tensor has no slice label, a 1-D bias is one row, a 0-D tensor one value") {
    xt::xarray<float> w = {{0.5f, -0.25f}, {1.75f, 0.125f}};
    xt::xarray<float> b = {0.1f, -0.2f, 0.3f};
    xt::xarray<float> s = 3.5f;
    const std::string expected =
        "── 2 · params ── weights in nn.Linear layout [out, in]\n"
        "   y = x·Wᵀ + b\n"
        "w_q [2,2] (d_model, d_in)\n"
        "            d_in 0   d_in 1\n"
        "d_model 0   0.5000  -0.2500\n"
        "d_model 1   1.7500   0.1250\n"
        "b_q [3] (d_model)\n"
        "     d_model 0  d_model 1  d_model 2\n"
        "b_q     0.1000    -0.2000     0.3000\n"
        "scale []\n"
        "3.5000\n";
    const stage params = make_stage("params", {{"w_q", {"d_model", "d_in"}, w},
                                               {"b_q", {"d_model"}, b},
                                               {"scale", {}, s}});
    CHECK(render(make_trace({params})) == expected);
}

TEST_CASE("numbers: notation is chosen per tensor as PyTorch's print does") {
    // One row of a 1-D tensor whose column labels ("d 0") are narrower than its values.
    auto row = [](xt::xarray<float> values, render_options options = {}) {
        const stage s = make_stage("output", {{"out", {"d"}, values}});
        const std::string text = render(make_trace({s}), options);
        return text.substr(text.rfind('\n', text.size() - 2) + 1);
    };
    SUBCASE("fixed, with options.precision digits") {
        CHECK(row({0.5f, -1.25f}) == "out   0.5000  -1.2500\n");
        render_options two_digits;
        two_digits.precision = 2;
        CHECK(row({0.5f, -1.25f}, two_digits) == "out   0.50  -1.25\n");
    }
    SUBCASE("an all-integer tensor prints without decimals") {
        CHECK(row({1.0f, -2.0f, 0.0f}) == "out   1.  -2.   0.\n");
    }
    SUBCASE("scientific when max/min > 1000 over the finite nonzero values") {
        CHECK(row({0.001f, 2.0f}) == "out  1.0000e-03  2.0000e+00\n");
    }
    SUBCASE("scientific when the smallest nonzero value is below 1e-4 (ratio only 20)") {
        CHECK(row({0.00005f, 0.001f}) == "out  5.0000e-05  1.0000e-03\n");
    }
    SUBCASE("scientific when an all-integer tensor spans more than 1000:1") {
        CHECK(row({1.0f, 5000.0f}) == "out  1.0000e+00  5.0000e+03\n");
    }
    SUBCASE("zeros and non-finite values do not decide the notation") {
        CHECK(row({0.0f, 0.5f, -inf, inf, NAN}) == "out  0.0000  0.5000    -inf     inf     nan\n");
    }
}

TEST_CASE("the -1e9 fill switches the masked stage to scientific notation") {
    xt::xarray<float> v = {{{{0.5f, -1e9f, -1e9f}, {0.0f, 3.125f, -1e9f}, {1.0f, 0.25f, -2.5f}}}};
    trace t = make_trace({make_stage("masked", {{"masked", bhqk, v}})});
    t.cfg.fill = -1e9f;
    const std::string expected =
        "── 9 · masked ── scaled scores with the fill value where the mask is false\n"
        "   masked_fill(mask == false, fill)\n"
        "masked [1,1,3,3] (batch, head, query, key)\n"
        "masked[batch=0, head=0]\n"
        "               key 0        key 1        key 2\n"
        "query 0   5.0000e-01  -1.0000e+09  -1.0000e+09\n"
        "query 1   0.0000e+00   3.1250e+00  -1.0000e+09\n"
        "query 2   1.0000e+00   2.5000e-01  -2.5000e+00\n";
    CHECK(render(t) == expected);
}

TEST_CASE("a -inf fill keeps fixed notation and prints -inf in the common width") {
    xt::xarray<float> v = {{{{0.5f, -inf}, {-0.25f, 1.5f}}}};
    const std::string expected =
        "masked[batch=0, head=0]\n"
        "           key 0    key 1\n"
        "query 0   0.5000     -inf\n"
        "query 1  -0.2500   1.5000\n";
    const std::string text = render(make_trace({make_stage("masked", {{"masked", bhqk, v}})}));
    CHECK(text.substr(text.find("masked[")) == expected);
}

TEST_CASE("the mask prints True and False") {
    const std::string expected =
        "── 8 · mask ── where each query may attend (true = may attend)\n"
        "   mask[b,0,i,j]: may query i attend key j?\n"
        "mask [1,1,3,3] (batch, head, query, key)\n"
        "mask[batch=0, head=0]\n"
        "         key 0  key 1  key 2\n"
        "query 0   True  False  False\n"
        "query 1   True   True  False\n"
        "query 2   True   True   True\n";
    CHECK(render(make_trace({make_stage("mask", {causal_mask()})})) == expected);
}

TEST_CASE("more than 1000 elements: the first and last 3 of every long axis") {
    const std::string text = render(make_trace({make_stage("softmax", {counting_weights()})}));
    // 0 .. 3199 are integers with max/min = 3199 > 1000, so PyTorch uses scientific notation.
    const std::string expected_first_slice =
        "weights [2,1,40,40] (batch, head, query, key) (summarised: --full prints all 3200 values)\n"
        "weights[batch=0, head=0]\n"
        "               key 0       key 1       key 2  ...      key 37      key 38      key 39\n"
        "query 0   0.0000e+00  1.0000e+00  2.0000e+00  ...  3.7000e+01  3.8000e+01  3.9000e+01\n"
        "query 1   4.0000e+01  4.1000e+01  4.2000e+01  ...  7.7000e+01  7.8000e+01  7.9000e+01\n"
        "query 2   8.0000e+01  8.1000e+01  8.2000e+01  ...  1.1700e+02  1.1800e+02  1.1900e+02\n"
        "...\n"
        "query 37  1.4800e+03  1.4810e+03  1.4820e+03  ...  1.5170e+03  1.5180e+03  1.5190e+03\n"
        "query 38  1.5200e+03  1.5210e+03  1.5220e+03  ...  1.5570e+03  1.5580e+03  1.5590e+03\n"
        "query 39  1.5600e+03  1.5610e+03  1.5620e+03  ...  1.5970e+03  1.5980e+03  1.5990e+03\n"
        "weights[batch=1, head=0]\n";
    const std::size_t start = text.find("weights [");
    REQUIRE(start != std::string::npos);
    CHECK(text.substr(start, expected_first_slice.size()) == expected_first_slice);
    CHECK(text.find("key 3 ") == std::string::npos);
    CHECK(text.find("query 3 ") == std::string::npos);
    CHECK(count_lines(text) == 2 + 1 + 2 * 9);  // heading, formula, header, 2 slices of 9 lines
}

TEST_CASE("a long leading axis is cut to its first and last 3 slices") {
    // [8,1,2,100]: 1600 elements; batch and key are longer than 6, query is not.
    xt::xarray<float> v = xt::zeros<float>({8, 1, 2, 100});
    const std::string text = render(make_trace({make_stage("scores", {{"scores", bhqk, v}})}));
    CHECK(text.find("scores[batch=2, head=0]\n") != std::string::npos);
    CHECK(text.find("scores[batch=3, head=0]") == std::string::npos);
    CHECK(text.find("scores[batch=5, head=0]\n") != std::string::npos);
    CHECK(text.find("\n... (2 more slices: batch=3..4) ...\nscores[batch=5, head=0]\n") != std::string::npos);
}

TEST_CASE("--full prints every value") {
    render_options full;
    full.full = true;
    const std::string text = render(make_trace({make_stage("softmax", {counting_weights()})}), full);
    CHECK(text.find("weights [2,1,40,40] (batch, head, query, key)\n") != std::string::npos);
    CHECK(text.find("summarised") == std::string::npos);
    CHECK(text.find("...") == std::string::npos);
    CHECK(text.find("  key 20  ") != std::string::npos);
    CHECK(text.find("\nquery 20  ") != std::string::npos);
    // All integers 0..3199 at ratio 3199 > 1000: still scientific, as in PyTorch.
    CHECK(text.find("  3.1990e+03\n") != std::string::npos);
    CHECK(count_lines(text) == 2 + 1 + 2 * (1 + 1 + 40));  // per slice: label, column labels, 40 rows
}

TEST_CASE("stages are separated by one blank line and filtered by options.stages") {
    const trace t =
        make_trace({make_stage("scores", {small_scores()}), make_stage("mask", {causal_mask()})});
    SUBCASE("all stages, one blank line between them") {
        const std::string text = render(t);
        CHECK(text.find("  -1.7500   1.1250   0.8750\n\n── 8 · mask ──") != std::string::npos);
        CHECK(text.find("\n\n\n") == std::string::npos);
        CHECK(text.back() == '\n');
        CHECK(text[text.size() - 2] != '\n');
    }
    SUBCASE("only the stages asked for") {
        render_options only_mask;
        only_mask.stages = {"mask"};
        const std::string text = render(t, only_mask);
        CHECK(text.rfind("── 8 · mask ──", 0) == 0);
        CHECK(text.find("scores") == std::string::npos);
    }
}

TEST_CASE("a warning is printed under the stage it concerns") {
    trace t = make_trace({make_stage("mask", {causal_mask()})});
    const std::string without = render(t);
    t.warnings.push_back({"mask", "row 0 of batch 0 has no allowed key"});
    t.warnings.push_back({"softmax", "not in this trace"});
    CHECK(render(t) == without + "   ! row 0 of batch 0 has no allowed key\n");
}

TEST_CASE("colour: escape codes only when options.color") {
    xt::xarray<float> v = {{{{0.5f, -inf}, {NAN, 1.5f}}}};
    const trace t =
        make_trace({make_stage("masked", {{"masked", bhqk, v}}), make_stage("mask", {causal_mask()})});
    SUBCASE("color = false: none at all") {
        CHECK(render(t).find('\x1b') == std::string::npos);
    }
    SUBCASE("color = true: bold heading, dim labels and -inf and False, red nan") {
        render_options color;
        color.color = true;
        const std::string text = render(t, color);
        CHECK(text.rfind("\x1b[1m── 9 · masked ── scaled scores with the fill value where the mask "
                         "is false\x1b[0m\n",
                         0) == 0);
        CHECK(text.find("masked [1,1,2,2] \x1b[2m(batch, head, query, key)\x1b[0m\n") != std::string::npos);
        CHECK(text.find("\n\x1b[2mquery 0\x1b[0m  0.5000    \x1b[2m-inf\x1b[0m\n") != std::string::npos);
        CHECK(text.find("\n\x1b[2mquery 1\x1b[0m     \x1b[31mnan\x1b[0m  1.5000\n") != std::string::npos);
        CHECK(text.find("\n\x1b[2mquery 0\x1b[0m   True  \x1b[2mFalse\x1b[0m  \x1b[2mFalse\x1b[0m\n") !=
              std::string::npos);
    }
}

}  // TEST_SUITE
