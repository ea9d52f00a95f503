// Multi-head attention, one block per stage of CLI.md's table, in order (shapes in PyTorch
// order; the dimension letters are config.hpp's).
#include "attn/compute/attention.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xmanipulation.hpp>

#include "attn/compute/error.hpp"
#include "attn/compute/flash.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/plane_chain.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/compute/threads.hpp"
#include "attn/compute/linalg.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/norms.hpp"
#include "attn/compute/positions.hpp"

namespace attn {
namespace {

using dims = std::vector<std::string>;

/// A view of x's storage with `layout` (tensor.hpp's layout rules decide it), naming x by its
/// place in the trace ("projections.q").
tensor view_as(const stage& from, const tensor& x, std::string name, dims dim_names, const tensor_layout& layout) {
    const std::string path = std::string(from.name()) + "." + x.name;
    return as_strided(x, path, std::move(name), std::move(dim_names), layout.shape, layout.strides);
}

/// x.view(shape) when x is contiguous: the storage read straight on in `shape`.
tensor plain_view(const stage& from, const tensor& x, std::string name, dims dim_names, tensor_shape shape) {
    return view_as(from, x, std::move(name), std::move(dim_names), contiguous_layout(std::move(shape)));
}

// x.view(B,S,H,dk): [B,S,D] -> [B,S,H,dk], the last axis read as H rows of dk in x's
// storage: strides [S*D, D, 1] -> [S*D, D, dk, 1] (x is contiguous, as PyTorch's view needs).
tensor split_heads(const stage& from, const tensor& x, std::size_t heads, dims dim_names) {
    const auto& size = x.values.shape();
    return view_as(from, x, x.name, std::move(dim_names), *viewed(x.layout(), {size[0], size[1], heads, size[2] / heads}));
}

// x.transpose(1, 2): [B,S,H,dk] <-> [B,H,S,dk], axes 1 and 2 swap their sizes and
// strides over the same storage ([S*D, D, dk, 1] <-> [S*D, dk, D, 1]).
tensor swap_axes_1_2(const stage& from, const tensor& x, dims dim_names) {
    return view_as(from, x, x.name, std::move(dim_names), transposed(x.layout(), 1, 2));
}

// x.contiguous().view(shape): a view of x's storage when x is contiguous already, else a
// row-major copy of x's elements.
tensor contiguous_view(const stage& from, const tensor& x, std::string name, dims dim_names,
                       const tensor_shape& shape) {
    if (x.contiguous()) return plain_view(from, x, std::move(name), std::move(dim_names), shape);
    xt::xarray<float> copy = row_major_copy(x);
    copy.reshape(shape);
    return tensor(std::move(name), std::move(dim_names), std::move(copy));
}

// --- the mistakes (attn trace --mistake ID), each made on purpose at one stage ---

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
    if (c.mistake == mistake::missing_scale) return 1.0f;
    if (c.mistake == mistake::wrong_scale) {
        if (c.mistake_variant == 0) return std::sqrt(static_cast<float>(c.d_model));
        return static_cast<float>(c.mistake_variant == 1 ? c.d_model : c.head_dim());
    }
    return std::sqrt(static_cast<float>(c.head_dim()));
}

/// --mistake split_without_transpose: q.view(B,H,S,dk) straight from [B,S,D], so each
/// "head" holds S/H consecutive positions' full width, not one slice of every position.
tensor split_by_plain_view(const stage& from, const tensor& x, std::size_t heads, dims dim_names) {
    const auto& size = x.values.shape();
    return plain_view(from, x, x.name, std::move(dim_names), {size[0], heads, size[1], size[2] / heads});  // [B,H,S,dk]
}

/// --mistake heads_interleaved: q.view(B,S,dk,H).permute(0,3,1,2), so head h takes features
/// h, h + H, h + 2H, ... of each position instead of the slice [h·dk, (h+1)·dk). [B,S,D] with
/// strides [s0,s1,s2] -> [B,S,dk,H] [s0,s1,H·s2,s2] -> [B,H,S,dk] [s0,s2,s1,H·s2], a view.
tensor split_interleaved(const stage& from, const tensor& x, std::size_t heads, dims dim_names) {
    const auto& size = x.values.shape();
    const auto h = static_cast<std::ptrdiff_t>(heads);
    tensor_layout layout{{size[0], heads, size[1], size[2] / heads},
                         {x.strides[0], x.strides[2], x.strides[1], h * x.strides[2]}};
    return view_as(from, x, x.name, std::move(dim_names), layout);
}

// --- a decoding step (--past N) and grouped-query heads (--kv-heads G)

/// Tokens [first, first + count) of x [B,S,Din]: x[:, first:first+count], a row-major copy
/// [B,count,Din] (what F.linear's matmul copies a sliced input into before its GEMM).
xt::xarray<float> token_rows(const xt::xarray<float>& x, std::size_t first, std::size_t count) {
    const std::size_t B = x.shape()[0], S = x.shape()[1], width = x.shape()[2];
    auto rows = xt::xarray<float>::from_shape({B, count, width});
    for (std::size_t b = 0; b < B; ++b)
        std::copy_n(x.data() + (b * S + first) * width, count * width, rows.data() + b * count * width);
    return rows;
}

/// torch.cat((past, now), dim=2): [B,G,N,dk] and [B,G,Sq,dk] -> [B,G,N+Sq,dk], a fresh
/// contiguous tensor (cat always copies).
tensor cat_on_tokens(const tensor& past, const tensor& now, dims dim_names) {
    const auto& p = past.values.shape();
    const std::size_t B = p[0], G = p[1], N = p[2], S = now.values.shape()[2], dk = p[3];
    auto all = xt::xarray<float>::from_shape({B, G, N + S, dk});
    std::vector<float> scratch;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t g = 0; g < G; ++g) {
            float* plane = all.data() + (b * G + g) * (N + S) * dk;
            std::copy_n(row_major_rows(past, b, g, 0, N, scratch), N * dk, plane);
            std::copy_n(row_major_rows(now, b, g, 0, S, scratch), S * dk, plane + N * dk);
        }
    return tensor(past.name, std::move(dim_names), std::move(all));
}

/// k.repeat_interleave(H/G, dim=1): [B,G,Sk,dk] -> [B,H,Sk,dk], query head h reading kv head
/// h / (H/G), a fresh contiguous copy. With --mistake kv_heads_tiled k.repeat(1, H/G, 1, 1)
/// instead: head h reads kv head h % G.
tensor repeat_heads(const config& c, const tensor& kv, dims dim_names) {
    const auto& sz = kv.values.shape();
    const std::size_t B = sz[0], G = sz[1], S = sz[2], dk = sz[3], H = static_cast<std::size_t>(c.heads);
    const bool tiled = c.mistake == mistake::kv_heads_tiled;
    auto out = xt::xarray<float>::from_shape({B, H, S, dk});
    std::vector<float> scratch;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            std::copy_n(row_major_rows(kv, b, tiled ? h % G : h / (H / G), 0, S, scratch), S * dk,
                        out.data() + (b * H + h) * S * dk);
    return tensor(kv.name, std::move(dim_names), std::move(out));
}

// --- the stages

const xt::xarray<float>* present(const optional_tensor& v) { return v ? &*v : nullptr; }

/// The norm stage's x: each row of x [B,S,Din] normalised over Din (norms.hpp), as config::norm says.
xt::xarray<float> normalised_rows(const config& c, const xt::xarray<float>& x, const parameters& p) {
    auto y = xt::xarray<float>::from_shape(x.shape());
    const std::size_t width = x.shape().back(), rows = width == 0 ? 0 : x.size() / width;
    if (c.norm == norm_kind::rms_norm)
        rms_norm_rows(x.data(), rows, width, p.norm_weight->data(), c.norm_eps, y.data());
    else
        layer_norm_rows(x.data(), rows, width, p.norm_weight->data(), p.norm_bias ? p.norm_bias->data() : nullptr,
                        c.norm_eps, y.data());
    return y;
}

/// The params stage: w_q b_q w_k b_k w_v b_v w_o b_o, leaving out those that are absent.
std::vector<tensor> param_tensors(const parameters& p) {
    std::vector<tensor> params;
    const auto add = [&](const char* name, const xt::xarray<float>* v, dims d) {
        if (v) params.push_back(tensor(name, std::move(d), *v));
    };
    add("w_q", &p.w_q, {"d_model", "d_in"});        // [D,Din]
    add("b_q", present(p.b_q), {"d_model"});        // [D]
    const char* kv_out = p.w_k.dimension() == 2 && p.w_k.shape()[0] != p.w_q.shape()[0] ? "kv_width" : "d_model";
    add("w_k", &p.w_k, {kv_out, "d_kv_in"});        // [D,Dkv]; [G·dk,Dkv] with --kv-heads G
    add("b_k", present(p.b_k), {kv_out});
    add("w_v", &p.w_v, {kv_out, "d_kv_in"});        // [D,Dkv]; [G·dk,Dkv]
    add("b_v", present(p.b_v), {kv_out});
    add("w_o", present(p.w_o), {"d_model", "d_model"});  // [D,D]
    add("b_o", present(p.b_o), {"d_model"});
    return params;
}

/// Stage 3's tensors: q [B,Sq,D], k [B,Sk,D], v [B,Sk,D]; k and v [B,Sq,G·dk] of the new
/// tokens in a decoding step with G kv heads.
std::vector<tensor> projection_tensors(const config& c, projections qkv) {
    const char* tokens = c.past > 0 ? "seq" : "kv_seq";
    const char* width = c.grouped() ? "kv_width" : "d_model";
    return {tensor("q", {"batch", "seq", "d_model"}, std::move(qkv.q)),
            tensor("k", {"batch", tokens, width}, std::move(qkv.k)),
            tensor("v", {"batch", tokens, width}, std::move(qkv.v))};
}

// --- a run: the stages it needs, the sink they go to

/// A run in progress: what it computes, where its stages go, and what it knows so far.
struct run {
    const config& c;
    const stage_plan& plan;
    stage_sink& sink;
    stage_set needed;
    trace so_far;  // the config and the warnings; the sink keeps the stages it wants

    bool needs(stage_id id) const { return (needed & stage_bit(id)) != 0; }
    /// Whether the run needs `id` or any stage after it but the mask (built first, emitted by finish).
    bool needs_from(stage_id id) const {
        return ((needed & ~stage_bit(stage_id::mask)) >> static_cast<unsigned>(id)) != 0;
    }
    bool shows(stage_id id) const { return needs(id) && plan.shows(id); }

    stage make(stage_id id, std::vector<tensor> tensors) const {
        return stage{&info_of(id), std::move(tensors), {}};
    }
    /// The stage `id` with `tensors` (and `figures`), handed to the sink whole when the plan shows it.
    stage emit(stage_id id, std::vector<tensor> tensors, std::vector<stage_figure> figures = {}) {
        stage s = make(id, std::move(tensors));
        s.figures = std::move(figures);
        if (plan.shows(id)) {
            sink.begin(so_far, s);
            sink.end(so_far, s);
        }
        return s;
    }
};

// --- stages 6-12: the [B,H,Sq,Sk] steps, a block of rows at a time

const dims score_dims{"batch", "head", "query", "key"};

/// Rows [first_row, first_row + rows) of planes [first_plane, first_plane + planes) of
/// the [B,H,R,W] tensor, at `data` [planes, rows, W]; a step that writes a tensor of its
/// own reads the step before's values from `source` (same layout) when it is set.
struct rows_block {
    std::size_t first_plane = 0, planes = 0, first_row = 0, rows = 0;
    float* data = nullptr;
    const float* source = nullptr;
};

/// The [m,k]·[k,n] product a step makes per plane (none: 0).
struct plane_product {
    std::size_t m = 0, n = 0, k = 0;
};

/// Runs fn(plane_block) on every plane of `block`: in parallel when there are enough of them
/// (each BLAS call then on its own thread), else one after another, each with every thread. A
/// `product` OpenBLAS splits among its threads goes one plane after another, as PyTorch's bmm.
template <typename Fn>
void for_each_plane(const plane_chain& chain, const rows_block& block, Fn fn, plane_product product = {}) {
    const std::size_t plane_floats = block.rows * chain.width;
    const auto plane = [&](std::size_t i) {
        const std::size_t p = block.first_plane + i, at = i * plane_floats;
        return plane_block{p / chain.heads, p % chain.heads, block.first_row, block.rows, block.data + at,
                           block.source != nullptr ? block.source + at : nullptr};
    };
    const bool blas_threads = !blas_runs_on_one_thread(product.m, product.n, product.k);
    if (block.planes < 2 || thread_count() < 2 || block.planes * plane_floats < parallel_elements || blas_threads) {
        for (std::size_t i = 0; i < block.planes; ++i) fn(plane(i));
        return;
    }
    const blas_on_one_thread one;
#pragma omp parallel for schedule(dynamic)
    for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(block.planes); ++i) fn(plane(static_cast<std::size_t>(i)));
}

/// The weak-fill finding a run gathers while masking: with a mask and a finite fill.
bool looks_for_weak_fill(const config& c) { return c.mask.any() && !std::isinf(c.fill); }

/// What the plane steps share while they run: the chain, and the draws of dropout.
struct plane_steps_state {
    explicit plane_steps_state(const plane_chain& ch) : chain(ch) {}

    const plane_chain& chain;
    xt::xarray<float>* whole = nullptr;          // plane_layout::whole_tensor: the tensor [B,H,R,W]; in rows: null
    weak_fill_finding* finding = nullptr;        // gathered by masked, when set
    std::shared_ptr<xt::xarray<float>> keep;     // whole: torch.rand(B,H,Sq,Sk), then keep (0 or 1) in place
    std::optional<torch_generator> draws_from;   // in rows: the same draws, a block at a time
    std::vector<float> draws;

    /// Applies the step that makes stage `step` to `block`.
    void apply(stage_id step, const rows_block& block) {
        const plane_chain& ch = chain;
        switch (step) {
            case stage_id::scores:  // [rows,dk] · [dk,W] -> [rows,W]
                for_each_plane(ch, block, [&](const plane_block& b) { block_scores(ch, b); },
                               {ch.rows, ch.width, ch.rows_of->values.shape()[3]});
                break;
            case stage_id::scaled:  // / √dk
                for_each_plane(ch, block, [&](const plane_block& b) { block_scale(ch, b); });
                break;
            case stage_id::biased:  // + the ALiBi bias -m_h·(i - j)
                for_each_plane(ch, block, [&](const plane_block& b) { block_bias(ch, b); });
                break;
            case stage_id::masked:  // the fill where the mask is false
                for_each_plane(ch, block, [&](const plane_block& b) { block_mask(ch, b, finding); });
                break;
            case stage_id::softmax:  // over the keys (--mistake softmax_axis: over the queries or the heads)
                if (ch.cfg->mistake == mistake::softmax_axis) {
                    softmax_over_whole(block);
                    break;
                }
                for_each_plane(ch, block, [&](const plane_block& b) { block_softmax(ch, b); });
                break;
            case stage_id::dropout: {  // · keep / (1 - p), keep = torch.rand(B,H,Sq,Sk) < 1 - p
                float* keep_out = whole ? keep->data() : nullptr;
                const float* drawn = whole ? keep->data() : next_draws(block.rows * ch.width);
                const std::size_t plane_floats = block.rows * ch.width;
                for_each_plane(ch, block, [&](const plane_block& b) {
                    const std::size_t at = (b.batch * ch.heads + b.head - block.first_plane) * plane_floats;
                    block_dropout(ch, b, drawn + at, keep_out != nullptr ? keep_out + at : nullptr);
                });
                break;
            }
            default:
                break;
        }
    }

    /// --mistake softmax_axis on the whole tensor [B,H,Sq,Sk] (plan_memory keeps it whole for this):
    /// softmax over the queries (way 0) or the heads (way 1) instead of the keys, that axis swapped
    /// to the end, softmax, swapped back; written into the tensor's memory (the block's pointers).
    void softmax_over_whole(const rows_block& block) {
        if (block.source != nullptr) std::copy(block.source, block.source + whole->size(), whole->data());
        std::vector<std::size_t> order{0, 1, 2, 3};
        std::swap(order[chain.cfg->mistake_variant == 0 ? 2 : 1], order[3]);
        xt::xarray<float> moved = xt::transpose(*whole, order);
        softmax_last_axis(moved);
        const xt::xarray<float> back = xt::transpose(moved, order);  // a swap of two axes undoes itself
        std::copy(back.begin(), back.end(), whole->data());
    }

    const float* next_draws(std::size_t count) {
        draws.resize(count);
        draws_from->rand(draws.data(), count);
        return draws.data();
    }
};

/// The most trues one after another in `shown`.
std::size_t longest_run(const std::vector<bool>& shown) {
    std::size_t longest = 0, run = 0;
    for (const bool s : shown) longest = std::max(longest, run = s ? run + 1 : 0);
    return longest;
}

/// Stages 6-11 and context's product (stage 12) on each block of rows: the whole [B,H,Sq,Sk]
/// tensor, one pass per step; or query rows of one plane, one pass per stage shown, each anew
/// from the scores. Emits the ALiBi bias (stage 21) and the mask (stage 8) in their places. Returns context when a later stage needs it.
std::optional<tensor> plane_steps(run& r, const plane_chain& chain, const std::function<void()>& alibi_stage,
                                  const std::function<void()>& mask_stage) {
    const config& c = r.c;
    const stage_plan& plan = r.plan;
    const bool whole = plan.layout == plane_layout::whole_tensor;
    std::vector<stage_id> steps;  // the plane stages this run computes, in order
    for (const stage_info& info : stage_table)
        if (info.plane && r.needs(info.id)) steps.push_back(info.id);
    const bool wants_context = r.needs(stage_id::context);
    std::vector<stage_id> passes;
    for (stage_id step : steps)
        if (whole || plan.shows(step)) passes.push_back(step);
    if (wants_context && (passes.empty() || passes.back() != steps.back())) passes.push_back(steps.back());

    const std::size_t planes = chain.planes(), R = chain.rows, W = chain.width;
    const std::size_t head_dim = chain.values != nullptr ? chain.values->values.shape()[3] : 0;
    const std::size_t block_rows = whole ? R : std::clamp<std::size_t>(plan.block_rows ? plan.block_rows : R, 1, std::max<std::size_t>(R, 1));
    const std::size_t planes_per_block = whole ? planes : 1;
    std::shared_ptr<xt::xarray<float>> tensor_now;  // whole: the last step's [B,H,R,W]
    bool handed_on = false;                         // whole: tensor_now was handed to the sink
    std::vector<float> block_now;                   // in rows: [block_rows, W]
    xt::xarray<float> context;
    if (wants_context) context = xt::xarray<float>::from_shape({chain.batch, chain.heads, R, head_dim});
    bool weak_fill_done = !looks_for_weak_fill(c);
    const auto shown_in = [](const std::vector<bool>& items, std::size_t i) { return items.empty() || items[i]; };
    const bool every_row = plan.computes_every_query_row(c);
    const bool every_plane = whole || r.needs(stage_id::dropout);  // the draws again
    if (wants_context && !every_row) context.fill(0.0f);
    if (!whole) block_now.resize((every_row ? block_rows : std::min(block_rows, longest_run(plan.shown_query))) * W);

    std::size_t next_step = 0;  // whole: the first step not yet applied to tensor_now
    for (std::size_t k = 0; k < passes.size(); ++k) {
        const stage_id target = passes[k];
        if (target > stage_id::alibi) alibi_stage();
        if (target > stage_id::mask) mask_stage();
        const bool shown = plan.shows(target);
        const bool computes_context = wants_context && k + 1 == passes.size();
        const std::size_t first = whole ? next_step : 0;
        std::size_t last = first;
        while (steps[last] != target) ++last;
        next_step = last + 1;

        weak_fill_finding finding;
        plane_steps_state state(chain);
        if (!weak_fill_done && target >= stage_id::masked && steps[first] <= stage_id::masked) state.finding = &finding;
        if (target == stage_id::dropout) {
            if (whole) {
                state.keep = std::make_shared<xt::xarray<float>>(xt::xarray<float>::from_shape({chain.batch, chain.heads, R, W}));
                torch_generator(c.dropout.seed).rand(state.keep->data(), state.keep->size());
            } else {
                state.draws_from.emplace(c.dropout.seed);
            }
        }
        stage in_rows;  // the stage handed on in rows
        if (shown && !whole) {
            std::vector<tensor> heads{shape_only(std::string(info_of(target).tensors[0]), score_dims, {chain.batch, chain.heads, R, W})};
            if (target == stage_id::dropout)
                heads.push_back(shape_only("keep", score_dims, {chain.batch, chain.heads, R, W}, element_type::boolean));
            in_rows = r.make(target, std::move(heads));
            r.sink.begin(r.so_far, in_rows);
        }
        // whole: a tensor of its own for this step when the sink keeps the last one
        std::shared_ptr<xt::xarray<float>> source_tensor;
        if (whole && (!tensor_now || (plan.sink_keeps && handed_on))) {
            source_tensor = std::move(tensor_now);
            tensor_now = std::make_shared<xt::xarray<float>>(xt::xarray<float>::from_shape({chain.batch, chain.heads, R, W}));
            handed_on = false;
        }
        state.whole = whole ? tensor_now.get() : nullptr;
        const float* source = source_tensor ? source_tensor->data() : nullptr;
        float* data = whole ? tensor_now->data() : block_now.data();

        for (std::size_t p = 0; p < planes; p += planes_per_block) {
            const bool plane_shown =
                every_plane || (shown_in(plan.shown_batch, p / chain.heads) && shown_in(plan.shown_head, p % chain.heads));
            if (!plane_shown && !computes_context) continue;
            for (std::size_t row = 0; row < R;) {
                if (!every_row && !plan.shown_query[row]) {  // a row no output shows
                    ++row;
                    continue;
                }
                std::size_t end = row + 1;  // up to block_rows rows that are shown, one after another
                while (end < R && end - row < block_rows && (every_row || plan.shown_query[end])) ++end;
                rows_block block{p, planes_per_block, row, end - row, data, source};
                for (std::size_t s = first; s <= last; ++s) {
                    state.apply(steps[s], block);
                    block.source = nullptr;  // the next step works in place
                }
                if (shown && !whole && plane_shown) r.sink.rows(0, p * R + row, block.rows, block.data);
                if (computes_context)  // 12. context rows: [rows,Sk] · [Sk,dk] -> [rows,dk]
                    for_each_plane(chain, block, [&](const plane_block& b) { block_context(chain, b, context.data()); },
                                   {R, head_dim, W});
                row = end;
            }
        }
        if (state.finding != nullptr) {
            weak_fill_warning(c, finding, r.so_far.warnings);
            weak_fill_done = true;
        }
        if (!shown) continue;
        if (whole) {
            std::vector<tensor> tensors{tensor(std::string(info_of(target).tensors[0]), score_dims, tensor_storage(tensor_now))};
            if (target == stage_id::dropout)
                tensors.push_back(tensor("keep", score_dims, tensor_storage(state.keep), element_type::boolean));
            r.emit(target, std::move(tensors));
            handed_on = true;
            continue;
        }
        if (target == stage_id::dropout) {  // keep: the same draws again, compared
            torch_generator again(c.dropout.seed);
            for (std::size_t row = 0; row < planes * R; row += block_rows) {
                const std::size_t count = std::min(block_rows, planes * R - row);
                again.rand(block_now.data(), count * W);
                keep_from_draws(block_now.data(), count * W, c.dropout.p);
                r.sink.rows(1, row, count, block_now.data());
            }
        }
        r.sink.end(r.so_far, in_rows);
    }
    if (!wants_context) return std::nullopt;
    return tensor("context", {"batch", "head", "seq", "head_dim"}, std::move(context));
}

/// What the flash stage computed before q, k, v were let go: its tensors and its tolerance.
struct flash_stage {
    std::vector<tensor> tensors;  // m, l, rescale, acc, context (flash.hpp)
    double tolerance = 0;         // flash_tolerance(v)
};

/// 23. flash: its tensors, and how far its context is from the exact one (a warning past the tolerance).
void emit_flash(run& r, flash_stage flash, const tensor& exact_context) {
    const double difference = max_abs_difference(flash.tensors.back(), exact_context);
    if (!(difference <= flash.tolerance))
        r.so_far.warnings.push_back({"flash", "the flash context differs from the exact one by up to " +
                                                  fill_to_string(static_cast<float>(difference)) + ", more than the tolerance " +
                                                  fill_to_string(static_cast<float>(flash.tolerance))});
    r.emit(stage_id::flash, std::move(flash.tensors), {{"max_abs_diff", difference}, {"tolerance", flash.tolerance}});
}

/// Stages 12-15 (and 23, flash, after context) from context [B,H,Sq,dk].
void context_to_output(run& r, const parameters& p, tensor context_tensor, std::optional<flash_stage> flash) {
    const config& c = r.c;
    stage context = r.emit(stage_id::context, {std::move(context_tensor)});
    if (flash) emit_flash(r, std::move(*flash), context.tensors[0]);
    if (!r.needs(stage_id::merge)) return;

    // 13. merge: [B,H,Sq,dk] -> [B,Sq,H,dk], context.transpose(1, 2): a view, not contiguous
    // (--mistake merge_without_transpose: context.view(B,Sq,H,dk), the same storage read straight on)
    const dims merge_dims{"batch", "seq", "head", "head_dim"};
    const tensor& ctx = context.tensors[0];
    const tensor_shape merge_shape{ctx.values.shape()[0], ctx.values.shape()[2], ctx.values.shape()[1],
                                   ctx.values.shape()[3]};
    stage merge = r.emit(stage_id::merge, {c.mistake == mistake::merge_without_transpose
                                               ? plain_view(context, ctx, "context", merge_dims, merge_shape)
                                               : swap_axes_1_2(context, ctx, merge_dims)});
    if (!r.needs(stage_id::concat)) return;

    // 14. concat: [B,Sq,H,dk] -> [B,Sq,D], the heads side by side: merge.contiguous().view(B,Sq,D),
    // the copy (a view when merge is contiguous already: one head, or one query)
    const tensor_shape concat_shape{static_cast<std::size_t>(c.batch), static_cast<std::size_t>(c.seq),
                                    static_cast<std::size_t>(c.d_model)};
    const stage cat = r.emit(stage_id::concat, {contiguous_view(merge, merge.tensors[0], "concat",
                                                                {"batch", "seq", "d_model"}, concat_shape)});
    context = merge = stage{};  // concat holds what it needs
    if (!r.needs(stage_id::output)) return;

    // 15. output: concat·W_oᵀ + b_o   [B,Sq,D] · [D,D]ᵀ -> [B,Sq,D], on concat's row-major memory
    r.emit(stage_id::output, {tensor("out", {"batch", "seq", "d_model"},  // (project: the projections' mistakes, ways 1 and 2)
                                    project(c, true, cat.tensors[0].values.data(), concat_shape, *p.w_o, present(p.b_o)))});
}

}  // namespace

warning_list compute_stages(const config& c, inputs in, const stage_plan& plan, stage_sink& sink) {
    run r{c, plan, sink, stages_needed(c, plan.shown), trace{}};
    r.so_far.cfg = c;
    r.so_far.warnings = in.warnings;
    const auto heads = static_cast<std::size_t>(c.heads);
    const parameters& p = in.params;

    // 8. mask [B,1,Sq,Sk] (true = may attend): a row at a time from its rules when the stage is
    // not shown (mask_rows), else built whole; emitted between scaled and masked, or at the end
    xt::xarray<bool> mask;                 // when built whole
    std::optional<mask_rows> mask_by_row;  // what the planes read
    if (r.needs(stage_id::mask) && !r.shows(stage_id::mask) && !in.mask && mask_rows::make_all_of(c)) {
        mask_by_row.emplace(c.mask, c.seq, c.kv_seq, mistake::none, 0, first_query_position(c));
    } else if (r.needs(stage_id::mask)) {
        mask = build_mask(c, in.mask ? &*in.mask : nullptr);
        if (c.mistake == mistake::mask_inverted) mask = xt::xarray<bool>(!mask);  // --mistake: true = may NOT attend
        mask_by_row.emplace(mask);
    }
    if (mask_by_row) warn_empty_rows(*mask_by_row, c, r.so_far.warnings);
    bool mask_emitted = !r.shows(stage_id::mask);
    const std::function<void()> mask_stage = [&] {
        if (mask_emitted) return;
        mask_emitted = true;
        r.emit(stage_id::mask, {tensor("mask", {"batch", "head", "query", "key"}, xt::xarray<float>(xt::cast<float>(mask)),
                                       element_type::boolean)});
    };
    // 21. alibi: bias [1,H,Sq,Sk] = -m_h·(i - j), shown in its place; biased adds it a block at a time
    bool alibi_emitted = !r.shows(stage_id::alibi);
    const std::function<void()> alibi_stage = [&] {
        if (alibi_emitted) return;
        alibi_emitted = true;
        r.emit(stage_id::alibi, {tensor("bias", {"batch", "head", "query", "key"}, alibi_bias(c))});
    };
    const auto finish = [&] {
        alibi_stage();
        mask_stage();
        return r.so_far.warnings;
    };

    // 25. embed (--tokens): the embedding rows x was summed from, token [B,S,D], position and token_type [S,D]
    if (in.embed && !in.qkv && r.shows(stage_id::embed)) {
        std::vector<tensor> embed{tensor("token", {"batch", "seq", "d_in"}, std::move(in.embed->token))};
        if (in.embed->position) embed.push_back(tensor("position", {"seq", "d_in"}, std::move(*in.embed->position)));
        if (in.embed->token_type) embed.push_back(tensor("token_type", {"seq", "d_in"}, std::move(*in.embed->token_type)));
        r.emit(stage_id::embed, std::move(embed));
    }
    in.embed.reset();

    // 1. input: x [B,Sq,Din] ([B,N+Sq,Din] in a decoding step), and x_kv [B,Sk,Dkv] for
    // cross-attention: drawn or read (the stage shares their storage: x is not copied, and is
    // let go after the projections)
    const char* x_tokens = c.past > 0 ? "kv_seq" : "seq";  // x's S: N + Sq = Sk in a decoding step
    tensor_storage x = make_storage(std::move(in.x));
    tensor_storage x_kv = in.x_kv ? make_storage(std::move(*in.x_kv)) : x;  // self-attention: keys and values from x
    if (!in.qkv && r.shows(stage_id::input)) {
        std::vector<tensor> input{tensor("x", {"batch", x_tokens, "d_in"}, x)};
        if (in.x_kv) input.push_back(tensor("x_kv", {"batch", "kv_seq", "d_kv_in"}, x_kv));
        r.emit(stage_id::input, std::move(input));
    }
    // 2. params: w_q [D,Din], w_k w_v [D,Dkv] ([G·dk,Dkv] with --kv-heads G), w_o [D,D] and the biases
    if (!in.qkv && r.shows(stage_id::params)) r.emit(stage_id::params, param_tensors(p));
    if (!r.needs_from(stage_id::norm)) return finish();

    // 24. norm (a model's layer): x [B,S,Din] normalised row by row before the projections read it,
    // GPT-2's ln_1 F.layer_norm(x, [Din], weight, bias, eps) or Llama's RMSNorm weight·(x·rsqrt(mean(x²) + eps)):
    // a new tensor [B,S,Din], the residual stream x stays as given (self-attention only: validate)
    if (r.needs(stage_id::norm)) {
        x = x_kv = make_storage(normalised_rows(c, *x, p));
        std::vector<tensor> norm{tensor("x", {"batch", x_tokens, "d_in"}, x),
                                 tensor("weight", {"d_in"}, *p.norm_weight)};
        if (p.norm_bias) norm.push_back(tensor("bias", {"d_in"}, *p.norm_bias));
        r.emit(stage_id::norm, std::move(norm));
    }
    if (!r.needs_from(stage_id::positions)) return finish();

    // 16. positions (--pos sinusoidal): pe [S,Din] for positions 0..S-1 of the tokens x holds (N + Sq
    // in a decoding step), x = x + pe [B,S,Din]; x_kv + its own pe [Sk,Dkv] in cross-attention.
    // New tensors: x stays as drawn
    if (r.needs(stage_id::positions)) {
        const tensor_storage pe = make_storage(sinusoidal_table(0, x->shape()[1], x->shape()[2]));
        x = make_storage(add_positions(*x, *pe));
        std::vector<tensor> positions{tensor("pe", {x_tokens, "d_in"}, pe), tensor("x", {"batch", x_tokens, "d_in"}, x)};
        if (in.x_kv) {  // cross-attention
            const tensor_storage pe_kv = make_storage(sinusoidal_table(0, x_kv->shape()[1], x_kv->shape()[2]));
            x_kv = make_storage(add_positions(*x_kv, *pe_kv));
            positions.push_back(tensor("pe_kv", {"kv_seq", "d_kv_in"}, pe_kv));
            positions.push_back(tensor("x_kv", {"batch", "kv_seq", "d_kv_in"}, x_kv));
        } else {
            x_kv = x;
        }
        r.emit(stage_id::positions, std::move(positions));
    }
    if (!r.needs_from(stage_id::projections)) return finish();

    // a decoding step: the queries and the new keys and values from the last Sq tokens, x[:, N:],
    // the cache from the first N, x[:, :N] (copies [B,Sq,Din] and [B,N,Din], as F.linear's matmul makes)
    const auto N = static_cast<std::size_t>(c.past), Sq = static_cast<std::size_t>(c.seq);
    const auto G = static_cast<std::size_t>(c.kv_head_count());
    tensor_storage x_new = x;
    if (N > 0 && !in.qkv) x_new = make_storage(token_rows(*x, N, Sq));  // [B,Sq,Din]
    const xt::xarray<float>& kv_source = N > 0 ? *x_new : *x_kv;

    // 3. projections: Q = X·W_qᵀ + b_q, K = X_kv·W_kᵀ + b_k, V = X_kv·W_vᵀ + b_v   [B,S,Din] · [Din,D] -> [B,S,D]
    // (k and v [B,S,G·dk] with --kv-heads G; project: with --mistake weight_not_transposed x·W,
    // with --mistake missing_bias no b)
    stage proj = r.emit(stage_id::projections,
                        in.qkv ? projection_tensors(c, std::move(*in.qkv))
                               : projection_tensors(c, {project(c, *x_new, p.w_q, present(p.b_q)),        // [B,Sq,D]
                                                        project(c, kv_source, p.w_k, present(p.b_k)),     // [B,Sk,G·dk]
                                                        project(c, kv_source, p.w_v, present(p.b_v))}));  // [B,Sk,G·dk]
    x_new = nullptr;
    if (!r.needs(stage_id::cache)) x = x_kv = nullptr;  // no later stage reads them
    if (!r.needs_from(stage_id::view)) return finish();

    // 4. view: [B,S,D] -> [B,S,H,dk] (k and v [B,S,G,dk]), the last axis split into heads: views of the projections
    const char* kv_tokens = N > 0 ? "seq" : "kv_seq";
    const char* kv_head = c.grouped() ? "kv_head" : "head";
    stage view = r.emit(stage_id::view, {split_heads(proj, proj.tensors[0], heads, {"batch", "seq", "head", "head_dim"}),
                                         split_heads(proj, proj.tensors[1], G, {"batch", kv_tokens, kv_head, "head_dim"}),
                                         split_heads(proj, proj.tensors[2], G, {"batch", kv_tokens, kv_head, "head_dim"})});
    if (!r.needs_from(stage_id::transpose)) return finish();

    // 5. transpose: [B,S,H,dk] -> [B,H,S,dk], heads become a batch axis: views again, not contiguous
    // (--mistake split_without_transpose: projections.q.view(B,H,S,dk) instead, contiguous and wrong;
    // heads_interleaved: projections.q.view(B,S,dk,H).permute(0,3,1,2))
    const auto split = [&](std::size_t i, const char* head, std::size_t count, const char* seq) {
        const dims d{"batch", head, seq, "head_dim"};
        if (c.mistake == mistake::heads_interleaved) return split_interleaved(proj, proj.tensors[i], count, d);
        return c.mistake == mistake::split_without_transpose ? split_by_plain_view(proj, proj.tensors[i], count, d)
                                                          : swap_axes_1_2(view, view.tensors[i], d);
    };
    stage tr = r.emit(stage_id::transpose, {split(0, "head", heads, "seq"), split(1, kv_head, G, kv_tokens),
                                            split(2, kv_head, G, kv_tokens)});
    if (!r.needs_from(stage_id::rope)) return finish();
    const tensor* queries = &tr.tensors[0];  // what scores reads: [B,H,Sq,dk]
    const tensor* keys = &tr.tensors[1];     // [B,G,Sk,dk], then [B,H,Sk,dk]
    const tensor* values = &tr.tensors[2];

    // 17. rope: cos, sin [Sq,dk] for the queries' positions N..N+Sq-1; q [B,H,Sq,dk] and the new
    // keys k [B,G,Sq,dk] (the same tokens) rotated, q·cos + rotate_half(q)·sin: new contiguous
    // tensors (v is not rotated)
    stage rope;
    if (r.needs(stage_id::rope)) {
        // (--mistake rope_positions_from_zero: positions 0..Sq-1; rope_pairs_mixed: the other pairing)
        const rope_pairing pairing = rotation_pairing(c);
        const std::int64_t first = c.mistake == mistake::rope_positions_from_zero ? 0 : first_query_position(c);
        rope_angles angles = make_rope_angles(c, first, Sq, pairing);
        xt::xarray<float> q_rotated = rotate(*queries, angles, pairing);  // [B,H,Sq,dk]
        xt::xarray<float> k_rotated = rotate(*keys, angles, pairing);     // [B,G,Sq,dk]
        rope = r.emit(stage_id::rope, {tensor("cos", {"seq", "head_dim"}, std::move(angles.cos)),
                                       tensor("sin", {"seq", "head_dim"}, std::move(angles.sin)),
                                       tensor("q", {"batch", "head", "seq", "head_dim"}, std::move(q_rotated)),
                                       tensor("k", {"batch", kv_head, kv_tokens, "head_dim"}, std::move(k_rotated))});
        queries = &rope.tensors[2];
        keys = &rope.tensors[3];
    }
    if (!r.needs_from(stage_id::cache)) return finish();

    // 18. cache: the N earlier tokens' keys and values, as the steps before computed them:
    // (X[:, :N]·W_kᵀ + b_k).view(B,N,G,dk).transpose(1, 2)   [B,N,Din] -> [B,N,G·dk] -> [B,G,N,dk], views
    // (with --pos rope the keys rotated at their positions 0..N-1, as a model's cache keeps them: a copy;
    // --mistake rope_pairs_mixed rotated them with its pairing too, the same code in the steps before)
    stage cache, append;
    if (r.needs(stage_id::cache)) {
        const xt::xarray<float> x_past = token_rows(*x, 0, N);  // [B,N,Din]
        x = x_kv = nullptr;
        const dims d{"batch", kv_head, "past", "head_dim"};
        const auto past = [&](const char* name, const xt::xarray<float>& w, const optional_tensor& b) {
            const tensor projected(name, {"batch", "past", "kv_width"}, project(c, x_past, w, present(b)));  // [B,N,G·dk]
            const std::size_t B = projected.values.shape()[0], dk = projected.values.shape()[2] / G;
            const tensor_layout heads_first = transposed(*viewed(projected.layout(), {B, N, G, dk}), 1, 2);
            return as_strided(projected, "", name, d, heads_first.shape, heads_first.strides);
        };
        tensor past_k = past("k", p.w_k, p.b_k);
        if (c.pos == position_encoding::rope) {  // [B,G,N,dk] rotated at positions 0..N-1
            const rope_pairing pairing = rotation_pairing(c);
            past_k = tensor("k", d, rotate(past_k, make_rope_angles(c, 0, N, pairing), pairing));
        }
        cache = r.emit(stage_id::cache, {std::move(past_k), past("v", p.w_v, p.b_v)});
    }
    // 19. append: torch.cat((past_k, k), dim=2)   [B,G,N,dk] + [B,G,Sq,dk] -> [B,G,N+Sq,dk], a copy
    if (r.needs(stage_id::append)) {
        const dims d{"batch", kv_head, "kv_seq", "head_dim"};
        append = r.emit(stage_id::append, {cat_on_tokens(cache.tensors[0], *keys, d),
                                           cat_on_tokens(cache.tensors[1], *values, d)});
        cache = stage{};
        keys = &append.tensors[0];
        values = &append.tensors[1];
    }
    // 20. repeat_kv: k.repeat_interleave(H/G, dim=1)   [B,G,Sk,dk] -> [B,H,Sk,dk], a copy
    // (--mistake kv_heads_tiled: k.repeat(1, H/G, 1, 1), query head h reading kv head h % G)
    stage repeated;
    if (r.needs(stage_id::repeat_kv)) {
        const dims d{"batch", "head", "kv_seq", "head_dim"};
        repeated = r.emit(stage_id::repeat_kv, {repeat_heads(c, *keys, d), repeat_heads(c, *values, d)});
        keys = &repeated.tensors[0];
        values = &repeated.tensors[1];
    }
    if (!r.needs_from(stage_id::scores)) return finish();

    // 6-11. scores = Q·Kᵀ, scaled = scores / √dk, masked = fill where the mask is false,
    // weights = softmax(dim=-1), dropout: [B,H,Sq,dk] · [B,H,dk,Sk] -> [B,H,Sq,Sk], then
    // elementwise and row by row; and 12's product, context = weights · V [B,H,Sq,dk]
    plane_chain chain = make_plane_chain(c, *queries, *keys, r.needs(stage_id::context) ? values : nullptr,
                                         mask_by_row ? &*mask_by_row : nullptr);
    // (--pos alibi: biased = scaled + bias, the bias made a block at a time from the slopes;
    // --mistake alibi_sign: the slopes negated)
    const std::vector<float> slopes = c.pos == position_encoding::alibi ? run_alibi_slopes(c) : std::vector<float>{};
    chain.alibi_slopes = slopes.empty() ? nullptr : slopes.data();
    chain.first_query_position = first_query_position(c);
    chain.divisor = score_divisor(c);  // --mistake missing_scale divides by 1, wrong_scale by √D, D or dk
    // (--mistake fill_value: another fill, 0 or -1e9 or -inf: mistaken_fill)
    chain.fill = c.mistake == mistake::fill_value ? mistaken_fill(c, c.mistake_variant) : c.fill;
    std::optional<tensor> context = plane_steps(r, chain, alibi_stage, mask_stage);

    // 23. flash: the same q, k, v, mask, divisor, bias and fill, keys a block of --flash-block N at
    // a time with a running max and sum: m, l, rescale [B,H,Sq,nb], acc [B,H,Sq,nb,dk], context [B,H,Sq,dk]
    std::optional<flash_stage> flash;
    if (r.needs(stage_id::flash)) {
        const flash_inputs f{queries, keys, values, chain.mask, chain.divisor, chain.fill,
                             static_cast<std::size_t>(c.flash_block), chain.alibi_slopes, chain.first_query_position};
        flash = flash_stage{flash_attention(f), flash_tolerance(*values)};
    }
    proj = view = tr = rope = append = repeated = stage{};  // q, k, v: no later stage reads them
    mask_by_row.reset();
    mask = xt::xarray<bool>();

    // 12-15. context, merge, concat, output
    if (context) context_to_output(r, p, std::move(*context), std::move(flash));
    return finish();
}

trace compute_trace(const config& c, inputs in) {
    trace t;
    t.cfg = c;
    t.stages.reserve(stage_count);  // stages are referenced while later ones are added
    trace_keeper keeper(t);
    t.warnings = compute_stages(c, std::move(in), stage_plan::every_stage(), keeper);
    return t;
}

}  // namespace attn
