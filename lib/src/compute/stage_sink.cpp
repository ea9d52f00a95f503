// What a run computes (stage_plan), and the sink that keeps every stage (trace_keeper).
#include "attn/compute/stage_sink.hpp"

#include <algorithm>

#include "attn/compute/mistake.hpp"

namespace attn {

stage_plan stage_plan::every_stage() {
    stage_plan plan;
    for (const stage_info& info : stage_table) plan.show(info.id);
    return plan;
}

stage_plan stage_plan::of(const std::vector<std::string>& names) {
    if (names.empty()) return every_stage();
    stage_plan plan;
    for (const std::string& name : names)
        if (const stage_info* info = find_stage_info(name)) plan.show(info->id);
    return plan;
}

stage_plan stage_plan::of(stage_set shown) {
    if (shown == 0) return every_stage();
    stage_plan plan;
    plan.shown = shown;
    return plan;
}

bool stage_plan::computes_every_query_row(const config& c) const {
    // dropout's draws are one stream; flash compares every row of context
    const bool dropout_or_flash = (stages_needed(c, shown) & stages(stage_id::dropout, stage_id::flash)) != 0;
    return layout == plane_layout::whole_tensor || shown_query.empty() || dropout_or_flash || block_rows == 0 ||
           block_rows >= static_cast<std::size_t>(c.seq) || c.mistake != mistake::none;
}

void trace_keeper::begin(const trace&, const stage& s) {
    into_.stages.push_back(s);
    gathered_.clear();
    if (!s.in_rows()) return;
    for (const tensor& t : s.tensors) gathered_.push_back(xt::xarray<float>::from_shape(t.values.shape()));
}

void trace_keeper::rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) {
    xt::xarray<float>& t = gathered_.at(index);
    const std::size_t width = t.shape().back();
    std::copy(data, data + count * width, t.data() + first_row * width);
}

void trace_keeper::end(const trace&, const stage& s) {
    if (!s.in_rows()) return;
    stage& kept = into_.stages.back();
    for (std::size_t i = 0; i < kept.tensors.size(); ++i) {
        tensor& t = kept.tensors[i];
        t = tensor(t.name, t.dims, std::move(gathered_[i]), t.type);
    }
    gathered_.clear();
}

}  // namespace attn
