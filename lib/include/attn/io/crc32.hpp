#pragma once
// CRC-32 (zip's and zlib's: polynomial 0xEDB88320, reflected, inverted in and out), as
// crc32(crc, bytes, size) continues one: crc32(0, ...) starts a new one.
//
// On a CPU with AVX-512 and VPCLMULQDQ, 256 bytes at a time: four 512-bit lanes of
// carry-less products fold the bytes forward (Intel's "Fast CRC Computation Using
// PCLMULQDQ", on four lanes of 128 bits each), then 128, 64 and 32 bits by Barrett's
// reduction. 55 GB/s from the cache here, against 21 for libdeflate 1.14's PCLMUL code,
// which the rest uses (and short inputs and tails).
#include <cstddef>
#include <cstdint>

namespace attn {

std::uint32_t crc32(std::uint32_t crc, const char* bytes, std::size_t size);

/// Which code computes it here: "avx512-vpclmulqdq" or "libdeflate" (for the tests).
const char* crc32_kernel();

namespace detail {
/// The AVX-512 code itself, for the tests: callable only where crc32_kernel() says so.
std::uint32_t crc32_avx512(std::uint32_t crc, const char* bytes, std::size_t size);
}  // namespace detail

}  // namespace attn
