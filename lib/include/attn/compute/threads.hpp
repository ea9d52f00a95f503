#pragma once
// How many threads attn's OpenMP loops use (--threads N, $ATTN_THREADS), and keeping
// OpenBLAS's threads out of their way. Each row or (batch, head) plane is computed by one
// thread as it would be alone, so the bits do not depend on the count. Inside a parallel
// loop only products OpenBLAS runs on one thread anyway are made (blas_runs_on_one_thread).
#include <cstddef>
#include <cstdint>

namespace attn {

/// The threads attn's loops use from now on (n >= 1). OpenBLAS keeps its own count: its
/// products' last bits depend on it.
void set_thread_count(int n);

/// Gives OpenBLAS the thread per core it starts with in PyTorch's process (it starts on one
/// in the attn program, for a quick start-up: app/startup.cpp), unless called inside attn's parallel loops or
/// under an address-space limit (ulimit -v) below 512 MiB, too small for their buffers.
void blas_threads_for_large_products();

/// Whether the user set OpenBLAS's thread count (OPENBLAS_NUM_THREADS or OMP_NUM_THREADS): then
/// large products keep it, instead of getting a thread per core as in PyTorch's process. Read
/// from the environment when first asked, unless a program that changed those variables for
/// its own start-up (app/startup.cpp) said first. The library never changes the environment.
bool blas_threads_chosen_by_user();
void set_blas_threads_chosen_by_user(bool chosen_by_user);

/// The most threads --threads and $ATTN_THREADS take.
constexpr int max_threads = 4096;

/// Elementwise loops go to the threads from this many elements on; below, starting the
/// threads costs more than the work.
constexpr std::size_t parallel_elements = std::size_t{1} << 15;

/// The address space a thread may take beside its stack: glibc reserves 64 MiB for the malloc
/// arena a thread makes when it first allocates (HEAP_MAX_SIZE, counted by ulimit -v).
constexpr std::size_t thread_arena_bytes = std::size_t(64) << 20;

/// The address space this process holds now (VmSize, /proc/self/statm), in bytes; 0 if unknown.
std::uint64_t address_space_in_use();

/// The most threads the address space holds: max_threads without an address-space limit
/// (ulimit -v), else half of what the limit leaves free now (the limit less
/// address_space_in_use) over a thread's stack (ulimit -s, 2 MiB when unlimited;
/// $OMP_STACKSIZE when set) and its malloc arena, at least 1. libgomp, when it cannot start a
/// thread, ends the process at once (exit 1, no destructors): a count above this is refused
/// before anything is computed or written. (Half the limit over the stack alone let 35 threads
/// die under ulimit -v 600000, where 34 ran.)
int threads_that_fit();

/// A thread's stack as libgomp makes it, in bytes (see threads_that_fit).
std::size_t thread_stack_bytes();

/// $ATTN_THREADS: 0 when it is unset or empty, its count when it is a whole number from 1
/// to max_threads, -1 for anything else (the app refuses that before a command runs).
int threads_in_environment();

/// The current count: set_thread_count's, else $ATTN_THREADS, else every core.
int thread_count();

/// OpenBLAS on one thread while this lives (inside attn's parallel loops).
class blas_on_one_thread {
    int before_;

public:
    blas_on_one_thread();
    ~blas_on_one_thread();
    blas_on_one_thread(const blas_on_one_thread&) = delete;
    blas_on_one_thread& operator=(const blas_on_one_thread&) = delete;
};

}  // namespace attn
