// rope_frequencies.hpp: rope's inverse frequencies, apart from the rotation so that a run's
// checks (config, replays, config.json) can ask whether a base gives finite angles.
#include "attn/compute/rope_frequencies.hpp"

#include <cmath>

namespace attn {

namespace {

/// Llama 3.1's rescaling, as Hugging Face's _compute_llama3_parameters writes it in torch:
///   wavelen = 2 * math.pi / inv_freq
///   inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
///   smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
///   smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
///   is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
///   inv_freq = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
/// Each tensor operation is float32, its Python number cast to float32 first; a number over a
/// tensor (2 * math.pi / inv_freq) is torch's __rtruediv__, reciprocal() times the number.
float llama3_inverse_frequency(float inv, const rope_scaling_spec& s) {
    const auto f32 = [](double x) { return static_cast<float>(x); };
    const double low_freq_wavelen = s.original_max_positions / s.low_freq_factor;  // Python floats
    const double high_freq_wavelen = s.original_max_positions / s.high_freq_factor;
    const float wavelen = (1.0f / inv) * f32(2 * 3.141592653589793);
    const float llama = wavelen > f32(low_freq_wavelen) ? inv / f32(s.factor) : inv;
    const float smooth = ((1.0f / wavelen) * f32(s.original_max_positions) - f32(s.low_freq_factor)) /
                         f32(s.high_freq_factor - s.low_freq_factor);
    const float smoothed = ((1.0f - smooth) * llama) / f32(s.factor) + smooth * llama;
    const bool medium = !(wavelen < f32(high_freq_wavelen)) && !(wavelen > f32(low_freq_wavelen));
    return medium ? smoothed : llama;
}

}  // namespace

std::vector<float> rope_inverse_frequencies(double base, std::size_t head_dim, const rope_scaling_spec& scaling) {
    // torch.arange(0, dk, 2).float() / dk: float32; base ** that: pow, correctly rounded to float32
    // (measured equal to torch for dk 2..128 and bases 10, 1e4, 5e5); 1.0 / it in float32
    std::vector<float> inv(head_dim / 2);
    for (std::size_t i = 0; i < inv.size(); ++i) {
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
        inv[i] = 1.0f / static_cast<float>(std::pow(base, static_cast<double>(exponent)));
        switch (scaling.type) {
            case rope_scaling_spec::kind::none: break;
            case rope_scaling_spec::kind::linear: inv[i] /= static_cast<float>(scaling.factor); break;  // inv_freq /= factor
            case rope_scaling_spec::kind::llama3: inv[i] = llama3_inverse_frequency(inv[i], scaling); break;
        }
    }
    return inv;
}

std::string rope_base_problem(double base, std::size_t head_dim, std::int64_t last_position) {
    if (!(base > 0.0) || !std::isfinite(base)) return "it must be a finite number above 0";
    const std::vector<float> inv = rope_inverse_frequencies(base, head_dim);
    const auto last = static_cast<float>(last_position);  // torch.arange(..).float()
    for (std::size_t i = 0; i < inv.size(); ++i) {
        const std::string power = "base^(" + std::to_string(2 * i) + "/" + std::to_string(head_dim) + ")";
        if (!std::isfinite(inv[i]))
            return "rope's angles pos / " + power + " are not finite: " + power + " is 0 in float32, so inv_freq[" +
                   std::to_string(i) + "] is inf (and the angles inf or nan); give a larger base";
        if (!std::isfinite(last * inv[i]))
            return "rope's angle " + std::to_string(last_position) + " / " + power +
                   " is more than float32 holds; give a larger base";
    }
    return "";
}

}  // namespace attn
