// libFuzzer harness: a --from dump written by --format npz (its "config" text member and
// the arrays of the stages a run starts from), replayed as `attn trace --from F.npz` reads
// it, up to the config and the tensors (fuzz_replay_dump.hpp).
#include "fuzz_replay_dump.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    attn_fuzz::replay_dump(data, size, ".npz");
    return 0;
}
