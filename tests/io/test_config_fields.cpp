// The config's keys, listed once (config_fields.hpp): the committed schema, the flags and
// the reader agree with the list, and every config written reads back as itself.
#include <fstream>
#include <set>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/compute/config.hpp"
#include "attn/io/config_fields.hpp"
#include "attn/io/replay.hpp"
#include "run_flags.hpp"

namespace {

using ordered_json = nlohmann::ordered_json;

/// Configs that between them write every key.
std::vector<attn::config> configs_writing_every_key() {
    attn::config plain;
    attn::config masked;
    masked.mask.causal = masked.mask.padding = masked.mask.window = masked.mask.random = true;
    masked.mask.lengths = {3};
    masked.mask.window_size = 1;
    masked.mask.random_seed = 7;
    masked.mask.random_keep = 0.25;
    masked.mask.causal_align = attn::causal_alignment::lower_right;
    masked.kv_seq = 6;
    masked.mask.from_file = masked.mask.key_padding = true;
    masked.mask.file_convention = attn::mask_convention::additive;
    masked.fill = -1e9f;
    masked.fill_text = "-1e9";
    masked.mistake = attn::mistake::softmax_axis;
    masked.dropout = {0.5, true, 3};
    masked.sources.x_from_file = masked.sources.x_kv_from_file = masked.sources.params_from_file = true;
    attn::config model;
    model.safe_softmax = true;
    model.pos = attn::position_encoding::rope;
    model.rope_base = 500000.0;
    model.rope_style = attn::rope_pairing::interleaved;
    model.rope_scaling.type = attn::rope_scaling_spec::kind::llama3;
    model.rope_scaling.factor = 8.0;
    model.past = 2;
    model.kv_seq = 6;
    model.heads = 4;
    model.kv_heads = 2;
    model.flash_block = 2;
    model.sources.model = "llama layer 0 of m.safetensors";
    model.out_bias = false;
    model.block.norm = attn::norm_kind::rms_norm;
    model.block.act = attn::activation::silu;
    model.block.gated = true;
    model.block.width = 32;
    attn::config tokens;
    tokens.norm = attn::norm_kind::layer_norm;
    tokens.sources.tokens = {464, 2068};
    tokens.sources.token_labels = {"The", "Ġquick"};
    attn::config projections;  // --q --k --v
    projections.sources.from_projections = true;
    return {plain, masked, model, tokens, projections};
}

}  // namespace

TEST_CASE("the committed trace schema's config is the one the list of keys makes") {
    std::ifstream file(ATTN_SCHEMA_FILE);
    REQUIRE(file);
    const nlohmann::json committed = nlohmann::json::parse(file).at("properties").at("config");
    const nlohmann::json made = nlohmann::json::parse(attn::config_schema().dump());
    if (committed != made)  // what to commit: the properties that differ
        for (const auto& property : made.at("properties").items())  // not a structured binding: clang 14 and doctest's INFO
            CHECK_MESSAGE(committed.at("properties").value(property.key(), nlohmann::json()) == property.value(),
                          (property.key() + " should be " + property.value().dump()));
    CHECK(committed.at("required") == made.at("required"));
    CHECK(committed.at("properties").size() == made.at("properties").size());
}

TEST_CASE("every key is written by some config, and only the list's keys are written") {
    std::set<std::string> listed, written;
    for (const attn::config_field& f : attn::config_fields()) listed.insert(f.key);
    for (const attn::config& c : configs_writing_every_key()) {
        const ordered_json j = attn::config_to_json(c);
        for (const auto& item : j.items()) written.insert(item.key());
    }
    CHECK(written == listed);
    // the required keys are in every config
    for (const attn::config_field& f : attn::config_fields())
        if (f.required) CHECK_MESSAGE(attn::config_to_json(attn::config{}).contains(f.key), f.key);
}

TEST_CASE("a written config reads back as itself, key for key") {
    for (attn::config c : configs_writing_every_key()) {
        if (!c.sources.tokens.empty() || c.norm != attn::norm_kind::none || c.block.on()) continue;  // runs that do not replay
        const ordered_json written = attn::config_to_json(c);
        CAPTURE(written.dump());
        const attn::config read = attn::config_from_json(nlohmann::json::parse(written.dump()), "--from t.json");
        CHECK(attn::config_to_json(read).dump() == written.dump());
    }
}

TEST_CASE("a key left out reads as config{}'s value, its default") {
    ordered_json required = ordered_json::object();
    const ordered_json defaults = attn::config_to_json(attn::config{});
    for (const attn::config_field& f : attn::config_fields())
        if (f.required) required[f.key] = defaults.at(f.key);
    const attn::config read = attn::config_from_json(nlohmann::json::parse(required.dump()), "--from t.json");
    CHECK(attn::config_to_json(read).dump() == defaults.dump());
}

TEST_CASE("each key's flag is a flag of attn trace") {
    CLI::App trace;
    attn_app::run_options o;
    attn_app::add_run_flags(&trace, o);
    for (const attn::config_field& f : attn::config_fields()) {
        CAPTURE(f.key);
        if (*f.flag == '\0') CHECK(std::string(f.key) == "head_dim");  // the only key no flag sets
        else CHECK(trace.get_option_no_throw(f.flag) != nullptr);
        if (f.take != nullptr) CHECK(*f.flag != '\0');
    }
}
