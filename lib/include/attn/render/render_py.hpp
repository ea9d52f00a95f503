#pragma once
// --format py: the run as one runnable PyTorch script, a lab starter. It draws the
// inputs as attn does (torch.manual_seed, the nn.Linear layers, torch.randn), computes
// each stage with the line --explain gives, in named variables (q, k, v, scores, scaled,
// mask, masked, weights, context, merged, concat, out), and after each shown stage
// asserts that the script's tensor equals the numbers attn computed, embedded as
// literals that read back as the same float32:
//
//   # ── 10 · softmax ──  weights = softmax(masked, dim=-1)
//   weights = torch.softmax(masked, dim=-1)
//   check("softmax.weights", weights, f32([[[[1.0, 0.0, 0.0, 0.0],
//                                            [0.471608, 0.528392, 0.0, 0.0], ...
//
// The views (view, transpose, merge) are checked by shape and strides, as PyTorch
// reports them. With --mistake the stage it changes is written as the mistake makes it,
// and the checks assert the mistaken numbers.
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// The most numbers --format py embeds for one stage.
inline constexpr std::size_t py_max_numbers = 4096;

/// Throws usage_error when --format py cannot write the run of `c` showing `options`'
/// stages: inputs read from files, a --mistake it has no PyTorch line for, a view flag,
/// or a stage of more than py_max_numbers numbers (the message names the size flags and --stage).
void check_py_run(const config& c, const render_options& options);

/// The script; `command` is the attn command that made it, for its first line.
void render_py(const trace& t, const render_options& options, const std::string& command, std::ostream& out);

}  // namespace attn
