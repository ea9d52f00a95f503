// --format torch: the exact text of PyTorch 1.13's print(t).
//
// The literal cases show the format on small tensors; the fixture cases
// (tests/reference/torch_print.json, written by make_torch_print.py with torch and
// committed) hold str(t) for many more tensors and print options, and every one
// must match character for character.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/render/render_torch.hpp"
#include "support.hpp"

namespace {

using attn::element_type;
using attn::render_options;
using attn::sci_mode;
using attn::tensor;


std::string print(const xt::xarray<float>& values, const render_options& options = {}) {
    return attn::format_torch({"t", {}, values}, options);
}

// ----------------------------------------------------------------------------
// reading the fixture

/// "-inf", "inf", "nan", a number or a boolean, as the float attn stores.
float value_from_json(const nlohmann::json& v) {
    if (v.is_boolean()) return v.get<bool>() ? 1.0f : 0.0f;
    if (v.is_string()) {
        const auto s = v.get<std::string>();
        if (s == "-inf") return -inf;
        if (s == "inf") return inf;
        if (s == "nan") return std::numeric_limits<float>::quiet_NaN();
        throw std::runtime_error("unexpected string value \"" + s + "\"");
    }
    return static_cast<float>(v.get<double>());  // the exact float32 value, written as a double
}

tensor tensor_from_json(const nlohmann::json& c) {
    const auto name = c.at("name").get<std::string>();
    const auto type = c.at("dtype") == "bool" ? element_type::boolean : element_type::float32;
    auto data = xt::xarray<float>::from_shape(c.at("shape").get<std::vector<std::size_t>>());
    const nlohmann::json& values = c.at("values");
    if (values.size() != data.size()) throw std::runtime_error(name + ": wrong number of values");
    for (std::size_t i = 0; i < values.size(); ++i) data.data()[i] = value_from_json(values[i]);
    return tensor(name, {}, std::move(data), type);
}

render_options options_from_json(const nlohmann::json& o) {
    render_options options;
    options.precision = o.at("precision").get<int>();
    options.full = o.at("full").get<bool>();
    const nlohmann::json& sci = o.at("sci_mode");
    options.notation = sci.is_null() ? sci_mode::automatic : sci.get<bool>() ? sci_mode::on : sci_mode::off;
    return options;
}

/// Where two texts first differ: "line 3, column 12" and both lines.
std::string first_difference(const std::string& expected, const std::string& actual) {
    std::size_t i = 0;
    while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
    const std::size_t line_start = expected.rfind('\n', i == 0 ? 0 : i - 1);
    const std::size_t from = line_start == std::string::npos ? 0 : line_start + 1;
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(expected.begin(), expected.begin() + from, '\n'));
    auto line_of = [from](const std::string& s) { return s.substr(from, s.find('\n', from) - from); };
    std::ostringstream os;
    os << "line " << line << ", column " << (i - from + 1) << "\n  torch: " << line_of(expected)
       << "\n  attn:  " << (from <= actual.size() ? line_of(actual) : std::string("(ends earlier)"));
    return os.str();
}

}  // namespace

TEST_SUITE("render_torch") {

TEST_CASE("a 2x3 tensor prints as tensor([[...],\\n        [...]])") {
    CHECK(print({{0.5f, -1.25f, 2.0f}, {0.0f, 3.125f, -0.75f}}) ==
          "tensor([[ 0.5000, -1.2500,  2.0000],\n"
          "        [ 0.0000,  3.1250, -0.7500]])");
}

TEST_CASE("3-D and up: blank lines between blocks, one more column of indentation per level") {
    CHECK(print({{{1.5f, -2.0f}}, {{0.25f, 3.0f}}}) ==
          "tensor([[[ 1.5000, -2.0000]],\n"
          "\n"
          "        [[ 0.2500,  3.0000]]])");
    xt::xarray<float> four_d = xt::ones<float>({2, 1, 1, 1});  // [[[[1.]]], [[[2.]]]]
    four_d(1, 0, 0, 0) = 2.0f;
    CHECK(print(four_d) ==
          "tensor([[[[1.]]],\n"
          "\n"
          "\n"
          "        [[[2.]]]])");
}

TEST_CASE("numbers: one notation and one width per tensor") {
    SUBCASE("integers print as \"1.\"") { CHECK(print({1.0f, -2.0f, 0.0f}) == "tensor([ 1., -2.,  0.])"); }
    SUBCASE("-inf is right-aligned but not counted in the width") {
        CHECK(print({{0.5f, -inf}, {-0.25f, 1.5f}}) ==
              "tensor([[ 0.5000,    -inf],\n"
              "        [-0.2500,  1.5000]])");
        CHECK(print({1.0f, -inf}) == "tensor([1., -inf])");
    }
    SUBCASE("scientific when max/min > 1000, and for -1e9 fills") {
        CHECK(print({0.5f, -1e9f}) == "tensor([ 5.0000e-01, -1.0000e+09])");
    }
    SUBCASE("nan rows of a softmax with nothing to attend") {
        CHECK(print({{NAN, NAN}, {0.25f, 0.75f}}) ==
              "tensor([[   nan,    nan],\n"
              "        [0.2500, 0.7500]])");
    }
    SUBCASE("masks print True and False") {
        tensor mask{"mask", {}, {{1.0f, 0.0f}, {1.0f, 1.0f}}, element_type::boolean};
        CHECK(attn::format_torch(mask, {}) ==
              "tensor([[ True, False],\n"
              "        [ True,  True]])");
    }
}

TEST_CASE("print options: precision, sci_mode") {
    render_options options;
    options.precision = 2;
    CHECK(print({0.125f, -1.5f}, options) == "tensor([ 0.12, -1.50])");
    options.notation = sci_mode::on;
    // The width was measured in fixed notation ("-1.50"), before sci_mode forced it, as in PyTorch.
    CHECK(print({0.125f, -1.5f}, options) == "tensor([1.25e-01, -1.50e+00])");
    options.notation = sci_mode::off;
    CHECK(print({1e-6f, 1.0f}, options) == "tensor([    0.00,     1.00])");  // width of "1.00e-06"
}

TEST_CASE("a row longer than 80 columns wraps under its first number") {
    xt::xarray<float> row = xt::ones<float>({10}) * 0.5f;
    CHECK(print(row) ==
          "tensor([0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000,\n"
          "        0.5000])");
}

TEST_CASE("more than 1000 elements: the first and last 3 of every axis longer than 6") {
    xt::xarray<float> v = xt::zeros<float>({1001});
    for (std::size_t i = 0; i < v.size(); ++i) v(i) = static_cast<float>(i) * 0.5f;
    // 500 / 0.5 is exactly 1000, not above it: fixed notation.
    CHECK(print(v) == "tensor([  0.0000,   0.5000,   1.0000,  ..., 499.0000, 499.5000, 500.0000])");
    render_options full;
    full.full = true;
    CHECK(print(v, full).find("...") == std::string::npos);
}

TEST_CASE("render_torch: a header per tensor, only the stages asked for") {
    attn::trace t;
    attn::stage scores;
    scores.info = attn::find_stage_info("scores");
    scores.tensors = {{"scores", {"batch", "head", "query", "key"}, {{{{0.5f, 1.0f}}}}}};
    attn::stage mask;
    mask.info = attn::find_stage_info("mask");
    mask.tensors = {{"mask", {"batch", "head", "query", "key"}, {{{{1.0f, 0.0f}}}}, element_type::boolean}};
    t.stages = {scores, mask};

    std::ostringstream all;
    attn::render_torch(t, {}, all);
    CHECK(all.str() ==
          "# scores.scores\n"
          "tensor([[[[0.5000, 1.0000]]]])\n"
          "# mask.mask\n"
          "tensor([[[[ True, False]]]])\n");

    render_options only_mask;
    only_mask.stages = attn::stages(attn::stage_id::mask);
    std::ostringstream some;
    attn::render_torch(t, only_mask, some);
    CHECK(some.str() == "# mask.mask\ntensor([[[[ True, False]]]])\n");
}

TEST_CASE("every case of torch_print.json prints as torch printed it") {
    const nlohmann::json cases = read_json(reference_path("torch_print.json"));
    CHECK(cases.size() >= 60);
    for (const nlohmann::json& c : cases) {
        const std::string name = c.at("name").get<std::string>();
        const std::string expected = c.at("text").get<std::string>();
        std::string actual;
        try {
            actual = attn::format_torch(tensor_from_json(c), options_from_json(c.at("options")));
        } catch (const std::exception& e) {
            FAIL_CHECK(name << ": " << e.what());
            continue;
        }
        CHECK_MESSAGE(actual == expected, name << ": " << first_difference(expected, actual));
    }
}

}  // TEST_SUITE
