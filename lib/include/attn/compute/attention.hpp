#pragma once
// Multi-head attention, stage by stage (CLI.md, "The stages"). Dimension letters: config.hpp.
#include <functional>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

/// Called once per stage, in order, as soon as that stage is complete (for streaming formats).
using stage_callback = std::function<void(const trace&, const stage&)>;

/// Every stage from `in`. `c` must have passed validate() and name the inputs' shapes; given
/// projections (in.qkv, c.from_projections) start the run at stage 3. Rows with no allowed
/// key are reported in trace::warnings.
trace compute_trace(const config& c, inputs in, const stage_callback& on_stage = {});

}  // namespace attn
