#include "attn/compute/threads.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

extern "C" void openblas_set_num_threads(int num_threads);  // cblas.h names them too
extern "C" int openblas_get_num_threads();
extern "C" int openblas_get_num_procs();

namespace attn {
namespace {

int chosen = 0;  // 0: not set yet

/// -1: not known yet; else whether OPENBLAS_NUM_THREADS or OMP_NUM_THREADS was the user's.
int blas_count_chosen = -1;

int cores() {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? static_cast<int>(n) : 1;
}

/// Whether the address space may be too small for OpenBLAS's buffers: it maps 128 MiB for each
/// thread and, when it cannot, waits for the memory forever. Under 512 MiB (ulimit -v) products
/// stay on one thread.
bool address_space_too_small_for_blas_threads() {
    constexpr rlim_t enough = rlim_t(512) << 20;
    rlimit address_space{};
    return getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY &&
           address_space.rlim_cur < enough;
}

}  // namespace

int threads_in_environment() {
    const char* text = std::getenv("ATTN_THREADS");
    if (text == nullptr || *text == '\0') return 0;
    int n = 0;
    const char* end = text + std::strlen(text);
    const std::from_chars_result read = std::from_chars(text, end, n);
    return read.ec == std::errc() && read.ptr == end && n >= 1 && n <= max_threads ? n : -1;
}

void set_thread_count(int n) {
    chosen = n >= 1 ? n : 1;
    omp_set_num_threads(chosen);
}

void blas_threads_for_large_products() {
    if (omp_in_parallel()) return;  // inside attn's loops BLAS stays on one thread
    if (address_space_too_small_for_blas_threads()) return;
    openblas_set_num_threads(openblas_get_num_procs());
}

void set_blas_threads_chosen_by_user(bool chosen_by_user) { blas_count_chosen = chosen_by_user ? 1 : 0; }

bool blas_threads_chosen_by_user() {
    if (blas_count_chosen < 0)
        blas_count_chosen = std::getenv("OPENBLAS_NUM_THREADS") != nullptr || std::getenv("OMP_NUM_THREADS") != nullptr;
    return blas_count_chosen == 1;
}

std::size_t thread_stack_bytes() {
    // libgomp: $OMP_STACKSIZE (a number of KiB, or with a B, K, M or G suffix), else pthread's default,
    // which glibc takes from ulimit -s (2 MiB when unlimited)
    if (const char* text = std::getenv("OMP_STACKSIZE"); text != nullptr && *text != '\0') {
        char* end = nullptr;
        const unsigned long long n = std::strtoull(text, &end, 10);
        std::uint64_t unit = 1024;
        if (end != nullptr) {
            while (*end == ' ') ++end;
            switch (*end) {
                case 'B': case 'b': unit = 1; break;
                case 'M': case 'm': unit = std::uint64_t(1) << 20; break;
                case 'G': case 'g': unit = std::uint64_t(1) << 30; break;
                default: break;
            }
        }
        if (n > 0 && n < (std::uint64_t(1) << 40) / unit) return static_cast<std::size_t>(n * unit);
    }
    rlimit stack{};
    if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY && stack.rlim_cur >= (rlim_t(64) << 10))
        return static_cast<std::size_t>(stack.rlim_cur);
    return std::size_t(2) << 20;
}

std::uint64_t address_space_in_use() {
    // /proc/self/statm's first field: the pages of the address space (VmSize)
    std::uint64_t pages = 0;
    if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
        unsigned long long n = 0;
        if (std::fscanf(statm, "%llu", &n) == 1) pages = n;
        std::fclose(statm);
    }
    return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

int threads_that_fit() {
    rlimit address_space{};
    if (getrlimit(RLIMIT_AS, &address_space) != 0 || address_space.rlim_cur == RLIM_INFINITY) return max_threads;
    const auto limit = static_cast<std::uint64_t>(address_space.rlim_cur), used = address_space_in_use();
    const std::uint64_t free = limit > used ? limit - used : 0;
    const std::uint64_t fit = free / 2 / (thread_stack_bytes() + thread_arena_bytes);
    return static_cast<int>(std::clamp<std::uint64_t>(fit, 1, max_threads));
}

int thread_count() {
    if (chosen == 0) {
        const int from_environment = threads_in_environment();
        set_thread_count(from_environment > 0 ? from_environment : std::min(cores(), threads_that_fit()));
    }
    return chosen;
}

blas_on_one_thread::blas_on_one_thread() : before_(openblas_get_num_threads()) {
    if (before_ != 1) openblas_set_num_threads(1);
}

blas_on_one_thread::~blas_on_one_thread() {
    if (before_ != 1) openblas_set_num_threads(before_);
}

}  // namespace attn
