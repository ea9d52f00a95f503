// The colour map and scale every picture shares (colormap.hpp): viridis against
// matplotlib's own table, and the scale's and shade ramp's arithmetic by hand.
#include <cmath>
#include <limits>

#include <doctest/doctest.h>

#include "attn/render/colormap.hpp"

namespace {

struct entry {
    int index;  // in matplotlib's 256-entry _viridis_data, at t = index / 255
    double r, g, b;
};

// matplotlib's _viridis_data (lib/matplotlib/_cm_listed.py): the two ends, and entries
// that fall between the colour map's 33 samples, where it interpolates.
constexpr entry matplotlib_viridis[] = {
    {0, 0.267004, 0.004874, 0.329415},   {37, 0.274128, 0.199721, 0.498911}, {100, 0.166617, 0.463708, 0.558119},
    {150, 0.128087, 0.647749, 0.523491}, {200, 0.440137, 0.811138, 0.340967}, {250, 0.945636, 0.899815, 0.112838},
    {255, 0.993248, 0.906157, 0.143936},
};

}  // namespace

TEST_SUITE("colormap") {
    TEST_CASE("viridis matches matplotlib's table within 2/255 per channel, and exactly at the ends") {
        for (const entry& e : matplotlib_viridis) {
            CAPTURE(e.index);
            const attn::rgb c = attn::viridis(e.index / 255.0);
            CHECK(std::fabs(c.r - e.r) <= 2.0 / 255);
            CHECK(std::fabs(c.g - e.g) <= 2.0 / 255);
            CHECK(std::fabs(c.b - e.b) <= 2.0 / 255);
        }
        CHECK(attn::viridis(0.0).r == 0.267004);
        CHECK(attn::viridis(1.0).b == 0.143936);
    }

    TEST_CASE("viridis gets lighter all the way up, so brighter always means larger") {
        double previous = -1;
        for (int k = 0; k <= 200; ++k) {
            const double lum = attn::relative_luminance(attn::viridis(k / 200.0));
            CAPTURE(k);
            CHECK(lum > previous);
            previous = lum;
        }
        CHECK(attn::relative_luminance({0, 0, 0}) == 0.0);
        CHECK(attn::relative_luminance({1, 1, 1}) == doctest::Approx(1.0));
    }

    TEST_CASE("viridis clamps outside [0, 1], and NaN is the low end") {
        CHECK(attn::viridis(-3.0).g == attn::viridis(0.0).g);
        CHECK(attn::viridis(7.0).g == attn::viridis(1.0).g);
        CHECK(attn::viridis(std::nan("")).g == attn::viridis(0.0).g);
    }

    TEST_CASE("a channel as a byte rounds to the nearest of 0..255") {
        CHECK(attn::rgb::byte(0.0) == 0);
        CHECK(attn::rgb::byte(1.0) == 255);
        CHECK(attn::rgb::byte(0.5) == 128);        // 127.5 rounds up
        CHECK(attn::rgb::byte(0.267004) == 68);    // viridis' first colour is #440154
        CHECK(attn::rgb::byte(0.004874) == 1);
        CHECK(attn::rgb::byte(0.329415) == 84);
        CHECK(attn::rgb::byte(-0.5) == 0);
        CHECK(attn::rgb::byte(1.5) == 255);
    }
}

TEST_SUITE("value scale") {
    TEST_CASE("lo maps to 0, hi to 1, linear in between, clamped outside") {
        const attn::value_scale s{-2.0f, 2.0f};
        CHECK(s.position(-2.0f) == 0.0);
        CHECK(s.position(2.0f) == 1.0);
        CHECK(s.position(0.0f) == 0.5);
        CHECK(s.position(1.0f) == 0.75);
        CHECK(s.position(-1e9f) == 0.0);
        CHECK(s.position(std::numeric_limits<float>::infinity()) == 1.0);
    }

    TEST_CASE("a constant tensor (lo == hi) sits in the middle of the map") {
        const attn::value_scale s{0.25f, 0.25f};
        CHECK(s.position(0.25f) == 0.5);
        CHECK(attn::value_scale{0.0f, 0.0f}.position(3.0f) == 0.5);
    }

    TEST_CASE("shade levels: blank at the low end only, equal parts of (0, 1] above it") {
        CHECK(attn::shade_level(0.0, 5) == 0);  // the low end itself: blank
        CHECK(attn::shade_level(0.01, 5) == 1);  // anything above it shows
        CHECK(attn::shade_level(0.25, 5) == 1);
        CHECK(attn::shade_level(0.26, 5) == 2);
        CHECK(attn::shade_level(0.5, 5) == 2);
        CHECK(attn::shade_level(0.75, 5) == 3);
        CHECK(attn::shade_level(0.76, 5) == 4);
        CHECK(attn::shade_level(1.0, 5) == 4);
        CHECK(attn::shade_level(-1.0, 5) == 0);
        CHECK(attn::shade_level(2.0, 5) == 4);
    }
}
