// shortest_text, python_float_text and significant_text, against values worked by hand:
// the fewest digits must read back as the same float, and no more.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "attn/text/number_text.hpp"

TEST_SUITE("number_text") {
    TEST_CASE("shortest_text: a float's fewest digits, not its double's") {
        CHECK(attn::shortest_text(0.1f) == "0.1");
        CHECK(attn::shortest_text(static_cast<double>(0.1f)) == "0.10000000149011612");
        CHECK(attn::shortest_text(0.1) == "0.1");
        CHECK(attn::shortest_text(1.5f) == "1.5");
        CHECK(attn::shortest_text(-1e9) == "-1e+09");
        CHECK(attn::shortest_text(10000.0) == "10000");
        CHECK(attn::shortest_text(1e-30) == "1e-30");
        CHECK(attn::shortest_text(1e-45f) == "1e-45");  // the smallest subnormal float, 2^-149
        CHECK(attn::shortest_text(std::numeric_limits<float>::min()) == "1.1754944e-38");
        CHECK(attn::shortest_text(std::numeric_limits<float>::max()) == "3.4028235e+38");
    }

    TEST_CASE("shortest_text reads back as the same value") {
        for (const float v : {0.1f, 1e-45f, 3.4028235e38f, -0.4121f, 1.0f / 3.0f, 123456.79f}) {
            CAPTURE(v);
            CHECK(std::strtof(attn::shortest_text(v).c_str(), nullptr) == v);
        }
        for (const double v : {0.1, 5e-324, 1.0 / 3.0, -1e300}) {
            CAPTURE(v);
            CHECK(std::strtod(attn::shortest_text(v).c_str(), nullptr) == v);
        }
    }

    TEST_CASE("shortest_text: signed zero, infinities and NaN") {
        CHECK(attn::shortest_text(-0.0f) == "-0");
        CHECK(attn::shortest_text(0.0) == "0");
        CHECK(attn::shortest_text(std::numeric_limits<float>::infinity()) == "inf");
        CHECK(attn::shortest_text(-std::numeric_limits<double>::infinity()) == "-inf");
        CHECK(attn::shortest_text(std::numeric_limits<float>::quiet_NaN()) == "nan");
        CHECK(attn::shortest_text(-std::numeric_limits<double>::quiet_NaN()) == "-nan");
    }

    TEST_CASE("python_float_text: a literal Python reads as a float") {
        CHECK(attn::python_float_text(1.0f) == "1.0");
        CHECK(attn::python_float_text(-0.0) == "-0.0");
        CHECK(attn::python_float_text(10000.0) == "10000.0");
        CHECK(attn::python_float_text(0.471608f) == "0.471608");
        CHECK(attn::python_float_text(1e30) == "1e+30");  // a float already: 1e+30 in Python
        CHECK(attn::python_float_text(1e-45f) == "1e-45");
    }

    TEST_CASE("significant_text: printf's %g, to as many significant digits") {
        CHECK(attn::significant_text(0.5) == "0.5");
        CHECK(attn::significant_text(1e-5) == "1e-05");
        CHECK(attn::significant_text(0.123456789) == "0.123457");
        CHECK(attn::significant_text(0.39182, 4) == "0.3918");
        CHECK(attn::significant_text(2.98e-8, 4) == "2.98e-08");
        CHECK(attn::significant_text(1e-45, 9) == "1e-45");  // no trailing zeros
        CHECK(attn::significant_text(static_cast<double>(1e-45f), 9) == "1.40129846e-45");
        CHECK(attn::significant_text(-std::numeric_limits<double>::infinity(), 4) == "-inf");
        CHECK(attn::significant_text(std::numeric_limits<double>::quiet_NaN()) == "nan");
    }
}
