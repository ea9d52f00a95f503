#pragma once
// attn check's words about an answer of the wrong shape: what the shape it has
// suggests went wrong (a missing transpose, a transposed plane, a lost axis, ...).
#include <cstddef>
#include <string>
#include <vector>

#include "attn/compute/trace.hpp"

namespace attn {

/// "[B,H,Sq,dk]": a tensor's dimension names as letters, as CLI.md writes shapes.
std::string dims_text(const std::vector<std::string>& dim_names);

/// What `answer_shape` suggests when stage `checked`'s tensor `expected` (of the
/// right run `right`) has another shape, in one sentence:
///   "this is the view stage's shape [B,Sq,H,dk]: the transpose(1, 2) is missing"
///   "the last two axes are swapped ([B,H,Sk,Sq], not [B,H,Sq,Sk]): a transposed matrix ..."
///   "the head axis (H = 4) is missing: ..."
/// Empty when the shapes agree.
std::string shape_note(const trace& right, const stage& checked, const tensor& expected,
                       const std::vector<std::size_t>& answer_shape);

}  // namespace attn
