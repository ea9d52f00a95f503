// mask: every kind of attention mask as a literal matrix, their AND, and --mask parsing.
//
// Masks are [B,1,Sq,Sk] booleans, true = the query may attend the key (torch.tril polarity).
// Expected [Sq,Sk] planes are written as literal 0/1 matrices and compared, as text, with
// mask[b,0,:,:] for every b, so a failure prints both matrices.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/mask.hpp"

namespace {

using matrix = std::vector<std::vector<int>>;  // a literal [Sq,Sk] plane, 1 = may attend

std::string to_text(const matrix& m) {
    std::ostringstream os;
    os << '[';
    for (std::size_t i = 0; i < m.size(); ++i) {
        os << (i ? ",[" : "[");
        for (std::size_t j = 0; j < m[i].size(); ++j) os << (j ? "," : "") << m[i][j];
        os << ']';
    }
    os << ']';
    return os.str();
}

/// mask[b,0,:,:] as a literal-style matrix.
matrix mask_plane(const xt::xarray<bool>& mask, std::size_t b) {
    matrix m(mask.shape()[2], std::vector<int>(mask.shape()[3]));
    for (std::size_t i = 0; i < m.size(); ++i)
        for (std::size_t j = 0; j < m[i].size(); ++j) m[i][j] = mask(b, 0, i, j) ? 1 : 0;
    return m;
}

std::vector<std::size_t> mask_shape(const xt::xarray<bool>& mask) {
    return {mask.shape().begin(), mask.shape().end()};
}

/// The mask is [B,1,Sq,Sk] and each batch item's plane is expected[b].
void check_mask(const xt::xarray<bool>& mask, const std::vector<matrix>& expected) {
    REQUIRE(mask.dimension() == 4);
    REQUIRE(mask.shape()[0] == expected.size());
    CHECK(mask.shape()[1] == 1);
    for (std::size_t b = 0; b < expected.size(); ++b) {
        CAPTURE(b);
        CHECK(to_text(mask_plane(mask, b)) == to_text(expected[b]));
    }
}

/// The same plane for every batch item.
void check_mask(const xt::xarray<bool>& mask, const matrix& every_item) {
    check_mask(mask, std::vector<matrix>(mask.dimension() == 4 ? mask.shape()[0] : 1, every_item));
}

std::size_t count_true(const xt::xarray<bool>& mask) {
    std::size_t n = 0;
    for (bool v : mask) n += v;
    return n;
}

const std::string expected_kinds = "expected none, or causal, padding, window, random joined by '+'";

/// build_mask for a run of one rule: `batch` items, `sq` queries, `sk` keys.
xt::xarray<bool> rule_mask(std::int64_t batch, std::int64_t sq, std::int64_t sk, const attn::mask_spec& rule) {
    attn::config c;
    c.batch = batch;
    c.seq = sq;
    c.kv_seq = sk;
    c.mask = rule;
    return attn::build_mask(c);
}

xt::xarray<bool> mask_causal(std::int64_t batch, std::int64_t sq, std::int64_t sk,
                             attn::causal_alignment align = attn::causal_alignment::upper_left) {
    attn::mask_spec m;
    m.causal = true;
    m.causal_align = align;
    return rule_mask(batch, sq, sk, m);
}

xt::xarray<bool> mask_padding(const std::vector<std::int64_t>& lengths, std::int64_t sq, std::int64_t sk) {
    attn::mask_spec m;
    m.padding = true;
    m.lengths = lengths;
    return rule_mask(static_cast<std::int64_t>(lengths.size()), sq, sk, m);
}

xt::xarray<bool> mask_window(std::int64_t batch, std::int64_t sq, std::int64_t sk, std::int64_t window) {
    attn::mask_spec m;
    m.window = true;
    m.window_size = window;
    return rule_mask(batch, sq, sk, m);
}

}  // namespace

TEST_SUITE("mask") {

TEST_CASE("causal: query i may attend keys j <= i") {
    SUBCASE("Sq == Sk") {
        const auto mask = mask_causal(2, 4, 4);
        CHECK(mask_shape(mask) == std::vector<std::size_t>{2, 1, 4, 4});
        check_mask(mask, matrix{{1, 0, 0, 0},
                                {1, 1, 0, 0},
                                {1, 1, 1, 0},
                                {1, 1, 1, 1}});
    }
    SUBCASE("Sq < Sk (as torch.tril(ones(2, 4)))") {
        const auto mask = mask_causal(3, 2, 4);
        CHECK(mask_shape(mask) == std::vector<std::size_t>{3, 1, 2, 4});
        check_mask(mask, matrix{{1, 0, 0, 0},
                                {1, 1, 0, 0}});
    }
    SUBCASE("Sq > Sk (as torch.tril(ones(4, 2)))") {
        const auto mask = mask_causal(1, 4, 2);
        CHECK(mask_shape(mask) == std::vector<std::size_t>{1, 1, 4, 2});
        check_mask(mask, matrix{{1, 0},
                                {1, 1},
                                {1, 1},
                                {1, 1}});
    }
    SUBCASE("a single position") {
        check_mask(mask_causal(1, 1, 1), matrix{{1}});
    }
}

TEST_CASE("causal aligned lower-right: query i may attend keys j <= i + Sk - Sq") {
    const auto lower_right = attn::causal_alignment::lower_right;
    SUBCASE("Sq < Sk: torch.tril(ones(2, 4), diagonal=2), the last query sees every key") {
        check_mask(mask_causal(2, 2, 4, lower_right), matrix{{1, 1, 1, 0},
                                                                   {1, 1, 1, 1}});
    }
    SUBCASE("Sq > Sk: torch.tril(ones(4, 2), diagonal=-2), the first two queries see no key") {
        check_mask(mask_causal(1, 4, 2, lower_right), matrix{{0, 0},
                                                                   {0, 0},
                                                                   {1, 0},
                                                                   {1, 1}});
    }
    SUBCASE("Sq == Sk: the same mask as upper-left") {
        CHECK(mask_causal(2, 3, 3, lower_right) == mask_causal(2, 3, 3));
    }
    SUBCASE("one query (a KV-cache decoding step) sees every key; upper-left, only the first") {
        check_mask(mask_causal(1, 1, 5, lower_right), matrix{{1, 1, 1, 1, 1}});
        check_mask(mask_causal(1, 1, 5), matrix{{1, 0, 0, 0, 0}});
    }
    SUBCASE("build_mask follows config.mask.causal_align") {
        attn::config c;
        c.seq = 2;
        c.kv_seq = 3;
        c.mask.causal = true;
        check_mask(attn::build_mask(c), matrix{{1, 0, 0},
                                               {1, 1, 0}});
        c.mask.causal_align = lower_right;
        check_mask(attn::build_mask(c), matrix{{1, 1, 0},
                                               {1, 1, 1}});
    }
}

TEST_CASE("padding: batch item b may attend keys j < lengths[b]") {
    const auto mask = mask_padding({3, 0, 4}, 2, 4);
    CHECK(mask_shape(mask) == std::vector<std::size_t>{3, 1, 2, 4});
    check_mask(mask, std::vector<matrix>{
                         {{1, 1, 1, 0},
                          {1, 1, 1, 0}},
                         {{0, 0, 0, 0},
                          {0, 0, 0, 0}},
                         {{1, 1, 1, 1},
                          {1, 1, 1, 1}},
                     });
}

TEST_CASE("window: query i may attend keys j with |i - j| <= W") {
    SUBCASE("W = 0: only the diagonal") {
        const auto mask = mask_window(2, 5, 5, 0);
        CHECK(mask_shape(mask) == std::vector<std::size_t>{2, 1, 5, 5});
        check_mask(mask, matrix{{1, 0, 0, 0, 0},
                                {0, 1, 0, 0, 0},
                                {0, 0, 1, 0, 0},
                                {0, 0, 0, 1, 0},
                                {0, 0, 0, 0, 1}});
    }
    SUBCASE("W = 1: a band of three") {
        check_mask(mask_window(1, 5, 5, 1), matrix{{1, 1, 0, 0, 0},
                                                         {1, 1, 1, 0, 0},
                                                         {0, 1, 1, 1, 0},
                                                         {0, 0, 1, 1, 1},
                                                         {0, 0, 0, 1, 1}});
    }
    SUBCASE("W = 1 with Sq != Sk") {
        check_mask(mask_window(1, 2, 4, 1), matrix{{1, 1, 0, 0},
                                                         {1, 1, 1, 0}});
    }
}

TEST_CASE("random: torch.manual_seed(seed); torch.rand(B,1,Sq,Sk) < keep") {
    SUBCASE("the exact mask for seed 0, keep 0.5") {
        // torch.manual_seed(0); torch.rand(4) = 0.49625659, 0.7682218, 0.088477433, 0.13203049
        float draws[4];
        attn::torch_generator(0).rand(draws, 4);
        CHECK(draws[0] == doctest::Approx(0.49625659).epsilon(1e-7));
        CHECK(draws[1] == doctest::Approx(0.7682218).epsilon(1e-7));
        CHECK(draws[2] == doctest::Approx(0.088477433).epsilon(1e-7));
        CHECK(draws[3] == doctest::Approx(0.13203049).epsilon(1e-7));

        const auto mask = attn::mask_random(1, 2, 2, 0, 0.5);
        CHECK(mask_shape(mask) == std::vector<std::size_t>{1, 1, 2, 2});
        check_mask(mask, matrix{{1, 0},
                                {1, 1}});
    }
    SUBCASE("one draw per element in row-major order over [B,1,Sq,Sk]") {
        // the same four draws split over two batch items of [1,2]
        check_mask(attn::mask_random(2, 1, 2, 0, 0.5), std::vector<matrix>{{{1, 0}}, {{1, 1}}});
    }
    SUBCASE("the same seed gives the same mask") {
        const auto a = attn::mask_random(2, 8, 8, 1234, 0.5);
        const auto b = attn::mask_random(2, 8, 8, 1234, 0.5);
        CHECK(to_text(mask_plane(a, 0)) == to_text(mask_plane(b, 0)));
        CHECK(to_text(mask_plane(a, 1)) == to_text(mask_plane(b, 1)));
    }
    SUBCASE("different seeds give different masks") {
        const auto a = attn::mask_random(2, 8, 8, 0, 0.5);
        const auto b = attn::mask_random(2, 8, 8, 1, 0.5);
        CHECK(to_text(mask_plane(a, 0)) + to_text(mask_plane(a, 1)) != to_text(mask_plane(b, 0)) + to_text(mask_plane(b, 1)));
    }
    SUBCASE("keep = 0: nothing may be attended") {
        const auto mask = attn::mask_random(2, 6, 7, 5, 0.0);
        CHECK(mask_shape(mask) == std::vector<std::size_t>{2, 1, 6, 7});
        CHECK(count_true(mask) == 0);
    }
    SUBCASE("keep = 1: everything may be attended") {
        const auto mask = attn::mask_random(2, 6, 7, 5, 1.0);
        CHECK(count_true(mask) == 2 * 6 * 7);
    }
    SUBCASE("keep is roughly the fraction kept") {
        const auto mask = attn::mask_random(4, 32, 32, 7, 0.25);
        const double kept = static_cast<double>(count_true(mask)) / (4 * 32 * 32);
        CHECK(kept == doctest::Approx(0.25).epsilon(0.2));
    }
}

TEST_CASE("build_mask: the AND of every kind asked for, shaped [B,1,Sq,Sk]") {
    attn::config c;
    c.batch = 2;
    c.seq = 3;
    c.kv_seq = 3;
    SUBCASE("causal + padding") {
        c.mask.causal = c.mask.padding = true;
        c.mask.lengths = {2, 3};
        const auto mask = attn::build_mask(c);
        CHECK(mask_shape(mask) == std::vector<std::size_t>{2, 1, 3, 3});
        check_mask(mask, std::vector<matrix>{
                             {{1, 0, 0},
                              {1, 1, 0},
                              {1, 1, 0}},
                             {{1, 0, 0},
                              {1, 1, 0},
                              {1, 1, 1}},
                         });
    }
    SUBCASE("causal + window 1 with Sq != Sk") {
        c.kv_seq = 4;
        c.mask.causal = c.mask.window = true;
        c.mask.window_size = 1;
        const auto mask = attn::build_mask(c);
        CHECK(mask_shape(mask) == std::vector<std::size_t>{2, 1, 3, 4});
        check_mask(mask, matrix{{1, 0, 0, 0},
                                {1, 1, 0, 0},
                                {0, 1, 1, 0}});
    }
    SUBCASE("padding + random (seed 0, keep 0.5)") {
        c.batch = 1;
        c.seq = 2;
        c.kv_seq = 2;
        c.mask.padding = c.mask.random = true;
        c.mask.lengths = {1};
        check_mask(attn::build_mask(c), matrix{{1, 0},
                                               {1, 0}});
    }
    SUBCASE("a single kind equals that kind's mask") {
        c.mask.window = true;
        c.mask.window_size = 0;
        check_mask(attn::build_mask(c), matrix{{1, 0, 0},
                                               {0, 1, 0},
                                               {0, 0, 1}});
    }
}

TEST_CASE("mask_rows: the rules' mask a row at a time, build_mask's rows for every mix of rules") {
    for (const auto& sizes : {std::pair<std::int64_t, std::int64_t>{5, 5}, {4, 7}, {7, 3}}) {
        const std::int64_t sq = sizes.first, sk = sizes.second;  // CAPTURE takes no structured binding (clang)
        for (int kinds = 1; kinds < 8; ++kinds) {  // causal, padding, window: every mix
            for (const auto align : {attn::causal_alignment::upper_left, attn::causal_alignment::lower_right}) {
                attn::config c;
                c.batch = 3;
                c.seq = sq;
                c.kv_seq = sk;
                c.mask.causal = (kinds & 1) != 0;
                c.mask.padding = (kinds & 2) != 0;
                c.mask.window = (kinds & 4) != 0;
                c.mask.causal_align = align;
                c.mask.lengths = {sk, 2, 0};  // the last: every row empty
                c.mask.window_size = 1;
                REQUIRE(attn::mask_rows::make_all_of(c));
                const xt::xarray<bool> whole = attn::build_mask(c);
                const attn::mask_rows rows(c.mask, sq, sk);
                std::vector<char> differ;
                bool scratch[8];
                for (std::size_t b = 0; b < 3; ++b)
                    for (std::size_t i = 0; i < static_cast<std::size_t>(sq); ++i) {
                        const bool* row = rows.row(b, i, scratch);
                        for (std::size_t j = 0; j < static_cast<std::size_t>(sk); ++j)
                            if (row[j] != whole(b, 0, i, j)) differ.push_back(1);
                    }
                CAPTURE(sq);
                CAPTURE(sk);
                CAPTURE(kinds);
                CHECK(differ.empty());
            }
        }
    }
}

TEST_CASE("mask_rows: a random mask, a mask file or a key padding mask is built whole") {
    attn::config c;
    c.mask.causal = true;
    CHECK(attn::mask_rows::make_all_of(c));
    attn::config random = c, file = c, key_padding = c, none;
    random.mask.random = true;
    file.mask.from_file = true;
    key_padding.mask.key_padding = true;
    for (const attn::config& whole : {random, file, key_padding, none})
        CHECK_FALSE(attn::mask_rows::make_all_of(whole));
}

TEST_CASE("mask_rows: rules with the polarity flipped give build_mask's rows, negated") {
    attn::config c;
    c.batch = 2, c.seq = 3, c.kv_seq = 4;
    c.mask.causal = c.mask.padding = true;
    c.mask.lengths = {4, 2};
    attn::mask_rules rules = attn::rules_of(c.mask, c.seq, c.kv_seq);
    rules.inverted = true;
    const xt::xarray<bool> whole = attn::build_mask(c), inverted = attn::build_mask(c, rules);
    const attn::mask_rows rows(rules);
    bool scratch[4];
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < 3; ++i) {
            const bool* row = rows.row(b, i, scratch);
            for (std::size_t j = 0; j < 4; ++j) {
                CHECK(row[j] == !whole(b, 0, i, j));
                CHECK(inverted(b, 0, i, j) == !whole(b, 0, i, j));
            }
        }
}

TEST_CASE("parse_mask_kinds: none, or kinds joined by '+'") {
    attn::mask_spec spec;
    SUBCASE("none turns every kind off") {
        spec.causal = spec.random = true;
        attn::parse_mask_kinds("none", spec);
        CHECK_FALSE(spec.any());
    }
    SUBCASE("causal") {
        attn::parse_mask_kinds("causal", spec);
        CHECK(spec.causal);
        CHECK_FALSE(spec.padding);
        CHECK_FALSE(spec.window);
        CHECK_FALSE(spec.random);
    }
    SUBCASE("all four, and the other fields are left alone") {
        spec.lengths = {1, 2};
        spec.window_size = 3;
        spec.random_seed = 9;
        spec.random_keep = 0.75;
        attn::parse_mask_kinds("causal+padding+window+random", spec);
        CHECK(spec.causal);
        CHECK(spec.padding);
        CHECK(spec.window);
        CHECK(spec.random);
        CHECK(spec.lengths == std::vector<std::int64_t>{1, 2});
        CHECK(spec.window_size == std::optional<std::int64_t>(3));
        CHECK(spec.random_seed == 9);
        CHECK(spec.random_keep == 0.75);
    }
    SUBCASE("a later parse replaces the kinds of an earlier one") {
        attn::parse_mask_kinds("causal+window", spec);
        attn::parse_mask_kinds("padding", spec);
        CHECK_FALSE(spec.causal);
        CHECK(spec.padding);
        CHECK_FALSE(spec.window);
    }
}

TEST_CASE("parse_mask_kinds: an unknown, empty or repeated kind is a usage_error naming --mask") {
    attn::mask_spec spec;
    SUBCASE("foo") {
        CHECK_THROWS_WITH_AS(attn::parse_mask_kinds("foo", spec),
                             ("--mask foo: unknown kind 'foo' (" + expected_kinds + ")").c_str(), attn::usage_error);
    }
    SUBCASE("a trailing '+'") {
        CHECK_THROWS_WITH_AS(attn::parse_mask_kinds("causal+", spec),
                             ("--mask causal+: unknown kind '' (" + expected_kinds + ")").c_str(), attn::usage_error);
    }
    SUBCASE("a leading '+'") {
        CHECK_THROWS_WITH_AS(attn::parse_mask_kinds("+causal", spec),
                             ("--mask +causal: unknown kind '' (" + expected_kinds + ")").c_str(), attn::usage_error);
    }
    SUBCASE("a repeated kind") {
        CHECK_THROWS_WITH_AS(attn::parse_mask_kinds("causal+causal", spec), "--mask causal+causal: 'causal' is given twice",
                             attn::usage_error);
    }
    SUBCASE("the empty string") {
        CHECK_THROWS_WITH_AS(attn::parse_mask_kinds("", spec),
                             ("--mask is empty (" + expected_kinds + ")").c_str(), attn::usage_error);
    }
    SUBCASE("none is not a kind to combine") {
        CHECK_THROWS_WITH_AS(attn::parse_mask_kinds("none+causal", spec),
                             ("--mask none+causal: unknown kind 'none' (" + expected_kinds + ")").c_str(),
                             attn::usage_error);
    }
    SUBCASE("kinds are case-sensitive") {
        CHECK_THROWS_WITH_AS(attn::parse_mask_kinds("Causal", spec),
                             ("--mask Causal: unknown kind 'Causal' (" + expected_kinds + ")").c_str(),
                             attn::usage_error);
    }
}

TEST_CASE("mask_kinds_to_string is the inverse of parse_mask_kinds") {
    attn::mask_spec spec;
    CHECK(attn::mask_kinds_to_string(spec) == "none");
    spec.padding = spec.random = true;
    CHECK(attn::mask_kinds_to_string(spec) == "padding+random");

    for (const char* text : {"none", "causal", "padding", "window", "random", "causal+padding", "causal+window",
                             "padding+window+random", "causal+padding+window+random"}) {
        CAPTURE(text);
        attn::mask_spec parsed;
        attn::parse_mask_kinds(text, parsed);
        CHECK(attn::mask_kinds_to_string(parsed) == text);
    }
}

}  // TEST_SUITE("mask")
