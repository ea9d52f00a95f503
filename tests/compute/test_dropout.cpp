// Dropout on the attention weights (stage 11): the keep mask and the 1/(1-p) scaling.
// PyTorch-computed cases are in the fixtures (dropout_*.json); these are by hand.
#include <doctest/doctest.h>

#include <xtensor/xarray.hpp>

#include "attn/compute/dropout.hpp"

TEST_SUITE("dropout") {

TEST_CASE("kept weights are scaled by 1/(1-p), dropped ones are 0") {
    const xt::xarray<float> weights{{0.5f, 0.25f, 0.25f}, {0.1f, 0.6f, 0.3f}};
    const xt::xarray<bool> keep{{true, false, true}, {false, true, true}};
    const xt::xarray<float> expected{{1.0f, 0.0f, 0.5f}, {0.0f, 1.2f, 0.6f}};
    CHECK(attn::apply_dropout(weights, keep, 0.5) == expected);
}

TEST_CASE("p = 1 gives zeros, not 0/0") {
    const xt::xarray<float> weights{0.5f, 0.5f};
    const xt::xarray<bool> keep{false, false};
    CHECK(attn::apply_dropout(weights, keep, 1.0) == xt::xarray<float>{0.0f, 0.0f});
}

TEST_CASE("the keep mask: p = 0 keeps all, p = 1 none, and about 1 - p in between") {
    const std::vector<std::size_t> shape{2, 4, 16, 16};  // [B,H,Sq,Sk], 2048 draws
    CHECK(xt::all(attn::dropout_keep(shape, 0, 0.0)));
    CHECK_FALSE(xt::any(attn::dropout_keep(shape, 0, 1.0)));
    const xt::xarray<bool> keep = attn::dropout_keep(shape, 7, 0.25);
    const double kept = static_cast<double>(xt::sum(xt::cast<int>(keep))()) / keep.size();
    CHECK(kept == doctest::Approx(0.75).epsilon(0.05));
}

TEST_CASE("the keep mask is torch.manual_seed(seed); torch.rand(shape) < 1 - p") {
    // torch.manual_seed(0); torch.rand(6) = [0.4963, 0.7682, 0.0885, 0.1320, 0.3074, 0.6341]
    const xt::xarray<bool> keep = attn::dropout_keep({6}, 0, 0.5);  // kept where rand < 0.5
    CHECK(keep == xt::xarray<bool>{true, false, true, true, true, false});
    CHECK(attn::dropout_keep({6}, 0, 0.5) == keep);  // the same seed, the same mask
    CHECK(attn::dropout_keep({6}, 1, 0.5) != keep);
}

}  // TEST_SUITE("dropout")
