#pragma once
// Multi-head attention, stage by stage (CLI.md, "The stages"). Dimension letters: config.hpp.
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

/// Every stage from `in`. `c` must have passed validate() and name the inputs' shapes; given
/// projections (in.qkv, c.sources.from_projections) start the run at stage 3. Rows with no allowed
/// key are reported in trace::warnings.
/// Streaming formats hand each stage on as it is made instead: compute_stages (stage_sink.hpp).
trace compute_trace(const config& c, inputs in);

}  // namespace attn
