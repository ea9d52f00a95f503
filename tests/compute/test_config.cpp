// config: validate() accepts what attn can compute and rejects everything else with
// one usage_error that names the flag (CLI.md, "Errors and exit codes"); cross() and
// fill_to_string().
#include <cstdint>
#include <limits>
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "support.hpp"

namespace {

/// The defaults of `attn trace`: B=1, Sq=Sk=4, D=8, H=2, Din=Dkv=8, no mask.
attn::config defaults() { return attn::config{}; }

}  // namespace

TEST_SUITE("config") {

TEST_CASE("validate accepts the defaults and every well-formed mask") {
    SUBCASE("the defaults") {
        const attn::config c = defaults();
        CHECK(c.batch == 1);
        CHECK(c.seq == 4);
        CHECK(c.kv_seq == 4);
        CHECK(c.d_model == 8);
        CHECK(c.heads == 2);
        CHECK(c.head_dim() == 4);
        CHECK(c.fill == -inf);
        CHECK_FALSE(c.mask.any());
        CHECK_NOTHROW(attn::validate(c));
    }
    SUBCASE("every kind of mask with its options") {
        attn::config c = defaults();
        c.batch = 3;
        c.mask.causal = c.mask.padding = c.mask.window = c.mask.random = true;
        c.mask.lengths = {0, 2, 4};  // 0 and kv_seq are both allowed
        c.mask.window_size = 0;
        c.mask.random_keep = 1.0;
        c.fill = -1e9f;
        CHECK_NOTHROW(attn::validate(c));
        c.mask.random_keep = 0.0;
        CHECK_NOTHROW(attn::validate(c));
    }
    SUBCASE("cross-attention sizes") {
        attn::config c = defaults();
        c.kv_seq = 7;
        c.d_kv_in = 3;
        c.d_in = 5;
        CHECK_NOTHROW(attn::validate(c));
    }
}

TEST_CASE("validate: every size must be at least 1") {
    attn::config c = defaults();
    SUBCASE("--batch 0") {
        c.batch = 0;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--batch 0 must be at least 1", attn::usage_error);
    }
    SUBCASE("--batch -3") {
        c.batch = -3;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--batch -3 must be at least 1", attn::usage_error);
    }
    SUBCASE("--seq 0") {
        c.seq = 0;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--seq 0 must be at least 1", attn::usage_error);
    }
    SUBCASE("--seq -1") {
        c.seq = -1;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--seq -1 must be at least 1", attn::usage_error);
    }
    SUBCASE("--kv-seq 0") {
        c.kv_seq = 0;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--kv-seq 0 must be at least 1", attn::usage_error);
    }
    SUBCASE("--kv-seq -2") {
        c.kv_seq = -2;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--kv-seq -2 must be at least 1", attn::usage_error);
    }
    SUBCASE("--d-model 0") {
        c.d_model = 0;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--d-model 0 must be at least 1", attn::usage_error);
    }
    SUBCASE("--d-model -8") {
        c.d_model = -8;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--d-model -8 must be at least 1", attn::usage_error);
    }
    SUBCASE("--heads 0 (reported before the divisibility check divides by it)") {
        c.heads = 0;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--heads 0 must be at least 1", attn::usage_error);
    }
    SUBCASE("--heads -2") {
        c.heads = -2;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--heads -2 must be at least 1", attn::usage_error);
    }
    SUBCASE("--d-in 0") {
        c.d_in = 0;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--d-in 0 must be at least 1", attn::usage_error);
    }
    SUBCASE("--d-in -1") {
        c.d_in = -1;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--d-in -1 must be at least 1", attn::usage_error);
    }
    SUBCASE("--d-kv-in 0") {
        c.d_kv_in = 0;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--d-kv-in 0 must be at least 1", attn::usage_error);
    }
    SUBCASE("--d-kv-in -5") {
        c.d_kv_in = -5;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--d-kv-in -5 must be at least 1", attn::usage_error);
    }
}

TEST_CASE("validate: --d-model must be divisible by --heads") {
    attn::config c = defaults();
    SUBCASE("10 / 4") {
        c.d_model = 10;
        c.heads = 4;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--d-model 10 is not divisible by --heads 4", attn::usage_error);
    }
    SUBCASE("more heads than model width") {
        c.d_model = 2;
        c.heads = 3;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--d-model 2 is not divisible by --heads 3", attn::usage_error);
    }
    SUBCASE("one head of the full width is fine") {
        c.d_model = 7;
        c.heads = 1;
        CHECK_NOTHROW(attn::validate(c));
    }
}

TEST_CASE("validate: padding needs one length per batch item, each within 0..kv_seq") {
    attn::config c = defaults();
    c.batch = 2;
    c.mask.padding = true;
    SUBCASE("padding without lengths") {
        CHECK_THROWS_WITH_AS(attn::validate(c),
                             "--mask padding needs --lengths n1,n2,... (one valid key length per batch item)",
                             attn::usage_error);
    }
    SUBCASE("one length for two batch items: singular \"value\"") {
        c.mask.lengths = {3};
        CHECK_THROWS_WITH_AS(attn::validate(c), "--lengths has 1 value but --batch is 2 (one length per batch item)",
                             attn::usage_error);
    }
    SUBCASE("three lengths for two batch items: plural \"values\"") {
        c.mask.lengths = {1, 2, 3};
        CHECK_THROWS_WITH_AS(attn::validate(c),
                             "--lengths has 3 values but --batch is 2 (one length per batch item)",
                             attn::usage_error);
    }
    SUBCASE("a length above kv_seq") {
        c.mask.lengths = {4, 5};
        CHECK_THROWS_WITH_AS(attn::validate(c), "--lengths 5 is outside 0..4 (the key length, --kv-seq)",
                             attn::usage_error);
    }
    SUBCASE("the bound is --kv-seq, not --seq") {
        c.kv_seq = 6;
        c.mask.lengths = {6, 7};
        CHECK_THROWS_WITH_AS(attn::validate(c), "--lengths 7 is outside 0..6 (the key length, --kv-seq)",
                             attn::usage_error);
        c.mask.lengths = {6, 5};
        CHECK_NOTHROW(attn::validate(c));
    }
    SUBCASE("a negative length") {
        c.mask.lengths = {-1, 2};
        CHECK_THROWS_WITH_AS(attn::validate(c), "--lengths -1 is outside 0..4 (the key length, --kv-seq)",
                             attn::usage_error);
    }
    SUBCASE("lengths without padding") {
        c.mask.padding = false;
        c.mask.lengths = {1, 2};
        CHECK_THROWS_WITH_AS(attn::validate(c), "--lengths is given but --mask has no padding (use --mask padding)",
                             attn::usage_error);
    }
}

TEST_CASE("validate: window and --window go together, and W >= 0") {
    attn::config c = defaults();
    SUBCASE("window without a window size") {
        c.mask.window = true;
        CHECK_THROWS_WITH_AS(attn::validate(c),
                             "--mask window needs --window W (query i may attend keys j with |i - j| <= W)",
                             attn::usage_error);
    }
    SUBCASE("a window size without window") {
        c.mask.window_size = 2;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--window is given but --mask has no window (use --mask window)",
                             attn::usage_error);
    }
    SUBCASE("a negative window") {
        c.mask.window = true;
        c.mask.window_size = -1;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--window -1 must be 0 or more", attn::usage_error);
    }
}

TEST_CASE("validate: --mask-keep is a probability") {
    // The value is printed with std::to_string, hence the six decimals.
    attn::config c = defaults();
    c.mask.random = true;
    SUBCASE("above 1") {
        c.mask.random_keep = 1.5;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--mask-keep 1.5 must be between 0 and 1", attn::usage_error);
    }
    SUBCASE("below 0") {
        c.mask.random_keep = -0.25;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--mask-keep -0.25 must be between 0 and 1", attn::usage_error);
    }
    SUBCASE("NaN") {
        c.mask.random_keep = std::numeric_limits<double>::quiet_NaN();
        CHECK_THROWS_AS(attn::validate(c), attn::usage_error);
    }
}

TEST_CASE("validate: the fill is -inf or a finite number") {
    attn::config c = defaults();
    SUBCASE("NaN") {
        c.fill = std::numeric_limits<float>::quiet_NaN();
        CHECK_THROWS_WITH_AS(attn::validate(c), "--fill nan must be -inf or a finite number", attn::usage_error);
    }
    SUBCASE("+inf") {
        c.fill = inf;
        CHECK_THROWS_WITH_AS(attn::validate(c), "--fill inf must be -inf or a finite number", attn::usage_error);
    }
    SUBCASE("-inf, -1e9, 0 and a positive number are fine") {
        for (float fill : {-inf, -1e9f, 0.0f, 3.5f}) {
            c.fill = fill;
            CHECK_NOTHROW(attn::validate(c));
        }
    }
}

TEST_CASE("a fill is shown as typed only when written in decimal, as Python reads it") {
    for (const char* decimal : {"-1e9", "0", "-0.5", ".5", "5.", "+3", "1E-3", "-1e+09", "12"})
        CHECK_MESSAGE(attn::is_decimal_number(decimal), decimal);
    for (const char* other : {"0x1p3", "0x10", "inf", "-inf", "nan", " 1", "1 ", "1_000", "", "-", ".", "1e", "e5", "1e+"})
        CHECK_MESSAGE(!attn::is_decimal_number(other), other);
}

TEST_CASE("a fill float32 turns into another number is named, one it holds is not") {
    CHECK(attn::fill_underflow(-1e9) == "");
    CHECK(attn::fill_underflow(0.0) == "");
    CHECK(attn::fill_underflow(1e-30) == "");
    CHECK(attn::fill_underflow(0x1p-140) == "");  // a subnormal float32 holds exactly
    CHECK(attn::fill_underflow(1e-50) ==
          "float32 makes it 0 (its smallest normal number is 1.1754944e-38); give 0, or a number from 1.2e-38 in size");
    CHECK(attn::fill_underflow(-1e-40).rfind("float32 makes it -9.9999461e-41 (", 0) == 0);  // fewer digits
}

TEST_CASE("a usage_error is an attn::error") {
    attn::config c = defaults();
    c.batch = 0;
    CHECK_THROWS_WITH_AS(attn::validate(c), "--batch 0 must be at least 1", attn::error);
}

TEST_CASE("cross() is true exactly when kv_seq != seq, d_kv_in != d_in, or separate_kv") {
    attn::config c = defaults();
    SUBCASE("self-attention") {
        CHECK_FALSE(c.cross());
        c.seq = c.kv_seq = 9;
        c.d_in = c.d_kv_in = 3;  // equal widths other than d_model are still self-attention
        CHECK_FALSE(c.cross());
    }
    SUBCASE("kv_seq != seq") {
        c.kv_seq = 5;
        CHECK(c.cross());
    }
    SUBCASE("d_kv_in != d_in") {
        c.d_kv_in = 6;
        CHECK(c.cross());
    }
    SUBCASE("a separate key/value input of the same shape") {
        c.separate_kv = true;
        CHECK(c.cross());
    }
    SUBCASE("d_model, heads and masks do not matter") {
        c.d_model = 16;
        c.heads = 4;
        c.mask.causal = true;
        CHECK_FALSE(c.cross());
    }
}

TEST_CASE("fill_to_string writes the fill as the user would") {
    CHECK(attn::fill_to_string(-inf) == "-inf");
    CHECK(attn::fill_to_string(inf) == "inf");
    CHECK(attn::fill_to_string(std::numeric_limits<float>::quiet_NaN()) == "nan");
    CHECK(attn::fill_to_string(-1e9f) == "-1e+09");
    CHECK(attn::fill_to_string(0.0f) == "0");
    CHECK(attn::fill_to_string(-0.5f) == "-0.5");
    CHECK(attn::fill_to_string(-10000.0f) == "-10000");
    CHECK(attn::fill_to_string(-0.1f) == "-0.1");                       // not -0.100000001
    CHECK(attn::fill_to_string(-123456789.0f) == "-123456792");  // the float nearest, every digit (not %g's -1.23457e+08)
}

}  // TEST_SUITE("config")
