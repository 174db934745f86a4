/* SPDX-License-Identifier: MIT */
/* bench/mutex.c - fastsync_mutex_t against pthread_mutex_t: contention and fairness.
 *
 * T threads (2, 4, 8) share one mutex for a time box; each loop takes the mutex, adds to a
 * plain counter and touches a cache line of shared data, unlocks, and works a little outside
 * (about as long as inside). Printed per implementation and T: lock+unlock pairs per second
 * (all threads), the spread between threads (slowest thread's pairs / fastest's: 1.0 is even,
 * near 0 is starvation), and for fastsync the futex calls per 1000 pairs. Implementations
 * alternate within each repetition; medians of --reps. The table decides the mutex's
 * fairness policy (see the mutex section of fastsync.h).
 *
 * usage: mutex [--quick] [--reps N] [--ms N]
 */
#include "bench.h"

enum { MAXT = 8 };

struct shared_data {
    _Alignas(64) unsigned long counter;
    unsigned long line[7];
};

static fastsync_mutex_t fm = FASTSYNC_MUTEX_INIT;
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static struct shared_data data;
static _Atomic(int) go, stop;
static int impl; /* 0 fastsync, 1 pthread */

struct th {
    pthread_t t;
    unsigned long pairs;
};

static BENCH_NOINLINE void work(unsigned n)
{
    for (volatile unsigned i = 0; i < n; i++) {
    }
}

static void *worker(void *p)
{
    struct th *me = (struct th *)p;
    unsigned long n = 0;
    /* acquire/relaxed: a start flag and a stop flag; the counts are read after the join. */
    while (!atomic_load_explicit(&go, memory_order_acquire)) {
    }
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        if (impl == 0)
            fastsync_mutex_lock(&fm);
        else
            pthread_mutex_lock(&pm);
        data.counter++;
        for (int i = 0; i < 7; i++) data.line[i] += data.counter;
        work(20);
        if (impl == 0)
            fastsync_mutex_unlock(&fm);
        else
            pthread_mutex_unlock(&pm);
        work(20);
        n++;
    }
    me->pairs = n;
    bench_futex_flush();
    return NULL;
}

/* One run: pairs per second and the slowest/fastest ratio; futex calls per 1000 pairs. */
static void one(int which, int nt, unsigned ms, double *rate, double *spread, double *calls)
{
    struct th t[MAXT];
    impl = which;
    data.counter = 0;
    atomic_store(&go, 0);
    atomic_store(&stop, 0);
    unsigned long c0 = bench_futex_calls();
    for (int i = 0; i < nt; i++)
        if (pthread_create(&t[i].t, NULL, worker, &t[i]) != 0) bench_fail("pthread_create");
    uint64_t t0 = bench_now_ns();
    atomic_store_explicit(&go, 1, memory_order_release);
    bench_sleep_ns((uint64_t)ms * 1000000u);
    atomic_store_explicit(&stop, 1, memory_order_relaxed);
    unsigned long total = 0, lo = (unsigned long)-1, hi = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i].t, NULL);
        total += t[i].pairs;
        if (t[i].pairs < lo) lo = t[i].pairs;
        if (t[i].pairs > hi) hi = t[i].pairs;
    }
    double secs = (double)(bench_now_ns() - t0) / 1e9;
    if (total != data.counter) bench_fail("the counter differs from the pairs: no mutual exclusion");
    *rate = (double)total / secs;
    *spread = hi ? (double)lo / (double)hi : 0;
    *calls = total ? 1000.0 * (double)(bench_futex_calls() - c0) / (double)total : 0;
}

int main(int argc, char **argv)
{
    int reps = 5;
    unsigned ms = 1000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            reps = 1;
            ms = 200;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--ms") && i + 1 < argc) {
            ms = (unsigned)atoi(argv[++i]);
        }
    }
    if (reps < 1 || reps > 99) bench_fail("--reps 1..99");
    printf("mutex contention, %ld CPUs, %u ms per run, median of %d (%s)\n",
           sysconf(_SC_NPROCESSORS_ONLN), ms, reps, bench_libc());
    printf("%-8s %-9s %14s %8s %14s\n", "threads", "mutex", "pairs/s", "spread", "futex/1000");
    static const int threads[] = { 2, 4, 8 };
    for (unsigned k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        double rate[2][99], spread[2][99], calls[2][99];
        for (int r = 0; r < reps; r++)
            for (int w = 0; w < 2; w++) one(w, threads[k], ms, &rate[w][r], &spread[w][r], &calls[w][r]);
        for (int w = 0; w < 2; w++) {
            double sp = bench_median(spread[w], reps), ra = bench_median(rate[w], reps);
            if (w == 0)
                printf("%-8d %-9s %14.0f %8.2f %14.1f\n", threads[k], "fastsync", ra, sp,
                       bench_median(calls[w], reps));
            else
                printf("%-8d %-9s %14.0f %8.2f %14s\n", threads[k], "pthread", ra, sp, "-");
        }
    }
    return 0;
}
