// prose: the teaching texts of share/attn/text. Every section of every file is read by
// some run, and every placeholder it names is filled: the runs below (every shape kind,
// mask, flag and mistake way) pass through every text function, so a section that is
// never asked for, a misspelt {name} or a value the C++ forgets fails here.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <xtensor/xbuilder.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/teach/advice.hpp"
#include "attn/teach/explain.hpp"
#include "attn/teach/mask_conventions.hpp"
#include "attn/teach/mistake_text.hpp"
#include "attn/teach/prose.hpp"
#include "attn/teach/stage_text.hpp"

namespace {

/// Every text attn writes about a run of `c`.
void say_everything(const attn::config& c) {
    for (const attn::stage_info& info : attn::stage_table) {
        const std::string_view name = info.name;
        for (const auto& line : attn::explanation_lines(attn::explain_stage(c, info.id))) CHECK(!line.text.empty());
        (void)attn::stage_absence(c, info.id);
        (void)attn::mistake_formula(c, name);
        CHECK(!attn::stage_title(c, name).empty());
    }
    (void)attn::explain_intro(c);
    (void)attn::explain_summary(c);
    (void)attn::run_summary(c);
    (void)attn::run_summary(c, /*seed_secret=*/true);
    (void)attn::mistake_warning(c);
    (void)attn::mistake_diagnosis(c);
    (void)attn::run_advice(c);
    const std::size_t B = c.batch, Sq = c.seq, Sk = c.kv_seq;
    const xt::xarray<bool> keep = xt::ones<bool>({B, std::size_t(1), Sq, Sk});
    (void)attn::describe_mask(c, c.mask.from_file || c.mask.key_padding ? &keep : nullptr);
}

using tweak = std::function<void(attn::config&)>;

/// One change to a run per entry: the inputs, the flags, each mask kind and reading, fills, dropout.
std::vector<tweak> tweaks() {
    using attn::mask_convention;
    std::vector<tweak> all{
        [](attn::config&) {},
        [](attn::config& c) { c.sources.x_from_file = c.sources.x_kv_from_file = true; },
        [](attn::config& c) { c.separate_kv = true; },
        [](attn::config& c) { c.sources.params_from_file = true; },
        [](attn::config& c) { c.sources.from_projections = true; },
        [](attn::config& c) { c.qkv_bias = false; },
        [](attn::config& c) { c.out_proj = false; },
        [](attn::config& c) { c.qkv_bias = c.out_proj = false; },
        [](attn::config& c) { c.d_in = 6; c.d_kv_in = 5; },
        [](attn::config& c) { c.mask.causal = true; },
        [](attn::config& c) { c.mask.causal = true; c.mask.causal_align = attn::causal_alignment::lower_right; },
        [](attn::config& c) { c.mask.causal = c.mask.padding = true; c.mask.lengths.assign(c.batch, 1); },
        [](attn::config& c) { c.mask.window = true; c.mask.window_size = 1; },
        [](attn::config& c) { c.mask.window = true; },
        [](attn::config& c) { c.mask.random = true; c.safe_softmax = true; },
        [](attn::config& c) { c.mask.causal = true; c.fill = -1e9f; c.fill_text = "-1e9"; },
        [](attn::config& c) { c.mask.causal = true; c.fill = -5.0f; c.safe_softmax = true; },
        [](attn::config& c) { c.safe_softmax = true; },
        [](attn::config& c) { c.pos = attn::position_encoding::rope; },
        [](attn::config& c) { c.pos = attn::position_encoding::rope; c.rope_style = attn::rope_pairing::interleaved; },
        [](attn::config& c) { c.pos = attn::position_encoding::alibi; c.mask.causal = true; },
        [](attn::config& c) { c.pos = attn::position_encoding::alibi; c.heads = 6; c.d_model = c.d_in = c.d_kv_in = 12; },
        [](attn::config& c) { c.pos = attn::position_encoding::sinusoidal; },
        // a model's own layer (model_config.hpp): each architecture's texts, its norm, its fill
        [](attn::config& c) {
            c.sources.model = "gpt2 layer 1 of m.safetensors";
            c.sources.model_arch = "gpt2";
            c.norm = attn::norm_kind::layer_norm;
            c.mask.causal = true;
            c.fill = -std::numeric_limits<float>::max();
            c.block.norm = attn::norm_kind::layer_norm;  // its block after attention
            c.block.width = 4 * c.d_model;
        },
        [](attn::config& c) {
            c.sources.model = "llama layer 0 of m.safetensors";
            c.sources.model_arch = "llama";
            c.norm = attn::norm_kind::rms_norm;
            c.mask.causal = true;
            c.fill = -std::numeric_limits<float>::max();
            c.block.norm = attn::norm_kind::rms_norm;  // SwiGLU
            c.block.act = attn::activation::silu;
            c.block.gated = true;
            c.block.bias = false;
            c.block.width = 3;
        },
        [](attn::config& c) {
            c.sources.model = "bert layer 0 of m.npz";
            c.sources.model_arch = "bert";
            c.block.norm = attn::norm_kind::layer_norm;  // post-norm
            c.block.post_norm = true;
            c.block.act = attn::activation::gelu_erf;
            c.block.width = 5;
        },
        // layer 0 from --tokens: each architecture's embed texts (the ids' count is Sq)
        [](attn::config& c) {
            c.sources.model_arch = "gpt2";
            c.norm = attn::norm_kind::layer_norm;
            c.sources.tokens.assign(std::size_t(c.seq), 3);
            c.sources.token_labels.assign(std::size_t(c.seq), "The");  // --vocab
        },
        [](attn::config& c) { c.sources.model_arch = "bert"; c.norm = attn::norm_kind::layer_norm; c.sources.tokens.assign(std::size_t(c.seq), 3); },
        [](attn::config& c) { c.sources.model_arch = "llama"; c.norm = attn::norm_kind::rms_norm; c.sources.tokens.assign(std::size_t(c.seq), 3); },
        [](attn::config& c) { c.sources.model = "mha of m.npz"; c.sources.model_arch = "mha"; c.out_bias = false; },
        [](attn::config& c) { c.dropout.p = 0.5; c.dropout.train = true; },
        [](attn::config& c) { c.dropout.p = 1.0; c.dropout.train = true; },
        [](attn::config& c) { c.dropout.p = 0.5; },
        [](attn::config& c) { c.dropout.train = true; },
        [](attn::config& c) {  // a decoding step with a KV cache (--past 2)
            c.past = 2;
            c.kv_seq = c.seq + 2;
            c.mask.causal = true;
            c.mask.causal_align = attn::causal_alignment::lower_right;
        },
        [](attn::config& c) { c.kv_heads = 1; },                       // multi-query (--kv-heads 1)
        [](attn::config& c) { c.kv_heads = 1; c.past = 1; c.kv_seq = c.seq + 1; c.sources.x_from_file = true; },
        [](attn::config& c) { c.flash_block = 2; },
        [](attn::config& c) { c.flash_block = 3; c.mask.causal = true; },
    };
    for (mask_convention m : {mask_convention::keep, mask_convention::mha, mask_convention::additive}) {
        all.push_back([m](attn::config& c) { c.mask.from_file = true; c.mask.file_convention = m; });
        all.push_back([m](attn::config& c) { c.mask.key_padding = true; c.mask.key_padding_convention = m; });
    }
    for (attn::mistake m : attn::all_mistakes())
        for (int way = 0; way < attn::mistake_variants(m); ++way)
            for (float fill : {-std::numeric_limits<float>::infinity(), 0.0f, -1e9f})
                all.push_back([m, way, fill](attn::config& c) {
                    c.mistake = m;
                    c.mistake_variant = way;
                    c.mask.causal = true;
                    c.fill = fill;
                });
    return all;
}

}  // namespace

TEST_SUITE("prose") {

TEST_CASE("an unknown section, or a placeholder without its value, is an error") {
    CHECK_THROWS_AS(attn::prose("explain.no_such_section"), std::logic_error);
    CHECK_THROWS_AS(attn::prose("mistakes.warning", {{"id", "softmax_axis"}}), std::logic_error);  // no {done}
    CHECK(attn::prose("mistakes.warning", {{"id", "q_k_swapped"}, {"done", "K·Qᵀ"}}) ==
          "--mistake q_k_swapped: K·Qᵀ, on purpose; every later stage follows from it");
}

TEST_CASE("a section's wrapped lines read as one paragraph") {
    CHECK(attn::prose("explain.mask.memory") ==
          "booleans, one byte each. masked_fill broadcasts the mask over the heads with stride 0: it is never "
          "copied per head.");
}

TEST_CASE("every section of every text is used, with every placeholder filled") {
    // sizes (Sq, Sk) and (D, H): equal and unequal lengths, one query or key, one head, dk = 1
    const std::int64_t lengths[][2] = {{1, 1}, {4, 4}, {3, 5}, {5, 3}, {1, 3}, {3, 1}};
    const std::int64_t widths[][2] = {{8, 2}, {8, 1}, {8, 8}};
    for (const tweak& change : tweaks())
        for (const auto& length : lengths)
            for (const auto& width : widths)
                for (std::int64_t batch : {1, 2}) {
                    attn::config c;
                    c.batch = batch;
                    c.seq = length[0];
                    c.kv_seq = length[1];
                    c.d_model = c.d_in = c.d_kv_in = width[0];
                    c.heads = width[1];
                    change(c);
                    CHECK_NOTHROW(say_everything(c));
                }
    const std::vector<std::string> ids = attn::prose_ids();
    CHECK(ids.size() > 100);
    for (const std::string& id : ids) CHECK_MESSAGE(attn::prose_used(id), "share/attn/text: never used: " << id);
}

}  // TEST_SUITE
