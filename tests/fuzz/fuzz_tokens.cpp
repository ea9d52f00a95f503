// libFuzzer harness: --tokens' list of ids and --vocab's vocabulary (token_input.hpp).
// Bytes -> parse_vocab (within a 64 MiB budget, as --max-memory bounds it), then token_labels for ids 0..3 of what it read; and parse_token_ids
// on the same text (never as @FILE: the harness reads no files).
#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/io/token_input.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    attn_fuzz::expect_attn_errors_only([&] {
        const attn::read_budget budget(std::uint64_t(64) << 20);
        const auto vocab = attn::parse_vocab(text, "--vocab v.json", &budget);
        (void)attn::token_labels(vocab, {0, 1, 2, 3}, "--vocab v.json");
    });
    if (text.empty() || text[0] != '@') attn_fuzz::expect_attn_errors_only([&] { attn::parse_token_ids(text); });
    return 0;
}
