// libFuzzer harness: the .npz reader (a zip of .npy members, through minizip), with
// the text members a dump holds collected too, as --from reads them.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "attn/io/npz.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = attn_fuzz::write_input_file(data, size, ".npz");
    std::map<std::string, std::string> texts;
    attn_fuzz::expect_attn_errors_only([&] { attn::read_npz(path, "--input x.npz", &texts); });
    return 0;
}
