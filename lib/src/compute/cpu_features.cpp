#include "attn/compute/cpu_features.hpp"

#include <cpuid.h>

namespace attn {
namespace {

bool bit(unsigned value, int n) { return ((value >> n) & 1u) != 0; }

/// XCR0: the register states the kernel saves (xgetbv; the OS enables it with OSXSAVE).
unsigned long long saved_states() {
    unsigned eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (static_cast<unsigned long long>(edx) << 32) | eax;
}

cpu_features ask_cpuid() {
    cpu_features f;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const unsigned max_leaf = __get_cpuid_max(0, nullptr);
    if (max_leaf < 1 || !__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
    f.sse4_1 = bit(ecx, 19);
    f.pclmul = bit(ecx, 1);
    const unsigned long long states = bit(ecx, 27) ? saved_states() : 0;  // OSXSAVE
    const bool avx_state = (states & 0x6) == 0x6;                          // XMM and YMM
    const bool avx512_state = avx_state && (states & 0xe0) == 0xe0;        // opmask, ZMM_Hi256, Hi16_ZMM
    const bool avx = avx_state && bit(ecx, 28);
    f.fma = avx && bit(ecx, 12);
    if (max_leaf < 7) return f;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    f.avx2 = avx && bit(ebx, 5);
    f.avx512f = avx512_state && bit(ebx, 16);
    f.avx512vl = f.avx512f && bit(ebx, 31);
    f.vpclmulqdq = avx && bit(ecx, 10);
    return f;
}

}  // namespace

const cpu_features& cpu_features_here() {
    static const cpu_features here = ask_cpuid();
    return here;
}

}  // namespace attn
