// tensor: storage + offset + shape + strides, as PyTorch holds a tensor.
//
// First the pieces on hand-worked cases (contiguous strides, PyTorch's contiguity rule,
// views that read another tensor's memory); then PyTorch's layout rules against what
// PyTorch 1.13 reported for the notebook's lines on ten shapes (explain_layouts.json, from
// make_explain_layouts.py); then the trace: the view, transpose and merge stages read the
// memory of the stage before them, and which stage tensors share storage is what PyTorch
// shares (tests/reference/strides.json, from make_strides_fixtures.py).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/compute/tensor.hpp"
#include "attn/compute/trace.hpp"
#include "support.hpp"

namespace {

using shape_t = attn::tensor_shape;
using strides_t = attn::tensor_strides;

/// 0, 1, 2, ... in a tensor of `shape` that owns its storage.
attn::tensor owned_counting(const shape_t& shape) {
    auto values = xt::xarray<float>::from_shape(shape);
    for (std::size_t i = 0; i < values.size(); ++i) values.data()[i] = static_cast<float>(i);
    return attn::tensor("x", {}, std::move(values));
}

/// `x` read with another shape and strides: a view named after "stage.x".
attn::tensor strided(const attn::tensor& x, const shape_t& shape, const strides_t& strides) {
    return attn::as_strided(x, "stage.x", "y", {}, shape, strides);
}

/// t's layout against PyTorch's {"shape", "stride", "contiguous"}.
void check_layout(const attn::tensor_layout& t, const nlohmann::json& torch, const std::string& what) {
    INFO(what);
    CHECK(t.shape == torch["shape"].get<shape_t>());
    CHECK(t.strides == torch["stride"].get<strides_t>());
    CHECK(attn::is_contiguous(t) == torch["contiguous"].get<bool>());
}

}  // namespace

TEST_SUITE("tensor") {

TEST_CASE("contiguous_strides: each axis steps over the product of the sizes after it, as PyTorch") {
    CHECK(attn::contiguous_strides({2, 3, 4}) == strides_t{12, 4, 1});
    CHECK(attn::contiguous_strides({1, 4, 8}) == strides_t{32, 8, 1});  // torch.zeros(1,4,8).stride()
    CHECK(attn::contiguous_strides({1, 2, 4, 4}) == strides_t{32, 16, 4, 1});
    CHECK(attn::contiguous_strides({3, 0, 2}) == strides_t{2, 2, 1});   // an empty axis counts as 1
    CHECK(attn::contiguous_strides({}).empty());
}

TEST_CASE("a tensor made from values owns fresh, contiguous storage") {
    const attn::tensor x = owned_counting({2, 3, 4});
    CHECK(x.strides == strides_t{12, 4, 1});
    CHECK(x.contiguous());
    CHECK_FALSE(x.is_view());
    CHECK(x.offset == 0);
    CHECK(x.values.data() == x.storage->data());
    CHECK(x.values(1, 2, 3) == 23.0f);
    const attn::tensor copy = x;  // a copy shares the storage, as a Python name does
    CHECK(copy.storage == x.storage);
    CHECK(copy.values(1, 2, 3) == 23.0f);
}

TEST_CASE("as_strided reads the same memory through other strides; nothing is copied") {
    const attn::tensor x = owned_counting({2, 3});  // [[0,1,2],[3,4,5]]
    SUBCASE("x.t(): [3,2], strides [1,3]") {
        const attn::tensor t = strided(x, {3, 2}, {1, 3});
        CHECK(t.storage == x.storage);
        CHECK(&t.values(2, 1) == &x.values(1, 2));
        const std::vector<float> row_major(t.values.begin(), t.values.end());  // t.flatten()
        CHECK(row_major == std::vector<float>{0, 3, 1, 4, 2, 5});
        CHECK(xt::xarray<float>(t.values) == xt::xarray<float>{{0, 3}, {1, 4}, {2, 5}});
        CHECK(t.view_of == "stage.x");
        CHECK(t.is_view());
    }
    SUBCASE("a view of a view names the tensor that owns the storage (PyTorch's _base)") {
        const attn::tensor t = strided(x, {3, 2}, {1, 3});
        const attn::tensor back = attn::as_strided(t, "later.y", "z", {}, {2, 3}, {3, 1});
        CHECK(back.view_of == "stage.x");
        CHECK(back.storage == x.storage);
    }
    SUBCASE("the view keeps the storage alive after the tensor it came from is gone") {
        attn::tensor t;
        {
            const attn::tensor owner = owned_counting({2, 3});
            t = strided(owner, {3, 2}, {1, 3});
        }
        CHECK(t.values(2, 1) == 5.0f);
    }
}

TEST_CASE("row_major_copy: the elements in row-major order, as .contiguous() makes them") {
    const attn::tensor x = owned_counting({2, 3, 4});  // 0..23
    SUBCASE("transpose(1,2) of [2,3,4]: [2,4,3], strides [12,1,4], the last axis not contiguous") {
        const attn::tensor t = strided(x, {2, 4, 3}, {12, 1, 4});
        CHECK(attn::row_major_copy(t) == xt::xarray<float>{{{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}},
                                                            {{12, 16, 20}, {13, 17, 21}, {14, 18, 22}, {15, 19, 23}}});
    }
    SUBCASE("a head-split transpose: [2,3,2,2] -> [2,2,3,2], strides [12,2,4,1], runs of 2") {
        const attn::tensor t = strided(x, {2, 2, 3, 2}, {12, 2, 4, 1});
        const xt::xarray<float> want = xt::xarray<float>(t.values);  // xtensor's element-wise copy
        CHECK(attn::row_major_copy(t) == want);
        CHECK(want(0, 1, 2, 1) == 11.0f);
    }
    SUBCASE("a view from an offset, a contiguous tensor, one element") {
        const attn::tensor shifted = attn::as_strided(strided(x, {23}, {1}), "stage.x", "s", {}, {1, 2}, {0, 1});
        CHECK(attn::row_major_copy(x) == xt::xarray<float>(x.values));
        CHECK(attn::row_major_copy(shifted).size() == 2);
        CHECK(attn::row_major_copy(strided(x, {1}, {1})) == xt::xarray<float>{0});
    }
}

TEST_CASE("contiguous(): PyTorch's is_contiguous, where axes of size 1 do not count") {
    const attn::tensor x = owned_counting({2, 3, 4});
    CHECK(strided(x, {2, 3, 4}, {12, 4, 1}).contiguous());
    CHECK_FALSE(strided(x, {2, 4, 3}, {12, 1, 4}).contiguous());  // x.transpose(1, 2)
    CHECK(strided(x, {2, 3, 2, 2}, {12, 4, 2, 1}).contiguous());  // x.view(2, 3, 2, 2)
    CHECK_FALSE(strided(x, {2, 2, 3, 2}, {12, 2, 4, 1}).contiguous());  // ... .transpose(1, 2)
    // one head: [B,1,S,dk] with strides [S*D, dk, D, 1] is contiguous all the same
    CHECK(strided(x, {2, 1, 3, 4}, {12, 4, 4, 1}).contiguous());
    CHECK(strided(x, {1, 3, 4}, {99, 4, 1}).contiguous());        // any stride on an axis of size 1
    CHECK(strided(x, {0, 3}, {1, 7}).contiguous());                // no elements
    CHECK_FALSE(strided(x, {3, 4}, {8, 1}).contiguous());          // rows with gaps between them
}

TEST_CASE("layout rules: transpose swaps strides, view splits a contiguous axis, merging transposed axes copies") {
    const attn::tensor_layout t = attn::transposed(attn::contiguous_layout({2, 5, 4, 2}), 1, 2);
    CHECK(t.shape == shape_t{2, 4, 5, 2});
    CHECK(t.strides == strides_t{40, 2, 8, 1});
    CHECK_FALSE(attn::is_contiguous(t));
    // an axis of length 1 does not count: [B,1,S,D] transposed is still in order
    CHECK(attn::is_contiguous(attn::transposed(attn::contiguous_layout({2, 5, 1, 8}), 1, 2)));
    CHECK(attn::viewed(attn::contiguous_layout({2, 5, 8}), {2, 5, 4, 2})->strides == strides_t{40, 8, 2, 1});
    const attn::tensor_layout merged = attn::transposed(attn::contiguous_layout({2, 4, 5, 2}), 1, 2);  // (40, 2, 10, 1)
    CHECK_FALSE(attn::viewed(merged, {2, 5, 8}).has_value());  // view raises, reshape copies
}

TEST_CASE("a zero-length axis, as PyTorch has it: no elements is contiguous, any empty shape a view") {
    const attn::tensor_layout empty = attn::contiguous_layout({2, 0, 3});
    CHECK(empty.strides == strides_t{3, 3, 1});  // torch.empty(2, 0, 3).stride()
    CHECK(attn::is_contiguous(attn::transposed(empty, 0, 2)));  // (1, 3, 3): .is_contiguous() is True
    CHECK(attn::is_contiguous({{0, 3}, {6, 2}}));  // torch.empty(0, 6)[:, ::2]: (6, 2), contiguous
    CHECK(attn::viewed(empty, {0, 6})->strides == strides_t{6, 1});  // .view(0, 6).stride()
    CHECK(attn::viewed(empty, {3, 0, 2})->strides == strides_t{2, 2, 1});
    // the same shape keeps its strides: .transpose(0, 2).view(3, 0, 2).stride() is (1, 3, 3)
    CHECK(attn::viewed(attn::transposed(empty, 0, 2), {3, 0, 2})->strides == strides_t{1, 3, 3});
    const attn::tensor x = owned_counting({2, 3});
    CHECK(strided(x, {0, 3}, {6, 2}).contiguous());  // a tensor follows the same rule
}

TEST_CASE("every step of the notebook's lines, as PyTorch 1.13 reports it") {
    const nlohmann::json cases = read_json(reference_path("explain_layouts.json"))["cases"];
    REQUIRE(cases.size() == 10);
    for (const auto& c : cases) {
        const std::size_t B = c["B"], Sq = c["Sq"], Sk = c["Sk"], D = c["D"], H = c["H"], dk = D / H;
        const std::string name = "B=" + std::to_string(B) + " Sq=" + std::to_string(Sq) + " Sk=" +
                                 std::to_string(Sk) + " D=" + std::to_string(D) + " H=" + std::to_string(H);
        CAPTURE(name);
        const attn::tensor_layout q = attn::contiguous_layout({B, Sq, D}), k = attn::contiguous_layout({B, Sk, D});
        check_layout(q, c["projections"]["q"], "projections q");
        const attn::tensor_layout q_split = *attn::viewed(q, {B, Sq, H, dk}), k_split = *attn::viewed(k, {B, Sk, H, dk});
        check_layout(q_split, c["view"]["q"], "view q");
        check_layout(k_split, c["view"]["k"], "view k");
        const attn::tensor_layout q_heads = attn::transposed(q_split, 1, 2), k_heads = attn::transposed(k_split, 1, 2);
        check_layout(q_heads, c["transpose"]["q"], "transpose q");
        check_layout(k_heads, c["transpose"]["k"], "transpose k");
        const attn::tensor_layout k_turned = attn::transposed(k_heads, 2, 3);
        check_layout(k_turned, c["k_t"], "k.transpose(-2, -1)");

        // matmul reshapes each 4-D operand to [B·H, rows, cols]: one copy per operand no view gives
        const auto copies = [&](const attn::tensor_layout& t) {
            return attn::viewed(t, {B * H, t.shape[2], t.shape[3]}) ? 0 : 1;
        };
        CHECK(copies(q_heads) + copies(k_turned) == c["scores"]["matmul_copies"].get<int>());
        const attn::tensor_layout weights = attn::contiguous_layout({B, H, Sq, Sk});
        check_layout(weights, c["scores"]["scores"], "scores");
        CHECK(copies(weights) + copies(k_heads) == c["context"]["matmul_copies"].get<int>());  // v as k

        const attn::tensor_layout context = attn::contiguous_layout({B, H, Sq, dk});
        check_layout(context, c["context"]["context"], "context");
        const attn::tensor_layout merged = attn::transposed(context, 1, 2);
        check_layout(merged, c["merge"]["context"], "merge");
        const bool reshape_copies = !attn::viewed(merged, {B, Sq, D});
        CHECK(reshape_copies == !c["merge"]["view_raises"].is_null());
        CHECK(reshape_copies == (c["concat"]["reshape_copies"].get<int>() == 1));
        CHECK(!attn::is_contiguous(merged) == (c["concat"]["contiguous_copies"].get<int>() == 1));
        CHECK(attn::is_contiguous(merged) == c["concat"]["same_memory"].get<bool>());
        check_layout(*attn::viewed(attn::contiguous_layout(merged.shape), {B, Sq, D}), c["concat"]["concat"], "concat");
    }
}

TEST_CASE("view, transpose and merge read the memory of the stage before them, as in PyTorch") {
    const auto& c = strides_fixture::cases().front();  // defaults_causal: B=1, S=4, D=8, H=2
    const attn::trace t = strides_fixture::run(c);
    const auto at = [&](const char* stage, const char* name) -> const attn::tensor& { return t.find(stage)->at(name); };
    for (const char* name : {"q", "k", "v"}) {
        CAPTURE(name);
        const attn::tensor& projected = at("projections", name);
        const attn::tensor& split = at("view", name);
        const attn::tensor& transposed = at("transpose", name);
        CHECK(split.storage == projected.storage);
        CHECK(transposed.storage == projected.storage);
        CHECK(split.values.data() == projected.values.data());
        CHECK(transposed.values.data() == projected.values.data());
        // q[b,s,d] with d = h*dk + e is view[b,s,h,e] and transpose[b,h,s,e]: one address
        CHECK(&split.values(0, 3, 1, 2) == &projected.values(0, 3, 6));
        CHECK(&transposed.values(0, 1, 3, 2) == &projected.values(0, 3, 6));
        // with the strides the layout rules give: q.view(B, S, H, dk), then .transpose(1, 2)
        const attn::tensor_layout split_rule = *attn::viewed(projected.layout(), split.layout().shape);
        CHECK(split.strides == split_rule.strides);
        CHECK(transposed.strides == attn::transposed(split_rule, 1, 2).strides);
    }
    const attn::tensor& context = at("context", "context");
    const attn::tensor& merged = at("merge", "context");
    CHECK(merged.storage == context.storage);
    CHECK(merged.strides == attn::transposed(context.layout(), 1, 2).strides);
    CHECK(&merged.values(0, 3, 1, 2) == &context.values(0, 1, 3, 2));
    // concat is where the copy happens: memory of its own, in row-major order
    const attn::tensor& concat = at("concat", "concat");
    CHECK(concat.storage != merged.storage);
    CHECK(concat.values(0, 3, 6) == merged.values(0, 3, 1, 2));
}

TEST_CASE("the stage tensors share storage exactly where PyTorch's do") {
    for (const auto& c : strides_fixture::cases()) {
        const std::string case_name = c.at("name").get<std::string>();
        CAPTURE(case_name);
        const attn::trace t = strides_fixture::run(c);
        std::map<std::string, const attn::tensor*> by_path;  // "projections.q" -> the tensor
        std::size_t compared = 0;
        for (const attn::stage& s : t.stages) {
            REQUIRE(c.at("stages").contains(std::string(s.name())));
            for (const attn::tensor& x : s.tensors) {
                const std::string path = std::string(s.name()) + "." + x.name;
                CAPTURE(path);
                const auto& expected = c.at("stages").at(std::string(s.name())).at(x.name).at("storage");
                if (expected.is_null()) {  // storage of its own: no earlier stage tensor has it
                    CHECK_FALSE(x.is_view());
                    for (const auto& entry : by_path) CHECK_MESSAGE(entry.second->storage != x.storage, entry.first);
                } else {
                    const std::string owner = expected.get<std::string>();
                    CHECK(x.view_of == owner);
                    REQUIRE(by_path.count(owner) == 1);
                    CHECK(x.storage == by_path.at(owner)->storage);
                }
                by_path[path] = &x;
                ++compared;
            }
        }
        std::size_t in_fixture = 0;
        for (const auto& stage : c.at("stages")) in_fixture += stage.size();
        CHECK(compared == in_fixture);
    }
}

}  // TEST_SUITE("tensor")
