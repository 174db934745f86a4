// SPDX-License-Identifier: MIT
// bench/cxx.cpp - fastsync.hpp against the standard library's types (libstdc++), and the
// wrapper's cost over the C calls it inlines.
//
// Built as C++20 (bench/meson.build, where the project has a C++ compiler). Cases, each
// timed for both implementations in the same run, alternating within each repetition
// (medians of --reps):
//   sem          one thread, release() + acquire() on one semaphore, n times: ns per pair;
//                fastsync::counting_semaphore<> and std::counting_semaphore<INT_MAX>, and the
//                C calls fastsync_sem_post + fastsync_sem_wait on a fastsync_sem_t.
//   sempp        two threads pinned to CPUs 0 and 1 bounce one token over two semaphores
//                (release ping, acquire pong / acquire ping, release pong): ns per round trip.
//   lock         one thread, lock() + unlock(), n times: ns per pair; fastsync::mutex,
//                std::mutex, and fastsync_mutex_lock + fastsync_mutex_unlock. Measured once
//                the process has had a second thread (glibc leaves out the lock prefix of
//                its atomics while a process has only ever had one; see bench/mutex.c).
//   contended    T threads (2, 4, 8), limited to CPUs 0 and 1, each in a loop: lock, add one
//                to a shared counter, unlock, for a time box (--ms, default 500, --quick 100):
//                lock/increment/unlock operations per second, all threads together.
//   condpp       two threads take turns on a shared flag: under the mutex each waits (the
//                predicate wait) until the turn is its own, passes it, unlocks, notify_one();
//                ns per round trip (two wakeups). Not pinned, as bench/condpp.c: pinned to
//                CPUs 0 and 1, every hand-off here waits for the other CPU to wake from idle
//                (~50 us on this VM, the same for both implementations).
//                fastsync::condition_variable + std::unique_lock<fastsync::mutex> against
//                std::condition_variable + std::unique_lock<std::mutex>.
// Checked after every run, or the program fails: every semaphore back at 0 (each token
// came back, none was duplicated), the counter equal to the operations counted by the
// threads, the turn back with the first player after exactly 2 n hand-offs.
//
// The wrapper's cost over the C calls: --op runs one uncontended loop, each its own
// function, which bench/run measures with valgrind --tool=callgrind --toggle-collect=LOOP(*)
// (instructions per iteration, the loop's own few included, the same in every variant):
//   sem-c sem-cxx sem-std          post + wait / release + acquire  (loop_sem_*)
//   semtry-c semtry-cxx semtry-std post + trywait / release + try_acquire  (loop_semtry_*)
//   lock-c lock-cxx lock-std       lock + unlock  (loop_lock_*)
//   guard-cxx                      a std::lock_guard<fastsync::mutex> per iteration
//   sem-wide semtry-wide           the same two semaphore loops on the wide kind,
//                                  fastsync::counting_semaphore<PTRDIFF_MAX> (64-bit ptrdiff_t;
//                                  for callgrind only, timed by no case)
//
//   cxx [--quick] [--reps N] [--iters N] [--ms N] [--csv FILE] [--build NAME] [CASE...]
//       CASE: sem sempp lock contended condpp (default: all); --iters N sets the uncontended
//       loops' n, the ping-pongs' n / 10, and turns the contended time box into N operations
//       in all (the smoke test: every case, a few milliseconds each)
//   cxx --op OP --iters N          one loop only, no output (for callgrind)
//
// bench/bench.h is C11 and C++23 (<stdatomic.h>): this C++20 program has its own few
// helpers, the same clock (CLOCK_MONOTONIC) and the same CSV rows.
#include "fastsync.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "bench.hpp"

template <class T> struct alignas(64) line {
    T v;
    template <class... A> explicit line(A... a) : v(a...) {}
};

// Two threads start their loops together.
class start_gate {
  public:
    explicit start_gate(int n) : left_(n) {}
    void arrive_and_wait()
    {
        left_.fetch_sub(1, std::memory_order_acq_rel); // acq_rel: what each thread set up before
        while (left_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    }

  private:
    std::atomic<int> left_;
};

// ---- the implementations --------------------------------------------------------------

typedef fastsync::counting_semaphore<> fs_sem;
typedef std::counting_semaphore<INT_MAX> std_sem; // fastsync's max() is INT_MAX too
typedef fastsync::counting_semaphore<PTRDIFF_MAX> wide_sem; // the wide kind where ptrdiff_t has 64 bits

// ---- uncontended loops: one function each (callgrind's --toggle-collect) ---------------

LOOP_FN static void loop_sem_c(fastsync_sem_t *s, long n)
{
    for (long i = 0; i < n; i++) {
        fastsync_sem_post(s);
        fastsync_sem_wait(s);
    }
}

LOOP_FN static void loop_sem_cxx(fs_sem *s, long n)
{
    for (long i = 0; i < n; i++) {
        s->release();
        s->acquire();
    }
}

LOOP_FN static void loop_sem_std(std_sem *s, long n)
{
    for (long i = 0; i < n; i++) {
        s->release();
        s->acquire();
    }
}

LOOP_FN static void loop_sem_wide(wide_sem *s, long n)
{
    for (long i = 0; i < n; i++) {
        s->release();
        s->acquire();
    }
}

// The try variants return how many tries failed (none may: the token was just released).
LOOP_FN static long loop_semtry_c(fastsync_sem_t *s, long n)
{
    long failed = 0;
    for (long i = 0; i < n; i++) {
        fastsync_sem_post(s);
        failed += fastsync_sem_trywait(s) != 0;
    }
    return failed;
}

LOOP_FN static long loop_semtry_cxx(fs_sem *s, long n)
{
    long failed = 0;
    for (long i = 0; i < n; i++) {
        s->release();
        failed += !s->try_acquire();
    }
    return failed;
}

LOOP_FN static long loop_semtry_std(std_sem *s, long n)
{
    long failed = 0;
    for (long i = 0; i < n; i++) {
        s->release();
        failed += !s->try_acquire();
    }
    return failed;
}

LOOP_FN static long loop_semtry_wide(wide_sem *s, long n)
{
    long failed = 0;
    for (long i = 0; i < n; i++) {
        s->release();
        failed += !s->try_acquire();
    }
    return failed;
}

LOOP_FN static void loop_lock_c(fastsync_mutex_t *m, long n)
{
    for (long i = 0; i < n; i++) {
        fastsync_mutex_lock(m);
        fastsync_mutex_unlock(m);
    }
}

LOOP_FN static void loop_lock_cxx(fastsync::mutex *m, long n)
{
    for (long i = 0; i < n; i++) {
        m->lock();
        m->unlock();
    }
}

LOOP_FN static void loop_lock_std(std::mutex *m, long n)
{
    for (long i = 0; i < n; i++) {
        m->lock();
        m->unlock();
    }
}

LOOP_FN static void loop_guard_cxx(fastsync::mutex *m, long n)
{
    for (long i = 0; i < n; i++) {
        std::lock_guard<fastsync::mutex> g(*m);
    }
}

// The variants of the uncontended cases, in the order they are timed and printed.
enum { V_C, V_CXX, V_STD, NV, V_WIDE = NV /* --op only: sem-wide, semtry-wide */ };
static const char *const variant[NV] = {"c", "cxx", "std"};

// One uncontended loop of n pairs: ns per pair. kind: "sem", "semtry", "lock", "guard".
static double uncontended(const std::string &kind, int v, long n)
{
    std::uint64_t t0 = 0, t1 = 0;
    if (kind == "sem" || kind == "semtry") {
        bool try_ = kind == "semtry";
        long failed = 0;
        bool zero = false; // the value is 0 again: every token came back
        if (v == V_C) {
            auto s = std::make_unique<line<fastsync_sem_t>>();
            if (fastsync_sem_init(&s->v, 0, 0) != 0) fail("fastsync_sem_init");
            t0 = now_ns();
            if (try_) failed = loop_semtry_c(&s->v, n);
            else loop_sem_c(&s->v, n);
            t1 = now_ns();
            zero = fastsync_sem_trywait(&s->v) != 0;
            if (fastsync_sem_destroy(&s->v) != 0) fail("fastsync_sem_destroy");
        } else if (v == V_CXX) {
            auto s = std::make_unique<line<fs_sem>>(0);
            t0 = now_ns();
            if (try_) failed = loop_semtry_cxx(&s->v, n);
            else loop_sem_cxx(&s->v, n);
            t1 = now_ns();
            zero = !s->v.try_acquire();
        } else if (v == V_WIDE) {
            auto s = std::make_unique<line<wide_sem>>(0);
            t0 = now_ns();
            if (try_) failed = loop_semtry_wide(&s->v, n);
            else loop_sem_wide(&s->v, n);
            t1 = now_ns();
            zero = !s->v.try_acquire();
        } else {
            auto s = std::make_unique<line<std_sem>>(0);
            t0 = now_ns();
            if (try_) failed = loop_semtry_std(&s->v, n);
            else loop_sem_std(&s->v, n);
            t1 = now_ns();
            zero = !s->v.try_acquire();
        }
        if (failed != 0) fail("a try_acquire after a release failed");
        if (!zero) fail("uncontended semaphore: the value is not back at 0");
    } else if (kind == "lock" || kind == "guard") {
        if (v == V_C) {
            auto m = std::make_unique<line<fastsync_mutex_t>>();
            if (fastsync_mutex_init(&m->v, 0) != 0) fail("fastsync_mutex_init");
            t0 = now_ns();
            loop_lock_c(&m->v, n);
            t1 = now_ns();
            if (fastsync_mutex_destroy(&m->v) != 0) fail("fastsync_mutex_destroy: still locked");
        } else if (v == V_CXX) {
            auto m = std::make_unique<line<fastsync::mutex>>();
            t0 = now_ns();
            if (kind == "guard") loop_guard_cxx(&m->v, n);
            else loop_lock_cxx(&m->v, n);
            t1 = now_ns();
            if (!m->v.try_lock()) fail("fastsync::mutex: still locked");
            m->v.unlock();
        } else {
            auto m = std::make_unique<line<std::mutex>>();
            t0 = now_ns();
            loop_lock_std(&m->v, n);
            t1 = now_ns();
            if (!m->v.try_lock()) fail("std::mutex: still locked");
            m->v.unlock();
        }
    } else fail("unknown uncontended case");
    return static_cast<double>(t1 - t0) / static_cast<double>(n);
}

// ---- semaphore ping-pong ----------------------------------------------------------------

// n round trips of one token over two semaphores, the two threads pinned to CPUs 0 and 1:
// ns per round trip, from the first thread's start to the last one's end.
template <class Sem> static double sem_pingpong(long n)
{
    auto ping = std::make_unique<line<Sem>>(0), pong = std::make_unique<line<Sem>>(0);
    start_gate gate(2);
    std::uint64_t t[2][2];
    auto player = [&](int me) {
        pin(me);
        gate.arrive_and_wait();
        t[me][0] = now_ns();
        if (me == 0)
            for (long i = 0; i < n; i++) {
                ping->v.release();
                pong->v.acquire();
            }
        else
            for (long i = 0; i < n; i++) {
                ping->v.acquire();
                pong->v.release();
            }
        t[me][1] = now_ns();
    };
    std::thread a(player, 0), b(player, 1);
    a.join();
    b.join();
    if (ping->v.try_acquire() || pong->v.try_acquire()) fail("ping-pong: a token was duplicated");
    return static_cast<double>(std::max(t[0][1], t[1][1]) - std::min(t[0][0], t[1][0])) /
           static_cast<double>(n);
}

// ---- contended mutex ----------------------------------------------------------------------

// nt threads, limited to CPUs 0 and 1, lock / increment / unlock for ms milliseconds (or
// `ops` operations in all, when not 0): operations per second, all threads.
template <class M> static double contend(int nt, unsigned ms, unsigned long ops)
{
    auto m = std::make_unique<line<M>>();
    auto counter = std::make_unique<line<unsigned long>>(0ul); // under the mutex
    auto stop = std::make_unique<line<std::atomic<int>>>(0);
    start_gate gate(nt + 1);
    struct alignas(64) tally {
        unsigned long ops;
        std::uint64_t t0, t1; // the thread's own clock readings around its loop
    };
    std::vector<tally> done(static_cast<std::size_t>(nt));
    const unsigned long limit = ops ? ops / static_cast<unsigned long>(nt) : ULONG_MAX;
    auto worker = [&](int k) {
        limit_cpus(2);
        gate.arrive_and_wait();
        tally &me = done[static_cast<std::size_t>(k)];
        me.t0 = now_ns();
        unsigned long i = 0;
        // relaxed: the stop flag only ends the loop; the counts are read after the join
        while (i < limit && !stop->v.load(std::memory_order_relaxed)) {
            m->v.lock();
            counter->v++;
            m->v.unlock();
            i++;
        }
        me.t1 = now_ns();
        me.ops = i;
    };
    std::vector<std::thread> th;
    for (int k = 0; k < nt; k++) th.emplace_back(worker, k);
    gate.arrive_and_wait();
    if (!ops) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        stop->v.store(1, std::memory_order_relaxed);
    }
    unsigned long total = 0;
    std::uint64_t t0 = UINT64_MAX, t1 = 0; // from the first thread's start to the last one's end
    for (int k = 0; k < nt; k++) {
        th[static_cast<std::size_t>(k)].join();
        const tally &x = done[static_cast<std::size_t>(k)];
        total += x.ops;
        t0 = std::min(t0, x.t0);
        t1 = std::max(t1, x.t1);
    }
    double secs = static_cast<double>(t1 - t0) / 1e9;
    if (total != counter->v) fail("the counter differs from the operations: no mutual exclusion");
    if (ops && total != limit * static_cast<unsigned long>(nt)) fail("a thread stopped short");
    return static_cast<double>(total) / secs;
}

// ---- condition variable ping-pong ---------------------------------------------------------

// Two threads, not pinned (as bench/condpp.c), hand the turn back and forth n times each:
// ns per round trip (two hand-offs, two wakeups).
template <class M, class CV> static double cond_pingpong(long n)
{
    struct game {
        M m;
        CV cv;
        int turn = 0;             // whose move it is; under m
        unsigned long moves = 0;  // hand-offs made; under m
    };
    auto g = std::make_unique<line<game>>();
    start_gate gate(2);
    std::uint64_t t[2][2];
    auto player = [&](int me) {
        gate.arrive_and_wait();
        t[me][0] = now_ns();
        game &x = g->v;
        for (long i = 0; i < n; i++) {
            {
                std::unique_lock<M> l(x.m);
                x.cv.wait(l, [&] { return x.turn == me; });
                x.turn = !me;
                x.moves++;
            }
            x.cv.notify_one();
        }
        t[me][1] = now_ns();
    };
    std::thread a(player, 0), b(player, 1);
    a.join();
    b.join();
    if (g->v.turn != 0 || g->v.moves != 2 * static_cast<unsigned long>(n))
        fail("condvar ping-pong: the turn did not come back after 2 n hand-offs");
    return static_cast<double>(std::max(t[0][1], t[1][1]) - std::min(t[0][0], t[1][0])) /
           static_cast<double>(n);
}

// ---- main ---------------------------------------------------------------------------------

static int run_op(const std::string &op, long n)
{
    if (n <= 0) n = 1;
    std::size_t dash = op.rfind('-');
    std::string kind = op.substr(0, dash), var = dash == std::string::npos ? "" : op.substr(dash + 1);
    int v = var == "c" ? V_C : var == "cxx" ? V_CXX : var == "std" ? V_STD : var == "wide" ? V_WIDE : -1;
    bool ok = (kind == "sem" || kind == "semtry") ? v >= 0
              : kind == "lock"                  ? v >= 0 && v != V_WIDE
                                                : kind == "guard" && v == V_CXX;
    if (!ok) {
        std::fprintf(stderr, "cxx: unknown --op %s\n", op.c_str());
        return 2;
    }
    (void)uncontended(kind, v, n);
    return 0;
}

int main(int argc, char **argv)
{
    // A second thread, before any measurement (see "lock" above).
    std::thread([] {}).join();
    opts o = parse(argc, argv);
    if (o.op) return run_op(o.op, o.iters);
    static const char *const all[] = {"sem", "sempp", "lock", "contended", "condpp"};
    auto want = [&](const char *c) {
        return o.cases.empty() || std::find(o.cases.begin(), o.cases.end(), c) != o.cases.end();
    };
    for (const std::string &c : o.cases)
        if (std::find_if(std::begin(all), std::end(all), [&](const char *a) { return c == a; }) == std::end(all)) {
            std::fprintf(stderr, "cxx: unknown case %s\n", c.c_str());
            return 2;
        }
    const long n_unc = o.iters ? o.iters : o.quick ? 200000 : 2000000;
    const long n_pp = o.iters ? std::max(o.iters / 10, 1L) : o.quick ? 5000 : 50000;
    const unsigned ms = o.ms ? o.ms : o.quick ? 100 : 500;
    const unsigned long ops = static_cast<unsigned long>(o.iters); // 0: the time box
    static const int threads[] = {2, 4, 8};
    const int R = o.reps;
    // samples [case][variant][rep]; variant: V_C, V_CXX, V_STD (the C API only uncontended)
    enum { C_SEM, C_SEMPP, C_LOCK, C_CONT2, C_CONT4, C_CONT8, C_CONDPP, NC };
    std::vector<double> s[NC][NV];
    for (int r = 0; r < R; r++) {
        if (want("sem"))
            for (int v = 0; v < NV; v++) s[C_SEM][v].push_back(uncontended("sem", v, n_unc));
        if (want("sempp")) {
            s[C_SEMPP][V_CXX].push_back(sem_pingpong<fs_sem>(n_pp));
            s[C_SEMPP][V_STD].push_back(sem_pingpong<std_sem>(n_pp));
        }
        if (want("lock"))
            for (int v = 0; v < NV; v++) s[C_LOCK][v].push_back(uncontended("lock", v, n_unc));
        if (want("contended"))
            for (int k = 0; k < 3; k++) {
                s[C_CONT2 + k][V_CXX].push_back(contend<fastsync::mutex>(threads[k], ms, ops));
                s[C_CONT2 + k][V_STD].push_back(contend<std::mutex>(threads[k], ms, ops));
            }
        if (want("condpp")) {
            s[C_CONDPP][V_CXX].push_back(cond_pingpong<fastsync::mutex, fastsync::condition_variable>(n_pp));
            s[C_CONDPP][V_STD].push_back(cond_pingpong<std::mutex, std::condition_variable>(n_pp));
        }
    }

#if defined(__GLIBC__)
    std::printf("cxx: fastsync.hpp against libstdc++ (%s, glibc %s), C++%ld; median of %d; %ld CPUs\n",
                __VERSION__, gnu_get_libc_version(), __cplusplus / 100 % 100, R, ncpu());
#else
    std::printf("cxx: fastsync.hpp against the C++ library (%s), C++%ld; median of %d; %ld CPUs\n",
                __VERSION__, __cplusplus / 100 % 100, R, ncpu());
#endif
    std::printf("%-44s %12s %14s %12s %9s\n", "case", "fastsync C", "fastsync C++", "std::", "C++/std");
    struct spec {
        int c;
        const char *title, *metric, *unit;
        bool has_c;
    };
    const spec specs[] = {
        {C_SEM, "semaphore release+acquire, ns/pair", "sem_ns", "ns", true},
        {C_SEMPP, "semaphore ping-pong, ns/round trip", "sempp_ns", "ns", false},
        {C_LOCK, "mutex lock+unlock, ns/pair", "lock_ns", "ns", true},
        {C_CONT2, "mutex contended, 2 threads, ops/s", "contended2_ops_s", "ops/s", false},
        {C_CONT4, "mutex contended, 4 threads, ops/s", "contended4_ops_s", "ops/s", false},
        {C_CONT8, "mutex contended, 8 threads, ops/s", "contended8_ops_s", "ops/s", false},
        {C_CONDPP, "condvar ping-pong, ns/round trip", "condpp_ns", "ns", false},
    };
    for (const spec &x : specs) {
        if (s[x.c][V_CXX].empty()) continue;
        double med[NV] = {0, 0, 0};
        for (int v = 0; v < NV; v++)
            if (!s[x.c][v].empty()) med[v] = row(o, "cxx", variant[v], x.metric, x.unit, s[x.c][v]);
        bool rate = std::strcmp(x.unit, "ops/s") == 0;
        char cbuf[32] = "-";
        if (x.has_c) std::snprintf(cbuf, sizeof cbuf, "%.2f", med[V_C]);
        std::printf(rate ? "%-44s %12s %14.0f %12.0f %9.3f\n" : "%-44s %12s %14.2f %12.2f %9.3f\n", x.title,
                    cbuf, med[V_CXX], med[V_STD], med[V_CXX] / med[V_STD]);
    }
    std::printf("(fastsync C++: fastsync::counting_semaphore<>, fastsync::mutex, fastsync::condition_variable\n"
                " with std::unique_lock<fastsync::mutex>; std::: std::counting_semaphore<INT_MAX>, std::mutex,\n"
                " std::condition_variable; fastsync C: the C calls, fastsync_sem_post + fastsync_sem_wait,\n"
                " fastsync_mutex_lock + fastsync_mutex_unlock; the semaphore ping-pong pinned to CPUs 0 and 1,\n"
                " the condvar one not; contended: %s, threads limited to CPUs 0 and 1;\n"
                " C++/std: above 1 is better for ops/s, below 1 for ns)\n",
                ops ? "a fixed count of operations" : (std::to_string(ms) + " ms per run").c_str());
    return 0;
}
