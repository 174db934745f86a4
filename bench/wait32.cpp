// SPDX-License-Identifier: MIT
// bench/wait32.cpp - fastsync's public wait on an address (fastsync_wait32 / fastsync_wake32,
// and fastsync.hpp's fastsync::wait / wake_one) against C++20's std::atomic<std::uint32_t>
// wait / notify_one (libstdc++).
//
// Built as C++20 (bench/meson.build, where the project has a C++ compiler with
// std::atomic::wait). Cases, each timed for every implementation in the same run, the
// implementations alternating within each repetition (medians of --reps):
//   wake      one thread, a wake of one waiter on a word that nobody waits on, n times: ns
//             per wake. fastsync_wake32(w, 1, 0) (C), fastsync::wake_one(w) (C++), and
//             w.notify_one() (std). fastsync's wake always makes the backend's call (on
//             Linux a FUTEX_WAKE system call: the manual says a primitive keeps its own
//             waiter flag to skip it); libstdc++'s looks at the waiter count of the word's
//             slot in its table first.
//   pingpong  two threads pinned to CPUs 0 and 1 pass one word back and forth (each stores
//             the next value with release, wakes one, and waits while the word holds the
//             value it stored): ns per round trip. fastsync_wait32 + fastsync_wake32 (C),
//             fastsync::wait + wake_one (C++), w.wait + w.notify_one (std; libstdc++ spins
//             on the word before it sleeps, fastsync_wait32 does not).
//   pingpong1 the same with both threads pinned to CPU 0: every hand-off is a switch (no
//             CPU woken from idle; a spinning waiter only delays it).
// Checked after every run, or the program fails: the word ends at 2 n, both threads counted
// n rounds.
//
// The instructions of a wake with no waiter: --op runs one loop, each its own function,
// which bench/run measures with valgrind --tool=callgrind --toggle-collect=LOOP(*)
// (instructions per iteration in user space, the loop's own few included; the system
// call's kernel work is not counted):
//   wake-c wake-cxx wake-std      (loop_wake_*)
//
//   wait32 [--quick] [--reps N] [--iters N] [--csv FILE] [--build NAME] [CASE...]
//       CASE: wake pingpong pingpong1 (default all); --iters N sets the wake loop's n and the
//       ping-pong's n / 10 (the smoke test)
//   wait32 --op OP --iters N      one loop only, no output (for callgrind)
#include "fastsync.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "bench.hpp"

// ---- the implementations: wait while *w holds v, and wake one ----------------------------

enum { V_C, V_CXX, V_STD, NV };
static const char *const variant[NV] = {"c", "cxx", "std"};

struct impl_c {
    static void wait(std::atomic<std::uint32_t> &w, std::uint32_t v) { (void)fastsync_wait32(&w, v, 0); }
    static void wake(std::atomic<std::uint32_t> &w) { (void)fastsync_wake32(&w, 1, 0); }
};
struct impl_cxx {
    static void wait(std::atomic<std::uint32_t> &w, std::uint32_t v) { fastsync::wait(w, v); }
    static void wake(std::atomic<std::uint32_t> &w) { fastsync::wake_one(w); }
};
struct impl_std {
    static void wait(std::atomic<std::uint32_t> &w, std::uint32_t v) { w.wait(v, std::memory_order_acquire); }
    static void wake(std::atomic<std::uint32_t> &w) { w.notify_one(); }
};

// ---- a wake with no waiter: one function each (callgrind's --toggle-collect) -------------

LOOP_FN static void loop_wake_c(std::atomic<std::uint32_t> *w, long n)
{
    for (long i = 0; i < n; i++) impl_c::wake(*w);
}
LOOP_FN static void loop_wake_cxx(std::atomic<std::uint32_t> *w, long n)
{
    for (long i = 0; i < n; i++) impl_cxx::wake(*w);
}
LOOP_FN static void loop_wake_std(std::atomic<std::uint32_t> *w, long n)
{
    for (long i = 0; i < n; i++) impl_std::wake(*w);
}

alignas(64) static std::atomic<std::uint32_t> lone(0);

static double wake_none(int v, long n)
{
    std::uint64_t t0 = now_ns();
    if (v == V_C) loop_wake_c(&lone, n);
    else if (v == V_CXX) loop_wake_cxx(&lone, n);
    else loop_wake_std(&lone, n);
    return static_cast<double>(now_ns() - t0) / static_cast<double>(n);
}

// ---- the ping-pong ----------------------------------------------------------------------

alignas(64) static std::atomic<std::uint32_t> ball(0);

// Waits while the word holds `mine` (the value this side stored); the value that differs.
// acquire: pairs with the other side's release store.
template <class I> static std::uint32_t await_other(std::uint32_t mine)
{
    std::uint32_t v;
    while ((v = ball.load(std::memory_order_acquire)) == mine) I::wait(ball, mine);
    return v;
}

template <class I> static double pingpong(long n, int cpu_b)
{
    ball.store(0, std::memory_order_relaxed); // relaxed: before the thread starts
    long b_rounds = 0;
    std::thread b([n, cpu_b, &b_rounds] {
        pin(cpu_b);
        for (long k = 0; k < n; k++) {
            std::uint32_t v = await_other<I>(static_cast<std::uint32_t>(2 * k));
            if (v != 2 * k + 1) fail("ping-pong: B saw a wrong value");
            ball.store(static_cast<std::uint32_t>(2 * k + 2), std::memory_order_release); // pairs with A's acquire
            I::wake(ball);
            b_rounds++;
        }
    });
    pin(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1)); // B at its first wait
    std::uint64_t t0 = now_ns();
    for (long k = 0; k < n; k++) {
        ball.store(static_cast<std::uint32_t>(2 * k + 1), std::memory_order_release); // pairs with B's acquire
        I::wake(ball);
        if (await_other<I>(static_cast<std::uint32_t>(2 * k + 1)) != 2 * k + 2) fail("ping-pong: A saw a wrong value");
    }
    std::uint64_t t1 = now_ns();
    b.join();
    if (b_rounds != n || ball.load() != 2 * n) fail("ping-pong: rounds or final value wrong");
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < ncpu(); c++) CPU_SET(c, &all);
    (void)pthread_setaffinity_np(pthread_self(), sizeof all, &all);
    return static_cast<double>(t1 - t0) / static_cast<double>(n);
}

static double pingpong_of(int v, long n, int cpu_b)
{
    return v == V_C ? pingpong<impl_c>(n, cpu_b) : v == V_CXX ? pingpong<impl_cxx>(n, cpu_b)
                                                  : pingpong<impl_std>(n, cpu_b);
}

static int run_op(const std::string &op, long n)
{
    if (n <= 0) n = 1;
    if (op == "wake-c") loop_wake_c(&lone, n);
    else if (op == "wake-cxx") loop_wake_cxx(&lone, n);
    else if (op == "wake-std") loop_wake_std(&lone, n);
    else {
        std::fprintf(stderr, "wait32: unknown --op %s\n", op.c_str());
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts o = parse(argc, argv);
    if (o.op) return run_op(o.op, o.iters);
    auto want = [&](const char *c) {
        return o.cases.empty() || std::find(o.cases.begin(), o.cases.end(), c) != o.cases.end();
    };
    for (const std::string &c : o.cases)
        if (c != "wake" && c != "pingpong" && c != "pingpong1") {
            std::fprintf(stderr, "wait32: unknown case %s\n", c.c_str());
            return 2;
        }
    const long n_wake = o.iters ? o.iters : o.quick ? 200000 : 2000000;
    const long n_pp = o.iters ? std::max(o.iters / 10, 1L) : o.quick ? 5000 : 50000;
    std::vector<double> wake[NV], pp[NV], pp1[NV];
    for (int r = 0; r < o.reps; r++)
        for (int v = 0; v < NV; v++) {
            if (want("wake")) wake[v].push_back(wake_none(v, n_wake));
            if (want("pingpong")) pp[v].push_back(pingpong_of(v, n_pp, 1));
            if (want("pingpong1")) pp1[v].push_back(pingpong_of(v, n_pp, 0));
        }
#if defined(__GLIBC__)
    std::printf("wait32: fastsync_wait32/wake32 and fastsync.hpp against std::atomic<uint32_t> wait/notify_one"
                " (%s, glibc %s), C++%ld; median of %d; %ld CPUs\n",
                __VERSION__, gnu_get_libc_version(), __cplusplus / 100 % 100, o.reps, ncpu());
#else
    std::printf("wait32: fastsync_wait32/wake32 and fastsync.hpp against std::atomic<uint32_t> wait/notify_one"
                " (%s), C++%ld; median of %d; %ld CPUs\n",
                __VERSION__, __cplusplus / 100 % 100, o.reps, ncpu());
#endif
    std::printf("%-44s %12s %14s %12s %9s\n", "case", "fastsync C", "fastsync C++", "std::", "C/std");
    struct spec {
        std::vector<double> *s;
        const char *title, *metric;
    };
    const spec specs[] = {{wake, "wake of one, nobody waiting, ns/wake", "wake_ns"},
                          {pp, "ping-pong, CPUs 0 and 1, ns/round trip", "pingpong_ns"},
                          {pp1, "ping-pong, both on CPU 0, ns/round trip", "pingpong1_ns"}};
    for (const spec &x : specs) {
        if (x.s[V_C].empty()) continue;
        double med[NV];
        for (int v = 0; v < NV; v++) med[v] = row(o, "wait32", variant[v], x.metric, "ns", x.s[v]);
        std::printf("%-44s %12.1f %14.1f %12.1f %9.3f\n", x.title, med[V_C], med[V_CXX], med[V_STD],
                    med[V_C] / med[V_STD]);
    }
    std::printf("(fastsync C: fastsync_wait32 + fastsync_wake32(w, 1, 0); fastsync C++: fastsync::wait +\n"
                " fastsync::wake_one; std::: w.wait + w.notify_one. The ping-pongs: the threads pinned to\n"
                " CPUs 0 and 1 (each hand-off may wake the other CPU from idle), or both to CPU 0 (each\n"
                " hand-off a switch), %ld round trips a run; the wake %ld calls a run. C/std: below 1 is\n"
                " better)\n",
                n_pp, n_wake);
    return 0;
}
