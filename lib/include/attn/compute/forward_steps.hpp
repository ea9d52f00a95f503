#pragma once
// The steps of the forward pass that a deliberate mistake can replace, each a plain function,
// PyTorch's own by default. run_steps(c) gives a run's: the reference's, with one replaced by
// c's mistake (its row of the table in mistaken_steps.cpp). The forward pass calls these and
// never asks which mistake is on.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/linalg.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/plane_chain.hpp"
#include "attn/compute/positions.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

using dims = std::vector<std::string>;

/// nn.Linear: y[..., out] = x[..., in] · w[out,in]ᵀ + bias[out] on x's row-major elements.
using linear_step = xt::xarray<float> (*)(const float* x, const std::vector<std::size_t>& x_shape,
                                          const xt::xarray<float>& w, const xt::xarray<float>* bias);

/// A view of x's storage with `layout` (tensor.hpp's layout rules decide it), naming x by its
/// place in the trace ("projections.q").
tensor view_as(const stage& from, const tensor& x, std::string name, dims dim_names, const tensor_layout& layout);

/// Tensor i (q, k, v) of the transpose stage [B,heads,S,dk], from the projections [B,S,D] and
/// their view [B,S,heads,dk].
using heads_step = tensor (*)(const stage& projections, const stage& view, std::size_t i, std::size_t heads,
                              dims dim_names);

/// 5. transpose: view.transpose(1, 2), [B,S,H,dk] -> [B,H,S,dk], a view.
tensor heads_first(const stage& projections, const stage& view, std::size_t i, std::size_t heads, dims dim_names);

/// 13. merge: context.transpose(1, 2), [B,H,Sq,dk] -> [B,Sq,H,dk], a view.
tensor heads_back(const stage& context, dims dim_names);

/// The mask's rules as c.mask gives them (rules_of, queries from first_query_position).
mask_rules run_mask_rules(const config& c);

struct forward_steps {
    linear_step project = linear;         // 3. q, k, v (and the cache's k, v): x·Wᵀ + b
    heads_step transpose = heads_first;   // 5.
    rope_pairing (*pairing)(const config&) = [](const config& c) { return c.rope_style; };  // 5a. and the cache's keys
    std::int64_t (*rope_first)(const config&) = first_query_position;  // 5a. the new tokens' first position
    /// 5d. repeat_interleave(H/G, dim=1): query head h reads kv head h / (H/G).
    std::size_t (*kv_head_of)(std::size_t h, std::size_t H, std::size_t G) =
        [](std::size_t h, std::size_t H, std::size_t G) { return h / (H / G); };
    /// 6. which of q [B,H,Sq,dk] and k [B,H,Sk,dk] gives the scores' rows and which their columns: Q·Kᵀ.
    std::pair<const tensor*, const tensor*> (*score_operands)(const tensor& q, const tensor& k) =
        [](const tensor& q, const tensor& k) { return std::pair<const tensor*, const tensor*>{&q, &k}; };
    float (*divisor)(const config&) = [](const config& c) { return std::sqrt(static_cast<float>(c.head_dim())); };  // 7. √dk
    plane_step scale = scale_step;                            // 7.
    std::vector<float> (*slopes)(const config&) = [](const config& c) { return alibi_slopes(c.heads); };  // 7a. m_h
    void (*rules)(mask_rules&) = [](mask_rules&) {};          // 8. a change of run_mask_rules(c): none
    float (*fill)(const config&) = [](const config& c) { return c.fill; };  // 9.
    plane_step mask = mask_step;                              // 9.
    plane_step softmax = softmax_step;                        // 10.
    dropout_scales (*dropout)(double p) = reference_dropout_scales;  // 11.
    plane_step context = context_step;                        // 12.
    tensor (*merge)(const stage& context, dims dim_names) = heads_back;  // 13.
    linear_step project_output = linear;  // 15. concat·W_oᵀ + b_o
};

/// The steps of a run of `c`: the reference's, with c.mistake's (way c.mistake_variant) in place
/// of the step it replaces (the table in mistaken_steps.cpp, one row per mistake).
forward_steps run_steps(const config& c);

}  // namespace attn
