// libFuzzer harness: the --params reader. The first byte picks the file type and
// the run the weights must fit; the rest is the file:
//   bit 0: 0 = .json (an object of nested arrays), 1 = .npz (np.savez)
//   bit 1: --no-qkv-bias    bit 2: --no-out-proj    bits 3-4: --heads 1, 2, 4 or 8
//   bit 5: .safetensors, whatever bit 0 says
// The file is read (read_given_files), then checked against the run (check_inputs:
// names, shapes, sizes, validation), as `attn trace --params FILE` does.
#include <cstddef>
#include <cstdint>

#include "attn/compute/config.hpp"
#include "attn/io/file_inputs.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::uint8_t choice = data[0];
    attn::input_paths paths;
    const char* extension = (choice & 0x20) ? ".safetensors" : (choice & 1) ? ".npz" : ".json";
    paths.params = attn_fuzz::write_input_file(data + 1, size - 1, extension);
    attn::config base;
    base.qkv_bias = (choice & 2) == 0;
    base.out_proj = (choice & 4) == 0;
    base.heads = std::int64_t(1) << ((choice >> 3) & 3);
    base.sources.params_from_file = true;
    attn_fuzz::expect_attn_errors_only([&] { attn::check_inputs(base, attn::size_flags{}, attn::read_given_files(paths)); });
    return 0;
}
