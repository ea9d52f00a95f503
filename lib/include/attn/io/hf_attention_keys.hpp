#pragma once
// What a Hugging Face config.json says about attention beyond the head count, the widths,
// the norm's eps and rope_theta (model_config.hpp). Each key is honoured, refused or
// warned about, never silently ignored:
//
//   honoured  rope_scaling linear and llama3 (Llama 3.1, 3.2): inv_freq rescaled as Hugging
//             Face's modeling_rope_utils; dynamic within max_position_embeddings, where it is
//             the unscaled rope; sliding_window (Mistral, Qwen2 with use_sliding_window): the window mask,
//             keys j > i - W as Hugging Face's sliding_window_overlay (attn's --window W-1)
//             beside the causal mask; attention_bias checked against the file's biases;
//             max_position_embeddings (n_positions): more positions than it is an error
//   refused   rope_scaling yarn, longrope and the rest, partial_rotary_factor below 1, a
//             head_dim with heads · head_dim != hidden size, GPT-2's
//             scale_attn_by_inverse_layer_idx, scale_attn_weights false and
//             reorder_and_upcast_attn, BERT's relative position_embedding_type: each an
//             attn::error naming config.json and the key, and what it would change
//   warned    keys that change attention in some models and that attn does not reproduce
//             (attn_logit_softcapping, query_pre_attn_scalar, qk_layernorm, clip_qkv, ...)
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

struct model_layer;

struct hf_attention_keys {
    std::string rope_scaling;  // its JSON text when it scales ({"type": "linear", "factor": 2.0}); empty: none
    std::string rope_scaling_type;  // "linear", "llama3", "dynamic", "yarn", ...
    rope_scaling_spec rope_scale;   // linear and llama3: what attn computes
    std::optional<double> partial_rotary_factor;
    std::optional<std::int64_t> head_dim;
    std::optional<std::int64_t> sliding_window;
    std::optional<bool> use_sliding_window;         // Qwen2's: false leaves sliding_window unused
    std::optional<std::int64_t> max_window_layers;  // Qwen2's: layers from this one on use the window
    bool scale_by_inverse_layer = false;            // GPT-2's scale_attn_by_inverse_layer_idx
    bool unscaled = false;                          // GPT-2's scale_attn_weights: false
    bool reorder_and_upcast = false;                // GPT-2's reorder_and_upcast_attn
    std::optional<bool> attention_bias;             // Llama's: q, k, v and o have biases
    std::optional<std::int64_t> max_positions;      // max_position_embeddings or n_positions
    std::string max_positions_key;
    std::string position_embedding_type;            // BERT's; "absolute" or empty: the usual
    std::vector<std::string> not_reproduced;        // "attn_logit_softcapping is 50.0": for warnings
};

/// The keys above from config.json's object `j`; attn::error naming `what` and the key for a
/// value of the wrong type.
hf_attention_keys parse_hf_attention_keys(const nlohmann::json& j, const std::string& what);

/// Honours or refuses each key for layer `m` of a run being set up in `c` (heads and
/// positions already taken); `mask_given`: the flags chose the mask. `what` names config.json
/// and `file` the weights in messages.
void apply_hf_attention_keys(config& c, const model_layer& m, const hf_attention_keys& keys, bool mask_given,
                             const std::string& what, const std::string& file, warning_list& warnings);

/// Once the sizes are known: a run whose last position (past + Sq - 1) is beyond
/// max_position_embeddings is refused, naming the key.
void check_hf_positions(const config& c, const hf_attention_keys& keys, const std::string& what);

}  // namespace attn
