// rope_frequencies.hpp: rope's inverse frequencies, apart from the rotation so that a run's
// checks (config, replays, config.json) can ask whether a base gives finite angles.
#include "attn/compute/rope_frequencies.hpp"

#include <cmath>

namespace attn {

std::vector<float> rope_inverse_frequencies(double base, std::size_t head_dim) {
    // torch.arange(0, dk, 2).float() / dk: float32; base ** that: pow, correctly rounded to float32
    // (measured equal to torch for dk 2..128 and bases 10, 1e4, 5e5); 1.0 / it in float32
    std::vector<float> inv(head_dim / 2);
    for (std::size_t i = 0; i < inv.size(); ++i) {
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
        inv[i] = 1.0f / static_cast<float>(std::pow(base, static_cast<double>(exponent)));
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
