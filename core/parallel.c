/* The C side of core/parallel.h: thread counts, and carrying a status message out of an arena
 * (TBB may run the arena's function on another thread: core/parallel.cc). */
#include "core/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "core/parallel_tbb.h"

int parallel_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int parallel_usable_threads(int requested) {
    int cores = parallel_cores();
    return requested > 0 && requested < cores ? requested : cores;
}

int parallel_threads(void) { return tbb_shim_concurrency(); }

int64_t parallel_callers_moved(void) { return tbb_shim_callers_moved(); }

void parallel_work_coming(void) { tbb_shim_work_coming(); }

void parallel_work_done(void) { tbb_shim_work_done(); }

void parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t begin, int64_t end),
                  void *ctx) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (n < 2 * grain || tbb_shim_concurrency() <= 1) {
        fn(ctx, 0, n);
        return;
    }
    tbb_shim_parallel_for(n, grain, fn, ctx);
}

typedef struct {
    onyx_status (*fn)(void *ctx);
    void *ctx;
    onyx_status status;
    pthread_t caller;
    char message[1024];
} within_call;

/* Runs on whichever thread TBB chose; a failure's message is copied when that was not the caller. */
static void within_trampoline(void *arg) {
    within_call *w = arg;
    w->status = w->fn(w->ctx);
    if (w->status != ONYX_OK && !pthread_equal(pthread_self(), w->caller)) {
        strncpy(w->message, onyx_last_error(), sizeof w->message - 1);
        w->message[sizeof w->message - 1] = '\0';
    }
}

onyx_status parallel_within(int threads, const parallel_policy *policy,
                            onyx_status (*fn)(void *ctx), void *ctx) {
    if (threads <= 0) return fn(ctx);
    within_call w = {.fn = fn, .ctx = ctx, .status = ONYX_OK, .caller = pthread_self()};
    parallel_policy none = {0, 0};
    if (!policy) policy = &none;
    if (!tbb_shim_execute(threads, policy->spin_us, policy->doze_us, PARALLEL_NAP_US,
                          within_trampoline, &w))
        return onyx_oom("thread arena");
    if (w.message[0]) return onyx_error(w.status, "%s", w.message);
    return w.status;
}

onyx_status parallel_alone(onyx_status (*fn)(void *ctx), void *ctx) {
    within_call w = {.fn = fn, .ctx = ctx, .status = ONYX_OK, .caller = pthread_self()};
    if (!tbb_shim_alone(within_trampoline, &w)) return onyx_oom("one-thread arena");
    if (w.message[0]) return onyx_error(w.status, "%s", w.message);
    return w.status;
}
