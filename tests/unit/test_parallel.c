/* Unit tests for core/parallel.c and parallel.cc: parallel_for covers its range once in chunks of
 * at least the grain, arenas set the thread count that loops see, errors come back with their
 * message, the workers' spin after a run is bounded, off when asked, ended by parallel work
 * and left out after a run that had none,
 * a run alone in the process keeps the workers off its caller's CPU, and its caller, taken off its
 * CPU in a step, is moved onto the worker's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/parallel.h"

typedef struct {
    int64_t grain, n;
    atomic_int *hits;
    atomic_int short_chunks, chunks;
} cover_job;

static void cover(void *ctx, int64_t begin, int64_t end) {
    cover_job *j = ctx;
    if (end - begin < j->grain && end != j->n) atomic_fetch_add(&j->short_chunks, 1);
    atomic_fetch_add(&j->chunks, 1);
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&j->hits[i], 1);
}

typedef struct {
    int64_t n, grain;
    int chunks; /* out */
} cover_args;

static onyx_status cover_in_arena(void *arg) {
    cover_args *a = arg;
    cover_job j = {.grain = a->grain, .n = a->n, .hits = calloc((size_t)a->n + 1, sizeof(atomic_int))};
    assert_non_null(j.hits);
    parallel_for(a->n, a->grain, cover, &j);
    for (int64_t i = 0; i < a->n; i++) assert_int_equal(atomic_load(&j.hits[i]), 1);
    assert_int_equal(atomic_load(&j.short_chunks), 0);
    a->chunks = atomic_load(&j.chunks);
    free(j.hits);
    return ONYX_OK;
}

static void test_for_covers_once(void **state) {
    (void)state;
    const int64_t sizes[] = {1, 2, 7, 64, 1000, 100003};
    const int64_t grains[] = {1, 3, 64, 5000};
    for (int threads = 1; threads <= 4; threads++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (size_t g = 0; g < sizeof grains / sizeof *grains; g++) {
                cover_args a = {sizes[s], grains[g], 0};
                assert_int_equal(parallel_within(threads, NULL, cover_in_arena, &a), ONYX_OK);
                if (sizes[s] < 2 * grains[g] || threads == 1) assert_int_equal(a.chunks, 1);
            }
}

static onyx_status report_threads(void *arg) {
    *(int *)arg = parallel_threads();
    return ONYX_OK;
}

static onyx_status nested_threads(void *arg) {
    /* threads <= 0 stays in the caller's arena */
    return parallel_within(0, NULL, report_threads, arg);
}

static void test_arena_sets_threads(void **state) {
    (void)state;
    for (int threads = 1; threads <= 3; threads++) {
        int seen = 0, nested = 0;
        assert_int_equal(parallel_within(threads, NULL, report_threads, &seen), ONYX_OK);
        assert_int_equal(seen, threads);
        assert_int_equal(parallel_within(threads, NULL, nested_threads, &nested), ONYX_OK);
        assert_int_equal(nested, threads);
    }
}

static onyx_status fail_alone(void *arg) {
    (void)arg;
    return onyx_error(ONYX_ERR_SHAPE, "failed alone");
}

/* parallel_alone inside a run of three threads: one thread within it, its status out, the run's
 * own count as before after it. */
static onyx_status alone_inside(void *arg) {
    int *seen = arg;
    TRY(parallel_alone(report_threads, &seen[0]));
    seen[1] = parallel_threads();
    assert_int_equal(parallel_alone(fail_alone, NULL), ONYX_ERR_SHAPE);
    return ONYX_OK;
}

static void test_alone_runs_one_thread(void **state) {
    (void)state;
    int seen[2] = {0, 0};
    assert_int_equal(parallel_within(3, NULL, alone_inside, seen), ONYX_OK);
    assert_int_equal(seen[0], 1);
    assert_int_equal(seen[1], 3);
}

static onyx_status fail_in_arena(void *arg) {
    return onyx_error(ONYX_ERR_SHAPE, "failed in the arena (%s)", (const char *)arg);
}

static void test_error_reaches_caller(void **state) {
    (void)state;
    assert_int_equal(parallel_within(2, NULL, fail_in_arena, "x"), ONYX_ERR_SHAPE);
    assert_string_equal(onyx_last_error(), "failed in the arena (x)");
}

/* Concurrent callers of one-thread arenas do not queue behind each other: each runs its own. */
static onyx_status hold(void *arg) {
    atomic_int *inside = arg;
    atomic_fetch_add(inside, 1);
    /* wait (bounded) until every caller is inside at once */
    for (int i = 0; i < 2000 && atomic_load(inside) < 4; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return atomic_load(inside) >= 4 ? ONYX_OK : ONYX_ERR_RUNTIME;
}

static void *caller(void *arg) {
    return (void *)(intptr_t)parallel_within(1, NULL, hold, arg);
}

static void test_callers_run_concurrently(void **state) {
    (void)state;
    atomic_int inside = 0;
    pthread_t t[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, caller, &inside), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_int_equal((int)(intptr_t)r, ONYX_OK);
    }
}

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static onyx_status nothing(void *arg) {
    (void)arg;
    return ONYX_OK;
}

/* Process CPU seconds spent over a 400 ms sleep right after a run with the given spin. */
static double idle_cpu_after(int64_t spin_us) {
    parallel_policy policy = {spin_us, 0};
    /* a run that wakes the worker, so that its spin is what follows */
    cover_args a = {1 << 16, 1, 0};
    assert_int_equal(parallel_within(2, &policy, cover_in_arena, &a), ONYX_OK);
    double t0 = cpu_seconds();
    struct timespec pause = {0, 400000000};
    nanosleep(&pause, NULL);
    return cpu_seconds() - t0;
}

/* Spinning burns a core for about spin_us, no spin burns nothing, and parallel work anywhere
 * ends a spin. Bounds are loose (CPU time under a loaded CI machine; the spinning worker shares
 * the one CPU it is kept on with whatever else runs there): a spin longer than the 400 ms
 * measured must show at least 37.5 ms of it, the others under a fifth of that. */
static void test_spin_is_bounded(void **state) {
    (void)state;
    if (parallel_cores() < 2) skip(); /* one core: the worker spins only when the caller sleeps */
    double spun = idle_cpu_after(600000);
    double still = idle_cpu_after(0);
    assert_true(spun > 0.0375);
    assert_true(still < 0.0075 + 0.0375 / 5);
    /* a long spin, then parallel work elsewhere (another arena) without spin */
    parallel_policy forever = {10000000, 0};
    cover_args a = {1 << 16, 1, 0};
    assert_int_equal(parallel_within(2, &forever, cover_in_arena, &a), ONYX_OK);
    assert_int_equal(parallel_within(3, NULL, cover_in_arena, &a), ONYX_OK);
    double t0 = cpu_seconds();
    struct timespec pause = {0, 200000000};
    nanosleep(&pause, NULL);
    assert_true(cpu_seconds() - t0 < 0.0375);
    assert_int_equal(parallel_within(2, NULL, nothing, NULL), ONYX_OK);
}

/* A run that hands out no parallel work (a graph of serial steps) leaves the workers asleep,
 * whatever its spin: they had nothing to stay warm for. Same loose bound as the no-spin case. */
static void test_serial_run_does_not_spin(void **state) {
    (void)state;
    if (parallel_cores() < 2) skip();
    parallel_policy long_spin = {600000, 0};
    assert_int_equal(parallel_within(2, &long_spin, nothing, NULL), ONYX_OK);
    double t0 = cpu_seconds();
    struct timespec pause = {0, 400000000};
    nanosleep(&pause, NULL);
    assert_true(cpu_seconds() - t0 < 0.0075 + 0.0375 / 5);
}

/* A thread that runs with spinning workers and ends at once: its arena goes with it while the
 * spinners it left are still queued or dozing, and they must not touch what went (AddressSanitizer
 * catches the use after free this once was; the threads' count of parallel steps says whether
 * the spinners ran). */
static void *run_and_leave(void *arg) {
    (void)arg;
    parallel_policy policy = {2000, 20000};
    cover_args a = {1 << 14, 1, 0};
    for (int i = 0; i < 3; i++) assert_int_equal(parallel_within(2, &policy, cover_in_arena, &a), ONYX_OK);
    return NULL;
}

static void test_spinners_outlive_their_thread(void **state) {
    (void)state;
    for (int t = 0; t < 8; t++) {
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, run_and_leave, NULL), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
    }
    /* the last spinners finish their spin and doze (22 ms) while no arena of theirs is left */
    struct timespec pause = {0, 60000000};
    nanosleep(&pause, NULL);
    cover_args a = {1 << 14, 1, 0};
    assert_int_equal(parallel_within(2, NULL, cover_in_arena, &a), ONYX_OK);
}

/* Records the threads that took chunks; each chunk sleeps, so a worker surely takes some. */
#define MAX_SEEN 64
typedef struct {
    pthread_mutex_t lock;
    pid_t caller, seen[MAX_SEEN];
    int n_seen;
} seen_threads;

static void note_thread(void *ctx, int64_t begin, int64_t end) {
    seen_threads *s = ctx;
    const pid_t me = (pid_t)syscall(SYS_gettid);
    const struct timespec nap = {0, 200000};
    nanosleep(&nap, NULL);
    pthread_mutex_lock(&s->lock);
    bool known = me == s->caller;
    for (int k = 0; k < s->n_seen; k++) known = known || s->seen[k] == me;
    if (!known && s->n_seen < MAX_SEEN) s->seen[s->n_seen++] = me;
    pthread_mutex_unlock(&s->lock);
    (void)begin, (void)end;
}

static onyx_status note_threads_in_arena(void *arg) {
    seen_threads *s = arg;
    parallel_for(64, 1, note_thread, s);
    return ONYX_OK;
}

static void test_workers_avoid_the_callers_cpu(void **state) {
    (void)state;
    cpu_set_t own;
    assert_int_equal(sched_getaffinity(0, sizeof own, &own), 0);
    int cpus[2], found = 0;
    for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
        if (CPU_ISSET(c, &own)) cpus[found++] = c;
    if (found < 2) skip(); /* one CPU: there is no other CPU to keep the workers on */
    seen_threads s = {.caller = (pid_t)syscall(SYS_gettid)};
    pthread_mutex_init(&s.lock, NULL);
    /* the caller on each of two CPUs in turn: every worker that ran leaves out that CPU and
     * only that one */
    for (int round = 0; round < 2; round++) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[round], &one);
        assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
        s.n_seen = 0;
        /* the first run of a new arena registers its workers; the second places them */
        for (int run = 0; run < 2; run++)
            assert_int_equal(parallel_within(2, NULL, note_threads_in_arena, &s), ONYX_OK);
        assert_true(s.n_seen > 0);
        for (int k = 0; k < s.n_seen; k++) {
            cpu_set_t mask;
            assert_int_equal(sched_getaffinity(s.seen[k], sizeof mask, &mask), 0);
            assert_false(CPU_ISSET(cpus[round], &mask));
            assert_true(CPU_ISSET(cpus[1 - round], &mask));
        }
    }
    assert_int_equal(sched_setaffinity(0, sizeof own, &own), 0);
    pthread_mutex_destroy(&s.lock);
}

/* A caller taken off its CPU in a step while its worker runs out of work there: the worker moves
 * it onto its own CPU before it sleeps, and the caller has its own CPUs back after the run. The
 * caller runs at nice 19 (in a thread of its own: a nice value cannot be lowered again) and a
 * thread at nice 0 spinning on the caller's CPU takes that CPU from it. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int hog_cpu; /* under lock: the CPU the hog spins on, -1 until the caller names it */
    atomic_bool hog_running, stop, caller_went;
    pid_t caller;
    double caller_cpu_s;
} starve_job;

static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double thread_cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *hog(void *arg) {
    starve_job *j = arg;
    pthread_mutex_lock(&j->lock);
    while (j->hog_cpu < 0 && !atomic_load(&j->stop)) pthread_cond_wait(&j->wake, &j->lock);
    const int cpu = j->hog_cpu;
    pthread_mutex_unlock(&j->lock);
    cpu_set_t one;
    CPU_ZERO(&one);
    if (cpu >= 0) CPU_SET(cpu, &one);
    const bool pinned = cpu >= 0 && sched_setaffinity(0, sizeof one, &one) == 0;
    atomic_store(&j->hog_running, true);
    while (pinned && !atomic_load(&j->stop)) {
    }
    return NULL;
}

static void starve_chunk(void *ctx, int64_t begin, int64_t end) {
    starve_job *j = ctx;
    (void)begin, (void)end;
    if ((pid_t)syscall(SYS_gettid) != j->caller) {
        /* the worker: out of work only once the hog holds the caller's CPU */
        const double until = wall_seconds() + 2;
        while (!atomic_load(&j->hog_running) && wall_seconds() < until) {
        }
        return;
    }
    if (atomic_exchange(&j->caller_went, true)) return;
    pthread_mutex_lock(&j->lock);
    j->hog_cpu = sched_getcpu();
    pthread_cond_signal(&j->wake);
    pthread_mutex_unlock(&j->lock);
    /* 5 ms of this thread's CPU time, however long that takes (at most 5 s) */
    const double c0 = thread_cpu_seconds(), w0 = wall_seconds();
    while (thread_cpu_seconds() - c0 < 0.005 && wall_seconds() - w0 < 5) {
    }
    j->caller_cpu_s = thread_cpu_seconds() - c0;
}

static onyx_status starve_in_arena(void *arg) {
    starve_job *j = arg;
    j->caller = (pid_t)syscall(SYS_gettid);
    parallel_for(2, 1, starve_chunk, j);
    return ONYX_OK;
}

static void *starved_caller(void *arg) {
    starve_job *j = arg;
    assert_int_equal(setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19), 0);
    cpu_set_t before, after;
    assert_int_equal(sched_getaffinity(0, sizeof before, &before), 0);
    parallel_policy policy = {1000, 0};
    assert_int_equal(parallel_within(2, &policy, starve_in_arena, j), ONYX_OK);
    assert_int_equal(sched_getaffinity(0, sizeof after, &after), 0);
    assert_true(CPU_EQUAL(&before, &after));
    return NULL;
}

static void test_waiting_caller_moves_to_the_workers_cpu(void **state) {
    (void)state;
    if (parallel_cores() < 2) skip(); /* one CPU: nowhere to move the caller */
    /* the workers exist before the nice caller runs, so none inherits its nice value */
    cover_args a = {1 << 14, 1, 0};
    assert_int_equal(parallel_within(2, NULL, cover_in_arena, &a), ONYX_OK);
    starve_job j = {.hog_cpu = -1};
    pthread_mutex_init(&j.lock, NULL);
    pthread_cond_init(&j.wake, NULL);
    const int64_t moved = parallel_callers_moved();
    pthread_t hog_thread, caller_thread;
    assert_int_equal(pthread_create(&hog_thread, NULL, hog, &j), 0);
    assert_int_equal(pthread_create(&caller_thread, NULL, starved_caller, &j), 0);
    assert_int_equal(pthread_join(caller_thread, NULL), 0);
    pthread_mutex_lock(&j.lock);
    atomic_store(&j.stop, true);
    pthread_cond_signal(&j.wake);
    pthread_mutex_unlock(&j.lock);
    assert_int_equal(pthread_join(hog_thread, NULL), 0);
    assert_true(parallel_callers_moved() > moved);
    assert_true(j.caller_cpu_s >= 0.005); /* its work done, not cut short */
    pthread_cond_destroy(&j.wake);
    pthread_mutex_destroy(&j.lock);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_for_covers_once),
        cmocka_unit_test(test_arena_sets_threads),
        cmocka_unit_test(test_alone_runs_one_thread),
        cmocka_unit_test(test_error_reaches_caller),
        cmocka_unit_test(test_callers_run_concurrently),
        cmocka_unit_test(test_spin_is_bounded),
        cmocka_unit_test(test_serial_run_does_not_spin),
        cmocka_unit_test(test_spinners_outlive_their_thread),
        cmocka_unit_test(test_workers_avoid_the_callers_cpu),
        cmocka_unit_test(test_waiting_caller_moves_to_the_workers_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
