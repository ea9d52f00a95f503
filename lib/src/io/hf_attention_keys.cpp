// config.json's attention keys, honoured, refused or warned about (hf_attention_keys.hpp).
#include "attn/io/hf_attention_keys.hpp"

#include <cmath>

#include "attn/compute/error.hpp"
#include "attn/io/json_document.hpp"
#include "attn/io/model_layer.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/number_text.hpp"
#include "attn/text/printable_text.hpp"

namespace attn {
namespace {

using json = nlohmann::json;

/// The key's value, nullptr when it is absent or null (Hugging Face writes null for "unset").
const json* present(const json& j, const char* key) {
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void wrong(const std::string& what, const char* key, const json& v, const char* expected) {
    throw error(what + ": " + key + " is " + json_excerpt(v) + "; expected " + expected);
}

std::optional<std::int64_t> whole(const json& j, const char* key, const std::string& what) {
    const json* v = present(j, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer() || v->get<std::int64_t>() < 1 || v->get<std::int64_t>() > (std::int64_t(1) << 40))
        wrong(what, key, *v, "a whole number of at least 1");
    return v->get<std::int64_t>();
}

std::optional<bool> boolean(const json& j, const char* key, const std::string& what) {
    const json* v = present(j, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) wrong(what, key, *v, "true or false");
    return v->get<bool>();
}

/// A positive finite number inside rope_scaling.
double scaling_number(const json& scaling, const char* key, const std::string& what) {
    const json* v = present(scaling, key);
    const std::string name = std::string("rope_scaling's ") + key;
    if (v == nullptr) throw error(what + ": " + name + " is missing; Hugging Face's rope_scaling needs it");
    if (!v->is_number() || !(v->get<double>() > 0.0) || !std::isfinite(v->get<double>()))
        wrong(what, name.c_str(), *v, "a positive number");
    return v->get<double>();
}

/// rope_scaling of the types attn computes (linear, llama3); none for the others.
rope_scaling_spec parse_rope_scale(const json& scaling, const std::string& type, const std::string& what) {
    rope_scaling_spec s;
    if (type == "linear") {
        s.type = rope_scaling_spec::kind::linear;
        s.factor = scaling_number(scaling, "factor", what);
    } else if (type == "llama3") {
        s.type = rope_scaling_spec::kind::llama3;
        s.factor = scaling_number(scaling, "factor", what);
        s.low_freq_factor = scaling_number(scaling, "low_freq_factor", what);
        s.high_freq_factor = scaling_number(scaling, "high_freq_factor", what);
        s.original_max_positions = scaling_number(scaling, "original_max_position_embeddings", what);
        if (!(s.high_freq_factor > s.low_freq_factor))
            wrong(what, "rope_scaling's high_freq_factor", *present(scaling, "high_freq_factor"),
                  "a number above low_freq_factor (Hugging Face divides by their difference)");
    }
    return s;
}

/// Keys that change attention in some models and that attn does not reproduce: a run with one
/// of them set is computed without it, and says so.
constexpr const char* keys_not_reproduced[] = {
    "attn_logit_softcapping",  // Gemma 2: scores = cap · tanh(scores / cap)
    "query_pre_attn_scalar",   // Gemma 2: scale 1/√query_pre_attn_scalar instead of 1/√dk
    "qk_layernorm",            // a norm on q and k before the scores (Persimmon, OLMo 2, ...)
    "use_qk_norm",
    "qk_norm",
    "clip_qkv",                // OLMo: q, k, v clamped
    "attention_multiplier",    // Granite: the scale
    "use_logn_attn",           // Qwen: scores scaled by log n
    "alibi",                   // Falcon: ALiBi biases
    "rotary_pct",              // GPT-NeoX: part of each head rotated
};

}  // namespace

hf_attention_keys parse_hf_attention_keys(const json& j, const std::string& what) {
    hf_attention_keys k;
    if (const json* v = present(j, "rope_scaling")) {
        if (!v->is_object()) wrong(what, "rope_scaling", *v, "an object such as {\"rope_type\": \"linear\", \"factor\": 2.0}");
        const json* type = present(*v, "rope_type") != nullptr ? present(*v, "rope_type") : present(*v, "type");
        if (type != nullptr && !type->is_string()) wrong(what, "rope_scaling's rope_type", *type, "a string such as \"linear\"");
        k.rope_scaling_type = type == nullptr ? "" : quoted_field(type->get<std::string>());
        if (k.rope_scaling_type != "default") {
            const std::string text = v->dump();  // {"factor":2.0,"type":"linear"}; a long one summarised
            k.rope_scaling = text.size() <= 120 ? printable_text(text) : json_excerpt(*v);
            k.rope_scale = parse_rope_scale(*v, k.rope_scaling_type, what);
        }
    }
    if (const json* v = present(j, "partial_rotary_factor")) {
        if (!v->is_number() || !(v->get<double>() > 0.0 && v->get<double>() <= 1.0))
            wrong(what, "partial_rotary_factor", *v, "a number above 0, at most 1");
        k.partial_rotary_factor = v->get<double>();
    }
    k.head_dim = whole(j, "head_dim", what);
    k.sliding_window = whole(j, "sliding_window", what);
    k.use_sliding_window = boolean(j, "use_sliding_window", what);
    if (const json* v = present(j, "max_window_layers")) {
        if (!v->is_number_integer() || v->get<std::int64_t>() < 0) wrong(what, "max_window_layers", *v, "a whole number, 0 or more");
        k.max_window_layers = v->get<std::int64_t>();
    }
    k.scale_by_inverse_layer = boolean(j, "scale_attn_by_inverse_layer_idx", what).value_or(false);
    k.unscaled = !boolean(j, "scale_attn_weights", what).value_or(true);
    k.reorder_and_upcast = boolean(j, "reorder_and_upcast_attn", what).value_or(false);
    k.attention_bias = boolean(j, "attention_bias", what);
    for (const char* key : {"max_position_embeddings", "n_positions"})
        if (const auto n = whole(j, key, what)) {
            k.max_positions = n;
            k.max_positions_key = key;
            break;
        }
    if (const json* v = present(j, "position_embedding_type")) {
        if (!v->is_string()) wrong(what, "position_embedding_type", *v, "a string such as \"absolute\"");
        k.position_embedding_type = quoted_field(v->get<std::string>());
    }
    for (const char* key : keys_not_reproduced)
        if (const json* v = present(j, key); v != nullptr && *v != json(false))
            k.not_reproduced.push_back(std::string(key) + " is " + json_excerpt(*v));
    return k;
}

void apply_hf_attention_keys(config& c, const model_layer& m, const hf_attention_keys& k, bool mask_given,
                             const std::string& what, const std::string& file, warning_list& warnings) {
    const auto refuse = [&](const std::string& key_is, const std::string& because) {
        throw error(what + ": " + key_is + ": " + because + "; attn does not reproduce it");
    };
    const bool rope = c.pos == position_encoding::rope;
    if (!k.rope_scaling.empty()) {
        if (!rope)
            warnings.push_back({"", what + ": rope_scaling is " + k.rope_scaling + ", unused: this layer has no rotary positions"});
        else if (k.rope_scale.type != rope_scaling_spec::kind::none)
            c.rope_scaling = k.rope_scale;
        else if (k.rope_scaling_type != "dynamic")
            refuse("rope_scaling is " + k.rope_scaling, "Hugging Face rescales rope's angles by it");
        else if (!k.max_positions)  // dynamic NTK: the base grows only past max_position_embeddings
            refuse("rope_scaling is " + k.rope_scaling,
                   "Hugging Face raises rope's base past max_position_embeddings, which config.json does not give");
        // else: within max_position_embeddings (check_hf_positions) dynamic rope is the unscaled one
    }
    if (k.partial_rotary_factor && *k.partial_rotary_factor < 1.0 && rope)
        refuse("partial_rotary_factor is " + shortest_text(*k.partial_rotary_factor),
               "Hugging Face rotates only that part of each head's coordinates, attn all of them");

    const auto q = m.weights.find("w_q");  // w_q [D,Din]: D = H·dk
    if (k.head_dim && q != m.weights.end() && q->second.shape.size() == 2 && c.heads > 0) {
        const auto D = static_cast<std::int64_t>(q->second.shape[0]), Din = static_cast<std::int64_t>(q->second.shape[1]);
        if (*k.head_dim * c.heads != D)
            throw error(what + ": head_dim is " + std::to_string(*k.head_dim) + ", but " + file + "'s w_q has shape " +
                        tensor_index_text(q->second.shape) + ": " + std::to_string(c.heads) + " heads of " +
                        std::to_string(*k.head_dim) + " need " + std::to_string(*k.head_dim * c.heads) + " rows");
        if (D != Din)
            refuse("head_dim is " + std::to_string(*k.head_dim),
                   "heads · head_dim = " + std::to_string(D) + " differs from the hidden size " + std::to_string(Din) +
                       ", so o_proj [" + std::to_string(Din) + "," + std::to_string(D) +
                       "] maps the heads back to another width than attn's square output projection [D,D]");
    }

    if (k.sliding_window && k.use_sliding_window.value_or(true)) {
        // Qwen2: the window only from layer max_window_layers on (when use_sliding_window is given)
        const bool this_layer = !(k.use_sliding_window && k.max_window_layers) || m.layer >= *k.max_window_layers;
        if (this_layer && !mask_given) {
            c.mask.window = true;  // Hugging Face's sliding_window_overlay: key j > i - W, i.e. |i - j| <= W - 1
            c.mask.window_size = *k.sliding_window - 1;
        } else if (this_layer) {
            warnings.push_back({"mask", what + ": sliding_window " + std::to_string(*k.sliding_window) +
                                            " is not applied: the mask flags chose the mask"});
        }
    }

    if (k.scale_by_inverse_layer)
        refuse("scale_attn_by_inverse_layer_idx is true", "GPT-2 then divides the scores by layer_idx + 1 besides √dk");
    if (k.unscaled) refuse("scale_attn_weights is false", "GPT-2 then does not divide the scores by √dk");
    if (k.reorder_and_upcast)
        refuse("reorder_and_upcast_attn is true",
               "GPT-2 then computes q·kᵀ by torch.baddbmm with alpha = 1/√dk, in float32, another rounding than "
               "attn's (q·kᵀ) / √dk");
    if (k.attention_bias && *k.attention_bias != (m.weights.count("b_q") != 0))
        throw error(what + ": attention_bias is " + (*k.attention_bias ? "true" : "false") + ", but " + file +
                    (*k.attention_bias ? " has no" : " has") + " biases for q, k and v in layer " + std::to_string(m.layer));
    if (!k.position_embedding_type.empty() && k.position_embedding_type != "absolute")
        refuse("position_embedding_type is \"" + k.position_embedding_type + "\"",
               "BERT then adds learned relative-position scores to q·kᵀ");
    for (const std::string& key_is : k.not_reproduced)
        warnings.push_back({"scores", what + ": " + key_is + ": a setting that changes attention in some models, which "
                                                             "attn does not reproduce; the stages are computed without it"});
}

void check_hf_positions(const config& c, const hf_attention_keys& k, const std::string& what) {
    if (!k.max_positions || c.past + c.seq <= *k.max_positions) return;
    throw error(what + ": " + k.max_positions_key + " is " + std::to_string(*k.max_positions) + ", but the run's queries reach position " +
                std::to_string(c.past + c.seq - 1) + " (positions count from 0): more tokens than the model was made for");
}

}  // namespace attn
