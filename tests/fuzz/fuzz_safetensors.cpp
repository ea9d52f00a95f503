// libFuzzer harness: the .safetensors reader. The header is indexed; then every tensor
// of a dtype attn reads is read (each at its offset, within a 64 MiB budget), checked
// against its entry; then every tensor, so a wanted dtype attn cannot read is refused.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "attn/io/safetensors.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = attn_fuzz::write_input_file(data, size, ".safetensors");
    const std::string what = "--params x.safetensors";
    attn_fuzz::expect_attn_errors_only([&] {
        std::set<std::string> readable;
        for (const attn::safetensors_entry& e : attn::safetensors_index(path, what))
            if (e.dtype == "F32" || e.dtype == "F16" || e.dtype == "BF16" || e.dtype == "F64") readable.insert(e.name);
        attn::read_budget budget(64u << 20);
        const auto tensors =
            attn::read_safetensors(path, what, [&](const std::string& name) { return readable.count(name) > 0; }, &budget);
        for (const auto& [name, t] : tensors) {
            std::size_t elements = 1;
            for (const std::size_t s : t.shape) elements *= s;
            if (t.values.size() != elements || !readable.count(name)) {
                std::fprintf(stderr, "attn_fuzz: %s holds %zu values for its shape's %zu\n", name.c_str(),
                             t.values.size(), elements);
                std::abort();
            }
        }
    });
    attn_fuzz::expect_attn_errors_only([&] {
        attn::read_budget budget(64u << 20);
        attn::read_safetensors(path, what, {}, &budget);
    });
    return 0;
}
