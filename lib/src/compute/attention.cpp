// Multi-head attention, one block per stage of CLI.md's table, in order.
//
// Dimension key: B batch, Sq query length, Sk key length, Din/Dkv input widths,
// D model width, H heads, dk = D / H head width. Shapes in PyTorch order.
#include "attn/compute/attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xmanipulation.hpp>

#include "attn/teach/advice.hpp"
#include "attn/compute/dropout.hpp"
#include "attn/compute/linalg.hpp"
#include "attn/compute/mask.hpp"
#include "attn/teach/mistake_text.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {
namespace {

using dims = std::vector<std::string>;

tensor named(std::string name, dims dim_names, xt::xarray<float> values,
             element_type type = element_type::float32) {
    return tensor(std::move(name), std::move(dim_names), std::move(values), type);
}

tensor named(std::string name, dims dim_names, tensor_storage values) {
    return tensor(std::move(name), std::move(dim_names), std::move(values));
}

/// Appends a stage and tells the caller it is complete; returns it so the
/// next stage can read its tensors.
const stage& add_stage(trace& t, std::string_view name, std::vector<tensor> tensors, const stage_callback& on_stage) {
    t.stages.push_back(stage{find_stage_info(name), stage_formula(t.cfg, name), std::move(tensors)});
    if (on_stage) on_stage(t, t.stages.back());
    return t.stages.back();
}

/// "projections.q": where a stage tensor stands in the trace.
std::string path_of(const stage& s, const tensor& x) { return std::string(s.name()) + "." + x.name; }

// x.view(B,S,H,dk): [B,S,D] -> [B,S,H,dk], the last axis read as H rows of dk in x's
// storage: strides [S*D, D, 1] -> [S*D, D, dk, 1] (x is contiguous, as PyTorch's view needs).
tensor split_heads(const stage& from, const tensor& x, std::size_t heads, dims dim_names) {
    const auto& size = x.values.shape();
    const auto& stride = x.strides;
    const std::size_t head_dim = size[2] / heads;
    return as_strided(x, path_of(from, x), x.name, std::move(dim_names), {size[0], size[1], heads, head_dim},
                      {stride[0], stride[1], stride[2] * static_cast<std::ptrdiff_t>(head_dim), stride[2]});
}

// x.transpose(1, 2): [B,S,H,dk] <-> [B,H,S,dk], axes 1 and 2 swap their sizes and
// strides over the same storage ([S*D, D, dk, 1] <-> [S*D, dk, D, 1]).
tensor swap_axes_1_2(const stage& from, const tensor& x, dims dim_names) {
    const auto& size = x.values.shape();
    const auto& stride = x.strides;
    return as_strided(x, path_of(from, x), x.name, std::move(dim_names), {size[0], size[2], size[1], size[3]},
                      {stride[0], stride[2], stride[1], stride[3]});
}

// x.contiguous().view(shape): when x is contiguous already, .contiguous() returns x itself
// and the result is a view of its storage; else x's elements are copied, in row-major
// order, into storage of the result's own.
tensor contiguous_view(const stage& from, const tensor& x, std::string name, dims dim_names,
                       const tensor_shape& shape) {
    if (x.contiguous())
        return as_strided(x, path_of(from, x), std::move(name), std::move(dim_names), shape, contiguous_strides(shape));
    xt::xarray<float> copy = x.values;  // the elements in row-major order
    copy.reshape(shape);
    return named(std::move(name), std::move(dim_names), std::move(copy));
}

// Block (b, h) of a [B,H,R,C] tensor as a row-major [R,C] array: in place when its rows
// lie in storage one after another, else copied into `scratch`. torch.matmul makes the
// same contiguous copy of an operand bmm cannot read in place (here a block at a time,
// and not kept).
const float* row_major_block(const tensor& t, std::size_t b, std::size_t h, std::vector<float>& scratch) {
    const std::size_t rows = t.values.shape()[2], cols = t.values.shape()[3];
    const std::ptrdiff_t row_step = t.strides[2], col_step = t.strides[3];
    const float* block = t.values.data() + static_cast<std::ptrdiff_t>(b) * t.strides[0] +
                         static_cast<std::ptrdiff_t>(h) * t.strides[1];
    const bool in_place = (cols <= 1 || col_step == 1) && (rows <= 1 || row_step == static_cast<std::ptrdiff_t>(cols));
    if (in_place) return block;
    scratch.resize(rows * cols);
    for (std::size_t i = 0; i < rows; ++i) {
        const float* row = block + static_cast<std::ptrdiff_t>(i) * row_step;
        for (std::size_t j = 0; j < cols; ++j) scratch[i * cols + j] = row[static_cast<std::ptrdiff_t>(j) * col_step];
    }
    return scratch.data();
}

// [B,H,M,K] · [B,H,K,N] -> [B,H,M,N], or · [B,H,N,K]ᵀ when b_transposed:
// one product per (batch, head) on row-major 2-D blocks, as torch.bmm.
xt::xarray<float> matmul_per_head(const tensor& a, const tensor& b, bool b_transposed) {
    const std::size_t batch = a.values.shape()[0], heads = a.values.shape()[1];
    const std::size_t m = a.values.shape()[2], k = a.values.shape()[3];
    const std::size_t n = b_transposed ? b.values.shape()[2] : b.values.shape()[3];
    auto c = xt::xarray<float>::from_shape({batch, heads, m, n});
    std::vector<float> a_scratch, b_scratch;
    for (std::size_t i = 0; i < batch; ++i)
        for (std::size_t h = 0; h < heads; ++h)
            bmm_item(row_major_block(a, i, h, a_scratch), row_major_block(b, i, h, b_scratch),
                     c.data() + (i * heads + h) * m * n, m, n, k, b_transposed);
    return c;
}

// masked[b,h,i,j] = mask[b,0,i,j] ? scaled[b,h,i,j] : fill   (mask broadcast over heads)
xt::xarray<float> apply_mask(const xt::xarray<float>& scaled, const xt::xarray<bool>& mask, float fill) {
    xt::xarray<float> masked = scaled;
    const std::size_t batch = scaled.shape()[0], heads = scaled.shape()[1];
    const std::size_t plane = scaled.shape()[2] * scaled.shape()[3];  // Sq*Sk
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < heads; ++h) {
            float* out = masked.data() + (b * heads + h) * plane;
            const bool* allowed = mask.data() + b * plane;
            for (std::size_t e = 0; e < plane; ++e)
                if (!allowed[e]) out[e] = fill;
        }
    return masked;
}

// Up to this many rows with no allowed key get a warning each; more get one that lists them.
constexpr std::size_t rows_named_one_by_one = 3;

/// The (batch, query) rows of `mask` [B,1,Sq,Sk] in which no key may be attended.
std::vector<std::pair<std::size_t, std::size_t>> empty_rows(const xt::xarray<bool>& mask) {
    const std::size_t batch = mask.shape()[0], sq = mask.shape()[2], sk = mask.shape()[3];
    std::vector<std::pair<std::size_t, std::size_t>> rows;
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* row = mask.data() + (b * sq + i) * sk;
            if (std::find(row, row + sk, true) == row + sk) rows.emplace_back(b, i);
        }
    return rows;
}

/// weights[b,h,i,:] = 0 for every row i of batch item b in which mask [B,1,Sq,Sk]
/// allows no key (--safe-softmax with a finite fill, whose softmax is uniform).
void zero_rows_without_key(xt::xarray<float>& weights, const xt::xarray<bool>& mask) {
    const std::size_t heads = weights.shape()[1], sq = weights.shape()[2], sk = weights.shape()[3];
    for (const auto& [b, i] : empty_rows(mask))
        for (std::size_t h = 0; h < heads; ++h) {
            float* row = weights.data() + ((b * heads + h) * sq + i) * sk;
            std::fill(row, row + sk, 0.0f);
        }
}

/// Warnings about the rows in which no key may be attended: one per row when
/// there are few ("batch 1, query 3: no key may be attended, so its weights are
/// NaN (fill -inf)", or "0 (--safe-softmax)"), else one that names them,
/// consecutive rows of a batch item as a range ("batch 1 queries 0..3, batch 2
/// query 5"), the first eight ranges.
void warn_empty_rows(const xt::xarray<bool>& mask, const config& c, warning_list& out) {
    const auto rows = empty_rows(mask);
    if (rows.empty()) return;
    // what softmax makes of such a row: 0 with --safe-softmax, else NaN for -inf, uniform for a finite fill
    const std::string becomes = c.safe_softmax ? "0 (--safe-softmax)"
                                : std::isinf(c.fill) ? "NaN (fill " + fill_text(c) + ")"
                                                     : "uniform (fill " + fill_text(c) + ")";
    if (rows.size() <= rows_named_one_by_one) {
        for (const auto& [b, i] : rows)
            out.push_back({"softmax", "batch " + std::to_string(b) + ", query " + std::to_string(i) +
                                          ": no key may be attended, so its weights are " + becomes});
        return;
    }
    std::string names;
    std::size_t runs = 0;
    for (std::size_t k = 0; k < rows.size();) {
        std::size_t last = k;  // rows[k..last]: consecutive queries of one batch item
        while (last + 1 < rows.size() && rows[last + 1].first == rows[k].first &&
               rows[last + 1].second == rows[last].second + 1)
            ++last;
        if (++runs <= 8) {
            const std::string first = std::to_string(rows[k].second);
            names += (runs > 1 ? ", batch " : "batch ") + std::to_string(rows[k].first) +
                     (last == k ? " query " + first : " queries " + first + ".." + std::to_string(rows[last].second));
        }
        k = last + 1;
    }
    if (runs > 8) names += ", ... (" + std::to_string(rows.size()) + " rows in all)";
    out.push_back({"softmax", "no key may be attended in " + names + ": their weights are " +
                                  (c.safe_softmax       ? std::string("0 (--safe-softmax)")
                                   : std::isinf(c.fill) ? std::string("NaN (the fill is -inf; PyTorch gives NaN too)")
                                                        : "uniform (the fill " + fill_text(c) + " is finite)")});
}

// --- the mistakes (attn trace --mistake ID), each made on purpose at one stage ---

/// Whether the run makes mistake `m` (in any of its ways).
bool makes(const config& c, mistake m) { return c.mistake == m; }

/// Whether the run makes `m` (weight_not_transposed or missing_bias) in the q, k, v
/// projections (ways 0 and 1) or in the output projection (ways 1 and 2).
bool makes_in_projection(const config& c, mistake m, bool output) {
    return c.mistake == m && (output ? c.mistake_variant >= 1 : c.mistake_variant <= 1);
}

/// weight_not_transposed: y = x·W + b, nn.Linear's W [out,in] read as if it were [in,out]
/// (x @ W instead of x @ W.T). [rows,in] · [in,out]: only when in == out (mistake_problem).
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

/// One projection as this run makes it: nn.Linear's x·Wᵀ + b, or with --mistake
/// weight_not_transposed x·W + b, or with --mistake missing_bias x·Wᵀ (no bias).
xt::xarray<float> project(const config& c, bool output, const float* x, const std::vector<std::size_t>& x_shape,
                          const xt::xarray<float>& w, const xt::xarray<float>* bias) {
    if (makes_in_projection(c, mistake::missing_bias, output)) bias = nullptr;  // the bias left out
    if (makes_in_projection(c, mistake::weight_not_transposed, output))
        return linear_untransposed(x, x_shape, w, bias);
    return linear(x, x_shape, w, bias);
}

xt::xarray<float> project(const config& c, const xt::xarray<float>& x, const xt::xarray<float>& w,
                          const xt::xarray<float>* bias) {
    return project(c, false, x.data(), {x.shape().begin(), x.shape().end()}, w, bias);
}

/// What stage 7 divides the scores by: √dk; with --mistake missing_scale 1 (no scaling),
/// with --mistake wrong_scale √D (way 0), D (1) or dk (2).
float score_divisor(const config& c) {
    if (makes(c, mistake::missing_scale)) return 1.0f;
    if (makes(c, mistake::wrong_scale)) {
        if (c.mistake_variant == 0) return std::sqrt(static_cast<float>(c.d_model));
        return static_cast<float>(c.mistake_variant == 1 ? c.d_model : c.head_dim());
    }
    return std::sqrt(static_cast<float>(c.head_dim()));
}

/// --mistake softmax_axis: softmax over `axis` of [B,H,Sq,Sk] (2, the queries, or 1, the
/// heads) instead of the last: that axis swapped to the end, softmax, swapped back.
void softmax_over_axis(xt::xarray<float>& x, std::size_t axis) {
    std::vector<std::size_t> order{0, 1, 2, 3};
    std::swap(order[axis], order[3]);
    xt::xarray<float> moved = xt::transpose(x, order);
    softmax_last_axis(moved);
    x = xt::transpose(moved, order);  // a swap of two axes undoes itself
}

/// --mistake split_without_transpose: q.view(B,H,S,dk) straight from [B,S,D], so each
/// "head" holds S/H consecutive positions' full width, not one slice of every position.
tensor split_by_plain_view(const stage& from, const tensor& x, std::size_t heads, dims dim_names) {
    const auto& size = x.values.shape();
    const tensor_shape shape{size[0], heads, size[1], size[2] / heads};  // [B,H,S,dk]
    return as_strided(x, path_of(from, x), x.name, std::move(dim_names), shape, contiguous_strides(shape));
}

// --- the stages

const xt::xarray<float>* present(const optional_tensor& v) { return v ? &*v : nullptr; }

/// The params stage: w_q b_q w_k b_k w_v b_v w_o b_o, leaving out those that are absent.
std::vector<tensor> param_tensors(const parameters& p) {
    std::vector<tensor> params;
    const auto add = [&](const char* name, const xt::xarray<float>* v, dims d) {
        if (v) params.push_back(named(name, std::move(d), *v));
    };
    add("w_q", &p.w_q, {"d_model", "d_in"});        // [D,Din]
    add("b_q", present(p.b_q), {"d_model"});        // [D]
    add("w_k", &p.w_k, {"d_model", "d_kv_in"});     // [D,Dkv]
    add("b_k", present(p.b_k), {"d_model"});
    add("w_v", &p.w_v, {"d_model", "d_kv_in"});     // [D,Dkv]
    add("b_v", present(p.b_v), {"d_model"});
    add("w_o", present(p.w_o), {"d_model", "d_model"});  // [D,D]
    add("b_o", present(p.b_o), {"d_model"});
    return params;
}

/// Stage 3's tensors: q [B,Sq,D], k [B,Sk,D], v [B,Sk,D].
std::vector<tensor> projection_tensors(projections qkv) {
    return {named("q", {"batch", "seq", "d_model"}, std::move(qkv.q)),
            named("k", {"batch", "kv_seq", "d_model"}, std::move(qkv.k)),
            named("v", {"batch", "kv_seq", "d_model"}, std::move(qkv.v))};
}

/// Stages 1-3 from the embeddings and the weights; returns the projections stage.
const stage& project_inputs(trace& t, const config& c, const inputs& in, const stage_callback& on_stage) {
    const parameters& p = in.params;
    const xt::xarray<float>& x_kv = in.x_kv ? *in.x_kv : in.x;  // self-attention: keys and values from x

    // 1. input: the token embeddings
    std::vector<tensor> input{named("x", {"batch", "seq", "d_in"}, in.x)};                   // [B,Sq,Din]
    if (in.x_kv) input.push_back(named("x_kv", {"batch", "kv_seq", "d_kv_in"}, *in.x_kv));  // [B,Sk,Dkv]
    add_stage(t, "input", std::move(input), on_stage);

    // 2. params: nn.Linear weights [out,in] and biases [out]
    add_stage(t, "params", param_tensors(p), on_stage);

    // 3. projections: Q = X·W_qᵀ + b_q, K = X_kv·W_kᵀ + b_k, V = X_kv·W_vᵀ + b_v
    // (project: with --mistake weight_not_transposed x·W, with --mistake missing_bias no b)
    return add_stage(t, "projections",
                     projection_tensors({project(c, in.x, p.w_q, present(p.b_q)),     // [B,Sq,D]
                                         project(c, x_kv, p.w_k, present(p.b_k)),     // [B,Sk,D]
                                         project(c, x_kv, p.w_v, present(p.b_v))}),   // [B,Sk,D]
                     on_stage);
}

xt::xarray<float> to_float(const xt::xarray<bool>& mask) {
    return xt::xarray<float>(xt::cast<float>(mask));
}


}  // namespace

trace compute_trace(const config& c, const inputs& in, const stage_callback& on_stage) {
    trace t;
    t.cfg = c;
    t.warnings = in.warnings;
    for (warning& w : settings_advice(c)) t.warnings.push_back(std::move(w));
    if (c.mistake != mistake::none)  // --mistake ID: made on purpose, said where it is made
        t.warnings.push_back({std::string(mistake_stage(c.mistake, c.mistake_variant)), mistake_warning(c)});
    t.stages.reserve(stage_table.size());  // stages are referenced while later ones are added
    const auto heads = static_cast<std::size_t>(c.heads);
    const parameters& p = in.params;

    // 1-3. input, params, projections; or, with --q --k --v, the given projections
    const stage& proj = in.qkv ? add_stage(t, "projections", projection_tensors(*in.qkv), on_stage)
                               : project_inputs(t, c, in, on_stage);

    // 4. view: [B,S,D] -> [B,S,H,dk], the last axis split into heads: views of the projections
    const stage& view = add_stage(t, "view",
                                  {split_heads(proj, proj.tensors[0], heads, {"batch", "seq", "head", "head_dim"}),
                                   split_heads(proj, proj.tensors[1], heads, {"batch", "kv_seq", "head", "head_dim"}),
                                   split_heads(proj, proj.tensors[2], heads, {"batch", "kv_seq", "head", "head_dim"})},
                                  on_stage);

    // 5. transpose: [B,S,H,dk] -> [B,H,S,dk], heads become a batch axis: views again, not contiguous
    // (--mistake split_without_transpose: projections.q.view(B,H,S,dk) instead, contiguous and wrong)
    const auto split = [&](std::size_t i, const char* seq) {
        const dims d{"batch", "head", seq, "head_dim"};
        return makes(c, mistake::split_without_transpose) ? split_by_plain_view(proj, proj.tensors[i], heads, d)
                                                          : swap_axes_1_2(view, view.tensors[i], d);
    };
    const stage& tr = add_stage(t, "transpose", {split(0, "seq"), split(1, "kv_seq"), split(2, "kv_seq")}, on_stage);
    const tensor& q = tr.tensors[0];  // [B,H,Sq,dk], strides [Sq*D, dk, D, 1]
    const tensor& k = tr.tensors[1];  // [B,H,Sk,dk]
    const tensor& v = tr.tensors[2];  // [B,H,Sk,dk]
    const dims score_dims{"batch", "head", "query", "key"};

    // 6. scores: [B,H,Sq,dk] · [B,H,dk,Sk] -> [B,H,Sq,Sk]
    // (--mistake q_k_swapped: K·Qᵀ, [B,H,Sk,dk] · [B,H,dk,Sq] -> [B,H,Sk,Sq]; needs Sq == Sk)
    const bool swapped = makes(c, mistake::q_k_swapped);
    const stage& scores = add_stage(
        t, "scores", {named("scores", score_dims, swapped ? matmul_per_head(k, q, true) : matmul_per_head(q, k, true))},
        on_stage);

    // 7. scaled: / √dk, so the scores' spread does not grow with the head width
    // (score_divisor: --mistake missing_scale divides by 1, wrong_scale by √D, D or dk)
    const tensor_storage scaled = make_storage(scores.tensors[0].values / score_divisor(c));  // [B,H,Sq,Sk]
    add_stage(t, "scaled", {named("scaled", score_dims, scaled)}, on_stage);
    tensor_storage logits = scaled;  // what softmax reads: scaled, or masked with a mask

    // 8-9. mask [B,1,Sq,Sk] (true = may attend), then masked_fill(mask == false, fill)
    xt::xarray<bool> mask;
    if (c.mask.any()) {
        mask = build_mask(c, in.mask ? &*in.mask : nullptr);
        if (makes(c, mistake::mask_inverted)) mask = xt::xarray<bool>(!mask);  // --mistake: true = may NOT attend
        warn_empty_rows(mask, c, t.warnings);
        add_stage(t, "mask", {named("mask", {"batch", "head", "query", "key"}, to_float(mask), element_type::boolean)},
                  on_stage);
        // (--mistake fill_value: another fill, 0 or -1e9 or -inf: mistaken_fill)
        const float fill = makes(c, mistake::fill_value) ? mistaken_fill(c, c.mistake_variant) : c.fill;
        logits = make_storage(apply_mask(*scaled, mask, fill));
        add_stage(t, "masked", {named("masked", score_dims, logits)}, on_stage);
    }

    // 10. softmax over the key axis: each query's weights sum to 1 (with --safe-softmax,
    // a row with no allowed key gets 0 weights instead)
    xt::xarray<float> softmaxed = *logits;  // [B,H,Sq,Sk]
    if (makes(c, mistake::softmax_axis)) {  // --mistake: over the queries (dim=-2) or the heads (dim=1)
        softmax_over_axis(softmaxed, c.mistake_variant == 0 ? 2 : 1);
    } else if (c.safe_softmax) {
        safe_softmax_last_axis(softmaxed);                          // rows of -inf only -> 0
        if (c.mask.any()) zero_rows_without_key(softmaxed, mask);  // and fully masked rows of a finite fill
    } else {
        softmax_last_axis(softmaxed);
    }
    const tensor_storage weights = make_storage(std::move(softmaxed));
    if (c.mask.any()) weak_fill_advice(c, mask, *scaled, *weights, t.warnings);
    const stage* soft = &add_stage(t, "softmax", {named("weights", score_dims, weights)}, on_stage);

    // 11. dropout (training mode): weights · keep / (1 - p), keep = torch.rand(B,H,Sq,Sk) < 1 - p
    if (c.dropout.applied()) {
        const xt::xarray<bool> keep =
            dropout_keep({weights->shape().begin(), weights->shape().end()}, c.dropout.seed, c.dropout.p);
        soft = &add_stage(t, "dropout",
                          {named("weights", score_dims, apply_dropout(*weights, keep, c.dropout.p)),
                           named("keep", score_dims, to_float(keep), element_type::boolean)},
                          on_stage);
    }

    // 12. context: [B,H,Sq,Sk] · [B,H,Sk,dk] -> [B,H,Sq,dk]
    const stage& context = add_stage(
        t, "context",
        {named("context", {"batch", "head", "seq", "head_dim"}, matmul_per_head(soft->tensors[0], v, false))},
        on_stage);

    // 13. merge: [B,H,Sq,dk] -> [B,Sq,H,dk], context.transpose(1, 2): a view, not contiguous
    // (--mistake merge_without_transpose: context.view(B,Sq,H,dk), the same storage read straight on)
    const dims merge_dims{"batch", "seq", "head", "head_dim"};
    const tensor& ctx = context.tensors[0];
    const tensor_shape merge_shape{ctx.values.shape()[0], ctx.values.shape()[2], ctx.values.shape()[1],
                                   ctx.values.shape()[3]};
    const stage& merge = add_stage(
        t, "merge",
        {makes(c, mistake::merge_without_transpose)
             ? as_strided(ctx, path_of(context, ctx), "context", merge_dims, merge_shape, contiguous_strides(merge_shape))
             : swap_axes_1_2(context, ctx, merge_dims)},
        on_stage);

    // 14. concat: [B,Sq,H,dk] -> [B,Sq,D], the heads side by side: merge.contiguous().view(B,Sq,D),
    // the copy (a view when merge is contiguous already: one head, or one query)
    const tensor_shape concat_shape{static_cast<std::size_t>(c.batch), static_cast<std::size_t>(c.seq),
                                    static_cast<std::size_t>(c.d_model)};
    const stage& cat = add_stage(
        t, "concat", {contiguous_view(merge, merge.tensors[0], "concat", {"batch", "seq", "d_model"}, concat_shape)},
        on_stage);

    // 15. output: concat·W_oᵀ + b_o   [B,Sq,D] · [D,D]ᵀ -> [B,Sq,D], on concat's row-major memory
    if (p.w_o)
        add_stage(t, "output",
                  {named("out", {"batch", "seq", "d_model"},  // (project: the projections' mistakes, ways 1 and 2)
                         project(c, true, cat.tensors[0].values.data(), concat_shape, *p.w_o, present(p.b_o)))},
                  on_stage);
    return t;
}

}  // namespace attn
