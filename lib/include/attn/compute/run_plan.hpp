#pragma once
// The plan of a run: its stages in order, made from the sizes alone before any math. Each
// planned stage holds its tensors' layouts (shape, strides, view of or copy of which tensor),
// the bytes they hold, the work of making it and the stages it reads. It is the one model of
// the forward pass that --shapes, --format dot and --graph, the memory estimate (memory.hpp),
// the progress line's work and --explain's layouts read; compute_stages makes the tensors it
// plans (debug builds check every one, planned_layout_check).
//
// Layouts follow tensor.hpp's rules in the notebook's order: projections fresh and
// contiguous, view and transpose views of them, the [B,H,Sq,Sk] stages and context fresh,
// merge a view of context, concat merge.contiguous() (a copy unless merge is contiguous).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/compute/tensor.hpp"

namespace attn {

/// One tensor of a stage, as the run will lay it out.
struct planned_tensor {
    std::string name;               // "q"
    std::vector<std::string> dims;  // the trace's dimension names: "batch", "head", "seq", "head_dim"
    tensor_layout layout;           // t.shape and t.stride()
    element_type type = element_type::float32;
    std::string view_of;            // "projections.q": a view of that tensor's memory; empty when its own
    std::string copy_of;            // "merge.context": a row-major copy of that tensor (t.contiguous())
    std::string copy_by = ".contiguous()";  // the PyTorch that copies it: "torch.cat", "repeat_interleave"

    /// Its elements (saturating at UINT64_MAX: absurd sizes are refused, not wrapped).
    std::uint64_t elements() const;
    /// What the trace holds for it: 4 bytes an element (booleans too), none for a view.
    std::uint64_t bytes() const;
};

/// Work of three kinds, which a machine does at different speeds.
struct work {
    double flops = 0;     // of products (BLAS): 2·m·n·k each
    double draws = 0;     // random numbers drawn (torch.randn, nn.Linear's init, dropout)
    double elements = 0;  // of elementwise passes (scaling, masking, softmax, copies)
};

/// Which node of the computation: a stage of one layer, forward or its gradient. Named
/// "softmax" in a single-layer run, "layer3.softmax" in a model's, "grad.softmax" for the
/// gradient of the loss with respect to it.
struct stage_instance {
    stage_id id;
    int layer = -1;         // -1: the run's one layer
    bool gradient = false;  // the backward pass's node for this forward stage

    std::string name() const;
};

/// One stage of the run.
struct planned_stage {
    stage_id id;
    std::vector<planned_tensor> tensors;  // in stage_table's order
    int layer = -1;                       // as stage_instance
    bool gradient = false;
    std::vector<stage_id> reads;          // the stages of this run it is computed from, in order
    std::uint64_t bytes = 0;              // its tensors whole (the mask's booleans too), saturating
    bool computed = false;                // computed for what is shown (input: drawn, shown or not)
    work cost;                            // of computing it, as `choice` computes it; none when not computed

    stage_instance instance() const { return {id, layer, gradient}; }
};

/// The run: every stage it has (stage_in_run), in order, computed or not, and the choice of
/// what it shows and how it lays out the [B,H,Sq,Sk] planes (memory.hpp's plan_memory).
struct run_plan {
    stage_plan choice;
    std::vector<planned_stage> stages;

    /// The stage `id`, or nullptr when the run lacks it.
    const planned_stage* find(stage_id id) const;
    /// Tensor `name` of stage `id`; the stage and tensor must be in the run.
    const planned_tensor& tensor_of(stage_id id, const std::string& name) const;
    /// The stage whose `name` ("q", "k", "v") the stage `reader` reads: the last of transpose,
    /// rope, append, repeat_kv before it that makes one.
    stage_id source_of(const std::string& name, stage_id reader) const;
};

/// The plan of a run of `c` showing `choice` (its layout and block_rows as chosen). Sizes
/// only: O(stages), whatever Sq and Sk are. For the right computation: c.mistake is not
/// looked at (split_without_transpose and merge_without_transpose lay out transpose and merge
/// otherwise).
run_plan make_plan(const config& c, const stage_plan& choice = stage_plan::every_stage());

/// The dimension's letter in CLI.md's key: batch B, seq and query Sq, kv_seq and key Sk,
/// d_model D, head H, head_dim dk, d_in Din, d_kv_in Dkv, past N, kv_head G, kv_width G·dk;
/// any other name as it is.
std::string dim_letter(const std::string& dim);

/// Throws std::logic_error when stage `s`'s tensors have other shapes or strides than `plan`
/// gives them (the forward pass and the plan have drifted apart).
void check_planned_layouts(const run_plan& plan, const stage& s);

/// The plan the forward pass checks each stage it makes against (check_planned_layouts): in
/// builds without NDEBUG, for the right computation; nullopt in release builds and for a
/// --mistake, whose replaced steps lay out some tensors otherwise.
std::optional<run_plan> layouts_to_check(const config& c, const stage_plan& choice);

}  // namespace attn
