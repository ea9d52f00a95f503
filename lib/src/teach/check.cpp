// attn check: an answer against one stage tensor of the right run, then against
// the same tensor of the run made with each way of each mistake (the rows of the table of
// replaced steps that run_steps reads: the forward pass with that one step swapped).
#include "attn/teach/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/compute/attention.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/teach/check_shape.hpp"
#include "attn/teach/check_structure.hpp"
#include "attn/teach/mistake_text.hpp"

namespace attn {
namespace {

using shape_t = std::vector<std::size_t>;

/// How far `a` is from `e`: |a - e|; 0 for NaN and NaN or the same infinity; infinity
/// when only one of them is NaN or infinite.
double element_error(float a, float e) {
    const bool a_finite = std::isfinite(a), e_finite = std::isfinite(e);
    if (a_finite && e_finite) return std::abs(static_cast<double>(a) - static_cast<double>(e));
    if ((std::isnan(a) && std::isnan(e)) || (std::isinf(a) && a == e)) return 0.0;
    return std::numeric_limits<double>::infinity();
}

bool element_close(float a, float e, const check_tolerance& tol) {
    if (!std::isfinite(e)) return element_error(a, e) == 0.0;  // NaN with NaN, an infinity with the same
    return element_error(a, e) <= tol.atol + tol.rtol * std::abs(static_cast<double>(e));
}

/// The element comparison of two tensors of one shape: the largest error and where, and
/// how many elements are not close.
struct comparison {
    double max_error = 0.0;
    std::size_t max_at = 0;  // flat index
    std::size_t mismatched = 0;
};

comparison compare(const xt::xarray<float>& answer, const xt::xarray<float>& expected, const check_tolerance& tol) {
    comparison r;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const float a = answer.data()[i], e = expected.data()[i];
        const double err = element_error(a, e);
        if (err > r.max_error) r.max_error = err, r.max_at = i;
        if (!element_close(a, e, tol)) ++r.mismatched;
    }
    return r;
}

shape_t shape_of(const xt::xarray<float>& t) { return {t.shape().begin(), t.shape().end()}; }

/// `t` read in row-major order as `shape` (the same number of elements): what .view(shape) gives.
xt::xarray<float> viewed_as(const xt::xarray<float>& t, const shape_t& shape) {
    xt::xarray<float> v = t;
    v.reshape(shape);
    return v;
}

/// ".view(2, 4, 5, 5)": the reshape that gives `shape`.
std::string view_call(const shape_t& shape) {
    std::string call = ".view(";
    for (std::size_t i = 0; i < shape.size(); ++i) call += (i ? ", " : "") + std::to_string(shape[i]);
    return call + ")";
}

/// The stage called or numbered `name`; usage_error when there is none or the run lacks it.
const stage_info& stage_asked(const config& c, std::string_view name) {
    const bool number = !name.empty() && name[0] >= '0' && name[0] <= '9';  // "10", "5a"
    const std::optional<stage_step> step = number ? parse_step(name) : std::nullopt;
    const stage_info* info = !number ? find_stage_info(name) : step ? find_stage_info(*step) : nullptr;
    if (info == nullptr)
        throw usage_error("--stage " + std::string(name) + ": no stage is called or numbered " + std::string(name) +
                          " (" + stage_choices() + ")");
    if (!stage_in_run(c, info->name))
        throw usage_error("--stage " + std::string(name) + ": this run has no " + std::string(info->name) +
                          " stage (" + std::string(absent_because(info->id)) + ")");
    return *info;
}

/// The tensor called `name` in `tensors` of stage `stage_name` (its first when `name` is
/// empty), or usage_error: a computed stage's tensors or a planned one's.
template <class Tensor>
const Tensor& tensor_named(const std::vector<Tensor>& tensors, std::string_view stage_name, std::string_view name) {
    if (name.empty()) return tensors.front();
    for (const Tensor& t : tensors)
        if (t.name == name) return t;
    std::string names;
    for (const Tensor& t : tensors) names += (names.empty() ? "" : ", ") + t.name;
    throw usage_error("--tensor " + std::string(name) + ": the " + std::string(stage_name) + " stage has no tensor " +
                      std::string(name) + " (it has " + names + ")");
}

const tensor& tensor_asked(const stage& s, std::string_view name) { return tensor_named(s.tensors, s.name(), name); }

/// The layouts of the right run, and the planned stage `id` among them.
struct planned_run {
    std::vector<planned_stage> stages;
    const planned_stage& stage(stage_id id) const {
        return *std::find_if(stages.begin(), stages.end(), [id](const planned_stage& s) { return s.id == id; });
    }
};

/// The message of an answer no mistake explains and whose shape is wrong.
constexpr const char* unknown_shape_message =
    "no mistake attn knows gives an answer of this shape and these values: start from the shape";

/// The tensor `stage_name`.`tensor_name` of the run `c` (with its mistake): the run computes
/// that stage and what it reads, nothing after; nullopt when that run cannot be computed
/// or lacks the stage.
std::optional<xt::xarray<float>> tensor_of_run(const config& c, const inputs& in, std::string_view stage_name,
                                               std::string_view tensor_name) {
    trace kept;
    kept.cfg = c;
    trace_keeper keeper(kept);
    try {
        compute_stages(c, in, stage_plan::of({std::string(stage_name)}), keeper);
    } catch (const error&) {
        return std::nullopt;
    }
    const stage* s = kept.find(stage_name);
    if (s == nullptr) return std::nullopt;
    return xt::xarray<float>(tensor_asked(*s, tensor_name).values);
}

/// Whether the diagnosis tries mistake `wrong` for stage `asked`: when the run can make it,
/// and K·Qᵀ with Sq != Sk up to the scaled stage, where its [B,H,Sk,Sq] shape is still whole
/// (the mask and weights·V cannot take it: mistake_problem).
bool worth_trying(const config& wrong, const stage_info& asked) {
    if (mistake_problem(wrong).empty()) return true;
    return wrong.mistake == mistake::q_k_swapped && asked.id <= stage_id::scaled;
}

/// Whether a diagnosis of `m` ends in where it first shows: the mistakes of which keys are
/// masked and when, whose first place tells the student which mask kind went wrong.
bool says_where(mistake m) {
    return changes_mask_rules(m) || m == mistake::mask_not_applied || m == mistake::masked_after_softmax;
}

/// The mistake (and way) whose run gives a tensor the answer matches within the
/// tolerance, the closest if several do; fills the report's diagnosis.
void diagnose(const config& right, const trace& run, const inputs& in, const xt::xarray<float>& expected,
              const loaded_tensor& answer, check_report& report) {
    double best_error = std::numeric_limits<double>::infinity();
    bool best_reshaped = false;  // the best match is of the answer viewed in the mistake's shape
    // every mistake's tensor has the right one's elements (K·Qᵀ's [B,H,Sk,Sq] too): an answer
    // with another count matches none, and none is computed
    const bool countable = answer.values.size() == expected.size();
    for (mistake m : all_mistakes())
        for (int way = 0; countable && way < mistake_variants(m); ++way) {
            config wrong = right;
            wrong.mistake = m;
            wrong.mistake_variant = way;
            if (!worth_trying(wrong, *find_stage_info(report.stage))) continue;
            const auto made = tensor_of_run(wrong, in, report.stage, report.tensor);
            if (!made || element_count(shape_of(*made)) != answer.values.size()) continue;
            // an answer of another shape with the mistake's numbers in order: the mistake and a reshape
            const bool reshaped = shape_of(*made) != answer.shape;
            if (reshaped && best_error < std::numeric_limits<double>::infinity() && !best_reshaped) continue;
            if (shape_of(*made) == shape_of(expected) && all_close(*made, expected, report.tolerance))
                continue;  // this mistake leaves the tensor right: it cannot be told from a right answer
            const comparison r =
                compare(reshaped ? viewed_as(answer.values, shape_of(*made)) : answer.values, *made, report.tolerance);
            if (r.mismatched != 0 || (r.max_error >= best_error && reshaped == best_reshaped)) continue;
            best_error = r.max_error;
            best_reshaped = reshaped;
            report.diagnosis_id = mistake_id(m);
            report.diagnosis_message = mistake_diagnosis(wrong);
            if (reshaped)
                report.diagnosis_message += "; and the shape differs too: the numbers are the mistake's in order, so " +
                                            view_call(shape_of(*made)) + " gives its shape";
            report.diagnosis_stage = info_of(*mistake_stage(m, way)).name;
            report.diagnosis_way = way;
        }
    // the structure: where a named mistake first shows, or what departs when none fits
    const std::optional<structure_finding> found =
        report.answer_shape == report.expected_shape
            ? read_structure(run, report.stage, answer.values, expected, report.tolerance)
            : std::nullopt;
    if (!report.diagnosis_id.empty()) {
        if (found && says_where(*parse_mistake(report.diagnosis_id)))
            report.diagnosis_message += "; it shows first where " + found->where;
        return;
    }
    if (found) {
        report.diagnosis_id = found->id;
        report.diagnosis_message = found->message;
        return;
    }
    report.diagnosis_id = "unknown";
    report.diagnosis_message =
        report.answer_shape != report.expected_shape
            ? unknown_shape_message
            : "the answer matches none of the mistakes attn knows (" + std::to_string(all_mistakes().size()) +
                  ", each made the ways students make it) within the tolerance: compare it with the stage's "
                  "formula (attn trace --stage " + report.stage + ")";
}

/// The run an answer is checked against: c with no mistake made (--mistake is refused by
/// the command; a config from elsewhere may carry one).
config without_mistake(config c) {
    c.mistake = mistake::none;
    c.mistake_variant = 0;
    return c;
}

/// What is checked, before any verdict.
check_report report_on(const stage_info& info, const std::string& tensor, const std::vector<std::size_t>& expected_shape,
                       const std::vector<std::string>& expected_dims, const std::vector<std::size_t>& answer_shape,
                       const check_tolerance& tol) {
    check_report report;
    report.stage = std::string(info.name);
    report.step = info.step;
    report.tensor = tensor;
    report.expected_shape = expected_shape;
    report.expected_dims = expected_dims;
    report.answer_shape = answer_shape;
    report.tolerance = tol;
    return report;
}

}  // namespace

bool all_close(const xt::xarray<float>& answer, const xt::xarray<float>& expected, const check_tolerance& tol) {
    if (answer.shape() != expected.shape()) return false;
    for (std::size_t i = 0; i < expected.size(); ++i)
        if (!element_close(answer.data()[i], expected.data()[i], tol)) return false;
    return true;
}

std::optional<check_report> check_answer_shape(const config& c, std::string_view stage_name,
                                               std::string_view tensor_name, const std::vector<std::size_t>& answer_shape,
                                               const check_tolerance& tol) {
    const config right = without_mistake(c);
    const stage_info& info = stage_asked(right, stage_name);
    const planned_run layouts{make_plan(right).stages};
    const planned_stage& checked = layouts.stage(info.id);
    const planned_tensor& want = tensor_named(checked.tensors, info.name, tensor_name);
    // every mistake's tensor has the right one's elements: another count matches none
    if (element_count(answer_shape) == element_count(want.layout.shape)) return std::nullopt;
    check_report report = report_on(info, want.name, want.layout.shape, want.dims, answer_shape, tol);
    report.shape_note = shape_note(layouts.stages, checked, want, answer_shape);
    report.diagnosis_id = "unknown";
    report.diagnosis_message = unknown_shape_message;
    return report;
}

check_report check_answer(const config& c, const inputs& in, std::string_view stage_name, std::string_view tensor_name,
                          const loaded_tensor& answer, const check_tolerance& tol) {
    if (std::optional<check_report> wrong_count = check_answer_shape(c, stage_name, tensor_name, answer.shape, tol))
        return *wrong_count;  // known from the sizes: nothing computed
    const config right = without_mistake(c);
    const stage_info& info = stage_asked(right, stage_name);
    const planned_run layouts{make_plan(right).stages};
    const planned_stage& planned = layouts.stage(info.id);

    const trace run = compute_trace(right, in);
    const stage& checked = *run.find(info.name);
    const tensor& want = tensor_asked(checked, tensor_name);
    const xt::xarray<float> expected = want.values;

    check_report report = report_on(info, want.name, shape_of(expected), want.dims, answer.shape, tol);

    if (report.answer_shape == report.expected_shape) {
        const comparison r = compare(answer.values, expected, tol);
        report.max_error = r.max_error;
        if (expected.size() != 0) {
            report.max_error_at = unravel_index(r.max_at, report.expected_shape);
            report.answer_at = answer.values.data()[r.max_at];
            report.expected_at = expected.data()[r.max_at];
        }
        report.mismatched = r.mismatched;
        report.match = r.mismatched == 0;
        if (report.match) return report;
    } else if (answer.values.size() == expected.size() && expected.size() != 0 &&
               all_close(viewed_as(answer.values, report.expected_shape), expected, tol)) {
        // the right numbers in order, in another shape ([B·H,Sq,Sk] from bmm, an extra axis of 1, ...)
        const std::string view = view_call(report.expected_shape);
        report.shape_note =
            shape_note(layouts.stages, planned, tensor_named(planned.tensors, info.name, want.name), report.answer_shape, view);
        report.diagnosis_id = "right_values_other_shape";
        report.diagnosis_message = "your numbers are right; only the shape differs: " + view + " gives " +
                                   dims_text(want.dims);
        return report;
    } else {
        report.shape_note =
            shape_note(layouts.stages, planned, tensor_named(planned.tensors, info.name, want.name), report.answer_shape);
    }
    diagnose(right, run, in, expected, answer, report);  // a wrong shape too: some mistakes make one
    return report;
}

}  // namespace attn
