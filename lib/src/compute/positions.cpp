// The positional encodings (positions.hpp), element by element in torch's float32 order: the
// angles, pow, exp, the products and sums as torch rounds them, cos and sin as torch computes
// them (torch_trig.hpp: SLEEF's own functions on a CPU with AVX2), so every tensor is
// PyTorch's to the bit there.
#include "attn/compute/positions.hpp"

#include <cmath>
#include <vector>

#include "attn/compute/forward_steps.hpp"
#include "attn/compute/torch_exp.hpp"
#include "attn/compute/torch_trig.hpp"

namespace attn {
namespace {

/// Press et al.'s get_slopes_power_of_2(n), in doubles as Python computes it.
void slopes_power_of_2(std::int64_t n, std::vector<double>& into) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3.0)));
    const double ratio = start;
    for (std::int64_t i = 0; i < n; ++i) into.push_back(start * std::pow(ratio, static_cast<double>(i)));
}

/// Press et al.'s get_slopes(n), in doubles.
std::vector<double> slopes_in_doubles(std::int64_t n) {
    std::vector<double> slopes;
    const double log2n = std::log2(static_cast<double>(n));
    if (log2n == std::floor(log2n)) {
        slopes_power_of_2(n, slopes);
        return slopes;
    }
    const auto closest = static_cast<std::int64_t>(std::pow(2.0, std::floor(log2n)));
    slopes_power_of_2(closest, slopes);
    const std::vector<double> doubled = slopes_in_doubles(2 * closest);
    for (std::int64_t i = 0; i < n - closest; ++i) slopes.push_back(doubled[static_cast<std::size_t>(2 * i)]);  // [0::2][:n-closest]
    return slopes;
}

}  // namespace

rope_pairing rotation_pairing(const config& c) { return run_steps(c).pairing(c); }

rope_angles make_rope_angles(const config& c, std::int64_t first, std::size_t count, rope_pairing pairing) {
    const auto dk = static_cast<std::size_t>(c.head_dim()), half = dk / 2;
    const std::vector<float> inv = rope_inverse_frequencies(c.rope_base, dk, c.rope_scaling);
    rope_angles a{xt::xarray<float>::from_shape({count, dk}), xt::xarray<float>::from_shape({count, dk})};
    // emb [count,dk], laid out as torch's: half, cat((freqs, freqs), -1), i and i + dk/2;
    // interleaved, freqs.repeat_interleave(2, -1), 2i and 2i + 1. Held in a.sin until sin replaces it.
    xt::xarray<float>& emb = a.sin;
    for (std::size_t p = 0; p < count; ++p) {
        const auto t = static_cast<float>(first + static_cast<std::int64_t>(p));  // torch.arange(..).float()
        for (std::size_t i = 0; i < half; ++i) {
            const float angle = t * inv[i];  // torch.outer(t, inv_freq)
            emb(p, pairing == rope_pairing::half ? i : 2 * i) = angle;
            emb(p, pairing == rope_pairing::half ? i + half : 2 * i + 1) = angle;
        }
    }
    // emb.cos(), emb.sin() over emb itself, 8 elements at a time from its start, as torch maps
    // them: SLEEF's vector functions give an element's last bit by its neighbours (a lane past
    // 125 radians sends all 8 down the slow path), so the same angle may differ by 1 ulp
    // between [S,dk/2] and [S,dk]
    torch_cos(emb.data(), a.cos.data(), emb.size());
    torch_sin(emb.data(), a.sin.data(), emb.size());  // in place
    return a;
}

xt::xarray<float> rotate(const tensor& x, const rope_angles& angles, rope_pairing pairing) {
    const auto& shape = x.values.shape();
    const std::size_t B = shape[0], H = shape[1], S = shape[2], dk = shape[3], half = dk / 2;
    auto out = xt::xarray<float>::from_shape({B, H, S, dk});
    const float* cos = angles.cos.data();
    const float* sin = angles.sin.data();
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t s = 0; s < S; ++s) {
                const float* c_row = cos + s * dk;
                const float* s_row = sin + s * dk;
                float* o = &out(b, h, s, 0);
                for (std::size_t i = 0; i < half; ++i) {
                    // the pair (x0, x1) -> (x0·cos - x1·sin, x1·cos + x0·sin): x·cos, then rotated(x)·sin, then the sum
                    const std::size_t i0 = pairing == rope_pairing::half ? i : 2 * i;
                    const std::size_t i1 = pairing == rope_pairing::half ? i + half : 2 * i + 1;
                    const float x0 = x.values(b, h, s, i0), x1 = x.values(b, h, s, i1);
                    const float x0_cos = x0 * c_row[i0], minus_x1_sin = -x1 * s_row[i0];
                    const float x1_cos = x1 * c_row[i1], x0_sin = x0 * s_row[i1];
                    o[i0] = x0_cos + minus_x1_sin;
                    o[i1] = x1_cos + x0_sin;
                }
            }
    return out;
}

std::vector<float> alibi_slopes(std::int64_t heads) {
    std::vector<float> slopes;
    for (const double m : slopes_in_doubles(heads)) slopes.push_back(static_cast<float>(m));  // torch.Tensor(list)
    return slopes;
}

std::vector<float> run_alibi_slopes(const config& c) { return run_steps(c).slopes(c); }

xt::xarray<float> alibi_bias(const config& c) { return alibi_bias(c, run_alibi_slopes(c)); }

xt::xarray<float> alibi_bias(const config& c, const std::vector<float>& slopes) {
    const auto H = static_cast<std::size_t>(c.heads), Sq = static_cast<std::size_t>(c.seq),
               Sk = static_cast<std::size_t>(c.kv_seq);
    const std::int64_t first = first_query_position(c);
    auto bias = xt::xarray<float>::from_shape({1, H, Sq, Sk});
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < Sq; ++i)
            for (std::size_t j = 0; j < Sk; ++j)
                bias(0, h, i, j) = alibi_bias_at(slopes[h], first + static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
    return bias;
}

xt::xarray<float> sinusoidal_table(std::int64_t first, std::size_t count, std::size_t width) {
    // div_term = exp(arange(0, width, 2) * -(ln 10000 / width)): int64 times a Python float gives
    // float32, the scalar taken as float32 first; exp is SLEEF's (exp_shifted has its bits)
    const auto step = static_cast<float>(-(std::log(10000.0) / static_cast<double>(width)));
    std::vector<float> div_term(width / 2);
    for (std::size_t i = 0; i < div_term.size(); ++i) div_term[i] = static_cast<float>(2 * i) * step;
    exp_shifted(div_term.data(), div_term.size(), 0.0f);
    const std::size_t half = div_term.size();
    std::vector<float> angles(count * half), sin(count * half), cos(count * half);  // position * div_term
    for (std::size_t p = 0; p < count; ++p) {
        const auto position = static_cast<float>(first + static_cast<std::int64_t>(p));  // int64 -> float32
        for (std::size_t i = 0; i < half; ++i) angles[p * half + i] = position * div_term[i];
    }
    torch_sin(angles.data(), sin.data(), angles.size());
    torch_cos(angles.data(), cos.data(), angles.size());
    auto pe = xt::xarray<float>::from_shape({count, width});
    for (std::size_t p = 0; p < count; ++p)
        for (std::size_t i = 0; i < half; ++i) {
            pe(p, 2 * i) = sin[p * half + i];
            pe(p, 2 * i + 1) = cos[p * half + i];
        }
    return pe;
}

xt::xarray<float> add_positions(const xt::xarray<float>& x, const xt::xarray<float>& pe) {
    const auto& shape = x.shape();
    xt::xarray<float> out = xt::xarray<float>::from_shape({shape[0], shape[1], shape[2]});
    const std::size_t plane = shape[1] * shape[2];
    for (std::size_t b = 0; b < shape[0]; ++b)
        for (std::size_t e = 0; e < plane; ++e) out.data()[b * plane + e] = x.data()[b * plane + e] + pe.data()[e];
    return out;
}

}  // namespace attn
