#pragma once
// --explain: what each stage computes, in words and symbols, with this run's
// shapes, and why it exists. The one place these texts live (next to
// stage_table and stage_text), read by the table, JSON and HTML renderers.
#include <string>
#include <string_view>

#include "attn/compute/config.hpp"

namespace attn {

struct stage_explanation {
    std::string words;    // the formula in words: "every query is compared with every key by a dot product"
    std::string symbols;  // the formula in symbols, as this run computes it (stage_formula)
    std::string shapes;   // the shape algebra with this run's numbers: "[2,4,5,2] · [2,4,2,5] -> [2,4,5,5]"
    std::string einsum;   // "bhqd,bhkd->bhqk", or empty where no einsum says it better
    std::string torch;    // the one line of PyTorch that computes it: "scores = q @ k.transpose(-2, -1)"
    std::string memory;   // whether data moves, and why: "a view: no copy (strides change)"
    std::string why;      // why the step exists, in one or two sentences
};

/// The explanation of stage `name` for a run of `c`.
stage_explanation explain_stage(const config& c, std::string_view name);

}  // namespace attn
