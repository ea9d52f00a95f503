#pragma once
// Rope's inverse frequencies, inv_freq = 1.0 / (base ** (torch.arange(0, dk, 2).float() / dk)),
// and whether a base gives angles float32 holds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/compute/config.hpp"

namespace attn {

/// inv_freq [dk/2]: the angle per position of each pair, 1 / base^(2i/dk), then rescaled as
/// `scaling` says (Hugging Face's _compute_linear_scaling_rope_parameters or
/// _compute_llama3_parameters, each float32 operation as torch makes it).
std::vector<float> rope_inverse_frequencies(double base, std::size_t head_dim, const rope_scaling_spec& scaling = {});

/// Why rope cannot use `base` for dk = head_dim up to position last_position, or "": every
/// angle pos · inv_freq[i] must be a finite float32 (a base so small that base^(2i/dk) is 0
/// in float32 makes inv_freq inf, and the angles inf or nan).
std::string rope_base_problem(double base, std::size_t head_dim, std::int64_t last_position);

}  // namespace attn
