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
#include "attn/compute/stage_table.hpp"
#include "attn/io/tensor_file.hpp"

#include <xtensor/xarray.hpp>

namespace attn {

struct check_tolerance {
    double atol = 1e-5;  // float32: about 100 ulps of a value near 1
    double rtol = 1e-4;
};

struct check_report {
    bool match = false;
    std::string stage, tensor;              // what was checked: "softmax", "weights"
    stage_step step;                        // the stage's number (10 for softmax)
    std::vector<std::size_t> expected_shape, answer_shape;
    std::vector<std::string> expected_dims; // the expected tensor's dimension names ("batch", "head", ...)
    std::string shape_note;                 // on a wrong shape: what the wrong shape suggests; else empty
    double max_error = 0.0;                 // the largest |answer - expected|, when the shapes agree
                                            // (infinity where one is NaN or ±inf and the other is not)
    std::vector<std::size_t> max_error_at;  // and where
    double answer_at = 0.0, expected_at = 0.0;  // the two values there
    std::size_t mismatched = 0;             // how many elements are not within the tolerance
    check_tolerance tolerance;              // what "within" meant
    std::string diagnosis_id;               // empty on a match; a mistake_id or "unknown"
    std::string diagnosis_message;          // one sentence with the fix
    std::string diagnosis_stage;            // where the diagnosed mistake is made ("softmax"); empty for unknown
    int diagnosis_way = 0;                  // the way of the diagnosed mistake (mistake_variants)
    std::string diagnosis_like;             // exercise check, a teacher's own mistake: the built-in id it is like
};

/// Whether `answer` equals `expected` within the tolerance, element by element as
/// numpy.allclose(answer, expected, rtol, atol, equal_nan=True): |a - e| <= atol + rtol·|e|,
/// NaN equal to NaN, an infinity to the same infinity. Shapes must agree.
bool all_close(const xt::xarray<float>& answer, const xt::xarray<float>& expected, const check_tolerance& tol);

/// Computes `stage` of the run (`c`, `in`: as for compute_trace; c.mistake is
/// ignored: the run is the right one) and compares `answer` with its tensor
/// `tensor` (empty: the stage's only or first tensor). `stage` is a name or a
/// number ("10"). On a mismatch, recomputes the run with each mistake made in
/// each of its ways (mistake_variants) and names the one whose tensor the answer
/// matches within the tolerance (the closest, if several), or "unknown"; a
/// mistake the run cannot make (mistake_problem) or that leaves the tensor as it
/// is is not tried. An answer of another shape holding a mistake's numbers in
/// order is named by that mistake, and the message adds the reshape; one holding
/// the right numbers in order is "right_values_other_shape". For the masked,
/// softmax and dropout stages the message adds where a named mistake first shows,
/// and when none fits, the answer's structure names what departs
/// (check_structure.hpp: planes_transposed, weight_where_masked, zero_where_allowed,
/// rows_not_normalized) before "unknown". Throws usage_error for a stage or tensor this run lacks
/// ("--stage dropout: ...", "--tensor keep: ...").
check_report check_answer(const config& c, const inputs& in, std::string_view stage, std::string_view tensor,
                          const loaded_tensor& answer, const check_tolerance& tol = {});

/// The report check_answer gives an answer of `answer_shape` whose element count is not
/// the stage tensor's: no run, right or with a mistake, makes such a tensor, so it is
/// "unknown" with a note on the shape, known from the sizes alone (make_plan):
/// nothing is computed and the answer's data is not needed (check it from a file's header
/// first). nullopt when the counts agree and the numbers must be compared. Throws as
/// check_answer for a stage or tensor this run lacks.
std::optional<check_report> check_answer_shape(const config& c, std::string_view stage, std::string_view tensor,
                                               const std::vector<std::size_t>& answer_shape,
                                               const check_tolerance& tol = {});

}  // namespace attn
