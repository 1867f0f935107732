// The TBB shim behind core/parallel.h: one arena per calling thread and thread count, work split
// into tasks any thread of the arena may take, and the bounded spin and doze of a rep's workers
// after a run.
#include "core/parallel_tbb.h"

#include <immintrin.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

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

// Arenas per calling thread: TBB lets an arena hold as many callers as it has slots and queues
// the rest, so one shared arena would serialise concurrent runs of one-thread reps. All arenas
// draw on TBB's one set of workers, so the process never runs more threads than cores.
thread_local std::map<int, std::unique_ptr<tbb::task_arena>> arenas;

tbb::task_arena &arena_for(int threads) {
    auto &slot = arenas[threads];
    if (!slot) {
        // One slot is the caller's; the others are for workers.
        slot = std::make_unique<tbb::task_arena>(threads, 1);
        slot->initialize();
    }
    return *slot;
}

// Keeps up to `workers` of the arena's workers spinning, then dozing (core/parallel.h), until
// parallel work is handed out anywhere.
void keep_warm(tbb::task_arena &arena, int workers, int64_t spin_us, int64_t doze_us,
               int64_t nap_us) {
    using clock = std::chrono::steady_clock;
    const uint64_t epoch = work_epoch.load(std::memory_order_relaxed);
    const auto spin_until = clock::now() + std::chrono::microseconds(spin_us);
    const auto doze_until = spin_until + std::chrono::microseconds(doze_us);
    for (int i = 0; i < workers; i++)
        arena.enqueue([epoch, spin_until, doze_until, nap_us] {
            auto idle = [epoch] { return work_epoch.load(std::memory_order_relaxed) == epoch; };
            while (idle() && clock::now() < spin_until)
                for (int k = 0; k < 16; k++) _mm_pause();
            const struct timespec nap = {0, (long)nap_us * 1000};
            while (idle() && clock::now() < doze_until) nanosleep(&nap, nullptr);
        });
}

} // namespace

extern "C" int tbb_shim_concurrency(void) { return tbb::this_task_arena::max_concurrency(); }

extern "C" void tbb_shim_work_coming(void) { work_epoch.fetch_add(1, std::memory_order_relaxed); }

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
            fn(ctx, r.begin(), r.end());
            TSAN_RELEASE(&done);
        },
        tbb::auto_partitioner());
    TSAN_ACQUIRE(&done);
}

extern "C" bool tbb_shim_execute(int threads, int64_t spin_us, int64_t doze_us, int64_t nap_us,
                                 void (*fn)(void *ctx), void *ctx) {
    tbb::task_arena *arena;
    try {
        arena = &arena_for(threads);
    } catch (...) {
        return false;
    }
    TSAN_RELEASE(ctx);
    // execute() runs fn on this thread when it can join the arena, else on one of its threads
    arena->execute([&] {
        TSAN_ACQUIRE(ctx);
        fn(ctx);
        TSAN_RELEASE(ctx);
    });
    TSAN_ACQUIRE(ctx);
    if ((spin_us > 0 || doze_us > 0) && threads > 1) {
        try {
            keep_warm(*arena, threads - 1, spin_us, doze_us, nap_us);
        } catch (...) {
            // no spinning: the workers sleep, which only costs the next run's wake-up
        }
    }
    return true;
}
