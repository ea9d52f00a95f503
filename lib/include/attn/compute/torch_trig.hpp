#pragma once
// cos and sin of float32 arguments with torch 1.13's bits on CPU, for rope's angles and the
// sinusoidal table.
#include <cstddef>

namespace attn {

/// out[i] = cos(in[i]) (torch_sin: sin), as torch.cos / torch.sin give them on this CPU: with
/// AVX2 and FMA, SLEEF's Sleef_cosf8_u10 / Sleef_sinf8_u10 from Debian's libsleef, the very
/// functions torch's AVX2 kernel calls (so the same bits); without, the double result rounded
/// to float32 (within half an ulp; torch's own default kernel may differ from it by 1 ulp).
/// in and out may be the same array.
void torch_cos(const float* in, float* out, std::size_t n);
void torch_sin(const float* in, float* out, std::size_t n);

/// Whether torch_cos and torch_sin run SLEEF's AVX2 functions here (the tests compare bits then).
bool torch_trig_is_sleef();

}  // namespace attn
