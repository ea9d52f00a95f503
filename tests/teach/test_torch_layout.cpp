// torch_layout: PyTorch's strides, is_contiguous() and view/reshape rules, checked
// against what PyTorch 1.13 reported for the notebook's lines on ten shapes
// (tests/reference/make_explain_layouts.py -> explain_layouts.json).
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/teach/torch_layout.hpp"

namespace {

namespace tl = attn::torch_layout;
using sizes = tl::sizes;

nlohmann::json layout_cases() {
    std::ifstream in(std::string(ATTN_REFERENCE_DIR) + "/explain_layouts.json");
    REQUIRE(in.good());
    return nlohmann::json::parse(in)["cases"];
}

void check_layout(const tl::layout& ours, const nlohmann::json& torch, const std::string& what) {
    INFO(what);
    CHECK(ours.shape == torch["shape"].get<sizes>());
    CHECK(ours.strides == torch["stride"].get<sizes>());
    CHECK(tl::is_contiguous(ours) == torch["contiguous"].get<bool>());
}

}  // namespace

TEST_SUITE("torch_layout") {
    TEST_CASE("contiguous strides, transpose and is_contiguous written out") {
        CHECK(tl::contiguous({2, 5, 8}).strides == sizes{40, 8, 1});
        const tl::layout t = tl::transposed(tl::contiguous({2, 5, 4, 2}), 1, 2);
        CHECK(t.shape == sizes{2, 4, 5, 2});
        CHECK(t.strides == sizes{40, 2, 8, 1});
        CHECK_FALSE(tl::is_contiguous(t));
        // an axis of length 1 does not count: [B,1,S,D] transposed is still in order
        CHECK(tl::is_contiguous(tl::transposed(tl::contiguous({2, 5, 1, 8}), 1, 2)));
        CHECK(tl::stride_text(t) == "(40, 2, 8, 1)");
        CHECK(tl::stride_text(tl::contiguous({8})) == "(1,)");
        CHECK(tl::shape_text({2, 4, 5, 5}) == "[2,4,5,5]");
    }

    TEST_CASE("view splits a contiguous axis; merging transposed axes needs a copy") {
        CHECK(tl::view_strides(tl::contiguous({2, 5, 8}), {2, 5, 4, 2}) == sizes{40, 8, 2, 1});
        const tl::layout merged = tl::transposed(tl::contiguous({2, 4, 5, 2}), 1, 2);  // [2,5,4,2] (40, 2, 10, 1)
        CHECK_FALSE(tl::view_strides(merged, {2, 5, 8}).has_value());
        CHECK(tl::reshape_copies(merged, {2, 5, 8}));
        CHECK_THROWS(tl::viewed(merged, {2, 5, 8}));
    }

    TEST_CASE("every step of the notebook's lines, as PyTorch 1.13 reports it") {
        const nlohmann::json cases = layout_cases();
        REQUIRE(cases.size() == 10);
        for (const auto& c : cases) {
            const std::int64_t B = c["B"], Sq = c["Sq"], Sk = c["Sk"], D = c["D"], H = c["H"], dk = D / H;
            const std::string name = "B=" + std::to_string(B) + " Sq=" + std::to_string(Sq) + " Sk=" +
                                     std::to_string(Sk) + " D=" + std::to_string(D) + " H=" + std::to_string(H);
            CAPTURE(name);
            const tl::layout q = tl::contiguous({B, Sq, D}), k = tl::contiguous({B, Sk, D});
            check_layout(q, c["projections"]["q"], "projections q");
            const tl::layout q_split = tl::viewed(q, {B, Sq, H, dk}), k_split = tl::viewed(k, {B, Sk, H, dk});
            check_layout(q_split, c["view"]["q"], "view q");
            check_layout(k_split, c["view"]["k"], "view k");
            const tl::layout q_heads = tl::transposed(q_split, 1, 2), k_heads = tl::transposed(k_split, 1, 2);
            check_layout(q_heads, c["transpose"]["q"], "transpose q");
            check_layout(k_heads, c["transpose"]["k"], "transpose k");
            const tl::layout k_turned = tl::transposed(k_heads, 2, 3);
            check_layout(k_turned, c["k_t"], "k.transpose(-2, -1)");

            // matmul reshapes each 4-D operand to [B·H, rows, cols]: one copy per operand no view gives
            const auto copies = [&](const tl::layout& t) {
                return tl::reshape_copies(t, {B * H, t.shape[2], t.shape[3]}) ? 1 : 0;
            };
            CHECK(copies(q_heads) + copies(k_turned) == c["scores"]["matmul_copies"].get<int>());
            check_layout(tl::contiguous({B, H, Sq, Sk}), c["scores"]["scores"], "scores");
            const tl::layout weights = tl::contiguous({B, H, Sq, Sk});
            CHECK(copies(weights) + copies(k_heads) == c["context"]["matmul_copies"].get<int>());  // v as k

            const tl::layout context = tl::contiguous({B, H, Sq, dk});
            check_layout(context, c["context"]["context"], "context");
            const tl::layout merged = tl::transposed(context, 1, 2);
            check_layout(merged, c["merge"]["context"], "merge");
            CHECK(tl::reshape_copies(merged, {B, Sq, D}) == !c["merge"]["view_raises"].is_null());
            CHECK(tl::reshape_copies(merged, {B, Sq, D}) == (c["concat"]["reshape_copies"].get<int>() == 1));
            CHECK(!tl::is_contiguous(merged) == (c["concat"]["contiguous_copies"].get<int>() == 1));
            CHECK(tl::is_contiguous(merged) == c["concat"]["same_memory"].get<bool>());
            check_layout(tl::viewed(tl::contiguous(merged.shape), {B, Sq, D}), c["concat"]["concat"], "concat");
        }
    }
}
