/* SPDX-License-Identifier: MIT */
/* bench/perf2.c - seed 001 (glibc bug 4209): a peer semaphore against fastsync.
 *
 * Rows as in the seed: mutex, semaphore, custom (here: fastsync) semaphore, both ping-pongs;
 * plus 4 ping-pong pairs on 2 cores (oversubscribed) and the floor, two bare atomic RMWs.
 * Every figure is the median of --reps repetitions, the implementations interleaved within
 * each repetition. One source, three peers: built with gcc the peer is glibc's sem_t, with
 * musl-gcc -static musl's sem_t, and as C++23 (g++ -x c++ -std=c++23) libstdc++'s
 * std::counting_semaphore.
 *
 *   perf2 [--quick] [--reps N] [--csv FILE] [--build NAME] [TEST...]
 *         TEST: uncontended pingpong oversub (default: all)
 *   perf2 --op OP --iters N     one loop only, no output (for callgrind, perf, strace):
 *         OP: mutex rmw2 cas2 sem-peer sem-fs pp-peer pp-fs over-peer over-fs
 */
#include "bench.h"

#if defined(__cplusplus)
/* ---- adapter: the peer, libstdc++'s std::counting_semaphore (this file built as C++23) ---- */
#include <climits>
#include <new>
#include <semaphore>
#define PEER_NAME "std::counting_semaphore"
typedef std::counting_semaphore<INT_MAX> peer_sem;
static inline peer_sem *peer_sem_new(unsigned v)
{
    return new (bench_alloc(sizeof(peer_sem))) peer_sem((std::ptrdiff_t)v);
}
static inline void peer_sem_free(peer_sem *s)
{
    s->~peer_sem();
    free(s);
}
static inline void peer_sem_post(peer_sem *s) { s->release(); }
static inline void peer_sem_wait(peer_sem *s) { s->acquire(); }
static inline unsigned peer_sem_value(peer_sem *s) /* no getvalue: take them all, give back */
{
    unsigned n = 0;
    while (s->try_acquire()) n++;
    if (n) s->release((std::ptrdiff_t)n);
    return n;
}
#else
/* ---- adapter: the peer, the C library's sem_t (glibc with gcc, musl with musl-gcc) ---- */
#include <semaphore.h>
#define PEER_NAME "sem_t"
typedef sem_t peer_sem;
static inline peer_sem *peer_sem_new(unsigned v)
{
    peer_sem *s = (peer_sem *)bench_alloc(sizeof *s);
    if (sem_init(s, 0, v) != 0) bench_fail("sem_init");
    return s;
}
static inline void peer_sem_free(peer_sem *s)
{
    sem_destroy(s);
    free(s);
}
static inline void peer_sem_post(peer_sem *s) { sem_post(s); }
static inline void peer_sem_wait(peer_sem *s) { while (sem_wait(s) != 0) {} }
static inline unsigned peer_sem_value(peer_sem *s)
{
    int v = 0;
    sem_getvalue(s, &v);
    return (unsigned)v;
}
#endif
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

/* ---- adapter: fastsync ---- */
typedef fastsync_sem_t fs_sem;
static inline fs_sem *fs_sem_new(unsigned v)
{
    fs_sem *s = (fs_sem *)bench_alloc(sizeof *s);
    if (fastsync_sem_init(s, v, 0) != 0) bench_fail("fastsync_sem_init");
    return s;
}
static inline void fs_sem_free(fs_sem *s) { fastsync_sem_destroy(s); free(s); }
static inline void fs_sem_post(fs_sem *s) { fastsync_sem_post(s); }
static inline void fs_sem_wait(fs_sem *s) { fastsync_sem_wait(s); }
static inline unsigned fs_sem_value(fs_sem *s) { return fastsync_sem_getvalue(s); }

#define SEMI peer
#include "sem_loops.h"
#undef SEMI
#define SEMI fs
#include "sem_loops.h"
#undef SEMI

enum { OVER_PAIRS = 4 };
#ifndef PP_PIN
#define PP_PIN true
#endif

static int run_op(const char *op, long n)
{
    if (n <= 0) n = 1;
    if (strcmp(op, "mutex") == 0) bench_mutex_loop(n);
    else if (strcmp(op, "rmw2") == 0) (void)bench_rmw2(n);
    else if (strcmp(op, "cas2") == 0) (void)bench_cas2(n);
    else if (strcmp(op, "sem-peer") == 0) (void)peer_uncontended(n);
    else if (strcmp(op, "sem-fs") == 0) (void)fs_uncontended(n);
    else if (strcmp(op, "pp-peer") == 0) (void)peer_pingpong(n, 1, PP_PIN, NULL);
    else if (strcmp(op, "pp-fs") == 0) (void)fs_pingpong(n, 1, PP_PIN, NULL);
    else if (strcmp(op, "over-peer") == 0) (void)peer_pingpong(n, OVER_PAIRS, false, NULL);
    else if (strcmp(op, "over-fs") == 0) (void)fs_pingpong(n, OVER_PAIRS, false, NULL);
    else {
        fprintf(stderr, "perf2: unknown --op %s\n", op);
        return 2;
    }
    return 0;
}

static void row(const char *name, double ns, long n, const char *futex, const char *sleeps)
{
    printf("%-34s elapsed: %9.0f us; per iteration: %7.1f ns.  %9s %9s\n", name, ns * (double)n / 1e3,
           ns, futex, sleeps);
}

static const char *fmt(char *buf, double v)
{
    snprintf(buf, 32, "%.3f", v);
    return buf;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int argn = bench_parse(argc, argv, &o);
    if (o.op) return run_op(o.op, o.iters);

    bool t_unc = argn == 1, t_pp = argn == 1, t_over = argn == 1;
    for (int i = 1; i < argn; i++) {
        if (strcmp(argv[i], "uncontended") == 0) t_unc = true;
        else if (strcmp(argv[i], "pingpong") == 0) t_pp = true;
        else if (strcmp(argv[i], "oversub") == 0) t_over = true;
        else {
            fprintf(stderr, "perf2: unknown test %s\n", argv[i]);
            return 2;
        }
    }
    const long n_unc = o.iters ? o.iters : o.quick ? 500000 : 10000000;
    const long n_pp = o.iters ? o.iters / 10 : o.quick ? 5000 : 100000;
    const long n_over = n_pp / 2;
    const int R = o.reps;

    /* [rep]: per-iteration ns, and the counts of the ping-pongs */
    double *v = (double *)calloc((size_t)R * 20, sizeof(double));
    if (!v) bench_fail("out of memory");
    double *mutex = v, *rmw = v + R, *unc_peer = v + 2 * R, *unc_fs = v + 3 * R,
           *unc_fs_futex = v + 4 * R, *pp_peer = v + 5 * R, *pp_fs = v + 6 * R,
           *pp_peer_sl = v + 7 * R, *pp_fs_sl = v + 8 * R, *pp_fs_fx = v + 9 * R,
           *ov_peer = v + 10 * R, *ov_fs = v + 11 * R, *ov_peer_sl = v + 12 * R,
           *ov_fs_sl = v + 13 * R, *ov_fs_fx = v + 14 * R, *cas = v + 15 * R;

    for (int r = 0; r < R; r++) {
        if (t_unc) {
            mutex[r] = bench_mutex_ns(n_unc);
            rmw[r] = bench_rmw2(n_unc);
            cas[r] = bench_cas2(n_unc);
            unc_peer[r] = peer_uncontended(n_unc);
            unsigned long f0 = bench_futex_calls();
            unc_fs[r] = fs_uncontended(n_unc);
            unc_fs_futex[r] = (double)(bench_futex_calls() - f0) / (double)n_unc;
        }
        struct pp_stats st;
        if (t_pp) {
            pp_peer[r] = peer_pingpong(n_pp, 1, PP_PIN, &st);
            pp_peer_sl[r] = st.vcsw_per_rt;
            pp_fs[r] = fs_pingpong(n_pp, 1, PP_PIN, &st);
            pp_fs_sl[r] = st.vcsw_per_rt;
            pp_fs_fx[r] = st.futex_per_rt;
        }
        if (t_over) {
            ov_peer[r] = peer_pingpong(n_over, OVER_PAIRS, false, &st);
            ov_peer_sl[r] = st.vcsw_per_rt;
            ov_fs[r] = fs_pingpong(n_over, OVER_PAIRS, false, &st);
            ov_fs_sl[r] = st.vcsw_per_rt;
            ov_fs_fx[r] = st.futex_per_rt;
        }
    }

#if defined(__GLIBC__)
    printf("perf2: %s (glibc %s), fastsync FASTSYNC_SPIN=%d+%d; median of %d; %ld CPUs\n", o.build,
           gnu_get_libc_version(), FASTSYNC_SPIN, FASTSYNC_SPIN_YIELDS, R, bench_ncpu());
#else
    printf("perf2: %s, fastsync FASTSYNC_SPIN=%d+%d; median of %d; %ld CPUs\n", o.build, FASTSYNC_SPIN,
           FASTSYNC_SPIN_YIELDS, R, bench_ncpu());
#endif
    printf("%-34s %-46s %9s %9s\n", "", "", "futex/it", "sleeps/it");
    char b1[32], b2[32];
    const char *P = "perf2";
    if (t_unc) {
        row("mutex", bench_csv_samples(&o, P, "mutex", "uncontended_ns", "ns", mutex, R), n_unc, "-", "-");
        row(PEER_NAME, bench_csv_samples(&o, P, "peer", "uncontended_ns", "ns", unc_peer, R), n_unc,
            "-", "-");
        double fx = bench_csv_samples(&o, P, "fastsync", "uncontended_futex", "calls", unc_fs_futex, R);
        row("fastsync semaphore", bench_csv_samples(&o, P, "fastsync", "uncontended_ns", "ns", unc_fs, R),
            n_unc, fmt(b1, fx), "-");
    }
    if (t_pp) {
        double sl = bench_csv_samples(&o, P, "peer", "pingpong_vcsw", "sleeps", pp_peer_sl, R);
        row(PEER_NAME " ping-pong", bench_csv_samples(&o, P, "peer", "pingpong_ns", "ns", pp_peer, R),
            n_pp, "-", fmt(b2, sl));
        sl = bench_csv_samples(&o, P, "fastsync", "pingpong_vcsw", "sleeps", pp_fs_sl, R);
        double fx = bench_csv_samples(&o, P, "fastsync", "pingpong_futex", "calls", pp_fs_fx, R);
        row("fastsync semaphore ping-pong", bench_csv_samples(&o, P, "fastsync", "pingpong_ns", "ns", pp_fs, R),
            n_pp, fmt(b1, fx), fmt(b2, sl));
    }
    if (t_over) {
        double sl = bench_csv_samples(&o, P, "peer", "oversub_vcsw", "sleeps", ov_peer_sl, R);
        row(PEER_NAME " ping-pong x4 (2 cores)", bench_csv_samples(&o, P, "peer", "oversub_ns", "ns", ov_peer, R),
            n_over, "-", fmt(b2, sl));
        sl = bench_csv_samples(&o, P, "fastsync", "oversub_vcsw", "sleeps", ov_fs_sl, R);
        double fx = bench_csv_samples(&o, P, "fastsync", "oversub_futex", "calls", ov_fs_fx, R);
        row("fastsync ping-pong x4 (2 cores)", bench_csv_samples(&o, P, "fastsync", "oversub_ns", "ns", ov_fs, R),
            n_over, fmt(b1, fx), fmt(b2, sl));
    }
    if (t_unc)
        row("two bare atomic RMWs (floor)", bench_csv_samples(&o, P, "rmw2", "uncontended_ns", "ns", rmw, R),
            n_unc, "-", "-");
    if (t_unc)
        row("two load+CAS RMWs (floor)", bench_csv_samples(&o, P, "cas2", "uncontended_ns", "ns", cas, R),
            n_unc, "-", "-");
    printf("(ping-pong: one round trip per iteration, 2 threads pinned to CPUs 0 and 1; x4: %d pairs,\n"
           " unpinned, ns per round trip as each pair sees it; futex/it: fastsync's own futex calls;\n"
           " sleeps/it: voluntary context switches of all threads)\n", OVER_PAIRS);
    free(v);
    return 0;
}
