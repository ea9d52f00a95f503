// The attn program's start-up environment, set before the runtimes linked into it read theirs.
//
// OpenBLAS and libgomp are linked statically into attn (CMakeLists.txt) and read the environment
// in constructors of their own; a constructor of priority 101 runs before them. The library
// itself changes no environment: only this program, for its own start-up.
#include <cstdlib>

#include "attn/compute/threads.hpp"

namespace {

/// OpenBLAS starts no thread unless the user chose a count (one per core took 8.6 ms instead of
/// 2.7 ms at start-up, docs/kernels.md); the first product it splits gets them back, as in
/// PyTorch's process (linalg.cpp). OPENBLAS_THREAD_TIMEOUT=4 puts its idle threads to sleep at
/// once instead of spinning for 0.1 s on the cores attn's loops need. OpenMP's idle threads
/// sleep at once too (OMP_WAIT_POLICY=passive) unless the user chose.
[[gnu::constructor(101)]] void start_runtimes_quietly() {
    const bool user_chose_blas = std::getenv("OPENBLAS_NUM_THREADS") != nullptr || std::getenv("OMP_NUM_THREADS") != nullptr;
    attn::set_blas_threads_chosen_by_user(user_chose_blas);
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
    if (!user_chose_blas) setenv("OPENBLAS_NUM_THREADS", "1", 0);
    if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr)
        setenv("OMP_WAIT_POLICY", "passive", 0);
}

}  // namespace
