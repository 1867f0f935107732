/* parallel_for over OpenMP: one pool shared with oneDNN and OpenBLAS. */
#include "core/parallel.h"

#include <omp.h>

static _Thread_local int current_threads;

int parallel_cores(void) { return omp_get_num_procs(); }

int parallel_usable_threads(int requested) {
    int cores = parallel_cores();
    return requested > 0 && requested < cores ? requested : cores;
}

void parallel_set_threads(int threads) { current_threads = threads; }

int parallel_threads(void) {
    return current_threads > 0 ? current_threads : parallel_cores();
}

parallel_scope parallel_enter(int threads) {
    parallel_scope saved = {current_threads, omp_get_max_threads()};
    if (threads > 0) {
        current_threads = threads;
        if (saved.omp != threads) omp_set_num_threads(threads);
    }
    return saved;
}

void parallel_leave(parallel_scope saved) {
    current_threads = saved.threads;
    if (omp_get_max_threads() != saved.omp) omp_set_num_threads(saved.omp);
}

void parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t begin, int64_t end),
                  void *ctx) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int threads = parallel_threads();
    int64_t chunks = (n + grain - 1) / grain;
    if (chunks < threads) threads = (int)chunks;
    if (threads <= 1 || omp_in_parallel()) {
        fn(ctx, 0, n);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t begin = n * t / nt, end = n * (t + 1) / nt;
        if (begin < end) fn(ctx, begin, end);
    }
}
