// trace: the stage tables and their lookups (by name, by number, by tensor name),
// as `--stage` uses them. The tensor table is checked against CLI.md's stage table
// written out here, and against what compute_trace actually holds.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
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

/// The step written `text` ("5a"), which must parse.
attn::stage_step step(const char* text) {
    const std::optional<attn::stage_step> s = attn::parse_step(text);
    REQUIRE(s.has_value());
    return *s;
}

TEST_CASE("find_stage_info by number: CLI.md's 1..15, 0 embed, the stages added since lettered after the one before") {
    CHECK(attn::find_stage_info(step("1"))->name == "input");
    CHECK(attn::find_stage_info(step("6"))->name == "scores");
    CHECK(attn::find_stage_info(step("10"))->name == "softmax");
    CHECK(attn::find_stage_info(step("11"))->name == "dropout");
    CHECK(attn::find_stage_info(step("15"))->name == "output");
    CHECK(attn::find_stage_info(step("0"))->name == "embed");
    CHECK(attn::find_stage_info(step("2a"))->name == "norm");
    CHECK(attn::find_stage_info(step("2b"))->name == "positions");
    CHECK(attn::find_stage_info(step("5a"))->name == "rope");
    CHECK(attn::find_stage_info(step("5b"))->name == "cache");
    CHECK(attn::find_stage_info(step("5c"))->name == "append");
    CHECK(attn::find_stage_info(step("5d"))->name == "repeat_kv");
    CHECK(attn::find_stage_info(step("7a"))->name == "alibi");
    CHECK(attn::find_stage_info(step("7b"))->name == "biased");
    CHECK(attn::find_stage_info(step("12a"))->name == "flash");
    CHECK(attn::find_stage_info(step("16")) == nullptr);
    CHECK(attn::find_stage_info(step("5e")) == nullptr);
    CHECK(attn::find_stage_info(step("010"))->name == "softmax");
    for (const char* bad : {"", "a", "5A", "5ab", "-3", "1 ", "1000"}) {
        CAPTURE(bad);
        CHECK_FALSE(attn::parse_step(bad).has_value());
    }
    for (const auto& info : attn::stage_table) {
        CAPTURE(info.name);
        CHECK(attn::find_stage_info(info.step) == &info);
        CHECK(attn::find_stage_info(info.name) == &info);
        CHECK(attn::parse_step(info.step.text()) == info.step);
    }
}

TEST_CASE("the numbers the added stages had before they were lettered: 16 positions ... 25 embed") {
    const std::pair<int, const char*> former[] = {{16, "positions"}, {17, "rope"},   {18, "cache"}, {19, "append"},
                                                  {20, "repeat_kv"}, {21, "alibi"},  {22, "biased"}, {23, "flash"},
                                                  {24, "norm"},      {25, "embed"}};
    for (const auto& entry : former) {  // not a structured binding: CAPTURE's lambda cannot take one in clang 14
        const int number = entry.first;
        CAPTURE(number);
        REQUIRE(attn::find_former_step(number) != nullptr);
        CHECK(attn::find_former_step(number)->name == entry.second);
        CHECK(attn::find_former_step(number)->step < attn::stage_step{13});  // 0, or lettered from 2a to 12a
    }
    CHECK(attn::find_former_step(15) == nullptr);
    CHECK(attn::find_former_step(26) == nullptr);
}

TEST_CASE("stage_table: each row's id is its place; CLI.md's fifteen keep 1-15; the numbers increase down the table") {
    REQUIRE(attn::stage_count == attn::stage_table.size());
    int classic = 0;
    std::vector<std::string> lettered;
    for (std::size_t i = 0; i < attn::stage_table.size(); ++i) {
        CAPTURE(i);
        const attn::stage_info& info = attn::stage_table[i];
        CHECK(static_cast<std::size_t>(info.id) == i);
        if (i > 0) CHECK(attn::stage_table[i - 1].step < info.step);  // what a run prints increases down the page
        if (info.step.plain() && info.step.number > 0) CHECK(info.step.number == ++classic);
        if (!info.step.plain()) lettered.push_back(info.step.text());
        CHECK_FALSE(info.tensors[0].empty());
    }
    CHECK(classic == 15);
    CHECK(attn::info_of(attn::stage_id::embed).step.text() == "0");
    CHECK(lettered == std::vector<std::string>{"2a", "2b", "5a", "5b", "5c", "5d", "7a", "7b", "12a", "15a", "15b", "15c", "15d"});
    CHECK(attn::stage_numbers_list() == "0 to 15, 2a, 2b, 5a to 5d, 7a, 7b, 12a, 15a to 15d");
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
    CHECK(info_stage_names(attn::stages_holding("out")) == names{"output", "mlp"});
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
    decoding.block.norm = attn::norm_kind::layer_norm;  // and its block after attention, gated: residual ... block
    decoding.block.act = attn::activation::silu;
    decoding.block.gated = true;
    decoding.block.width = 6;
    attn::config alibi = decoding;  // and with alibi and flash: alibi, biased, and flash's bias
    alibi.pos = attn::position_encoding::alibi;
    alibi.norm = attn::norm_kind::none;
    alibi.block = attn::block_spec{};
    alibi.flash_block = 2;
    attn::config tokens;  // layer 0 of a BERT-like model from token ids: embed with token, position, token_type
    tokens.seq = tokens.kv_seq = 3;
    tokens.d_model = tokens.d_in = tokens.d_kv_in = 4;
    tokens.heads = 2;
    tokens.sources.tokens = {5, 1, 2};
    tokens.sources.model_arch = "bert";
    tokens.norm = attn::norm_kind::layer_norm;
    tokens.block.norm = attn::norm_kind::layer_norm;  // BERT's post-norm block: block.sum
    tokens.block.post_norm = true;
    tokens.block.act = attn::activation::gelu_erf;
    tokens.block.width = 8;
    attn::given_inputs from_tokens;
    from_tokens.embed = attn::embeddings{xt::xarray<float>(xt::ones<float>({1, 3, 4})),
                                         xt::xarray<float>(xt::ones<float>({3, 4})), xt::xarray<float>(xt::ones<float>({3, 4}))};
    from_tokens.x = attn::embed_sum(*from_tokens.embed);
    CHECK(from_tokens.x->at(0, 2, 3) == 3.0f);
    std::vector<bool> seen(attn::stage_table.size(), false);
    std::map<std::size_t, std::set<std::string>> held_somewhere;  // the block's stages: their tensors over the runs
    for (const attn::config& run : {c, flash, decoding, alibi, tokens}) {
        attn::validate(run);
        const attn::trace t = attn::compute_trace(run, attn::draw_inputs(run, run.sources.tokens.empty() ? attn::given_inputs{} : from_tokens));
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
            if (!run.cross() && s.id() == attn::stage_id::input) {
                CHECK(held == names{"x"});  // self-attention: x_kv is x itself, not held twice
            } else if (at >= static_cast<std::size_t>(attn::stage_id::residual)) {
                // a block holds what its model has (mlp.gate when gated, block.sum when post-norm),
                // in the table's order; across the runs, every tensor listed
                std::size_t next = 0;
                for (const auto& name : held) {
                    while (next < listed.size() && listed[next] != name) ++next;
                    CHECK_MESSAGE(next < listed.size(), name << " is not listed, or out of order");
                    held_somewhere[at].insert(name);
                }
            } else {
                CHECK(held == listed);
            }
        }
    }
    CHECK(std::find(seen.begin(), seen.end(), false) == seen.end());  // every stage is present in one of them
    for (const auto& [at, held] : held_somewhere) {
        const names listed = info_tensor_names(attn::stage_table[at]);
        CHECK(held == std::set<std::string>(listed.begin(), listed.end()));
    }
}

}  // TEST_SUITE("trace")
