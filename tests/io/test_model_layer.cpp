// A model's own names -> attn's weights (model_layer.hpp), and what its config.json says
// (model_config.hpp), on small hand-made maps whose values say where they came from.
#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/io/model_config.hpp"
#include "attn/io/model_layer.hpp"

namespace {

using tensor_map = std::map<std::string, attn::loaded_tensor>;

/// A [rows, cols] (or [rows] when cols == 0) tensor whose element (r, c) is base + 100·r + c:
/// a value tells its place.
attn::loaded_tensor numbered(std::size_t rows, std::size_t cols, float base = 0.0f) {
    attn::loaded_tensor t;
    t.shape = cols == 0 ? std::vector<std::size_t>{rows} : std::vector<std::size_t>{rows, cols};
    t.values = xt::xarray<float>::from_shape(t.shape);
    const std::size_t width = cols == 0 ? 1 : cols;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < width; ++c) t.values.data()[r * width + c] = base + 100.0f * r + c;
    return t;
}

std::vector<std::string> keys_of(const tensor_map& m) {
    std::vector<std::string> names;
    for (const auto& entry : m) names.push_back(entry.first);
    return names;
}

/// A GPT-2 layer L of width D under `prefix`, with ln_1 and the MLP (which the mapping must skip).
void add_gpt2_layer(tensor_map& m, const std::string& prefix, int L, std::size_t D) {
    const std::string h = prefix + "h." + std::to_string(L) + ".";
    m[h + "ln_1.weight"] = numbered(D, 0, 1000.0f);
    m[h + "ln_1.bias"] = numbered(D, 0, 2000.0f);
    m[h + "attn.c_attn.weight"] = numbered(D, 3 * D);
    m[h + "attn.c_attn.bias"] = numbered(3 * D, 0, 5000.0f);
    m[h + "attn.c_proj.weight"] = numbered(D, D, 7000.0f);
    m[h + "attn.c_proj.bias"] = numbered(D, 0, 9000.0f);
    m[h + "ln_2.weight"] = numbered(D, 0, 11000.0f);
    m[h + "ln_2.bias"] = numbered(D, 0, 12000.0f);
    m[h + "mlp.c_fc.weight"] = numbered(D, 4 * D);
    m[h + "mlp.c_fc.bias"] = numbered(4 * D, 0, 13000.0f);
    m[h + "mlp.c_proj.weight"] = numbered(4 * D, D, 14000.0f);
    m[h + "mlp.c_proj.bias"] = numbered(D, 0, 15000.0f);
}

float at(const attn::loaded_tensor& t, std::size_t r, std::size_t c) { return t.values.data()[r * t.shape[1] + c]; }

std::string source_of(const attn::model_layer& layer, const std::string& weight) {
    for (const auto& s : layer.sources)
        if (s.weight == weight) return s.from;
    return "";
}

}  // namespace

TEST_SUITE("model_layer") {

TEST_CASE("detection: each architecture by its attention names, with or without a prefix") {
    SUBCASE("GPT-2 with the transformer. prefix, layers listed") {
        tensor_map m;
        add_gpt2_layer(m, "transformer.", 0, 4);
        add_gpt2_layer(m, "transformer.", 1, 4);
        m["transformer.wte.weight"] = numbered(10, 4);
        const attn::model_names n = attn::detect_model(keys_of(m), std::nullopt, "--params m.npz");
        CHECK(n.arch == attn::model_arch::gpt2);
        CHECK(n.prefix == "transformer.");
        CHECK(n.layers == std::vector<std::int64_t>{0, 1});
    }
    SUBCASE("BERT, Llama, nn.MultiheadAttention, attn's own") {
        CHECK(attn::detect_model({"bert.encoder.layer.0.attention.self.query.weight"}, std::nullopt, "--params b").arch ==
              attn::model_arch::bert);
        const attn::model_names llama = attn::detect_model(
            {"model.layers.3.self_attn.q_proj.weight", "model.layers.12.self_attn.q_proj.weight"}, std::nullopt, "--params l");
        CHECK(llama.arch == attn::model_arch::llama);
        CHECK(llama.prefix == "model.");
        CHECK(llama.layers == std::vector<std::int64_t>{3, 12});
        CHECK(attn::detect_model({"in_proj_weight", "out_proj.weight"}, std::nullopt, "--params m").arch == attn::model_arch::mha);
        CHECK(attn::detect_model({"params.w_q", "input.x"}, std::nullopt, "--params d").arch == attn::model_arch::attn);
    }
    SUBCASE("names without dots are attn's own, misspelt (its reader names them)") {
        CHECK(attn::detect_model({"wq", "bq"}, std::nullopt, "--params p.npz").arch == attn::model_arch::attn);
    }
    SUBCASE("a name that only looks like one is not: xh.0..., h.01..., layer numbers without a dot") {
        for (const char* name : {"xh.0.attn.c_attn.weight", "h.01.attn.c_attn.weight", "h.attn.c_attn.weight"})
            CHECK_THROWS_AS(attn::detect_model({name}, std::nullopt, "--params m"), attn::error);
    }
}

TEST_CASE("detection: names of no architecture list what was found and what each expects") {
    CHECK_THROWS_WITH_AS(
        attn::detect_model({"a.x", "b.x", "c.x", "d", "e", "f"}, std::nullopt, "--params m.safetensors"),
        "--params m.safetensors: no attention weights I know: found a.x, b.x, c.x, d, ... (2 more); expected GPT-2's "
        "h.L.attn.c_attn.weight, BERT's encoder.layer.L.attention.self.query.weight, Llama's "
        "layers.L.self_attn.q_proj.weight, nn.MultiheadAttention's in_proj_weight, or attn's w_q b_q w_k b_k w_v b_v w_o b_o",
        attn::error);
}

TEST_CASE("--arch forces an architecture; a file without its names is a usage error saying what it looks like") {
    tensor_map m;
    add_gpt2_layer(m, "", 0, 4);
    CHECK(attn::detect_model(keys_of(m), attn::model_arch::gpt2, "--params m.npz").arch == attn::model_arch::gpt2);
    CHECK_THROWS_WITH_AS(attn::detect_model(keys_of(m), attn::model_arch::bert, "--params m.npz"),
                         "--arch bert: m.npz has no BERT's encoder.layer.L.attention.self.query.weight; its names are "
                         "GPT-2's: give --arch gpt2 or leave --arch out",
                         attn::usage_error);
}

TEST_CASE("--layer: 0 by default, a layer the file lacks names the ones it has, none for mha") {
    const attn::model_names gpt2{attn::model_arch::gpt2, "", {0, 1, 2, 3}};
    CHECK(attn::choose_layer(gpt2, std::nullopt, "--params m") == 0);
    CHECK(attn::choose_layer(gpt2, 2, "--params m") == 2);
    CHECK_THROWS_WITH_AS(attn::choose_layer(gpt2, 7, "--params m.npz"), "--layer 7: m.npz holds GPT-2 layers 0 to 3",
                         attn::usage_error);
    const attn::model_names mha{attn::model_arch::mha, "", {}};
    CHECK(attn::choose_layer(mha, std::nullopt, "--params m") == -1);
    CHECK_THROWS_AS(attn::choose_layer(mha, 0, "--params m"), attn::usage_error);
}

TEST_CASE("GPT-2: c_attn's Conv1D [in, out] columns in thirds, transposed; c_proj transposed; ln_1 the norm") {
    constexpr std::size_t D = 4;
    tensor_map m;
    add_gpt2_layer(m, "transformer.", 0, D);
    add_gpt2_layer(m, "transformer.", 1, D);
    const attn::model_names n = attn::detect_model(keys_of(m), std::nullopt, "--params m.npz");
    const std::vector<std::string> wanted = attn::layer_tensor_names(n, 1);
    CHECK(std::find(wanted.begin(), wanted.end(), "transformer.h.1.attn.c_attn.weight") != wanted.end());
    CHECK(std::find(wanted.begin(), wanted.end(), "transformer.h.1.mlp.c_fc.weight") != wanted.end());  // the block's MLP
    CHECK(std::find(wanted.begin(), wanted.end(), "transformer.h.0.mlp.c_fc.weight") == wanted.end());  // not layer 0's
    const attn::model_layer layer = attn::map_model_layer(m, n, 1, "--params m.npz");
    // the block after attention: ln_2, c_fc [D,4D] and c_proj [4D,D] kept in Conv1D's [in, out] (torch's addmm reads them so)
    CHECK(layer.block.norm == attn::norm_kind::layer_norm);
    CHECK(layer.block.width == static_cast<std::int64_t>(4 * D));
    CHECK_FALSE(layer.block.post_norm);
    CHECK(layer.weights.at("w_up").shape == std::vector<std::size_t>{D, 4 * D});
    CHECK(layer.weights.at("w_down").shape == std::vector<std::size_t>{4 * D, D});
    CHECK(at(layer.weights.at("w_down"), 1, 2) == at(m.at("transformer.h.1.mlp.c_proj.weight"), 1, 2));
    CHECK(layer.weights.at("mlp_norm_bias").values(1) == m.at("transformer.h.1.ln_2.bias").values(1));
    const auto& w = layer.weights;
    REQUIRE(w.count("w_q") == 1);
    for (std::size_t o = 0; o < D; ++o)
        for (std::size_t i = 0; i < D; ++i) {
            CAPTURE(o);
            CAPTURE(i);
            CHECK(at(w.at("w_q"), o, i) == 100.0f * i + o);          // W[i, o]
            CHECK(at(w.at("w_k"), o, i) == 100.0f * i + D + o);      // W[i, D + o]
            CHECK(at(w.at("w_v"), o, i) == 100.0f * i + 2 * D + o);  // W[i, 2D + o]
            CHECK(at(w.at("w_o"), o, i) == 7000.0f + 100.0f * i + o);
        }
    CHECK(w.at("b_k").values(1) == 5000.0f + 100.0f * (D + 1));
    CHECK(w.at("norm_weight").values(2) == 1200.0f);
    CHECK(w.at("norm_bias").values(0) == 2000.0f);
    CHECK(layer.norm == attn::norm_kind::layer_norm);
    CHECK(source_of(layer, "w_k") == "transformer.h.1.attn.c_attn.weight[:, 4:8]ᵀ (Conv1D stores [in, out])");
    CHECK(source_of(layer, "b_v") == "transformer.h.1.attn.c_attn.bias[8:12]");
    CHECK(source_of(layer, "w_o") == "transformer.h.1.attn.c_proj.weightᵀ (Conv1D stores [in, out])");
    CHECK(layer.sources.front().weight == "w_q");
    CHECK(layer.sources[1].weight == "b_q");
}

TEST_CASE("GPT-2: a c_attn that is not [D,3D] is an error naming the tensor and the layout") {
    tensor_map m;
    add_gpt2_layer(m, "", 0, 4);
    m["h.0.attn.c_attn.weight"] = numbered(12, 4);  // [3D,D]: an nn.Linear's layout, not Conv1D's
    const attn::model_names n = attn::detect_model(keys_of(m), std::nullopt, "--params m.npz");
    CHECK_THROWS_WITH_AS(attn::map_model_layer(m, n, 0, "--params m.npz"),
                         "--params m.npz: h.0.attn.c_attn.weight has shape [12,4]; GPT-2 stores it [D,3D] (Conv1D: [in, out])",
                         attn::error);
}

TEST_CASE("Llama: q/k/v/o_proj as they are, fewer kv rows, no biases; RMSNorm's weight") {
    tensor_map m;
    const std::string a = "model.layers.0.self_attn.";
    m[a + "q_proj.weight"] = numbered(8, 8);
    m[a + "k_proj.weight"] = numbered(4, 8, 1.0f);
    m[a + "v_proj.weight"] = numbered(4, 8, 2.0f);
    m[a + "o_proj.weight"] = numbered(8, 8, 3.0f);
    m["model.layers.0.input_layernorm.weight"] = numbered(8, 0, 4.0f);
    const attn::model_names n = attn::detect_model(keys_of(m), std::nullopt, "--params l.npz");
    const attn::model_layer layer = attn::map_model_layer(m, n, 0, "--params l.npz");
    CHECK(layer.weights.at("w_k").shape == std::vector<std::size_t>{4, 8});
    CHECK(at(layer.weights.at("w_v"), 3, 5) == 2.0f + 305.0f);
    CHECK(layer.weights.count("b_q") == 0);
    CHECK(layer.weights.count("b_o") == 0);
    CHECK(layer.norm == attn::norm_kind::rms_norm);
    CHECK(source_of(layer, "w_o") == "model.layers.0.self_attn.o_proj.weight");

    SUBCASE("config.json's heads; kv heads from k_proj's rows; rope, causal, finfo.min; no b_o") {
        attn::config c;
        attn::hf_config json = attn::parse_hf_config(R"({"num_attention_heads": 4, "rms_norm_eps": 1e-05, "rope_theta": 500000.0})",
                                                     "config.json");
        attn::apply_model_layer(c, layer, json, {}, "--params l.npz");
        CHECK(c.heads == 4);
        CHECK(c.kv_heads == 2);  // 4 rows of dk = 8 / 4 = 2
        CHECK(c.pos == attn::position_encoding::rope);
        CHECK(c.rope_base == 500000.0);
        CHECK(c.norm == attn::norm_kind::rms_norm);
        CHECK(c.norm_eps == 1e-05f);
        CHECK(c.mask.causal);
        CHECK(c.fill == -3.4028234663852886e+38f);
        CHECK_FALSE(c.qkv_bias);
        CHECK_FALSE(c.out_bias);
        CHECK(c.sources.model == "llama layer 0 of l.npz");
    }
    SUBCASE("a flag against config.json is a usage error naming both") {
        attn::config c;
        const attn::hf_config json = attn::parse_hf_config(R"({"num_attention_heads": 4})", "d/config.json");
        attn::model_choice flags;
        flags.heads = 2;
        CHECK_THROWS_WITH_AS(attn::apply_model_layer(c, layer, json, flags, "--params l.npz"),
                             "--heads 2 contradicts d/config.json: num_attention_heads is 4 (leave --heads out)",
                             attn::usage_error);
        flags = {};
        flags.pos = attn::position_encoding::none;
        CHECK_THROWS_AS(attn::apply_model_layer(c, layer, json, flags, "--params l.npz"), attn::usage_error);
    }
    SUBCASE("no config.json and no --heads: say so") {
        attn::config c;
        CHECK_THROWS_WITH_AS(attn::apply_model_layer(c, layer, std::nullopt, {}, "--params l.npz"),
                             "--params l.npz holds a Llama layer, whose head count a config.json beside it would give, "
                             "and there is none: give --heads H",
                             attn::usage_error);
    }
    SUBCASE("a mask or --fill given keeps the user's") {
        attn::config c;
        attn::model_choice flags;
        flags.heads = 4;
        flags.mask_given = flags.fill_given = true;
        attn::apply_model_layer(c, layer, std::nullopt, flags, "--params l.npz");
        CHECK_FALSE(c.mask.causal);
        CHECK(std::isinf(c.fill));
    }
}

TEST_CASE("Qwen-style: q, k, v biases present are used; o_proj without one leaves b_o out") {
    tensor_map m;
    const std::string a = "model.layers.0.self_attn.";
    m[a + "q_proj.weight"] = numbered(8, 8);
    m[a + "q_proj.bias"] = numbered(8, 0, 1.0f);
    m[a + "k_proj.weight"] = numbered(4, 8);
    m[a + "k_proj.bias"] = numbered(4, 0, 2.0f);
    m[a + "v_proj.weight"] = numbered(4, 8);
    m[a + "v_proj.bias"] = numbered(4, 0, 3.0f);
    m[a + "o_proj.weight"] = numbered(8, 8);
    m["model.layers.0.input_layernorm.weight"] = numbered(8, 0);
    const attn::model_layer layer = attn::map_model_layer(m, attn::detect_model(keys_of(m), std::nullopt, "--params q"), 0, "--params q");
    CHECK(layer.weights.at("b_k").values(3) == 302.0f);
    CHECK(layer.weights.count("b_o") == 0);
    attn::config c;
    attn::model_choice flags;
    flags.heads = 4;
    attn::apply_model_layer(c, layer, std::nullopt, flags, "--params q");
    CHECK(c.qkv_bias);
    CHECK_FALSE(c.out_bias);
    CHECK(c.kv_heads == 2);

    SUBCASE("only some of the q, k, v biases: the file is damaged") {
        m.erase(a + "v_proj.bias");
        CHECK_THROWS_WITH_AS(attn::map_model_layer(m, attn::detect_model(keys_of(m), std::nullopt, "--params q"), 0, "--params q"),
                             "--params q: only some of the q, k, v biases of Llama layer 0 are there; expected all three or none",
                             attn::error);
    }
}

TEST_CASE("BERT: query/key/value/output.dense as they are, no norm, no mask") {
    tensor_map m;
    const std::string a = "encoder.layer.0.attention.";
    for (const char* part : {"self.query.", "self.key.", "self.value.", "output.dense."}) {
        m[a + part + "weight"] = numbered(4, 4, 10.0f);
        m[a + part + "bias"] = numbered(4, 0, 20.0f);
    }
    const attn::model_names n = attn::detect_model(keys_of(m), std::nullopt, "--params b.npz");
    const attn::model_layer layer = attn::map_model_layer(m, n, 0, "--params b.npz");
    CHECK(layer.norm == attn::norm_kind::none);
    CHECK(layer.weights.size() == 8);
    attn::config c;
    attn::apply_model_layer(c, layer, attn::parse_hf_config(R"({"num_attention_heads": 2, "layer_norm_eps": 1e-12})", "config.json"),
                            {}, "--params b.npz");
    CHECK_FALSE(c.mask.any());
    CHECK(c.norm == attn::norm_kind::none);
    CHECK(c.heads == 2);
}

TEST_CASE("nn.MultiheadAttention: in_proj_weight's and in_proj_bias's row thirds, out_proj as it is") {
    tensor_map m;
    m["in_proj_weight"] = numbered(12, 4);
    m["in_proj_bias"] = numbered(12, 0, 50.0f);
    m["out_proj.weight"] = numbered(4, 4, 60.0f);
    m["out_proj.bias"] = numbered(4, 0, 70.0f);
    const attn::model_names n = attn::detect_model(keys_of(m), std::nullopt, "--params m.npz");
    const attn::model_layer layer = attn::map_model_layer(m, n, -1, "--params m.npz");
    CHECK(at(layer.weights.at("w_k"), 0, 3) == 403.0f);   // row 4 + 0
    CHECK(at(layer.weights.at("w_v"), 1, 2) == 902.0f);   // row 8 + 1
    CHECK(layer.weights.at("b_v").values(3) == 50.0f + 1100.0f);
    CHECK(source_of(layer, "w_v") == "in_proj_weight[8:12]");
}

TEST_CASE("config.json read hardened: wrong types name the key") {
    CHECK_THROWS_WITH_AS(attn::parse_hf_config(R"({"n_head": "4"})", "m/config.json"),
                         "m/config.json: n_head is \"4\"; expected a whole number of at least 1", attn::error);
    CHECK_THROWS_WITH_AS(attn::parse_hf_config(R"({"rms_norm_eps": -1})", "config.json"),
                         "config.json: rms_norm_eps is -1; expected a positive number", attn::error);
    CHECK_THROWS_AS(attn::parse_hf_config("[1, 2]", "config.json"), attn::error);
    CHECK_THROWS_AS(attn::parse_hf_config("{", "config.json"), attn::error);
    const attn::hf_config h = attn::parse_hf_config(R"({"n_head": 12, "n_embd": 768, "layer_norm_epsilon": 1e-05,
                                                        "num_key_value_heads": null, "model_type": "gpt2"})", "config.json");
    CHECK(h.heads == 12);
    CHECK(h.heads_key == "n_head");
    CHECK_FALSE(h.kv_heads);
    CHECK(h.model_type == "gpt2");
}

}  // TEST_SUITE("model_layer")

TEST_CASE("config.json's attention keys: parsed with their types, each wrong one named") {
    const auto keys = [](const char* text) { return attn::parse_hf_config(text, "m/config.json").attention; };
    const attn::hf_attention_keys k = keys(
        R"({"sliding_window": 4096, "use_sliding_window": false, "max_window_layers": 28, "attention_bias": true,
            "max_position_embeddings": 32768, "rope_scaling": null, "alibi": false, "clip_qkv": 8.0})");
    CHECK(k.sliding_window == 4096);
    CHECK(k.use_sliding_window == false);
    CHECK(k.max_window_layers == 28);
    CHECK(k.attention_bias == true);
    CHECK(k.max_positions == 32768);
    CHECK(k.max_positions_key == "max_position_embeddings");
    CHECK(k.rope_scaling.empty());  // null: unset, as Hugging Face writes it
    CHECK(k.not_reproduced == std::vector<std::string>{"clip_qkv is 8.0"});  // alibi false changes nothing
    CHECK(keys(R"({"rope_scaling": {"rope_type": "default"}})").rope_scaling.empty());
    CHECK(keys(R"({"rope_scaling": {"type": "dynamic", "factor": 2.0}})").rope_scaling == R"({"factor":2.0,"type":"dynamic"})");
    CHECK(keys(R"({"n_positions": 1024})").max_positions_key == "n_positions");
    CHECK(keys(R"({"scale_attn_weights": false})").unscaled);
    CHECK_FALSE(keys(R"({"scale_attn_weights": true})").unscaled);
    CHECK_THROWS_WITH_AS(keys(R"({"sliding_window": "4096"})"),
                         "m/config.json: sliding_window is \"4096\"; expected a whole number of at least 1", attn::error);
    CHECK_THROWS_WITH_AS(keys(R"({"rope_scaling": 2})"),
                         "m/config.json: rope_scaling is 2; expected an object such as {\"rope_type\": \"linear\", \"factor\": 2.0}",
                         attn::error);
    CHECK_THROWS_WITH_AS(keys(R"({"partial_rotary_factor": 0})"),
                         "m/config.json: partial_rotary_factor is 0; expected a number above 0, at most 1", attn::error);
    CHECK_THROWS_WITH_AS(keys(R"({"reorder_and_upcast_attn": 1})"),
                         "m/config.json: reorder_and_upcast_attn is 1; expected true or false", attn::error);
}
