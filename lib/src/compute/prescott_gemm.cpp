// OpenBLAS's Prescott SGEMM, to the bit, in AVX-512 lanes (prescott_gemm.hpp).
// Built with -ffp-contract=off: every product is rounded before it is added, as SSE3's
// mulps then addps round it.
#include "attn/compute/prescott_gemm.hpp"

#include "attn/compute/cpu_features.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <cblas.h>
#include <immintrin.h>
#include <omp.h>

extern "C" char* openblas_get_corename(void);

namespace attn {
namespace {

constexpr std::size_t gemm_q = 128;  // OpenBLAS's SGEMM_DEFAULT_Q for Prescott: the k-block
constexpr std::size_t lanes = 16;
constexpr std::size_t tile_rows = 8;  // a tile: 8 rows of C by 32 columns (2 vectors), 16 registers
constexpr std::size_t panel_columns = 256;  // a k-block of b by these: 128 KiB, in L2 while every row passes

/// acc[r][v] = Σ over the block's k, in order, of a[r, k] · b[k, 16v..16v+15], from 0;
/// then c += acc (OpenBLAS's C = C + alpha·acc, alpha 1).
template <int rows, int vectors>
[[gnu::target("avx512f")]] void tile(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                                     std::size_t ldc, std::size_t kb) {
    __m512 acc[rows][vectors];
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < vectors; ++v) acc[r][v] = _mm512_setzero_ps();
    for (std::size_t p = 0; p < kb; ++p) {
        __m512 bv[vectors];
        for (int v = 0; v < vectors; ++v) bv[v] = _mm512_loadu_ps(b + p * ldb + lanes * static_cast<std::size_t>(v));
        for (int r = 0; r < rows; ++r) {
            const __m512 ar = _mm512_set1_ps(a[static_cast<std::size_t>(r) * lda + p]);
            for (int v = 0; v < vectors; ++v) acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_mul_ps(ar, bv[v]));
        }
    }
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < vectors; ++v) {
            float* to = c + static_cast<std::size_t>(r) * ldc + lanes * static_cast<std::size_t>(v);
            _mm512_storeu_ps(to, _mm512_add_ps(_mm512_loadu_ps(to), acc[r][v]));
        }
}

/// `rows` rows of c (at most tile_rows), `width` columns (a multiple of 16) of `n`, one k-block.
template <int rows>
[[gnu::target("avx512f")]] void row_tile(const float* a, std::size_t lda, const float* b, std::size_t n, float* c,
                                         std::size_t width, std::size_t kb) {
    std::size_t j = 0;
    for (; j + 2 * lanes <= width; j += 2 * lanes) tile<rows, 2>(a, lda, b + j, n, c + j, n, kb);
    if (j < width) tile<rows, 1>(a, lda, b + j, n, c + j, n, kb);
}

using row_tile_fn = void (*)(const float*, std::size_t, const float*, std::size_t, float*, std::size_t, std::size_t);
constexpr row_tile_fn row_tiles[tile_rows + 1] = {nullptr,      row_tile<1>, row_tile<2>, row_tile<3>, row_tile<4>,
                                                  row_tile<5>,  row_tile<6>, row_tile<7>, row_tile<8>};

/// b as [k][n] row-major: itself, or b[n][k] transposed into `packed`.
const float* b_by_rows(const float* b, std::size_t n, std::size_t k, bool b_transposed, std::vector<float>& packed) {
    if (!b_transposed) return b;
    packed.resize(n * k);
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t p = 0; p < k; ++p) packed[p * n + j] = b[j * k + p];
    return packed.data();
}

/// The probe: a few small products, by OpenBLAS (one thread: they are small) and by the
/// formula with 128-value blocks, compared bit for bit. 3 whole blocks (a GEMM_Q of 192,
/// 256 or 384 would block them otherwise), and one short block.
bool formula_matches_openblas() {
    struct shape {
        std::size_t m, n, k;
    };
    std::uint32_t x = 2463534242u;  // xorshift32: values of both signs and many exponents
    const auto next = [&] {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        return static_cast<float>(static_cast<std::int32_t>(x)) * 0x1p-28f;
    };
    for (const shape s : {shape{8, 32, 384}, shape{4, 48, 100}}) {
        std::vector<float> a(s.m * s.k), b(s.k * s.n), blas(s.m * s.n, 0.0f), formula(s.m * s.n, 0.0f);
        for (float& v : a) v = next();
        for (float& v : b) v = next();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m), static_cast<int>(s.n),
                    static_cast<int>(s.k), 1.0f, a.data(), static_cast<int>(s.k), b.data(), static_cast<int>(s.n),
                    0.0f, blas.data(), static_cast<int>(s.n));
        detail::prescott_gemm_reference(a.data(), b.data(), formula.data(), s.m, s.n, s.k, false, gemm_q);
        if (std::memcmp(blas.data(), formula.data(), blas.size() * sizeof(float)) != 0) return false;
    }
    return true;
}

}  // namespace

namespace detail {

void prescott_gemm_reference(const float* a, const float* b, float* c, std::size_t m, std::size_t n,
                             std::size_t k, bool b_transposed, std::size_t q) {
    // OpenBLAS's one-thread driver (driver/level3/level3.c): blocks of q, the last two
    // halved between q and 2q, to a multiple of its 8-row unroll
    std::vector<std::size_t> blocks;
    for (std::size_t at = 0; at < k;) {
        std::size_t size = k - at;
        if (size >= 2 * q) size = q;
        else if (size > q) size = (size / 2 + 7) / 8 * 8;
        blocks.push_back(size);
        at += size;
    }
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            float sum = c[i * n + j];
            std::size_t at = 0;
            for (const std::size_t size : blocks) {
                float block = 0.0f;
                for (std::size_t p = at; p < at + size; ++p)
                    block += a[i * k + p] * (b_transposed ? b[j * k + p] : b[p * n + j]);
                sum += block;
                at += size;
            }
            c[i * n + j] = sum;
        }
}

bool prescott_gemm_usable() {
    static const bool usable = [] {
        if (!cpu_features_here().avx512f) return false;
        const char* core = openblas_get_corename();
        if (core == nullptr || std::string(core) != "Prescott") return false;
        return formula_matches_openblas();
    }();
    return usable;
}

}  // namespace detail

[[gnu::target("avx512f")]] bool has_nan(const float* values, std::size_t n) {
    constexpr std::size_t chunk = 4096;  // looked at whole (vectorised), then stop at the first NaN
    for (std::size_t at = 0; at < n; at += chunk) {
        const std::size_t end = std::min(n, at + chunk);
        bool nan = false;
        for (std::size_t i = at; i < end; ++i) nan |= values[i] != values[i];
        if (nan) return true;
    }
    return false;
}

bool prescott_gemm_applies(std::size_t m, std::size_t n, std::size_t k, int blas_threads) {
    if (m == 0 || n == 0 || k == 0) return false;
    if (k > gemm_q && k % gemm_q != 0) return false;  // every block whole
    // OpenBLAS's threads split rows and columns: no piece may end in an edge kernel. Found
    // to hold, against cblas_sgemm, for 1, 2 and 4 threads (not 3) with these multiples.
    if (blas_threads != 1 && blas_threads != 2 && blas_threads != 4) return false;
    const std::size_t split = static_cast<std::size_t>(blas_threads);
    if (m % (4 * split) != 0 || n % (lanes * split) != 0) return false;
    return detail::prescott_gemm_usable();
}

[[gnu::target("avx512f")]] void prescott_gemm(const float* a, const float* b, float* c, std::size_t m,
                                              std::size_t n, std::size_t k, bool b_transposed, bool accumulate) {
    thread_local std::vector<float> packed;
    const float* b_rows = b_by_rows(b, n, k, b_transposed, packed);
    if (!accumulate) std::fill(c, c + m * n, 0.0f);  // OpenBLAS's beta 0: C zeroed, then each block added
    const std::ptrdiff_t row_groups = static_cast<std::ptrdiff_t>((m + tile_rows - 1) / tile_rows);
    const bool parallel = !omp_in_parallel() && m * n * k >= (std::size_t{1} << 20);
    // each thread keeps the same rows throughout (static schedule, the same count of
    // groups every time): no thread reads what another writes, so no barrier is needed
#pragma omp parallel if (parallel)
    for (std::size_t at = 0; at < k; at += gemm_q) {
        const std::size_t kb = std::min(gemm_q, k - at);
        for (std::size_t j = 0; j < n; j += panel_columns) {
            const std::size_t width = std::min(panel_columns, n - j);
            const float* panel = b_rows + at * n + j;
#pragma omp for schedule(static) nowait
            for (std::ptrdiff_t g = 0; g < row_groups; ++g) {
                const std::size_t first = static_cast<std::size_t>(g) * tile_rows;
                const std::size_t rows = std::min(tile_rows, m - first);
                row_tiles[rows](a + first * k + at, k, panel, n, c + first * n + j, width, kb);
            }
        }
    }
}

}  // namespace attn
