// write_shortest_float against std::to_chars: the same bytes for the edge cases, every
// float of a few binades and 2^24 floats spread over all of them; write_shortest_floats
// (8 at a time with AVX2) against write_shortest_float. Every float32 (2^32, a few minutes
// on two cores, both kernels): ATTN_SHORTEST_FLOAT_ALL=1 build/tests/attn_tests -ts="shortest float"
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/render/shortest_float.hpp"

namespace {

float from_bits(std::uint32_t bits) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

/// The first float in [first, last) whose text differs from std::to_chars's, or that
/// writes past shortest_float_room, else none.
std::string first_difference(std::uint64_t first, std::uint64_t last, std::uint64_t step = 1) {
    constexpr std::size_t room = attn::shortest_float_room;
    char ours[room + 8] = {}, theirs[32] = {};
    std::memset(ours + room, '#', 8);
    for (std::uint64_t b = first; b < last; b += step) {
        const float v = from_bits(static_cast<std::uint32_t>(b));
        if (!std::isfinite(v)) continue;
        const std::string got(ours, attn::write_shortest_float(ours, v));
        const std::string want(theirs, std::to_chars(theirs, theirs + sizeof theirs, v).ptr);
        if (got != want) return "bits " + std::to_string(b) + ": " + got + " wanted " + want;
        if (std::string(ours + room, 8) != "########") return "bits " + std::to_string(b) + ": wrote past the room";
    }
    return "";
}

/// The first run of `count` floats from bits `first` on (every `step`-th pattern) whose text
/// from write_shortest_floats with `kernel` differs from write_shortest_float's, else none.
std::string first_batch_difference(attn::float_text_kernel kernel, std::uint64_t first, std::uint64_t last,
                                   std::uint64_t step, std::size_t count) {  // count > 0
    std::vector<float> v;
    std::string want, got(count * 16 + attn::shortest_float_room, '\0');
    char one[attn::shortest_float_room];
    for (std::uint64_t b = first; b < last;) {
        v.clear();
        want.clear();
        for (; v.size() < count && b < last; b += step) {
            const float f = from_bits(static_cast<std::uint32_t>(b));
            if (!std::isfinite(f)) continue;
            v.push_back(f);
            want.append(one, attn::write_shortest_float(one, f));
            want += ',';
        }
        char* end = attn::write_shortest_floats(got.data(), v.data(), v.size(), ',', kernel);
        if (std::string(got.data(), end) != want) return "from bits " + std::to_string(b) + ": " + want;
    }
    return "";
}

}  // namespace

TEST_SUITE("shortest float") {
    TEST_CASE("write_shortest_floats: the same text as one at a time, with either kernel, every tail") {
        for (const auto kernel : {attn::float_text_kernel::plain, attn::float_text_kernel::avx2}) {
            if (!attn::float_text_kernel_runs_here(kernel)) continue;
            CAPTURE(static_cast<int>(kernel));
            char none[attn::shortest_float_room];
            CHECK(attn::write_shortest_floats(none, nullptr, 0, ',', kernel) == none);
            for (std::size_t count = 1; count <= 17; ++count)  // the lanes of 8, and what is left
                CHECK(first_batch_difference(kernel, 0x3c000000u, 0x3c000000u + 4000, 1, count) == "");
            // both signs, zeros, subnormals, every binade, the largest
            CHECK(first_batch_difference(kernel, 0, std::uint64_t{1} << 32, 4093, 64) == "");
            CHECK(first_batch_difference(kernel, 0, 4096, 1, 24) == "");
            CHECK(first_batch_difference(kernel, 0x80000000u, 0x80000000u + 4096, 1, 24) == "");
            CHECK(first_batch_difference(kernel, 0x7f7ff000u, 0x7f800000u, 1, 8) == "");
            if (const char* all = std::getenv("ATTN_SHORTEST_FLOAT_ALL"); all != nullptr && std::string(all) == "1")
                CHECK(first_batch_difference(kernel, 0, std::uint64_t{1} << 32, 1, 8) == "");
        }
    }

    TEST_CASE("the edge cases: zeros, subnormals, powers of two and ten, the extremes") {
        const float max = std::numeric_limits<float>::max(), min = std::numeric_limits<float>::min();
        const float cases[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 0.1f, 0.3f, 2.0f / 3, 1e-45f, -1e-45f,
                               std::numeric_limits<float>::denorm_min(), min, std::nextafter(min, 0.0f), max, -max,
                               1e10f, 1e15f, 1e16f, 123456789.0f, 1e-5f, 1e-4f, 0.001f, 16777216.0f, 16777217.0f,
                               3.4028235e38f, 1.17549435e-38f, 9.999999e-5f, 100.0f, 1e7f, 1.5e-7f, 0.25f, 1e-38f};
        char ours[32] = {}, theirs[32] = {};
        for (const float v : cases) {
            const std::string got(ours, attn::write_shortest_float(ours, v));
            const std::string want(theirs, std::to_chars(theirs, theirs + sizeof theirs, v).ptr);
            CAPTURE(want);
            CHECK(got == want);
            CHECK(got.size() <= static_cast<std::size_t>(attn::shortest_float_max_chars));
        }
        for (int e = -45; e <= 38; ++e) {  // the powers of ten, and one float each side
            const float v = std::strtof(("1e" + std::to_string(e)).c_str(), nullptr);
            std::uint32_t b;
            std::memcpy(&b, &v, sizeof b);
            CHECK(first_difference(b - 1, b + 2) == "");
        }
    }

    TEST_CASE("every float of the binades softmax weights live in, and of the subnormals' first") {
        CHECK(first_difference(0x3c000000u, 0x3c800000u) == "");  // [2^-7, 2^-6)
        CHECK(first_difference(0x3f000000u, 0x3f800001u) == "");  // [0.5, 1]
        CHECK(first_difference(0x00000000u, 0x00100000u) == "");  // the smallest subnormals
    }

    TEST_CASE("2^24 floats spread over all of them, both signs") {
        CHECK(first_difference(0, std::uint64_t{1} << 32, 255) == "");
    }

    TEST_CASE("every float (ATTN_SHORTEST_FLOAT_ALL=1)") {
        const char* all = std::getenv("ATTN_SHORTEST_FLOAT_ALL");
        if (all == nullptr || std::string(all) != "1") return;
        CHECK(first_difference(0, std::uint64_t{1} << 32) == "");
    }
}
