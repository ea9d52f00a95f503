// trace: the stage tables and their lookups (by name, by number, by tensor name),
// as `--stage` uses them. The tensor table is checked against CLI.md's stage table
// written out here, and against what compute_trace actually holds.
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"

namespace {

using names = std::vector<std::string>;

names info_stage_names(const std::vector<const attn::stage_info*>& infos) {
    names out;
    for (const attn::stage_info* info : infos) out.emplace_back(info->name);
    return out;
}

names info_tensor_names(const attn::stage_info& entry) {
    names out;
    for (std::string_view name : entry.tensors)
        if (!name.empty()) out.emplace_back(name);
    return out;
}

}  // namespace

TEST_SUITE("trace") {

TEST_CASE("find_stage_info by number: CLI.md's numbers 1..15, then issue 23's, nothing outside them") {
    CHECK(attn::find_stage_info(1)->name == "input");
    CHECK(attn::find_stage_info(6)->name == "scores");
    CHECK(attn::find_stage_info(10)->name == "softmax");
    CHECK(attn::find_stage_info(11)->name == "dropout");
    CHECK(attn::find_stage_info(15)->name == "output");
    CHECK(attn::find_stage_info(0) == nullptr);
    CHECK(attn::find_stage_info(16)->name == "positions");
    CHECK(attn::find_stage_info(17)->name == "rope");
    CHECK(attn::find_stage_info(21)->name == "alibi");
    CHECK(attn::find_stage_info(22)->name == "biased");
    CHECK(attn::find_stage_info(18) == nullptr);  // cache, append, repeat_kv, flash: not on this branch
    CHECK(attn::find_stage_info(23) == nullptr);
    CHECK(attn::find_stage_info(-3) == nullptr);
    for (const auto& info : attn::stage_table) {
        CAPTURE(info.name);
        CHECK(attn::find_stage_info(info.step) == &info);
        CHECK(attn::find_stage_info(info.name) == &info);
    }
}

TEST_CASE("stage_table: each row's id is its place, every stage holds a tensor, CLI.md's steps in their order") {
    REQUIRE(attn::stage_count == attn::stage_table.size());
    int cli_step = 0;
    for (std::size_t i = 0; i < attn::stage_table.size(); ++i) {
        CAPTURE(i);
        CHECK(static_cast<std::size_t>(attn::stage_table[i].id) == i);
        if (attn::stage_table[i].step <= 15) CHECK(attn::stage_table[i].step == ++cli_step);  // 16 on: where computed
        CHECK_FALSE(attn::stage_table[i].tensors[0].empty());
    }
    CHECK(cli_step == 15);
}

TEST_CASE("stage_table's tensors are CLI.md's tensors column") {
    using attn::info_of;
    using attn::stage_id;
    CHECK(info_tensor_names(info_of(stage_id::input)) == names{"x", "x_kv"});
    CHECK(info_tensor_names(info_of(stage_id::params)) == names{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"});
    CHECK(info_tensor_names(info_of(stage_id::positions)) == names{"pe", "x", "pe_kv", "x_kv"});
    CHECK(info_tensor_names(info_of(stage_id::projections)) == names{"q", "k", "v"});
    CHECK(info_tensor_names(info_of(stage_id::view)) == names{"q", "k", "v"});
    CHECK(info_tensor_names(info_of(stage_id::transpose)) == names{"q", "k", "v"});
    CHECK(info_tensor_names(info_of(stage_id::rope)) == names{"cos", "sin", "q", "k"});
    CHECK(info_tensor_names(info_of(stage_id::scores)) == names{"scores"});
    CHECK(info_tensor_names(info_of(stage_id::scaled)) == names{"scaled"});
    CHECK(info_tensor_names(info_of(stage_id::alibi)) == names{"bias"});
    CHECK(info_tensor_names(info_of(stage_id::biased)) == names{"biased"});
    CHECK(info_tensor_names(info_of(stage_id::mask)) == names{"mask"});
    CHECK(info_tensor_names(info_of(stage_id::masked)) == names{"masked"});
    CHECK(info_tensor_names(info_of(stage_id::softmax)) == names{"weights"});
    CHECK(info_tensor_names(info_of(stage_id::dropout)) == names{"weights", "keep"});
    CHECK(info_tensor_names(info_of(stage_id::context)) == names{"context"});
    CHECK(info_tensor_names(info_of(stage_id::merge)) == names{"context"});
    CHECK(info_tensor_names(info_of(stage_id::concat)) == names{"concat"});
    CHECK(info_tensor_names(info_of(stage_id::output)) == names{"out"});
}

TEST_CASE("stages_holding: the stages that hold a tensor, in stage order") {
    CHECK(info_stage_names(attn::stages_holding("weights")) == names{"softmax", "dropout"});
    CHECK(info_stage_names(attn::stages_holding("q")) == names{"projections", "view", "transpose", "rope"});
    CHECK(info_stage_names(attn::stages_holding("context")) == names{"context", "merge"});
    CHECK(info_stage_names(attn::stages_holding("keep")) == names{"dropout"});
    CHECK(info_stage_names(attn::stages_holding("x_kv")) == names{"input", "positions"});
    CHECK(info_stage_names(attn::stages_holding("b_o")) == names{"params"});
    CHECK(info_stage_names(attn::stages_holding("out")) == names{"output"});
    SUBCASE("a name no stage holds, or none") {
        CHECK(attn::stages_holding("softmax").empty());
        CHECK(attn::stages_holding("Weights").empty());
        CHECK(attn::stages_holding("").empty());
    }
}

TEST_CASE("every tensor compute_trace holds is in stage_table, in the table's order") {
    attn::config c;
    c.batch = 1;
    c.seq = 2;
    c.kv_seq = 3;  // cross-attention: the input holds x_kv too
    c.d_model = c.d_in = 4;
    c.d_kv_in = 6;
    c.heads = 2;
    c.mask.causal = true;
    c.dropout.p = 0.5;
    c.dropout.train = true;
    c.pos = attn::position_encoding::sinusoidal;  // positions with pe_kv and x_kv
    attn::validate(c);
    const attn::trace t = attn::compute_trace(c, attn::draw_inputs(c));
    REQUIRE(t.stages.size() == attn::stage_table.size() - 3);  // every stage but rope, alibi, biased (one --pos a run)
    for (std::size_t i = 0; i < t.stages.size(); ++i) {
        const attn::stage& s = t.stages[i];
        CAPTURE(s.name());
        if (i > 0) CHECK(t.stages[i - 1].info->id < s.info->id);
        names held;
        for (const auto& tensor : s.tensors) held.push_back(tensor.name);
        CHECK(held == info_tensor_names(*s.info));
    }
}

}  // TEST_SUITE("trace")
