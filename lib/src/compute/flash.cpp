// Stage 23: flash attention's online softmax over blocks of keys (flash.hpp).
#include "attn/compute/flash.hpp"
#include "attn/compute/positions.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "attn/compute/linalg.hpp"
#include "attn/compute/torch_exp.hpp"

namespace attn {
namespace {

/// e^(x - shift) with torch.exp's bits (Sleef's expf, as exp_shifted).
float exp_of_difference(float x, float shift) {
    exp_shifted(&x, 1, shift);
    return x;
}

/// S_j [Sq,n] of plane (b, h) for keys [first, first + n): Q·K_jᵀ / divisor   [Sq,dk] · [dk,n] -> [Sq,n],
/// + the ALiBi bias before the mask (as biased comes before masked), the fill where the mask is false.
void key_block_scores(const flash_inputs& in, std::size_t b, std::size_t h, const float* q, const float* k_block,
                      std::size_t first, std::size_t n, float* scores, bool* made) {
    const std::size_t Sq = in.q->values.shape()[2], dk = in.q->values.shape()[3];
    bmm_rows(q, k_block, scores, Sq, n, dk, true, Sq);
    for (std::size_t e = 0; e < Sq * n; ++e) scores[e] = scores[e] / in.divisor;
    if (in.alibi_slopes != nullptr)
        for (std::size_t i = 0; i < Sq; ++i)
            for (std::size_t c = 0; c < n; ++c)
                scores[i * n + c] += alibi_bias_at(in.alibi_slopes[h], in.first_query_position + static_cast<std::int64_t>(i),
                                                   static_cast<std::int64_t>(first + c));
    if (in.mask != nullptr)
        for (std::size_t i = 0; i < Sq; ++i) {
            const bool* allowed = in.mask->row(b, i, made);
            for (std::size_t c = 0; c < n; ++c)
                if (!allowed[first + c]) scores[i * n + c] = in.fill;
        }
}

}  // namespace

std::vector<tensor> flash_attention(const flash_inputs& in) {
    const std::size_t B = in.q->values.shape()[0], H = in.q->values.shape()[1], Sq = in.q->values.shape()[2],
                      dk = in.q->values.shape()[3], Sk = in.k->values.shape()[2];
    const std::size_t N = std::max<std::size_t>(in.block, 1), nb = (Sk + N - 1) / N;
    constexpr float minus_inf = -std::numeric_limits<float>::infinity();
    auto m = xt::xarray<float>::from_shape({B, H, Sq, nb});
    auto l = xt::xarray<float>::from_shape({B, H, Sq, nb});
    auto rescale = xt::xarray<float>::from_shape({B, H, Sq, nb});
    auto acc = xt::xarray<float>::from_shape({B, H, Sq, nb, dk});
    auto context = xt::xarray<float>::from_shape({B, H, Sq, dk});

    std::vector<float> scores(Sq * N), products(Sq * dk), m_now(Sq), l_now(Sq), acc_now(Sq * dk);
    std::vector<float> q_scratch, k_scratch, v_scratch;  // a plane of q, k, v when not row-major already
    std::unique_ptr<bool[]> made(new bool[Sk]);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h) {
            const std::size_t plane = b * H + h;
            const float* q = row_major_rows(*in.q, b, h, 0, Sq, q_scratch);  // [Sq,dk]
            const float* k = row_major_rows(*in.k, b, h, 0, Sk, k_scratch);  // [Sk,dk]
            const float* v = row_major_rows(*in.v, b, h, 0, Sk, v_scratch);  // [Sk,dk]
            std::fill(m_now.begin(), m_now.end(), minus_inf);  // m = -inf, l = 0, acc = 0 before the first block
            std::fill(l_now.begin(), l_now.end(), 0.0f);
            std::fill(acc_now.begin(), acc_now.end(), 0.0f);
            for (std::size_t j = 0; j < nb; ++j) {
                const std::size_t first = j * N, n = std::min(N, Sk - first);
                // S_j = Q·K_jᵀ / divisor (+ bias), the fill where the mask is false   [Sq,n]
                key_block_scores(in, b, h, q, k + first * dk, first, n, scores.data(), made.get());
                // m_new = max(m_old, rowmax(S_j)); P_j = e^(S_j - m_new) in place; rowsum left to right
                for (std::size_t i = 0; i < Sq; ++i) {
                    float* row = scores.data() + i * n;
                    const float m_old = m_now[i];
                    float m_new = m_old;
                    for (std::size_t c = 0; c < n; ++c) m_new = std::max(m_new, row[c]);
                    const float shift = m_new == minus_inf ? 0.0f : m_new;  // all masked so far: e^(-inf - 0) = 0, not NaN
                    const float r = exp_of_difference(m_old, shift);
                    exp_shifted(row, n, shift);
                    float row_sum = 0.0f;
                    for (std::size_t c = 0; c < n; ++c) row_sum = row_sum + row[c];
                    const float l_scaled = r * l_now[i];
                    l_now[i] = l_scaled + row_sum;
                    m_now[i] = m_new;
                    const std::size_t at = (plane * Sq + i) * nb + j;
                    m.data()[at] = m_new;
                    l.data()[at] = l_now[i];
                    rescale.data()[at] = r;
                }
                // acc = rescale·acc + P_j·V_j   [Sq,n] · [n,dk] -> [Sq,dk]
                bmm_rows(scores.data(), v + first * dk, products.data(), Sq, dk, n, false, Sq);
                for (std::size_t i = 0; i < Sq; ++i) {
                    const float r = rescale.data()[(plane * Sq + i) * nb + j];
                    float* acc_row = acc_now.data() + i * dk;
                    for (std::size_t d = 0; d < dk; ++d) {
                        const float scaled = r * acc_row[d];
                        acc_row[d] = scaled + products[i * dk + d];
                    }
                    std::copy(acc_row, acc_row + dk, acc.data() + ((plane * Sq + i) * nb + j) * dk);
                }
            }
            // context = acc / l; l = 0 (no allowed key) divides by 1: acc is 0 there
            for (std::size_t i = 0; i < Sq; ++i) {
                const float divide_by = l_now[i] == 0.0f ? 1.0f : l_now[i];
                for (std::size_t d = 0; d < dk; ++d)
                    context.data()[(plane * Sq + i) * dk + d] = acc_now[i * dk + d] / divide_by;
            }
        }
    const std::vector<std::string> per_block{"batch", "head", "query", "block"};
    return {tensor("m", per_block, std::move(m)), tensor("l", per_block, std::move(l)),
            tensor("rescale", per_block, std::move(rescale)),
            tensor("acc", {"batch", "head", "query", "block", "head_dim"}, std::move(acc)),
            tensor("context", {"batch", "head", "seq", "head_dim"}, std::move(context))};
}

double max_abs_difference(const tensor& flash_context, const tensor& exact_context) {
    if (flash_context.values.shape() != exact_context.values.shape()) return std::numeric_limits<double>::infinity();
    const xt::xarray<float> a = row_major_copy(flash_context), b = row_major_copy(exact_context);
    double largest = 0.0;
    for (std::size_t e = 0; e < a.size(); ++e)
        if (!std::isnan(a.data()[e]) && !std::isnan(b.data()[e]))
            largest = std::max(largest, std::fabs(static_cast<double>(a.data()[e]) - b.data()[e]));
    return largest;
}

double flash_tolerance(const tensor& v) {
    const xt::xarray<float> values = row_major_copy(v);
    double largest = 1.0;
    for (std::size_t e = 0; e < values.size(); ++e)
        if (std::isfinite(values.data()[e])) largest = std::max(largest, std::fabs(static_cast<double>(values.data()[e])));
    return 1e-5 * largest;
}

}  // namespace attn
