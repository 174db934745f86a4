/* SPDX-License-Identifier: MIT */
/* bench/sem_loops.h - the semaphore loops, written once, instantiated per implementation.
 *
 * Include it (no include guard, on purpose) after defining SEMI to an adapter prefix P for
 * which these exist:
 *   typedef ... P_sem;
 *   P_sem *P_sem_new(unsigned value);   void P_sem_free(P_sem *s);
 *   void P_sem_post(P_sem *s);          void P_sem_wait(P_sem *s);
 *   unsigned P_sem_value(P_sem *s);     (a snapshot, to check that a loop balanced)
 * It defines P_uncontended_loop/P_uncontended (post then wait on one semaphore) and
 * P_pingpong (pairs of threads, each pair bouncing one token over two semaphores).
 * The same text serves libc's sem_t, fastsync and std::counting_semaphore (C++23).
 */
#ifndef SEMI
#error "define SEMI (the adapter prefix) before including sem_loops.h"
#endif

#ifndef SL
#define SL_CAT_(a, b) a##_##b
#define SL_CAT(a, b) SL_CAT_(a, b)
#define SL(name) SL_CAT(SEMI, name)

/* What a ping-pong run measured besides its time. */
struct pp_stats {
    double vcsw_per_rt;  /* voluntary context switches (sleeps) per round trip, all threads */
    double futex_per_rt; /* fastsync's futex calls per round trip (0 for the others) */
};
#endif

BENCH_NOINLINE static void SL(uncontended_loop)(SL(sem) *s, long n)
{
    for (long i = 0; i < n; i++) {
        SL(sem_post)(s);
        SL(sem_wait)(s);
    }
}

/* post then wait, n times, one thread: ns per iteration. */
static double SL(uncontended)(long n)
{
    SL(sem) *s = SL(sem_new)(0);
    uint64_t t0 = bench_now_ns();
    SL(uncontended_loop)(s, n);
    uint64_t t1 = bench_now_ns();
    if (SL(sem_value)(s) != 0) bench_fail("uncontended loop: value not 0");
    SL(sem_free)(s);
    return (double)(t1 - t0) / (double)n;
}

struct SL(pp_arg) {
    SL(sem) *ping, *pong;
    long n;
    int cpu; /* -1: not pinned */
    pthread_barrier_t *start;
    uint64_t t_start, t_end; /* the thread's own clock readings around its loop */
};

/* Sends the token: post ping, then wait for it to come back on pong. */
static void *SL(pinger)(void *p)
{
    struct SL(pp_arg) *a = (struct SL(pp_arg) *)p;
    bench_pin(a->cpu);
    pthread_barrier_wait(a->start);
    a->t_start = bench_now_ns();
    for (long i = 0; i < a->n; i++) {
        SL(sem_post)(a->ping);
        SL(sem_wait)(a->pong);
    }
    a->t_end = bench_now_ns();
    bench_futex_flush();
    return NULL;
}

/* Returns the token: wait on ping, post pong. */
static void *SL(ponger)(void *p)
{
    struct SL(pp_arg) *a = (struct SL(pp_arg) *)p;
    bench_pin(a->cpu);
    pthread_barrier_wait(a->start);
    a->t_start = bench_now_ns();
    for (long i = 0; i < a->n; i++) {
        SL(sem_wait)(a->ping);
        SL(sem_post)(a->pong);
    }
    a->t_end = bench_now_ns();
    bench_futex_flush();
    return NULL;
}

/* `pairs` independent pairs, n round trips each, all at once. pin: the pinger of every pair
 * on CPU 0, the ponger on CPU 1 (the two-core case); else the scheduler places them.
 * Returns ns per round trip as one pair sees it (elapsed / n); st gets the counts. */
static double SL(pingpong)(long n, int pairs, bool pin, struct pp_stats *st)
{
    enum { MAX_PAIRS = 64 };
    if (pairs < 1 || pairs > MAX_PAIRS) bench_fail("pairs out of range");
    struct SL(pp_arg) arg[2 * MAX_PAIRS];
    pthread_t th[2 * MAX_PAIRS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)(2 * pairs + 1));
    for (int k = 0; k < pairs; k++) {
        SL(sem) *ping = SL(sem_new)(0), *pong = SL(sem_new)(0);
        for (int j = 0; j < 2; j++) {
            struct SL(pp_arg) *a = &arg[2 * k + j];
            a->ping = ping;
            a->pong = pong;
            a->n = n;
            a->cpu = pin ? j : -1;
            a->start = &start;
            th[2 * k + j] = bench_thread_start(j == 0 ? SL(pinger) : SL(ponger), a);
        }
    }
    unsigned long f0 = bench_futex_calls();
    long v0 = bench_vcsw();
    pthread_barrier_wait(&start);
    /* From the first thread's start to the last one's end (this thread may run late). */
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (int i = 0; i < 2 * pairs; i++) {
        pthread_join(th[i], NULL);
        t0 = arg[i].t_start < t0 ? arg[i].t_start : t0;
        t1 = arg[i].t_end > t1 ? arg[i].t_end : t1;
    }
    long v1 = bench_vcsw();
    unsigned long f1 = bench_futex_calls();
    pthread_barrier_destroy(&start);
    for (int k = 0; k < pairs; k++) {
        if (SL(sem_value)(arg[2 * k].ping) != 0 || SL(sem_value)(arg[2 * k].pong) != 0)
            bench_fail("ping-pong: a token was lost or duplicated");
        SL(sem_free)(arg[2 * k].ping);
        SL(sem_free)(arg[2 * k].pong);
    }
    double rts = (double)n * pairs;
    if (st) {
        st->vcsw_per_rt = (double)(v1 - v0) / rts;
        st->futex_per_rt = (double)(f1 - f0) / rts;
    }
    return (double)(t1 - t0) / (double)n;
}
