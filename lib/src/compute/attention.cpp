// Multi-head attention, one block per stage of CLI.md's table, in the order the stages are
// printed (shapes in PyTorch order; the dimension letters are config.hpp's). The steps that
// run_steps may replace are called through forward_steps: this file is PyTorch's forward pass.
#include "attn/compute/attention.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/compute/activations.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/flash.hpp"
#include "attn/compute/forward_steps.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/linalg.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/norms.hpp"
#include "attn/compute/plane_chain.hpp"
#include "attn/compute/positions.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/compute/stage_sink.hpp"

namespace attn {
namespace {

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

// x.contiguous().view(shape): a view of x's storage when x is contiguous already, else a
// row-major copy of x's elements.
tensor contiguous_view(const stage& from, const tensor& x, std::string name, dims dim_names,
                       const tensor_shape& shape) {
    if (x.contiguous()) return plain_view(from, x, std::move(name), std::move(dim_names), shape);
    xt::xarray<float> copy = row_major_copy(x);
    copy.reshape(shape);
    return tensor(std::move(name), std::move(dim_names), std::move(copy));
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
/// kv_head_of(h, H, G), a fresh contiguous copy.
tensor repeat_heads(const tensor& kv, std::size_t H, std::size_t (*kv_head_of)(std::size_t, std::size_t, std::size_t),
                    dims dim_names) {
    const auto& sz = kv.values.shape();
    const std::size_t B = sz[0], G = sz[1], S = sz[2], dk = sz[3];
    auto out = xt::xarray<float>::from_shape({B, H, S, dk});
    std::vector<float> scratch;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            std::copy_n(row_major_rows(kv, b, kv_head_of(h, H, G), 0, S, scratch), S * dk, out.data() + (b * H + h) * S * dk);
    return tensor(kv.name, std::move(dim_names), std::move(out));
}

// --- the stages

const xt::xarray<float>* present(const optional_tensor& v) { return v ? &*v : nullptr; }

/// Each row of x [..., width] normalised by `norm` (norms.hpp): LayerNorm with its bias (none:
/// zeros), or RMSNorm. The norm stage's, mlp_norm's and post-norm block's.
xt::xarray<float> normalised(norm_kind norm, const xt::xarray<float>& x, const xt::xarray<float>& weight,
                             const optional_tensor& bias, float eps) {
    auto y = xt::xarray<float>::from_shape(x.shape());
    const std::size_t width = x.shape().back(), rows = width == 0 ? 0 : x.size() / width;
    if (norm == norm_kind::rms_norm) rms_norm_rows(x.data(), rows, width, weight.data(), eps, y.data());
    else layer_norm_rows(x.data(), rows, width, weight.data(), bias ? bias->data() : nullptr, eps, y.data());
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
    std::optional<run_plan> planned = layouts_to_check(c, plan);  // debug builds: every stage made is checked

    bool needs(stage_id id) const { return (needed & stage_bit(id)) != 0; }
    bool shows(stage_id id) const { return needs(id) && plan.shows(id); }

    stage make(stage_id id, std::vector<tensor> tensors) const {
        stage s{&info_of(id), std::move(tensors), {}};
        if (planned) check_planned_layouts(*planned, s);
        return s;
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

/// q [B,H,Sq,dk], k and v [B,G,Sk,dk] (then [B,H,Sk,dk]) as the next stage reads them: views or
/// copies that share the storage of the stage that made them.
struct qkv_tensors {
    tensor q, k, v;
};

// --- stages 6-12: the [B,H,Sq,Sk] steps, on whole planes or a block of rows at a time

const dims score_dims{"batch", "head", "query", "key"};

/// The chain the plane stages of `steps` read: Q·Kᵀ's operands, the divisor, fill, slopes and dropout.
plane_chain make_chain(const config& c, const forward_steps& steps, const qkv_tensors& qkv, bool with_values,
                       const std::vector<float>& slopes) {
    plane_chain chain;
    std::tie(chain.rows_of, chain.columns_of) = steps.score_operands(qkv.q, qkv.k);
    chain.values = with_values ? &qkv.v : nullptr;
    chain.batch = qkv.q.values.shape()[0];
    chain.heads = qkv.q.values.shape()[1];
    chain.rows = chain.rows_of->values.shape()[2];
    chain.width = chain.columns_of->values.shape()[2];
    chain.divisor = steps.divisor(c);
    chain.fill = steps.fill(c);
    chain.alibi_slopes = slopes.empty() ? nullptr : slopes.data();
    chain.first_query_position = first_query_position(c);
    chain.safe_softmax = c.safe_softmax;
    chain.dropout_p = c.dropout.p;
    chain.dropout = steps.dropout(c.dropout.p);
    return chain;
}

/// A plane stage the run computes and the step that makes it.
struct plane_stage_step {
    stage_id id;
    plane_step step;
};

/// The most trues one after another in `shown`.
std::size_t longest_run(const std::vector<bool>& shown) {
    std::size_t longest = 0, run = 0;
    for (const bool s : shown) longest = std::max(longest, run = s ? run + 1 : 0);
    return longest;
}

/// Stages 6-11 and context's product (stage 12) over one list of steps, in one of two ways:
/// whole planes, the [B,H,R,W] tensor, one pass per step (whole_pass); or row blocks, query
/// rows of one plane at a time, one pass per stage shown, each anew from the scores (rows_pass).
class plane_stages {
public:
    plane_stages(run& r, const plane_chain& chain, const forward_steps& steps)
        : r_(r), chain_(chain), context_step_(steps.context),
          whole_(r.plan.layout == plane_layout::whole_tensor),
          every_row_(r.plan.computes_every_query_row(r.c)),
          wants_context_(r.needs(stage_id::context)),
          weak_fill_done_(!r.c.mask.any() || std::isinf(r.c.fill)) {
        const std::pair<stage_id, plane_step> all[] = {
            {stage_id::scores, scores_step}, {stage_id::scaled, steps.scale},     {stage_id::biased, bias_step},
            {stage_id::masked, steps.mask},  {stage_id::softmax, steps.softmax}, {stage_id::dropout, dropout_step}};
        for (const auto& [id, step] : all)
            if (r.needs(id)) steps_.push_back({id, step});
        const std::size_t R = chain.rows, W = chain.width, head_dim = wants_context_ ? chain.values->values.shape()[3] : 0;
        block_rows_ = whole_ ? R : std::clamp<std::size_t>(r.plan.block_rows ? r.plan.block_rows : R, 1, std::max<std::size_t>(R, 1));
        if (!whole_) block_now_.resize((every_row_ ? block_rows_ : std::min(block_rows_, longest_run(r.plan.shown_query))) * W);
        if (wants_context_) context_ = xt::xarray<float>::from_shape({chain.batch, chain.heads, R, head_dim});
        if (wants_context_ && !every_row_) context_.fill(0.0f);
    }

    /// Computes plane stage `id` when the run needs it, and hands it to the sink when shown.
    void compute(stage_id id) {
        std::size_t s = 0;
        while (s < steps_.size() && steps_[s].id != id) ++s;
        if (s == steps_.size()) return;
        const bool with_context = wants_context_ && s + 1 == steps_.size();
        if (whole_) whole_pass(s, with_context);
        else if (r_.plan.shows(id) || with_context) rows_pass(s, with_context);
    }

    /// 12. context [B,H,R,dk] = weights · V, once the last step is done; nullopt when no stage needs it.
    std::optional<tensor> context() {
        if (!wants_context_) return std::nullopt;
        return tensor("context", {"batch", "head", "seq", "head_dim"}, std::move(context_));
    }

private:
    tensor_shape score_shape() const { return {chain_.batch, chain_.heads, chain_.rows, chain_.width}; }

    /// Whole planes: step s on the [B,H,R,W] tensor, in place, or into a tensor of its own when
    /// the sink keeps the one handed on; then context's product when asked.
    void whole_pass(std::size_t s, bool with_context) {
        const stage_id id = steps_[s].id;
        std::shared_ptr<xt::xarray<float>> source;
        if (!now_ || (r_.plan.sink_keeps && handed_on_)) {
            source = std::move(now_);
            now_ = std::make_shared<xt::xarray<float>>(xt::xarray<float>::from_shape(score_shape()));
            handed_on_ = false;
        }
        rows_block block{0, chain_.planes(), 0, chain_.rows, now_->data(), source ? source->data() : nullptr};
        weak_fill_finding finding;
        if (id == stage_id::masked && !weak_fill_done_) block.finding = &finding;
        std::shared_ptr<xt::xarray<float>> keep;  // torch.rand(B,H,Sq,Sk), then keep (0 or 1) in place
        if (id == stage_id::dropout) {
            keep = std::make_shared<xt::xarray<float>>(xt::xarray<float>::from_shape(score_shape()));
            torch_generator(r_.c.dropout.seed).rand(keep->data(), keep->size());
            block.draws = block.keep = keep->data();
        }
        steps_[s].step(chain_, block);
        block.source = nullptr;
        if (with_context) add_context(block);
        if (block.finding != nullptr) warn_weak_fill(finding);
        if (!r_.plan.shows(id)) return;
        std::vector<tensor> tensors{tensor(std::string(info_of(id).tensors[0]), score_dims, tensor_storage(now_))};
        if (keep) tensors.push_back(tensor("keep", score_dims, tensor_storage(keep), element_type::boolean));
        r_.emit(id, std::move(tensors));
        handed_on_ = true;
    }

    /// Row blocks: steps 0..last on each block of the shown query rows (every row when the run
    /// computes them all) of each plane, handed on in rows when shown; then context's product when asked.
    void rows_pass(std::size_t last, bool with_context) {
        const stage_id id = steps_[last].id;
        const bool shown = r_.plan.shows(id);
        const stage_plan& plan = r_.plan;
        stage in_rows;
        if (shown) {
            std::vector<tensor> heads{shape_only(std::string(info_of(id).tensors[0]), score_dims, score_shape())};
            if (id == stage_id::dropout) heads.push_back(shape_only("keep", score_dims, score_shape(), element_type::boolean));
            in_rows = r_.make(id, std::move(heads));
            r_.sink.begin(r_.so_far, in_rows);
        }
        weak_fill_finding finding;
        const bool gathers = !weak_fill_done_ && id >= stage_id::masked;
        std::optional<torch_generator> draws_from;  // the dropout draws, a block at a time
        if (id == stage_id::dropout) draws_from.emplace(r_.c.dropout.seed);
        const auto shown_in = [](const std::vector<bool>& items, std::size_t i) { return items.empty() || items[i]; };
        const bool every_plane = r_.needs(stage_id::dropout);  // the draws again
        const std::size_t R = chain_.rows, W = chain_.width;
        for (std::size_t p = 0; p < chain_.planes(); ++p) {
            const bool plane_shown = every_plane || (shown_in(plan.shown_batch, p / chain_.heads) &&
                                                     shown_in(plan.shown_head, p % chain_.heads));
            if (!plane_shown && !with_context) continue;
            for (std::size_t row = 0; row < R;) {
                if (!every_row_ && !plan.shown_query[row]) {  // a row no output shows
                    ++row;
                    continue;
                }
                std::size_t end = row + 1;  // up to block_rows rows that are shown, one after another
                while (end < R && end - row < block_rows_ && (every_row_ || plan.shown_query[end])) ++end;
                rows_block block{p, 1, row, end - row, block_now_.data()};
                block.finding = gathers ? &finding : nullptr;
                for (std::size_t s = 0; s <= last; ++s) {
                    if (steps_[s].id == stage_id::dropout) block.draws = next_draws(*draws_from, block.rows * W);
                    steps_[s].step(chain_, block);
                }
                if (shown && plane_shown) r_.sink.rows(0, p * R + row, block.rows, block.data);
                if (with_context) add_context(block);
                row = end;
            }
        }
        if (gathers) warn_weak_fill(finding);
        if (!shown) return;
        if (id == stage_id::dropout) handout_keep();
        r_.sink.end(r_.so_far, in_rows);
    }

    /// 12. context rows: [rows,Sk] · [Sk,dk] -> [rows,dk]
    void add_context(rows_block block) {
        block.context = context_.data();
        context_step_(chain_, block);
    }

    /// keep, in rows: the same draws again, compared.
    void handout_keep() {
        const std::size_t total = chain_.planes() * chain_.rows, W = chain_.width;
        torch_generator again(r_.c.dropout.seed);
        for (std::size_t row = 0; row < total; row += block_rows_) {
            const std::size_t count = std::min(block_rows_, total - row);
            again.rand(block_now_.data(), count * W);
            keep_from_draws(block_now_.data(), count * W, r_.c.dropout.p);
            r_.sink.rows(1, row, count, block_now_.data());
        }
    }

    const float* next_draws(torch_generator& from, std::size_t count) {
        draws_.resize(count);
        from.rand(draws_.data(), count);
        return draws_.data();
    }

    void warn_weak_fill(const weak_fill_finding& finding) {
        weak_fill_warning(r_.c, finding, r_.so_far.warnings);
        weak_fill_done_ = true;
    }

    run& r_;
    const plane_chain& chain_;
    plane_step context_step_;
    const bool whole_, every_row_, wants_context_;
    bool weak_fill_done_;  // the finding of a mask with a finite fill, gathered by masked's first pass
    std::vector<plane_stage_step> steps_;  // the plane stages this run computes, in order
    std::size_t block_rows_ = 0;
    std::shared_ptr<xt::xarray<float>> now_;  // whole: the last step's [B,H,R,W]
    bool handed_on_ = false;                  // whole: now_ was handed to the sink
    std::vector<float> block_now_;            // in rows: [block_rows, W]
    std::vector<float> draws_;
    xt::xarray<float> context_;
};

/// What the flash stage computed before q, k, v were let go: its tensors and its tolerance.
struct flash_stage {
    std::vector<tensor> tensors;  // m, l, rescale, acc, context (flash.hpp)
    double tolerance = 0;         // flash_tolerance(v)
};

/// 12a. flash on what the plane stages read: q, k, v, the mask, divisor, bias and fill.
flash_stage flash_of(const qkv_tensors& qkv, const plane_chain& chain, std::size_t keys_per_block) {
    const flash_inputs f{&qkv.q, &qkv.k, &qkv.v, chain.mask, chain.divisor, chain.fill,
                         keys_per_block, chain.alibi_slopes, chain.first_query_position};
    return flash_stage{flash_attention(f), flash_tolerance(qkv.v)};
}

/// 12a. flash: its tensors, and how far its context is from the exact one (a warning past the tolerance).
void emit_flash(run& r, flash_stage flash, const tensor& exact_context) {
    const double difference = max_abs_difference(flash.tensors.back(), exact_context);
    if (!(difference <= flash.tolerance))
        r.so_far.warnings.push_back({"flash", "the flash context differs from the exact one by up to " +
                                                  fill_to_string(static_cast<float>(difference)) + ", more than the tolerance " +
                                                  fill_to_string(static_cast<float>(flash.tolerance))});
    r.emit(stage_id::flash, std::move(flash.tensors), {{"max_abs_diff", difference}, {"tolerance", flash.tolerance}});
}

/// Stages 12-15 (and 12a, flash, after context) from context [B,H,Sq,dk]; the output stage
/// (empty when the run does not compute it).
stage context_to_output(run& r, const forward_steps& steps, const parameters& p, tensor context_tensor,
                        std::optional<flash_stage> flash) {
    const config& c = r.c;
    stage context = r.emit(stage_id::context, {std::move(context_tensor)});
    if (flash) emit_flash(r, std::move(*flash), context.tensors[0]);
    if (!r.needs(stage_id::merge)) return {};

    // 13. merge: [B,H,Sq,dk] -> [B,Sq,H,dk], context.transpose(1, 2): a view, not contiguous
    stage merge = r.emit(stage_id::merge, {steps.merge(context, {"batch", "seq", "head", "head_dim"})});
    if (!r.needs(stage_id::concat)) return {};

    // 14. concat: [B,Sq,H,dk] -> [B,Sq,D], the heads side by side: merge.contiguous().view(B,Sq,D),
    // the copy (a view when merge is contiguous already: one head, or one query)
    const tensor_shape concat_shape{static_cast<std::size_t>(c.batch), static_cast<std::size_t>(c.seq),
                                    static_cast<std::size_t>(c.d_model)};
    const stage cat = r.emit(stage_id::concat, {contiguous_view(merge, merge.tensors[0], "concat",
                                                                {"batch", "seq", "d_model"}, concat_shape)});
    context = merge = stage{};  // concat holds what it needs
    if (!r.needs(stage_id::output)) return {};

    // 15. output: concat·W_oᵀ + b_o   [B,Sq,D] · [D,D]ᵀ -> [B,Sq,D], on concat's row-major memory
    return r.emit(stage_id::output, {tensor("out", {"batch", "seq", "d_model"},
                                           steps.project_output(cat.tensors[0].values.data(), concat_shape, *p.w_o, present(p.b_o)))});
}

// --- 15a-15d: the rest of a model's block (config::block)

/// a + b elementwise, [B,Sq,D] each: one float32 addition per element, as torch's add.
xt::xarray<float> sum_of(const xt::xarray<float>& a, const xt::xarray<float>& b) {
    auto y = xt::xarray<float>::from_shape(a.shape());
    for (std::size_t i = 0; i < y.size(); ++i) y.data()[i] = a.data()[i] + b.data()[i];
    return y;
}

/// 15c. mlp on h [B,Sq,D]: up = h·W_upᵀ + b_up [B,Sq,F] (and gate = h·W_gateᵀ), hidden =
/// act(up) or act(gate)·up [B,Sq,F], out = hidden·W_downᵀ + b_down [B,Sq,D], as nn.Linear
/// (GPT-2's Conv1D: addmm(b, h, W) with W [in, out] as stored)
stage mlp_stage(run& r, const block_weights& w, const xt::xarray<float>& h) {
    const block_spec& b = r.c.block;
    const auto product = [&](const xt::xarray<float>& x, const xt::xarray<float>& W, const optional_tensor& bias) {
        return w.conv1d ? conv1d(x, W, present(bias)) : linear(x, W, present(bias));
    };
    std::vector<tensor> mlp;
    xt::xarray<float> up = product(h, w.w_up, w.b_up);
    auto hidden = xt::xarray<float>::from_shape(up.shape());
    if (b.gated) {  // act_fn(gate_proj(x)) * up_proj(x): the activation, then one multiplication
        xt::xarray<float> gate = product(h, *w.w_gate, std::nullopt);
        activate(b.act, gate.data(), hidden.data(), hidden.size());
        for (std::size_t i = 0; i < hidden.size(); ++i) hidden.data()[i] *= up.data()[i];
        mlp.push_back(tensor("gate", {"batch", "seq", "d_ff"}, std::move(gate)));
    } else {
        activate(b.act, up.data(), hidden.data(), hidden.size());
    }
    xt::xarray<float> out = product(hidden, w.w_down, w.b_down);
    mlp.push_back(tensor("up", {"batch", "seq", "d_ff"}, std::move(up)));
    mlp.push_back(tensor("hidden", {"batch", "seq", "d_ff"}, std::move(hidden)));
    mlp.push_back(tensor("out", {"batch", "seq", "d_model"}, std::move(out)));
    return r.emit(stage_id::mlp, std::move(mlp));
}

/// 15a-15d from the layer's input x and attention's out [B,Sq,D]:
///   residual x = x + out; mlp_norm x = norm(residual); mlp (mlp_stage);
///   block x = residual + mlp.out (pre-norm), or sum = mlp.out + mlp_norm.x, x = norm2(sum) (post-norm)
void block_stages(run& r, const block_weights& w, const xt::xarray<float>& x, const xt::xarray<float>& out) {
    const block_spec& b = r.c.block;
    const dims stream{"batch", "seq", "d_model"};
    const stage residual = r.emit(stage_id::residual, {tensor("x", stream, sum_of(out, x))});  // attn_output + residual
    const xt::xarray<float>& sum = *residual.tensors[0].storage;
    std::vector<tensor> norm{tensor("x", stream, normalised(b.norm, sum, w.norm_weight, w.norm_bias, b.eps)),
                             tensor("weight", {"d_model"}, w.norm_weight)};
    if (w.norm_bias) norm.push_back(tensor("bias", {"d_model"}, *w.norm_bias));
    const stage mlp_norm = r.emit(stage_id::mlp_norm, std::move(norm));
    if (!r.needs(stage_id::mlp)) return;
    const stage mlp = mlp_stage(r, w, *mlp_norm.tensors[0].storage);
    if (!r.needs(stage_id::block)) return;
    const xt::xarray<float>& mlp_out = *mlp.tensors.back().storage;
    if (!b.post_norm) {  // residual + feed_forward_hidden_states
        r.emit(stage_id::block, {tensor("x", stream, sum_of(sum, mlp_out))});
        return;
    }
    xt::xarray<float> post = sum_of(mlp_out, *mlp_norm.tensors[0].storage);  // LayerNorm(hidden_states + input_tensor)
    xt::xarray<float> normed = normalised(b.norm, post, *w.out_norm_weight, w.out_norm_bias, b.eps);
    r.emit(stage_id::block, {tensor("sum", stream, std::move(post)), tensor("x", stream, std::move(normed))});
}

/// 2a. norm (a model's layer): x [B,S,Din] normalised row by row before the projections read it,
/// GPT-2's ln_1 F.layer_norm(x, [Din], weight, bias, eps) or Llama's RMSNorm weight·(x·rsqrt(mean(x²) + eps)):
/// a new tensor [B,S,Din], the residual stream x stays as given (self-attention only: validate)
tensor_storage norm_stage(run& r, const parameters& p, const xt::xarray<float>& x, const char* x_tokens) {
    const tensor_storage normed = make_storage(normalised(r.c.norm, x, *p.norm_weight, p.norm_bias, r.c.norm_eps));
    std::vector<tensor> norm{tensor("x", {"batch", x_tokens, "d_in"}, normed), tensor("weight", {"d_in"}, *p.norm_weight)};
    if (p.norm_bias) norm.push_back(tensor("bias", {"d_in"}, *p.norm_bias));
    r.emit(stage_id::norm, std::move(norm));
    return normed;
}

/// 2b. positions (--pos sinusoidal): pe [S,Din] for positions 0..S-1 of the tokens x holds (N + Sq
/// in a decoding step), x = x + pe [B,S,Din]; x_kv + its own pe [Sk,Dkv] in cross-attention.
/// New tensors: x stays as drawn
void positions_stage(run& r, tensor_storage& x, tensor_storage& x_kv, bool cross, const char* x_tokens) {
    const tensor_storage pe = make_storage(sinusoidal_table(0, x->shape()[1], x->shape()[2]));
    x = make_storage(add_positions(*x, *pe));
    std::vector<tensor> positions{tensor("pe", {x_tokens, "d_in"}, pe), tensor("x", {"batch", x_tokens, "d_in"}, x)};
    if (cross) {
        const tensor_storage pe_kv = make_storage(sinusoidal_table(0, x_kv->shape()[1], x_kv->shape()[2]));
        x_kv = make_storage(add_positions(*x_kv, *pe_kv));
        positions.push_back(tensor("pe_kv", {"kv_seq", "d_kv_in"}, pe_kv));
        positions.push_back(tensor("x_kv", {"batch", "kv_seq", "d_kv_in"}, x_kv));
    } else {
        x_kv = x;
    }
    r.emit(stage_id::positions, std::move(positions));
}

/// 5a. rope: cos, sin [Sq,dk] for the queries' positions N..N+Sq-1; q [B,H,Sq,dk] and the new
/// keys k [B,G,Sq,dk] (the same tokens) rotated, q·cos + rotate_half(q)·sin: new contiguous
/// tensors (v is not rotated)
qkv_tensors rope_stage(run& r, const forward_steps& steps, qkv_tensors qkv, const char* kv_head, const char* kv_tokens) {
    const config& c = r.c;
    const rope_pairing pairing = steps.pairing(c);
    rope_angles angles = make_rope_angles(c, steps.rope_first(c), static_cast<std::size_t>(c.seq), pairing);
    xt::xarray<float> q_rotated = rotate(qkv.q, angles, pairing);  // [B,H,Sq,dk]
    xt::xarray<float> k_rotated = rotate(qkv.k, angles, pairing);  // [B,G,Sq,dk]
    const stage rope = r.emit(stage_id::rope, {tensor("cos", {"seq", "head_dim"}, std::move(angles.cos)),
                                               tensor("sin", {"seq", "head_dim"}, std::move(angles.sin)),
                                               tensor("q", {"batch", "head", "seq", "head_dim"}, std::move(q_rotated)),
                                               tensor("k", {"batch", kv_head, kv_tokens, "head_dim"}, std::move(k_rotated))});
    return {rope.tensors[2], rope.tensors[3], qkv.v};
}

/// 5b. cache: the N earlier tokens' keys and values, as the steps before computed them:
/// (X[:, :N]·W_kᵀ + b_k).view(B,N,G,dk).transpose(1, 2)   [B,N,Din] -> [B,N,G·dk] -> [B,G,N,dk], views
/// (with --pos rope the keys rotated at their positions 0..N-1, as a model's cache keeps them: a copy)
stage cache_stage(run& r, const forward_steps& steps, const parameters& p, const xt::xarray<float>& x,
                  const char* kv_head) {
    const config& c = r.c;
    const auto N = static_cast<std::size_t>(c.past), G = static_cast<std::size_t>(c.kv_head_count());
    const xt::xarray<float> x_past = token_rows(x, 0, N);  // [B,N,Din]
    const dims d{"batch", kv_head, "past", "head_dim"};
    const auto past = [&](const char* name, const xt::xarray<float>& w, const optional_tensor& b) {
        const tensor projected(name, {"batch", "past", "kv_width"},
                               steps.project(x_past.data(), {x_past.shape().begin(), x_past.shape().end()}, w, present(b)));
        const std::size_t B = projected.values.shape()[0], dk = projected.values.shape()[2] / G;
        const tensor_layout heads_first = transposed(*viewed(projected.layout(), {B, N, G, dk}), 1, 2);
        return as_strided(projected, "", name, d, heads_first.shape, heads_first.strides);
    };
    tensor past_k = past("k", p.w_k, p.b_k);
    if (c.pos == position_encoding::rope) {  // [B,G,N,dk] rotated at positions 0..N-1
        const rope_pairing pairing = steps.pairing(c);
        past_k = tensor("k", d, rotate(past_k, make_rope_angles(c, 0, N, pairing), pairing));
    }
    return r.emit(stage_id::cache, {std::move(past_k), past("v", p.w_v, p.b_v)});
}

/// 0. embed (--tokens): the embedding rows x was summed from, token [B,S,D], position and token_type [S,D]
void embed_stage(run& r, embeddings embed) {
    std::vector<tensor> rows{tensor("token", {"batch", "seq", "d_in"}, std::move(embed.token))};
    if (embed.position) rows.push_back(tensor("position", {"seq", "d_in"}, std::move(*embed.position)));
    if (embed.token_type) rows.push_back(tensor("token_type", {"seq", "d_in"}, std::move(*embed.token_type)));
    r.emit(stage_id::embed, std::move(rows));
}

}  // namespace

warning_list compute_stages(const config& c, inputs in, const stage_plan& plan, stage_sink& sink) {
    run r{c, plan, sink, stages_needed(c, plan.shown), trace{}};
    r.so_far.cfg = c;
    r.so_far.warnings = in.warnings;
    const forward_steps steps = run_steps(c);
    const auto heads = static_cast<std::size_t>(c.heads), N = static_cast<std::size_t>(c.past),
               Sq = static_cast<std::size_t>(c.seq), G = static_cast<std::size_t>(c.kv_head_count());
    const parameters& p = in.params;
    const char* x_tokens = N > 0 ? "kv_seq" : "seq";  // x's S: N + Sq = Sk in a decoding step
    const char* kv_tokens = N > 0 ? "seq" : "kv_seq";  // the new keys' and values' S
    const char* kv_head = c.grouped() ? "kv_head" : "head";

    // 0. embed
    if (in.embed && !in.qkv && r.shows(stage_id::embed)) embed_stage(r, std::move(*in.embed));
    in.embed.reset();

    // 1. input: x [B,Sq,Din] ([B,N+Sq,Din] in a decoding step), and x_kv [B,Sk,Dkv] for cross-attention:
    // drawn or read (the stage shares their storage: x is not copied, and is let go after the projections)
    tensor_storage x = make_storage(std::move(in.x));
    tensor_storage x_kv = in.x_kv ? make_storage(std::move(*in.x_kv)) : x;  // self-attention: keys and values from x
    if (!in.qkv && r.shows(stage_id::input)) {
        std::vector<tensor> input{tensor("x", {"batch", x_tokens, "d_in"}, x)};
        if (in.x_kv) input.push_back(tensor("x_kv", {"batch", "kv_seq", "d_kv_in"}, x_kv));
        r.emit(stage_id::input, std::move(input));
    }
    // 2. params: w_q [D,Din], w_k w_v [D,Dkv] ([G·dk,Dkv] with --kv-heads G), w_o [D,D] and the biases
    if (!in.qkv && r.shows(stage_id::params)) r.emit(stage_id::params, param_tensors(p));

    // 2a. norm (a model's layer) and 2b. positions (--pos sinusoidal): new x (and x_kv). The block's
    // residual stream (15a) is x before the norm (pre-norm: GPT-2, Llama) or after it (BERT's
    // embeddings.LayerNorm, post-norm), its last Sq tokens in a decoding step
    tensor_storage block_input;
    if (r.needs(stage_id::residual) && !c.block.post_norm) block_input = x;
    if (r.needs(stage_id::norm)) x = x_kv = norm_stage(r, p, *x, x_tokens);
    if (r.needs(stage_id::residual) && c.block.post_norm) block_input = x;
    if (block_input && N > 0) block_input = make_storage(token_rows(*block_input, N, Sq));
    if (r.needs(stage_id::positions)) positions_stage(r, x, x_kv, in.x_kv.has_value(), x_tokens);

    // 3. projections: Q = X·W_qᵀ + b_q, K = X_kv·W_kᵀ + b_k, V = X_kv·W_vᵀ + b_v   [B,S,Din] · [Din,D] -> [B,S,D]
    // (k and v [B,S,G·dk] with --kv-heads G; in a decoding step the queries and the new keys and
    // values from the last Sq tokens, x[:, N:], a copy [B,Sq,Din] as F.linear's matmul makes)
    stage proj;
    if (r.needs(stage_id::projections)) {
        const tensor_storage x_new = N > 0 && !in.qkv ? make_storage(token_rows(*x, N, Sq)) : x;  // [B,Sq,Din]
        const xt::xarray<float>& kv_source = N > 0 ? *x_new : *x_kv;
        const auto project = [&](const xt::xarray<float>& from, const xt::xarray<float>& w, const optional_tensor& b) {
            return steps.project(from.data(), {from.shape().begin(), from.shape().end()}, w, present(b));
        };
        proj = r.emit(stage_id::projections,
                      in.qkv ? projection_tensors(c, std::move(*in.qkv))
                             : projection_tensors(c, {project(*x_new, p.w_q, p.b_q),        // [B,Sq,D]
                                                      project(kv_source, p.w_k, p.b_k),     // [B,Sk,G·dk]
                                                      project(kv_source, p.w_v, p.b_v)}));  // [B,Sk,G·dk]
    }
    if (!r.needs(stage_id::cache)) x = x_kv = nullptr;  // no later stage reads them

    // 4. view: [B,S,D] -> [B,S,H,dk] (k and v [B,S,G,dk]), the last axis split into heads: views of the projections
    stage view;
    if (r.needs(stage_id::view))
        view = r.emit(stage_id::view, {split_heads(proj, proj.tensors[0], heads, {"batch", "seq", "head", "head_dim"}),
                                       split_heads(proj, proj.tensors[1], G, {"batch", kv_tokens, kv_head, "head_dim"}),
                                       split_heads(proj, proj.tensors[2], G, {"batch", kv_tokens, kv_head, "head_dim"})});

    // 5. transpose: [B,S,H,dk] -> [B,H,S,dk], heads become a batch axis: views again, not contiguous
    qkv_tensors qkv;
    if (r.needs(stage_id::transpose)) {
        const stage tr = r.emit(stage_id::transpose, {steps.transpose(proj, view, 0, heads, {"batch", "head", "seq", "head_dim"}),
                                                      steps.transpose(proj, view, 1, G, {"batch", kv_head, kv_tokens, "head_dim"}),
                                                      steps.transpose(proj, view, 2, G, {"batch", kv_head, kv_tokens, "head_dim"})});
        qkv = {tr.tensors[0], tr.tensors[1], tr.tensors[2]};
    }
    proj = view = stage{};  // qkv holds what the stages after read

    // 5a. rope: q and the new k rotated (rope_stage)
    if (r.needs(stage_id::rope)) qkv = rope_stage(r, steps, std::move(qkv), kv_head, kv_tokens);

    // 5b. cache: the earlier tokens' k and v [B,G,N,dk] (cache_stage)
    stage cache;
    if (r.needs(stage_id::cache)) cache = cache_stage(r, steps, p, *x, kv_head);
    x = x_kv = nullptr;

    // 5c. append: torch.cat((past_k, k), dim=2)   [B,G,N,dk] + [B,G,Sq,dk] -> [B,G,N+Sq,dk], a copy
    if (r.needs(stage_id::append)) {
        const dims d{"batch", kv_head, "kv_seq", "head_dim"};
        const stage append = r.emit(stage_id::append, {cat_on_tokens(cache.tensors[0], qkv.k, d),
                                                       cat_on_tokens(cache.tensors[1], qkv.v, d)});
        qkv.k = append.tensors[0];
        qkv.v = append.tensors[1];
    }
    cache = stage{};

    // 5d. repeat_kv: k.repeat_interleave(H/G, dim=1)   [B,G,Sk,dk] -> [B,H,Sk,dk], a copy
    if (r.needs(stage_id::repeat_kv)) {
        const dims d{"batch", "head", "kv_seq", "head_dim"};
        const stage repeated = r.emit(stage_id::repeat_kv, {repeat_heads(qkv.k, heads, steps.kv_head_of, d),
                                                            repeat_heads(qkv.v, heads, steps.kv_head_of, d)});
        qkv.k = repeated.tensors[0];
        qkv.v = repeated.tensors[1];
    }

    // 6-12. the plane stages on q [B,H,Sq,dk], k, v [B,H,Sk,dk] (plane_stages), each block below in order
    const std::vector<float> slopes = c.pos == position_encoding::alibi ? steps.slopes(c) : std::vector<float>{};
    plane_chain chain;
    if (r.needs(stage_id::scores)) chain = make_chain(c, steps, qkv, r.needs(stage_id::context), slopes);
    plane_stages planes(r, chain, steps);

    // 6. scores = Q·Kᵀ   [B,H,Sq,dk] · [B,H,dk,Sk] -> [B,H,Sq,Sk]
    planes.compute(stage_id::scores);
    // 7. scaled = scores / √dk
    planes.compute(stage_id::scaled);
    // 7a. alibi: bias [1,H,Sq,Sk] = -m_h·(i - j), shown here; biased adds it a block at a time
    if (r.shows(stage_id::alibi))
        r.emit(stage_id::alibi, {tensor("bias", {"batch", "head", "query", "key"}, alibi_bias(c, slopes))});
    // 7b. biased = scaled + bias
    planes.compute(stage_id::biased);

    // 8. mask [B,1,Sq,Sk] (true = may attend): a row at a time from its rules when the stage is
    // not shown (mask_rows), else built whole
    xt::xarray<bool> mask;                 // when built whole
    std::optional<mask_rows> mask_by_row;  // what the planes read
    if (r.needs(stage_id::mask)) {
        mask_rules rules = run_mask_rules(c);
        steps.rules(rules);
        if (!r.shows(stage_id::mask) && !in.mask && mask_rows::make_all_of(c)) mask_by_row.emplace(rules);
        else mask_by_row.emplace(mask = build_mask(c, rules, in.mask ? &*in.mask : nullptr));
        warn_empty_rows(*mask_by_row, c, r.so_far.warnings);
        chain.mask = &*mask_by_row;
        if (r.shows(stage_id::mask))
            r.emit(stage_id::mask, {tensor("mask", {"batch", "head", "query", "key"}, xt::xarray<float>(xt::cast<float>(mask)),
                                           element_type::boolean)});
    }
    // 9. masked = fill where the mask is false
    planes.compute(stage_id::masked);
    // 10. softmax over the keys, dim=-1
    planes.compute(stage_id::softmax);
    // 11. dropout: weights · keep / (1 - p)
    planes.compute(stage_id::dropout);
    // 12. context = weights · V   [B,H,Sq,Sk] · [B,H,Sk,dk] -> [B,H,Sq,dk]
    std::optional<tensor> context = planes.context();

    // 12a. flash: the same q, k, v, mask, divisor, bias and fill, keys a block of --flash-block N at
    // a time with a running max and sum: m, l, rescale [B,H,Sq,nb], acc [B,H,Sq,nb,dk], context [B,H,Sq,dk]
    std::optional<flash_stage> flash;
    if (r.needs(stage_id::flash)) flash = flash_of(qkv, chain, static_cast<std::size_t>(c.flash_block));
    qkv = qkv_tensors{};  // no later stage reads q, k, v or the mask
    mask_by_row.reset();
    mask = xt::xarray<bool>();

    // 12-15. context, merge, concat, output
    stage output;
    if (context) output = context_to_output(r, steps, p, std::move(*context), std::move(flash));

    // 15a-15d. residual, mlp_norm, mlp, block (block_stages)
    if (r.needs(stage_id::residual)) block_stages(r, *p.block, *block_input, *output.tensors[0].storage);
    return r.so_far.warnings;
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
