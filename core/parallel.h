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
/* Cores available. */
int parallel_cores(void);

#endif
