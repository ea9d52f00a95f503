// crc32: zip's CRC-32, against zlib's crc32 (an independent implementation) and the check
// value of the CRC catalogue; the AVX-512 code for every length to 3000 bytes, from four
// alignments, continuing from any CRC, and on large blocks.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <zlib.h>

#include "attn/io/crc32.hpp"

namespace {

std::uint32_t zlib_crc(std::uint32_t crc, const char* bytes, std::size_t size) {
    return static_cast<std::uint32_t>(::crc32(crc, reinterpret_cast<const Bytef*>(bytes), static_cast<uInt>(size)));
}

}  // namespace

TEST_SUITE("crc32") {
    TEST_CASE("the catalogue's check value: CRC-32 of \"123456789\" is 0xCBF43926") {
        CHECK(attn::crc32(0, "123456789", 9) == 0xCBF43926u);
        CHECK(attn::crc32(0, "", 0) == 0u);
    }

    TEST_CASE("every length to 3000 bytes, four alignments, any CRC to continue from, as zlib") {
        std::mt19937 g(3);
        std::vector<char> bytes((std::size_t{1} << 21) + 64);
        for (char& c : bytes) c = static_cast<char>(g());
        const bool avx512 = std::string(attn::crc32_kernel()) == "avx512-vpclmulqdq";
        if (!avx512) MESSAGE("this CPU has no AVX-512 VPCLMULQDQ: only libdeflate's code is checked");
        int wrong = 0;
        for (std::size_t n = 0; n <= 3000; ++n)
            for (const std::size_t at : {0, 1, 7, 33}) {
                const std::uint32_t from = static_cast<std::uint32_t>(g());
                const std::uint32_t want = zlib_crc(from, bytes.data() + at, n);
                wrong += attn::crc32(from, bytes.data() + at, n) != want;
                if (avx512) wrong += attn::detail::crc32_avx512(from, bytes.data() + at, n) != want;
            }
        CHECK(wrong == 0);
        for (const std::size_t n : {std::size_t{100000}, std::size_t{1} << 20, (std::size_t{1} << 21) + 61}) {
            CAPTURE(n);
            CHECK(attn::crc32(0, bytes.data() + 3, n) == zlib_crc(0, bytes.data() + 3, n));
        }
        // in pieces: the CRC of the whole
        std::uint32_t pieces = 0;
        for (std::size_t at = 0; at < bytes.size(); at += 70001)
            pieces = attn::crc32(pieces, bytes.data() + at, std::min<std::size_t>(70001, bytes.size() - at));
        CHECK(pieces == zlib_crc(0, bytes.data(), bytes.size()));
    }
}
