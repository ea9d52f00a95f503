// libFuzzer harness: a --from dump written by --format json ("attn.trace/1"), replayed as
// `attn trace --from F.json` reads it, up to the config and the tensors (fuzz_replay_dump.hpp).
#include "fuzz_replay_dump.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    attn_fuzz::replay_dump(data, size, ".json");
    return 0;
}
