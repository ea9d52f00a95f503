#pragma once
// attn exercise check for the layout exercises (exercise.hpp's answer kinds shapes and
// strides): the answer is a JSON file, checked against the variant's run.
//   shapes:  {"projections": [2,6,12], "view": [2,6,4,3], ...}: a shape per stage from
//            projections to the last (q's for projections, view and transpose; "input"
//            may be added), or the same shapes as a list in stage order.
//   strides: [72, 3, 12, 1]: the strides of the exercise's stage.tensor, in elements, as
//            t.stride() reports them.
// A wrong answer is told what is wrong where, and what it looks like when it is a known
// slip (the transpose left out, a copy's strides, the view's strides, bytes), without
// being told the expected values.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/teach/exercise.hpp"

namespace attn {

/// One thing wrong with a layout answer.
struct layout_problem {
    std::string where;  // the stage ("transpose"), or "" for the answer as a whole
    std::string id;     // a diagnosis id: shape_without_transpose, merge_without_transpose, wrong_shape,
                        // missing_stage, unknown_stage, strides_of_a_copy, strides_before_transpose,
                        // strides_in_bytes, wrong_strides, answer_format
    std::string message;
};

struct layout_report {
    bool match = false;
    std::vector<layout_problem> problems;  // in stage order; empty on a match
};

/// The stages a shapes answer names, in order, each with its tensor's shape in the run.
std::vector<std::pair<std::string, std::vector<std::size_t>>> expected_shapes(const exercise_variant& v);

/// `answer` (parsed JSON) against the variant's run; v.ex->kind must be shapes or strides.
layout_report check_layout_answer(const exercise_variant& v, const nlohmann::json& answer);

/// The answer file at `path` (errors name `what`, e.g. "--answer answer.json"), parsed and
/// checked. Throws attn::error for a file that cannot be read or is not JSON (a .npy
/// is told the exercise takes a .json answer). With `budget` (--max-memory), the file's size
/// and the values parsed from it are checked against it before they are held.
layout_report check_layout_answer_file(const exercise_variant& v, const std::string& path, const std::string& what,
                                       const read_budget* budget = nullptr);

}  // namespace attn
