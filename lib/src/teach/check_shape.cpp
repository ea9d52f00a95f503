#include "attn/teach/check_shape.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <numeric>

#include "attn/compute/run_plan.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

using shape_t = std::vector<std::size_t>;

/// What an answer with another stage's shape is missing (or has too much), for the
/// stages whose shapes students mix up.
struct shape_hint {
    std::string_view checked, other, hint;
};

constexpr std::array<shape_hint, 9> shape_hints{{
    {"transpose", "view", "the transpose(1, 2) is missing"},
    {"transpose", "projections", "the heads are not split: q.view(B, S, H, dk).transpose(1, 2)"},
    {"view", "projections", "the last axis is not split into heads: q.view(B, S, H, dk)"},
    {"view", "transpose", "this is already transposed: the view stage is q.view(B, S, H, dk) alone"},
    {"merge", "context", "the transpose(1, 2) back is missing"},
    {"merge", "concat", "this is already joined: the merge stage is context.transpose(1, 2) alone"},
    {"concat", "context", "the heads are not merged: context.transpose(1, 2).contiguous().view(B, Sq, D)"},
    {"concat", "merge", "the heads are not joined: .contiguous().view(B, Sq, D)"},
    {"output", "context", "the heads are not merged before the output projection"},
}};

const shape_t& shape_of(const planned_tensor& t) { return t.layout.shape; }

/// The same-named tensor of another stage with `answer` as its shape, the stage with
/// a hint first, then the nearest; "" when none: "this is the view stage's shape ...".
std::string other_stage_note(const std::vector<planned_stage>& right, const planned_stage& checked,
                             const planned_tensor& expected, const shape_t& answer) {
    const stage_info& checked_info = info_of(checked.id);
    const stage_info* best = nullptr;
    const planned_tensor* best_tensor = nullptr;
    std::string_view best_hint;
    int best_distance = 1000;
    for (const planned_stage& s : right) {
        if (s.id == checked.id) continue;
        const stage_info& info = info_of(s.id);
        for (const planned_tensor& t : s.tensors) {
            if (shape_of(t) != answer) continue;
            if (checked.tensors.size() > 1 && s.tensors.size() > 1 && t.name != expected.name) continue;  // q with q
            std::string_view hint;
            for (const shape_hint& h : shape_hints)
                if (h.checked == checked_info.name && h.other == info.name) hint = h.hint;
            const int distance = std::abs(info.step.number - checked_info.step.number) - (hint.empty() ? 0 : 100);
            if (distance < best_distance) {
                best = &info, best_tensor = &t, best_hint = hint, best_distance = distance;
            }
            break;
        }
    }
    if (best == nullptr) return {};
    std::string note = "this is the " + std::string(best->name) + " stage's shape " + dims_text(best_tensor->dims);
    return best_hint.empty() ? note : note + ": " + std::string(best_hint);
}

/// [B,H,Sk,Sq] for [B,H,Sq,Sk]: the last two axes swapped.
std::string swapped_plane_note(const planned_tensor& expected, const shape_t& want, const shape_t& answer) {
    if (want.size() < 2 || answer.size() != want.size() || want[want.size() - 1] == want[want.size() - 2])
        return {};
    shape_t swapped = want;
    std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
    if (swapped != answer) return {};
    std::vector<std::string> dims = expected.dims;
    std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
    std::string note = "the last two axes are swapped (" + dims_text(dims) + ", not " + dims_text(expected.dims) +
                       "): a transposed matrix";
    if (expected.dims.back() == "key") note += ", as K·Qᵀ gives instead of Q·Kᵀ (or a .transpose(-2, -1) too many)";
    return note;
}

/// What a missing axis means, by its name.
std::string missing_axis_hint(std::string_view name, std::size_t position, std::size_t size) {
    if (size == 1)
        return ": put it back with .unsqueeze(" + std::to_string(position) + ")" +
               (name == "head" ? " (the mask is [B,1,Sq,Sk], one plane for every head)" : "");
    if (name == "head") return ": the heads are not kept apart (one head's result, or summed or averaged over heads?)";
    if (name == "batch") return ": every batch item is needed, not one";
    return {};
}

/// One axis of `want` left out: "the head axis (H = 4) is missing: ...".
std::string missing_axis_note(const planned_tensor& expected, const shape_t& want, const shape_t& answer) {
    if (answer.size() + 1 != want.size()) return {};
    for (std::size_t i = 0; i < want.size(); ++i) {
        shape_t without = want;
        without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
        if (without != answer) continue;
        const std::string& name = expected.dims[i];
        return "the " + name + " axis (" + std::string(dim_letter(name)) + " = " + std::to_string(want[i]) +
               ", axis " + std::to_string(i) + " of " + dims_text(expected.dims) + ") is missing" +
               missing_axis_hint(name, i, want[i]);
    }
    return {};
}

/// One axis too many: "an extra axis of size 1 at position 0: .squeeze(0)".
std::string extra_axis_note(const shape_t& want, const shape_t& answer) {
    if (answer.size() != want.size() + 1) return {};
    for (std::size_t i = 0; i < answer.size(); ++i) {
        shape_t without = answer;
        without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
        if (without != want) continue;
        const std::string where = "an extra axis of size " + std::to_string(answer[i]) + " at position " + std::to_string(i);
        return answer[i] == 1 ? where + ": .squeeze(" + std::to_string(i) + ")" : where;
    }
    return {};
}

/// The expected axes in another order: "your axes are [B,Sq,H,dk]: permute them to [B,H,Sq,dk]".
std::string permuted_note(const planned_tensor& expected, const shape_t& want, const shape_t& answer) {
    if (answer.size() != want.size() || !std::is_permutation(want.begin(), want.end(), answer.begin())) return {};
    shape_t sorted = want;
    std::sort(sorted.begin(), sorted.end());
    const bool sizes_tell_axes_apart = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    if (!sizes_tell_axes_apart) return "the axes are in another order than " + dims_text(expected.dims);
    std::vector<std::string> yours;
    for (std::size_t size : answer)
        yours.push_back(expected.dims[static_cast<std::size_t>(std::find(want.begin(), want.end(), size) - want.begin())]);
    return "your axes are " + dims_text(yours) + ": permute them to " + dims_text(expected.dims);
}

/// Two neighbouring axes of `want` joined into one: "[B·H,Sq,Sk]: the axes B and H joined into one".
std::string joined_axes_note(const planned_tensor& expected, const shape_t& want, const shape_t& answer) {
    if (answer.size() + 1 != want.size()) return {};
    for (std::size_t i = 0; i + 1 < want.size(); ++i) {
        shape_t joined = want;
        joined[i] *= joined[i + 1];
        joined.erase(joined.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        if (joined != answer) continue;
        std::vector<std::string> letters;
        for (std::size_t a = 0; a < want.size(); ++a) letters.emplace_back(dim_letter(expected.dims[a]));
        const std::string pair = letters[i] + "·" + letters[i + 1];
        std::string text = "[";
        for (std::size_t a = 0; a < want.size(); ++a) {
            if (a == i + 1) continue;
            text += (a ? "," : "") + (a == i ? pair : letters[a]);
        }
        return text + "]: the axes " + letters[i] + " and " + letters[i + 1] + " joined into one" +
               (expected.dims[i] == "batch" && expected.dims[i + 1] == "head" ? ", as torch.bmm takes them" : "");
    }
    return {};
}

}  // namespace

std::size_t element_count(const shape_t& shape) {
    return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
}

std::string dims_text(const std::vector<std::string>& dim_names) {
    std::string text = "[";
    for (std::size_t i = 0; i < dim_names.size(); ++i) text += (i ? "," : "") + std::string(dim_letter(dim_names[i]));
    return text + "]";
}

std::string shape_note(const std::vector<planned_stage>& right, const planned_stage& checked,
                       const planned_tensor& expected, const shape_t& answer, const std::string& right_values_view) {
    const shape_t want = shape_of(expected);
    if (answer == want) return {};
    if (!right_values_view.empty()) {  // the right numbers: only the reshape is missing
        std::string why = other_stage_note(right, checked, expected, answer);
        if (why.empty()) why = missing_axis_note(expected, want, answer);
        if (why.empty()) why = joined_axes_note(expected, want, answer);
        if (why.empty()) why = extra_axis_note(want, answer);
        if (why.empty()) why = "the same " + std::to_string(element_count(want)) + " elements in another shape";
        return why + "; the numbers are right, in order: " + right_values_view + " gives " + dims_text(expected.dims);
    }
    for (const std::string& note : {other_stage_note(right, checked, expected, answer),
                                    swapped_plane_note(expected, want, answer), missing_axis_note(expected, want, answer),
                                    joined_axes_note(expected, want, answer), extra_axis_note(want, answer),
                                    permuted_note(expected, want, answer)})
        if (!note.empty()) return note;
    if (element_count(answer) == element_count(want))
        return "the same " + std::to_string(element_count(want)) + " elements in another shape (a view or reshape with "
               "other sizes?)";
    return std::to_string(element_count(answer)) + " elements instead of " + std::to_string(element_count(want)) + " " +
           dims_text(expected.dims) + " = " + tensor_index_text(want);
}

}  // namespace attn
