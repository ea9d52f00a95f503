// trace: the stage tables and their lookups (by name, by number, by tensor name),
// as `--stage` uses them. The tensor table is checked against CLI.md's stage table
// written out here, and against what compute_trace actually holds.
#include <algorithm>
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
    CHECK(attn::find_stage_info(18)->name == "cache");
    CHECK(attn::find_stage_info(20)->name == "repeat_kv");
    CHECK(attn::find_stage_info(23)->name == "flash");
    CHECK(attn::find_stage_info(24)->name == "norm");
    CHECK(attn::find_stage_info(25)->name == "embed");
    CHECK(attn::find_stage_info(26) == nullptr);
    CHECK(attn::find_stage_info(-3) == nullptr);
    for (const auto& info : attn::stage_table) {
        CAPTURE(info.name);
        CHECK(attn::find_stage_info(info.step) == &info);
        CHECK(attn::find_stage_info(info.name) == &info);
    }
}

TEST_CASE("stage_table: each row's id is its place, CLI.md's fifteen keep steps 1-15 in order, later stages number on from 16") {
    REQUIRE(attn::stage_count == attn::stage_table.size());
    int cli_steps = 0;
    std::vector<int> later;
    for (std::size_t i = 0; i < attn::stage_table.size(); ++i) {
        CAPTURE(i);
        CHECK(static_cast<std::size_t>(attn::stage_table[i].id) == i);
        const int step = attn::stage_table[i].step;
        if (step <= 15) CHECK(step == ++cli_steps);
        else later.push_back(step);
        CHECK_FALSE(attn::stage_table[i].tensors[0].empty());
    }
    CHECK(cli_steps == 15);
    std::sort(later.begin(), later.end());
    CHECK(later == std::vector<int>{16, 17, 18, 19, 20, 21, 22, 23, 24, 25});  // each number once, none skipped
}

TEST_CASE("stage_table's tensors are CLI.md's tensors column") {
    const auto of = [](const char* stage) { return info_tensor_names(*attn::find_stage_info(stage)); };
    CHECK(of("input") == names{"x", "x_kv"});
    CHECK(of("params") == names{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"});
    CHECK(of("positions") == names{"pe", "x", "pe_kv", "x_kv"});
    CHECK(of("projections") == names{"q", "k", "v"});
    CHECK(of("view") == names{"q", "k", "v"});
    CHECK(of("transpose") == names{"q", "k", "v"});
    CHECK(of("rope") == names{"cos", "sin", "q", "k"});
    CHECK(of("cache") == names{"k", "v"});
    CHECK(of("append") == names{"k", "v"});
    CHECK(of("repeat_kv") == names{"k", "v"});
    CHECK(of("scores") == names{"scores"});
    CHECK(of("scaled") == names{"scaled"});
    CHECK(of("alibi") == names{"bias"});
    CHECK(of("biased") == names{"biased"});
    CHECK(of("mask") == names{"mask"});
    CHECK(of("masked") == names{"masked"});
    CHECK(of("softmax") == names{"weights"});
    CHECK(of("dropout") == names{"weights", "keep"});
    CHECK(of("context") == names{"context"});
    CHECK(of("merge") == names{"context"});
    CHECK(of("concat") == names{"concat"});
    CHECK(of("output") == names{"out"});
    CHECK(of("flash") == names{"m", "l", "rescale", "acc", "context"});
}

TEST_CASE("stages_holding: the stages that hold a tensor, in stage order") {
    CHECK(info_stage_names(attn::stages_holding("weights")) == names{"softmax", "dropout"});
    CHECK(info_stage_names(attn::stages_holding("q")) == names{"projections", "view", "transpose", "rope"});
    CHECK(info_stage_names(attn::stages_holding("context")) == names{"context", "flash", "merge"});
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
    attn::config flash = c;  // flash refuses dropout in training: a run of its own
    flash.dropout.train = false;
    flash.flash_block = 2;
    attn::config decoding = flash;  // a decoding step with grouped heads and rope: rope, cache, append, repeat_kv
    decoding.flash_block = 0;
    decoding.past = 2;
    decoding.kv_seq = decoding.seq + 2;
    decoding.d_kv_in = decoding.d_in;
    decoding.kv_heads = 1;
    decoding.pos = attn::position_encoding::rope;
    decoding.norm = attn::norm_kind::layer_norm;  // a model layer's norm (weight 1, bias 0 when drawn)
    attn::config alibi = decoding;  // and with alibi and flash: alibi, biased, and flash's bias
    alibi.pos = attn::position_encoding::alibi;
    alibi.norm = attn::norm_kind::none;
    alibi.flash_block = 2;
    attn::config tokens;  // layer 0 of a BERT-like model from token ids: embed with token, position, token_type
    tokens.seq = tokens.kv_seq = 3;
    tokens.d_model = tokens.d_in = tokens.d_kv_in = 4;
    tokens.heads = 2;
    tokens.tokens = {5, 1, 2};
    tokens.model_arch = "bert";
    tokens.norm = attn::norm_kind::layer_norm;
    attn::given_inputs from_tokens;
    from_tokens.embed = attn::embeddings{xt::xarray<float>(xt::ones<float>({1, 3, 4})),
                                         xt::xarray<float>(xt::ones<float>({3, 4})), xt::xarray<float>(xt::ones<float>({3, 4}))};
    from_tokens.x = attn::embed_sum(*from_tokens.embed);
    CHECK(from_tokens.x->at(0, 2, 3) == 3.0f);
    std::vector<bool> seen(attn::stage_table.size(), false);
    for (const attn::config& run : {c, flash, decoding, alibi, tokens}) {
        attn::validate(run);
        const attn::trace t = attn::compute_trace(run, attn::draw_inputs(run, run.tokens.empty() ? attn::given_inputs{} : from_tokens));
        std::size_t previous = 0;
        for (std::size_t i = 0; i < t.stages.size(); ++i) {
            const attn::stage& s = t.stages[i];
            CAPTURE(s.name());
            const auto at = static_cast<std::size_t>(s.id());
            CHECK((i == 0 || at > previous));  // in the table's order
            previous = at;
            seen[at] = true;
            names held;
            for (const auto& tensor : s.tensors) held.push_back(tensor.name);
            const names listed = info_tensor_names(attn::stage_table[at]);
            if (!run.cross() && s.id() == attn::stage_id::input)
                CHECK(held == names{"x"});  // self-attention: x_kv is x itself, not held twice
            else
                CHECK(held == listed);
        }
    }
    CHECK(std::find(seen.begin(), seen.end(), false) == seen.end());  // every stage is present in one of them
}

}  // TEST_SUITE("trace")
