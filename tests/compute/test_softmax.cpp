// linalg: softmax over the last axis, matmul and linear on hand-worked examples.
//
// Expected values are worked out by hand (exp, products of small integers) and written
// out literally; see the comment next to each.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "attn/compute/generator.hpp"
#include "attn/compute/linalg.hpp"
#include "support.hpp"

namespace {


/// Every element of `actual` is within 1e-6 of `expected` (same shape).
void check_near(const xt::xarray<float>& actual, const xt::xarray<float>& expected) {
    REQUIRE(std::vector<std::size_t>(actual.shape().begin(), actual.shape().end()) ==
            std::vector<std::size_t>(expected.shape().begin(), expected.shape().end()));
    for (std::size_t i = 0; i < actual.size(); ++i) {
        CAPTURE(i);
        CHECK(actual.data()[i] == doctest::Approx(expected.data()[i]).epsilon(1e-6));
    }
}

xt::xarray<float> softmax(xt::xarray<float> x) {
    attn::softmax_last_axis(x);
    return x;
}

/// safe_softmax_rows over the last axis of x.
void safe_softmax_last_axis(xt::xarray<float>& x) {
    attn::safe_softmax_rows(x.data(), x.size() / x.shape().back(), x.shape().back());
}

}  // namespace

TEST_SUITE("linalg") {

TEST_CASE("softmax_last_axis is torch.softmax to the bit, for widths 1 to 257") {
    // tests/reference/softmax_rows.json (make_fixtures.py): rows under and over the 8 lanes
    // of aten's AVX2 kernel, spreads from 0.01 to 60, -inf entries and all -inf rows.
    const nlohmann::json cases = read_json(reference_path("softmax_rows.json"));
    REQUIRE(cases.size() >= 100);
    const auto number = [](const nlohmann::json& v) {
        if (!v.is_string()) return v.get<float>();
        const auto s = v.get<std::string>();
        return s == "nan" ? std::numeric_limits<float>::quiet_NaN() : s == "-inf" ? -inf : inf;
    };
    for (const auto& c : cases) {
        const auto shape = c.at("x").at("shape").get<std::vector<std::size_t>>();
        xt::xarray<float> x = xt::xarray<float>::from_shape(shape);
        for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = number(c.at("x").at("data")[i]);
        attn::softmax_last_axis(x);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const float want = number(c.at("softmax").at("data")[i]), got = x.data()[i];
            differ += !(got == want || (std::isnan(got) && std::isnan(want)));
        }
        CHECK_MESSAGE(differ == 0, "width " << c.at("width") << ", scale " << c.at("scale") << ": " << differ
                                            << " values differ from torch.softmax");
    }
}

TEST_CASE("softmax_last_axis: hand-worked rows") {
    SUBCASE("[0, 0] -> [0.5, 0.5]") {
        const auto w = softmax(xt::xarray<float>{0.0f, 0.0f});
        CHECK(w(0) == 0.5f);
        CHECK(w(1) == 0.5f);
    }
    SUBCASE("[1, 2, 3]: e^(x - 3) / (e^-2 + e^-1 + 1)") {
        // e^-2 = 0.135335283, e^-1 = 0.367879441, sum 1.503214724
        check_near(softmax(xt::xarray<float>{1.0f, 2.0f, 3.0f}),
                     xt::xarray<float>{0.0900305732f, 0.2447284711f, 0.6652409558f});
    }
    SUBCASE("each row of a matrix on its own") {
        check_near(softmax(xt::xarray<float>{{1.0f, 2.0f, 3.0f}, {0.0f, 0.0f, 0.0f}, {3.0f, 2.0f, 1.0f}}),
                     xt::xarray<float>{{0.0900305732f, 0.2447284711f, 0.6652409558f},
                                       {1.0f / 3, 1.0f / 3, 1.0f / 3},
                                       {0.6652409558f, 0.2447284711f, 0.0900305732f}});
    }
    SUBCASE("-inf entries get exactly 0, the others share the weight") {
        const auto w = softmax(xt::xarray<float>{{0.0f, -inf, 0.0f, -inf}, {-inf, 5.0f, -inf, -inf}});
        CHECK(w(0, 0) == 0.5f);
        CHECK(w(0, 1) == 0.0f);
        CHECK(w(0, 2) == 0.5f);
        CHECK(w(0, 3) == 0.0f);
        CHECK(w(1, 0) == 0.0f);
        CHECK(w(1, 1) == 1.0f);
        CHECK(w(1, 2) == 0.0f);
        CHECK(w(1, 3) == 0.0f);
    }
    SUBCASE("a row that is all -inf becomes all NaN (as PyTorch); the next row is unaffected") {
        const auto w = softmax(xt::xarray<float>{{-inf, -inf, -inf}, {0.0f, 0.0f, -inf}});
        CHECK(std::isnan(w(0, 0)));
        CHECK(std::isnan(w(0, 1)));
        CHECK(std::isnan(w(0, 2)));
        CHECK(w(1, 0) == 0.5f);
        CHECK(w(1, 1) == 0.5f);
        CHECK(w(1, 2) == 0.0f);
    }
    SUBCASE("a row that is all -1e9 becomes uniform") {
        const auto w = softmax(xt::xarray<float>{-1e9f, -1e9f, -1e9f, -1e9f});
        for (std::size_t j = 0; j < 4; ++j) CHECK(w(j) == 0.25f);
    }
    SUBCASE("-1e9 next to ordinary scores underflows to exactly 0") {
        const auto w = softmax(xt::xarray<float>{0.5f, -1e9f, 0.5f});
        CHECK(w(0) == 0.5f);
        CHECK(w(1) == 0.0f);
        CHECK(w(2) == 0.5f);
    }
    SUBCASE("large values do not overflow: [1000, 1001] = [1/(1+e), e/(1+e)]") {
        check_near(softmax(xt::xarray<float>{1000.0f, 1001.0f}), xt::xarray<float>{0.2689414214f, 0.7310585786f});
        check_near(softmax(xt::xarray<float>{-1000.0f, -1001.0f}), xt::xarray<float>{0.7310585786f, 0.2689414214f});
    }
    SUBCASE("a single key gets weight 1") {
        xt::xarray<float> x = xt::xarray<float>::from_shape({2, 1});
        x(0, 0) = -3.0f;
        x(1, 0) = 42.0f;
        const auto w = softmax(x);
        CHECK(w(0, 0) == 1.0f);
        CHECK(w(1, 0) == 1.0f);
    }
}

TEST_CASE("safe_softmax_last_axis: a row of -inf only becomes 0, every other row is softmax's to the bit") {
    SUBCASE("the all -inf row: 0 instead of NaN") {
        xt::xarray<float> x{{-inf, -inf, -inf}, {0.0f, 0.0f, -inf}};
        safe_softmax_last_axis(x);
        CHECK(x == xt::xarray<float>{{0.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.0f}});
    }
    SUBCASE("a row of -1e9 is not -inf: still uniform, as torch._safe_softmax") {
        xt::xarray<float> x{-1e9f, -1e9f};
        safe_softmax_last_axis(x);
        CHECK(x == xt::xarray<float>{0.5f, 0.5f});
    }
    SUBCASE("random rows with -inf entries and some rows all -inf: the other rows bit for bit") {
        xt::xarray<float> x = xt::xarray<float>::from_shape({6, 11});
        attn::torch_generator(3).randn(x.data(), x.size());
        for (std::size_t j = 0; j < 11; ++j) x(2, j) = x(5, j) = -inf;
        x(0, 4) = x(3, 0) = x(3, 10) = -inf;
        xt::xarray<float> plain = x, safe = x;
        attn::softmax_last_axis(plain);
        safe_softmax_last_axis(safe);
        for (std::size_t r = 0; r < 6; ++r) {
            CAPTURE(r);
            for (std::size_t j = 0; j < 11; ++j) {
                if (r == 2 || r == 5) {
                    CHECK(std::isnan(plain(r, j)));
                    CHECK(safe(r, j) == 0.0f);
                } else {
                    CHECK(std::memcmp(&plain(r, j), &safe(r, j), sizeof(float)) == 0);
                }
            }
        }
    }
}

TEST_CASE("softmax_last_axis: every row of a random [2,3,4,5] sums to 1 and keeps its order") {
    xt::xarray<float> x = xt::xarray<float>::from_shape({2, 3, 4, 5});
    attn::torch_generator(0).randn(x.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] *= 4.0f;  // a wider spread than N(0,1)
    const xt::xarray<float> before = x;
    attn::softmax_last_axis(x);
    CHECK(x.shape()[3] == 5);
    for (std::size_t r = 0; r < 2 * 3 * 4; ++r) {
        CAPTURE(r);
        const float* row = x.data() + r * 5;
        const float* in = before.data() + r * 5;
        double sum = 0.0;
        for (std::size_t j = 0; j < 5; ++j) {
            CHECK(row[j] > 0.0f);
            sum += row[j];
        }
        CHECK(std::fabs(sum - 1.0) <= 1e-6);
        // softmax is monotonic: the larger score gets the larger weight
        for (std::size_t j = 1; j < 5; ++j) CHECK((in[j] > in[0]) == (row[j] > row[0]));
    }
}

TEST_CASE("matmul: c[m,n] = a[m,k] · b[k,n], or · b[n,k]ᵀ") {
    // [[1,2,3],[4,5,6]] · [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const float expected[4] = {58, 64, 139, 154};
    SUBCASE("b as [k,n]") {
        const float b[6] = {7, 8, 9, 10, 11, 12};
        float c[4] = {-1, -1, -1, -1};  // overwritten, not accumulated into
        attn::matmul(a, b, c, 2, 2, 3, false);
        for (std::size_t i = 0; i < 4; ++i) CHECK(c[i] == expected[i]);
    }
    SUBCASE("b as [n,k], transposed") {
        const float b_t[6] = {7, 9, 11, 8, 10, 12};
        float c[4] = {-1, -1, -1, -1};
        attn::matmul(a, b_t, c, 2, 2, 3, true);
        for (std::size_t i = 0; i < 4; ++i) CHECK(c[i] == expected[i]);
    }
    SUBCASE("a row times a column: [1,2,3] · [4,5,6]ᵀ = [32]") {
        const float b[3] = {4, 5, 6};
        float c[1] = {0};
        attn::matmul(a, b, c, 1, 1, 3, false);
        CHECK(c[0] == 32.0f);
    }
    SUBCASE("k == 0 gives zeros") {
        const float none[1] = {99};
        float c[6] = {7, 7, 7, 7, 7, 7};
        attn::matmul(none, none, c, 2, 3, 0, false);
        for (float v : c) CHECK(v == 0.0f);
        float d[6] = {7, 7, 7, 7, 7, 7};
        attn::matmul(none, none, d, 3, 2, 0, true);
        for (float v : d) CHECK(v == 0.0f);
    }
    SUBCASE("m == 0 writes nothing") {
        float c[1] = {7};
        attn::matmul(a, a, c, 0, 1, 3, true);
        CHECK(c[0] == 7.0f);
    }
}

TEST_CASE("linear: y = x·wᵀ + bias, as nn.Linear") {
    // x [2,3], w [2 out, 3 in]:
    //   row 0: [1,2,3]·[1,0,-1] = -2, [1,2,3]·[0.5,0.5,0.5] = 3
    //   row 1: [4,5,6]·[1,0,-1] = -2, [4,5,6]·[0.5,0.5,0.5] = 7.5
    const xt::xarray<float> x{{1, 2, 3}, {4, 5, 6}};
    const xt::xarray<float> w{{1, 0, -1}, {0.5f, 0.5f, 0.5f}};
    const xt::xarray<float> bias{10, 20};
    SUBCASE("with a bias") {
        check_near(attn::linear(x, w, &bias), xt::xarray<float>{{8, 23}, {8, 27.5f}});
    }
    SUBCASE("a null bias adds nothing") {
        check_near(attn::linear(x, w, nullptr), xt::xarray<float>{{-2, 3}, {-2, 7.5f}});
    }
    SUBCASE("leading axes are kept: [1,2,3] -> [1,2,2]") {
        xt::xarray<float> x3 = x;
        x3.reshape({1, 2, 3});
        check_near(attn::linear(x3, w, &bias), xt::xarray<float>{{{8, 23}, {8, 27.5f}}});
    }
    SUBCASE("out != in: w [3 out, 3 in] = identity rows reordered") {
        const xt::xarray<float> perm{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
        check_near(attn::linear(x, perm, nullptr), xt::xarray<float>{{3, 1, 2}, {6, 4, 5}});
    }
}

}  // TEST_SUITE("linalg")

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_threads();

TEST_CASE("blas_runs_on_one_thread: OpenBLAS gives the same bits on one thread and on four up to its bound") {
    // attn runs planes side by side, each product on one OpenBLAS thread, only below this
    // bound; above it, OpenBLAS's split among threads may change last bits (its edge
    // kernels). Awkward shapes at the bound must come out the same however many threads
    // OpenBLAS has: else the bound is wrong for this OpenBLAS.
    CHECK(attn::blas_runs_on_one_thread(256, 4, 256));
    CHECK(attn::blas_runs_on_one_thread(64, 64, 64));
    CHECK_FALSE(attn::blas_runs_on_one_thread(272, 4, 256));
    CHECK_FALSE(attn::blas_runs_on_one_thread(1024, 4, 1024));
    const int before = openblas_get_num_threads();
    // (no structured binding: clang rejects one in doctest's CAPTURE)
    for (const std::array<std::size_t, 3>& shape :
         {std::array<std::size_t, 3>{256, 4, 256}, {100, 26, 100}, {63, 65, 64}, {1024, 1, 256}}) {
        const std::size_t m = shape[0], n = shape[1], k = shape[2];
        CAPTURE(m);
        REQUIRE(attn::blas_runs_on_one_thread(m, n, k));
        std::vector<float> a(m * k), b(k * n), one(m * n), four(m * n);
        attn::torch_generator g(7);
        g.rand(a.data(), a.size());
        g.rand(b.data(), b.size());
        for (float& x : b) x -= 0.5f;  // sums that cancel: rounding shows
        openblas_set_num_threads(1);
        attn::matmul(a.data(), b.data(), one.data(), m, n, k, false);
        openblas_set_num_threads(4);
        attn::matmul(a.data(), b.data(), four.data(), m, n, k, false);
        CHECK(std::memcmp(one.data(), four.data(), one.size() * sizeof(float)) == 0);
    }
    openblas_set_num_threads(before);
}
