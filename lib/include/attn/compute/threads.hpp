#pragma once
// How many threads attn's own loops use (--threads N, $ATTN_THREADS), and keeping
// OpenBLAS's threads out of their way.
//
// attn parallelises over (batch, head) planes or over rows with OpenMP. Each row or
// plane is computed by one thread exactly as it would be alone, so the bits do not
// depend on the number of threads. Inside a parallel region every BLAS call must run
// on its calling thread only: blas_on_one_thread switches OpenBLAS to one thread for
// its lifetime, so that the two thread pools do not fight over the cores; only products
// that OpenBLAS runs on one thread anyway go there (blas_runs_on_one_thread, linalg.hpp).
#include <cstddef>

namespace attn {

/// The threads attn's loops use from now on (n >= 1). OpenBLAS keeps its own count
/// (blas_threads_for_large_products): its products' last bits depend on it.
void set_thread_count(int n);

/// Gives OpenBLAS the threads it starts with by itself, in PyTorch's process too: one
/// per core (openblas_get_num_procs), unless called inside attn's parallel loops. It
/// starts on one, for a quick start-up (linalg.cpp).
void blas_threads_for_large_products();

/// The current count: set_thread_count's, else $ATTN_THREADS, else every core.
int thread_count();

/// Every core the machine has (what the default uses).
int cores();

/// OpenBLAS on one thread while this lives (inside attn's parallel loops), then back
/// to what it had.
class blas_on_one_thread {
    int before_;

public:
    blas_on_one_thread();
    ~blas_on_one_thread();
    blas_on_one_thread(const blas_on_one_thread&) = delete;
    blas_on_one_thread& operator=(const blas_on_one_thread&) = delete;
};

}  // namespace attn
