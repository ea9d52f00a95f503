#pragma once
// The answers tests/reference/make_mistake_fixtures.py made with PyTorch: for two
// configs, the right tensor and, per mistake, the wrong one at the stage where it is
// made and at later stages (tests/reference/mistakes/index.json).
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/mask.hpp"
#include "attn/io/tensor_file.hpp"

namespace mistake_fixtures {

inline std::string dir() { return std::string(ATTN_REFERENCE_DIR) + "/mistakes"; }

struct answer {
    std::string config_name, mistake, stage, tensor, made_at, file;  // mistake "none": the right answer
    int way;                                                          // config::mistake_variant
    attn::config cfg;
};

/// The run a config of the index describes, as the CLI would make it from its args.
inline attn::config config_of(const nlohmann::json& j) {
    attn::config c;
    c.seed = j["seed"].get<std::uint64_t>();
    c.batch = j["batch"].get<std::int64_t>();
    c.seq = j["seq"].get<std::int64_t>();
    c.kv_seq = j["kv_seq"].get<std::int64_t>();
    c.d_model = c.d_in = c.d_kv_in = j["d_model"].get<std::int64_t>();
    c.heads = j["heads"].get<std::int64_t>();
    attn::parse_mask_kinds(j["mask"].get<std::string>(), c.mask);
    c.mask.lengths = j["lengths"].get<std::vector<std::int64_t>>();
    const std::string fill = j["fill"].get<std::string>();
    c.fill = fill == "-inf" ? -std::numeric_limits<float>::infinity() : std::stof(fill);
    c.fill_text = fill;
    attn::validate(c);
    return c;
}

inline std::vector<answer> all() {
    std::ifstream in(dir() + "/index.json");
    const nlohmann::json index = nlohmann::json::parse(in);
    std::vector<answer> answers;
    for (const auto& a : index["answers"])
        answers.push_back({a["config"], a["mistake"], a["stage"], a["tensor"], a["made_at"], a["file"],
                           a["way"].get<int>(), config_of(index["configs"][a["config"].get<std::string>()])});
    return answers;
}

inline attn::loaded_tensor read(const answer& a) { return attn::read_tensor_file(dir() + "/" + a.file, a.file); }

}  // namespace mistake_fixtures
