#include "attn/render/render_check.hpp"

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/compute/config.hpp"
#include "attn/render/render_json.hpp"
#include "attn/teach/check_shape.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

/// %g with `digits` significant digits: 0.3918, 1e-05, 2.98e-08, inf, nan.
std::string number(double v, int digits = 4) {
    return std::isnan(v) ? "nan" : significant_text(v, digits);  // never -nan: a sign bit means nothing to a student
}

/// A float32 value (or an error between two) as the trace's JSON writes numbers: the
/// fewest digits that read back as the same float; "nan", "inf", "-inf" as strings.
nlohmann::ordered_json json_number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    return std::stod(fill_to_string(static_cast<float>(v)));
}

std::string tolerance_text(const check_report& r) {
    return "atol " + number(r.tolerance.atol) + " + rtol " + number(r.tolerance.rtol) + "·|expected|";
}

void line(std::ostream& out, const char* label, const std::string& text) {
    std::string padded = label;
    padded.resize(11, ' ');
    out << padded << text << "\n";
}

}  // namespace

void render_check_table(const check_report& r, std::ostream& out) {
    line(out, "stage", r.stage + " (" + r.step.text() + "), tensor " + r.tensor);
    const std::string expected = tensor_index_text(r.expected_shape) + " " + dims_text(r.expected_dims);
    const bool same_shape = r.answer_shape == r.expected_shape;
    line(out, "shape", same_shape ? expected + ", as expected"
                                  : tensor_index_text(r.answer_shape) + ", expected " + expected +
                                        (r.shape_note.empty() ? "" : ": " + r.shape_note));
    if (!same_shape) {
        line(out, "result", "mismatch: the shapes differ");
    } else if (r.match) {
        line(out, "result", "match: every element within " + tolerance_text(r));
    } else {
        line(out, "result", "mismatch: " + std::to_string(r.mismatched) + " of " +
                                std::to_string(element_count(r.expected_shape)) + " elements differ by more than " +
                                tolerance_text(r));
    }
    if (same_shape && !r.max_error_at.empty())
        line(out, "largest", "error " + number(r.max_error) + " at " + tensor_index_text(r.max_error_at) +
                                 ": yours " + number(r.answer_at, 6) + ", expected " + number(r.expected_at, 6));
    if (r.match) return;
    line(out, "diagnosis", r.diagnosis_id + ": " + r.diagnosis_message);
    if (!r.diagnosis_stage.empty() && r.diagnosis_stage != r.stage)
        line(out, "", "(the mistake is made at the " + r.diagnosis_stage + " stage; the " + r.stage +
                          " stage follows from it)");
}

void render_check_error_json(const std::string& message, std::ostream& out, const std::string& id) {
    nlohmann::ordered_json j;
    j["match"] = nullptr;
    j["error"] = {{"id", id}, {"message", message}};
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void render_check_json(const check_report& r, std::ostream& out) {
    const bool same_shape = r.answer_shape == r.expected_shape;
    nlohmann::ordered_json j;
    j["match"] = r.match;
    j["stage"] = r.stage;
    j["step"] = step_json(r.step);
    j["tensor"] = r.tensor;
    j["expected_shape"] = r.expected_shape;
    j["expected_dims"] = r.expected_dims;
    j["answer_shape"] = r.answer_shape;
    if (!r.shape_note.empty()) j["shape_note"] = r.shape_note;
    const bool measured = same_shape && !r.max_error_at.empty();
    j["max_error"] = measured ? json_number(r.max_error) : nullptr;
    j["max_error_at"] = measured ? nlohmann::ordered_json(r.max_error_at) : nullptr;
    j["answer_value"] = measured ? json_number(r.answer_at) : nullptr;
    j["expected_value"] = measured ? json_number(r.expected_at) : nullptr;
    j["mismatched"] = same_shape ? nlohmann::ordered_json(r.mismatched) : nullptr;
    j["elements"] = element_count(r.expected_shape);
    j["atol"] = r.tolerance.atol;
    j["rtol"] = r.tolerance.rtol;
    if (!r.match) {
        nlohmann::ordered_json d{{"id", r.diagnosis_id}, {"message", r.diagnosis_message}};
        if (!r.diagnosis_stage.empty()) d["made_at"] = r.diagnosis_stage;
        j["diagnosis"] = d;
    }
    out << j.dump() << "\n";
}

}  // namespace attn
