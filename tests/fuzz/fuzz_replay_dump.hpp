#pragma once
// What fuzz_replay_json and fuzz_replay_npz share: the bytes as a dump file, replayed as
// `attn trace --from F` does with no other flag (read_dump, the dump's config with this
// run's memory limit, load_replay: files read, sizes checked, what the dump lacks drawn),
// then the memory check that comes before a computation. Nothing is computed or written.
#include <cstddef>
#include <cstdint>

#include "attn/compute/memory.hpp"
#include "fuzz_common.hpp"
#include "run_flags.hpp"

namespace attn_fuzz {

inline void replay_dump(const std::uint8_t* data, std::size_t size, const char* extension) {
    attn_app::run_options o;
    o.from = write_input_file(data, size, extension);
    // attn's default limit is 80% of RAM; 1 GiB here, as fuzz_flags: the dump's own
    // tensors and what is drawn for it are read and made within it.
    o.cfg.limits.max_memory = std::uint64_t(1) << 30;
    const attn_app::flag_given none = [](const char*) { return false; };
    expect_attn_errors_only([&] {
        const attn::loaded_inputs loaded = attn_app::load_run_inputs(o, none);
        attn::check_memory(loaded.cfg, loaded.cfg.limits.max_memory);
    });
}

}  // namespace attn_fuzz
