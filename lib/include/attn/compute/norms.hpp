#pragma once
// The normalisations a real model applies before attention, over the last axis of
// [rows, width] row-major float32: LayerNorm (GPT-2's ln_1, BERT's embeddings.LayerNorm)
// and RMSNorm (Llama's input_layernorm), as PyTorch 1.13 on the CPU computes them.
#include <cstddef>

namespace attn {

/// y = (x - mean) / sqrt(var + eps) · weight + bias per row (var: the biased variance), as
/// torch.nn.functional.layer_norm(x, [width], weight, bias, eps). `bias` may be null (zeros).
void layer_norm_rows(const float* x, std::size_t rows, std::size_t width, const float* weight, const float* bias,
                     float eps, float* y);

/// Hugging Face's LlamaRMSNorm: y = weight · (x · torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)).
void rms_norm_rows(const float* x, std::size_t rows, std::size_t width, const float* weight, float eps, float* y);

}  // namespace attn
