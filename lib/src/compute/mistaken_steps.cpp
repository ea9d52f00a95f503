// The deliberate mistakes (mistake.hpp) as the steps of forward_steps.hpp they replace: the
// wrong steps, each the reference's written as a learner gets it wrong, and the table of
// which step each mistake swaps in, from which run_steps makes a run's steps.
#include "attn/compute/forward_steps.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmanipulation.hpp>

#include "attn/compute/mistake.hpp"

namespace attn {
namespace {

/// fn(row [W], allowed [W] or null, b) for each row of each plane of `block`, the row first
/// copied from the block's source when it has one.
template <typename Fn>
void each_row(const plane_chain& chain, const rows_block& block, Fn fn) {
    const std::size_t width = chain.width;
    std::unique_ptr<bool[]> scratch(new bool[std::max<std::size_t>(width, 1)]);
    for (std::size_t p = 0; p < block.planes; ++p)
        for (std::size_t r = 0; r < block.rows; ++r) {
            const std::size_t at = (p * block.rows + r) * width;
            float* row = block.data + at;
            if (block.source != nullptr) std::copy(block.source + at, block.source + at + width, row);
            const std::size_t b = (block.first_plane + p) / chain.heads;
            fn(row, chain.mask != nullptr ? chain.mask->row(b, block.first_row + r, scratch.get()) : nullptr);
        }
}

/// softmax over axis `axis` of the whole [B,H,R,W] block: that axis swapped to the end,
/// softmax, swapped back, written into the block's memory.
void softmax_over_axis(const plane_chain& chain, const rows_block& block, std::size_t axis) {
    const std::vector<std::size_t> shape{chain.batch, chain.heads, chain.rows, chain.width};
    const std::size_t n = chain.planes() * chain.rows * chain.width;
    if (block.source != nullptr) std::copy(block.source, block.source + n, block.data);
    const xt::xarray<float> whole = xt::adapt(block.data, n, xt::no_ownership(), shape);
    std::vector<std::size_t> order{0, 1, 2, 3};
    std::swap(order[axis], order[3]);
    xt::xarray<float> moved = xt::transpose(whole, order);
    softmax_last_axis(moved);
    const xt::xarray<float> back = xt::transpose(moved, order);  // a swap of two axes undoes itself
    std::copy(back.begin(), back.end(), block.data);
}

// 3, 15. projections

/// weight_not_transposed: x·W + b, nn.Linear's W [out,in] read as if it were [in,out]
/// ([rows,in] · [in,out]: only when in == out, mistake_problem).
xt::xarray<float> linear_untransposed(const float* x, const std::vector<std::size_t>& x_shape,
                                      const xt::xarray<float>& w, const xt::xarray<float>* bias) {
    const std::size_t in = w.shape()[0], out = w.shape()[1];  // W's axes taken the wrong way round
    std::size_t rows = 1;
    for (std::size_t a = 0; a + 1 < x_shape.size(); ++a) rows *= x_shape[a];
    auto y_shape = x_shape;
    y_shape.back() = out;
    auto y = xt::xarray<float>::from_shape(y_shape);
    matmul(x, w.data(), y.data(), rows, out, in, false);  // [rows,in] · [in,out], W not transposed
    if (bias != nullptr)
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t o = 0; o < out; ++o) y.data()[r * out + o] += bias->data()[o];
    return y;
}

/// missing_bias: x·Wᵀ, the bias left out.
xt::xarray<float> linear_without_bias(const float* x, const std::vector<std::size_t>& x_shape,
                                      const xt::xarray<float>& w, const xt::xarray<float>*) {
    return linear(x, x_shape, w, nullptr);
}

// 5. transpose

/// split_without_transpose: projections.q.view(B,H,S,dk), each "head" S/H positions' full width.
tensor split_by_plain_view(const stage& projections, const stage&, std::size_t i, std::size_t heads, dims dim_names) {
    const tensor& x = projections.tensors[i];
    const auto& size = x.values.shape();
    return view_as(projections, x, x.name, std::move(dim_names),
                   contiguous_layout({size[0], heads, size[1], size[2] / heads}));  // [B,H,S,dk]
}

/// heads_interleaved: q.view(B,S,dk,H).permute(0,3,1,2), head h takes features h, h + H, ...:
// [B,S,D] with strides [s0,s1,s2] -> [B,S,dk,H] [s0,s1,H·s2,s2] -> [B,H,S,dk] [s0,s2,s1,H·s2], a view
tensor split_interleaved(const stage& projections, const stage&, std::size_t i, std::size_t heads, dims dim_names) {
    const tensor& x = projections.tensors[i];
    const auto& size = x.values.shape();
    const auto h = static_cast<std::ptrdiff_t>(heads);
    const tensor_layout layout{{size[0], heads, size[1], size[2] / heads},
                               {x.strides[0], x.strides[2], x.strides[1], h * x.strides[2]}};
    return view_as(projections, x, x.name, std::move(dim_names), layout);
}

// 7. scaled: wrong_scale's divisors √D, D and dk; scale_multiplied, scores · √dk
float sqrt_model_width(const config& c) { return std::sqrt(static_cast<float>(c.d_model)); }
float model_width(const config& c) { return static_cast<float>(c.d_model); }
float head_width(const config& c) { return static_cast<float>(c.head_dim()); }

void scale_multiplied_step(const plane_chain& chain, const rows_block& block) {
    const std::size_t n = block.planes * block.rows * chain.width;
    const float* in = block.source != nullptr ? block.source : block.data;
    for (std::size_t e = 0; e < n; ++e) block.data[e] = in[e] * chain.divisor;  // scores * math.sqrt(dk)
}

// 9. masked: mask_not_applied and masked_after_softmax, masked = scaled
void unmasked_step(const plane_chain& chain, const rows_block& block) {
    if (block.source != nullptr) std::copy_n(block.source, block.planes * block.rows * chain.width, block.data);
}

// 10. softmax: log_softmax, sigmoid, nan_to_num after softmax, masked_fill after softmax; softmax_axis
// on the whole tensor [B,H,Sq,Sk] (plan_memory keeps it whole for this) over the queries or the heads

void log_softmax_step(const plane_chain& chain, const rows_block& block) {
    const std::size_t width = chain.width;
    each_row(chain, block, [&](float* row, const bool*) {  // torch.log_softmax: x - max - log(sum(exp(x - max)))
        float top = -std::numeric_limits<float>::infinity();
        for (std::size_t j = 0; j < width; ++j) top = std::max(top, row[j]);
        float sum = 0.0f;
        for (std::size_t j = 0; j < width; ++j) sum += std::exp(row[j] - top);
        const float log_sum = std::log(sum);
        for (std::size_t j = 0; j < width; ++j) row[j] = row[j] - top - log_sum;
    });
}

void sigmoid_step(const plane_chain& chain, const rows_block& block) {
    const std::size_t width = chain.width;
    each_row(chain, block, [&](float* row, const bool*) {  // torch.sigmoid: each score on its own
        for (std::size_t j = 0; j < width; ++j) row[j] = 1.0f / (1.0f + std::exp(-row[j]));
    });
}

void nan_to_num_softmax_step(const plane_chain& chain, const rows_block& block) {
    const std::size_t width = chain.width;
    each_row(chain, block, [&](float* row, const bool*) {  // torch.nan_to_num(softmax(...)): a fully masked row 0
        softmax_rows(row, 1, width);
        for (std::size_t j = 0; j < width; ++j)
            if (std::isnan(row[j])) row[j] = 0.0f;
    });
}

void masked_after_softmax_step(const plane_chain& chain, const rows_block& block) {
    const std::size_t width = chain.width;
    each_row(chain, block, [&](float* row, const bool* allowed) {  // softmax(scaled).masked_fill(mask == 0, 0)
        softmax_rows(row, 1, width);
        if (allowed != nullptr)
            for (std::size_t j = 0; j < width; ++j)
                if (!allowed[j]) row[j] = 0.0f;
    });
}

void softmax_over_queries_step(const plane_chain& chain, const rows_block& block) { softmax_over_axis(chain, block, 2); }
void softmax_over_heads_step(const plane_chain& chain, const rows_block& block) { softmax_over_axis(chain, block, 1); }

// 12. context: weights_transposed, weights.transpose(-2, -1) @ v on each whole plane (Sq == Sk)
void transposed_weights_context_step(const plane_chain& chain, const rows_block& block) {
    const std::size_t head_dim = chain.values->values.shape()[3], w = chain.width;
    for_each_plane(chain, block, [&](const plane_block& b) {
        thread_local std::vector<float> value_scratch, transposed;
        const float* v_plane = row_major_rows(*chain.values, b.batch, b.head, 0, w, value_scratch);
        float* out = block.context + ((b.batch * chain.heads + b.head) * chain.rows + b.first_row) * head_dim;
        transposed.resize(w * w);  // weights.transpose(-2, -1), a contiguous copy as matmul makes
        for (std::size_t i = 0; i < w; ++i)
            for (std::size_t j = 0; j < w; ++j) transposed[j * w + i] = b.data[i * w + j];
        bmm_rows(transposed.data(), v_plane, out, w, head_dim, w, false, chain.rows);
    }, {chain.rows, head_dim, w});
}

// 13. merge: merge_without_transpose, context.view(B,Sq,H,dk), the storage read straight on
tensor merge_by_plain_view(const stage& context, dims dim_names) {
    const tensor& x = context.tensors[0];
    const auto& s = x.values.shape();
    return view_as(context, x, "context", std::move(dim_names), contiguous_layout({s[0], s[2], s[1], s[3]}));
}

/// The step mistake `m` replaces (forward_steps.hpp), made in way `way`.
struct replacement {
    mistake m;
    void (*replace)(forward_steps& steps, int way);
};

using S = forward_steps&;

/// The projections' mistakes: ways 0 and 1 in q, k, v, ways 1 and 2 in the output.
template <linear_step wrong>
void in_projections(S s, int way) {
    if (way <= 1) s.project = wrong;
    if (way >= 1) s.project_output = wrong;
}

// clang-format off
constexpr std::array<replacement, mistake_count> replacements{{
    {mistake::none, [](S, int) {}},
    {mistake::softmax_axis, [](S s, int way) { s.softmax = way == 0 ? softmax_over_queries_step : softmax_over_heads_step; }},
    {mistake::missing_scale, [](S s, int) { s.divisor = [](const config&) { return 1.0f; }; }},
    {mistake::wrong_scale, [](S s, int way) { s.divisor = way == 0 ? sqrt_model_width : way == 1 ? model_width : head_width; }},
    {mistake::mask_inverted, [](S s, int) { s.rules = [](mask_rules& r) { r.inverted = true; }; }},
    {mistake::fill_value, [](S s, int way) {  // mistaken_fill
         s.fill = way == 0 ? +[](const config& c) { return mistaken_fill(c, 0); } : +[](const config& c) { return mistaken_fill(c, 1); };
     }},
    {mistake::split_without_transpose, [](S s, int) { s.transpose = split_by_plain_view; }},
    {mistake::merge_without_transpose, [](S s, int) { s.merge = merge_by_plain_view; }},
    {mistake::weight_not_transposed, in_projections<linear_untransposed>},
    {mistake::q_k_swapped, [](S s, int) {  // K·Qᵀ: the keys give the rows
         s.score_operands = [](const tensor& q, const tensor& k) { return std::pair<const tensor*, const tensor*>{&k, &q}; };
     }},
    {mistake::missing_bias, in_projections<linear_without_bias>},
    {mistake::dropout_not_rescaled, [](S s, int) { s.dropout = [](double) { return dropout_scales{1.0f, 0.0f}; }; }},
    {mistake::dropout_keep_inverted, [](S s, int) {  // weights · ~keep / (1 - p)
         s.dropout = [](double p) { return dropout_scales{0.0f, reference_dropout_scales(p).kept}; };
     }},
    {mistake::weights_transposed, [](S s, int) { s.context = transposed_weights_context_step; }},
    {mistake::mask_not_applied, [](S s, int) { s.mask = unmasked_step; }},
    {mistake::mask_or_instead_of_and, [](S s, int) { s.rules = [](mask_rules& r) { r.any_of = true; }; }},
    {mistake::causal_only, [](S s, int) { s.rules = [](mask_rules& r) { r.padding = r.window = false; }; }},
    {mistake::padding_only, [](S s, int) { s.rules = [](mask_rules& r) { r.causal = r.window = false; }; }},
    {mistake::padding_on_queries, [](S s, int) { s.rules = [](mask_rules& r) { r.padding_on_queries = true; }; }},
    {mistake::diagonal_masked, [](S s, int) { s.rules = [](mask_rules& r) { r.diagonal -= 1; }; }},  // torch.tril(ones, -1)
    {mistake::window_off_by_one, [](S s, int way) {  // |i - j| < W, or <= W + 1
         s.rules = way == 0 ? +[](mask_rules& r) { r.window_size -= 1; } : +[](mask_rules& r) { r.window_size += 1; };
     }},
    {mistake::masked_after_softmax, [](S s, int) { s.mask = unmasked_step, s.softmax = masked_after_softmax_step; }},
    {mistake::nan_replaced, [](S s, int) { s.softmax = nan_to_num_softmax_step; }},
    {mistake::log_softmax, [](S s, int) { s.softmax = log_softmax_step; }},
    {mistake::sigmoid_instead_of_softmax, [](S s, int) { s.softmax = sigmoid_step; }},
    {mistake::scale_multiplied, [](S s, int) { s.scale = scale_multiplied_step; }},
    {mistake::heads_interleaved, [](S s, int) { s.transpose = split_interleaved; }},
    {mistake::causal_misaligned, [](S s, int) {  // the other alignment
         s.rules = [](mask_rules& r) { r.diagonal = r.diagonal == 0 ? r.sk - r.sq : 0; };
     }},
    {mistake::kv_heads_tiled, [](S s, int) {  // k.repeat(1, H/G, 1, 1): query head h reads kv head h % G
         s.kv_head_of = [](std::size_t h, std::size_t, std::size_t G) { return h % G; };
     }},
    {mistake::rope_positions_from_zero, [](S s, int) { s.rope_first = [](const config&) { return std::int64_t{0}; }; }},
    {mistake::rope_pairs_mixed, [](S s, int) {  // the other pairing, for the cache's keys too
         s.pairing = [](const config& c) { return c.rope_style == rope_pairing::half ? rope_pairing::interleaved : rope_pairing::half; };
     }},
    {mistake::alibi_sign, [](S s, int) {  // -m·(j - i) = m·(i - j): the far keys favoured (and biased adds it)
         s.slopes = [](const config& c) {
             std::vector<float> slopes = alibi_slopes(c.heads);
             for (float& m : slopes) m = -m;
             return slopes;
         };
     }},
}};
// clang-format on

/// Whether row i of `replacements` is mistake i's.
constexpr bool one_row_per_mistake() {
    for (std::size_t i = 0; i < mistake_count; ++i)
        if (replacements[i].m != static_cast<mistake>(i)) return false;
    return true;
}
static_assert(one_row_per_mistake(), "every mistake has its row of replacements, in mistake's order");

}  // namespace

forward_steps run_steps(const config& c) {
    forward_steps steps;
    replacements[static_cast<std::size_t>(c.mistake)].replace(steps, c.mistake_variant);
    return steps;
}

}  // namespace attn
