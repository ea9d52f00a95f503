#pragma once
// What a real model's layer says about the run, besides its weights: Hugging Face's
// config.json beside the weights file (heads, kv heads, the norm's eps, rope_theta) and
// the architecture's own computation (GPT-2 and Llama are causal and fill with
// torch.finfo(torch.float32).min; Llama rotates q and k; GPT-2 and Llama normalise x
// before attention), merged with the flags: a flag that contradicts config.json is an
// error naming both.
#include <cstdint>
#include <optional>
#include <string>

#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"
#include "attn/io/hf_attention_keys.hpp"
#include "attn/io/model_layer.hpp"

namespace attn {

/// What the flags said that a model file also decides (absent = the flag was not given).
struct model_choice {
    std::optional<model_arch> arch;           // --arch (absent: auto, detected from the names)
    std::optional<std::int64_t> layer;        // --layer L
    std::optional<std::int64_t> heads;        // --heads
    std::optional<std::int64_t> kv_heads;     // --kv-heads
    std::optional<position_encoding> pos;     // --pos
    std::optional<double> rope_base;          // --rope-base
    std::optional<rope_pairing> rope_style;   // --rope-style
    bool mask_given = false;                  // --mask, --mask-file or --key-padding-mask
    bool fill_given = false;                  // --fill
};

/// The keys of a Hugging Face config.json that attn reads (each with the key it came from).
struct hf_config {
    std::string what;  // "config.json (beside m.safetensors)", for messages
    std::string model_type;
    std::optional<std::int64_t> heads;       // n_head or num_attention_heads
    std::optional<std::int64_t> kv_heads;    // num_key_value_heads
    std::optional<std::int64_t> width;       // n_embd or hidden_size
    std::optional<double> norm_eps;          // layer_norm_epsilon, layer_norm_eps or rms_norm_eps
    std::optional<double> rope_theta;        // rope_theta
    std::optional<std::string> activation;   // activation_function (GPT-2) or hidden_act: the MLP's, escaped
    std::string heads_key, kv_heads_key, width_key, norm_eps_key, rope_theta_key, activation_key;  // which key said so
    hf_attention_keys attention;  // the rest that bears on attention: honoured, refused or warned about
};

/// config.json's largest accepted size: Hugging Face's are a few kB.
inline constexpr std::uint64_t max_hf_config_bytes = std::uint64_t(1) << 20;

/// The config.json in the folder of `weights_path`, or nullopt when there is none. attn::error,
/// one line naming config.json (and the key), for a file larger than max_hf_config_bytes, not
/// JSON, not an object, or a known key of the wrong type or value ("n_head is \"4\", not a
/// whole number of at least 1").
std::optional<hf_config> read_hf_config_beside(const std::string& weights_path);

/// The same from config.json's text; `what` names it in messages.
hf_config parse_hf_config(const std::string& text, const std::string& what);

/// Sets in `c` what the model's layer and its config.json decide: heads and kv heads (config.json,
/// else --heads / --kv-heads, else kv heads from w_k's rows), the norm (kind, eps), biases
/// (c.qkv_bias, c.out_bias as the file has them), positions (Llama: rope, rope_theta), the
/// causal mask and finfo.min fill of GPT-2 and Llama (unless a mask or --fill is given),
/// and c.sources.model and weight_sources; then config.json's other attention keys
/// (apply_hf_attention_keys), their warnings added to `warnings` when given. usage_error: a
/// flag against config.json or the architecture, naming both; a model file without
/// config.json and without --heads. attn::error: a config.json key attn does not reproduce.
void apply_model_layer(config& c, const model_layer& layer, const std::optional<hf_config>& json,
                       const model_choice& flags, const std::string& what, warning_list* warnings = nullptr);

/// torch.finfo(torch.float32).min, the fill GPT-2 and Llama write where the causal mask is false.
inline constexpr float finfo_float32_min = -3.40282347e+38f;

}  // namespace attn
