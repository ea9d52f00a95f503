// cpu_features_here (cpuid, asked when first needed) against GCC's (or clang's)
// __builtin_cpu_supports, which asks cpuid and the kernel's saved register states its own way.
#include <doctest/doctest.h>

#include "attn/compute/cpu_features.hpp"

TEST_SUITE("cpu_features") {
    TEST_CASE("cpu_features_here agrees with __builtin_cpu_supports on every feature attn's kernels use") {
        const attn::cpu_features& here = attn::cpu_features_here();
        CHECK(here.sse4_1 == static_cast<bool>(__builtin_cpu_supports("sse4.1")));
        CHECK(here.pclmul == static_cast<bool>(__builtin_cpu_supports("pclmul")));
        CHECK(here.fma == static_cast<bool>(__builtin_cpu_supports("fma")));
        CHECK(here.avx2 == static_cast<bool>(__builtin_cpu_supports("avx2")));
        CHECK(here.avx512f == static_cast<bool>(__builtin_cpu_supports("avx512f")));
        CHECK(here.avx512vl == static_cast<bool>(__builtin_cpu_supports("avx512vl")));
        CHECK(here.vpclmulqdq == static_cast<bool>(__builtin_cpu_supports("vpclmulqdq")));
        CHECK(&attn::cpu_features_here() == &here);  // asked once
    }
}
