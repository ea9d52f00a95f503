#pragma once
// attn check's words about an answer of the wrong shape: what the shape it has
// suggests went wrong (a missing transpose, a transposed plane, a lost axis, ...).
#include <cstddef>
#include <string>
#include <vector>

#include "attn/compute/run_plan.hpp"

namespace attn {

/// The number of elements of a tensor of `shape` (1 for a scalar's []).
std::size_t element_count(const std::vector<std::size_t>& shape);

/// "[B,H,Sq,dk]": a tensor's dimension names as letters, as CLI.md writes shapes.
std::string dims_text(const std::vector<std::string>& dim_names);

/// What `answer_shape` suggests when stage `checked`'s tensor `expected` (of the
/// right run's layouts `right`, make_plan) has another shape, in one sentence:
///   "this is the view stage's shape [B,Sq,H,dk]: the transpose(1, 2) is missing"
///   "the last two axes are swapped ([B,H,Sk,Sq], not [B,H,Sq,Sk]): a transposed matrix ..."
///   "the head axis (H = 4) is missing: ..."
///   "[B·H,Sq,Sk]: the axes B and H joined into one, as torch.bmm takes them"
/// Empty when the shapes agree. `right_values_view` (".view(2, 4, 5, 5)") says the answer
/// holds the right numbers in order: the note then ends in that reshape.
std::string shape_note(const std::vector<planned_stage>& right, const planned_stage& checked, const planned_tensor& expected,
                       const std::vector<std::size_t>& answer_shape, const std::string& right_values_view = {});

}  // namespace attn
