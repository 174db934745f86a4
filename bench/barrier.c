/* SPDX-License-Identifier: MIT */
/* bench/barrier.c - fastsync_barrier_t against the peers' barriers (issue 21).
 *
 * One source, three builds, as bench/once.c: built with gcc the peer is glibc's
 * pthread_barrier_t, with musl-gcc -static musl's, and as C++23 (g++ -x c++ -std=c++23)
 * libstdc++'s std::barrier<> (no completion), with fastsync.hpp's fastsync::barrier<>
 * beside fastsync's C calls where fastsync.hpp has one (see "the hook" below).
 *   serial   one thread, n waits on a barrier of count 1: every wait is the round's last
 *            arrival, the SERIAL path. ns per wait, and fastsync's futex calls per wait (its
 *            replaceable futex layer; bench/run counts the peers' with perf stat or strace,
 *            and instructions and RMWs with callgrind). Measured once the process has had a
 *            second thread, as in bench/mutex.c.
 *   rounds   T threads (2, 4, 8), each limited to CPUs 0 and 1 (as bench/rwlock's), meet at
 *            one barrier of count T round after round for --ms milliseconds, nothing else
 *            between: rounds per second, and fastsync's futex calls per round. A time box,
 *            not a count of rounds: the implementations differ by 100 times here (spinners
 *            against sleepers), and a count long enough for the slow ones leaves a fast one
 *            a few ms, which one descheduling decides. The threads stop together: thread 0,
 *            back from round i once the box is over, sets the last round to i + 1, and every
 *            thread reads it after each of its waits (see worker()). Before each wait a thread stores the
 *            round's number in its slot, and after it reads its neighbour's: a slot behind
 *            the round (a wait that returned before every thread of its round had arrived, or
 *            a write not visible) fails the run; so does a round without exactly one SERIAL
 *            return (the C barriers; std::barrier's arrive_and_wait says nothing).
 * Implementations alternate within each repetition; medians of --reps (bench/run runs one
 * repetition per round, the builds taking turns, as for bench/once).
 *
 *   barrier [--quick] [--reps N] [--ms N] [--csv FILE] [--build NAME] [REGIME...]
 *           REGIME: serial rounds (default: both)
 *   barrier --op OP --iters N   one loop only, no output (for callgrind, perf, strace):
 *           OP: serial-fs serial-peer serial-cxx (n waits on a barrier of count 1:
 *           loop_serial_fs ...), rounds<T>-fs ... (T threads, exactly n rounds); fs:
 *           fastsync_barrier_t, cxx: fastsync::barrier<> (C++ build only)
 */
#include "bench.h"

#if defined(__cplusplus)
/* ---- adapter: the peer, libstdc++'s std::barrier<> (this file built as C++23); and
 * fastsync.hpp's fastsync::barrier<> ---- */
#include "fastsync.hpp"
#include <barrier>
#include <cstddef>
#include <new>
#include <type_traits>
#define PEER_NAME "std::barrier<>"
#define PEER_SERIAL 0 /* arrive_and_wait returns nothing */
typedef std::barrier<> peer_barrier;
static peer_barrier *peer_new(unsigned count)
{
    return new (bench_alloc(sizeof(peer_barrier))) peer_barrier((std::ptrdiff_t)count);
}
static void peer_free(peer_barrier *b)
{
    b->~peer_barrier();
    free(b);
}
static inline int peer_wait(peer_barrier *b)
{
    b->arrive_and_wait();
    return 0;
}

/* The hook for fastsync.hpp's fastsync::barrier (issue 21's C++ types), as bench/once.c's
 * for fastsync::call_once: a stand-in declared here and made visible in namespace fastsync
 * through a using-directive is hidden by a fastsync::barrier that fastsync.hpp declares
 * itself. Its type is taken from the expression fastsync::barrier(1): class template
 * argument deduction gives std::barrier's default, barrier<> (no completion), where
 * fastsync::barrier is std::barrier's template; the stand-in before it has one. */
namespace bench_barrier_absent {
struct barrier {
    explicit barrier(std::ptrdiff_t) {}
    void arrive_and_wait() { bench_fail("fastsync::barrier is not in fastsync.hpp"); }
};
} // namespace bench_barrier_absent
namespace fastsync {
using namespace bench_barrier_absent;
}
typedef decltype(fastsync::barrier(std::ptrdiff_t(1))) fscxx_barrier;
#define HAVE_FSCXX (!std::is_same<fscxx_barrier, bench_barrier_absent::barrier>::value)
static fscxx_barrier *fscxx_new(unsigned count)
{
    return new (bench_alloc(sizeof(fscxx_barrier))) fscxx_barrier((std::ptrdiff_t)count);
}
static void fscxx_free(fscxx_barrier *b)
{
    b->~fscxx_barrier();
    free(b);
}
static inline int fscxx_wait(fscxx_barrier *b)
{
    b->arrive_and_wait();
    return 0;
}
#else
/* ---- adapter: the peer, the C library's pthread_barrier_t (glibc with gcc, musl with
 * musl-gcc) ---- */
#if defined(__GLIBC__)
#define PEER_NAME "glibc pthread_barrier_t"
#else
#define PEER_NAME "pthread_barrier_t"
#endif
#define PEER_SERIAL 1
#define HAVE_FSCXX 0
typedef pthread_barrier_t peer_barrier;
static peer_barrier *peer_new(unsigned count)
{
    peer_barrier *b = (peer_barrier *)bench_alloc(sizeof *b);
    if (pthread_barrier_init(b, NULL, count) != 0) bench_fail("pthread_barrier_init");
    return b;
}
static void peer_free(peer_barrier *b)
{
    if (pthread_barrier_destroy(b) != 0) bench_fail("pthread_barrier_destroy");
    free(b);
}
static inline int peer_wait(peer_barrier *b) { return pthread_barrier_wait(b) == PTHREAD_BARRIER_SERIAL_THREAD; }
#endif

/* ---- adapter: fastsync ---- */
static fastsync_barrier_t *fs_new(unsigned count)
{
    fastsync_barrier_t *b = (fastsync_barrier_t *)bench_alloc(sizeof *b);
    if (fastsync_barrier_init(b, count, 0) != 0) bench_fail("fastsync_barrier_init");
    return b;
}
static void fs_free(fastsync_barrier_t *b)
{
    if (fastsync_barrier_destroy(b) != 0) bench_fail("fastsync_barrier_destroy");
    free(b);
}
static inline int fs_wait(fastsync_barrier_t *b) { return fastsync_barrier_wait(b) == FASTSYNC_BARRIER_SERIAL; }

/* Implementations: fastsync_barrier_t, the peer, (C++ build, where fastsync.hpp has it)
 * fastsync::barrier<>. */
enum { IMPL_FS, IMPL_PEER, IMPL_FSCXX, NIMPL };
enum { MAXT = 8, CPUS = 2 };
static const char *const impl_variant[NIMPL] = { "fastsync", "peer", "fastsync_cxx" };
static const char *const impl_name[NIMPL] = { "fastsync_barrier_t", PEER_NAME, "fastsync::barrier<>" };
static int impl_there(int impl) { return impl != IMPL_FSCXX || HAVE_FSCXX; }
static int impl_own_futex(int impl) { return impl != IMPL_PEER; } /* counted by its futex layer */
static int impl_serial(int impl) { return impl == IMPL_FS || (impl == IMPL_PEER && PEER_SERIAL); }

/* One barrier of any implementation. */
struct bar {
    int impl;
    fastsync_barrier_t *fs;
    peer_barrier *peer;
#if defined(__cplusplus)
    fscxx_barrier *cxx;
#endif
};
static struct bar bar_new(int impl, unsigned count)
{
    struct bar b;
    b.impl = impl;
    b.fs = impl == IMPL_FS ? fs_new(count) : NULL;
    b.peer = impl == IMPL_PEER ? peer_new(count) : NULL;
#if defined(__cplusplus)
    b.cxx = impl == IMPL_FSCXX ? fscxx_new(count) : NULL;
#endif
    return b;
}
static void bar_free(struct bar *b)
{
    if (b->fs) fs_free(b->fs);
    if (b->peer) peer_free(b->peer);
#if defined(__cplusplus)
    if (b->cxx) fscxx_free(b->cxx);
#endif
}
/* 1 where the wait was the round's SERIAL one (the C barriers), else 0 */
static inline int bar_wait(struct bar *b)
{
    switch (b->impl) {
    case IMPL_FS: return fs_wait(b->fs);
    case IMPL_PEER: return peer_wait(b->peer);
#if defined(__cplusplus)
    default: return fscxx_wait(b->cxx);
#else
    default: return 0;
#endif
    }
}

/* The loops that callgrind measures (bench/run: --toggle-collect=loop_serial_fs etc.): n
 * waits on a barrier of count 1; the SERIAL returns counted. */
#define BARRIER_LOOPS(S, P, type)                                                             \
    BENCH_NOINLINE static long loop_serial_##S(type *b, long n)                               \
    {                                                                                         \
        long serial = 0;                                                                      \
        for (long i = 0; i < n; i++) serial += P##_wait(b);                                   \
        return serial;                                                                        \
    }
BARRIER_LOOPS(fs, fs, fastsync_barrier_t)
BARRIER_LOOPS(peer, peer, peer_barrier)
#if defined(__cplusplus)
BARRIER_LOOPS(cxx, fscxx, fscxx_barrier)
#endif

/* One thread, n waits on a barrier of count 1. ns per wait; *futex gets fastsync's futex
 * calls per wait. */
static double serial(int impl, long n, double *futex)
{
    struct bar b = bar_new(impl, 1);
    long s = 0;
    unsigned long f0 = bench_futex_calls();
    uint64_t t0 = bench_now_ns();
    switch (impl) {
    case IMPL_FS: s = loop_serial_fs(b.fs, n); break;
    case IMPL_PEER: s = loop_serial_peer(b.peer, n); break;
#if defined(__cplusplus)
    default: s = loop_serial_cxx(b.cxx, n); break;
#else
    default: break;
#endif
    }
    uint64_t t1 = bench_now_ns();
    *futex = (double)(bench_futex_calls() - f0) / (double)n;
    if (impl_serial(impl) && s != n) bench_fail("serial: a wait on a barrier of count 1 was not the SERIAL one");
    bar_free(&b);
    return (double)(t1 - t0) / (double)n;
}

/* ---- the rounds: T threads at one barrier ---- */
struct run {
    struct bar b;
    int nt;
    atomic_long last;            /* the last round (from 0), LONG_MAX until thread 0 sets it */
    atomic_ulong slot[MAXT * 8]; /* [thread * 8]: the round it is in (one cache line each) */
    atomic_int go, stop, bad;
};

struct th {
    pthread_t t;
    struct run *r;
    int index;
    long rounds, serials;
};

static void *worker(void *p)
{
    struct th *me = (struct th *)p;
    struct run *r = me->r;
    const int next = (me->index + 1) % r->nt;
    long serials = 0;
    int bad = 0;
    bench_limit_cpus(CPUS);
    /* acquire: the start flag, after main set up the run (pairs with main's release store) */
    while (!atomic_load_explicit(&r->go, memory_order_acquire)) sched_yield();
    long i = 0;
    for (;; i++) {
        /* relaxed, both: the barrier orders them (the check is of the barrier's guarantee):
         * every thread's store of i + 1 comes before its wait of round i, which happens
         * before this thread's return from that wait; so the load reads that store or a
         * later one (i + 2: the neighbour is in the next round already), never an earlier. */
        atomic_store_explicit(&r->slot[me->index * 8], (unsigned long)i + 1, memory_order_relaxed);
        serials += bar_wait(&r->b);
        unsigned long s = atomic_load_explicit(&r->slot[next * 8], memory_order_relaxed);
        bad |= s != (unsigned long)i + 1 && s != (unsigned long)i + 2;
        /* The end, the same round for every thread: thread 0, back from round i once the box
         * is over (main's stop; relaxed: only a signal), sets the last round to i + 1 before
         * it arrives in round i + 1. relaxed, the store and every thread's load: the barrier
         * orders them, as the slots above: a thread back from round i + 1 reads i + 1 (that
         * arrival happens before its return); one back from round i reads i + 1 or the
         * initial LONG_MAX, either of which lets it go on to round i + 1. So every thread
         * runs rounds 0 to i + 1, and none waits for one that stopped. */
        if (me->index == 0 && atomic_load_explicit(&r->last, memory_order_relaxed) == LONG_MAX &&
            atomic_load_explicit(&r->stop, memory_order_relaxed))
            atomic_store_explicit(&r->last, i + 1, memory_order_relaxed);
        if (i >= atomic_load_explicit(&r->last, memory_order_relaxed)) break;
    }
    me->rounds = i + 1;
    me->serials = serials;
    if (bad) atomic_store_explicit(&r->bad, 1, memory_order_relaxed); /* read after the join */
    bench_futex_flush();
    return NULL;
}

/* nt threads, for `ms` milliseconds (0: exactly `n` rounds): rounds per second; *futex gets
 * fastsync's futex calls per round. */
static double rounds(int impl, int nt, unsigned ms, long n, double *futex)
{
    struct run *r = (struct run *)bench_alloc(sizeof *r);
    struct th t[MAXT];
    r->b = bar_new(impl, (unsigned)nt);
    r->nt = nt;
    atomic_init(&r->last, ms ? LONG_MAX : n - 1);
    unsigned long f0 = bench_futex_calls();
    for (int i = 0; i < nt; i++) {
        t[i].r = r;
        t[i].index = i;
        t[i].t = bench_thread_start(worker, &t[i]);
    }
    uint64_t t0 = bench_now_ns();
    atomic_store_explicit(&r->go, 1, memory_order_release); /* pairs with the workers' acquire */
    if (ms) {
        bench_sleep_ns((uint64_t)ms * 1000000u);
        atomic_store_explicit(&r->stop, 1, memory_order_relaxed); /* see worker() */
    }
    long serials = 0, rounds = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i].t, NULL);
        serials += t[i].serials;
        if (i > 0 && t[i].rounds != rounds) bench_fail("rounds: the threads ran different numbers of rounds");
        rounds = t[i].rounds;
    }
    double secs = (double)(bench_now_ns() - t0) / 1e9;
    if (atomic_load_explicit(&r->bad, memory_order_relaxed))
        bench_fail("rounds: a wait returned before its round's last arrival, or without its writes");
    if (impl_serial(impl) && serials != rounds) bench_fail("rounds: not exactly one SERIAL return per round");
    *futex = (double)(bench_futex_calls() - f0) / (double)rounds;
    bar_free(&r->b);
    free(r);
    return (double)rounds / secs;
}

static const int threads[] = { 2, 4, 8 };
enum { NT = sizeof threads / sizeof threads[0] };

/* --op: one loop, no output. */
static int run_op(const char *op, long n)
{
    double unused;
    int impl = -1, nt = 0;
    if (n <= 0) n = 1;
    const char *dash = strrchr(op, '-');
    if (dash && strcmp(dash, "-fs") == 0) impl = IMPL_FS;
    else if (dash && strcmp(dash, "-peer") == 0) impl = IMPL_PEER;
    else if (dash && strcmp(dash, "-cxx") == 0 && HAVE_FSCXX) impl = IMPL_FSCXX;
    if (impl >= 0 && strncmp(op, "serial-", 7) == 0) (void)serial(impl, n, &unused);
    else if (impl >= 0 && sscanf(op, "rounds%d-", &nt) == 1 && nt >= 1 && nt <= MAXT)
        (void)rounds(impl, nt, 0, n, &unused);
    else {
        fprintf(stderr, "barrier: unknown --op %s\n", op);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    /* A second thread, before any measurement (see "serial" above). */
    bench_second_thread();
    unsigned ms = (unsigned)bench_take_opt(&argc, argv, "--ms", 0);
    int argn = bench_parse(argc, argv, &o);
    if (o.op) return run_op(o.op, o.iters);
    bool t_serial = argn == 1, t_rounds = argn == 1;
    for (int i = 1; i < argn; i++) {
        if (strcmp(argv[i], "serial") == 0) t_serial = true;
        else if (strcmp(argv[i], "rounds") == 0) t_rounds = true;
        else {
            fprintf(stderr, "barrier: unknown regime %s\n", argv[i]);
            return 2;
        }
    }
    const long n_serial = o.iters ? o.iters : o.quick ? 200000 : 2000000;
    if (ms == 0) ms = o.quick ? 50 : 200;
    const int R = o.reps;
    /* samples: serial [impl][ns, futex][rep]; rounds [impl][T][rounds/s, futex][rep] */
    double *v = (double *)calloc((size_t)R * NIMPL * (2 + NT * 2), sizeof(double));
    if (!v) bench_fail("out of memory");
#define SER(i, m, r) v[(((i) * 2 + (m)) * R) + (r)]
#define RND(i, k, m, r) v[NIMPL * 2 * R + ((((i) * NT + (k)) * 2 + (m)) * R) + (r)]

    for (int r = 0; r < R; r++)
        for (int i = 0; i < NIMPL; i++) {
            if (!impl_there(i)) continue;
            if (t_serial) SER(i, 0, r) = serial(i, n_serial, &SER(i, 1, r));
            for (int k = 0; t_rounds && k < NT; k++)
                RND(i, k, 0, r) = rounds(i, threads[k], ms, 0, &RND(i, k, 1, r));
        }

    printf("barrier: %s, fastsync FASTSYNC_SPIN=%d+%d; median of %d; %ld CPUs, threads limited to %d\n",
           o.build, FASTSYNC_SPIN, FASTSYNC_SPIN_YIELDS, R, bench_ncpu(), CPUS);
#if defined(__cplusplus)
    if (!HAVE_FSCXX) printf("fastsync::barrier: not in fastsync.hpp (left out)\n");
#endif
    const char *B = "barrier";
    char metric[64];
    printf("%-24s %9s %12s", "", "serial ns", "serial futex");
    for (int k = 0; t_rounds && k < NT; k++) printf(" %3d threads: rounds/s [futex]", threads[k]);
    printf("\n");
    for (int i = 0; i < NIMPL; i++) {
        if (!impl_there(i)) continue;
        const char *var = impl_variant[i];
        int own = impl_own_futex(i);
        printf("%-24s", impl_name[i]);
        if (t_serial) {
            double ns = bench_csv_samples(&o, B, var, "serial_ns", "ns", &SER(i, 0, 0), R);
            if (own)
                printf(" %9.2f %12.3f", ns, bench_csv_samples(&o, B, var, "serial_futex", "calls", &SER(i, 1, 0), R));
            else
                printf(" %9.2f %12s", ns, "-");
        } else
            printf(" %9s %12s", "-", "-");
        for (int k = 0; t_rounds && k < NT; k++) {
            snprintf(metric, sizeof metric, "rounds%d_per_s", threads[k]);
            double rs = bench_csv_samples(&o, B, var, metric, "rounds/s", &RND(i, k, 0, 0), R);
            if (own) {
                snprintf(metric, sizeof metric, "rounds%d_futex", threads[k]);
                double fx = bench_csv_samples(&o, B, var, metric, "calls", &RND(i, k, 1, 0), R);
                printf(" %20.0f [%6.2f]", rs, fx);
            } else
                printf(" %20.0f [%6s]", rs, "-");
        }
        printf("\n");
    }
    printf("(serial: one thread, waits on a barrier of count 1, each the SERIAL one, ns per wait; futex:"
           " fastsync's own calls per wait (per round below), through its replaceable futex layer (bench/run"
           " counts the peer's); rounds: T threads limited to CPUs 0-1 meet at one barrier of count T for"
           " %u ms, nothing between; rounds per second)\n",
           ms);
    free(v);
    return 0;
}
