#pragma once
// The fewest bytes a run's output takes, from the sizes alone, before anything is computed:
// what the free-space check (io/output_space.hpp) compares with the file system's.
#include <cstdint>

#include "attn/compute/config.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// The fewest bytes an output that writes every element of the shown stages' tensors
/// takes: their elements (as view.batch_index, view.head and view.row select them; an
/// axis they may not select counts whole, so this stays a lower bound) at `float_bytes`
/// each, a boolean tensor's at `bool_bytes`. Sizes only: O(stages). Saturates.
std::uint64_t least_output_bytes(const config& c, const render_options& view, std::uint64_t float_bytes,
                                 std::uint64_t bool_bytes);

}  // namespace attn
