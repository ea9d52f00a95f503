// plan_stage_layouts (attn trace --shapes): every stage tensor's shape, strides and shared
// memory from the sizes alone, against PyTorch's for the runs of tests/reference/strides.json
// (make_strides_fixtures.py, torch 1.13), and against the tensors compute_stages makes.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/stage_layouts.hpp"
#include "support.hpp"

TEST_SUITE("stage_layouts") {

TEST_CASE("the planned layouts are PyTorch's at every step, views and copies included") {
    for (const auto& c : strides_fixture::cases()) {
        const std::string case_name = c.at("name").get<std::string>();
        CAPTURE(case_name);
        const attn::trace run = strides_fixture::run(c);
        const std::vector<attn::planned_stage> planned = attn::plan_stage_layouts(run.cfg);

        std::vector<std::string> planned_names, expected_names;
        for (const attn::planned_stage& s : planned) planned_names.emplace_back(attn::info_of(s.id).name);
        for (const auto& [name, stage] : c.at("stages").items()) expected_names.push_back(name);
        CHECK(planned_names == expected_names);

        for (const attn::planned_stage& s : planned) {
            const std::string stage_name(attn::info_of(s.id).name);
            if (!c.at("stages").contains(stage_name)) continue;
            const auto& expected_stage = c.at("stages").at(stage_name);
            CHECK(s.tensors.size() == expected_stage.size());
            for (const attn::planned_tensor& t : s.tensors) {
                const std::string tensor_path = stage_name + "." + t.name;
                CAPTURE(tensor_path);
                REQUIRE(expected_stage.contains(t.name));
                const auto& expected = expected_stage.at(t.name);
                CHECK(nlohmann::json(t.layout.shape) == expected.at("shape"));
                CHECK(nlohmann::json(t.layout.strides) == expected.at("strides"));
                CHECK(attn::is_contiguous(t.layout) == expected.at("contiguous").get<bool>());
                const std::string storage = expected.at("storage").is_null() ? "" : expected.at("storage").get<std::string>();
                CHECK(t.view_of == storage);
            }
        }
    }
}

TEST_CASE("the planned layouts are those of the tensors the run computes") {
    for (const auto& c : strides_fixture::cases()) {
        const std::string case_name = c.at("name").get<std::string>();
        CAPTURE(case_name);
        const attn::trace run = strides_fixture::run(c);
        const std::vector<attn::planned_stage> planned = attn::plan_stage_layouts(run.cfg);
        REQUIRE(planned.size() == run.stages.size());
        for (std::size_t i = 0; i < planned.size(); ++i) {
            const attn::stage& computed = run.stages[i];
            CHECK(planned[i].id == computed.info->id);
            REQUIRE(planned[i].tensors.size() == computed.tensors.size());
            for (std::size_t k = 0; k < computed.tensors.size(); ++k) {
                const attn::planned_tensor& p = planned[i].tensors[k];
                const attn::tensor& t = computed.tensors[k];
                const std::string tensor_path = std::string(computed.name()) + "." + t.name;
                CAPTURE(tensor_path);
                CHECK(p.name == t.name);
                CHECK(p.dims == t.dims);
                CHECK(p.type == t.type);
                CHECK(p.layout.strides == t.strides);
                CHECK(p.view_of == t.view_of);
            }
        }
    }
}

TEST_CASE("concat is a copy of merge when merge is not contiguous, else a view of context") {
    attn::config c;
    c.batch = 2, c.seq = 5, c.kv_seq = 5, c.d_model = 8, c.heads = 4;
    const auto concat_of = [](const attn::config& cfg) { return attn::plan_stage_layouts(cfg).back(); };
    attn::planned_stage last = concat_of(c);
    REQUIRE(last.id == attn::stage_id::output);
    c.out_proj = false;
    last = concat_of(c);
    REQUIRE(last.id == attn::stage_id::concat);
    CHECK(last.tensors[0].copy_of == "merge.context");
    CHECK(last.tensors[0].view_of.empty());
    c.heads = 1;
    last = concat_of(c);
    CHECK(last.tensors[0].copy_of.empty());
    CHECK(last.tensors[0].view_of == "context.context");
}

TEST_CASE("a sequence of 100000 is planned without computing anything") {
    attn::config c;
    c.seq = c.kv_seq = 100000;
    c.heads = 4;
    const std::vector<attn::planned_stage> planned = attn::plan_stage_layouts(c);
    const attn::planned_stage& scores = planned[5];
    REQUIRE(scores.id == attn::stage_id::scores);
    CHECK(scores.tensors[0].layout.shape == attn::tensor_shape{1, 4, 100000, 100000});
    CHECK(scores.tensors[0].layout.strides == attn::tensor_strides{40000000000, 10000000000, 100000, 1});
}

TEST_CASE("rope's planned q and k are the computed ones: k [B,G,Sq,dk] in a decoding step, [B,G,Sk,dk] without") {
    for (const std::int64_t past : {0, 3}) {
        attn::config c;
        c.seq = 2, c.past = past, c.kv_seq = 2 + past, c.heads = 4, c.kv_heads = 2, c.d_model = c.d_in = c.d_kv_in = 16;
        c.pos = attn::position_encoding::rope;
        attn::validate(c);
        CAPTURE(past);
        const attn::trace computed = run(c);
        for (const attn::planned_stage& p : attn::plan_stage_layouts(c)) {
            if (p.id != attn::stage_id::rope) continue;
            const attn::stage& rope = *computed.find("rope");
            REQUIRE(p.tensors.size() == rope.tensors.size());
            for (std::size_t k = 0; k < p.tensors.size(); ++k) {
                CAPTURE(p.tensors[k].name);
                CHECK(p.tensors[k].dims == rope.tensors[k].dims);
                CHECK(std::vector<std::size_t>(p.tensors[k].layout.shape.begin(), p.tensors[k].layout.shape.end()) ==
                      std::vector<std::size_t>(rope.tensors[k].values.shape().begin(), rope.tensors[k].values.shape().end()));
                CHECK(p.tensors[k].layout.strides == rope.tensors[k].strides);
            }
        }
    }
}

}  // TEST_SUITE("stage_layouts")
