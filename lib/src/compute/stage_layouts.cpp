// Layouts of a run's stages from its sizes alone (stage_layouts.hpp), step by step in
// attention.cpp's order, with tensor.hpp's layout rules.
#include "attn/compute/stage_layouts.hpp"

namespace attn {
namespace {

using planned_dims = std::vector<std::string>;

/// A tensor with its own memory, contiguous.
planned_tensor fresh_tensor(std::string name, planned_dims dims, tensor_shape shape,
                            element_type type = element_type::float32) {
    return {std::move(name), std::move(dims), contiguous_layout(std::move(shape)), type, "", ""};
}

/// A view with `layout` of the memory `of` reads (its owner's: a view of a view names the owner).
planned_tensor view_tensor(const planned_tensor& of, const std::string& of_path, planned_dims dims,
                           tensor_layout layout) {
    return {of.name, std::move(dims), std::move(layout), of.type, of.view_of.empty() ? of_path : of.view_of, ""};
}

}  // namespace

std::vector<planned_stage> plan_stage_layouts(const config& c) {
    const auto B = static_cast<std::size_t>(c.batch), Sq = static_cast<std::size_t>(c.seq),
               Sk = static_cast<std::size_t>(c.kv_seq), D = static_cast<std::size_t>(c.d_model),
               H = static_cast<std::size_t>(c.heads), dk = static_cast<std::size_t>(c.head_dim()),
               Din = static_cast<std::size_t>(c.d_in), Dkv = static_cast<std::size_t>(c.d_kv_in);
    std::vector<planned_stage> run;
    const auto add = [&](stage_id id, std::vector<planned_tensor> tensors) {
        if (stage_in_run(c, id)) run.push_back({id, std::move(tensors)});
    };

    // 1-2. input x [B,Sq,Din] ([B,N+Sq,Din] in a decoding step; x_kv [B,Sk,Dkv]); params in
    // nn.Linear's layout [out, in], w_k w_v [G·dk,Dkv] with G kv heads
    const std::size_t N = static_cast<std::size_t>(c.past), G = static_cast<std::size_t>(c.kv_head_count()),
                      Dg = G * dk;
    const bool step = N > 0;
    const std::string tokens = step ? "kv_seq" : "seq";  // x's: S = N + Sq = Sk in a decoding step, else Sq
    const std::size_t S = step ? Sk : Sq;
    // 25. embed (--tokens): the token rows [B,S,Din], the position rows [S,Din] (GPT-2, BERT) and
    // BERT's token_type rows [S,Din], copies of the tables' rows
    std::vector<planned_tensor> embed{fresh_tensor("token", {"batch", "seq", "d_in"}, {B, Sq, Din})};
    if (c.model_arch == "gpt2" || c.model_arch == "bert") embed.push_back(fresh_tensor("position", {"seq", "d_in"}, {Sq, Din}));
    if (c.model_arch == "bert") embed.push_back(fresh_tensor("token_type", {"seq", "d_in"}, {Sq, Din}));
    add(stage_id::embed, std::move(embed));
    std::vector<planned_tensor> input{fresh_tensor("x", {"batch", tokens, "d_in"}, {B, S, Din})};
    if (c.cross()) input.push_back(fresh_tensor("x_kv", {"batch", "kv_seq", "d_kv_in"}, {B, Sk, Dkv}));
    add(stage_id::input, std::move(input));
    const std::string kv_out = c.grouped() ? "kv_width" : "d_model";
    std::vector<planned_tensor> params{fresh_tensor("w_q", {"d_model", "d_in"}, {D, Din})};
    if (c.qkv_bias) params.push_back(fresh_tensor("b_q", {"d_model"}, {D}));
    params.push_back(fresh_tensor("w_k", {kv_out, "d_kv_in"}, {Dg, Dkv}));
    if (c.qkv_bias) params.push_back(fresh_tensor("b_k", {kv_out}, {Dg}));
    params.push_back(fresh_tensor("w_v", {kv_out, "d_kv_in"}, {Dg, Dkv}));
    if (c.qkv_bias) params.push_back(fresh_tensor("b_v", {kv_out}, {Dg}));
    if (c.out_proj) {
        params.push_back(fresh_tensor("w_o", {"d_model", "d_model"}, {D, D}));
        if (c.out_bias) params.push_back(fresh_tensor("b_o", {"d_model"}, {D}));
    }
    add(stage_id::params, std::move(params));
    // 24. norm: the normalised x [B,S,Din], new; the norm's weight (and LayerNorm's bias) [Din]
    std::vector<planned_tensor> norm{fresh_tensor("x", {"batch", tokens, "d_in"}, {B, S, Din}),
                                     fresh_tensor("weight", {"d_in"}, {Din})};
    if (c.norm == norm_kind::layer_norm) norm.push_back(fresh_tensor("bias", {"d_in"}, {Din}));
    add(stage_id::norm, std::move(norm));
    // 16. positions: pe [S,Din], x + pe [B,S,Din]; pe_kv [Sk,Dkv], x_kv + pe_kv in cross-attention
    std::vector<planned_tensor> positions{fresh_tensor("pe", {tokens, "d_in"}, {S, Din}),
                                          fresh_tensor("x", {"batch", tokens, "d_in"}, {B, S, Din})};
    if (c.cross()) {
        positions.push_back(fresh_tensor("pe_kv", {"kv_seq", "d_kv_in"}, {Sk, Dkv}));
        positions.push_back(fresh_tensor("x_kv", {"batch", "kv_seq", "d_kv_in"}, {B, Sk, Dkv}));
    }
    add(stage_id::positions, std::move(positions));

    // 3-5. q [B,Sq,D] -> view [B,Sq,H,dk] -> transpose(1, 2) [B,H,Sq,dk]; k and v with Sk
    // (the Sq new tokens in a decoding step) and G heads
    const std::string kv_tokens = step ? "seq" : "kv_seq", kv_head = c.grouped() ? "kv_head" : "head";
    const std::size_t S_kv = step ? Sq : Sk;
    const std::vector<planned_tensor> proj{fresh_tensor("q", {"batch", "seq", "d_model"}, {B, Sq, D}),
                                           fresh_tensor("k", {"batch", kv_tokens, kv_out}, {B, S_kv, Dg}),
                                           fresh_tensor("v", {"batch", kv_tokens, kv_out}, {B, S_kv, Dg})};
    add(stage_id::projections, proj);
    std::vector<planned_tensor> split, heads;
    for (const planned_tensor& t : proj) {
        const std::string seq = t.dims[1], head = t.name == "q" ? "head" : kv_head;
        const std::size_t count = t.name == "q" ? H : G;
        split.push_back(view_tensor(t, "projections." + t.name, {"batch", seq, head, "head_dim"},
                                    *viewed(t.layout, {t.layout.shape[0], t.layout.shape[1], count, dk})));
        heads.push_back(view_tensor(split.back(), "", {"batch", head, seq, "head_dim"},
                                    transposed(split.back().layout, 1, 2)));
    }
    add(stage_id::view, split);
    add(stage_id::transpose, heads);
    // 17. rope: cos, sin [Sq,dk]; q [B,H,Sq,dk] and the new keys k [B,G,S,dk] rotated, new and contiguous
    const bool rope = c.pos == position_encoding::rope;
    add(stage_id::rope, {fresh_tensor("cos", {"seq", "head_dim"}, {Sq, dk}), fresh_tensor("sin", {"seq", "head_dim"}, {Sq, dk}),
                         fresh_tensor("q", {"batch", "head", "seq", "head_dim"}, {B, H, Sq, dk}),
                         fresh_tensor("k", {"batch", kv_head, kv_tokens, "head_dim"}, {B, G, S_kv, dk})});

    // 18-20. cache: (x[:, :N]·W_kᵀ + b_k).view(B,N,G,dk).transpose(1, 2), views of their own
    // projection [B,N,G·dk] (k rotated, fresh, with rope); append: torch.cat(..., dim=2)
    // [B,G,N+Sq,dk], fresh; repeat_kv: repeat_interleave(H/G, dim=1) [B,H,Sk,dk], fresh
    std::vector<planned_tensor> cached, appended, repeated;
    for (const char* name : {"k", "v"}) {
        const bool rotated = rope && std::string(name) == "k";
        const tensor_layout past = transposed(*viewed(contiguous_layout({B, N, Dg}), {B, N, G, dk}), 1, 2);
        if (rotated) cached.push_back(fresh_tensor(name, {"batch", kv_head, "past", "head_dim"}, {B, G, N, dk}));
        else cached.push_back({name, {"batch", kv_head, "past", "head_dim"}, past, element_type::float32, "", ""});
        appended.push_back(fresh_tensor(name, {"batch", kv_head, "kv_seq", "head_dim"}, {B, G, Sk, dk}));
        appended.back().copy_of = std::string("cache.") + name;  // and transpose's (rope's)
        appended.back().copy_by = rotated ? "torch.cat with rope" : "torch.cat with transpose";
        repeated.push_back(fresh_tensor(name, {"batch", "head", "kv_seq", "head_dim"}, {B, H, Sk, dk}));
        repeated.back().copy_of = std::string(step ? "append." : rotated ? "rope." : "transpose.") + name;
        repeated.back().copy_by = "repeat_interleave";
    }
    add(stage_id::cache, cached);
    add(stage_id::append, appended);
    add(stage_id::repeat_kv, repeated);

    // 6-11. the planes [B,H,Sq,Sk], fresh; the mask [B,1,Sq,Sk], broadcast over the heads
    const planned_dims plane_dims{"batch", "head", "query", "key"};
    add(stage_id::scores, {fresh_tensor("scores", plane_dims, {B, H, Sq, Sk})});
    add(stage_id::scaled, {fresh_tensor("scaled", plane_dims, {B, H, Sq, Sk})});
    add(stage_id::alibi, {fresh_tensor("bias", plane_dims, {1, H, Sq, Sk})});
    add(stage_id::biased, {fresh_tensor("biased", plane_dims, {B, H, Sq, Sk})});
    add(stage_id::mask, {fresh_tensor("mask", plane_dims, {B, 1, Sq, Sk}, element_type::boolean)});
    add(stage_id::masked, {fresh_tensor("masked", plane_dims, {B, H, Sq, Sk})});
    add(stage_id::softmax, {fresh_tensor("weights", plane_dims, {B, H, Sq, Sk})});
    add(stage_id::dropout, {fresh_tensor("weights", plane_dims, {B, H, Sq, Sk}),
                            fresh_tensor("keep", plane_dims, {B, H, Sq, Sk}, element_type::boolean)});

    // 12-15. context [B,H,Sq,dk] -> merge, transpose(1, 2) [B,Sq,H,dk] -> concat,
    // merge.contiguous().view(B,Sq,D) -> out [B,Sq,D]
    const planned_tensor context = fresh_tensor("context", {"batch", "head", "seq", "head_dim"}, {B, H, Sq, dk});
    add(stage_id::context, {context});
    // 23. flash: nb = ceil(Sk/N) blocks; m, l, rescale [B,H,Sq,nb], acc [B,H,Sq,nb,dk], its own context
    if (c.flash_block > 0) {
        const auto nb = (Sk + static_cast<std::size_t>(c.flash_block) - 1) / static_cast<std::size_t>(c.flash_block);
        const planned_dims per_block{"batch", "head", "query", "block"};
        add(stage_id::flash, {fresh_tensor("m", per_block, {B, H, Sq, nb}), fresh_tensor("l", per_block, {B, H, Sq, nb}),
                              fresh_tensor("rescale", per_block, {B, H, Sq, nb}),
                              fresh_tensor("acc", {"batch", "head", "query", "block", "head_dim"}, {B, H, Sq, nb, dk}),
                              fresh_tensor("context", {"batch", "head", "seq", "head_dim"}, {B, H, Sq, dk})});
    }
    const planned_tensor merged =
        view_tensor(context, "context.context", {"batch", "seq", "head", "head_dim"}, transposed(context.layout, 1, 2));
    add(stage_id::merge, {merged});
    planned_tensor concat = fresh_tensor("concat", {"batch", "seq", "d_model"}, {B, Sq, D});
    if (is_contiguous(merged.layout)) concat.view_of = merged.view_of;  // one head or one query: no copy
    else concat.copy_of = "merge.context";
    add(stage_id::concat, {concat});
    add(stage_id::output, {fresh_tensor("out", {"batch", "seq", "d_model"}, {B, Sq, D})});
    return run;
}

std::string dim_letter(const std::string& dim) {
    if (dim == "batch") return "B";
    if (dim == "seq" || dim == "query") return "Sq";
    if (dim == "kv_seq" || dim == "key") return "Sk";
    if (dim == "d_model") return "D";
    if (dim == "head") return "H";
    if (dim == "head_dim") return "dk";
    if (dim == "d_in") return "Din";
    if (dim == "d_kv_in") return "Dkv";
    if (dim == "past") return "N";
    if (dim == "kv_head") return "G";
    if (dim == "kv_width") return "G·dk";
    if (dim == "block") return "nb";
    return dim;
}

}  // namespace attn
