#pragma once
// The numbers attention starts from: the token embeddings and the weights, or
// the projections themselves; each either given (read from a file) or drawn.
#include <optional>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

using optional_tensor = std::optional<xt::xarray<float>>;

/// Weights in nn.Linear's layout [out, in]; y = x·Wᵀ + b. The biases are absent with
/// --no-qkv-bias, w_o and b_o with --no-out-proj; w_q, w_k, w_v empty with given projections.
/// A model block's weights after attention (config::block), in nn.Linear's layout [out, in], or
/// GPT-2's Conv1D layout [in, out] (conv1d).
struct block_weights {
    bool conv1d = false;            // w_up [D,F] and w_down [F,D] as Conv1D stores them: y = addmm(b, x, W)
    xt::xarray<float> norm_weight;  // [D]: mlp_norm's (ln_2, post_attention_layernorm, attention.output.LayerNorm)
    optional_tensor norm_bias;      // [D]: LayerNorm's
    optional_tensor w_gate;         // [F,D]: Llama's gate_proj
    xt::xarray<float> w_up;         // [F,D]: intermediate.dense, up_proj; c_fc [D,F] (conv1d)
    optional_tensor b_up;           // [F]
    xt::xarray<float> w_down;       // [D,F]: output.dense, down_proj; c_proj [F,D] (conv1d)
    optional_tensor b_down;         // [D]
    optional_tensor out_norm_weight, out_norm_bias;  // [D]: post-norm's second norm (BERT's output.LayerNorm)
};

struct parameters {
    xt::xarray<float> w_q;  // [D,Din]
    xt::xarray<float> w_k;  // [D,Dkv]; [G·dk,Dkv] with --kv-heads G
    xt::xarray<float> w_v;  // [D,Dkv]; [G·dk,Dkv]
    optional_tensor b_q, b_k, b_v;  // [D] each (b_k, b_v [G·dk])
    optional_tensor w_o;    // [D,D]
    optional_tensor b_o;    // [D]; absent too when config::out_bias is off (a Llama layer's o_proj)
    optional_tensor norm_weight, norm_bias;  // [Din]: the norm stage's, with config::norm (a model's layer)
    std::optional<block_weights> block;      // with config::block: the residual and the MLP after attention
};

/// A model's embedding rows for --tokens (stage embed): input.x is their sum (embed_sum).
struct embeddings {
    xt::xarray<float> token;   // [B,S,D]: the token table's rows for the ids (B = 1)
    optional_tensor position;  // [S,D]: the position table's rows 0..S-1 (GPT-2, BERT; Llama has none)
    optional_tensor token_type;  // [S,D]: BERT's token_type_embeddings[0] for every position
};

/// The residual stream the embeddings make, [B,S,D], in the model's order of float32 additions:
/// token + position (GPT-2), (token + token_type) + position (BertEmbeddings), token (Llama).
xt::xarray<float> embed_sum(const embeddings& e);

/// Q, K and V before the heads are split (--q --k --v).
struct projections {
    xt::xarray<float> q;  // [B,Sq,D]
    xt::xarray<float> k;  // [B,Sk,D]
    xt::xarray<float> v;  // [B,Sk,D]
};

struct inputs {
    xt::xarray<float> x;    // [B,Sq,Din] ([B,N+Sq,Din] with --past N); empty when the run starts at the projections
    optional_tensor x_kv;   // [B,Sk,Dkv]; absent for self-attention (keys and values come from x)
    parameters params;
    std::optional<projections> qkv;        // given Q, K, V: stages 1-2 are skipped (config::sources)
    std::optional<xt::xarray<bool>> mask;  // [B,1,Sq,Sk] from --mask-file (config::mask.from_file)
    std::optional<embeddings> embed;       // --tokens: the rows x was summed from (stage embed)
    attn::warning_list warnings;               // about the given tensors (NaN in a file); they open the trace's
};

/// What the user supplied; everything else is drawn.
struct given_inputs {
    optional_tensor x, x_kv;
    std::optional<parameters> params;  // all the weights the config needs, or none
    std::optional<projections> qkv;
    std::optional<xt::xarray<bool>> mask;
    std::optional<embeddings> embed;  // --tokens (x is then their sum, given too)
};

/// Completes `given` by drawing what is missing as PyTorch would (CLI.md): torch.manual_seed(seed);
/// nn.Linear(Din,D) for q, nn.Linear(Dkv,D) for k and v, nn.Linear(D,D) for the output; then
/// x = torch.randn(B,Sq,Din) and, for cross-attention, x_kv = torch.randn(B,Sk,Dkv). A given
/// tensor draws nothing; with given Q, K, V only the output layer is drawn.
inputs draw_inputs(const config& c, given_inputs given = {});

}  // namespace attn
