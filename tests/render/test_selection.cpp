// --batch-index, --head, --row: the part of each tensor a view keeps (selection.hpp),
// checked against PyTorch's indexing written out by hand.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "attn/compute/error.hpp"
#include "attn/render/selection.hpp"
#include "support.hpp"

namespace {

using attn::element_type;
using attn::render_options;
using attn::tensor;

/// A [shape] tensor holding 0, 1, 2, ... in row-major order.
tensor counting(std::string name, std::vector<std::string> dims, std::vector<std::size_t> shape,
                element_type type = element_type::float32) {
    xt::xarray<float> v = xt::zeros<float>(shape);
    for (std::size_t i = 0; i < v.size(); ++i) v.data()[i] = type == element_type::boolean ? float(i % 2) : float(i);
    return {std::move(name), std::move(dims), v, type};
}


render_options view_of(std::optional<std::size_t> batch, std::optional<std::size_t> head, std::optional<std::size_t> row) {
    render_options o;
    o.batch_index = batch;
    o.head = head;
    o.row = row;
    return o;
}

}  // namespace

TEST_SUITE("selection") {

TEST_CASE("no view: the whole tensor") {
    const tensor w = counting("weights", bhqk, {2, 4, 5, 5});
    CHECK_FALSE(attn::has_view(render_options{}));
    const attn::tensor_selection s = attn::select_in(w, render_options{});
    CHECK(s.whole());
    CHECK(s.shape == std::vector<std::size_t>{2, 4, 5, 5});
    CHECK(attn::torch_index(s).empty());
}

TEST_CASE("--head 2 on the weights [B,H,Sq,Sk]: weights[:, 2:3], the axis kept with size 1") {
    const tensor w = counting("weights", bhqk, {2, 4, 5, 5});
    const render_options o = view_of(std::nullopt, 2, std::nullopt);
    CHECK(attn::has_view(o));
    const attn::tensor_selection s = attn::select_in(w, o);
    REQUIRE(s.picks.size() == 1);
    CHECK(s.picks[0].axis == 1);
    CHECK(s.picks[0].dim == "head");
    CHECK(s.picks[0].index == 2);
    CHECK(s.shape == std::vector<std::size_t>{2, 1, 5, 5});
    CHECK(s.size() == 50);
    CHECK(attn::torch_index(s) == "[:, 2:3]");
    const tensor part = attn::selected_part(w, s);
    CHECK(part.name == "weights");
    CHECK(part.dims == bhqk);
    CHECK(part.values == xt::xarray<float>(xt::view(w.values, xt::all(), xt::range(2, 3))));
    CHECK(part.values(1, 0, 4, 3) == w.values(1, 2, 4, 3));
}

TEST_CASE("the mask [B,1,Sq,Sk] is broadcast over the heads: --head leaves it whole, --batch-index does not") {
    const tensor m = counting("mask", bhqk, {2, 1, 5, 5}, element_type::boolean);
    CHECK(attn::select_in(m, view_of(std::nullopt, 3, std::nullopt)).whole());
    const attn::tensor_selection s = attn::select_in(m, view_of(1, 3, std::nullopt));
    CHECK(attn::torch_index(s) == "[1:2]");
    CHECK(s.shape == std::vector<std::size_t>{1, 1, 5, 5});
    // a float tensor with one head (H = 1) has a real head axis
    CHECK(attn::torch_index(attn::select_in(counting("weights", bhqk, {2, 1, 5, 5}), view_of(std::nullopt, 0, std::nullopt))) ==
          "[:, 0:1]");
}

TEST_CASE("--row: the query axis and the query-side seq axis; kv_seq and key stay whole") {
    const render_options o = view_of(std::nullopt, std::nullopt, 3);
    CHECK(attn::torch_index(attn::select_in(counting("weights", bhqk, {2, 4, 5, 5}), o)) == "[:, :, 3:4]");
    CHECK(attn::torch_index(attn::select_in(counting("x", {"batch", "seq", "d_in"}, {2, 5, 8}), o)) == "[:, 3:4]");
    CHECK(attn::torch_index(attn::select_in(counting("q", {"batch", "seq", "head", "head_dim"}, {2, 5, 4, 2}), o)) ==
          "[:, 3:4]");
    CHECK(attn::select_in(counting("k", {"batch", "head", "kv_seq", "head_dim"}, {2, 4, 6, 2}), o).whole());
    CHECK(attn::select_in(counting("w_q", {"d_model", "d_in"}, {8, 8}), view_of(1, 2, 3)).whole());
}

TEST_CASE("every view at once: merge's context [B,Sq,H,dk] as context[1:2, 4:5, 3:4]") {
    const tensor c = counting("context", {"batch", "seq", "head", "head_dim"}, {2, 5, 4, 2});
    const attn::tensor_selection s = attn::select_in(c, view_of(1, 3, 4));
    CHECK(attn::torch_index(s) == "[1:2, 4:5, 3:4]");
    const tensor part = attn::selected_part(c, s);
    CHECK(part.values.shape() == std::vector<std::size_t>{1, 1, 1, 2});
    CHECK(part.values(0, 0, 0, 1) == c.values(1, 4, 3, 1));
}

TEST_CASE("alibi's bias [1,H,Sq,Sk], broadcast over the batch, gives every --batch-index its one entry") {
    const tensor bias = counting("bias", bhqk, {1, 2, 3, 3});
    const attn::tensor_selection s = attn::select_in(bias, view_of(1, 1, std::nullopt));
    CHECK(attn::torch_index(s) == "[0:1, 1:2]");
    CHECK(attn::selected_part(bias, s).values(0, 0, 2, 1) == bias.values(0, 1, 2, 1));
}

TEST_CASE("an index outside its axis is an error") {
    const tensor w = counting("weights", bhqk, {2, 4, 5, 5});
    CHECK_THROWS_WITH_AS(attn::select_in(w, view_of(2, std::nullopt, std::nullopt)), "weights: batch index 2 is outside 0..1",
                         attn::error);
    CHECK_THROWS_AS(attn::select_in(w, view_of(std::nullopt, std::nullopt, 5)), attn::error);
}

TEST_CASE("the printed grid of a part: the picked index, counted in the whole tensor; summarised by the part's size") {
    const tensor w = counting("weights", bhqk, {2, 2, 30, 30});  // 3600 elements
    const render_options head = view_of(std::nullopt, 1, std::nullopt);
    const attn::tensor_selection s = attn::select_in(w, head);
    CHECK(attn::summarised(s, head));  // 1800 > 1000
    const attn::element_grid g = attn::make_grid(w, s, head);
    CHECK(g.shown[1] == std::vector<std::size_t>{1});
    CHECK(g.shape[1] == 1);
    CHECK(g.shown[2].size() == 6);  // summarised: 3 at each end
    const render_options both = view_of(0, 1, std::nullopt);
    const attn::tensor_selection s2 = attn::select_in(w, both);
    CHECK_FALSE(attn::summarised(s2, both));  // 900
    const attn::element_grid g2 = attn::make_grid(w, s2, both);
    CHECK(g2.shown[2].size() == 30);
    CHECK(g2.at(g2.step(0, g2.shown[0][0]) + g2.step(1, g2.shown[1][0]) + g2.step(2, 7) + g2.step(3, 9)) ==
          w.values(0, 1, 7, 9));
}

}  // TEST_SUITE
