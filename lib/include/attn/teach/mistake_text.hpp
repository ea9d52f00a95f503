#pragma once
// What attn says about a mistake (mistake.hpp): the formula of a stage it
// changes and the warning where it is made (attn trace --mistake ID), and the
// diagnosis of an answer that makes it (attn check), one sentence with the fix.
// Each text is about c.mistake made in way c.mistake_variant, with the run's numbers.
#include <string>
#include <string_view>

#include "attn/compute/config.hpp"

namespace attn {

/// The formula of stage `stage` as c.mistake makes it, e.g. for softmax_axis
/// "weights = softmax(masked, dim=-2): over the queries, not the keys
/// (--mistake softmax_axis, on purpose)"; empty when the mistake leaves the
/// stage's formula alone.
std::string mistake_formula(const config& c, std::string_view stage);

/// The title of stage `stage` as c.mistake makes it, so that the heading tells what
/// this run computes there: "the scores are not divided by √dk = 1.4142 (--mistake
/// missing_scale, on purpose)"; empty when the mistake leaves the stage alone.
std::string mistake_title(const config& c, std::string_view stage);

/// The warning on the stage where c.mistake is made: "--mistake softmax_axis:
/// softmax over the queries (dim=-2) instead of the keys (dim=-1), on purpose;
/// every later stage follows from it".
std::string mistake_warning(const config& c);

/// The diagnosis of an answer that makes c.mistake, one sentence with the fix:
/// "your weights sum to 1 over the queries (dim=-2), not over the keys: use
/// torch.softmax(scores, dim=-1)".
std::string mistake_diagnosis(const config& c);

}  // namespace attn
