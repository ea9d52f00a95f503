// tensor: storage + offset + shape + strides, as PyTorch holds a tensor.
//
// First the pieces on hand-worked cases (contiguous strides, PyTorch's contiguity rule,
// views that read another tensor's memory); then the trace: the view, transpose and merge
// stages read the memory of the stage before them, and which stage tensors share storage
// is what PyTorch shares (tests/reference/strides.json, from make_strides_fixtures.py).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/tensor.hpp"
#include "attn/compute/trace.hpp"
#include "strides_fixture.hpp"

namespace {

using shape_t = attn::tensor_shape;
using strides_t = attn::tensor_strides;

/// 0, 1, 2, ... in a tensor of `shape` that owns its storage.
attn::tensor counting(const shape_t& shape) {
    auto values = xt::xarray<float>::from_shape(shape);
    for (std::size_t i = 0; i < values.size(); ++i) values.data()[i] = static_cast<float>(i);
    return attn::tensor("x", {}, std::move(values));
}

/// `x` read with another shape and strides: a view named after "stage.x".
attn::tensor view(const attn::tensor& x, const shape_t& shape, const strides_t& strides) {
    return attn::as_strided(x, "stage.x", "y", {}, shape, strides);
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
    const attn::tensor x = counting({2, 3, 4});
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
    const attn::tensor x = counting({2, 3});  // [[0,1,2],[3,4,5]]
    SUBCASE("x.t(): [3,2], strides [1,3]") {
        const attn::tensor t = view(x, {3, 2}, {1, 3});
        CHECK(t.storage == x.storage);
        CHECK(&t.values(2, 1) == &x.values(1, 2));
        const std::vector<float> row_major(t.values.begin(), t.values.end());  // t.flatten()
        CHECK(row_major == std::vector<float>{0, 3, 1, 4, 2, 5});
        CHECK(xt::xarray<float>(t.values) == xt::xarray<float>{{0, 3}, {1, 4}, {2, 5}});
        CHECK(t.view_of == "stage.x");
        CHECK(t.is_view());
    }
    SUBCASE("a view of a view names the tensor that owns the storage (PyTorch's _base)") {
        const attn::tensor t = view(x, {3, 2}, {1, 3});
        const attn::tensor back = attn::as_strided(t, "later.y", "z", {}, {2, 3}, {3, 1});
        CHECK(back.view_of == "stage.x");
        CHECK(back.storage == x.storage);
    }
    SUBCASE("the view keeps the storage alive after the tensor it came from is gone") {
        attn::tensor t;
        {
            const attn::tensor owner = counting({2, 3});
            t = view(owner, {3, 2}, {1, 3});
        }
        CHECK(t.values(2, 1) == 5.0f);
    }
}

TEST_CASE("row_major_copy: the elements in row-major order, as .contiguous() makes them") {
    const attn::tensor x = counting({2, 3, 4});  // 0..23
    SUBCASE("transpose(1,2) of [2,3,4]: [2,4,3], strides [12,1,4], the last axis not contiguous") {
        const attn::tensor t = view(x, {2, 4, 3}, {12, 1, 4});
        CHECK(attn::row_major_copy(t) == xt::xarray<float>{{{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}},
                                                            {{12, 16, 20}, {13, 17, 21}, {14, 18, 22}, {15, 19, 23}}});
    }
    SUBCASE("a head-split transpose: [2,3,2,2] -> [2,2,3,2], strides [12,2,4,1], runs of 2") {
        const attn::tensor t = view(x, {2, 2, 3, 2}, {12, 2, 4, 1});
        const xt::xarray<float> want = xt::xarray<float>(t.values);  // xtensor's element-wise copy
        CHECK(attn::row_major_copy(t) == want);
        CHECK(want(0, 1, 2, 1) == 11.0f);
    }
    SUBCASE("a view from an offset, a contiguous tensor, one element") {
        const attn::tensor shifted = attn::as_strided(view(x, {23}, {1}), "stage.x", "s", {}, {1, 2}, {0, 1});
        CHECK(attn::row_major_copy(x) == xt::xarray<float>(x.values));
        CHECK(attn::row_major_copy(shifted).size() == 2);
        CHECK(attn::row_major_copy(view(x, {1}, {1})) == xt::xarray<float>{0});
    }
}

TEST_CASE("contiguous(): PyTorch's is_contiguous, where axes of size 1 do not count") {
    const attn::tensor x = counting({2, 3, 4});
    CHECK(view(x, {2, 3, 4}, {12, 4, 1}).contiguous());
    CHECK_FALSE(view(x, {2, 4, 3}, {12, 1, 4}).contiguous());  // x.transpose(1, 2)
    CHECK(view(x, {2, 3, 2, 2}, {12, 4, 2, 1}).contiguous());  // x.view(2, 3, 2, 2)
    CHECK_FALSE(view(x, {2, 2, 3, 2}, {12, 2, 4, 1}).contiguous());  // ... .transpose(1, 2)
    // one head: [B,1,S,dk] with strides [S*D, dk, D, 1] is contiguous all the same
    CHECK(view(x, {2, 1, 3, 4}, {12, 4, 4, 1}).contiguous());
    CHECK(view(x, {1, 3, 4}, {99, 4, 1}).contiguous());        // any stride on an axis of size 1
    CHECK(view(x, {0, 3}, {1, 7}).contiguous());                // no elements
    CHECK_FALSE(view(x, {3, 4}, {8, 1}).contiguous());          // rows with gaps between them
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
    }
    const attn::tensor& context = at("context", "context");
    const attn::tensor& merged = at("merge", "context");
    CHECK(merged.storage == context.storage);
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
