/* SPDX-License-Identifier: MIT */
/* bench/bench.h - what every benchmark shares. Include it instead of fastsync.h.
 *
 * Written in the common subset of C11 and C++23, so the C programs (gcc, clang,
 * musl-gcc -static) and the C++ peer (std::counting_semaphore) share the same loops.
 *
 *   bench_now_ns()               CLOCK_MONOTONIC in ns (vDSO: no syscall)
 *   bench_median(v, n)           median of n doubles (sorts v)
 *   bench_futex_waits/wakes()    futex calls made by fastsync so far (flushed threads)
 *   bench_futex_flush()          adds this thread's futex counts to the totals
 *   bench_vcsw()                 voluntary context switches of the process so far
 *   bench_pin(cpu)               pins the calling thread (ignored if cpu >= ncpu)
 *   bench_limit_cpus(n)          limits the calling thread to CPUs 0..n-1 (those online)
 *   bench_libc()                 "glibc", "musl" (or "libc")
 *   bench_csv_row(...)           one machine-readable row, appended to --csv FILE
 *
 * The futex layer of fastsync.h is replaced by one that counts its calls in thread-local
 * counters (no shared cache line between the threads being measured) and then makes the
 * real system call; the count costs one add per system call and nothing on a fast path.
 */
#ifndef FASTSYNC_BENCH_H
#define FASTSYNC_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The loops that callgrind measures stay functions of their own (--toggle-collect). */
#define BENCH_NOINLINE __attribute__((noinline))

#ifdef __cplusplus
#define BENCH_TLS thread_local
#else
#define BENCH_TLS _Thread_local
#endif

static inline int bench_futex_wait(void *word, uint32_t expected, int shared, clockid_t clock,
                                   const struct timespec *abstime);
static inline void bench_futex_wake(void *word, int n, int shared);
#define FASTSYNC_FUTEX_WAIT bench_futex_wait
#define FASTSYNC_FUTEX_WAKE bench_futex_wake
#include "fastsync.h"

static BENCH_TLS unsigned long bench_tls_waits, bench_tls_wakes;
static _Atomic(unsigned long) bench_total_waits, bench_total_wakes;

static inline int bench_futex_wait(void *word, uint32_t expected, int shared, clockid_t clock,
                                   const struct timespec *abstime)
{
    bench_tls_waits++; /* thread-local: no atomic needed */
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static inline void bench_futex_wake(void *word, int n, int shared)
{
    bench_tls_wakes++;
    fastsync__wake_sys(word, n, shared);
}

static inline void bench_futex_flush(void)
{
    /* relaxed: statistics, read by main after joining the thread (the join orders them). */
    atomic_fetch_add_explicit(&bench_total_waits, bench_tls_waits, memory_order_relaxed);
    atomic_fetch_add_explicit(&bench_total_wakes, bench_tls_wakes, memory_order_relaxed);
    bench_tls_waits = bench_tls_wakes = 0;
}

/* Totals, including the calling thread's own unflushed counts. */
static inline unsigned long bench_futex_calls(void)
{
    bench_futex_flush();
    /* relaxed: the threads that added to them were joined (or are the caller). */
    return atomic_load_explicit(&bench_total_waits, memory_order_relaxed) +
           atomic_load_explicit(&bench_total_wakes, memory_order_relaxed);
}

static inline void bench_fail(const char *what)
{
    fprintf(stderr, "BENCH FAILED: %s\n", what);
    exit(1);
}

static inline uint64_t bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void bench_sleep_ns(uint64_t ns)
{
    struct timespec t;
    t.tv_sec = (time_t)(ns / 1000000000u);
    t.tv_nsec = (long)(ns % 1000000000u);
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline double bench_min(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
    return m;
}

static inline double bench_max(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] > m ? v[i] : m;
    return m;
}

/* Voluntary context switches of the whole process (every thread, live or joined): each one
 * is a thread that went to sleep, in a futex or elsewhere. */
static inline long bench_vcsw(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw;
}

static inline long bench_ncpu(void) { return sysconf(_SC_NPROCESSORS_ONLN); }

static inline void bench_pin(int cpu)
{
    if (cpu < 0 || cpu >= bench_ncpu()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static inline void bench_limit_cpus(int n)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < n && cpu < bench_ncpu(); cpu++) CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static inline const char *bench_libc(void)
{
#if defined(__GLIBC__)
    return "glibc";
#elif defined(__linux__)
    return "musl"; /* musl deliberately defines no macro; the other Linux libc we build with */
#else
    return "libc";
#endif
}

static inline pthread_t bench_thread_start(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, arg) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        exit(2);
    }
    return t;
}

static inline void *bench__no_work(void *p) { return p; }

/* Starts a thread that does nothing and joins it: a program that measures "uncontended" calls
 * first makes itself multi-threaded, as the C libraries' own fast paths for a single-threaded
 * process would otherwise flatter the peers. */
static inline void bench_second_thread(void)
{
    pthread_join(bench_thread_start(bench__no_work, NULL), NULL);
}

/* A program's own option --NAME N (bench_parse knows only the common ones): its value, taken
 * out of argv, or dflt when absent. */
static inline long bench_take_opt(int *argc, char **argv, const char *name, long dflt)
{
    for (int i = 1; i + 1 < *argc; i++)
        if (strcmp(argv[i], name) == 0) {
            long v = atol(argv[i + 1]);
            for (int j = i; j + 2 <= *argc; j++) argv[j] = argv[j + 2];
            *argc -= 2;
            return v;
        }
    return dflt;
}


/* Memory for one object on its own cache line(s), so that two objects never share one. */
static inline void *bench_alloc(size_t size)
{
    void *p = aligned_alloc(64, (size + 63) / 64 * 64);
    if (!p) bench_fail("out of memory");
    memset(p, 0, size);
    return p;
}

/* Two bare atomic RMWs, n times: the floor under an uncontended post + wait (each of which
 * needs at least one RMW on the semaphore word). ns per iteration. */
static _Atomic(long) *bench_rmw_word;
BENCH_NOINLINE static void bench_rmw2_loop(long n)
{
    for (long i = 0; i < n; i++) {
        /* release / acquire: the orders a post and a wait use. No other thread touches the
         * word, so nothing pairs with them: the loop only measures what two RMWs cost. */
        atomic_fetch_add_explicit(bench_rmw_word, 1, memory_order_release);
        atomic_fetch_sub_explicit(bench_rmw_word, 1, memory_order_acquire);
    }
}

static inline double bench_rmw2(long n)
{
    if (!bench_rmw_word) bench_rmw_word = (_Atomic(long) *)bench_alloc(sizeof *bench_rmw_word);
    uint64_t t0 = bench_now_ns();
    bench_rmw2_loop(n);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)n;
}

/* Two load + CAS RMWs, n times: the floor under any semaphore that never lets its value
 * go below 0 or above its maximum (a wait must look before it takes; a post that may fail
 * with EOVERFLOW must look before it adds). ns per iteration. */
BENCH_NOINLINE static void bench_cas2_loop(long n)
{
    for (long i = 0; i < n; i++) {
        /* relaxed loads: guesses for the CASes. release / acquire CASes: the orders a post
         * and a wait use; nothing pairs with them (one thread), they only cost. */
        long v = atomic_load_explicit(bench_rmw_word, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(bench_rmw_word, &v, v + 1, memory_order_release,
                                                      memory_order_relaxed)) {}
        v = atomic_load_explicit(bench_rmw_word, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(bench_rmw_word, &v, v - 1, memory_order_acquire,
                                                      memory_order_relaxed)) {}
    }
}

static inline double bench_cas2(long n)
{
    if (!bench_rmw_word) bench_rmw_word = (_Atomic(long) *)bench_alloc(sizeof *bench_rmw_word);
    uint64_t t0 = bench_now_ns();
    bench_cas2_loop(n);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)n;
}

/* pthread_mutex lock + unlock, n times, uncontended. ns per iteration. */
static pthread_mutex_t bench_mutex = PTHREAD_MUTEX_INITIALIZER;
BENCH_NOINLINE static void bench_mutex_loop(long n)
{
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&bench_mutex);
        pthread_mutex_unlock(&bench_mutex);
    }
}

static inline double bench_mutex_ns(long n)
{
    uint64_t t0 = bench_now_ns();
    bench_mutex_loop(n);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)n;
}

/* Command line common to every program. */
struct bench_opts {
    int quick;         /* --quick: short runs, same tables */
    int reps;          /* --reps N (default 5): medians over N repetitions */
    const char *csv;   /* --csv FILE: append machine-readable rows */
    const char *build; /* --build NAME: the build label in the CSV (default: the libc) */
    const char *op;    /* --op NAME: run one loop only (for callgrind / strace), no output */
    long iters;        /* --iters N: iterations for --op (and overrides the default) */
};

/* Parses the common options; returns the index of the first positional argument, with
 * the remaining ones moved to argv[first..argc). Unknown options: exit 2. */
static inline int bench_parse(int argc, char **argv, struct bench_opts *o)
{
    int out = 1;
    o->quick = 0;
    o->reps = 5;
    o->csv = NULL;
    o->build = bench_libc();
    o->op = NULL;
    o->iters = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) o->quick = 1;
        else if (strcmp(a, "--reps") == 0 && next) o->reps = atoi(argv[++i]);
        else if (strcmp(a, "--csv") == 0 && next) o->csv = argv[++i];
        else if (strcmp(a, "--build") == 0 && next) o->build = argv[++i];
        else if (strcmp(a, "--op") == 0 && next) o->op = argv[++i];
        else if (strcmp(a, "--iters") == 0 && next) o->iters = atol(argv[++i]);
        else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
            exit(2);
        } else argv[out++] = argv[i];
    }
    if (o->reps < 1) o->reps = 1;
    return out;
}

/* One CSV row: bench,build,variant,metric,unit,median,min,max,reps. */
static inline void bench_csv_row(const struct bench_opts *o, const char *bench, const char *variant,
                                 const char *metric, const char *unit, double median, double min,
                                 double max, int reps)
{
    if (!o->csv) return;
    FILE *f = fopen(o->csv, "a");
    if (!f) {
        perror(o->csv);
        exit(2);
    }
    fprintf(f, "%s,%s,%s,%s,%s,%.6g,%.6g,%.6g,%d\n", bench, o->build, variant, metric, unit, median,
            min, max, reps);
    fclose(f);
}

/* Row from n samples: the median, min and max of v (v is sorted). */
static inline double bench_csv_samples(const struct bench_opts *o, const char *bench,
                                       const char *variant, const char *metric, const char *unit,
                                       double *v, int n)
{
    double med = bench_median(v, n);
    bench_csv_row(o, bench, variant, metric, unit, med, bench_min(v, n), bench_max(v, n), n);
    return med;
}

#endif /* FASTSYNC_BENCH_H */
