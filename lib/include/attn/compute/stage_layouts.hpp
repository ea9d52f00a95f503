#pragma once
// Every stage tensor's shape and strides in a run of a config, known before anything is
// computed: what `attn trace --shapes` prints. The same layouts compute_stages gives its
// tensors (tensor.hpp's rules, applied in the notebook's order): projections fresh and
// contiguous, view and transpose views of them, the [B,H,Sq,Sk] stages and context fresh,
// merge a view of context, concat merge.contiguous() (a copy unless merge is contiguous).
#include <string>
#include <vector>

#include "attn/compute/config.hpp"
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
};

/// One stage of the run and its tensors, in order.
struct planned_stage {
    stage_id id;
    std::vector<planned_tensor> tensors;
};

/// The stages a run of `c` has (stage_in_run), in CLI.md's order, with their tensors'
/// layouts. Sizes only: O(stages), whatever Sq and Sk are. For the right computation:
/// c.mistake is not looked at (split_without_transpose and merge_without_transpose
/// would lay out transpose and merge otherwise).
std::vector<planned_stage> plan_stage_layouts(const config& c);

/// The dimension's letter in CLI.md's key: batch B, seq and query Sq, kv_seq and key Sk,
/// d_model D, head H, head_dim dk, d_in Din, d_kv_in Dkv, past N, kv_head G, kv_width G·dk;
/// any other name as it is.
std::string dim_letter(const std::string& dim);

}  // namespace attn
