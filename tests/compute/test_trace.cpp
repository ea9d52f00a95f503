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

TEST_CASE("find_stage_info by number: CLI.md's numbers 1..15, nothing outside them") {
    CHECK(attn::find_stage_info(1)->name == "input");
    CHECK(attn::find_stage_info(6)->name == "scores");
    CHECK(attn::find_stage_info(10)->name == "softmax");
    CHECK(attn::find_stage_info(11)->name == "dropout");
    CHECK(attn::find_stage_info(15)->name == "output");
    CHECK(attn::find_stage_info(0) == nullptr);
    CHECK(attn::find_stage_info(16) == nullptr);
    CHECK(attn::find_stage_info(-3) == nullptr);
    for (const auto& info : attn::stage_table) {
        CAPTURE(info.name);
        CHECK(attn::find_stage_info(info.step) == &info);
        CHECK(attn::find_stage_info(info.name) == &info);
    }
}

TEST_CASE("stage_table: each row's id is its place, every stage holds a tensor") {
    REQUIRE(attn::stage_count == attn::stage_table.size());
    for (std::size_t i = 0; i < attn::stage_table.size(); ++i) {
        CAPTURE(i);
        CHECK(static_cast<std::size_t>(attn::stage_table[i].id) == i);
        // CLI.md's 1..15 in their order, with the decoding step's and grouped heads' 18..20 after transpose
        const int step = i < 5 ? static_cast<int>(i) + 1 : i < 8 ? static_cast<int>(i) + 13 : static_cast<int>(i) - 2;
        CHECK(attn::stage_table[i].step == step);
        CHECK_FALSE(attn::stage_table[i].tensors[0].empty());
    }
}

TEST_CASE("stage_table's tensors are CLI.md's tensors column") {
    const auto of = [](const char* stage) { return info_tensor_names(*attn::find_stage_info(stage)); };
    CHECK(of("input") == names{"x", "x_kv"});
    CHECK(of("params") == names{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"});
    CHECK(of("projections") == names{"q", "k", "v"});
    CHECK(of("view") == names{"q", "k", "v"});
    CHECK(of("transpose") == names{"q", "k", "v"});
    CHECK(of("cache") == names{"k", "v"});
    CHECK(of("append") == names{"k", "v"});
    CHECK(of("repeat_kv") == names{"k", "v"});
    CHECK(of("scores") == names{"scores"});
    CHECK(of("scaled") == names{"scaled"});
    CHECK(of("mask") == names{"mask"});
    CHECK(of("masked") == names{"masked"});
    CHECK(of("softmax") == names{"weights"});
    CHECK(of("dropout") == names{"weights", "keep"});
    CHECK(of("context") == names{"context"});
    CHECK(of("merge") == names{"context"});
    CHECK(of("concat") == names{"concat"});
    CHECK(of("output") == names{"out"});
}

TEST_CASE("stages_holding: the stages that hold a tensor, in stage order") {
    CHECK(info_stage_names(attn::stages_holding("weights")) == names{"softmax", "dropout"});
    CHECK(info_stage_names(attn::stages_holding("q")) == names{"projections", "view", "transpose"});
    CHECK(info_stage_names(attn::stages_holding("context")) == names{"context", "merge"});
    CHECK(info_stage_names(attn::stages_holding("keep")) == names{"dropout"});
    CHECK(info_stage_names(attn::stages_holding("x_kv")) == names{"input"});
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
    attn::validate(c);
    const attn::trace t = attn::compute_trace(c, attn::draw_inputs(c));
    REQUIRE(t.stages.size() == attn::stage_table.size() - 3);  // every stage but cache, append and repeat_kv
    for (std::size_t i = 0; i < t.stages.size(); ++i) {
        const attn::stage& s = t.stages[i];
        CAPTURE(s.name());
        names held;
        for (const auto& tensor : s.tensors) held.push_back(tensor.name);
        CHECK(held == info_tensor_names(*attn::find_stage_info(s.name())));
        if (i > 0) CHECK(attn::find_stage_info(t.stages[i - 1].name())->id < attn::find_stage_info(s.name())->id);
    }
}

}  // TEST_SUITE("trace")
