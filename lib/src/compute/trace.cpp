#include "attn/compute/trace.hpp"

#include "attn/compute/error.hpp"

namespace attn {

const stage_info* find_stage_info(std::string_view name) {
    for (const auto& info : stage_table)
        if (info.name == name) return &info;
    return nullptr;
}

const stage_info* find_stage_info(int step) {
    for (const auto& info : stage_table)
        if (info.step == step) return &info;
    return nullptr;
}

std::vector<const stage_info*> stages_holding(std::string_view tensor) {
    std::vector<const stage_info*> found;
    if (tensor.empty()) return found;
    for (const auto& entry : stage_tensor_table)
        for (std::string_view name : entry.tensors)
            if (name == tensor) found.push_back(find_stage_info(entry.stage));
    return found;
}

std::string stage_names_list() {
    std::string names;
    for (const auto& info : stage_table) {
        if (!names.empty()) names += ", ";
        names += info.name;
    }
    return names;
}

bool stage_in_run(const config& c, std::string_view name) {
    if (name == "mask" || name == "masked") return c.mask.any();
    if (name == "input" || name == "params") return !c.from_projections;
    if (name == "dropout") return c.dropout.applied();
    if (name == "output") return c.out_proj;
    return find_stage_info(name) != nullptr;
}

const tensor& stage::at(std::string_view tensor_name) const {
    for (const auto& t : tensors)
        if (t.name == tensor_name) return t;
    throw error("stage " + std::string(name()) + " has no tensor " + std::string(tensor_name));
}

std::vector<const warning*> trace::warnings_of(std::string_view name) const {
    std::vector<const warning*> found;
    for (const auto& w : warnings)
        if (w.stage == name) found.push_back(&w);
    return found;
}

const stage* trace::find(std::string_view name) const {
    for (const auto& s : stages)
        if (s.name() == name) return &s;
    return nullptr;
}

}  // namespace attn
