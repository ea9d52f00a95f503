#pragma once
// attn check: a student's answer against one stage of a run, and, when it does
// not match, which common mistake it matches (the ids are CLI.md's; graders key
// on them). The same mistakes can be made on purpose (attn trace --mistake ID).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {

struct check_tolerance {
    double atol = 1e-5;  // float32: about 100 ulps of a value near 1
    double rtol = 1e-4;
};

struct check_report {
    bool match = false;
    std::string stage, tensor;              // what was checked: "softmax", "weights"
    std::vector<std::size_t> expected_shape, answer_shape;
    std::string shape_note;                 // on a wrong shape: what the wrong shape suggests; else empty
    double max_error = 0.0;                 // the largest |answer - expected|, when the shapes agree
    std::vector<std::size_t> max_error_at;  // and where
    std::string diagnosis_id;               // empty on a match; a mistake_id or "unknown"
    std::string diagnosis_message;          // one sentence with the fix
};

/// Computes `stage` of the run (`c`, `in`: as for compute_trace) and compares
/// `answer` with its tensor `tensor` (empty: the stage's only or first tensor).
/// On a mismatch, recomputes the stage with each mistake and names the one the
/// answer matches. Throws usage_error for a stage or tensor this run lacks.
check_report check_answer(const config& c, const inputs& in, std::string_view stage, std::string_view tensor,
                          const loaded_tensor& answer, const check_tolerance& tol = {});

}  // namespace attn
