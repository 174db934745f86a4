/* SPDX-License-Identifier: MIT */
/* bench/latch.c - fastsync_latch_t against std::latch (issue 21).
 *
 * One source, three builds, as bench/once.c: built with gcc or musl-gcc -static (the C
 * library has no latch: fastsync's figures alone, for comparison across the builds), and as
 * C++23 (g++ -x c++ -std=c++23) against libstdc++'s std::latch, with fastsync.hpp's
 * fastsync::latch beside fastsync's C calls where fastsync.hpp has one (see "the hook"
 * below).
 *   cd       one thread, n count_downs by 1 on one latch of count n, nobody waiting (the last
 *            opens it): ns per count_down, and fastsync's futex calls per count_down (its
 *            replaceable futex layer; bench/run counts the peers' with perf stat or strace,
 *            and instructions and RMWs with callgrind). Measured once the process has had a
 *            second thread, as in bench/mutex.c.
 *   open     one thread, n fresh latches of count 1, each opened by one count_down, nobody
 *            waiting: ns per opening, and fastsync's futex calls per opening (none is needed:
 *            no one sleeps).
 *   wait     one thread, n waits on an open latch: ns per wait.
 *   round    N threads (2, 4, 8) count a fresh latch of count N down once each while M
 *            threads (--waiters M; default M = N) wait on it, round after round (a fresh
 *            latch each round); the threads pinned to CPUs 0 and 1 in turn (as bench/once's
 *            race, and for its reason: a wake to the other CPU costs what a wake to the same
 *            one does not). Each counter waits until every waiter has come to its wait
 *            (each counts itself just before it), then sleeps SLEEP_US (the CPUs are the
 *            waiters' to go to sleep on), notes its clock and counts down. Printed: the time
 *            from the last counter's clock to the last waiter's return (median over the
 *            rounds, in µs): what opening the latch and waking the waiters costs; and
 *            fastsync's futex calls per round. The threads poll for the next round with
 *            sched_yield; the last one back from a round releases the next (main only the
 *            first). The waiters' history before they sleep counts here: libstdc++'s
 *            std::latch::wait spins 16 times (12 pauses, 4 sched_yields) before its futex
 *            wait, and fastsync's spins too (FASTSYNC_SPIN, FASTSYNC_SPIN_YIELDS); on the
 *            2-vCPU VM, at 2+2 that spin alone, ending some 100 µs before the opening, took
 *            the time from ~28 µs to ~5 µs (fastsync's waiter before it spun: 26-30 µs,
 *            std::latch 4.8-5.0 beside it), and the opening count_down's own call from ~15
 *            µs to ~4 µs; at 4+4 and 8+8 it made no difference. A scheduler effect, not
 *            the wake's cost.
 * Each counter writes its slot of the round before its count_down: a waiter that returns
 * and reads a slot not yet written fails the run; so does a latch not open after its count
 * of count_downs (try_wait), or a count_down that fastsync refuses.
 * Implementations alternate within each repetition; medians of --reps (bench/run runs one
 * repetition per round, the builds taking turns, as for bench/once).
 *
 *   latch [--quick] [--reps N] [--rounds N] [--waiters M] [--csv FILE] [--build NAME] [REGIME...]
 *         REGIME: cd open wait round (default: all)
 *   latch --op OP --iters N     one loop only, no output (for callgrind, perf, strace):
 *         OP: cd-fs cd-peer cd-cxx (n count_downs: loop_cd_fs ...), open-fs ... (n fresh
 *         latches opened: loop_open_fs ...), wait-fs ... (n waits on an open latch:
 *         loop_wait_fs ...), round<N>-fs ... (N counters and N waiters, n rounds); fs:
 *         fastsync_latch_t, peer: std::latch and cxx: fastsync::latch (C++ build only)
 */
#include "bench.h"

#if defined(__cplusplus)
/* ---- adapter: the peer, libstdc++'s std::latch (this file built as C++23); and
 * fastsync.hpp's fastsync::latch ---- */
#include "fastsync.hpp"
#include <cstddef>
#include <latch>
#include <new>
#include <type_traits>
#define HAVE_PEER 1
#define PEER_NAME "std::latch"
typedef std::latch peer_latch;
static peer_latch *peer_new(long n, unsigned count)
{
    peer_latch *l = (peer_latch *)bench_alloc((size_t)n * sizeof *l);
    for (long i = 0; i < n; i++) new (&l[i]) peer_latch((std::ptrdiff_t)count);
    return l;
}
static void peer_free(peer_latch *l, long n)
{
    for (long i = 0; i < n; i++) l[i].~peer_latch();
    free(l);
}
static inline void peer_count_down(peer_latch *l) { l->count_down(); }
static inline void peer_wait(peer_latch *l) { l->wait(); }
static inline bool peer_open(peer_latch *l) { return l->try_wait(); }

/* The hook for fastsync.hpp's fastsync::latch (issue 21's C++ types), as bench/once.c's for
 * fastsync::call_once: a stand-in declared here and made visible in namespace fastsync
 * through a using-directive is hidden by a fastsync::latch that fastsync.hpp declares
 * itself (qualified lookup looks in the namespace first, in the namespaces it nominates
 * only when that finds nothing). So fastsync::latch is fastsync.hpp's once it has one (with
 * std::latch's interface: a constructor from the count, count_down(), wait(), try_wait()),
 * and this file builds and leaves it out ("fastsync::latch: not in fastsync.hpp") before. */
namespace bench_latch_absent {
struct latch {
    explicit latch(std::ptrdiff_t) {}
    void count_down() { bench_fail("fastsync::latch is not in fastsync.hpp"); }
    void wait() { bench_fail("fastsync::latch is not in fastsync.hpp"); }
    bool try_wait() { return false; }
};
} // namespace bench_latch_absent
namespace fastsync {
using namespace bench_latch_absent;
}
#define HAVE_FSCXX (!std::is_same<fastsync::latch, bench_latch_absent::latch>::value)
typedef fastsync::latch fscxx_latch;
static fscxx_latch *fscxx_new(long n, unsigned count)
{
    fscxx_latch *l = (fscxx_latch *)bench_alloc((size_t)n * sizeof *l);
    for (long i = 0; i < n; i++) new (&l[i]) fscxx_latch((std::ptrdiff_t)count);
    return l;
}
static void fscxx_free(fscxx_latch *l, long n)
{
    for (long i = 0; i < n; i++) l[i].~fscxx_latch();
    free(l);
}
static inline void fscxx_count_down(fscxx_latch *l) { l->count_down(); }
static inline void fscxx_wait(fscxx_latch *l) { l->wait(); }
static inline bool fscxx_open(fscxx_latch *l) { return l->try_wait(); }
#else
#define HAVE_PEER 0 /* no latch in the C library */
#define HAVE_FSCXX 0
#define PEER_NAME "-"
#endif

/* ---- adapter: fastsync ---- */
static fastsync_latch_t *fs_new(long n, unsigned count)
{
    fastsync_latch_t *l = (fastsync_latch_t *)bench_alloc((size_t)n * sizeof *l);
    for (long i = 0; i < n; i++)
        if (fastsync_latch_init(&l[i], count, 0) != 0) bench_fail("fastsync_latch_init");
    return l;
}
static void fs_free(fastsync_latch_t *l, long n)
{
    for (long i = 0; i < n; i++)
        if (fastsync_latch_destroy(&l[i]) != 0) bench_fail("fastsync_latch_destroy: a waiter still registered");
    free(l);
}
/* a count_down refused (EINVAL): each thread's own, read by that thread after its loop */
static BENCH_TLS int fs_refused;
static inline void fs_count_down(fastsync_latch_t *l)
{
    if (fastsync_latch_count_down(l, 1) != 0) fs_refused = 1;
}
static inline void fs_wait(fastsync_latch_t *l) { (void)fastsync_latch_wait(l); }
static inline bool fs_open(fastsync_latch_t *l) { return fastsync_latch_trywait(l) == 0; }

/* Implementations: fastsync_latch_t, (C++ build) std::latch and, where fastsync.hpp has it,
 * fastsync::latch. */
enum { IMPL_FS, IMPL_PEER, IMPL_FSCXX, NIMPL };
enum { MAXN = 8, MAXT = 2 * MAXN, CPUS = 2, SLEEP_US = 100 };
static const char *const impl_variant[NIMPL] = { "fastsync", "peer", "fastsync_cxx" };
static const char *const impl_name[NIMPL] = { "fastsync_latch_t", PEER_NAME, "fastsync::latch" };
static int impl_there(int impl) { return impl == IMPL_FS || (impl == IMPL_PEER ? HAVE_PEER : HAVE_FSCXX); }
static int impl_own_futex(int impl) { return impl != IMPL_PEER; } /* counted by its futex layer */

/* n latches of count `count`, of any implementation. */
struct latches {
    int impl;
    long n;
    fastsync_latch_t *fs;
#if defined(__cplusplus)
    peer_latch *peer;
    fscxx_latch *cxx;
#endif
};
static struct latches latches_new(int impl, long n, unsigned count)
{
    struct latches l;
    l.impl = impl;
    l.n = n;
    l.fs = impl == IMPL_FS ? fs_new(n, count) : NULL;
#if defined(__cplusplus)
    l.peer = impl == IMPL_PEER ? peer_new(n, count) : NULL;
    l.cxx = impl == IMPL_FSCXX ? fscxx_new(n, count) : NULL;
#endif
    return l;
}
static void latches_free(struct latches *l)
{
    if (l->fs) fs_free(l->fs, l->n);
#if defined(__cplusplus)
    if (l->peer) peer_free(l->peer, l->n);
    if (l->cxx) fscxx_free(l->cxx, l->n);
#endif
}
static inline void latch_count_down(struct latches *l, long i)
{
#if defined(__cplusplus)
    if (l->impl == IMPL_PEER) peer_count_down(&l->peer[i]);
    else if (l->impl == IMPL_FSCXX) fscxx_count_down(&l->cxx[i]);
    else
#endif
        fs_count_down(&l->fs[i]);
}
static inline void latch_wait(struct latches *l, long i)
{
#if defined(__cplusplus)
    if (l->impl == IMPL_PEER) peer_wait(&l->peer[i]);
    else if (l->impl == IMPL_FSCXX) fscxx_wait(&l->cxx[i]);
    else
#endif
        fs_wait(&l->fs[i]);
}
static inline bool latch_open(struct latches *l, long i)
{
#if defined(__cplusplus)
    if (l->impl == IMPL_PEER) return peer_open(&l->peer[i]);
    if (l->impl == IMPL_FSCXX) return fscxx_open(&l->cxx[i]);
#endif
    return fs_open(&l->fs[i]);
}

/* The loops that callgrind measures (bench/run: --toggle-collect=loop_cd_fs etc.): n
 * count_downs on one latch, n fresh latches opened (one count_down each), n waits on one
 * open latch. */
#define LATCH_LOOPS(S, P, type)                                                               \
    BENCH_NOINLINE static void loop_cd_##S(type *l, long n)                                   \
    {                                                                                         \
        for (long i = 0; i < n; i++) P##_count_down(l);                                       \
    }                                                                                         \
    BENCH_NOINLINE static void loop_open_##S(type *l, long n)                                 \
    {                                                                                         \
        for (long i = 0; i < n; i++) P##_count_down(&l[i]);                                   \
    }                                                                                         \
    BENCH_NOINLINE static void loop_wait_##S(type *l, long n)                                 \
    {                                                                                         \
        for (long i = 0; i < n; i++) P##_wait(l);                                             \
    }
LATCH_LOOPS(fs, fs, fastsync_latch_t)
#if defined(__cplusplus)
LATCH_LOOPS(peer, peer, peer_latch)
LATCH_LOOPS(cxx, fscxx, fscxx_latch)
#endif

enum { REG_CD, REG_OPEN, REG_WAIT, NREG };
static const char *const reg_name[NREG] = { "cd", "open", "wait" };

/* One thread, regime `reg`, n operations (cd: at most FASTSYNC_LATCH_MAX, fastsync's largest
 * count). ns per operation; *futex gets fastsync's futex calls per operation. */
static double one_thread(int impl, int reg, long n, double *futex)
{
    if (reg == REG_CD && n > (long)FASTSYNC_LATCH_MAX) n = (long)FASTSYNC_LATCH_MAX;
    long k = reg == REG_OPEN ? n : 1;
    struct latches l = latches_new(impl, k, reg == REG_CD ? (unsigned)n : reg == REG_OPEN ? 1u : 0u);
    fs_refused = 0;
    unsigned long f0 = bench_futex_calls();
    uint64_t t0 = bench_now_ns();
#define RUN_LOOP(S, obj)                                                                      \
    (reg == REG_CD ? loop_cd_##S(obj, n) : reg == REG_OPEN ? loop_open_##S(obj, n) : loop_wait_##S(obj, n))
    if (impl == IMPL_FS) RUN_LOOP(fs, l.fs);
#if defined(__cplusplus)
    else if (impl == IMPL_PEER) RUN_LOOP(peer, l.peer);
    else RUN_LOOP(cxx, l.cxx);
#endif
#undef RUN_LOOP
    uint64_t t1 = bench_now_ns();
    *futex = (double)(bench_futex_calls() - f0) / (double)n;
    if (fs_refused) bench_fail("fastsync_latch_count_down refused a count_down within the count");
    for (long i = 0; i < k; i++)
        if (!latch_open(&l, i)) bench_fail("a latch is not open after its count of count_downs");
    if (reg == REG_CD && impl == IMPL_FS && fastsync_latch_count_down(l.fs, 1) != EINVAL)
        bench_fail("fastsync_latch_count_down below 0 was not refused: the count was not exact");
    latches_free(&l);
    return (double)(t1 - t0) / (double)n;
}

/* ---- the rounds: N counters, M waiters, a fresh latch each round ---- */
struct rounds {
    struct latches l;
    long rounds;
    int nc, nw;           /* counters, waiters */
    unsigned long *slots; /* [round * nc + counter]: written before its count_down */
    uint64_t *t_cd;       /* [round * nc + counter]: the counter's clock before its count_down */
    uint64_t *t_back;     /* [round * nw + waiter]: the waiter's clock when its wait returned */
    atomic_long round;    /* the last round released (-1: none) */
    atomic_long finished; /* threads done with a round, all rounds */
    atomic_long arrived;  /* waits about to be made, all rounds */
    atomic_int ready;     /* threads started (main releases round 0 once all are) */
    atomic_int bad;
};

struct member {
    pthread_t t;
    struct rounds *r;
    int index; /* 0..nc-1: a counter; nc..nc+nw-1: a waiter */
};

static void *member(void *p)
{
    struct member *me = (struct member *)p;
    struct rounds *r = me->r;
    const int nt = r->nc + r->nw, counter = me->index < r->nc;
    /* pinned, alternately to CPU 0 and CPU 1 (see "round" above) */
    bench_pin(me->index % CPUS);
    /* relaxed: only tells main that this thread polls for round 0; nothing is published. */
    atomic_fetch_add_explicit(&r->ready, 1, memory_order_relaxed);
    for (long i = 0; i < r->rounds; i++) {
        /* acquire: pairs with the release store of round i (main's for round 0, else the
         * last thread's to finish round i - 1, below): the previous round, its latch's last
         * use among them, happens before this one. */
        while (atomic_load_explicit(&r->round, memory_order_acquire) < i) sched_yield();
        if (counter) {
            /* relaxed: only a rendezvous in time (every waiter at its wait); what the round
             * checks is published by the latch itself. */
            while (atomic_load_explicit(&r->arrived, memory_order_relaxed) < (long)r->nw * (i + 1)) sched_yield();
            bench_sleep_ns((uint64_t)SLEEP_US * 1000u);
            r->slots[i * r->nc + me->index] = (unsigned long)i + 1; /* read by the waiters after their wait */
            r->t_cd[i * r->nc + me->index] = bench_now_ns();        /* read by main after the join */
            latch_count_down(&r->l, i);
        } else {
            atomic_fetch_add_explicit(&r->arrived, 1, memory_order_relaxed); /* see the counters */
            latch_wait(&r->l, i);
            r->t_back[i * r->nw + me->index - r->nc] = bench_now_ns();
            /* the latch's own guarantee: every counter's writes before its count_down happen
             * before the wait's return */
            for (int k = 0; k < r->nc; k++)
                if (r->slots[i * r->nc + k] != (unsigned long)i + 1)
                    atomic_store_explicit(&r->bad, 1, memory_order_relaxed); /* read after the join */
        }
        /* acq_rel: the adds of round i form a release sequence, so the last one reads every
         * thread's accesses of round i (release) and releases round i + 1 after them
         * (acquire); no third thread (main) competes for the CPUs in the round. */
        if (atomic_fetch_add_explicit(&r->finished, 1, memory_order_acq_rel) + 1 == (long)nt * (i + 1) &&
            i + 1 < r->rounds)
            atomic_store_explicit(&r->round, i + 1, memory_order_release); /* pairs with the acquire above */
    }
    if (fs_refused) atomic_store_explicit(&r->bad, 2, memory_order_relaxed); /* (this thread's own) */
    bench_futex_flush();
    return NULL;
}

/* nc counters, nw waiters, `rounds` rounds: the median over the rounds of the time from the
 * last counter's clock before its count_down to the last waiter's return (µs); *futex gets
 * fastsync's futex calls per round. */
static double rounds(int impl, int nc, int nw, long rounds, double *futex)
{
    struct rounds *r = (struct rounds *)bench_alloc(sizeof *r);
    struct member t[MAXT];
    r->l = latches_new(impl, rounds, (unsigned)nc);
    r->rounds = rounds;
    r->nc = nc;
    r->nw = nw;
    r->slots = (unsigned long *)bench_alloc((size_t)rounds * (size_t)nc * sizeof *r->slots);
    r->t_cd = (uint64_t *)bench_alloc((size_t)rounds * (size_t)nc * sizeof *r->t_cd);
    r->t_back = (uint64_t *)bench_alloc((size_t)rounds * (size_t)nw * sizeof *r->t_back);
    atomic_init(&r->round, -1);
    unsigned long f0 = bench_futex_calls();
    for (int i = 0; i < nc + nw; i++) {
        t[i].r = r;
        t[i].index = i;
        t[i].t = bench_thread_start(member, &t[i]);
    }
    /* relaxed: every thread polls for round 0 (see the thread's add) */
    while (atomic_load_explicit(&r->ready, memory_order_relaxed) < nc + nw) sched_yield();
    atomic_store_explicit(&r->round, 0, memory_order_release); /* pairs with the threads' acquire */
    for (int i = 0; i < nc + nw; i++) pthread_join(t[i].t, NULL);
    int bad = atomic_load_explicit(&r->bad, memory_order_relaxed);
    if (bad == 2) bench_fail("round: fastsync_latch_count_down refused a count_down within the count");
    if (bad) bench_fail("round: a wait returned before a counter's write was visible");
    for (long i = 0; i < rounds; i++)
        if (!latch_open(&r->l, i)) bench_fail("round: a latch is not open after its count of count_downs");
    double *us = (double *)calloc((size_t)rounds, sizeof *us);
    if (!us) bench_fail("out of memory");
    for (long i = 0; i < rounds; i++) {
        uint64_t open = 0, last = 0;
        for (int k = 0; k < nc; k++) open = r->t_cd[i * nc + k] > open ? r->t_cd[i * nc + k] : open;
        for (int k = 0; k < nw; k++) last = r->t_back[i * nw + k] > last ? r->t_back[i * nw + k] : last;
        us[i] = last > open ? (double)(last - open) / 1e3 : 0;
    }
    double med = bench_median(us, (int)rounds);
    *futex = (double)(bench_futex_calls() - f0) / (double)rounds;
    free(us);
    free(r->slots);
    free(r->t_cd);
    free(r->t_back);
    latches_free(&r->l);
    free(r);
    return med;
}

static const int counters[] = { 2, 4, 8 };
enum { NN = sizeof counters / sizeof counters[0] };

/* --op: one loop, no output. */
static int run_op(const char *op, long n, int nw)
{
    double unused;
    int impl = -1, nc = 0;
    if (n <= 0) n = 1;
    const char *dash = strrchr(op, '-');
    if (dash && strcmp(dash, "-fs") == 0) impl = IMPL_FS;
    else if (dash && strcmp(dash, "-peer") == 0 && HAVE_PEER) impl = IMPL_PEER;
    else if (dash && strcmp(dash, "-cxx") == 0 && HAVE_FSCXX) impl = IMPL_FSCXX;
    int reg = -1;
    for (int g = 0; g < NREG; g++)
        if (dash && (size_t)(dash - op) == strlen(reg_name[g]) && strncmp(op, reg_name[g], strlen(reg_name[g])) == 0)
            reg = g;
    if (impl >= 0 && reg >= 0) (void)one_thread(impl, reg, n, &unused);
    else if (impl >= 0 && sscanf(op, "round%d-", &nc) == 1 && nc >= 1 && nc <= MAXN)
        (void)rounds(impl, nc, nw > 0 ? nw : nc, n, &unused);
    else {
        fprintf(stderr, "latch: unknown --op %s\n", op);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    /* A second thread, before any measurement (see "cd" above). */
    bench_second_thread();
    long nrounds = bench_take_opt(&argc, argv, "--rounds", 0);
    int nw = (int)bench_take_opt(&argc, argv, "--waiters", 0);
    if (nw > MAXN) nw = MAXN;
    int argn = bench_parse(argc, argv, &o);
    if (o.op) return run_op(o.op, o.iters, nw);
    bool t_reg[NREG], t_round = argn == 1;
    for (int g = 0; g < NREG; g++) t_reg[g] = argn == 1;
    for (int i = 1; i < argn; i++) {
        int g = 0;
        while (g < NREG && strcmp(argv[i], reg_name[g]) != 0) g++;
        if (g < NREG) t_reg[g] = true;
        else if (strcmp(argv[i], "round") == 0) t_round = true;
        else {
            fprintf(stderr, "latch: unknown regime %s\n", argv[i]);
            return 2;
        }
    }
    const long n_one[NREG] = { o.iters ? o.iters : o.quick ? 200000 : 1000000,
                               o.iters ? o.iters / 10 + 1 : o.quick ? 20000 : 200000,
                               o.iters ? o.iters : o.quick ? 1000000 : 20000000 };
    if (nrounds <= 0) nrounds = o.quick ? 100 : 500;
    const int R = o.reps;
    /* samples: [impl][regime][ns, futex][rep]; rounds [impl][N][us, futex][rep] */
    double *v = (double *)calloc((size_t)R * NIMPL * (NREG * 2 + NN * 2), sizeof(double));
    if (!v) bench_fail("out of memory");
#define ONE(i, g, m, r) v[((((i) * NREG + (g)) * 2 + (m)) * R) + (r)]
#define ROUND(i, k, m, r) v[(int)NIMPL * NREG * 2 * R + ((((i) * NN + (k)) * 2 + (m)) * R) + (r)]

    for (int r = 0; r < R; r++)
        for (int i = 0; i < NIMPL; i++) {
            if (!impl_there(i)) continue;
            for (int g = 0; g < NREG; g++)
                if (t_reg[g]) ONE(i, g, 0, r) = one_thread(i, g, n_one[g], &ONE(i, g, 1, r));
            for (int k = 0; t_round && k < NN; k++)
                ROUND(i, k, 0, r) = rounds(i, counters[k], nw > 0 ? nw : counters[k], nrounds, &ROUND(i, k, 1, r));
        }

    printf("latch: %s, fastsync FASTSYNC_SPIN=%d+%d; median of %d; %ld CPUs, threads pinned to the first %d in turn\n",
           o.build, FASTSYNC_SPIN, FASTSYNC_SPIN_YIELDS, R, bench_ncpu(), CPUS);
#if defined(__cplusplus)
    if (!HAVE_FSCXX) printf("fastsync::latch: not in fastsync.hpp (left out)\n");
#else
    printf("(no latch in the C library: fastsync's figures only; std::latch in the C++ build)\n");
#endif
    const char *B = "latch";
    char metric[64];
    printf("%-18s %9s %9s %9s %9s %9s %9s", "", "cd ns", "cd futex", "open ns", "open futex", "wait ns",
           "wait futex");
    for (int k = 0; t_round && k < NN; k++)
        printf(" %5s%d/%d us [futex]", "round", counters[k], nw > 0 ? nw : counters[k]);
    printf("\n");
    for (int i = 0; i < NIMPL; i++) {
        if (!impl_there(i)) continue;
        const char *var = impl_variant[i];
        int own = impl_own_futex(i);
        printf("%-18s", impl_name[i]);
        for (int g = 0; g < NREG; g++) {
            if (!t_reg[g]) {
                printf(" %9s %9s", "-", "-");
                continue;
            }
            snprintf(metric, sizeof metric, "%s_ns", reg_name[g]);
            double ns = bench_csv_samples(&o, B, var, metric, "ns", &ONE(i, g, 0, 0), R);
            if (own) {
                snprintf(metric, sizeof metric, "%s_futex", reg_name[g]);
                double fx = bench_csv_samples(&o, B, var, metric, "calls", &ONE(i, g, 1, 0), R);
                printf(" %9.2f %9.3f", ns, fx);
            } else
                printf(" %9.2f %9s", ns, "-");
        }
        for (int k = 0; t_round && k < NN; k++) {
            snprintf(metric, sizeof metric, "round%d_wake_us", counters[k]);
            double us = bench_csv_samples(&o, B, var, metric, "us", &ROUND(i, k, 0, 0), R);
            if (own) {
                snprintf(metric, sizeof metric, "round%d_futex", counters[k]);
                double fx = bench_csv_samples(&o, B, var, metric, "calls", &ROUND(i, k, 1, 0), R);
                printf(" %8.1f [%6.2f]", us, fx);
            } else
                printf(" %8.1f [%6s]", us, "-");
        }
        printf("\n");
    }
    printf("(cd: one thread, count_downs by 1 on a latch of that count, ns per count_down; open: fresh"
           " latches of count 1, each opened by one count_down, nobody waiting, ns per opening; wait: waits"
           " on an open latch, ns per wait; futex: fastsync's own calls per operation, through its"
           " replaceable futex layer (bench/run counts the peer's); round<N>/<M>: N counters and M waiters"
           " pinned to CPUs 0-1 in turn, a fresh latch of count N each round, each counter waiting until"
           " every waiter is at its wait, sleeping %d us, then counting down once; median over %ld rounds"
           " of the time from the last counter's count_down to the last waiter's return, [fastsync's futex"
           " calls per round])\n",
           SLEEP_US, nrounds);
    free(v);
    return 0;
}
