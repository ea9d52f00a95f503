// mask_stream: a mask read a query row at a time equals build_mask's whole mask (test_mask.cpp
// checks that one against literal matrices and torch's draws), row for row, for every kind and
// their combinations, a random mask drawn as it goes included; a copy and restart() read it again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/mask_stream.hpp"

namespace {

/// Every row of `rows`, from where it is, against whole [B,1,Sq,Sk].
void check_rows(attn::mask_stream& rows, const xt::xarray<bool>& whole) {
    const std::size_t batch = whole.shape()[0], sq = whole.shape()[2], sk = whole.shape()[3];
    REQUIRE(rows.batch() == batch);
    REQUIRE(rows.rows() == sq);
    REQUIRE(rows.keys() == sk);
    std::size_t differ = 0;
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* row = rows.next();
            for (std::size_t j = 0; j < sk; ++j) differ += row[j] != whole(b, 0, i, j);
        }
    CHECK(differ == 0);
}

attn::config sized(std::int64_t batch, std::int64_t sq, std::int64_t sk) {
    attn::config c;
    c.batch = batch;
    c.seq = sq;
    c.kv_seq = sk;
    return c;
}

}  // namespace

TEST_SUITE("mask_stream") {

TEST_CASE("each kind and their combinations: the rows of build_mask's mask, in order") {
    struct one {
        std::string name;
        attn::config c;
    };
    std::vector<one> cases;
    const auto add = [&](const std::string& name, attn::config c) { cases.push_back({name, c}); };
    attn::config c = sized(2, 5, 7);
    c.mask.causal = true;
    add("causal, Sq < Sk", c);
    c.mask.causal_align = attn::causal_alignment::lower_right;
    add("causal lower-right", c);
    c = sized(3, 6, 6);
    c.mask.padding = true;
    c.mask.lengths = {6, 2, 0};
    add("padding, an item with no key", c);
    c.mask.window = true;
    c.mask.window_size = 1;
    add("padding + window", c);
    c = sized(2, 3, 9);
    c.past = 6;
    c.mask.window = c.mask.causal = true;
    c.mask.window_size = 2;
    add("causal + window after --past 6", c);
    c = sized(3, 40, 33);
    c.mask.random = true;
    c.mask.random_seed = 11;
    c.mask.random_keep = 0.3;
    add("random over several rows of draws (624 words a twist)", c);
    c.mask.causal = c.mask.padding = true;
    c.mask.lengths = {33, 5, 20};
    add("causal + padding + random", c);
    for (one& k : cases) {
        CAPTURE(k.name);
        const xt::xarray<bool> whole = attn::build_mask(k.c);
        attn::mask_stream rows(k.c);
        check_rows(rows, whole);
        rows.restart();
        check_rows(rows, whole);
        attn::mask_stream copy(rows);  // from row (0, 0) again, whatever `rows` has read
        check_rows(copy, whole);
    }
}

TEST_CASE("mask files: their rows ANDed with the kinds' and the random draws'") {
    attn::config c = sized(2, 3, 4);
    c.mask.causal = c.mask.random = c.mask.from_file = true;
    c.mask.random_keep = 0.8;
    xt::xarray<bool> files = xt::xarray<bool>::from_shape({2, 1, 3, 4});
    for (std::size_t e = 0; e < files.size(); ++e) files.data()[e] = e % 3 != 1;
    attn::mask_stream rows(c, &files);
    check_rows(rows, attn::build_mask(c, &files));
    c.mask.causal = c.mask.random = false;  // the files alone
    attn::mask_stream alone(c, &files);
    check_rows(alone, files);
}

TEST_CASE("reading past the last row is refused, not read out of bounds") {
    attn::config c = sized(1, 2, 2);
    c.mask.causal = true;
    attn::mask_stream rows(c);
    rows.next();
    rows.next();
    CHECK_THROWS_AS(rows.next(), attn::error);
}

}
