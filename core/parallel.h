/* Parallel loops over the OpenMP pool that oneDNN and OpenBLAS (openmp variant) also use, so the
 * three never oversubscribe the cores. */
#ifndef ONYX_CORE_PARALLEL_H
#define ONYX_CORE_PARALLEL_H

#include <stdint.h>

/* Calls fn(ctx, begin, end) over [0, n) split in chunks of at least `grain` items, on up to the
 * current thread count. Runs inline when n <= grain or one thread is set. */
void parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t begin, int64_t end),
                  void *ctx);

/* Thread count for parallel_for on this thread (the rep's setting while it runs). */
void parallel_set_threads(int threads);
int parallel_threads(void);

/* Makes `threads` (when > 0) this thread's count both for parallel_for and for the OpenMP regions
 * that oneDNN and OpenBLAS open, while a rep prepares or runs: some oneDNN primitives fix their
 * thread count when created, so creating them under another count would make a 1-thread rep
 * wait on a second thread. parallel_leave restores what parallel_enter found. */
typedef struct {
    int threads, omp;
} parallel_scope;
parallel_scope parallel_enter(int threads);
void parallel_leave(parallel_scope saved);
/* Cores available: the CPUs this process may run on (its affinity mask, as OpenMP counts them). */
int parallel_cores(void);
/* The thread count a rep runs with when `requested` (0: all) are asked for: at most
 * parallel_cores(). More OpenMP threads than CPUs only time-slice the same cores while the
 * team's barriers wait on threads that are not running, and tens of thousands of them exhaust
 * the process (libgomp crashed creating them under oneDNN's weight packing). */
int parallel_usable_threads(int requested);

#endif
