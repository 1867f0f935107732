// The TBB shim behind core/parallel.h: one arena per calling thread and thread count, work split
// into tasks any thread of the arena may take, the bounded spin and doze of a rep's workers after
// a run, and workers kept off the CPU of a run's caller.
#include "core/parallel_tbb.h"

#include <fcntl.h>
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>

// TBB's synchronisation is invisible to ThreadSanitizer (the library is not instrumented): tell
// it that a task starts after it was handed out and that the caller resumes after the tasks end.
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
#define TSAN_ACQUIRE(p) __tsan_acquire(p)
#define TSAN_RELEASE(p) __tsan_release(p)
#else
#define TSAN_ACQUIRE(p) ((void)(p))
#define TSAN_RELEASE(p) ((void)(p))
#endif

namespace {

// Bumped whenever parallel work is handed out: spinning and dozing workers stop at once and go
// where the work is. Not when a run starts: a worker that stopped before the run's first parallel
// step had work for it would find none, fall asleep, and be slow to wake for the step.
std::atomic<uint64_t> work_epoch{0};

// Spinners queued or running, in all arenas (keep_warm). Process-wide and never freed: a spinner
// may still be queued or dozing when the thread that made it ends and its arena goes (TBB keeps
// enqueued tasks past the task_arena object), or when the process exits. All arenas draw on one
// set of workers, so one count bounds them all.
std::atomic<int> spinners{0};

// Workers kept off the caller's CPU. A sleeping worker that a run wakes is placed by the kernel,
// and on these virtual machines it often lands on the caller's CPU while the other vCPU idles:
// the two then time-share one CPU for 5-15 ms until the load balancer moves one (schedstat of the
// worker after 1 s pauses, EfficientNet-B0, Zen 4 KVM, 2026-12-02: 4 runs in 12 waited 11-17 ms
// on the caller's run queue). So when a run starts alone in the process, every worker's affinity
// becomes the CPUs it may use minus the caller's, before anything wakes it; the mask only changes
// when the caller's CPU does. With several runs in flight the cores are shared anyway, and each
// caller changing the masks would only make the workers chase them: left as they are.
struct worker_entry {
    pid_t tid;
    cpu_set_t allowed; // the CPUs it may use: its own affinity when it joined and the process's
    int avoiding;      // the CPU its mask leaves out now, -1 for none
};
// Plain arrays, never destroyed: a worker's thread may end after the process's static
// destructors ran (TBB shuts its threads down from its own). Workers past the first 256 are
// never moved.
constexpr int MAX_PLACED_WORKERS = 256;
std::mutex workers_lock;
worker_entry workers[MAX_PLACED_WORKERS]; // under workers_lock
int n_workers = 0;                        // under workers_lock
std::atomic<int> runs_in_flight{0};

// The CPUs the process could use when onyx was loaded. A thread starts with the affinity of the
// thread that made it, and TBB's workers make one another: a worker made by one that was kept off
// a CPU would otherwise count that CPU as never its own.
const cpu_set_t process_cpus = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) CPU_ZERO(&set);
    return set;
}();

// Slot 0 of every arena is reserved for its caller (warm_arena); workers take the others. Only
// workers are placed or spin: a caller that picked up a queued spinner while it waited for its
// own work would spin in its run, and one placed as a worker would be kept off its own CPU and
// pass that mask on to the threads it makes (seen 2026-12-03: the caller and its one worker both
// held to CPU 0, every run on one core).
bool on_worker() { return tbb::this_task_arena::current_thread_index() > 0; }

// One per worker thread: registers it when it first runs onyx's code (a spinner or a chunk of
// parallel_for; not through a task_scheduler_observer, whose proxy TBB frees only with its
// arena, which queued spinners can keep past the process's end: a leak LeakSanitizer reports)
// and removes it when the thread ends, before its id can be reused.
struct worker_registration {
    bool registered = false;
    pid_t tid = 0;
    void enter() {
        if (registered || !on_worker()) return;
        worker_entry e;
        e.tid = (pid_t)syscall(SYS_gettid);
        e.avoiding = -1;
        cpu_set_t own;
        if (sched_getaffinity(0, sizeof own, &own) != 0) return;
        CPU_OR(&e.allowed, &own, &process_cpus);
        std::lock_guard<std::mutex> hold(workers_lock);
        if (n_workers == MAX_PLACED_WORKERS) return;
        workers[n_workers++] = e;
        tid = e.tid;
        registered = true;
    }
    ~worker_registration() {
        if (!registered) return;
        std::lock_guard<std::mutex> hold(workers_lock);
        for (int k = 0; k < n_workers; k++)
            if (workers[k].tid == tid) {
                workers[k] = workers[--n_workers];
                break;
            }
    }
};
thread_local worker_registration this_worker;

void keep_workers_off(int cpu) {
    std::lock_guard<std::mutex> hold(workers_lock);
    for (int k = 0; k < n_workers; k++) {
        worker_entry &w = workers[k];
        if (w.avoiding == cpu) continue;
        cpu_set_t mask = w.allowed;
        CPU_CLR(cpu, &mask);
        // a worker that may run nowhere else keeps the mask it came with
        if (CPU_COUNT(&mask) == 0) mask = w.allowed;
        if (sched_setaffinity(w.tid, sizeof mask, &mask) == 0) w.avoiding = cpu;
    }
}

// A caller taken off its CPU in a step, rescued by the worker that ran out of work there.
// perf sched (MobileNetV3-Small after 10 ms pauses, Xeon KVM, 2026-12-03): in the slowest runs
// a task that woke on the caller's CPU (a kernel thread, an agent at nice -10) preempted the
// caller for 1-4 ms while the worker, its share of the step done, went to sleep and left the
// other CPU idle; the kernel does not move a thread that ran a moment ago (it is cache-hot), so
// the caller waited for the intruder and the run for the caller. So a worker leaving the arena of
// a run alone in the process first watches the caller for RESCUE_WATCH_NS: a caller whose CPU
// time does not advance while it is runnable is waiting for a CPU, and the worker moves it onto
// its own (the caller's affinity, which takes a queued thread across at once) before it sleeps
// there. The caller takes its own affinity back at its next parallel step or when the run ends
// (settle_moved_caller), and keeps the workers off its new CPU from then on.
constexpr int64_t RESCUE_WATCH_NS = 30000;

thread_local pid_t this_tid = 0;
pid_t current_tid() {
    if (this_tid == 0) this_tid = (pid_t)syscall(SYS_gettid);
    return this_tid;
}

std::mutex rescue_lock;
pid_t lone_caller = 0;                // under rescue_lock: the caller of the run alone in flight
clockid_t lone_caller_clock = 0;      // under rescue_lock: its CPU-time clock
std::atomic<pid_t> watched_caller{0}; // lone_caller, read without the lock to decide to look
pid_t moved_caller = 0;               // under rescue_lock: a caller a worker moved, not settled
cpu_set_t moved_caller_cpus;          // under rescue_lock: the CPUs it could use before
std::atomic<bool> caller_moved{false};
std::atomic<int64_t> callers_moved{0};

int64_t ns_of(const struct timespec &t) { return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec; }

// Runnable, whether running or waiting for a CPU ('R' in /proc): not asleep or blocked.
bool thread_runnable(pid_t tid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char *name_end = strrchr(buf, ')'); // a thread's name may hold spaces and parentheses
    return name_end && name_end[1] == ' ' && name_end[2] == 'R';
}

// Watches the caller of the run alone in flight (if any) for RESCUE_WATCH_NS, or until parallel
// work is handed out, and moves it onto this worker's CPU if it waited for one all that time.
void rescue_caller() {
    const pid_t tid = watched_caller.load(std::memory_order_relaxed);
    if (tid == 0 || tid == current_tid() || caller_moved.load(std::memory_order_relaxed))
        return;
    clockid_t clock;
    {
        std::lock_guard<std::mutex> hold(rescue_lock);
        if (lone_caller != tid || moved_caller != 0) return;
        clock = lone_caller_clock;
    }
    const uint64_t epoch = work_epoch.load(std::memory_order_relaxed);
    struct timespec cpu0, cpu1, wall0, wall1;
    if (clock_gettime(clock, &cpu0) != 0 || clock_gettime(CLOCK_MONOTONIC, &wall0) != 0) return;
    do {
        for (int k = 0; k < 16; k++) _mm_pause();
        if (work_epoch.load(std::memory_order_relaxed) != epoch ||
            watched_caller.load(std::memory_order_relaxed) != tid)
            return; // the step or the run ended: the caller is running
        clock_gettime(CLOCK_MONOTONIC, &wall1);
    } while (ns_of(wall1) - ns_of(wall0) < RESCUE_WATCH_NS);
    if (clock_gettime(clock, &cpu1) != 0) return;
    if (ns_of(cpu1) - ns_of(cpu0) > (ns_of(wall1) - ns_of(wall0)) / 4) return; // it runs
    if (!thread_runnable(tid)) return; // blocked or asleep: not a CPU it lacks
    const int cpu = sched_getcpu();
    cpu_set_t allowed, here;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(tid, sizeof allowed, &allowed) != 0 ||
        !CPU_ISSET(cpu, &allowed))
        return;
    CPU_ZERO(&here);
    CPU_SET(cpu, &here);
    std::lock_guard<std::mutex> hold(rescue_lock);
    if (lone_caller != tid || moved_caller != 0) return;
    if (sched_setaffinity(tid, sizeof here, &here) != 0) return;
    moved_caller = tid;
    callers_moved.fetch_add(1, std::memory_order_relaxed);
    moved_caller_cpus = allowed;
    caller_moved.store(true, std::memory_order_release);
}

// On the caller: its own CPUs back after a rescue, and the workers kept off the CPU it is on now.
void settle_moved_caller() {
    if (!caller_moved.load(std::memory_order_acquire)) return;
    cpu_set_t cpus;
    {
        std::lock_guard<std::mutex> hold(rescue_lock);
        if (moved_caller != current_tid()) return;
        cpus = moved_caller_cpus;
        moved_caller = 0;
        caller_moved.store(false, std::memory_order_relaxed);
    }
    sched_setaffinity(0, sizeof cpus, &cpus);
    const int cpu = sched_getcpu();
    if (cpu >= 0 && cpu < CPU_SETSIZE) keep_workers_off(cpu);
}

void watch_lone_caller(bool watch) {
    std::lock_guard<std::mutex> hold(rescue_lock);
    if (watch) {
        clockid_t clock;
        if (runs_in_flight.load(std::memory_order_relaxed) != 1) return; // another run came
        if (pthread_getcpuclockid(pthread_self(), &clock) != 0) return;
        lone_caller = current_tid();
        lone_caller_clock = clock;
    } else if (lone_caller != current_tid()) {
        return;
    } else {
        lone_caller = 0;
    }
    watched_caller.store(lone_caller, std::memory_order_relaxed);
}

// Tells the arena's workers' leaving to rescue_caller. Made once per arena and never destroyed:
// TBB may call one after its thread ended (the arena lives on while spinners it left are queued),
// and taking one off its arena (observe(false)) leaves TBB's record of it behind, a leak
// LeakSanitizer reports. A plain array keeps them (and, through them, TBB's records) reachable;
// arenas past the first MAX_WATCHED_ARENAS, made by threads that came and went, go unwatched.
struct caller_watch final : tbb::task_scheduler_observer {
    explicit caller_watch(tbb::task_arena &a) : tbb::task_scheduler_observer(a) { observe(true); }
    void on_scheduler_exit(bool is_worker) override {
        if (is_worker) rescue_caller();
    }
};
constexpr int MAX_WATCHED_ARENAS = 1024;
caller_watch *watches[MAX_WATCHED_ARENAS];
std::atomic<int> n_watches{0};

void watch_arena(tbb::task_arena &arena) {
    const int k = n_watches.fetch_add(1, std::memory_order_relaxed);
    if (k < MAX_WATCHED_ARENAS) watches[k] = new caller_watch(arena);
}

struct warm_arena {
    tbb::task_arena arena;
    explicit warm_arena(int threads) : arena(threads, 1) {}
};

// Arenas per calling thread: TBB lets an arena hold as many callers as it has slots and queues
// the rest, so one shared arena would serialise concurrent runs of one-thread reps. All arenas
// draw on TBB's one set of workers, so the process never runs more threads than cores.
thread_local std::map<int, std::unique_ptr<warm_arena>> arenas;

warm_arena &arena_for(int threads) {
    auto &slot = arenas[threads];
    if (!slot) {
        // One slot is the caller's; the others are for workers.
        slot = std::make_unique<warm_arena>(threads);
        slot->arena.initialize();
        if (threads > 1) watch_arena(slot->arena);
    }
    return *slot;
}

// What tbb_shim_execute is running on this thread: the arena, how its workers wait, and whether
// the run has handed out parallel work yet (a run that never does, a small tree ensemble or a
// graph of serial steps, leaves the workers asleep: spinning them would only burn CPU).
struct run_policy {
    warm_arena *warm;
    int workers;
    int64_t spin_us, doze_us, nap_us;
    bool handed_out;
};
thread_local run_policy *current_run = nullptr;

// Keeps the arena's workers spinning, then dozing (core/parallel.h), until parallel work is
// handed out anywhere: one spinner per worker that has none. A dozer wakes on its own timer, never
// by the caller: a futex wake from the caller at a run's start (tried, 2026-12-02, Zen 4 KVM) lets
// the kernel pull the worker onto the caller's CPU, where the two time-share it; EfficientNet-B0
// after a 200 ms pause took 13.5-14.4 ms against 11.0-12.6 ms with the naps (back to back 8.7-9.4).
void keep_warm(const run_policy &p) {
    using clock = std::chrono::steady_clock;
    if (p.workers <= 0 || (p.spin_us <= 0 && p.doze_us <= 0)) return;
    const uint64_t epoch = work_epoch.load(std::memory_order_relaxed);
    const auto spin_until = clock::now() + std::chrono::microseconds(p.spin_us);
    const auto doze_until = spin_until + std::chrono::microseconds(p.doze_us);
    const int64_t nap_us = p.nap_us;
    for (int have = spinners.load(std::memory_order_relaxed); have < p.workers; have++) {
        spinners.fetch_add(1, std::memory_order_relaxed);
        try {
            p.warm->arena.enqueue([epoch, spin_until, doze_until, nap_us] {
                if (!on_worker()) {
                    spinners.fetch_sub(1, std::memory_order_relaxed);
                    return;
                }
                this_worker.enter();
                auto idle = [epoch] { return work_epoch.load(std::memory_order_relaxed) == epoch; };
                while (idle() && clock::now() < spin_until)
                    for (int k = 0; k < 16; k++) _mm_pause();
                const struct timespec nap = {0, (long)nap_us * 1000};
                while (idle() && clock::now() < doze_until) nanosleep(&nap, nullptr);
                spinners.fetch_sub(1, std::memory_order_relaxed);
            });
        } catch (...) {
            // no spinner: that worker sleeps, which only costs a wake-up
            spinners.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
    }
}

} // namespace

extern "C" int64_t tbb_shim_callers_moved(void) {
    return callers_moved.load(std::memory_order_relaxed);
}

extern "C" int tbb_shim_concurrency(void) { return tbb::this_task_arena::max_concurrency(); }

extern "C" void tbb_shim_work_coming(void) {
    settle_moved_caller();
    work_epoch.fetch_add(1, std::memory_order_relaxed);
    if (current_run) current_run->handed_out = true;
}

// Between a run's parallel steps too, or the workers fall asleep in TBB after each one and every
// step waits for a wake-up; after a pause those cost several times their back-to-back time on
// these virtual machines (a halted vCPU is slow to run again).
extern "C" void tbb_shim_work_done(void) {
    settle_moved_caller();
    if (current_run) keep_warm(*current_run);
}

extern "C" void tbb_shim_parallel_for(int64_t n, int64_t grain,
                                      void (*fn)(void *ctx, int64_t begin, int64_t end),
                                      void *ctx) {
    tbb_shim_work_coming();
    int start = 0, done = 0;
    TSAN_RELEASE(&start);
    // A range splits while larger than its grainsize, into halves: 2 * grain - 1 keeps every
    // chunk at least `grain` long. The auto partitioner makes a few chunks per thread and more
    // only when threads steal, so a late worker's share goes to whoever is free.
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, n, (size_t)(2 * grain - 1)),
        [&](const tbb::blocked_range<int64_t> &r) {
            TSAN_ACQUIRE(&start);
            this_worker.enter();
            fn(ctx, r.begin(), r.end());
            TSAN_RELEASE(&done);
        },
        tbb::auto_partitioner());
    TSAN_ACQUIRE(&done);
    tbb_shim_work_done();
}

extern "C" bool tbb_shim_alone(void (*fn)(void *ctx), void *ctx) {
    warm_arena *warm;
    try {
        warm = &arena_for(1);
    } catch (...) {
        return false;
    }
    TSAN_RELEASE(ctx);
    warm->arena.execute([&] {
        TSAN_ACQUIRE(ctx);
        fn(ctx);
        TSAN_RELEASE(ctx);
    });
    TSAN_ACQUIRE(ctx);
    return true;
}

extern "C" bool tbb_shim_execute(int threads, int64_t spin_us, int64_t doze_us, int64_t nap_us,
                                 void (*fn)(void *ctx), void *ctx) {
    warm_arena *warm;
    try {
        warm = &arena_for(threads);
    } catch (...) {
        return false;
    }
    run_policy policy = {warm, threads - 1, spin_us, doze_us, nap_us, false};
    const bool alone = runs_in_flight.fetch_add(1, std::memory_order_relaxed) == 0;
    if (alone && threads > 1) {
        const int cpu = sched_getcpu();
        if (cpu >= 0 && cpu < CPU_SETSIZE) keep_workers_off(cpu);
        watch_lone_caller(true);
    } else if (!alone) {
        watched_caller.store(0, std::memory_order_relaxed); // several runs share the cores
    }
    TSAN_RELEASE(ctx);
    // execute() runs fn on this thread when it can join the arena, else on one of its threads
    warm->arena.execute([&] {
        TSAN_ACQUIRE(ctx);
        run_policy *outer = current_run;
        current_run = &policy;
        fn(ctx);
        current_run = outer;
        TSAN_RELEASE(ctx);
    });
    TSAN_ACQUIRE(ctx);
    if (alone && threads > 1) watch_lone_caller(false);
    settle_moved_caller();
    runs_in_flight.fetch_sub(1, std::memory_order_relaxed);
    if (policy.handed_out) keep_warm(policy);
    return true;
}
