#pragma once
// Multi-head attention, stage by stage (CLI.md, "The stages").
//
// Dimension key: B batch, Sq query length, Sk key length, Din/Dkv input widths,
// D model width, H heads, dk = D / H head width. Shapes are written in PyTorch order.
#include <functional>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

/// Called once per stage, in order, as soon as that stage is complete (for
/// formats that stream, such as JSON lines).
using stage_callback = std::function<void(const trace&, const stage&)>;

/// Computes every stage from `in`. `c` must have passed validate() and the
/// inputs must have the shapes `c` names; given projections (in.qkv) start the
/// run at stage 3, which c.from_projections must say too. Rows of the weights with no allowed
/// key are reported in trace::warnings.
trace compute_trace(const config& c, inputs in, const stage_callback& on_stage = {});

}  // namespace attn
