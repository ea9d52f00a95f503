// make_plan (attn trace --shapes, the memory estimate, the work): every stage tensor's shape, strides and shared
// memory from the sizes alone, against PyTorch's for the runs of tests/reference/strides.json
// (make_strides_fixtures.py, torch 1.13), and against the tensors compute_stages makes.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/io/file_inputs.hpp"

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/compute/trace.hpp"
#include "support.hpp"

namespace {

/// make_plan(run.cfg).stages holds the run's stages and, tensor by tensor, their names,
/// dims, types, shapes, strides and the tensors they are views of.
void check_plan_is_run(const attn::trace& run) {
    const std::vector<attn::planned_stage> planned = attn::make_plan(run.cfg).stages;
    REQUIRE(planned.size() == run.stages.size());
    for (std::size_t i = 0; i < planned.size(); ++i) {
        const attn::stage& computed = run.stages[i];
        CHECK(planned[i].id == computed.info->id);
        REQUIRE(planned[i].tensors.size() == computed.tensors.size());
        for (std::size_t k = 0; k < computed.tensors.size(); ++k) {
            const attn::planned_tensor& p = planned[i].tensors[k];
            const attn::tensor& t = computed.tensors[k];
            CAPTURE(std::string(computed.name()) + "." + t.name);
            CHECK(p.name == t.name);
            CHECK(p.dims == t.dims);
            CHECK(p.type == t.type);
            CHECK(p.layout.shape == t.layout().shape);
            CHECK(p.layout.strides == t.strides);
            CHECK(p.view_of == t.view_of);
        }
    }
}

}  // namespace

TEST_SUITE("run_plan") {

TEST_CASE("the planned layouts are PyTorch's at every step, views and copies included") {
    for (const auto& c : strides_fixture::cases()) {
        const std::string case_name = c.at("name").get<std::string>();
        CAPTURE(case_name);
        const attn::trace run = strides_fixture::run(c);
        const std::vector<attn::planned_stage> planned = attn::make_plan(run.cfg).stages;

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
        check_plan_is_run(strides_fixture::run(c));
    }
}

TEST_CASE("concat is a copy of merge when merge is not contiguous, else a view of context") {
    attn::config c;
    c.batch = 2, c.seq = 5, c.kv_seq = 5, c.d_model = 8, c.heads = 4;
    const auto concat_of = [](const attn::config& cfg) { return attn::make_plan(cfg).stages.back(); };
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
    const std::vector<attn::planned_stage> planned = attn::make_plan(c).stages;
    const attn::planned_stage& scores = planned[5];
    REQUIRE(scores.id == attn::stage_id::scores);
    CHECK(scores.tensors[0].layout.shape == attn::tensor_shape{1, 4, 100000, 100000});
    CHECK(scores.tensors[0].layout.strides == attn::tensor_strides{40000000000, 10000000000, 100000, 1});
}

TEST_CASE("the planned layouts of the modern stages are those the run computes: positions, rope, cache, flash, norm") {
    attn::config step;  // a decoding step with grouped heads: N = 3, Sq = 2, G = 1 of H = 2
    step.seq = 2;
    step.past = 3;
    step.kv_seq = 5;
    step.kv_heads = 1;
    step.mask.causal = true;
    std::vector<attn::config> runs;
    for (const attn::position_encoding pos : {attn::position_encoding::rope, attn::position_encoding::alibi,
                                              attn::position_encoding::sinusoidal}) {
        attn::config c = step;
        c.pos = pos;
        runs.push_back(c);
        c.past = 0;  // and without the cache, flash beside
        c.kv_seq = c.seq;
        c.flash_block = 2;
        runs.push_back(c);
    }
    for (const attn::norm_kind norm : {attn::norm_kind::layer_norm, attn::norm_kind::rms_norm}) {  // a model's layer
        attn::config c = runs[0];
        c.norm = norm;
        c.out_bias = false;
        runs.push_back(c);
    }
    for (const attn::config& c : runs) {
        CAPTURE(attn::position_encoding_name(c.pos));
        CAPTURE(c.past);
        attn::validate(c);
        check_plan_is_run(attn::compute_trace(c, attn::draw_inputs(c)));
    }
}

TEST_CASE("the planned layouts of a model's layer 0 from --tokens are those the run computes: embed first") {
    for (const char* model : {"gpt2", "bert", "llama"}) {
        CAPTURE(model);
        const std::string dir = std::string(ATTN_REFERENCE_DIR) + "/models/" + model;
        attn::input_paths paths;
        paths.params = dir + "/model.safetensors";
        paths.tokens = {1, 2, 3};
        attn::loaded_inputs loaded = attn::load_inputs(attn::config{}, {}, paths);
        const attn::trace t = attn::compute_trace(loaded.cfg, attn::draw_inputs(loaded.cfg, std::move(loaded.given)));
        REQUIRE(t.stages.front().id() == attn::stage_id::embed);
        check_plan_is_run(t);
    }
}

TEST_CASE("each stage reads the stages of this run it is computed from: q, k and v from the last that made them") {
    attn::config c;  // a decoding step with rope, grouped heads and a causal mask
    c.seq = 2, c.past = 3, c.kv_seq = 5, c.heads = 2, c.kv_heads = 1, c.d_model = 4;
    c.pos = attn::position_encoding::rope;
    c.mask.causal = true;
    attn::validate(c);
    const attn::run_plan plan = attn::make_plan(c);
    using id = attn::stage_id;
    const auto reads = [&](id s) { return plan.find(s)->reads; };
    CHECK(reads(id::projections) == std::vector<id>{id::input, id::params});
    CHECK(reads(id::append) == std::vector<id>{id::transpose, id::rope, id::cache});  // v, k, the cache
    CHECK(reads(id::scores) == std::vector<id>{id::rope, id::repeat_kv});             // q rotated, k repeated
    CHECK(reads(id::masked) == std::vector<id>{id::scaled, id::mask});
    CHECK(reads(id::softmax) == std::vector<id>{id::masked});
    CHECK(reads(id::context) == std::vector<id>{id::repeat_kv, id::softmax});
    CHECK(plan.source_of("v", id::scores) == id::repeat_kv);
    CHECK(plan.source_of("q", id::context) == id::rope);
}

TEST_CASE("a stage instance is named by its layer and direction; a single layer's keeps the stage's name") {
    CHECK(attn::stage_instance{attn::stage_id::softmax}.name() == "softmax");
    CHECK(attn::stage_instance{attn::stage_id::softmax, 3}.name() == "layer3.softmax");
    CHECK(attn::stage_instance{attn::stage_id::softmax, -1, true}.name() == "grad.softmax");
    CHECK(attn::stage_instance{attn::stage_id::input, 0, true}.name() == "layer0.grad.input");
    for (const attn::planned_stage& s : attn::make_plan(attn::config{}).stages)
        CHECK(s.instance().name() == attn::info_of(s.id).name);
}

TEST_CASE("check_planned_layouts passes every stage a run makes, and names one that drifted from the plan") {
    attn::config c;
    c.batch = 2, c.seq = 3, c.kv_seq = 3, c.d_model = 4, c.heads = 2;
    attn::trace t = attn::compute_trace(c, attn::draw_inputs(c));
    const attn::run_plan plan = attn::make_plan(c);
    for (const attn::stage& s : t.stages) CHECK_NOTHROW(attn::check_planned_layouts(plan, s));
    attn::stage& transpose = t.stages[4];
    REQUIRE(transpose.id() == attn::stage_id::transpose);
    attn::tensor& q = transpose.tensors[0];
    q = attn::tensor(q.name, q.dims, attn::row_major_copy(q));  // contiguous, where PyTorch's is a view
    CHECK_THROWS_WITH_AS(attn::check_planned_layouts(plan, transpose),
                         "the forward pass made transpose.q with another layout than the plan's", std::logic_error);
}

}  // TEST_SUITE("run_plan")
