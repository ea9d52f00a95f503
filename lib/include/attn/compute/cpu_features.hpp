#pragma once
// What this CPU, and the kernel for its vector registers, can run: asked with cpuid once,
// when a kernel first needs to know.
//
// GCC's __builtin_cpu_supports links libgcc's __cpu_indicator_init, a constructor that asks
// cpuid about every feature at every start. In a virtual machine each cpuid exits to the
// hypervisor: that constructor alone took 0.16 ms of a 1.9 ms run (`attn trace`, README
// "Speed", e). This asks three leaves, and only on the runs that use a vector kernel.

namespace attn {

struct cpu_features {
    bool sse4_1 = false;
    bool pclmul = false;
    bool fma = false;  // with the AVX registers' state saved by the kernel, as for every AVX feature
    bool avx2 = false;
    bool avx512f = false;  // with the AVX-512 registers' state saved by the kernel
    bool avx512vl = false;
    bool vpclmulqdq = false;
};

/// This CPU's features (the first call asks cpuid; the rest read the answer).
const cpu_features& cpu_features_here();

}  // namespace attn
