#pragma once
// A model's own weight names -> attn's weights: one attention layer of a GPT-2, BERT or
// Llama-style checkpoint, or an nn.MultiheadAttention state_dict, read as attn's w_q b_q w_k
// b_k w_v b_v w_o b_o in nn.Linear's layout [out, in], with a record of where each came from.
//
//   GPT-2   [prefix.]h.L.attn.c_attn.weight [D,3D], a Conv1D stored [in, out] (y = x·W + b):
//           w_q = W[:, 0:D]ᵀ, w_k = W[:, D:2D]ᵀ, w_v = W[:, 2D:3D]ᵀ, b_* its bias's thirds;
//           w_o = c_proj.weightᵀ; the pre-attention norm ln_1 (LayerNorm, weight and bias)
//   BERT    [prefix.]encoder.layer.L.attention.self.{query,key,value}.{weight,bias} and
//           attention.output.dense: nn.Linear [out, in] as they are; no norm before attention
//   Llama   [prefix.]layers.L.self_attn.{q,k,v,o}_proj.weight as they are (k and v [G·dk,D]),
//           biases when present (Qwen-style q/k/v); input_layernorm (RMSNorm, weight only)
//   nn.MultiheadAttention  [prefix.]in_proj_weight [3D,D]: w_q, w_k, w_v its row thirds,
//           in_proj_bias's thirds, out_proj.{weight,bias} as they are
//   attn    w_q ... b_o (or params.w_q ...), our own names: file_inputs.cpp reads them
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {

enum class model_arch : std::uint8_t { attn, gpt2, bert, llama, mha };

/// "gpt2", "bert", "llama", "mha", "attn": the names --arch takes; and back (nullopt for
/// another, "auto" too).
std::string_view model_arch_name(model_arch a);
std::optional<model_arch> parse_model_arch(std::string_view name);
/// "GPT-2", "BERT", "Llama", "nn.MultiheadAttention", "attn": for messages.
std::string_view model_arch_title(model_arch a);

/// Which architecture a file's names are, and where its layers are.
struct model_names {
    model_arch arch = model_arch::attn;
    std::string prefix;                // what comes before the architecture's names: "", "transformer.", "bert.", "model."
    std::vector<std::int64_t> layers;  // the layer numbers the file holds, ascending; none for mha and attn
};

/// The architecture of a file holding tensors called `names`: `forced` (--arch), else the
/// first of attn, GPT-2, BERT, Llama, nn.MultiheadAttention whose attention names are there
/// (names without dots, none of them known, are taken as attn's, so that its reader names the
/// unexpected one).
/// Errors (`what` = "--params m.safetensors"): names of no architecture (attn::error, listing
/// some of what was found and what each architecture expects), a forced one whose names are
/// not there (usage_error naming --arch and what the file looks like).
model_names detect_model(const std::vector<std::string>& names, std::optional<model_arch> forced,
                         const std::string& what);

/// The layer to read: `layer` (--layer), else 0. usage_error for --layer with an
/// architecture that has none (mha, attn) and for a layer the file does not hold (the
/// message names the ones it does).
std::int64_t choose_layer(const model_names& m, std::optional<std::int64_t> layer, const std::string& what);

/// The file's names that map_model_layer reads for `layer` (present or not): a reader
/// decodes only these, one layer of a large checkpoint.
std::vector<std::string> layer_tensor_names(const model_names& m, std::int64_t layer);

/// The width D of a layer's input as its query weight's stored shape says it, known from a
/// file's index before any tensor is read: GPT-2's c_attn.weight [D,3D] (axis 0), BERT's
/// query.weight and Llama's q_proj.weight [out,D], nn.MultiheadAttention's in_proj_weight
/// [3D,D] (axis 1). nullopt when `shapes` lacks that weight or it has not two axes
/// (map_model_layer says why, later) and for attn's own names.
struct layer_width {
    std::string weight;               // the file's name of the weight it is read from
    std::vector<std::size_t> shape;   // its shape
    std::size_t width = 0;            // D
};
std::optional<layer_width> layer_input_width(const model_names& m, std::int64_t layer,
                                             const std::map<std::string, std::vector<std::size_t>>& shapes);

/// Where one of attn's weights came from: {"w_q", "h.1.attn.c_attn.weight[:, 0:16]ᵀ (Conv1D stores [in, out])"}.
struct weight_source {
    std::string weight;
    std::string from;
};

/// One attention layer of a model file, in attn's names.
struct model_layer {
    model_names names;
    std::int64_t layer = -1;  // -1: a file without layers (mha)
    /// w_q b_q w_k b_k w_v b_v w_o b_o (the biases only when the file has them), and the
    /// pre-attention norm's norm_weight and norm_bias [D] when the layer has one.
    std::map<std::string, loaded_tensor> weights;
    std::vector<weight_source> sources;  // in the params stage's order, then the norm's
    norm_kind norm = norm_kind::none;    // GPT-2: layer_norm (ln_1); Llama: rms_norm (input_layernorm)
    /// The rest of the block when the file holds the layer's MLP (block.on()): its norm, post-norm,
    /// gated, bias and width from the weights; the activation and eps are config.json's
    /// (apply_model_layer). Weights mlp_norm_weight mlp_norm_bias w_gate w_up b_up w_down b_down
    /// out_norm_weight out_norm_bias, in nn.Linear's layout:
    ///   GPT-2  ln_2; mlp.c_fc.weight [D,F] and mlp.c_proj.weight [F,D], Conv1Ds, transposed
    ///   BERT   attention.output.LayerNorm; intermediate.dense [F,D]; output.dense [D,F]; output.LayerNorm
    ///   Llama  post_attention_layernorm; mlp.gate_proj, up_proj [F,D]; down_proj [D,F]
    block_spec block;
};

/// Maps the tensors `file` holds (at least layer_tensor_names' that exist) onto attn's weights.
/// attn::error naming the file and the tensor when one is missing or shaped otherwise than the
/// architecture stores it ("h.1.attn.c_attn.weight has shape [16,40]; GPT-2 stores it [D,3D]").
model_layer map_model_layer(std::map<std::string, loaded_tensor> file, const model_names& m, std::int64_t layer,
                            const std::string& what);

}  // namespace attn
