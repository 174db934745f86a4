/* SPDX-License-Identifier: MIT */
/* bench/once.c - fastsync_once_t against the peers' one-time initialisation (issue 21).
 *
 * One source, three builds (as bench/mutex.c and bench/rwlock.c): built with gcc the peer is
 * glibc's pthread_once, with musl-gcc -static musl's, and as C++23 (g++ -x c++ -std=c++23)
 * libstdc++'s std::call_once, with fastsync.hpp's fastsync::call_once beside fastsync's C
 * calls where fastsync.hpp has one (see "the hook" below). fastsync is measured twice:
 * fastsync_once (fn and arg) and the halves, fastsync_once_begin + fastsync_once_commit.
 *   done     one thread, n calls on a once already done: ns per call, and fastsync's futex
 *            calls per call (its replaceable futex layer; bench/run counts the peers' with
 *            perf stat or strace, and instructions and RMWs with callgrind). Measured once
 *            the process has had a second thread, as in bench/mutex.c.
 *   first    one thread, n fresh onces, each completed once, nobody waiting: ns per first
 *            completion, and fastsync's futex calls per completion (none is needed: no one
 *            sleeps; glibc's pthread_once makes a FUTEX_WAKE on every one, which bench/run
 *            counts).
 *   race     T threads (2, 4, 8), pinned to CPUs 0 and 1 in turn, call the same fresh once
 *            together, round after round (a fresh once each round). The initialiser waits
 *            until every thread has come to its call (each counts itself just before it),
 *            so that the others wait for it inside the once however the threads were
 *            scheduled, then works INIT_WORK polls (time for them to go to sleep) and notes
 *            its clock as it returns. Printed: the time from the initialiser's return to the
 *            last thread's (median over the rounds, in µs): what waking the waiters costs,
 *            the commit's wake and the sleepers' wakeup, or nothing much where they spin;
 *            and fastsync's futex calls per round. The threads poll for the next round with
 *            sched_yield; the last one back from a round releases the next (main only the
 *            first).
 * Every initialiser counts its calls and writes the round's slot: a caller that returns and
 * reads the slot not yet written, or a count other than one per once, fails the run.
 * Implementations alternate within each repetition; medians of --reps (bench/run runs one
 * repetition per round, the builds taking turns, as for bench/mutex and bench/rwlock).
 *
 *   once [--quick] [--reps N] [--rounds N] [--csv FILE] [--build NAME] [REGIME...]
 *        REGIME: done first race (default: all)
 *   once --op OP --iters N     one loop only, no output (for callgrind, perf, strace):
 *        OP: done-fs done-fsb done-peer done-cxx (N calls on a done once: loop_done_fs ...),
 *        first-fs first-fsb first-peer first-cxx (N fresh onces, each completed once:
 *        loop_first_fs ...), race<T>-fs ... (T threads, N rounds); fs: fastsync_once, fsb:
 *        fastsync_once_begin + commit, cxx: fastsync::call_once (C++ build only)
 *
 * The shape is the one a benchmark of the other one-shot primitives takes (a latch's
 * count-down + wait against std::latch, a barrier's rounds against pthread_barrier_t and
 * std::barrier): the adapters first (the C library's in C, libstdc++'s in C++, fastsync's
 * C calls and fastsync.hpp's type), then the loops callgrind measures by name
 * (loop_<case>_<op suffix>), the timed regimes, --op, and a table with one CSV row per
 * figure (bench "once", variants fastsync, fastsync_begin, peer, fastsync_cxx); bench/run
 * takes each program's implementations from a table of its own (ONCE_IMPLS there).
 */
#include "bench.h"

/* The initialisers' record, shared by every implementation: how many initialisers ran, and
 * the slot each writes (the round's, so that a caller can check it sees the write). Plain
 * variables: an initialiser writes them while no other runs (one per once, and the rounds
 * follow each other: see race()); the callers read them after their once returned, which
 * happens after the initialiser (the guarantee under test). */
static unsigned long init_calls;
static unsigned long *init_slots; /* NULL: no slot to write */
static long init_slot;

static BENCH_NOINLINE void work(unsigned n) /* as bench/mutex.c's */
{
    volatile unsigned i = 0; /* (C++20 deprecates ++ on a volatile) */
    while (i < n) i = i + 1;
}

static void race_init(void); /* the race's initialiser: see race() */
static int init_racing;      /* in race(): each initialiser is race_init's */

static void on_init(void)
{
    init_calls++;
    if (init_slots) init_slots[init_slot] = init_calls;
    if (init_racing) race_init();
}

#if defined(__cplusplus)
/* ---- adapter: the peer, libstdc++'s std::call_once (this file built as C++23); and
 * fastsync.hpp's fastsync::call_once ---- */
#include "fastsync.hpp"
#include <mutex>
#include <new>
#include <type_traits>
#define PEER_NAME "std::call_once"
typedef std::once_flag peer_once;
static void peer_init(void) { on_init(); }
static peer_once *peer_new(long n) { return new peer_once[(size_t)n]; }
static void peer_free(peer_once *f) { delete[] f; }
static inline void peer_call(peer_once *f) { std::call_once(*f, peer_init); }

/* The hook for fastsync.hpp's fastsync::call_once (issue 21's C++ types). Stand-ins are
 * declared here and made visible in namespace fastsync through a using-directive: a name
 * that fastsync.hpp declares itself hides them (a qualified name is looked up in the
 * namespace first, in the namespaces it nominates only when that finds nothing). So
 * fastsync::once_flag and fastsync::call_once are fastsync.hpp's once it has them (its
 * std::once_flag-like type and std::call_once-like function), and this file builds and
 * leaves fastsync::call_once out ("fastsync::call_once: not in fastsync.hpp") before. */
namespace bench_once_absent {
struct once_flag {
};
template <class F> void call_once(once_flag &, F &&) { bench_fail("fastsync::call_once is not in fastsync.hpp"); }
} // namespace bench_once_absent
namespace fastsync {
using namespace bench_once_absent;
}
#define HAVE_FSCXX (!std::is_same<fastsync::once_flag, bench_once_absent::once_flag>::value)
typedef fastsync::once_flag fscxx_once;
static void fscxx_init(void) { on_init(); }
static fscxx_once *fscxx_new(long n) { return new fscxx_once[(size_t)n]; }
static void fscxx_free(fscxx_once *f) { delete[] f; }
static inline void fscxx_call(fscxx_once *f) { fastsync::call_once(*f, fscxx_init); }
#else
/* ---- adapter: the peer, the C library's pthread_once (glibc with gcc, musl with musl-gcc) */
#if defined(__GLIBC__)
#define PEER_NAME "glibc pthread_once"
#else
#define PEER_NAME "pthread_once"
#endif
#define HAVE_FSCXX 0
typedef pthread_once_t peer_once;
static void peer_init(void) { on_init(); }
static peer_once *peer_new(long n)
{
    static const pthread_once_t fresh = PTHREAD_ONCE_INIT;
    peer_once *f = (peer_once *)bench_alloc((size_t)n * sizeof *f);
    for (long i = 0; i < n; i++) f[i] = fresh;
    return f;
}
static void peer_free(peer_once *f) { free(f); }
static inline void peer_call(peer_once *f) { (void)pthread_once(f, peer_init); }
#endif

/* ---- adapter: fastsync, fastsync_once and the halves ---- */
static void fs_init(void *arg)
{
    (void)arg;
    on_init();
}
static fastsync_once_t *fs_new(long n)
{
    fastsync_once_t *o = (fastsync_once_t *)bench_alloc((size_t)n * sizeof *o);
    for (long i = 0; i < n; i++)
        if (fastsync_once_init(&o[i], 0) != 0) bench_fail("fastsync_once_init");
    return o;
}
static inline void fs_call(fastsync_once_t *o) { (void)fastsync_once(o, fs_init, NULL); }
static inline void fsb_call(fastsync_once_t *o)
{
    if (fastsync_once_begin(o) == 1) {
        on_init();
        if (fastsync_once_commit(o) != 0) bench_fail("fastsync_once_commit");
    }
}

/* Implementations: fastsync_once, fastsync_once_begin + commit, the peer, (C++ build, where
 * fastsync.hpp has it) fastsync::call_once. */
enum { IMPL_FS, IMPL_FSB, IMPL_PEER, IMPL_FSCXX, NIMPL };
enum { MAXT = 8, CPUS = 2, INIT_WORK = 20000 };
static const char *const impl_variant[NIMPL] = { "fastsync", "fastsync_begin", "peer", "fastsync_cxx" };
static const char *const impl_name[NIMPL] = { "fastsync_once", "fastsync_once_begin + commit", PEER_NAME,
                                              "fastsync::call_once" };
static int impl_there(int impl) { return impl != IMPL_FSCXX || HAVE_FSCXX; }
static int impl_own_futex(int impl) { return impl != IMPL_PEER; } /* counted by its futex layer */

/* n fresh onces of any implementation. */
struct onces {
    int impl;
    fastsync_once_t *fs;
    peer_once *peer;
#if defined(__cplusplus)
    fscxx_once *cxx;
#endif
};
static struct onces onces_new(int impl, long n)
{
    struct onces o;
    o.impl = impl;
    o.fs = impl == IMPL_FS || impl == IMPL_FSB ? fs_new(n) : NULL;
    o.peer = impl == IMPL_PEER ? peer_new(n) : NULL;
#if defined(__cplusplus)
    o.cxx = impl == IMPL_FSCXX ? fscxx_new(n) : NULL;
#endif
    return o;
}
static void onces_free(struct onces *o)
{
    free(o->fs);
    if (o->peer) peer_free(o->peer);
#if defined(__cplusplus)
    if (o->cxx) fscxx_free(o->cxx);
#endif
}
static inline void once_call(struct onces *o, long i)
{
    switch (o->impl) {
    case IMPL_FS: fs_call(&o->fs[i]); break;
    case IMPL_FSB: fsb_call(&o->fs[i]); break;
    case IMPL_PEER: peer_call(&o->peer[i]); break;
#if defined(__cplusplus)
    default: fscxx_call(&o->cxx[i]); break;
#else
    default: break;
#endif
    }
}

/* The loops that callgrind measures (bench/run: --toggle-collect=loop_done_fs etc.): n calls
 * on one done once, and n first completions of n fresh onces (their slots written). */
#define ONCE_LOOPS(S, P, type)                                                                \
    BENCH_NOINLINE static void loop_done_##S(type *o, long n)                                 \
    {                                                                                         \
        for (long i = 0; i < n; i++) P##_call(o);                                             \
    }                                                                                         \
    BENCH_NOINLINE static void loop_first_##S(type *o, long n)                                \
    {                                                                                         \
        for (long i = 0; i < n; i++) {                                                        \
            init_slot = i;                                                                    \
            P##_call(&o[i]);                                                                  \
        }                                                                                     \
    }
ONCE_LOOPS(fs, fs, fastsync_once_t)
ONCE_LOOPS(fsb, fsb, fastsync_once_t)
ONCE_LOOPS(peer, peer, peer_once)
#if defined(__cplusplus)
ONCE_LOOPS(cxx, fscxx, fscxx_once)
#endif

/* One thread: first (0) n calls on one once, done by the first of them, or (1) n first
 * completions of n fresh onces. ns per call; *futex gets fastsync's futex calls per call. */
static double one_thread(int impl, int first, long n, double *futex)
{
    long k = first ? n : 1;
    struct onces o = onces_new(impl, k);
    unsigned long *slots = (unsigned long *)bench_alloc((size_t)k * sizeof *slots);
    init_calls = 0;
    init_slots = slots;
    init_slot = 0;
    if (!first) once_call(&o, 0); /* done before the timed calls */
    unsigned long f0 = bench_futex_calls();
    uint64_t t0 = bench_now_ns();
    switch (impl) {
    case IMPL_FS: (first ? loop_first_fs : loop_done_fs)(o.fs, n); break;
    case IMPL_FSB: (first ? loop_first_fsb : loop_done_fsb)(o.fs, n); break;
    case IMPL_PEER: (first ? loop_first_peer : loop_done_peer)(o.peer, n); break;
#if defined(__cplusplus)
    default: (first ? loop_first_cxx : loop_done_cxx)(o.cxx, n); break;
#else
    default: break;
#endif
    }
    uint64_t t1 = bench_now_ns();
    *futex = (double)(bench_futex_calls() - f0) / (double)n;
    if (init_calls != (unsigned long)k) bench_fail("an initialiser ran other than once per once");
    for (long i = 0; i < k; i++)
        if (slots[i] != (unsigned long)i + 1) bench_fail("a once's initialiser wrote another slot");
    init_slots = NULL;
    free(slots);
    onces_free(&o);
    return (double)(t1 - t0) / (double)n;
}

/* ---- the race: T threads at a fresh once, round after round ---- */
struct race {
    struct onces o;
    long rounds;
    int nt;
    unsigned long *slots; /* written by each round's initialiser */
    uint64_t *t_end;      /* [round]: the initialiser's clock when it returned */
    uint64_t *t_back;     /* [round * nt + thread]: the thread's clock when its call returned */
    atomic_long round;    /* the last round released (-1: none) */
    atomic_long finished; /* calls returned, all rounds */
    atomic_long arrived;  /* calls about to be made, all rounds */
    atomic_int ready;     /* threads started (main releases round 0 once all are) */
    atomic_int bad;
};

static struct race *init_race; /* the race that runs (read by race_init) */

/* Round init_slot's initialiser: it waits until every thread is at its call (the others
 * then wait for it inside the once, asleep or not as the implementation does), works
 * INIT_WORK polls (time for them to go to sleep), and notes when it returns. */
static void race_init(void)
{
    struct race *r = init_race;
    /* relaxed: only a rendezvous in time; the data the round checks is published by the
     * once itself, the round's set-up by the round's release (see racer()). */
    while (atomic_load_explicit(&r->arrived, memory_order_relaxed) < (long)r->nt * (init_slot + 1)) sched_yield();
    work(INIT_WORK);
    r->t_end[init_slot] = bench_now_ns(); /* read by main after the join */
}

struct racer {
    pthread_t t;
    struct race *r;
    int index;
};

static void *racer(void *p)
{
    struct racer *me = (struct racer *)p;
    struct race *r = me->r;
    /* pinned, alternately to CPU 0 and CPU 1: whoever initialises, some waiters are on the
     * other CPU (left to the scheduler, two threads sometimes shared one CPU for a whole
     * run, and a wake on the same CPU took 1.4 µs where one to the other took 18 here) */
    bench_pin(me->index % CPUS);
    /* relaxed: only tells main that this thread polls for round 0; nothing is published. */
    atomic_fetch_add_explicit(&r->ready, 1, memory_order_relaxed);
    for (long i = 0; i < r->rounds; i++) {
        /* acquire: pairs with the release store of round i (main's for round 0, else the
         * last thread's to return from round i - 1, below): so the previous round's
         * initialiser, and the set-up of this one (init_slot), happen before. */
        while (atomic_load_explicit(&r->round, memory_order_acquire) < i) sched_yield();
        atomic_fetch_add_explicit(&r->arrived, 1, memory_order_relaxed); /* see race_init */
        once_call(&r->o, i);
        r->t_back[i * r->nt + me->index] = bench_now_ns();
        /* the once's own guarantee: its initialiser's write happens before the return */
        if (r->slots[i] != (unsigned long)i + 1)
            atomic_store_explicit(&r->bad, 1, memory_order_relaxed); /* read after the join */
        /* acq_rel: the adds of round i form a release sequence, so the last one reads
         * every thread's accesses of round i (release) and releases round i + 1 after them
         * (acquire). The last thread back starts the next round at once, while the others
         * already poll for it: no third thread (main) competes for the CPUs in the round. */
        if (atomic_fetch_add_explicit(&r->finished, 1, memory_order_acq_rel) + 1 == (long)r->nt * (i + 1) &&
            i + 1 < r->rounds) {
            init_slot = i + 1;
            atomic_store_explicit(&r->round, i + 1, memory_order_release); /* pairs with the acquire above */
        }
    }
    bench_futex_flush();
    return NULL;
}

/* nt threads, `rounds` rounds: the median over the rounds of the time from the
 * initialiser's return to the last thread's (µs);
 * *futex gets fastsync's futex calls per round. */
static double race(int impl, int nt, long rounds, double *futex)
{
    struct race *r = (struct race *)bench_alloc(sizeof *r);
    struct racer t[MAXT];
    r->o = onces_new(impl, rounds);
    r->rounds = rounds;
    r->nt = nt;
    r->slots = (unsigned long *)bench_alloc((size_t)rounds * sizeof *r->slots);
    r->t_end = (uint64_t *)bench_alloc((size_t)rounds * sizeof *r->t_end);
    r->t_back = (uint64_t *)bench_alloc((size_t)rounds * (size_t)nt * sizeof *r->t_back);
    atomic_init(&r->round, -1);
    init_calls = 0;
    init_slots = r->slots;
    init_race = r;
    init_racing = 1;
    unsigned long f0 = bench_futex_calls();
    for (int i = 0; i < nt; i++) {
        t[i].r = r;
        t[i].index = i;
        t[i].t = bench_thread_start(racer, &t[i]);
    }
    /* relaxed: every thread polls for round 0 (see the thread's add) */
    while (atomic_load_explicit(&r->ready, memory_order_relaxed) < nt) sched_yield();
    init_slot = 0;
    atomic_store_explicit(&r->round, 0, memory_order_release); /* pairs with the threads' acquire */
    for (int i = 0; i < nt; i++) pthread_join(t[i].t, NULL);
    init_racing = 0;
    init_race = NULL;
    init_slots = NULL;
    if (atomic_load_explicit(&r->bad, memory_order_relaxed))
        bench_fail("race: a call returned before its initialiser's write was visible");
    if (init_calls != (unsigned long)rounds) bench_fail("race: an initialiser ran other than once per once");
    double *us = (double *)calloc((size_t)rounds, sizeof *us);
    if (!us) bench_fail("out of memory");
    for (long i = 0; i < rounds; i++) {
        uint64_t last = 0;
        for (int k = 0; k < nt; k++) last = r->t_back[i * nt + k] > last ? r->t_back[i * nt + k] : last;
        us[i] = (double)(last - r->t_end[i]) / 1e3;
    }
    double med = bench_median(us, (int)rounds);
    *futex = (double)(bench_futex_calls() - f0) / (double)rounds;
    free(us);
    free(r->slots);
    free(r->t_end);
    free(r->t_back);
    onces_free(&r->o);
    free(r);
    return med;
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
    else if (dash && strcmp(dash, "-fsb") == 0) impl = IMPL_FSB;
    else if (dash && strcmp(dash, "-peer") == 0) impl = IMPL_PEER;
    else if (dash && strcmp(dash, "-cxx") == 0 && HAVE_FSCXX) impl = IMPL_FSCXX;
    if (impl >= 0 && strncmp(op, "done-", 5) == 0) (void)one_thread(impl, 0, n, &unused);
    else if (impl >= 0 && strncmp(op, "first-", 6) == 0) (void)one_thread(impl, 1, n, &unused);
    else if (impl >= 0 && sscanf(op, "race%d-", &nt) == 1 && nt >= 1 && nt <= MAXT)
        (void)race(impl, nt, n, &unused);
    else {
        fprintf(stderr, "once: unknown --op %s\n", op);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    /* A second thread, before any measurement (see "done" above). */
    bench_second_thread();
    long rounds = bench_take_opt(&argc, argv, "--rounds", 0);
    int argn = bench_parse(argc, argv, &o);
    if (o.op) return run_op(o.op, o.iters);
    bool t_done = argn == 1, t_first = argn == 1, t_race = argn == 1;
    for (int i = 1; i < argn; i++) {
        if (strcmp(argv[i], "done") == 0) t_done = true;
        else if (strcmp(argv[i], "first") == 0) t_first = true;
        else if (strcmp(argv[i], "race") == 0) t_race = true;
        else {
            fprintf(stderr, "once: unknown regime %s\n", argv[i]);
            return 2;
        }
    }
    const long n_done = o.iters ? o.iters : o.quick ? 1000000 : 20000000;
    const long n_first = o.iters ? o.iters / 10 + 1 : o.quick ? 20000 : 200000;
    if (rounds <= 0) rounds = o.quick ? 200 : 2000;
    const int R = o.reps;
    /* samples: [impl][done, first][ns, futex][rep]; race [impl][T][us, futex][rep] */
    double *v = (double *)calloc((size_t)R * NIMPL * (2 * 2 + NT * 2), sizeof(double));
    if (!v) bench_fail("out of memory");
#define ONE(i, f, m, r) v[((((i) * 2 + (f)) * 2 + (m)) * R) + (r)]
#define RACE(i, k, m, r) v[NIMPL * 2 * 2 * R + ((((i) * NT + (k)) * 2 + (m)) * R) + (r)]

    for (int r = 0; r < R; r++)
        for (int i = 0; i < NIMPL; i++) {
            if (!impl_there(i)) continue;
            if (t_done) ONE(i, 0, 0, r) = one_thread(i, 0, n_done, &ONE(i, 0, 1, r));
            if (t_first) ONE(i, 1, 0, r) = one_thread(i, 1, n_first, &ONE(i, 1, 1, r));
            for (int k = 0; t_race && k < NT; k++)
                RACE(i, k, 0, r) = race(i, threads[k], rounds, &RACE(i, k, 1, r));
        }

    printf("once: %s, fastsync FASTSYNC_SPIN=%d+%d; median of %d; %ld CPUs, threads limited to %d\n",
           o.build, FASTSYNC_SPIN, FASTSYNC_SPIN_YIELDS, R, bench_ncpu(), CPUS);
#if defined(__cplusplus)
    if (!HAVE_FSCXX) printf("fastsync::call_once: not in fastsync.hpp (left out)\n");
#endif
    const char *B = "once";
    char metric[64];
    printf("%-30s %9s %11s %9s %11s", "", "done ns", "done futex", "first ns", "first futex");
    for (int k = 0; t_race && k < NT; k++) printf(" %6s%d %s", "wake", threads[k], "us [futex]");
    printf("\n");
    for (int i = 0; i < NIMPL; i++) {
        if (!impl_there(i)) continue;
        const char *var = impl_variant[i];
        int own = impl_own_futex(i);
        printf("%-30s", impl_name[i]);
        for (int f = 0; f < 2; f++) {
            if ((f == 0 && !t_done) || (f == 1 && !t_first)) {
                printf(" %9s %11s", "-", "-");
                continue;
            }
            double ns = bench_csv_samples(&o, B, var, f ? "first_ns" : "done_ns", "ns", &ONE(i, f, 0, 0), R);
            if (own) {
                double fx = bench_csv_samples(&o, B, var, f ? "first_futex" : "done_futex", "calls",
                                              &ONE(i, f, 1, 0), R);
                printf(" %9.2f %11.3f", ns, fx);
            } else
                printf(" %9.2f %11s", ns, "-");
        }
        for (int k = 0; t_race && k < NT; k++) {
            snprintf(metric, sizeof metric, "race%d_wake_us", threads[k]);
            double us = bench_csv_samples(&o, B, var, metric, "us", &RACE(i, k, 0, 0), R);
            if (own) {
                snprintf(metric, sizeof metric, "race%d_futex", threads[k]);
                double fx = bench_csv_samples(&o, B, var, metric, "calls", &RACE(i, k, 1, 0), R);
                printf(" %7.1f [%6.2f]", us, fx);
            } else
                printf(" %7.1f [%6s]", us, "-");
        }
        printf("\n");
    }
    printf("(done: n calls on a done once, ns per call; first: n fresh onces each completed once by one"
           " thread, nobody waiting, ns per completion; futex: fastsync's own calls per call, through its"
           " replaceable futex layer (bench/run counts the peer's); race<T>: T threads pinned to CPUs 0-1 in turn"
           " call one fresh once together, its initialiser waiting until all have called, then working"
           " %d polls; median over %ld rounds of the time from the initialiser's return to the last"
           " caller's, [fastsync's futex calls per round])\n",
           INIT_WORK, rounds);
    free(v);
    return 0;
}
