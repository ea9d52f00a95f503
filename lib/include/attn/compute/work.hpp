#pragma once
// How fast this machine does each kind of work (run_plan.hpp plans a run's): for the estimate
// of its time that a long run gives up front, and for the progress line, which counts work done.
#include "attn/compute/run_plan.hpp"

namespace attn {

/// Work per second on this machine, on the threads a run uses.
struct machine_speed {
    double flops = 0, draws = 0, elements = 0;
};

/// Times a small product, a few draws and an exp pass (about a millisecond each).
machine_speed measure_speed();

/// Seconds `w` takes at `speed`.
double seconds_of(const work& w, const machine_speed& speed);

}  // namespace attn
