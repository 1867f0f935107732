/* onyx's one thread pool: TBB's (core/parallel.cc). onyx's own loops (parallel_for) and oneDNN's
 * primitives (oneDNN 3 built with the TBB runtime) both run on it, so they never wake or
 * oversubscribe each other; OpenBLAS is called single-threaded from it.
 *
 * Why TBB and not OpenMP: with OpenMP (libgomp, and oneDNN's OpenMP runtime) a parallel region
 * splits its work into one fixed share per thread, so the caller waits at the region's end for a
 * worker that was asleep and is slow to run again; after a pause that cost ~10 ms a request
 * here (docs/DESIGN-NOTES.md, "Threads"). TBB splits work into tasks that any thread of the
 * arena takes: the caller runs what a late worker has not started, and no one waits for a
 * thread that is not running. */
#ifndef ONYX_CORE_PARALLEL_H
#define ONYX_CORE_PARALLEL_H

#include <stdint.h>

#include "core/status.h"

/* Calls fn(ctx, begin, end) over [0, n) in chunks of at least `grain` items (but the last when n
 * is smaller), on the threads of the caller's arena (parallel_within), concurrently and in no
 * particular order. Runs inline when n < 2 * grain or the arena has one thread. */
void parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t begin, int64_t end),
                  void *ctx);

/* The thread count of the caller's arena: what parallel_for and oneDNN run on. */
int parallel_threads(void);

/* Say that parallel work is about to start on the caller's arena outside parallel_for (a oneDNN
 * primitive or product), and that it has ended: workers spinning or dozing (parallel_policy) stop
 * and take it, and spin again after it, between a run's steps as after the run. parallel_for
 * says both itself. */
void parallel_work_coming(void);
void parallel_work_done(void);

/* How a rep's workers wait after each parallel step of a run and after a run that had any, before
 * they sleep until TBB wakes them (a run with no parallel step leaves them asleep): they spin for spin_us microseconds, then doze for doze_us (sleep in
 * naps of PARALLEL_NAP_US, looking for work after each); 0 leaves a phase out. A step or request
 * within the spin starts on running threads; one within a doze waits at most a nap for them.
 * Parallel work handed out anywhere (parallel_for, parallel_work_coming) ends both at once. The
 * doze is off by default: with the workers kept off the caller's CPU (core/parallel.cc), TBB's
 * own wake-up reaches a free CPU sooner than a nap ends, and naps cost CPU while idle
 * (docs/DESIGN-NOTES.md, "Threads"). */
typedef struct {
    int64_t spin_us, doze_us;
} parallel_policy;

/* Defaults for a server (docs/BENCHMARKS.md, "Traffic after pauses", has the measurements). */
#define PARALLEL_DEFAULT_SPIN_US 20000
#define PARALLEL_DEFAULT_DOZE_US 0
#define PARALLEL_NAP_US 500

/* Runs fn(ctx) inside an arena of `threads` threads (<= 0: in the caller's current arena; 1: the
 * caller alone), so that every parallel_for and oneDNN primitive it starts uses that many;
 * a rep prepares and runs inside its own. Arenas are per calling thread, all drawing on one set
 * of workers (cores - 1), so concurrent callers do not queue behind each other. policy (NULL:
 * no spinning) says how the arena's workers wait afterwards. Returns fn's status, with its
 * message on the calling thread. */
onyx_status parallel_within(int threads, const parallel_policy *policy, onyx_status (*fn)(void *ctx),
                            void *ctx);

/* Runs fn(ctx) on the calling thread with a parallelism of one: oneDNN's primitives and
 * parallel_for inside it run on this thread alone (a task of a parallel loop whose every thread
 * has its own product). It is part of the caller's run: how that run's threads wait and are
 * placed does not change. Returns fn's status; when the one-thread arena cannot be made, fn has
 * not run and the status says so. */
onyx_status parallel_alone(onyx_status (*fn)(void *ctx), void *ctx);

/* How many times, in this process, a worker that ran out of work in a step found the caller of
 * the run alone in flight waiting for a CPU (taken off its own by another task) and moved it onto
 * the worker's, before sleeping there (core/parallel.cc, rescue_caller). */
int64_t parallel_callers_moved(void);

/* Cores available: the CPUs this process may run on (its affinity mask). */
int parallel_cores(void);
/* The thread count a rep runs with when `requested` (0: all) are asked for: at most
 * parallel_cores(). More threads than CPUs only time-slice the same cores. */
int parallel_usable_threads(int requested);

#endif
