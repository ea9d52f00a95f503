// libFuzzer harness: the JSON tensor reader (--input x.json and the other .json flags).
// Bytes -> parse_json_tensor (one nested array) and parse_json_tensors (an object of
// them, as --params reads), both on the same text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/io/json_tensor.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    attn_fuzz::expect_attn_errors_only([&] { attn::parse_json_tensor(text, "--input x.json"); });
    attn_fuzz::expect_attn_errors_only([&] { attn::parse_json_tensors(text, "--params p.json"); });
    return 0;
}
