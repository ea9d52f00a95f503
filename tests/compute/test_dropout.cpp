// Dropout on the attention weights (stage 11): the keep mask and the 1/(1-p) scaling.
// PyTorch-computed cases are in the fixtures (dropout_*.json); these are by hand.
#include <doctest/doctest.h>

#include <vector>

#include "attn/compute/generator.hpp"
#include "attn/compute/plane_chain.hpp"

namespace {

/// dropout_step on `weights` [rows, width] (one plane), keeping where `keep` is true.
std::vector<float> apply_dropout(std::vector<float> weights, std::size_t width, const std::vector<bool>& keep, double p) {
    attn::plane_chain chain;
    chain.dropout_p = p;
    chain.dropout = attn::reference_dropout_scales(p);
    chain.batch = chain.heads = 1;
    chain.width = width;
    std::vector<float> draws;  // 0 is kept (0 < 1 - p), 1 is dropped
    for (const bool k : keep) draws.push_back(k ? 0.0f : 1.0f);
    attn::rows_block block{0, 1, 0, weights.size() / width, weights.data()};
    block.draws = draws.data();
    attn::dropout_step(chain, block);
    return weights;
}

/// The keep mask, 1 or 0: torch.manual_seed(seed); torch.rand(n) < 1 - p.
std::vector<float> dropout_keep(std::size_t n, std::uint64_t seed, double p) {
    std::vector<float> keep(n);
    attn::torch_generator(seed).rand(keep.data(), n);
    attn::keep_from_draws(keep.data(), n, p);
    return keep;
}

std::size_t count_kept(const std::vector<float>& keep) {
    std::size_t kept = 0;
    for (const float k : keep) kept += k == 1.0f ? 1 : 0;
    return kept;
}

}  // namespace

TEST_SUITE("dropout") {

TEST_CASE("kept weights are scaled by 1/(1-p), dropped ones are 0") {
    const std::vector<float> weights{0.5f, 0.25f, 0.25f, 0.1f, 0.6f, 0.3f};
    const std::vector<bool> keep{true, false, true, false, true, true};
    const std::vector<float> expected{1.0f, 0.0f, 0.5f, 0.0f, 1.2f, 0.6f};
    CHECK(apply_dropout(weights, 3, keep, 0.5) == expected);
}

TEST_CASE("p = 1 gives zeros, not 0/0") {
    CHECK(apply_dropout({0.5f, 0.5f}, 2, {false, false}, 1.0) == std::vector<float>{0.0f, 0.0f});
}

TEST_CASE("the keep mask: p = 0 keeps all, p = 1 none, and about 1 - p in between") {
    const std::size_t n = 2 * 4 * 16 * 16;  // [B,H,Sq,Sk], 2048 draws
    CHECK(count_kept(dropout_keep(n, 0, 0.0)) == n);
    CHECK(count_kept(dropout_keep(n, 0, 1.0)) == 0);
    const double kept = static_cast<double>(count_kept(dropout_keep(n, 7, 0.25))) / n;
    CHECK(kept == doctest::Approx(0.75).epsilon(0.05));
}

TEST_CASE("the keep mask is torch.manual_seed(seed); torch.rand(shape) < 1 - p") {
    // torch.manual_seed(0); torch.rand(6) = [0.4963, 0.7682, 0.0885, 0.1320, 0.3074, 0.6341]
    const std::vector<float> keep = dropout_keep(6, 0, 0.5);  // kept where rand < 0.5
    CHECK(keep == std::vector<float>{1, 0, 1, 1, 1, 0});
    CHECK(dropout_keep(6, 0, 0.5) == keep);  // the same seed, the same mask
    CHECK(dropout_keep(6, 1, 0.5) != keep);
}

}  // TEST_SUITE("dropout")
