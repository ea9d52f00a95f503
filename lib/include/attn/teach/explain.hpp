#pragma once
// --explain: what each stage computes, in words and symbols, with this run's shapes, what
// PyTorch does to memory there (from the strides), and why the step exists.
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_table.hpp"

namespace attn {

struct stage_explanation {
    std::string words;    // the formula in words: "every query is compared with every key by a dot product"
    std::string symbols;  // the formula in symbols, as this run computes it (stage_formula)
    std::string shapes;   // the shape algebra with this run's numbers: "[2,4,5,2] · [2,4,2,5] -> [2,4,5,5]"
    std::string einsum;   // "bhqd,bhkd->bhqk", or empty where no einsum says it better
    std::string torch;    // the one line of PyTorch that computes it: "scores = q @ k.transpose(-2, -1)"
    std::string memory;   // whether data moves, and why: "a view: no copy (strides change)"
    std::string why;      // why the step exists, in one or two sentences
    std::string row;      // one row worked through with the run's own numbers (flash: the recurrence),
                          // when the stage's tensors are at hand; else empty
};

/// The explanation of stage `id` for a run of `c` (as if the run had the stage: ask
/// stage_in_run whether it does). By name too: all fields empty for an unknown name.
stage_explanation explain_stage(const config& c, stage_id id);
stage_explanation explain_stage(const config& c, std::string_view name);

struct stage;
/// The same, and for the flash stage its `row`: the recurrence for the last query row of
/// batch 0, head 0, block by block, with the values in s's tensors (m, l, rescale).
stage_explanation explain_stage(const config& c, const stage& s);

/// One labelled line of an explanation: "why" and its text.
struct explanation_line {
    std::string label;
    std::string text;
};

/// The lines of `e` in reading order, each with its label, leaving out the empty
/// ones and the symbols (shown as the stage's formula): what, shape, einsum,
/// torch, memory, why, row.
std::vector<explanation_line> explanation_lines(const stage_explanation& e);

/// The paragraphs that open --explain: what multi-head attention is, the whole
/// of it in one formula, this run's letters with their values, how to read a block.
std::vector<std::string> explain_intro(const config& c);

/// The lines that close --explain: the shapes from start to end, where memory
/// is shared and where copied, and what grows with the sequence length.
std::vector<explanation_line> explain_summary(const config& c);

}  // namespace attn
