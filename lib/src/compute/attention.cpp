// Multi-head attention, one block per stage of CLI.md's table, in order.
//
// Dimension key: B batch, Sq query length, Sk key length, Din/Dkv input widths,
// D model width, H heads, dk = D / H head width. Shapes in PyTorch order.
#include "attn/compute/attention.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xmanipulation.hpp>

#include "attn/compute/error.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/plane_chain.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/compute/threads.hpp"
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
    xt::xarray<float> copy = row_major_copy(x);
    copy.reshape(shape);
    return named(std::move(name), std::move(dim_names), std::move(copy));
}

// Up to this many rows with no allowed key get a warning each; more get one that lists them.
constexpr std::size_t rows_named_one_by_one = 3;

/// The (batch, query) rows of the mask [B,1,Sq,Sk] in which no key may be attended.
std::vector<std::pair<std::size_t, std::size_t>> empty_rows(const config& c, const mask_rows& mask) {
    const auto batch = static_cast<std::size_t>(c.batch), sq = static_cast<std::size_t>(c.seq),
               sk = static_cast<std::size_t>(c.kv_seq);
    std::vector<std::pair<std::size_t, std::size_t>> rows;
    const std::unique_ptr<bool[]> scratch(new bool[std::max<std::size_t>(sk, 1)]);
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* row = mask.row(b, i, scratch.get());
            if (std::find(row, row + sk, true) == row + sk) rows.emplace_back(b, i);
        }
    return rows;
}

/// Warnings about the rows in which no key may be attended: one per row when
/// there are few ("batch 1, query 3: no key may be attended, so its weights are
/// NaN (fill -inf)", or "0 (--safe-softmax)"), else one that names them,
/// consecutive rows of a batch item as a range ("batch 1 queries 0..3, batch 2
/// query 5"), the first eight ranges.
void warn_empty_rows(const mask_rows& mask, const config& c, warning_list& out) {
    const auto rows = empty_rows(c, mask);
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


xt::xarray<float> to_float(const xt::xarray<bool>& mask) { return xt::xarray<float>(xt::cast<float>(mask)); }

// --- a run: the stages it needs, the sink they go to

/// A run in progress: what it computes, where its stages go, and what it knows so far.
struct run {
    const config& c;
    const stage_plan& plan;
    stage_sink& sink;
    std::array<bool, stage_table.size()> needed{};
    trace so_far;  // the config and the warnings; the sink keeps the stages it wants

    bool needs(std::string_view name) const { return needed[static_cast<std::size_t>(find_stage_info(name)->step - 1)]; }
    bool shows(std::string_view name) const { return needs(name) && plan.shows(name); }

    /// The stage called `name` with `tensors`, handed to the sink when the plan shows it.
    stage emit(std::string_view name, std::vector<tensor> tensors) {
        stage s{find_stage_info(name), stage_formula(c, name), std::move(tensors)};
        if (plan.shows(name)) sink.stage_done(so_far, s);
        return s;
    }
};

/// Storage the next step may overwrite in place: `s` itself when nothing else holds it
/// (the sink wrote the stage out and let it go, or gave it back), else a copy (the sink
/// keeps the stage).
xt::xarray<float>& writable(run& r, tensor_storage& s) {
    r.sink.give_back(s);  // always: it also orders the writer's last reads before our writes
    if (s.use_count() > 1) s = make_storage(xt::xarray<float>(*s));
    return const_cast<xt::xarray<float>&>(*s);  // made non-const by make_storage; no one else reads it
}

/// Where a step of the chain writes and what it reads: in place (from == nullptr), or
/// from the last stage's tensor into another.
struct plane_step {
    float* to = nullptr;
    const float* from = nullptr;
};

/// The [B,H,Sq,Sk] tensor the chain's stages share in place, or with plan.spare_planes
/// up to that many more taking turns: while the sink still writes a stage out (it holds
/// the storage, as npz's writer thread does), the next is computed into another, instead
/// of waiting.
class plane_buffers {
public:
    plane_buffers(run& r, const plane_chain& chain)
        : r_(r), current_(make_storage(xt::xarray<float>::from_shape({chain.batch, chain.heads, chain.rows, chain.width}))) {}

    /// The last stage's tensor (the one the last step wrote).
    const tensor_storage& current() const { return current_; }

    /// Where the next step writes: while the sink holds this tensor, a spare it has let go
    /// of, else a new one if the plan has room, else the one it was lent longest ago once
    /// it is given back; without spares, this one, once the sink lets it go.
    plane_step next() {
        if (r_.plan.spare_planes == 0 || current_.use_count() == 1) return in_place();
        auto free = std::find_if(spares_.begin(), spares_.end(), [](const tensor_storage& s) { return s.use_count() == 1; });
        if (free == spares_.end() && spares_.size() < r_.plan.spare_planes) {
            spares_.push_back(make_storage(xt::xarray<float>::from_shape(current_->shape())));
            free = spares_.end() - 1;
        }
        if (free == spares_.end()) {
            r_.sink.give_back(spares_.front());  // the oldest stage: written by now, most often
            if (spares_.front().use_count() > 1) return in_place();
            free = spares_.begin();
        }
        const float* from = current_->data();
        tensor_storage next = std::move(*free);
        spares_.erase(free);
        spares_.push_back(std::move(current_));  // the newest lent
        current_ = std::move(next);
        return {mutable_data(current_), from};
    }
    /// This tensor, to change in place (once the sink lets it go, else a copy of it).
    xt::xarray<float>& whole() { return writable(r_, current_); }
    plane_step in_place() { return {whole().data(), nullptr}; }

private:
    static float* mutable_data(const tensor_storage& s) {
        return const_cast<float*>(s->data());  // made non-const by make_storage; no one else reads it
    }
    run& r_;
    tensor_storage current_;
    std::deque<tensor_storage> spares_;  // the others, the one lent longest ago first
};

/// The [m,k]·[k,n] product a step makes per plane (none: 0).
struct plane_product {
    std::size_t m = 0, n = 0, k = 0;
};

/// Runs fn(block) on every (batch, head) plane of `step` [B,H,R,W] (planes [first, end)
/// when given): the planes in parallel when there are enough of them (each BLAS call then
/// on its own thread), else one after another, each with every thread (BLAS's, and the
/// rows' loops). Small runs stay on one thread: starting OpenMP's threads costs more than
/// they save (and a classroom run is small). A `product` too large for OpenBLAS to run
/// on one thread goes one plane after another, on OpenBLAS's threads, as PyTorch's bmm does.
template <typename Fn>
void for_each_plane(const plane_chain& chain, plane_step step, Fn fn, std::size_t first = 0,
                    std::size_t end = static_cast<std::size_t>(-1), plane_product product = {}) {
    constexpr std::size_t parallel_elements = std::size_t{1} << 15;  // as the rows' loops (plane_chain.cpp)
    end = std::min(end, chain.planes());
    const std::size_t planes = end - first;
    const bool blas_threads = !blas_runs_on_one_thread(product.m, product.n, product.k);
    const auto block_of = [&](std::size_t p) {
        const std::size_t at = p * chain.plane_size();
        return plane_block{p / chain.heads, p % chain.heads, 0, chain.rows, step.to + at,
                           step.from != nullptr ? step.from + at : nullptr};
    };
    if (planes < 2 || thread_count() < 2 || planes * chain.plane_size() < parallel_elements || blas_threads) {
        for (std::size_t p = first; p < end; ++p) fn(block_of(p));
        return;
    }
    const blas_on_one_thread one;
#pragma omp parallel for schedule(dynamic)
    for (std::ptrdiff_t p = static_cast<std::ptrdiff_t>(first); p < static_cast<std::ptrdiff_t>(end); ++p)
        fn(block_of(static_cast<std::size_t>(p)));
}

const dims score_dims{"batch", "head", "query", "key"};

/// The weak-fill finding a run gathers while masking: with a mask and a finite fill.
bool looks_for_weak_fill(const config& c) { return c.mask.any() && !std::isinf(c.fill); }

/// 6. scores' product per plane: [Sq,dk]·[dk,Sk].
plane_product scores_product(const plane_chain& chain) {
    return {chain.rows, chain.width, chain.rows_of->values.shape()[3]};
}

/// 6. scores into the buffers' tensor [B,H,Sq,Sk], a few planes at a time when the stage is large,
/// each part handed to the sink as it is complete (stage_partly_done): a sink that writes
/// the stage out starts on the first planes while the others are computed, instead of
/// after the last.
void scores_in_parts(run& r, const plane_chain& chain, plane_buffers& buffers) {
    const plane_step step = buffers.in_place();
    constexpr std::size_t least_part_bytes = std::size_t{32} << 20, most_parts = 4;
    const std::size_t planes = chain.planes(), plane_bytes = chain.plane_size() * sizeof(float);
    const std::size_t parts =
        r.plan.shows("scores") ? std::clamp<std::size_t>(planes * plane_bytes / least_part_bytes, 1, most_parts) : 1;
    const std::size_t per_part = std::max<std::size_t>((planes + parts - 1) / parts, 1);
    for (std::size_t first = 0; first < planes; first += per_part) {
        const std::size_t end = std::min(planes, first + per_part);
        for_each_plane(chain, step, [&](const plane_block& b) { block_scores(chain, b); }, first, end,
                       scores_product(chain));
        if (end == planes) break;  // the whole stage: emitted next
        const stage part{find_stage_info("scores"), stage_formula(r.c, "scores"),
                         {named("scores", score_dims, buffers.current())}};
        r.sink.stage_partly_done(r.so_far, part, end * chain.plane_size());
    }
}

/// Stages 6-11 on whole [B,H,Sq,Sk] tensors, one buffer shared in place; `mask_stage`
/// emits stage 8 between scaled and masked. Returns the last weights (softmax or dropout).
tensor_storage planes_whole(run& r, const plane_chain& chain, const std::function<void()>& mask_stage) {
    const config& c = r.c;
    plane_buffers buffers(r, chain);
    scores_in_parts(r, chain, buffers);
    r.emit("scores", {named("scores", score_dims, buffers.current())});
    if (!r.needs("scaled")) return buffers.current();

    for_each_plane(chain, buffers.next(), [&](const plane_block& b) { block_scale(chain, b); });
    r.emit("scaled", {named("scaled", score_dims, buffers.current())});
    if (chain.mask != nullptr) {
        mask_stage();
        if (!r.needs("masked")) return buffers.current();
        weak_fill_finding finding;
        weak_fill_finding* found = looks_for_weak_fill(c) ? &finding : nullptr;
        for_each_plane(chain, buffers.next(), [&](const plane_block& b) { block_mask(chain, b, found); });
        if (found) weak_fill_warning(c, finding, r.so_far.warnings);
        r.emit("masked", {named("masked", score_dims, buffers.current())});
    }
    if (!r.needs("softmax")) return buffers.current();

    if (makes(c, mistake::softmax_axis))  // --mistake: over the queries (dim=-2) or the heads (dim=1)
        softmax_over_axis(buffers.whole(), c.mistake_variant == 0 ? 2 : 1);
    else
        for_each_plane(chain, buffers.next(), [&](const plane_block& b) { block_softmax(chain, b); });
    r.emit("softmax", {named("weights", score_dims, buffers.current())});
    if (!r.needs("dropout")) return buffers.current();

    // keep = torch.rand(B,H,Sq,Sk) < 1 - p: the draws, in order, then compared in place
    auto keep = xt::xarray<float>::from_shape(buffers.current()->shape());
    torch_generator(c.dropout.seed).rand(keep.data(), keep.size());
    const plane_step step = buffers.next();
    for_each_plane(chain, step, [&](const plane_block& b) {
        float* keep_plane = keep.data() + (b.data - step.to);
        block_dropout(chain, b, keep_plane, keep_plane);
    });
    r.emit("dropout", {named("weights", score_dims, buffers.current()),
                       named("keep", score_dims, std::move(keep), element_type::boolean)});
    return buffers.current();
}

/// The chain's steps from scores up to `last`, on one block (the rows layout).
void steps_up_to(run& r, const plane_chain& chain, const plane_block& b, std::string_view last,
                 weak_fill_finding* finding, torch_generator* draws_from, std::vector<float>& draws) {
    const int until = find_stage_info(last)->step;
    block_scores(chain, b);
    if (until >= find_stage_info("scaled")->step) block_scale(chain, b);
    if (until >= find_stage_info("masked")->step && chain.mask != nullptr) block_mask(chain, b, finding);
    if (until >= find_stage_info("softmax")->step) block_softmax(chain, b);
    if (until >= find_stage_info("dropout")->step) {
        draws.resize(b.rows * chain.width);
        draws_from->rand(draws.data(), draws.size());
        block_dropout(chain, b, draws.data(), nullptr);
    }
    (void)r;
}

/// Stages 6-11 in blocks of query rows, handed to the sink in rows: one pass over the
/// planes per stage shown (each recomputes the steps before it), the last pass also
/// computing context [B,H,Sq,dk] into `context` when it is not null.
void planes_in_rows(run& r, const plane_chain& chain, const std::function<void()>& mask_stage, float* context) {
    const config& c = r.c;
    const std::size_t block_rows = std::max<std::size_t>(1, std::min(r.plan.block_rows ? r.plan.block_rows : chain.rows, chain.rows));
    std::vector<std::string_view> passes;
    std::string_view last_step;
    for (std::string_view name : {"scores", "scaled", "masked", "softmax", "dropout"})
        if (stage_in_run(c, name) && r.needs(name)) {
            last_step = name;
            if (r.plan.shows(name)) passes.push_back(name);
        }
    if (context != nullptr && (passes.empty() || passes.back() != last_step)) passes.push_back(last_step);
    std::vector<float> block(block_rows * chain.width), draws;
    bool mask_emitted = chain.mask == nullptr, weak_fill_done = !looks_for_weak_fill(c);
    for (std::size_t pass = 0; pass < passes.size(); ++pass) {
        const std::string_view target = passes[pass];
        if (!mask_emitted && find_stage_info(target)->step > find_stage_info("mask")->step) {
            mask_stage();
            mask_emitted = true;
        }
        const bool shown = r.plan.shows(target);
        const bool computes_context = context != nullptr && pass + 1 == passes.size();
        weak_fill_finding finding;
        weak_fill_finding* found = !weak_fill_done && find_stage_info(target)->step >= find_stage_info("masked")->step ? &finding : nullptr;
        std::vector<tensor> heads{shape_only(target == "softmax" || target == "dropout" ? "weights" : std::string(target),
                                             score_dims, {chain.batch, chain.heads, chain.rows, chain.width})};
        if (target == "dropout")
            heads.push_back(shape_only("keep", score_dims, {chain.batch, chain.heads, chain.rows, chain.width},
                                       element_type::boolean));
        const stage head{find_stage_info(target), stage_formula(c, target), std::move(heads)};
        if (shown) r.sink.stage_begin(r.so_far, head);
        torch_generator generator(c.dropout.seed);
        for (std::size_t p = 0; p < chain.planes(); ++p)
            for (std::size_t first = 0; first < chain.rows; first += block_rows) {
                const plane_block b{p / chain.heads, p % chain.heads, first, std::min(block_rows, chain.rows - first), block.data()};
                steps_up_to(r, chain, b, target, found, &generator, draws);
                if (shown) r.sink.stage_rows(0, p * chain.rows + first, b.rows, b.data);
                if (computes_context) block_context(chain, b, context);
            }
        if (found) {
            weak_fill_warning(c, finding, r.so_far.warnings);
            weak_fill_done = true;
        }
        if (shown && target == "dropout") {  // keep: the same draws again, compared
            torch_generator again(c.dropout.seed);
            for (std::size_t row = 0; row < chain.planes() * chain.rows; row += block_rows) {
                const std::size_t count = std::min(block_rows, chain.planes() * chain.rows - row);
                again.rand(block.data(), count * chain.width);
                keep_from_draws(block.data(), count * chain.width, c.dropout.p);
                r.sink.stage_rows(1, row, count, block.data());
            }
        }
        if (shown) r.sink.stage_end(r.so_far, head);
    }
    if (!mask_emitted) mask_stage();
}

}  // namespace

void stage_sink::stage_begin(const trace&, const stage&) {
    throw error("this sink takes no stages in rows");
}
void stage_sink::stage_rows(std::size_t, std::size_t, std::size_t, const float*) {}
void stage_sink::stage_end(const trace&, const stage&) {}

void trace_keeper::stage_done(const trace&, const stage& s) { into_.stages.push_back(s); }

namespace {

/// Calls on_stage with the trace so far (the stages kept, the warnings known).
class calling_keeper : public stage_sink {
public:
    calling_keeper(trace& into, const stage_callback& on_stage) : into_(into), on_stage_(on_stage) {}
    void stage_done(const trace& so_far, const stage& s) override {
        into_.stages.push_back(s);
        into_.warnings = so_far.warnings;
        if (on_stage_) on_stage_(into_, into_.stages.back());
    }

private:
    trace& into_;
    const stage_callback& on_stage_;
};

/// Stages 8-12: the mask, the [B,H,Sq,Sk] chain (whole, or in rows when the plan
/// says so and the sink takes rows) and context [B,H,Sq,dk] when a later stage needs it.
/// `mask_stage` emits stage 8 in its place.
std::optional<tensor> planes_and_context(run& r, const stage& tr, const mask_rows* mask,
                                         const std::function<void()>& mask_stage) {
    const config& c = r.c;
    plane_chain chain = make_plane_chain(c, tr.tensors[0], tr.tensors[1], r.needs("context") ? &tr.tensors[2] : nullptr,
                                         mask);
    chain.divisor = score_divisor(c);  // --mistake missing_scale divides by 1, wrong_scale by √D, D or dk
    // (--mistake fill_value: another fill, 0 or -1e9 or -inf: mistaken_fill)
    chain.fill = makes(c, mistake::fill_value) ? mistaken_fill(c, c.mistake_variant) : c.fill;
    const std::size_t head_dim = tr.tensors[2].values.shape()[3];
    const auto context_storage = [&] {
        return xt::xarray<float>::from_shape({chain.batch, chain.heads, static_cast<std::size_t>(c.seq), head_dim});
    };
    const dims context_dims{"batch", "head", "seq", "head_dim"};
    if (r.plan.layout == plane_layout::in_rows && r.sink.takes_rows() && !makes(c, mistake::softmax_axis)) {
        if (!r.needs("context")) {
            planes_in_rows(r, chain, mask_stage, nullptr);
            return std::nullopt;
        }
        auto context = context_storage();  // [B,H,Sq,dk]
        planes_in_rows(r, chain, mask_stage, context.data());
        return named("context", context_dims, std::move(context));
    }
    tensor_storage weights = planes_whole(r, chain, mask_stage);
    if (!r.needs("context")) return std::nullopt;
    // 12. context: [B,H,Sq,Sk] · [B,H,Sk,dk] -> [B,H,Sq,dk], per (batch, head) plane
    auto context = context_storage();
    const plane_product per_plane{chain.rows, tr.tensors[2].values.shape()[3], chain.width};  // [Sq,Sk]·[Sk,dk]
    for_each_plane(chain, plane_step{const_cast<float*>(weights->data()), nullptr},  // read only: block_context writes `context`
                   [&](const plane_block& b) { block_context(chain, b, context.data()); }, 0, chain.planes(), per_plane);
    return named("context", context_dims, std::move(context));
}

/// Stages 12-15 from context [B,H,Sq,dk].
void context_to_output(run& r, const parameters& p, tensor context_tensor) {
    const config& c = r.c;
    stage context = r.emit("context", {std::move(context_tensor)});
    if (!r.needs("merge")) return;

    // 13. merge: [B,H,Sq,dk] -> [B,Sq,H,dk], context.transpose(1, 2): a view, not contiguous
    // (--mistake merge_without_transpose: context.view(B,Sq,H,dk), the same storage read straight on)
    const dims merge_dims{"batch", "seq", "head", "head_dim"};
    const tensor& ctx = context.tensors[0];
    const tensor_shape merge_shape{ctx.values.shape()[0], ctx.values.shape()[2], ctx.values.shape()[1],
                                   ctx.values.shape()[3]};
    stage merge = r.emit("merge", {makes(c, mistake::merge_without_transpose)
                                       ? as_strided(ctx, path_of(context, ctx), "context", merge_dims, merge_shape,
                                                    contiguous_strides(merge_shape))
                                       : swap_axes_1_2(context, ctx, merge_dims)});
    if (!r.needs("concat")) return;

    // 14. concat: [B,Sq,H,dk] -> [B,Sq,D], the heads side by side: merge.contiguous().view(B,Sq,D),
    // the copy (a view when merge is contiguous already: one head, or one query)
    const tensor_shape concat_shape{static_cast<std::size_t>(c.batch), static_cast<std::size_t>(c.seq),
                                    static_cast<std::size_t>(c.d_model)};
    const stage cat = r.emit(
        "concat", {contiguous_view(merge, merge.tensors[0], "concat", {"batch", "seq", "d_model"}, concat_shape)});
    context = merge = stage{};  // concat holds what it needs
    if (!r.needs("output")) return;

    // 15. output: concat·W_oᵀ + b_o   [B,Sq,D] · [D,D]ᵀ -> [B,Sq,D], on concat's row-major memory
    r.emit("output", {named("out", {"batch", "seq", "d_model"},  // (project: the projections' mistakes, ways 1 and 2)
                            project(c, true, cat.tensors[0].values.data(), concat_shape, *p.w_o, present(p.b_o)))});
}

}  // namespace

warning_list compute_stages(const config& c, const inputs& in, const stage_plan& plan, stage_sink& sink) {
    run r{c, plan, sink, stages_needed(c, plan), trace{}};
    r.so_far.cfg = c;
    r.so_far.warnings = in.warnings;
    for (warning& w : settings_advice(c)) r.so_far.warnings.push_back(std::move(w));
    if (c.mistake != mistake::none)  // --mistake ID: made on purpose, said where it is made
        r.so_far.warnings.push_back({std::string(mistake_stage(c.mistake, c.mistake_variant)), mistake_warning(c)});
    const auto heads = static_cast<std::size_t>(c.heads);
    const parameters& p = in.params;

    // 8. mask [B,1,Sq,Sk] (true = may attend): made a row at a time from its rules when they
    // make all of it and the stage is not shown (mask_rows), else built whole (one byte a
    // position); emitted in its place, between scaled and masked, or at the end when no
    // later stage is computed
    xt::xarray<bool> mask;                 // when built whole
    std::optional<mask_rows> mask_by_row;  // what the planes read
    if (r.needs("mask") && !r.shows("mask") && !in.mask && mask_rows::make_all_of(c)) {
        mask_by_row.emplace(c.mask, c.seq, c.kv_seq);
    } else if (r.needs("mask")) {
        mask = build_mask(c, in.mask ? &*in.mask : nullptr);
        if (makes(c, mistake::mask_inverted)) mask = xt::xarray<bool>(!mask);  // --mistake: true = may NOT attend
        mask_by_row.emplace(mask);
    }
    if (mask_by_row) warn_empty_rows(*mask_by_row, c, r.so_far.warnings);
    bool mask_emitted = !r.shows("mask");
    const std::function<void()> mask_stage = [&] {
        if (mask_emitted) return;
        mask_emitted = true;
        r.emit("mask", {named("mask", {"batch", "head", "query", "key"}, to_float(mask), element_type::boolean)});
    };
    const auto finish = [&] {
        mask_stage();
        return r.so_far.warnings;
    };

    // 1-3. input, params, projections; or, with --q --k --v, the given projections
    if (!in.qkv && r.shows("input")) {
        std::vector<tensor> input{named("x", {"batch", "seq", "d_in"}, in.x)};                   // [B,Sq,Din]
        if (in.x_kv) input.push_back(named("x_kv", {"batch", "kv_seq", "d_kv_in"}, *in.x_kv));  // [B,Sk,Dkv]
        r.emit("input", std::move(input));
    }
    if (!in.qkv && r.shows("params")) r.emit("params", param_tensors(p));
    if (!r.needs("projections")) return finish();
    // Q = X·W_qᵀ + b_q, K = X_kv·W_kᵀ + b_k, V = X_kv·W_vᵀ + b_v
    // (project: with --mistake weight_not_transposed x·W, with --mistake missing_bias no b)
    const xt::xarray<float>& x_kv = in.x_kv ? *in.x_kv : in.x;  // self-attention: keys and values from x
    stage proj = r.emit("projections", in.qkv ? projection_tensors(*in.qkv)
                                              : projection_tensors({project(c, in.x, p.w_q, present(p.b_q)),  // [B,Sq,D]
                                                                    project(c, x_kv, p.w_k, present(p.b_k)),   // [B,Sk,D]
                                                                    project(c, x_kv, p.w_v, present(p.b_v))}));  // [B,Sk,D]
    if (!r.needs("view")) return finish();

    // 4. view: [B,S,D] -> [B,S,H,dk], the last axis split into heads: views of the projections
    stage view = r.emit("view", {split_heads(proj, proj.tensors[0], heads, {"batch", "seq", "head", "head_dim"}),
                                 split_heads(proj, proj.tensors[1], heads, {"batch", "kv_seq", "head", "head_dim"}),
                                 split_heads(proj, proj.tensors[2], heads, {"batch", "kv_seq", "head", "head_dim"})});
    if (!r.needs("transpose")) return finish();

    // 5. transpose: [B,S,H,dk] -> [B,H,S,dk], heads become a batch axis: views again, not contiguous
    // (--mistake split_without_transpose: projections.q.view(B,H,S,dk) instead, contiguous and wrong)
    const auto split = [&](std::size_t i, const char* seq) {
        const dims d{"batch", "head", seq, "head_dim"};
        return makes(c, mistake::split_without_transpose) ? split_by_plain_view(proj, proj.tensors[i], heads, d)
                                                          : swap_axes_1_2(view, view.tensors[i], d);
    };
    stage tr = r.emit("transpose", {split(0, "seq"), split(1, "kv_seq"), split(2, "kv_seq")});
    if (!r.needs("scores")) return finish();
    std::optional<tensor> context = planes_and_context(r, tr, mask_by_row ? &*mask_by_row : nullptr, mask_stage);
    proj = view = tr = stage{};  // q, k, v: no later stage reads them
    mask_by_row.reset();
    mask = xt::xarray<bool>();
    if (context) context_to_output(r, p, std::move(*context));
    return finish();
}

trace compute_trace(const config& c, const inputs& in, const stage_callback& on_stage) {
    trace t;
    t.cfg = c;
    t.stages.reserve(stage_table.size());  // stages are referenced while later ones are added
    calling_keeper keeper(t, on_stage);
    t.warnings = compute_stages(c, in, stage_plan::every_stage(), keeper);
    return t;
}

}  // namespace attn
