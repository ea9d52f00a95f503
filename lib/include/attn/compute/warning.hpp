#pragma once
// A warning about a run, tied to the stage it concerns: printed next to it and on stderr.
#include <string>
#include <vector>

namespace attn {

struct warning {
    std::string stage;  // the stage it concerns ("masked", "softmax", ...); empty = the whole run
    std::string text;   // one sentence, e.g. "batch 1, query 3: no key may be attended ..."
};

using warning_list = std::vector<warning>;

}  // namespace attn
