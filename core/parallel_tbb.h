/* The C interface of core/parallel.cc, the TBB shim behind core/parallel.h (TBB has no C API).
 * Only core/parallel.c calls it. */
#ifndef ONYX_CORE_PARALLEL_TBB_H
#define ONYX_CORE_PARALLEL_TBB_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How many times a worker moved a caller waiting for a CPU onto its own (parallel.h). */
int64_t tbb_shim_callers_moved(void);
/* Threads of the caller's arena. */
int tbb_shim_concurrency(void);
/* Parallel work is about to be handed out: ends every spin and doze (tbb_shim_execute). */
void tbb_shim_work_coming(void);
/* Parallel work handed out by this thread has ended: its arena's workers spin and doze again. */
void tbb_shim_work_done(void);
/* fn(ctx, begin, end) over [0, n) in chunks of at least `grain`, on the caller's arena. */
void tbb_shim_parallel_for(int64_t n, int64_t grain,
                           void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx);
/* fn(ctx) in the calling thread's arena of `threads` threads; then its workers spin for spin_us
 * and doze for doze_us in naps of nap_us (or until parallel work is handed out anywhere). False when the arena
 * could not be made (fn did not run). */
bool tbb_shim_execute(int threads, int64_t spin_us, int64_t doze_us, int64_t nap_us,
                      void (*fn)(void *ctx), void *ctx);
/* fn(ctx) on the calling thread in a one-thread arena of its own, within the run it is part of
 * (no run counted, no policy changed). False when the arena could not be made (fn did not run). */
bool tbb_shim_alone(void (*fn)(void *ctx), void *ctx);

#ifdef __cplusplus
}
#endif

#endif
