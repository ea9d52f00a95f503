// prescott_gemm against OpenBLAS itself: where prescott_gemm_applies, its products must be
// cblas_sgemm's bit for bit (what torch.bmm and torch.addmm call), on the OpenBLAS thread
// counts PyTorch would run them on, with beta 0 and beta 1, a transposed operand or not, and
// zeros, infinities and subnormals among the values; through matmul, NaNs too (which it
// leaves to OpenBLAS). Skipped, with a message, where
// OpenBLAS does not run its Prescott kernel (OPENBLAS_CORETYPE=Haswell ...) or the CPU has
// no AVX-512.
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <cblas.h>
#include <doctest/doctest.h>

#include "attn/compute/linalg.hpp"
#include "attn/compute/prescott_gemm.hpp"

extern "C" int openblas_get_num_threads(void);
extern "C" void openblas_set_num_threads(int);

namespace {

struct product {
    std::size_t m, n, k;
    bool b_transposed, accumulate;
};

enum class values { normal, special, with_nan };

/// Elements of the product that differ in any bit between cblas_sgemm on `blas_threads`
/// OpenBLAS threads and prescott_gemm (or, with NaNs among the values, attn::matmul, against
/// OpenBLAS on the threads matmul runs it on).
std::size_t differing(const product& p, std::mt19937& rng, values kind, int blas_threads) {
    std::normal_distribution<float> normal;
    std::vector<float> a(p.m * p.k), b(p.k * p.n), blas(p.m * p.n), ours;
    for (float& v : a) v = normal(rng);
    for (float& v : b) v = normal(rng);
    for (float& v : blas) v = p.accumulate ? normal(rng) : 0.0f;  // a bias, as addmm's
    if (kind != values::normal) {  // masked weights (0), -0, ±inf, subnormals, and NaNs of both signs
        const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min(),
                                  -1e-40f, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()};
        const std::size_t count = kind == values::with_nan ? std::size(specials) : std::size(specials) - 2;
        for (std::size_t i = 0; i < a.size(); i += 7) a[i] = specials[(i / 7) % count];
        for (std::size_t i = 3; i < b.size(); i += 29) b[i] = specials[(i / 29) % count];
    }
    ours = blas;
    if (kind == values::with_nan) {  // first: matmul leaves OpenBLAS on the threads PyTorch would run it on
        attn::matmul(a.data(), b.data(), ours.data(), p.m, p.n, p.k, p.b_transposed, p.accumulate);
        blas_threads = openblas_get_num_threads();
    } else {
        attn::prescott_gemm(a.data(), b.data(), ours.data(), p.m, p.n, p.k, p.b_transposed, p.accumulate);
    }
    openblas_set_num_threads(blas_threads);
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, p.b_transposed ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a.data(), k,
                b.data(), p.b_transposed ? k : n, p.accumulate ? 1.0f : 0.0f, blas.data(), n);
    std::size_t count = 0;
    for (std::size_t e = 0; e < blas.size(); ++e) count += std::memcmp(&blas[e], &ours[e], sizeof(float)) != 0;
    return count;
}

/// OpenBLAS's thread count put back as it was, at the end of a test.
struct blas_threads_kept {
    blas_threads_kept() : before(openblas_get_num_threads()) {}
    ~blas_threads_kept() { openblas_set_num_threads(before); }
    int before;
};

}  // namespace

TEST_SUITE("prescott_gemm") {
    TEST_CASE("prescott_gemm gives cblas_sgemm's bits wherever it applies") {
        if (!attn::detail::prescott_gemm_usable()) {
            MESSAGE("OpenBLAS does not run its Prescott kernel here, or the CPU has no AVX-512F: not checked");
            return;
        }
        std::mt19937 rng(2026);
        std::size_t products = 0;
        blas_threads_kept kept;
        for (const int threads : {1, 2, 4}) {
            for (int trial = 0; trial < 60; ++trial) {
                product p{};
                p.m = 4 * static_cast<std::size_t>(threads) * (1 + rng() % 24);
                p.n = 16 * static_cast<std::size_t>(threads) * (1 + rng() % 12);
                p.k = trial % 3 == 0 ? 1 + rng() % 128 : 128 * (1 + rng() % 6);
                p.b_transposed = trial % 2 == 0;
                p.accumulate = trial % 4 < 2;
                const bool large = !attn::blas_runs_on_one_thread(p.m, p.n, p.k);
                if (!attn::prescott_gemm_applies(p.m, p.n, p.k, large ? threads : 1)) continue;
                CAPTURE(threads);
                CAPTURE(p.m);
                CAPTURE(p.n);
                CAPTURE(p.k);
                CAPTURE(p.b_transposed);
                CAPTURE(p.accumulate);
                CHECK(differing(p, rng, trial % 5 == 0 ? values::special : values::normal, threads) == 0);
                if (trial % 5 == 1) CHECK(differing(p, rng, values::with_nan, threads) == 0);
                ++products;
            }
        }
        // the products of B1 S2048 D1024 H16: a projection, scores, context (2 threads)
        for (const product p : {product{2048, 1024, 1024, true, true}, product{2048, 2048, 64, true, false},
                                product{2048, 64, 2048, false, false}}) {
            REQUIRE(attn::prescott_gemm_applies(p.m, p.n, p.k, 2));
            CAPTURE(p.m);
            CAPTURE(p.n);
            CAPTURE(p.k);
            CHECK(differing(p, rng, values::normal, 2) == 0);
        }
        CHECK(products >= 100);
    }

    TEST_CASE("prescott_gemm_applies: not where edge kernels, halved blocks or other thread counts change the bits") {
        if (!attn::detail::prescott_gemm_usable()) {
            MESSAGE("OpenBLAS does not run its Prescott kernel here, or the CPU has no AVX-512F: not checked");
            return;
        }
        CHECK(attn::prescott_gemm_applies(64, 64, 2048, 2));
        CHECK(attn::prescott_gemm_applies(8, 16, 100, 1));
        CHECK_FALSE(attn::prescott_gemm_applies(64, 64, 300, 1));  // 300: blocks 128, 88, 84
        CHECK_FALSE(attn::prescott_gemm_applies(64, 24, 128, 1));  // 8 leftover columns
        CHECK_FALSE(attn::prescott_gemm_applies(9, 32, 128, 1));   // a leftover row
        CHECK_FALSE(attn::prescott_gemm_applies(12, 64, 256, 2));  // 6 rows a thread
        CHECK_FALSE(attn::prescott_gemm_applies(96, 96, 256, 3));  // 3 threads split otherwise
        // and where it does not apply, OpenBLAS's own product is run: its bits, edges and all
        const std::vector<float> a(9 * 300, 0.5f), b(300 * 24, -0.25f);
        std::vector<float> c(9 * 24), blas(9 * 24);
        attn::matmul(a.data(), b.data(), c.data(), 9, 24, 300, false);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 9, 24, 300, 1.0f, a.data(), 300, b.data(), 24, 0.0f,
                    blas.data(), 24);
        CHECK(std::memcmp(c.data(), blas.data(), c.size() * sizeof(float)) == 0);
    }

    TEST_CASE("the formula with 128-value blocks is not OpenBLAS's at its edge kernels") {
        // why prescott_gemm_applies wants whole tiles: a leftover row (OpenBLAS's 1-column
        // edge kernel) sums otherwise, so the formula differs there
        if (!attn::detail::prescott_gemm_usable()) {
            MESSAGE("OpenBLAS does not run its Prescott kernel here, or the CPU has no AVX-512F: not checked");
            return;
        }
        std::mt19937 rng(5);
        std::normal_distribution<float> normal;
        const std::size_t m = 9, n = 32, k = 384;
        std::vector<float> a(m * k), b(k * n), blas(m * n, 0.0f), formula(m * n, 0.0f);
        for (float& v : a) v = normal(rng);
        for (float& v : b) v = normal(rng);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                    blas.data(), n);
        attn::detail::prescott_gemm_reference(a.data(), b.data(), formula.data(), m, n, k, false, 128);
        CHECK(std::memcmp(blas.data(), formula.data(), 8 * n * sizeof(float)) == 0);  // whole tiles: equal
        CHECK(std::memcmp(blas.data() + 8 * n, formula.data() + 8 * n, n * sizeof(float)) != 0);  // the 9th row
    }
}
