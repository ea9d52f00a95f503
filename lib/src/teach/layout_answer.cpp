// Layout answers of attn exercise (layout_answer.hpp): shapes after every stage, strides
// of one tensor, each wrong part named, known slips recognised.
#include "attn/teach/layout_answer.hpp"

#include <algorithm>

#include "attn/compute/error.hpp"
#include "attn/io/json_document.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/join.hpp"

namespace attn {
namespace {

using shape_sizes = std::vector<std::size_t>;

const tensor& first_tensor_of(const exercise_variant& v, const stage_info& info) {
    return v.run.find(info.name)->tensors.front();
}

shape_sizes shape_of_tensor(const tensor& t) { return shape_sizes(t.values.shape().begin(), t.values.shape().end()); }

/// The list of whole numbers `j` holds, or false.
bool read_sizes(const nlohmann::json& j, std::vector<std::int64_t>& out) {
    if (!j.is_array()) return false;
    for (const nlohmann::json& n : j) {
        if (!n.is_number_integer()) return false;
        out.push_back(n.get<std::int64_t>());
    }
    return true;
}

/// What stage `name` of the run would be shaped if the heads were never transposed
/// (q and k kept [B,S,H,dk]), or empty when that would not run or says nothing.
shape_sizes shape_without_transpose(const exercise_variant& v, const std::string& name) {
    const config& c = v.cfg;
    const auto B = static_cast<std::size_t>(c.batch), Sq = static_cast<std::size_t>(c.seq),
               Sk = static_cast<std::size_t>(c.kv_seq), H = static_cast<std::size_t>(c.heads),
               dk = static_cast<std::size_t>(c.head_dim());
    if (name == "transpose") return {B, Sq, H, dk};
    if (Sq != Sk) return {};  // [B,Sq,H,dk] @ [B,Sk,dk,H] does not broadcast
    if (name == "scores" || name == "scaled" || name == "masked" || name == "softmax" || name == "dropout")
        return {B, Sq, H, H};
    if (name == "context") return {B, Sq, H, dk};
    return {};
}

/// The problem with `given` as stage `name`'s shape, expected `want`; nullopt when right.
std::optional<layout_problem> shape_problem(const exercise_variant& v, const std::string& name, const shape_sizes& want,
                                            const nlohmann::json& given) {
    std::vector<std::int64_t> got;
    if (!read_sizes(given, got))
        return layout_problem{name, "answer_format", name + ": " + json_excerpt(given) + " is not a list of sizes"};
    const shape_sizes got_sizes(got.begin(), got.end());
    if (std::any_of(got.begin(), got.end(), [](std::int64_t n) { return n < 0; }) || got_sizes != want) {
        const std::string text = name + ": " + tensor_index_text(got_sizes);
        if (got_sizes == shape_without_transpose(v, name))
            return layout_problem{name, "shape_without_transpose",
                                  text + " is what this stage would be without .transpose(1, 2) after the view: "
                                         "the heads must become a batch axis, [B,H,S,dk]"};
        if (name == "merge" && v.run.find(stage_id::context) != nullptr &&
            got_sizes == shape_of_tensor(v.run.find(stage_id::context)->tensors.front()))
            return layout_problem{name, "merge_without_transpose",
                                  text + " is context's own shape: merge is context.transpose(1, 2), the heads "
                                         "back next to each other per position"};
        return layout_problem{name, "wrong_shape", text + " is not the shape of " +
                                                       first_tensor_of(v, *find_stage_info(name)).name +
                                                       " after this stage"};
    }
    return std::nullopt;
}

layout_report check_shapes(const exercise_variant& v, const nlohmann::json& answer) {
    layout_report r;
    const auto expected = expected_shapes(v);
    std::string names;
    for (const auto& [name, shape] : expected) names += (names.empty() ? "" : ", ") + name;
    nlohmann::json by_stage = nlohmann::json::object();
    if (answer.is_array() && answer.size() == expected.size()) {  // [[...], [...]] in stage order
        for (std::size_t i = 0; i < expected.size(); ++i) by_stage[expected[i].first] = answer[i];
    } else if (answer.is_object()) {
        by_stage = answer;
    } else {
        r.problems.push_back({"", "answer_format",
                              "expected a JSON object of a shape per stage, {\"projections\": [...], ...}, or a list "
                              "of " + std::to_string(expected.size()) + " shapes in stage order (" + names + ")"});
        return r;
    }
    for (const auto& [name, shape] : expected) {
        if (!by_stage.contains(name)) {
            r.problems.push_back({name, "missing_stage", name + ": missing (the stages: " + names + ")"});
            continue;
        }
        if (auto p = shape_problem(v, name, shape, by_stage[name])) r.problems.push_back(std::move(*p));
    }
    for (const auto& item : by_stage.items()) {
        const std::string& name = item.key();  // not a structured binding: C++17 lambdas cannot capture one
        const nlohmann::json& given = item.value();
        const bool asked = std::any_of(expected.begin(), expected.end(), [&](const auto& e) { return e.first == name; });
        if (asked) continue;
        if (name == "input" && v.run.find(stage_id::input) != nullptr) {  // may be given too
            if (auto p = shape_problem(v, name, shape_of_tensor(v.run.find(stage_id::input)->tensors.front()), given))
                r.problems.push_back(std::move(*p));
            continue;
        }
        r.problems.push_back({name, "unknown_stage", name + ": no stage of this run has that name (the stages: " + names + ")"});
    }
    r.match = r.problems.empty();
    return r;
}

layout_report check_strides(const exercise_variant& v, const nlohmann::json& answer) {
    layout_report r;
    const exercise& e = *v.ex;
    const tensor& t = v.run.find(e.answer_stage)->at(e.answer_tensor);
    const std::string what = e.answer_tensor + " after " + e.answer_stage;
    std::vector<std::int64_t> got;
    const auto say = [&](const char* id, const std::string& message) {
        r.problems.push_back({e.answer_stage, id, message});
        return r;
    };
    if (!read_sizes(answer, got))
        return say("answer_format", "expected the strides as a JSON list of whole numbers, e.g. [1, 2, 3, 4]; got " +
                                        json_excerpt(answer));
    if (got.size() != t.strides.size())
        return say("answer_format", what + " has " + std::to_string(t.strides.size()) + " axes, so " +
                                        std::to_string(t.strides.size()) + " strides; the answer has " +
                                        std::to_string(got.size()));
    const std::vector<std::int64_t> want(t.strides.begin(), t.strides.end());
    if (got == want) {
        r.match = true;
        return r;
    }
    const std::string text = "(" + join(got, ", ") + ")";
    const tensor_strides copy = contiguous_strides(shape_of_tensor(t));
    if (got == std::vector<std::int64_t>(copy.begin(), copy.end()))
        return say("strides_of_a_copy", text + " are the strides of a contiguous tensor of that shape, as after "
                                               ".contiguous(): transpose moves no data, it swaps two axes' strides");
    if (!t.view_of.empty()) {
        const tensor_layout before = transposed(t.layout(), 1, 2);
        if (got == std::vector<std::int64_t>(before.strides.begin(), before.strides.end()))
            return say("strides_before_transpose", text + " are the view's strides, before the transpose: "
                                                          "transpose(1, 2) swaps the strides of axes 1 and 2 too");
    }
    std::vector<std::int64_t> bytes;
    for (std::int64_t s : want) bytes.push_back(s * 4);
    if (got == bytes)
        return say("strides_in_bytes", text + " counts bytes; t.stride() counts elements (a float32 is 4 bytes)");
    std::vector<std::string> axes;
    for (std::size_t a = 0; a < want.size(); ++a)
        if (got[a] != want[a]) axes.push_back(std::to_string(a) + " (" + t.dims[a] + ")");
    const std::string list = join(axes, ", ", " and ");
    return say("wrong_strides", text + " are not the strides of " + what + ": " +
                                    (axes.size() == 1 ? "axis " + list + " is" : "axes " + list + " are") + " wrong");
}

}  // namespace

std::vector<std::pair<std::string, shape_sizes>> expected_shapes(const exercise_variant& v) {
    std::vector<std::pair<std::string, shape_sizes>> out;
    for (const stage& s : v.run.stages)
        if (s.info->id >= stage_id::projections)
            out.emplace_back(std::string(s.name()), shape_of_tensor(s.tensors.front()));
    return out;
}

layout_report check_layout_answer(const exercise_variant& v, const nlohmann::json& answer) {
    return v.ex->kind == answer_kind::strides ? check_strides(v, answer) : check_shapes(v, answer);
}

layout_report check_layout_answer_file(const exercise_variant& v, const std::string& path, const std::string& what,
                                       const read_budget* budget) {
    const std::string text = read_text_file(path, what, budget);
    if (text.rfind("\x93NUMPY", 0) == 0)
        throw error(what + ": a NumPy .npy file; this exercise takes a .json answer (json.dump(answer, f))");
    return check_layout_answer(v, parse_json_document(text, what, budget));
}

}  // namespace attn
