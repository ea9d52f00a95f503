#pragma once
// What each stage says about itself in this run: stage_table's formula,
// rewritten so that it is true of the run (a file instead of torch.randn,
// no "+ b_q" without the bias, the fill the user typed, ...).
#include <string>
#include <string_view>

#include "attn/config.hpp"

namespace attn {

/// The formula line of stage `name` for a run of `c`, e.g. for masked with
/// --fill -1e9: "masked = scaled.masked_fill(mask == false, -1e9)".
std::string stage_formula(const config& c, std::string_view name);

/// Why stage `name` is not in a run of `c`, e.g. for dropout in eval mode:
/// "eval mode (--dropout acts only with --train), so the weights go on unchanged".
/// Written for mask, masked and dropout; empty for the others.
std::string stage_absence(const config& c, std::string_view name);

}  // namespace attn
