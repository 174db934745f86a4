/* SPDX-License-Identifier: MIT */
/* bench/condpp.c - condition variable ping-pong: fastsync_mutex_t + fastsync_cond_t against
 * pthread_mutex_t + pthread_cond_t.
 *
 * Two threads hand a turn back and forth through one mutex and one condition variable: each
 * waits (under the mutex) until the turn is its own, passes it to the other, unlocks and
 * signals. Every hand-off makes the other thread's wait return, so each round trip is two
 * wakeups. Built with gcc the peer is glibc's pthread_mutex_t + pthread_cond_t, with
 * musl-gcc -static musl's (bench/run builds both).
 * Printed per implementation: round trips per second (median of --reps, min-max), and
 * fastsync's futex calls per round trip (its replaceable futex layer, as perf2; bench/run
 * counts the peer's with perf stat, or strace). Implementations alternate within each
 * repetition.
 *
 *   condpp [--quick] [--reps N] [--iters N] [--csv FILE] [--build NAME]
 *   condpp --op condpp-fs|condpp-peer --iters N   one ping-pong of N round trips, no output
 *                                                (for perf stat or strace)
 */
#include "bench.h"

enum { IMPL_FS, IMPL_PEER, NIMPL };
static const char *const impl_variant[NIMPL] = { "fastsync", "peer" };
static const char *const impl_title[NIMPL] = { "fastsync_mutex_t + fastsync_cond_t",
                                               "pthread_mutex_t + pthread_cond_t" };

struct pp {
    long n;   /* round trips */
    int turn; /* 0 or 1: whose move it is; guarded by the mutex of the implementation */
    fastsync_mutex_t fm;
    fastsync_cond_t fc;
    pthread_mutex_t pm;
    pthread_cond_t pc;
};

struct player { struct pp *g; int me; };

/* One player's loop: n times, wait for the turn, hand it over, signal. The same for both
 * implementations; only the four calls differ. */
#define PLAY(P, LOCK, UNLOCK, WAIT, SIGNAL)                                                   \
    static void *P##_play(void *arg)                                                          \
    {                                                                                         \
        struct player *p = (struct player *)arg;                                              \
        struct pp *g = p->g;                                                                  \
        for (long i = 0; i < g->n; i++) {                                                     \
            LOCK;                                                                             \
            while (g->turn != p->me) WAIT;                                                    \
            g->turn = !p->me;                                                                 \
            UNLOCK;                                                                           \
            SIGNAL;                                                                           \
        }                                                                                     \
        bench_futex_flush();                                                                  \
        return NULL;                                                                          \
    }
PLAY(fs, fastsync_mutex_lock(&g->fm), fastsync_mutex_unlock(&g->fm),
     fastsync_cond_wait(&g->fc, &g->fm), fastsync_cond_signal(&g->fc))
PLAY(peer, pthread_mutex_lock(&g->pm), pthread_mutex_unlock(&g->pm),
     pthread_cond_wait(&g->pc, &g->pm), pthread_cond_signal(&g->pc))

/* n round trips with impl: round trips per second; *futex gets fastsync's futex calls per
 * round trip (0 for the peer, whose calls this process cannot see). */
static double pingpong(int impl, long n, double *futex)
{
    struct pp *g = (struct pp *)bench_alloc(sizeof *g);
    g->n = n;
    if (fastsync_mutex_init(&g->fm, 0) != 0 || fastsync_cond_init(&g->fc, 0) != 0)
        bench_fail("fastsync init");
    if (pthread_mutex_init(&g->pm, NULL) != 0 || pthread_cond_init(&g->pc, NULL) != 0)
        bench_fail("pthread init");
    void *(*fn)(void *) = impl == IMPL_FS ? fs_play : peer_play;
    struct player pl[2] = { { g, 0 }, { g, 1 } };
    unsigned long f0 = bench_futex_calls();
    uint64_t t0 = bench_now_ns();
    pthread_t t[2];
    for (int i = 0; i < 2; i++) t[i] = bench_thread_start(fn, &pl[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    uint64_t t1 = bench_now_ns();
    *futex = (double)(bench_futex_calls() - f0) / (double)n;
    /* every hand-off happened exactly once: n round trips end with the turn back at 0 */
    if (g->turn != 0) bench_fail("the turn did not come back");
    if (fastsync_cond_destroy(&g->fc) != 0 || fastsync_mutex_destroy(&g->fm) != 0)
        bench_fail("fastsync destroy: still in use");
    pthread_cond_destroy(&g->pc);
    pthread_mutex_destroy(&g->pm);
    free(g);
    return (double)n / ((double)(t1 - t0) / 1e9);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_parse(argc, argv, &o);
    long n = o.iters ? o.iters : o.quick ? 20000 : 200000;
    if (o.op) {
        double f;
        if (strcmp(o.op, "condpp-fs") == 0) pingpong(IMPL_FS, n, &f);
        else if (strcmp(o.op, "condpp-peer") == 0) pingpong(IMPL_PEER, n, &f);
        else {
            fprintf(stderr, "condpp: unknown --op %s\n", o.op);
            return 2;
        }
        return 0;
    }
    double rt[NIMPL][64], fx[NIMPL][64];
    int reps = o.reps > 64 ? 64 : o.reps;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < NIMPL; i++) rt[i][r] = pingpong(i, n, &fx[i][r]);
    printf("condvar ping-pong, %s: 2 threads, one mutex + one condvar, %ld round trips (2 wakeups"
           " each), medians of %d\n", bench_libc(), n, reps);
    printf("%-36s %14s %21s %16s\n", "implementation", "round trips/s", "min-max", "futex/round trip");
    for (int i = 0; i < NIMPL; i++) {
        double lo = bench_min(rt[i], reps), hi = bench_max(rt[i], reps);
        double med = bench_csv_samples(&o, "condpp", impl_variant[i], "roundtrips_s", "rt/s", rt[i], reps);
        double f = bench_csv_samples(&o, "condpp", impl_variant[i], "futex_per_rt", "calls", fx[i], reps);
        char fs[32];
        if (i == IMPL_FS) snprintf(fs, sizeof fs, "%.3f", f);
        else snprintf(fs, sizeof fs, "(bench/run)"); /* bench/run counts the peer's */
        printf("%-36s %14.0f %10.0f-%-10.0f %16s\n", impl_title[i], med, lo, hi, fs);
    }
    return 0;
}
