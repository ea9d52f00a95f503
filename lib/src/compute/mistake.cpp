// The mistakes' ids (mistake.hpp). A small placeholder on the exercise branch, so that
// attn exercise builds; the branch that teaches attn to make the mistakes replaces it.
#include "attn/compute/mistake.hpp"

#include <array>
#include <utility>

namespace attn {
namespace {

constexpr std::array<std::pair<mistake, std::string_view>, 11> mistake_ids{{
    {mistake::none, "none"},
    {mistake::softmax_axis, "softmax_axis"},
    {mistake::missing_scale, "missing_scale"},
    {mistake::wrong_scale, "wrong_scale"},
    {mistake::mask_inverted, "mask_inverted"},
    {mistake::fill_value, "fill_value"},
    {mistake::split_without_transpose, "split_without_transpose"},
    {mistake::merge_without_transpose, "merge_without_transpose"},
    {mistake::weight_not_transposed, "weight_not_transposed"},
    {mistake::q_k_swapped, "q_k_swapped"},
    {mistake::missing_bias, "missing_bias"},
}};

}  // namespace

std::string_view mistake_id(mistake m) {
    for (const auto& [value, id] : mistake_ids)
        if (value == m) return id;
    return "none";
}

std::optional<mistake> parse_mistake(std::string_view id) {
    for (const auto& [value, name] : mistake_ids)
        if (name == id) return value;
    return std::nullopt;
}

const std::vector<mistake>& all_mistakes() {
    static const std::vector<mistake> all = [] {
        std::vector<mistake> v;
        for (const auto& [value, id] : mistake_ids)
            if (value != mistake::none) v.push_back(value);
        return v;
    }();
    return all;
}

}  // namespace attn
