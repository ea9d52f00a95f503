#include "attn/teach/explain.hpp"

#include "attn/teach/stage_text.hpp"

namespace attn {

stage_explanation explain_stage(const config& c, std::string_view name) {
    stage_explanation e;
    e.symbols = stage_formula(c, name);
    return e;
}

}  // namespace attn
