#include "attn/compute/trace.hpp"

#include "attn/compute/error.hpp"

namespace attn {

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

const stage* trace::find(stage_id id) const {
    for (const auto& s : stages)
        if (s.id() == id) return &s;
    return nullptr;
}

}  // namespace attn
