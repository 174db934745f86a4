/* SPDX-License-Identifier: MIT */
/* bench/mutex.c - fastsync_mutex_t against a peer mutex: uncontended, contended, sleeping.
 *
 * One source, three peers (as perf2.c): built with gcc the peer is glibc's pthread_mutex_t,
 * with musl-gcc -static musl's, and as C++23 (g++ -x c++ -std=c++23) libstdc++'s std::mutex.
 *   uncontended  one thread, lock + unlock n times: ns per pair (and fastsync's futex calls);
 *                fastsync's twice, a process-private mutex and a FASTSYNC_SHARED one (its word
 *                holds the shared bit, so its lock cannot take the private path's CAS from 0).
 *                Measured once the process has had a second thread: glibc leaves out the lock
 *                prefix of its atomics while a process has only ever had one (3x faster here),
 *                which is not how a mutex is used.
 *   contended    T threads (2, 4, 8), each limited to CPUs 0 and 1, share one mutex for a time
 *                box; each loop takes the mutex, adds to a plain counter and touches a cache
 *                line of shared data, works a little (~20 polls) inside, unlocks, and works
 *                as much outside. The bounded spin absorbs the waits here.
 *   sleeping     the same with SLEEP_INSIDE polls inside (50-100 µs here) and SLEEP_OUTSIDE outside: a
 *                hold longer than fastsync's spin (20 pauses, 16 yields), so waiters go to sleep
 *                in the kernel (today's contended regime never does: the spin wins).
 * Printed per implementation and T: lock+unlock pairs per second (all threads), the spread
 * between threads (slowest thread's pairs / fastest's: 1.0 is even, near 0 is starvation),
 * and fastsync's futex calls per 1000 pairs (its replaceable futex layer; bench/run counts
 * the peer's with perf stat or strace). Implementations alternate within each repetition;
 * medians of --reps. The contended table decided the mutex's fairness policy (fastsync.h,
 * "Mutex").
 *
 *   mutex [--quick] [--reps N] [--ms N] [--csv FILE] [--build NAME] [REGIME...]
 *         REGIME: uncontended contended sleeping (default: all)
 *   mutex --op OP --iters N     one loop only, no output (for callgrind, perf, strace):
 *         OP: lock-fs lock-fs-shared lock-peer (uncontended; lock-fs-shared: the same loop,
 *         fs_lock_loop, on a FASTSYNC_SHARED mutex), or REGIME<T>-fs / REGIME<T>-peer for T threads
 *         sharing N pairs (e.g. sleeping4-peer)
 */
#include "bench.h"

#if defined(__cplusplus)
/* ---- adapter: the peer, libstdc++'s std::mutex (this file built as C++23) ---- */
#include <mutex>
#include <new>
#define PEER_NAME "std::mutex"
typedef std::mutex peer_mutex;
static peer_mutex *peer_new(void) { return new (bench_alloc(sizeof(peer_mutex))) peer_mutex(); }
static void peer_free(peer_mutex *m)
{
    m->~peer_mutex();
    free(m);
}
static inline void peer_lock(peer_mutex *m) { m->lock(); }
static inline void peer_unlock(peer_mutex *m) { m->unlock(); }
#else
/* ---- adapter: the peer, the C library's pthread_mutex_t (glibc with gcc, musl with musl-gcc) */
#define PEER_NAME "pthread_mutex_t"
typedef pthread_mutex_t peer_mutex;
static peer_mutex *peer_new(void)
{
    peer_mutex *m = (peer_mutex *)bench_alloc(sizeof *m);
    if (pthread_mutex_init(m, NULL) != 0) bench_fail("pthread_mutex_init");
    return m;
}
static void peer_free(peer_mutex *m)
{
    pthread_mutex_destroy(m);
    free(m);
}
static inline void peer_lock(peer_mutex *m) { pthread_mutex_lock(m); }
static inline void peer_unlock(peer_mutex *m) { pthread_mutex_unlock(m); }
#endif

/* ---- adapter: fastsync ---- */
static fastsync_mutex_t *fs_new(int flags)
{
    fastsync_mutex_t *m = (fastsync_mutex_t *)bench_alloc(sizeof *m);
    if (fastsync_mutex_init(m, flags) != 0) bench_fail("fastsync_mutex_init");
    return m;
}
static void fs_free(fastsync_mutex_t *m)
{
    if (fastsync_mutex_destroy(m) != 0) bench_fail("fastsync_mutex_destroy: still locked");
    free(m);
}
static inline void fs_lock(fastsync_mutex_t *m) { fastsync_mutex_lock(m); }
static inline void fs_unlock(fastsync_mutex_t *m) { fastsync_mutex_unlock(m); }

enum { MAXT = 8, NIMPL = 2, CPUS = 2 };
enum { IMPL_FS, IMPL_PEER };
static const char *const impl_variant[NIMPL] = { "fastsync", "peer" };
/* The uncontended run only: fastsync on a FASTSYNC_SHARED mutex (where the backend has them;
 * elsewhere a private one, and the row says so). */
enum { IMPL_FS_SHARED = NIMPL };
#define FS_SHARED_FLAGS (FASTSYNC_HAS_SHARED ? FASTSYNC_SHARED : 0)

/* The loops that callgrind measures (--toggle-collect=P_lock_loop; bench/run: FS_LOCK_LOOP):
 * lock + unlock, n times. */
#define LOCK_LOOP(P, type)                                                                    \
    BENCH_NOINLINE static void P##_lock_loop(type *m, long n)                                 \
    {                                                                                         \
        for (long i = 0; i < n; i++) {                                                        \
            P##_lock(m);                                                                      \
            P##_unlock(m);                                                                    \
        }                                                                                     \
    }
LOCK_LOOP(fs, fastsync_mutex_t)
LOCK_LOOP(peer, peer_mutex)

/* One thread, n pairs: ns per pair; *futex gets fastsync's futex calls per pair. impl:
 * IMPL_FS, IMPL_PEER or IMPL_FS_SHARED. */
static double uncontended(int impl, long n, double *futex)
{
    unsigned long f0 = bench_futex_calls();
    uint64_t t0 = 0, t1 = 0;
    if (impl != IMPL_PEER) {
        fastsync_mutex_t *m = fs_new(impl == IMPL_FS_SHARED ? FS_SHARED_FLAGS : 0);
        t0 = bench_now_ns();
        fs_lock_loop(m, n);
        t1 = bench_now_ns();
        fs_free(m);
    } else {
        peer_mutex *m = peer_new();
        t0 = bench_now_ns();
        peer_lock_loop(m, n);
        t1 = bench_now_ns();
        peer_free(m);
    }
    *futex = (double)(bench_futex_calls() - f0) / (double)n;
    return (double)(t1 - t0) / (double)n;
}

/* ---- the contended runs ---- */
enum { REG_CONTENDED, REG_SLEEPING, NREG };
#ifndef SLEEP_INSIDE
#define SLEEP_INSIDE 100000
#endif
#ifndef SLEEP_OUTSIDE
#define SLEEP_OUTSIDE 10000
#endif
static const char *const regime_name[NREG] = { "contended", "sleeping" };
/* polls of work(): inside the lock and outside it, per regime */
static const unsigned work_inside[NREG] = { 20, SLEEP_INSIDE }, work_outside[NREG] = { 20, SLEEP_OUTSIDE };

struct shared_data {
    unsigned long counter;
    unsigned long line[7];
};

struct run {
    int impl;
    unsigned inside, outside; /* polls of work() inside the lock and outside */
    unsigned long limit; /* pairs per thread (0: until stop) */
    fastsync_mutex_t *fm;
    peer_mutex *pm;
    struct shared_data *data; /* under the mutex */
    atomic_int go, stop;
};

struct th {
    pthread_t t;
    struct run *run;
    unsigned long pairs;
};

static BENCH_NOINLINE void work(unsigned n)
{
    volatile unsigned i = 0; /* (C++20 deprecates ++ on a volatile) */
    while (i < n) i = i + 1;
}

static void *worker(void *p)
{
    struct th *me = (struct th *)p;
    struct run *r = me->run;
    unsigned long n = 0, limit = r->limit ? r->limit : (unsigned long)-1;
    bench_limit_cpus(CPUS);
    /* acquire: the start flag, after main set up the run (it pairs with main's release
     * store); relaxed stop flag: only ends the loop; the counts are read after the join. */
    while (!atomic_load_explicit(&r->go, memory_order_acquire)) {
    }
    while (n < limit && !atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        if (r->impl == IMPL_FS)
            fs_lock(r->fm);
        else
            peer_lock(r->pm);
        r->data->counter++;
        for (int i = 0; i < 7; i++) r->data->line[i] += r->data->counter;
        work(r->inside);
        if (r->impl == IMPL_FS)
            fs_unlock(r->fm);
        else
            peer_unlock(r->pm);
        work(r->outside);
        n++;
    }
    me->pairs = n;
    bench_futex_flush();
    return NULL;
}

struct result {
    double rate;   /* pairs per second, all threads */
    double spread; /* slowest thread's pairs / fastest's */
    double futex;  /* fastsync's futex calls per 1000 pairs */
};

/* nt threads for ms milliseconds (or `pairs` pairs in all, when not 0). */
static struct result contend(int impl, int regime, int nt, unsigned ms, unsigned long pairs)
{
    struct th t[MAXT];
    struct run r;
    struct result res;
    r.impl = impl;
    r.inside = work_inside[regime];
    r.outside = work_outside[regime];
    r.limit = pairs / (unsigned long)nt;
    r.fm = fs_new(0);
    r.pm = peer_new();
    r.data = (struct shared_data *)bench_alloc(sizeof *r.data);
    /* relaxed: the threads that read them are created after these stores. */
    atomic_store_explicit(&r.go, 0, memory_order_relaxed);
    atomic_store_explicit(&r.stop, 0, memory_order_relaxed);
    unsigned long f0 = bench_futex_calls();
    for (int i = 0; i < nt; i++) {
        t[i].run = &r;
        t[i].t = bench_thread_start(worker, &t[i]);
    }
    uint64_t t0 = bench_now_ns();
    atomic_store_explicit(&r.go, 1, memory_order_release); /* pairs with the workers' acquire */
    if (!pairs) {
        bench_sleep_ns((uint64_t)ms * 1000000u);
        atomic_store_explicit(&r.stop, 1, memory_order_relaxed);
    }
    unsigned long total = 0, lo = (unsigned long)-1, hi = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i].t, NULL);
        total += t[i].pairs;
        lo = t[i].pairs < lo ? t[i].pairs : lo;
        hi = t[i].pairs > hi ? t[i].pairs : hi;
    }
    double secs = (double)(bench_now_ns() - t0) / 1e9;
    if (total != r.data->counter) bench_fail("the counter differs from the pairs: no mutual exclusion");
    res.rate = (double)total / secs;
    res.spread = hi ? (double)lo / (double)hi : 0;
    res.futex = total ? 1000.0 * (double)(bench_futex_calls() - f0) / (double)total : 0;
    fs_free(r.fm);
    peer_free(r.pm);
    free(r.data);
    return res;
}

/* --op: one loop, no output. */
static int run_op(const char *op, long n)
{
    double unused;
    int nt = 0, reg;
    if (n <= 0) n = 1;
    if (strcmp(op, "lock-fs") == 0) (void)uncontended(IMPL_FS, n, &unused);
    else if (strcmp(op, "lock-fs-shared") == 0) (void)uncontended(IMPL_FS_SHARED, n, &unused);
    else if (strcmp(op, "lock-peer") == 0) (void)uncontended(IMPL_PEER, n, &unused);
    else {
        for (reg = 0; reg < NREG; reg++) {
            size_t k = strlen(regime_name[reg]);
            if (strncmp(op, regime_name[reg], k) == 0 && (nt = atoi(op + k)) >= 1 && nt <= MAXT)
                break;
        }
        const char *impl = strrchr(op, '-');
        if (reg == NREG || !impl || (strcmp(impl, "-fs") != 0 && strcmp(impl, "-peer") != 0)) {
            fprintf(stderr, "mutex: unknown --op %s\n", op);
            return 2;
        }
        (void)contend(strcmp(impl, "-fs") == 0 ? IMPL_FS : IMPL_PEER, reg, nt, 0, (unsigned long)n);
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    /* A second thread, before any measurement (see "uncontended" above). */
    bench_second_thread();
    unsigned ms = 0;
    /* --ms N: the time box of one contended run (the common parser knows no --ms) */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--ms") == 0) {
            ms = (unsigned)atoi(argv[i + 1]);
            for (int j = i; j + 2 <= argc; j++) argv[j] = argv[j + 2];
            argc -= 2;
            break;
        }
    int argn = bench_parse(argc, argv, &o);
    if (o.op) return run_op(o.op, o.iters);
    bool t_unc = argn == 1, t_reg[NREG] = { argn == 1, argn == 1 };
    for (int i = 1; i < argn; i++) {
        if (strcmp(argv[i], "uncontended") == 0) t_unc = true;
        else if (strcmp(argv[i], "contended") == 0) t_reg[REG_CONTENDED] = true;
        else if (strcmp(argv[i], "sleeping") == 0) t_reg[REG_SLEEPING] = true;
        else {
            fprintf(stderr, "mutex: unknown regime %s\n", argv[i]);
            return 2;
        }
    }
    if (ms == 0) ms = o.quick ? 200 : 500;
    const long n_unc = o.iters ? o.iters : o.quick ? 500000 : 10000000;
    const int R = o.reps;
    static const int threads[] = { 2, 4, 8 };
    enum { NT = sizeof threads / sizeof threads[0] };
    /* [impl][rep] and [regime][T][impl][rep] samples */
    /* [impl][rep] samples for the uncontended run (NIMPL + 1: the shared mutex too) */
    enum { NUNC = NIMPL + 1 };
    double *v = (double *)calloc((size_t)R * (2 * NUNC + 3 * NREG * NT * NIMPL), sizeof(double));
    if (!v) bench_fail("out of memory");
    double *unc = v, *unc_fx = v + NUNC * R, *cont = v + 2 * NUNC * R;
#define UNC(a, i, r) (a)[(i) * R + (r)]
#define CONT(m, g, k, i, r) cont[((((m) * NREG + (g)) * NT + (k)) * NIMPL + (i)) * R + (r)]

    for (int r = 0; r < R; r++) {
        for (int i = 0; t_unc && i < NUNC; i++)
            UNC(unc, i, r) = uncontended(i, n_unc, &UNC(unc_fx, i, r));
        for (int g = 0; g < NREG; g++)
            for (int k = 0; t_reg[g] && k < NT; k++)
                for (int i = 0; i < NIMPL; i++) {
                    struct result x = contend(i, g, threads[k], ms, 0);
                    CONT(0, g, k, i, r) = x.rate;
                    CONT(1, g, k, i, r) = x.spread;
                    CONT(2, g, k, i, r) = x.futex;
                }
    }

    printf("mutex: %s, fastsync FASTSYNC_SPIN=%d+%d; median of %d; %ld CPUs, threads limited to %d;"
           " %u ms per run\n", o.build, FASTSYNC_SPIN, FASTSYNC_SPIN_YIELDS, R, bench_ncpu(), CPUS, ms);
    const char *name[NUNC] = { "fastsync_mutex_t", PEER_NAME,
                               FASTSYNC_HAS_SHARED ? "fastsync, SHARED" : "fastsync (no SHARED)" };
    static const char *const unc_variant[NUNC] = { "fastsync", "peer", "fastsync_shared" };
    const char *M = "mutex";
    char metric[64];
    if (t_unc) {
        printf("%-10s %-8s %-18s %14s %10s\n", "uncontended", "", "mutex", "ns/pair", "futex/pair");
        for (int i = 0; i < NUNC; i++) {
            double ns = bench_csv_samples(&o, M, unc_variant[i], "uncontended_ns", "ns", &UNC(unc, i, 0), R);
            if (i != IMPL_PEER)
                printf("%-10s %-8s %-18s %14.2f %10.3f\n", "", "", name[i], ns,
                       bench_csv_samples(&o, M, unc_variant[i], "uncontended_futex", "calls",
                                         &UNC(unc_fx, i, 0), R));
            else
                printf("%-10s %-8s %-18s %14.2f %10s\n", "", "", name[i], ns, "-");
        }
    }
    static const char *const mname[3] = { "pairs_s", "spread", "futex_per_1000" };
    static const char *const munit[3] = { "pairs/s", "ratio", "calls" };
    for (int g = 0; g < NREG; g++) {
        if (!t_reg[g]) continue;
        printf("%-10s %-8s %-18s %14s %10s %10s\n", regime_name[g], "threads", "mutex", "pairs/s",
               "spread", "futex/1000");
        for (int k = 0; k < NT; k++)
            for (int i = 0; i < NIMPL; i++) {
                double med[3];
                for (int m = 0; m < (i == IMPL_FS ? 3 : 2); m++) { /* futex: fastsync's own */
                    snprintf(metric, sizeof metric, "%s%d_%s", regime_name[g], threads[k], mname[m]);
                    med[m] = bench_csv_samples(&o, M, impl_variant[i], metric, munit[m], &CONT(m, g, k, i, 0), R);
                }
                if (i == IMPL_FS)
                    printf("%-10s %-8d %-18s %14.0f %10.2f %10.2f\n", "", threads[k], name[i], med[0], med[1], med[2]);
                else
                    printf("%-10s %-8d %-18s %14.0f %10.2f %10s\n", "", threads[k], name[i], med[0], med[1], "-");
            }
    }
    printf("(pairs/s: lock+unlock pairs per second, all threads; spread: slowest thread's pairs /"
           " fastest's;\n futex/1000: fastsync's own futex calls per 1000 pairs; contended: %u polls"
           " inside and outside the lock, sleeping: %u inside, %u outside)\n", work_inside[0],
           work_inside[REG_SLEEPING], work_outside[REG_SLEEPING]);
    free(v);
    return 0;
}
