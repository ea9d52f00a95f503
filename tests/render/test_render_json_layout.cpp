// --format json: each tensor's "strides" and "contiguous" are PyTorch's t.stride() and
// t.is_contiguous() at that step, for every stage of every run in
// tests/reference/strides.json (from make_strides_fixtures.py, torch 1.13), including
// cross-attention, one head, one query and one dimension per head.
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/render/render_json.hpp"
#include "support.hpp"

TEST_SUITE("render_json") {

TEST_CASE("strides and contiguity in the JSON equal PyTorch's at every step") {
    for (const auto& c : strides_fixture::cases()) {
        const std::string case_name = c.at("name").get<std::string>();
        CAPTURE(case_name);
        std::ostringstream out;
        attn::render_json(strides_fixture::run(c), attn::render_options{}, out);
        const auto doc = parse_ordered_json(out.str());
        const auto& stages = doc.at("stages");

        std::vector<std::string> stage_names, expected_names;  // the same stages, in the same order
        for (const auto& [name, stage] : stages.items()) stage_names.push_back(name);
        for (const auto& [name, stage] : c.at("stages").items()) expected_names.push_back(name);
        CHECK(stage_names == expected_names);

        for (const auto& [stage_name, expected_stage] : c.at("stages").items()) {
            if (!stages.contains(stage_name)) continue;
            const auto& tensors = stages.at(stage_name).at("tensors");
            CHECK(tensors.size() == expected_stage.size());
            for (const auto& [name, expected] : expected_stage.items()) {
                const std::string tensor_path = stage_name + "." + name;  // CAPTURE (clang) takes no binding
                CAPTURE(tensor_path);
                REQUIRE(tensors.contains(name));
                const auto& actual = tensors.at(name);
                CHECK(actual.at("shape") == expected.at("shape"));
                CHECK(actual.at("strides") == expected.at("strides"));
                CHECK(actual.at("contiguous") == expected.at("contiguous"));
            }
        }
    }
}

}  // TEST_SUITE("render_json")
