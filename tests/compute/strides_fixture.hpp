#pragma once
// Test helper shared by the memory-layout suites: tests/reference/strides.json, PyTorch's
// strides, contiguity and shared storage of every stage tensor for a few runs (written by
// tests/reference/make_strides_fixtures.py), and the trace attn computes for each run.
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/io/replay.hpp"

namespace strides_fixture {

using json = nlohmann::ordered_json;  // the stages in CLI.md's order

/// The cases of strides.json: [{"name", "config", "stages": {stage: {tensor: {"shape",
/// "strides", "contiguous", "storage"}}}}].
inline const json& cases() {
    static const json all = [] {
        const std::string path = std::string(ATTN_REFERENCE_DIR) + "/strides.json";
        std::ifstream in(path);
        if (!in) throw std::runtime_error("cannot open " + path);
        return json::parse(in).at("cases");
    }();
    return all;
}

/// The trace of a case, its inputs drawn from the seed as `attn trace` draws them.
inline attn::trace run(const json& one_case) {
    const nlohmann::json config_json = nlohmann::json::parse(one_case.at("config").dump());
    const attn::config c = attn::config_from_json(config_json, one_case.at("name").get<std::string>());
    attn::validate(c);
    return attn::compute_trace(c, attn::draw_inputs(c));
}

}  // namespace strides_fixture
