// json_tensor: the JSON nested-array reader behind every .json flag.
//
// The JSON is what `json.dump(tensor.tolist())` writes (reference/io/, made by
// make_io_fixtures.py), including Python's bare NaN and Infinity; every way it can be
// wrong is checked against its exact message, with the line and column or the index path.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/io/json_tensor.hpp"
#include "attn/io/npz.hpp"
#include "attn/io/tensor_file.hpp"
#include "support.hpp"

namespace {


attn::loaded_tensor json(const std::string& text) { return attn::parse_json_tensor(text, "--q q.json"); }



}  // namespace

TEST_SUITE("json_tensor") {
    TEST_CASE("JSON non-finite values: Python's bare tokens and the strings attn writes") {
        SUBCASE("json.dump's NaN, Infinity, -Infinity") {
            const auto t = attn::read_tensor_file(io_dir + "nonfinite.json", "--input nonfinite.json");
            CHECK(t.shape == std::vector<std::size_t>{2, 2});
            CHECK(t.values(0, 0) == 1.0f);
            CHECK(std::isnan(t.values(0, 1)));
            CHECK(t.values(1, 0) == inf);
            CHECK(t.values(1, 1) == -inf);
            CHECK(t.non_finite == 3);
            CHECK(t.first_non_finite == std::vector<std::size_t>{0, 1});
        }
        SUBCASE("strings in any case, with a sign or spelled out") {
            const auto t = json(R"(["inf", "-inf", "nan", "+inf", "Infinity", "-Infinity", "NaN", "INF", "-NaN", 2])");
            const std::vector<float> v = values_of(t);
            CHECK(v[0] == inf);
            CHECK(v[1] == -inf);
            CHECK(std::isnan(v[2]));
            CHECK(v[3] == inf);
            CHECK(v[4] == inf);
            CHECK(v[5] == -inf);
            CHECK(std::isnan(v[6]));
            CHECK(v[7] == inf);
            CHECK(std::isnan(v[8]));
            CHECK(v[9] == 2.0f);
            CHECK(t.non_finite == 9);
            CHECK(t.first_non_finite == std::vector<std::size_t>{0});
        }
        SUBCASE("bare tokens inside strings stay strings") {
            CHECK_THROWS_WITH_AS(json(R"([1, "a NaN b"])"),
                                 R"(--q q.json: element [1] is the string "a NaN b"; expected a number, true/false, or "nan", "inf", "-inf")",
                                 attn::error);
        }
    }

    TEST_CASE("JSON numbers become float32 as torch.tensor(list) makes them") {
        const std::vector<float> v = values_of(json("[0.1, 1e39, -1e39, 1e999, -1e999, 1e-50, 16777217, "
                                                    "18446744073709551615, -9223372036854775808, 3.4028235677973366e38, "
                                                    "3.4028235677973362e38, -3.4028234663852886e38]"));
        const float max = std::numeric_limits<float>::max();
        CHECK(v == std::vector<float>{0.1f, inf, -inf, inf, -inf, 0.0f, 16777216.0f, 0x1p64f, -0x1p63f, inf, max, -max});
        SUBCASE("a bare number is a 0-d tensor") {
            const auto t = json(" 2.5 ");
            CHECK(t.shape.empty());
            CHECK(values_of(t) == std::vector<float>{2.5f});
        }
    }

    TEST_CASE("the fast reader and nlohmann's (after an escape) give the same tensors") {
        // A string with an escape sends the whole file to nlohmann's parser; "\u006ean" is "nan".
        const auto both = [](const std::string& fast, const std::string& slow) {
            CAPTURE(fast);
            check_same(json(fast), json(slow));
        };
        SUBCASE("every kind of number token") {
            const std::string numbers =
                "0, -0, -0.0, 1, -1, 0.1, 1e5, 1E+5, 2.5e-3, 123456789012345678, 9223372036854775807, "
                "9223372036854775808, 18446744073709551615, 18446744073709551616, -9223372036854775808, "
                "-9223372036854775809, 1e39, -1e39, 1e999, -1e999, 1e-400, 3.4028235677973366e38, "
                "3.4028235677973362e38, 1.401298464324817e-45, 7.006492321624085e-46, 0.30000000000000004";
            both("[" + numbers + ", \"nan\", NaN, Infinity, -Infinity]",
                 "[" + numbers + ", \"\\u006ean\", NaN, Infinity, -Infinity]");
            CHECK(std::signbit(json("[-0.0]").values(0)));
            CHECK(json("[1.401298464324817e-45]").values(0) == std::numeric_limits<float>::denorm_min());
        }
        SUBCASE("a real file: x.json, torch.randn(2, 3, 4), its first number replaced by nan") {
            const std::string x = file_bytes(io_dir + "x.json");
            const std::string first = "-1.1258398294448853";
            REQUIRE(x.compare(3, first.size(), first) == 0);
            both(std::string(x).replace(3, first.size(), "\"nan\""), std::string(x).replace(3, first.size(), "\"\\u006ean\""));
        }
        SUBCASE("objects of tensors, with booleans") {
            const auto fast = attn::parse_json_tensors(R"({"ab": [[1, 2]], "c": [true]})", "p");
            const auto slow = attn::parse_json_tensors(R"({"a\u0062": [[1, 2]], "c": [true]})", "p");
            REQUIRE(slow.count("ab") == 1);
            check_same(fast.at("ab"), slow.at("ab"));
            check_same(fast.at("c"), slow.at("c"));
        }
        SUBCASE("semantic errors read the same either way") {
            CHECK_THROWS_WITH_AS(json("[[1, 2], [\"\\u006ean\"]]"),
                                 "--q q.json: ragged nested arrays: element [1] has 1 entry, element [0] has 2", attn::error);
            CHECK_THROWS_WITH_AS(json("[[1, 2], [\"nan\"]]"),
                                 "--q q.json: ragged nested arrays: element [1] has 1 entry, element [0] has 2", attn::error);
        }
        SUBCASE("JSON that is not quite JSON is refused, by nlohmann") {
            CHECK_THROWS_WITH_AS(json("[01]"), "--q q.json: line 1, column 3: unexpected number literal; expected ',' or ']'",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[1.]"), "--q q.json: line 1, column 4: invalid number; expected digit after '.'",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[+1]"), "--q q.json: line 1, column 2: invalid literal", attn::error);
            CHECK_THROWS_WITH_AS(json("[.5]"), "--q q.json: line 1, column 2: invalid literal", attn::error);
            CHECK_THROWS_WITH_AS(json("[1,]"), "--q q.json: line 1, column 4: unexpected ']'; expected '[', '{', or a literal",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[NaNa]"), "--q q.json: line 1, column 5: invalid literal; expected ',' or ']'",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("Infinity x"), "--q q.json: line 1, column 10: invalid literal; expected end of input",
                                 attn::error);
            CHECK(values_of(json("Infinity")) == std::vector<float>{inf});
            CHECK_THROWS_WITH_AS(json("[1, \"\xff\"]"), "--q q.json: line 1, column 6: invalid string: ill-formed UTF-8 byte",
                                 attn::error);
            CHECK(values_of(json("\xef\xbb\xbf[1, 2]")) == std::vector<float>{1, 2});  // a UTF-8 byte order mark
        }
    }

    TEST_CASE("JSON booleans make a boolean tensor") {
        const auto t = attn::read_tensor_file(io_dir + "mask.json", "--mask-file mask.json");
        CHECK(t.boolean);
        CHECK(t.shape == std::vector<std::size_t>{3, 3});
        CHECK(values_of(t) == std::vector<float>{1, 0, 0, 1, 1, 0, 1, 1, 1});
        CHECK_FALSE(json("[1, 0]").boolean);
    }

    TEST_CASE("JSON syntax errors give the line and column in the user's text") {
        CHECK_THROWS_WITH_AS(json("[1 2]"), "--q q.json: line 1, column 4: unexpected number literal; expected ',' or ']'",
                             attn::error);
        CHECK_THROWS_WITH_AS(json("[[1, 2],\n [3, 4]\n [5, 6]]"),
                             "--q q.json: line 3, column 2: unexpected '['; expected ',' or ']'", attn::error);
        CHECK_THROWS_WITH_AS(json("[1, 2"), "--q q.json: line 1, column 6: unexpected end of input; expected ',' or ']'",
                             attn::error);
        CHECK_THROWS_WITH_AS(json("[1, tru]"), "--q q.json: line 1, column 8: invalid literal", attn::error);
        CHECK_THROWS_WITH_AS(attn::parse_json_tensors("{\"a\" 1}", "--q q.json"),
                             "--q q.json: line 1, column 6: unexpected number literal; expected ':'", attn::error);
        CHECK_THROWS_WITH_AS(json("[1, 2]]"), "--q q.json: line 1, column 7: unexpected ']'; expected end of input",
                             attn::error);
        CHECK_THROWS_WITH_AS(json(" \n "), "--q q.json: empty file; expected JSON nested arrays such as [[1, 2], [3, 4]]",
                             attn::error);
        SUBCASE("positions after NaN and Infinity, which are rewritten before parsing, still point at the user's text") {
            CHECK_THROWS_WITH_AS(json("[NaN, -Infinity,\n Infinity x]"),
                                 "--q q.json: line 2, column 11: invalid literal; expected ',' or ']'", attn::error);
            // nlohmann stops at the last character of the offending token: NaN's last N
            CHECK_THROWS_WITH_AS(json("[NaN NaN]"), "--q q.json: line 1, column 8: unexpected string literal; expected ',' or ']'",
                                 attn::error);
            // columns count characters, not bytes
            CHECK_THROWS_WITH_AS(attn::parse_json_tensors("{\"é\": [NaN x]}", "--q q.json"),
                                 "--q q.json: line 1, column 12: invalid literal; expected ',' or ']'", attn::error);
        }
    }

    TEST_CASE("JSON that parses but is not a tensor: the index path of the offending element") {
        SUBCASE("ragged") {
            CHECK_THROWS_WITH_AS(json("[[1, 2, 3, 4], [1, 2, 3]]"),
                                 "--q q.json: ragged nested arrays: element [1] has 3 entries, element [0] has 4",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[[[1], [2]], [[3], [4, 5]]]"),
                                 "--q q.json: ragged nested arrays: element [1][1] has 2 entries, element [0][0] has 1",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[[1, 2], 3]"),
                                 "--q q.json: ragged nested arrays: element [1] is a number, element [0] is an array",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[[1, 2], [3, [4]]]"),
                                 "--q q.json: ragged nested arrays: element [1][1] is an array, element [0][0] is a number",
                                 attn::error);
        }
        SUBCASE("empty") {
            CHECK_THROWS_WITH_AS(json("[]"), "--q q.json: empty array: a tensor needs at least one entry on every axis",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[[1], []]"),
                                 "--q q.json: element [1] is an empty array; a tensor needs at least one entry on every axis",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[[]]"),
                                 "--q q.json: element [0] is an empty array; a tensor needs at least one entry on every axis",
                                 attn::error);
        }
        SUBCASE("not a number") {
            CHECK_THROWS_WITH_AS(json("[[1, null]]"),
                                 R"(--q q.json: element [0][1] is null; expected a number, true/false, or "nan", "inf", "-inf")",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json(R"([[1], ["a string far too long to show whole"]])"),
                                 R"x(--q q.json: element [1][0] is the string "a string far too long to... (35 bytes)"; expected a number, true/false, or "nan", "inf", "-inf")x",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json(R"([1, {"a": 1}])"),
                                 R"(--q q.json: element [1] is an object; expected a number, true/false, or "nan", "inf", "-inf")",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json(R"({"x": [1, 2]})"),
                                 "--q q.json: the top level is an object; expected nested arrays of numbers", attn::error);
            CHECK_THROWS_WITH_AS(json("null"), "--q q.json: the top level is null; expected nested arrays of numbers",
                                 attn::error);
        }
        SUBCASE("nested too deep (a stack overflow elsewhere)") {
            const std::string deep = std::string(100000, '[') + "1" + std::string(100000, ']');
            std::string path;
            for (int axis = 0; axis < 64; ++axis) path += "[0]";
            CHECK_THROWS_WITH_AS(json(deep), ("--q q.json: element " + path + " opens more than 64 nested arrays").c_str(),
                                 attn::error);
            CHECK_THROWS_WITH_AS(json(deep + "x"), ("--q q.json: element " + path + " opens more than 64 nested arrays").c_str(),
                                 attn::error);
        }
        SUBCASE("quoted text stays on one line") {
            CHECK_THROWS_WITH_AS(json(R"(["a\nb"])"),
                                 R"(--q q.json: element [0] is the string "a\x0ab"; expected a number, true/false, or "nan", "inf", "-inf")",
                                 attn::error);
            CHECK_THROWS_WITH_AS(attn::parse_json_tensors(R"({"w\tq": []})", "p"),
                                 "p: w\\x09q: empty array: a tensor needs at least one entry on every axis", attn::error);
        }
        SUBCASE("numbers and booleans mixed") {
            CHECK_THROWS_WITH_AS(json("[[1, 0], [true, false]]"),
                                 "--q q.json: element [1][0] is a boolean, element [0][0] is a number; a tensor holds "
                                 "numbers or booleans, not both",
                                 attn::error);
            CHECK_THROWS_WITH_AS(json("[true, \"nan\"]"),
                                 "--q q.json: element [1] is a number, element [0] is a boolean; a tensor holds "
                                 "numbers or booleans, not both",
                                 attn::error);
        }
    }

    TEST_CASE("JSON objects of named tensors (--params p.json)") {
        const auto params = attn::read_json_tensors(io_dir + "params.json", "--params params.json");
        const auto npz = attn::read_npz(io_dir + "params.npz", "--params params.npz");
        REQUIRE(params.size() == 8);
        for (const auto& entry : npz) {  // no structured binding: CAPTURE's lambda (clang) cannot take one
            const std::string& name = entry.first;
            const auto& t = entry.second;
            CAPTURE(name);
            REQUIRE(params.count(name) == 1);
            check_same(params.at(name), t);
        }
        CHECK(params.at("w_q").shape == std::vector<std::size_t>{8, 8});
        CHECK(params.at("b_q").shape == std::vector<std::size_t>{8});

        const auto mixed = attn::parse_json_tensors(R"({"w": [[1, 2]], "m": [true], "s": NaN})", "--params p.json");
        CHECK(mixed.at("w").shape == std::vector<std::size_t>{1, 2});
        CHECK(mixed.at("m").boolean);
        CHECK(mixed.at("s").shape.empty());
        CHECK(mixed.at("s").non_finite == 1);
        CHECK(attn::parse_json_tensors("{}", "--params p.json").empty());

        CHECK_THROWS_WITH_AS(attn::parse_json_tensors(R"({"w_q": [[1, 2], [3]]})", "--params p.json"),
                             "--params p.json: w_q: ragged nested arrays: element [1] has 1 entry, element [0] has 2",
                             attn::error);
        CHECK_THROWS_WITH_AS(attn::parse_json_tensors(R"({"w_q": {"a": 1}})", "--params p.json"),
                             "--params p.json: w_q: the value is an object; expected nested arrays of numbers", attn::error);
        CHECK_THROWS_WITH_AS(attn::parse_json_tensors(R"({"w_q": [1], "w_q": [2]})", "--params p.json"),
                             "--params p.json: the key \"w_q\" appears twice", attn::error);
        CHECK_THROWS_WITH_AS(attn::parse_json_tensors("[[1, 2]]", "--params p.json"),
                             "--params p.json: the top level is an array; expected an object of named tensors, such as "
                             "{\"w_q\": [[...]], \"b_q\": [...]}",
                             attn::error);
        CHECK_THROWS_WITH_AS(attn::parse_json_tensors("{\"w_q\": [1,\n 2,, 3]}", "--params p.json"),
                             "--params p.json: line 2, column 4: unexpected ','; expected '[', '{', or a literal",
                             attn::error);
    }
}
