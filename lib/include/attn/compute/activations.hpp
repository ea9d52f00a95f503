#pragma once
// The MLP activations of the models attn opens, on float32 arrays, as torch 1.13 computes them
// on the CPU with its AVX2 kernels (Debian's torch runs those, also on a CPU with AVX-512), to
// the bit (tests/compute/test_activations.cpp against tests/reference/activations):
//
//   gelu_tanh  GPT-2's "gelu_new" (Hugging Face's NewGELUActivation), separate float32 ops:
//              0.5·x · (1 + tanh(√(2/π) · (x + 0.044715·x³))), tanh from SLEEF on every element
//   gelu_erf   BERT's "gelu", F.gelu(x) = x/2 · (1 + erf(x/√2)): torch sends a float32 tensor to
//              oneDNN (mkldnn's eltwise_gelu_erf), whose erf is Abramowitz and Stegun's 7.1.26
//              with its own exp, the same on every element; GELU = S + S·erf with S = x/2
//   silu       Llama's "silu", F.silu(x) = x / (1 + exp(-x)): aten's loop, SLEEF's exp on blocks
//              of 16 elements, glibc's expf on the rest
//
// silu's "rest" is per chunk: aten splits a tensor of more than 32768 elements among its
// threads, each chunk with its own scalar tail, so some last bits depend on the thread count,
// taken here as torch.set_num_threads(thread_count()) (threads.hpp).
// Without AVX2 and FMA the functions are computed in double and rounded (within an ulp).
#include <cstddef>
#include <string_view>

namespace attn {

enum class activation { gelu_tanh, gelu_erf, silu };

/// "gelu_new", "gelu", "silu": the names Hugging Face's configs give them.
constexpr std::string_view activation_name(activation a) {
    switch (a) {
        case activation::gelu_tanh: return "gelu_new";
        case activation::gelu_erf: return "gelu";
        case activation::silu: return "silu";
    }
    return "";
}

/// y[i] = a(x[i]) for i < n; x and y may be the same array.
void activate(activation a, const float* x, float* y, std::size_t n);

/// The same as torch on `threads` threads (tests; activate uses thread_count()).
void activate_as_on(activation a, const float* x, float* y, std::size_t n, int threads);

/// Whether this CPU computes torch's bits (AVX2 and FMA, for SLEEF's 8-lane functions).
bool activations_are_torchs();

}  // namespace attn
