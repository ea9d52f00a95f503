#pragma once
// The result of a run: the stages of multi-head attention, in order, and their tensors.
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/compute/tensor.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// A number a stage reports besides its tensors (flash: "max_abs_diff", "tolerance").
struct stage_figure {
    std::string name;  // its key in the stage's JSON object
    double value = 0;
};

struct stage {
    const stage_info* info = nullptr;  // points into stage_table
    std::vector<tensor> tensors;
    std::vector<stage_figure> figures;  // in the order they are printed; most stages have none

    stage_id id() const { return info->id; }
    std::string_view name() const { return info->name; }
    /// Whether the tensors come in rows after stage_sink::begin (shape_only: no storage yet).
    bool in_rows() const { return !tensors.empty() && !tensors[0].storage; }
    /// The tensor called `tensor_name`; throws attn::error if there is none.
    const tensor& at(std::string_view tensor_name) const;
};

struct trace {
    config cfg;
    std::vector<stage> stages;          // in stage_table order; absent stages are skipped
    attn::warning_list warnings;  // for stderr and next to their stage, e.g. rows with no allowed key

    std::vector<const warning*> warnings_of(std::string_view name) const;
    /// The stage called `name`, or nullptr when it is absent from this run.
    const stage* find(std::string_view name) const;
    const stage* find(stage_id id) const;
};

}  // namespace attn
