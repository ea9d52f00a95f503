// libFuzzer harness: the .npy reader (--input x.npy, and every .npz member): header,
// then data, from memory.
#include <cstddef>
#include <cstdint>

#include "attn/io/npy.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    attn_fuzz::expect_attn_errors_only([&] { attn::parse_npy(data, size, "--input x.npy"); });
    return 0;
}
