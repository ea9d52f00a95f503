// What a run computes: the stages asked for and every stage they depend on.
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/stage_sink.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

std::array<bool, stage_table.size()> stages_needed(const config& c, const stage_plan& plan) {
    std::array<bool, stage_table.size()> needed = plan.shown;
    const auto at = [](std::string_view name) { return static_cast<std::size_t>(find_stage_info(name)->step - 1); };
    const auto need_if = [&](std::string_view later, std::string_view earlier) {
        if (needed[at(later)]) needed[at(earlier)] = true;
    };
    // from the last stage back: each stage marks what it reads (input and params are read
    // from the inputs themselves, so they are needed only when shown)
    need_if("output", "concat");
    need_if("concat", "merge");
    need_if("merge", "context");
    need_if("context", c.dropout.applied() ? "dropout" : "softmax");
    need_if("context", "transpose");
    need_if("dropout", "softmax");
    need_if("softmax", c.mask.any() ? "masked" : "scaled");
    need_if("masked", "mask");
    need_if("masked", "scaled");
    need_if("scaled", "scores");
    need_if("scores", "transpose");
    need_if("transpose", "view");
    need_if("view", "projections");
    for (const stage_info& info : stage_table)
        if (!stage_in_run(c, info.name)) needed[at(info.name)] = false;
    return needed;
}

stage_plan stage_plan::every_stage() {
    stage_plan plan;
    plan.shown.fill(true);
    return plan;
}

stage_plan stage_plan::of(const std::vector<std::string>& names) {
    if (names.empty()) return every_stage();
    stage_plan plan;
    for (const std::string& name : names) plan.show(name);
    return plan;
}

void stage_plan::show(std::string_view name) {
    if (const stage_info* info = find_stage_info(name)) shown[static_cast<std::size_t>(info->step - 1)] = true;
}

bool stage_plan::shows(std::string_view name) const {
    const stage_info* info = find_stage_info(name);
    return info != nullptr && shown[static_cast<std::size_t>(info->step - 1)];
}

}  // namespace attn
