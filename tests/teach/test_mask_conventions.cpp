// mask_conventions: one mask in PyTorch's four conventions. The expressions are
// written out as literals here (tests/reference/make_mask_convention_fixtures.py
// runs them in torch against attn mask's output); the data are checked against
// the keep-mask and its complements, and the PyTorch shapes by hand.
#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/mask.hpp"
#include "attn/teach/mask_conventions.hpp"

namespace {

const float neg_inf = -std::numeric_limits<float>::infinity();

/// The views of c's mask, and the mask itself as build_mask makes it whole.
struct described {
    attn::mask_views views;
    xt::xarray<bool> keep;  // [B,1,Sq,Sk]

    /// Convention `name`'s cells of keep, in the shape the views show ([Sq,Sk] of item 0, or [B,Sq,Sk]).
    xt::xarray<float> data(const std::string& name) const;
};

described describe(const attn::config& c, const xt::xarray<bool>* files = nullptr) {
    return {attn::describe_mask(c, files), attn::build_mask(c, files)};
}


const attn::mask_view& view(const attn::mask_views& v, const std::string& name) {
    for (const attn::mask_view& one : v.views)
        if (one.name == name) return one;
    FAIL("no view " << name);
    return v.views.front();
}

std::vector<std::string> view_names(const attn::mask_views& v) {
    std::vector<std::string> n;
    for (const attn::mask_view& one : v.views) n.push_back(one.name);
    return n;
}

xt::xarray<float> described::data(const std::string& name) const {
    const attn::mask_view& one = view(views, name);
    xt::xarray<float> cells = xt::xarray<float>::from_shape(views.shape);
    for (std::size_t e = 0; e < cells.size(); ++e) cells.data()[e] = one.value(keep.data()[e]);
    return cells;
}

}  // namespace

TEST_SUITE("mask_conventions") {

TEST_CASE("causal alone: tril for keep and sdpa, triu(diagonal=1).bool() for mha, 0/-inf for additive") {
    attn::config c;
    c.seq = c.kv_seq = 3;
    c.mask.causal = true;
    const described d = describe(c);
    const attn::mask_views& v = d.views;
    CHECK(view_names(v) == std::vector<std::string>{"keep", "mha", "sdpa", "additive"});
    CHECK(attn::setup_text(v) == "B, Sq, Sk = 1, 3, 3");
    CHECK_FALSE(v.per_batch);
    CHECK(view(v, "keep").build == "torch.tril(torch.ones(Sq, Sk, dtype=torch.bool))");
    CHECK(view(v, "sdpa").build == "torch.tril(torch.ones(Sq, Sk, dtype=torch.bool))");
    CHECK(view(v, "mha").build == "torch.triu(torch.ones(Sq, Sk), diagonal=1).bool()");
    CHECK(view(v, "additive").build == "torch.zeros(Sq, Sk).masked_fill(~keep, float('-inf'))");
    CHECK(d.data("keep") == xt::xarray<float>{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}});
    CHECK(d.data("sdpa") == xt::xarray<float>{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}});
    CHECK(d.data("mha") == xt::xarray<float>{{0, 1, 1}, {0, 0, 1}, {0, 0, 0}});
    CHECK(d.data("additive") ==
          xt::xarray<float>{{0, neg_inf, neg_inf}, {0, 0, neg_inf}, {0, 0, 0}});
    CHECK(view(v, "mha").boolean);
    CHECK_FALSE(view(v, "additive").boolean);
    // applied the PyTorch way, each with its own polarity
    CHECK(view(v, "keep").apply == "torch.softmax(scores.masked_fill(~keep, float('-inf')), dim=-1)");
    CHECK(view(v, "mha").apply == "torch.softmax(scores.masked_fill(mha, float('-inf')), dim=-1)");
    CHECK(view(v, "sdpa").apply == "torch.softmax(scores.masked_fill(~sdpa, float('-inf')), dim=-1)");
    CHECK(view(v, "additive").apply == "torch.softmax(scores + additive, dim=-1)");
    CHECK(view(v, "mha").pass == "nn.MultiheadAttention(D, H, batch_first=True)(x, x, x, attn_mask=mha)");
    CHECK(view(v, "sdpa").pass ==
          "F.scaled_dot_product_attention(q, k, v, attn_mask=sdpa); for this mask also is_causal=True (upper-left)");
    CHECK(view(v, "keep").pass.empty());
    // what a row with no allowed key becomes, one line each
    CHECK(view(v, "mha").empty_row == "a row with no allowed key: NaN (nn.MultiheadAttention fills -inf, then softmax)");
    CHECK(view(v, "sdpa").empty_row.find("0 in PyTorch 2.5 and later") != std::string::npos);
}

TEST_CASE("causal aligned lower-right: tril's and triu's diagonals move by Sk - Sq") {
    attn::config c;
    c.seq = 2;
    c.kv_seq = 4;
    c.mask.causal = true;
    c.mask.causal_align = attn::causal_alignment::lower_right;
    const described d = describe(c);
    const attn::mask_views& v = d.views;
    CHECK(view(v, "keep").build == "torch.tril(torch.ones(Sq, Sk, dtype=torch.bool), diagonal=Sk - Sq)");
    CHECK(view(v, "mha").build == "torch.triu(torch.ones(Sq, Sk), diagonal=Sk - Sq + 1).bool()");
    CHECK(d.data("keep") == xt::xarray<float>{{1, 1, 1, 0}, {1, 1, 1, 1}});
    CHECK(view(v, "sdpa").pass.find("torch.nn.attention.bias.causal_lower_right(Sq, Sk)") != std::string::npos);
}

TEST_CASE("causal + padding: [B,Sq,Sk], the padding lifted over the queries, nn.MultiheadAttention's two masks") {
    attn::config c;
    c.batch = 2;
    c.seq = c.kv_seq = 3;
    c.mask.causal = c.mask.padding = true;
    c.mask.lengths = {2, 3};
    const described d = describe(c);
    const attn::mask_views& v = d.views;
    CHECK(v.per_batch);
    CHECK(attn::setup_text(v) == "B, Sq, Sk = 2, 3, 3\nlengths = torch.tensor([2, 3])  # valid keys per batch item");
    CHECK(view(v, "keep").build ==
          "torch.tril(torch.ones(Sq, Sk, dtype=torch.bool)) & (torch.arange(Sk) < lengths[:, None])[:, None, :]");
    CHECK(view(v, "mha").build ==
          "torch.triu(torch.ones(Sq, Sk), diagonal=1).bool() | (torch.arange(Sk) >= lengths[:, None])[:, None, :]");
    CHECK(view(v, "additive").build == "torch.zeros(B, Sq, Sk).masked_fill(~keep, float('-inf'))");
    CHECK(view(v, "keep").apply == "torch.softmax(scores.masked_fill(~keep[:, None], float('-inf')), dim=-1)");
    CHECK(view(v, "mha").pass ==
          "nn.MultiheadAttention(D, H, batch_first=True)(x, x, x, attn_mask=torch.triu(torch.ones(Sq, Sk), "
          "diagonal=1).bool(), key_padding_mask=torch.arange(Sk) >= lengths[:, None])");
    CHECK(d.data("keep") == xt::xarray<float>{{{1, 0, 0}, {1, 1, 0}, {1, 1, 0}},
                                                    {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}});
    CHECK(d.data("mha") == 1.0f - d.data("keep"));
}

TEST_CASE("padding alone is expanded to [B,Sq,Sk]; nn.MultiheadAttention takes it as key_padding_mask") {
    attn::config c;
    c.batch = 2;
    c.seq = 1;
    c.kv_seq = 2;
    c.mask.padding = true;
    c.mask.lengths = {1, 0};
    const described d = describe(c);
    const attn::mask_views& v = d.views;
    CHECK(view(v, "keep").build == "(torch.arange(Sk) < lengths[:, None])[:, None, :].expand(B, Sq, Sk)");
    CHECK(view(v, "mha").pass ==
          "nn.MultiheadAttention(D, H, batch_first=True)(x, x_kv, x_kv, key_padding_mask=torch.arange(Sk) >= "
          "lengths[:, None])");  // Sq != Sk: cross-attention
    CHECK(d.data("keep") == xt::xarray<float>{{{1, 0}}, {{0, 0}}});
}

TEST_CASE("window + random: comparisons in parentheses (& binds tighter), a 3-D attn_mask per head for mha") {
    attn::config c;
    c.batch = 2;
    c.heads = 4;
    c.seq = c.kv_seq = 3;
    c.mask.window = c.mask.random = true;
    c.mask.window_size = 1;
    c.mask.random_seed = 7;
    c.mask.random_keep = 0.7;
    const described d = describe(c);
    const attn::mask_views& v = d.views;
    CHECK(attn::setup_text(v) == "B, H, Sq, Sk = 2, 4, 3, 3\nW = 1\n"
                     "rand = torch.rand(B, Sq, Sk, generator=torch.Generator().manual_seed(7))"
                     "  # as torch.manual_seed(N); torch.rand(B,1,Sq,Sk)");
    CHECK(view(v, "keep").build == "((torch.arange(Sq)[:, None] - torch.arange(Sk)).abs() <= W) & (rand < 0.7)");
    CHECK(view(v, "mha").build == "((torch.arange(Sq)[:, None] - torch.arange(Sk)).abs() > W) | (rand >= 0.7)");
    CHECK(view(v, "mha").pass ==
          "nn.MultiheadAttention(D, H, batch_first=True)(x, x, x, attn_mask=mha.repeat_interleave(H, dim=0))");
    // the cells the build line makes: |i - j| <= 1 and torch.rand(2,3,3) drawn from seed 7 below 0.7
    float rand[18];
    attn::torch_generator(7).rand(rand, 18);
    xt::xarray<float> want = xt::xarray<float>::from_shape({2, 3, 3});
    for (std::size_t e = 0; e < 18; ++e) {
        const int i = static_cast<int>(e / 3 % 3), j = static_cast<int>(e % 3);
        want.data()[e] = std::abs(i - j) <= 1 && rand[e] < 0.7f ? 1.0f : 0.0f;
    }
    CHECK(d.data("keep") == want);
    CHECK(d.data("mha") == 1.0f - want);
}

TEST_CASE("a finite fill: the additive mask and keep's masked_fill use it") {
    attn::config c;
    c.seq = c.kv_seq = 2;
    c.mask.causal = true;
    c.fill = -1e9f;
    c.fill_text = "-1e9";
    const described d = describe(c);
    const attn::mask_views& v = d.views;
    CHECK(view(v, "additive").build == "torch.zeros(Sq, Sk).masked_fill(~keep, -1e9)");
    CHECK(view(v, "additive").meaning == "0 = may attend, -1e9 = may not (added to the scores)");
    CHECK(view(v, "keep").apply == "torch.softmax(scores.masked_fill(~keep, -1e9), dim=-1)");
    CHECK(view(v, "mha").apply == "torch.softmax(scores.masked_fill(mha, float('-inf')), dim=-1)");
    CHECK(d.data("additive") == xt::xarray<float>{{0, -1e9f}, {0, 0}});
}

TEST_CASE("mask files enter as a literal file_keep [B,Sq,Sk]") {
    attn::config c;
    c.batch = 2;
    c.seq = 1;
    c.kv_seq = 3;
    c.mask.causal = c.mask.from_file = true;
    xt::xarray<bool> files = xt::xarray<bool>::from_shape({2, 1, 1, 3});
    const bool values[] = {true, false, true, false, true, true};
    std::copy(values, values + 6, files.begin());
    const described d = describe(c, &files);
    const attn::mask_views& v = d.views;
    CHECK(attn::setup_text(v) == "B, H, Sq, Sk = 2, 2, 1, 3\nfile_keep = torch.tensor([[[1, 0, 1]], [[0, 1, 1]]], "
                     "dtype=torch.bool)  # the mask files as attn read them");
    CHECK(view(v, "keep").build == "torch.tril(torch.ones(Sq, Sk, dtype=torch.bool)) & file_keep");
    CHECK(view(v, "mha").build == "torch.triu(torch.ones(Sq, Sk), diagonal=1).bool() | ~file_keep");
    CHECK(d.data("keep") == xt::xarray<float>{{{1, 0, 0}}, {{0, 0, 0}}});
}

TEST_CASE("python_float: the text Python reads back as the same float32") {
    CHECK(attn::python_float(-std::numeric_limits<float>::infinity()) == "float('-inf')");
    CHECK(attn::python_float(-1e9f) == "-1e9");
    CHECK(attn::python_float(-10000.0f) == "-10000");
    CHECK(attn::python_float(0.5f) == "0.5");
    CHECK(attn::python_float(-0.1f) == "-0.10000000149011612");
    CHECK(attn::python_float(-1e-5f) == "-9.999999747378752e-6");
}

}
