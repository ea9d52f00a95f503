#pragma once
// How much work a run is, known before it starts: for the estimate of its time that a
// long run gives up front, and for the progress line, which counts work done.
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_sink.hpp"

namespace attn {

/// Work of three kinds, which a machine does at different speeds.
struct work {
    double flops = 0;     // of products (BLAS): 2·m·n·k each
    double draws = 0;     // random numbers drawn (torch.randn, nn.Linear's init, dropout)
    double elements = 0;  // of elementwise passes (scaling, masking, softmax, copies)
};

/// The work of making one stage (input: drawing the weights and x).
struct stage_work {
    stage_id id;
    work cost;
};

/// The stages a run of `plan` computes, in order, shown or not, with their work (input's is
/// drawing the weights and x): rows and planes it skips are not counted, and in rows each
/// shown [B,H,Sq,Sk] stage is a pass of its own from the scores.
std::vector<stage_work> estimate_work(const config& c, const stage_plan& plan);

/// Work per second on this machine, on the threads a run uses.
struct machine_speed {
    double flops = 0, draws = 0, elements = 0;
};

/// Times a small product, a few draws and an exp pass (about a millisecond each).
machine_speed measure_speed();

/// Seconds `w` takes at `speed`.
double seconds_of(const work& w, const machine_speed& speed);

}  // namespace attn
