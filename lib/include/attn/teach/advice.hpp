#pragma once
// Warnings about settings that do nothing, or that would teach a bug, each tied to the
// stage it concerns (so it is printed there and on stderr). Whoever runs and shows a
// trace adds them to the inputs' warnings: the computation does not know these words.
#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// What the config alone tells: --dropout without --train (eval mode: the
/// identity), --train without --dropout, a causal mask with Sq != Sk (which
/// alignment it uses, and the --causal-align for the other).
warning_list settings_advice(const config& c);

/// settings_advice, then with --mistake ID what the mistake is, at the stage it is made.
warning_list run_advice(const config& c);

}  // namespace attn
