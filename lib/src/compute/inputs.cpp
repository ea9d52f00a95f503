#include "attn/compute/inputs.hpp"

#include <vector>

#include <xtensor/xbuilder.hpp>

#include "attn/compute/generator.hpp"

namespace attn {
namespace {

xt::xarray<float> uninitialised(std::initializer_list<std::int64_t> dims) {
    std::vector<std::size_t> shape;
    for (std::int64_t d : dims) shape.push_back(static_cast<std::size_t>(d));
    return xt::xarray<float>::from_shape(shape);
}

/// nn.Linear(in, out, bias): the weight [out,in] is drawn first, then the bias [out].
void draw_linear(torch_generator& gen, std::int64_t in, std::int64_t out, bool with_bias, xt::xarray<float>& w,
                 optional_tensor& b) {
    w = uninitialised({out, in});
    if (with_bias) b = uninitialised({out});
    gen.linear_init(w.data(), with_bias ? b->data() : nullptr, static_cast<std::size_t>(out),
                    static_cast<std::size_t>(in));
}

xt::xarray<float> draw_randn(torch_generator& gen, std::initializer_list<std::int64_t> dims) {
    xt::xarray<float> t = uninitialised(dims);
    gen.randn(t.data(), t.size());
    return t;
}

parameters draw_parameters(torch_generator& gen, const config& c) {
    parameters p;
    if (!c.sources.from_projections) {
        draw_linear(gen, c.d_in, c.d_model, c.qkv_bias, p.w_q, p.b_q);
        draw_linear(gen, c.d_kv_in, c.kv_width(), c.qkv_bias, p.w_k, p.b_k);  // nn.Linear(Dkv, G·dk)
        draw_linear(gen, c.d_kv_in, c.kv_width(), c.qkv_bias, p.w_v, p.b_v);
    }
    if (c.out_proj) {
        p.w_o.emplace();
        draw_linear(gen, c.d_model, c.d_model, c.out_bias, *p.w_o, p.b_o);
    }
    if (c.norm != norm_kind::none) {  // nn.LayerNorm's and LlamaRMSNorm's own start: weight 1, bias 0 (nothing drawn)
        p.norm_weight = xt::xarray<float>(xt::ones<float>({static_cast<std::size_t>(c.d_in)}));
        if (c.norm == norm_kind::layer_norm) p.norm_bias = xt::xarray<float>(xt::zeros<float>({static_cast<std::size_t>(c.d_in)}));
    }
    if (c.block.on()) {  // a model's block after attention: its norms start at 1 and 0, its linear layers as nn.Linear's
        const auto D = static_cast<std::size_t>(c.d_model);
        block_weights b;
        b.norm_weight = xt::ones<float>({D});
        if (c.block.norm == norm_kind::layer_norm) b.norm_bias = xt::xarray<float>(xt::zeros<float>({D}));
        if (c.block.gated) {
            optional_tensor no_bias;
            b.w_gate.emplace();
            draw_linear(gen, c.d_model, c.block.width, false, *b.w_gate, no_bias);
        }
        draw_linear(gen, c.d_model, c.block.width, c.block.bias, b.w_up, b.b_up);
        draw_linear(gen, c.block.width, c.d_model, c.block.bias, b.w_down, b.b_down);
        if (c.block.post_norm) {
            b.out_norm_weight = xt::xarray<float>(xt::ones<float>({D}));
            b.out_norm_bias = xt::xarray<float>(xt::zeros<float>({D}));
        }
        p.block = std::move(b);
    }
    return p;
}

}  // namespace

xt::xarray<float> embed_sum(const embeddings& e) {
    xt::xarray<float> x = e.token;  // [B,S,D]
    const std::size_t B = x.shape()[0], S = x.shape()[1], D = x.shape()[2];
    const auto add_rows = [&](const xt::xarray<float>& rows) {  // [S,D] to every batch item, one float32 add each
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t i = 0; i < S * D; ++i) x.data()[b * S * D + i] += rows.data()[i];
    };
    if (e.token_type) add_rows(*e.token_type);
    if (e.position) add_rows(*e.position);
    return x;
}

inputs draw_inputs(const config& c, given_inputs given) {
    torch_generator gen(c.seed);
    inputs in;
    in.params = given.params ? std::move(*given.params) : draw_parameters(gen, c);
    in.qkv = std::move(given.qkv);
    in.mask = std::move(given.mask);
    in.embed = std::move(given.embed);
    if (c.sources.from_projections) return in;
    // a decoding step draws the whole sequence, x = torch.randn(B, N+Sq, Din): Sk = N + Sq tokens
    in.x = given.x ? std::move(*given.x) : draw_randn(gen, {c.batch, c.past > 0 ? c.kv_seq : c.seq, c.d_in});
    if (c.cross()) in.x_kv = given.x_kv ? std::move(*given.x_kv) : draw_randn(gen, {c.batch, c.kv_seq, c.d_kv_in});
    return in;
}

}  // namespace attn
