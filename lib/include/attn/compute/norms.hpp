#pragma once
// The normalisations a real model applies before attention, over the last axis of
// [rows, width] row-major float32: LayerNorm (GPT-2's ln_1, BERT's embeddings.LayerNorm)
// and RMSNorm (Llama's input_layernorm), as PyTorch 1.13 on the CPU computes them, to the bit:
// the bits of Debian's torch, which runs its AVX2 kernels (also on a CPU with AVX-512), on every
// CPU (norms.cpp says the order of operations; tests/reference/make_norm_fixtures.py measures
// how torch's other kernels differ). Rows are independent: [B,S,D] is [B·S, D] rows.
#include <cstddef>

namespace attn {

/// y = (x - mean) / sqrt(var + eps) · weight + bias per row (var: the biased variance), as
/// torch.nn.functional.layer_norm(x, [width], weight, bias, eps). `bias` may be null (zeros).
void layer_norm_rows(const float* x, std::size_t rows, std::size_t width, const float* weight, const float* bias,
                     float eps, float* y);

/// Hugging Face's LlamaRMSNorm: y = weight · (x · torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)).
void rms_norm_rows(const float* x, std::size_t rows, std::size_t width, const float* weight, float eps, float* y);

/// The ways the two are built (plain; AVX2 with FMA, faster), all giving the same bits, the
/// fastest this CPU runs used; whether this CPU runs one, and the norms with one (tests).
enum class norm_kernel { plain, avx2 };
bool norm_kernel_runs_here(norm_kernel k);
void layer_norm_rows_with(norm_kernel k, const float* x, std::size_t rows, std::size_t width, const float* weight,
                          const float* bias, float eps, float* y);
void rms_norm_rows_with(norm_kernel k, const float* x, std::size_t rows, std::size_t width, const float* weight,
                        float eps, float* y);

}  // namespace attn
