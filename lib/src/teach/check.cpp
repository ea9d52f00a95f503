// attn check (check.hpp): a placeholder on the exercise branch that only compares;
// the branch that builds attn check replaces it with the one that also names the
// mistake. Here every mismatch is diagnosed "unknown".
#include "attn/teach/check.hpp"

#include <cmath>
#include <limits>

#include "attn/compute/attention.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/trace.hpp"

namespace attn {
namespace {

/// The tensor of `stage` called `tensor` (empty: the stage's first), or usage_error.
const attn::tensor& find_expected(const trace& t, std::string_view stage, std::string_view tensor) {
    const attn::stage* s = t.find(stage);
    if (s == nullptr)
        throw usage_error("--stage " + std::string(stage) + ": this run has no such stage (stages: " +
                          stage_names_list() + ")");
    if (tensor.empty()) return s->tensors.front();
    for (const attn::tensor& x : s->tensors)
        if (x.name == tensor) return x;
    throw usage_error("--tensor " + std::string(tensor) + ": stage " + std::string(stage) + " has no such tensor");
}

/// |a - e|, with NaN = NaN and inf = inf counted as equal, any other NaN or inf as infinitely far.
double difference(float a, float e) {
    if (std::isnan(a) && std::isnan(e)) return 0.0;
    if (std::isinf(a) || std::isinf(e)) return a == e ? 0.0 : std::numeric_limits<double>::infinity();
    if (std::isnan(a) || std::isnan(e)) return std::numeric_limits<double>::infinity();
    return std::abs(static_cast<double>(a) - static_cast<double>(e));
}

}  // namespace

check_report check_answer(const config& c, const inputs& in, std::string_view stage, std::string_view tensor,
                          const loaded_tensor& answer, const check_tolerance& tol) {
    const trace t = compute_trace(c, in);
    const attn::tensor& expected = find_expected(t, stage, tensor);
    check_report r;
    r.stage = std::string(stage);
    r.tensor = expected.name;
    r.expected_shape.assign(expected.values.shape().begin(), expected.values.shape().end());
    r.answer_shape = answer.shape;
    bool match = r.expected_shape == r.answer_shape;
    if (match) {
        const xt::xarray<float> e = expected.values;  // row-major, as the answer
        for (std::size_t i = 0; i < e.size(); ++i) {
            const float want = e.flat(i), got = answer.values.flat(i);
            const double d = difference(got, want);
            if (r.max_error_at.empty() || d > r.max_error) {
                r.max_error = d;
                r.max_error_at = unravel_index(i, r.expected_shape);
            }
            if (d > tol.atol + tol.rtol * std::abs(static_cast<double>(want))) match = false;
        }
    }
    r.match = match;
    if (!match) {
        r.diagnosis_id = "unknown";
        r.diagnosis_message = r.expected_shape == r.answer_shape
                                  ? "the numbers differ; compare your steps with attn trace, stage by stage"
                                  : "the shape differs; compare your steps' shapes with attn trace, stage by stage";
    }
    return r;
}

}  // namespace attn
