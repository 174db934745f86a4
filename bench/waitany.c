/* SPDX-License-Identifier: MIT */
/* bench/waitany.c - wake latency of a wait for any of N objects: fastsync_wait_any against
 * one semaphore's wait and against N counters under one pthread mutex + condvar.
 *
 * A ping-pong of two threads (pinned to CPUs 0 and 1, as perf2's): the poster waits a gap
 * (--gap-us, default 50: a busy wait on the clock, long enough for the waiter to be asleep,
 * so that the post wakes a blocked waiter), stores the time, posts object `target` of N and
 * waits on a reply semaphore; the waiter waits until one of the N objects is ready, checks
 * that it is `target`, records (now - the poster's time) as that wake's latency, and posts
 * the reply. The reply is a fastsync_sem_t waited with fastsync_sem_wait in every variant,
 * so the variants differ only in the leg measured. (--gap-us 0: a plain ping-pong, in which
 * the post often comes before the waiter sleeps.)
 * N = 1, 8, 64; the object posted is the last entry (the worst place for a scan) or the first.
 * Variants:
 *   sem      fastsync_sem_wait on the one semaphore (N = 1): the baseline
 *   waitv    fastsync_wait_any over N semaphores, sleeping in futex_waitv
 *   fallback the same, built with -DWAITANY_FALLBACK (bench/meson.build: waitany_fallback):
 *            FASTSYNC_FUTEX_WAITV answers ENOSYS, and the wait sleeps on one entry at a time
 *            in slices from 50 us to 10 ms (fastsync.h, "Waiting for any of several objects")
 *   cond     what portable C writes today: N counters under one pthread_mutex_t, one
 *            pthread_cond_t for all of them; the waiter scans the counters under the mutex
 *            and waits on the condvar, the poster increments, unlocks and broadcasts (a
 *            condvar shared by objects that different threads may wait for needs a broadcast)
 * Printed per variant and case: the one-way wake latency (post to the waiter's return; the
 * median of every round trip of a pass), the round trip (pass time / round trips, less the
 * gap), each the median of --reps passes with min-max, and fastsync's futex calls per round
 * trip (waits, wakes and futex_waitv, counted in its replaceable futex layer; the cond
 * variant's own are the C library's, which bench/run counts, futex and futex_waitv, with
 * perf stat or strace). The cases take turns within each repetition.
 *
 *   waitany [--quick] [--reps N] [--iters N] [--gap-us G] [--csv FILE] [--build NAME]
 *   waitany --op VARIANT-CASE --iters N [--gap-us G]   one ping-pong, no output (for
 *           perf stat or strace); e.g. --op waitv-n64_last, --op cond-n8_first, --op sem-n1
 *           (fallback-... in the fallback build)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <time.h>

/* fastsync's multi-wait goes through this function: counted, or (the fallback build) refused
 * as a kernel without futex_waitv would. */
struct fastsync__waitv;
static inline int waitany_waitv(const struct fastsync__waitv *v, unsigned n, clockid_t clock,
                                const struct timespec *abstime);
#define FASTSYNC_FUTEX_WAITV waitany_waitv
#include "bench.h"

static BENCH_TLS unsigned long waitany_tls_waitv;
static _Atomic(unsigned long) waitany_total_waitv;

static inline int waitany_waitv(const struct fastsync__waitv *v, unsigned n, clockid_t clock,
                                const struct timespec *abstime)
{
#ifdef WAITANY_FALLBACK
    (void)v;
    (void)n;
    (void)clock;
    (void)abstime;
    return ENOSYS; /* no system call made: nothing to count */
#else
    waitany_tls_waitv++; /* thread-local: no atomic needed */
    return fastsync__waitv_sys(v, n, clock, abstime);
#endif
}

static void waitany_flush(void)
{
    bench_futex_flush();
    /* relaxed: statistics, read by main after joining the thread (the join orders them). */
    atomic_fetch_add_explicit(&waitany_total_waitv, waitany_tls_waitv, memory_order_relaxed);
    waitany_tls_waitv = 0;
}

/* fastsync's futex system calls so far: waits, wakes and multi-waits (joined threads, and
 * the caller's own). */
static unsigned long waitany_calls(void)
{
    waitany_flush();
    return bench_futex_calls() + atomic_load_explicit(&waitany_total_waitv, memory_order_relaxed);
}

#ifdef WAITANY_FALLBACK
#define ANY_NAME "fallback"
#define ANY_TITLE "fastsync_wait_any, fallback (no futex_waitv)"
#else
#define ANY_NAME "waitv"
#define ANY_TITLE "fastsync_wait_any (futex_waitv)"
#endif

enum { V_SEM, V_ANY, V_COND };
static const char *const var_name[] = { "sem", ANY_NAME, "cond" };
static const char *const var_title[] = { "fastsync_sem_wait (N = 1)", ANY_TITLE,
                                         "pthread mutex + condvar, N counters" };

struct bench_case { int var; unsigned n; int last; };
static const struct bench_case cases[] = {
#ifndef WAITANY_FALLBACK
    { V_SEM, 1, 1 },
#endif
    { V_ANY, 1, 1 },  { V_ANY, 8, 0 },  { V_ANY, 8, 1 },  { V_ANY, 64, 0 },  { V_ANY, 64, 1 },
#ifndef WAITANY_FALLBACK
    { V_COND, 1, 1 }, { V_COND, 8, 0 }, { V_COND, 8, 1 }, { V_COND, 64, 0 }, { V_COND, 64, 1 },
#endif
};
enum { NCASES = sizeof cases / sizeof cases[0], MAXN = 64, MAXREPS = 64 };

/* "n1", "n8_first", "n64_last" */
static void case_name(const struct bench_case *c, char *buf, size_t size)
{
    if (c->n == 1) snprintf(buf, size, "n1");
    else snprintf(buf, size, "n%u_%s", c->n, c->last ? "last" : "first");
}

struct wa {
    int var;
    unsigned n, target;
    long iters;
    uint64_t gap_ns;                      /* the poster's wait before each post */
    double *lat_us;                       /* the waiter's latency of each round trip */
    fastsync_wait_entry_t list[MAXN];     /* V_ANY: the N semaphores, in order */
    fastsync_sem_t sems[MAXN];            /* V_SEM, V_ANY: the objects, as an array of them */
    _Alignas(64) fastsync_sem_t reply;    /* the way back, the same in every variant */
    _Alignas(64) _Atomic(uint64_t) t_post; /* when the poster posted (bench_now_ns) */
    _Alignas(64) pthread_mutex_t m;       /* V_COND: guards count */
    pthread_cond_t c;                     /* V_COND: some count went up */
    unsigned count[MAXN];                 /* V_COND: the objects */
};

static void *poster(void *arg)
{
    struct wa *g = (struct wa *)arg;
    bench_pin(1);
    for (long i = 0; i < g->iters; i++) {
        uint64_t until = bench_now_ns() + g->gap_ns;
        while (bench_now_ns() < until) {} /* busy: this CPU stays awake, the waiter sleeps */
        /* relaxed: published by the post (release) or the mutex, read after the wake. */
        atomic_store_explicit(&g->t_post, bench_now_ns(), memory_order_relaxed);
        if (g->var == V_COND) {
            pthread_mutex_lock(&g->m);
            g->count[g->target]++;
            pthread_mutex_unlock(&g->m);
            pthread_cond_broadcast(&g->c);
        } else {
            fastsync_sem_post(&g->sems[g->target]);
        }
        fastsync_sem_wait(&g->reply);
    }
    waitany_flush();
    return NULL;
}

static void *waiter(void *arg)
{
    struct wa *g = (struct wa *)arg;
    bench_pin(0);
    for (long i = 0; i < g->iters; i++) {
        unsigned got = g->n;
        if (g->var == V_SEM) {
            fastsync_sem_wait(&g->sems[g->target]);
            got = g->target;
        } else if (g->var == V_ANY) {
            if (fastsync_wait_any(g->list, g->n, &got) != 0) bench_fail("fastsync_wait_any");
        } else {
            pthread_mutex_lock(&g->m);
            for (;;) {
                for (unsigned k = 0; k < g->n && got == g->n; k++)
                    if (g->count[k] != 0) got = k;
                if (got < g->n) break;
                pthread_cond_wait(&g->c, &g->m);
            }
            g->count[got]--;
            pthread_mutex_unlock(&g->m);
        }
        uint64_t t1 = bench_now_ns();
        if (got != g->target) bench_fail("woken for an object nobody posted");
        /* relaxed: the wait above synchronized with the post that followed the store. */
        g->lat_us[i] = (double)(t1 - atomic_load_explicit(&g->t_post, memory_order_relaxed)) / 1e3;
        fastsync_sem_post(&g->reply);
    }
    waitany_flush();
    return NULL;
}

struct pass { double wake_us, rt_us, futex; };

/* One ping-pong of iters round trips for case c. */
static struct pass pingpong(const struct bench_case *c, long iters, uint64_t gap_ns)
{
    struct wa *g = (struct wa *)bench_alloc(sizeof *g);
    g->var = c->var;
    g->n = c->n;
    g->target = c->last ? c->n - 1 : 0;
    g->iters = iters;
    g->gap_ns = gap_ns;
    g->lat_us = (double *)bench_alloc((size_t)iters * sizeof(double));
    for (unsigned k = 0; k < MAXN; k++) {
        if (fastsync_sem_init(&g->sems[k], 0, 0) != 0) bench_fail("fastsync_sem_init");
        g->list[k] = fastsync_wait_sem(&g->sems[k]);
    }
    if (fastsync_sem_init(&g->reply, 0, 0) != 0) bench_fail("fastsync_sem_init");
    if (pthread_mutex_init(&g->m, NULL) != 0 || pthread_cond_init(&g->c, NULL) != 0)
        bench_fail("pthread init");
    unsigned long f0 = waitany_calls();
    uint64_t t0 = bench_now_ns();
    pthread_t w = bench_thread_start(waiter, g), p = bench_thread_start(poster, g);
    pthread_join(p, NULL);
    pthread_join(w, NULL);
    uint64_t t1 = bench_now_ns();
    struct pass r;
    r.futex = (double)(waitany_calls() - f0) / (double)iters;
    r.rt_us = ((double)(t1 - t0) / (double)iters - (double)gap_ns) / 1e3;
    r.wake_us = bench_median(g->lat_us, (int)iters);
    /* every post was taken exactly once, and every wait left every semaphore it registered on */
    for (unsigned k = 0; k < MAXN; k++)
        if (fastsync_sem_getvalue(&g->sems[k]) != 0 || g->count[k] != 0 ||
            fastsync_sem_destroy(&g->sems[k]) != 0)
            bench_fail("an object kept a token or a registered waiter");
    if (fastsync_sem_getvalue(&g->reply) != 0 || fastsync_sem_destroy(&g->reply) != 0)
        bench_fail("the reply semaphore did not balance");
    pthread_cond_destroy(&g->c);
    pthread_mutex_destroy(&g->m);
    free(g->lat_us);
    free(g);
    return r;
}

int main(int argc, char **argv)
{
    /* --gap-us G, taken out before the common options */
    double gap_us = 50;
    int argn = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gap-us") == 0 && i + 1 < argc) gap_us = atof(argv[++i]);
        else argv[argn++] = argv[i];
    }
    argc = argn;
    if (!(gap_us >= 0 && gap_us <= 1e6)) bench_fail("--gap-us takes 0 to 1000000");
    uint64_t gap_ns = (uint64_t)(gap_us * 1e3);
    struct bench_opts o;
    bench_parse(argc, argv, &o);
#ifdef WAITANY_FALLBACK
    /* a wake the waiter sees only at the end of its slice: about 100 us per round trip */
    long n = o.iters ? o.iters : o.quick ? 200 : 1000;
#else
    long n = o.iters ? o.iters : o.quick ? 300 : 3000;
#endif
    char name[32];
    if (o.op) {
        for (int i = 0; i < NCASES; i++) {
            char full[48];
            case_name(&cases[i], name, sizeof name);
            snprintf(full, sizeof full, "%s-%s", var_name[cases[i].var], name);
            if (strcmp(o.op, full) == 0) {
                (void)pingpong(&cases[i], n, gap_ns);
                return 0;
            }
        }
        fprintf(stderr, "waitany: unknown --op %s\n", o.op);
        return 2;
    }
    static struct pass s[NCASES][MAXREPS];
    int reps = o.reps > MAXREPS ? MAXREPS : o.reps;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < NCASES; i++) s[i][r] = pingpong(&cases[i], n, gap_ns);
    printf("wait for any of N, %s%s: 2 threads on CPUs 0 and 1, the waiter woken for one of N"
           " objects, replying on a semaphore; %ld round trips, each post %.0f us after the"
           " reply; medians of %d passes\n",
           bench_libc(), cases[0].var == V_ANY ? ", fallback build" : "", n, gap_us, reps);
    printf("%-44s %-9s %8s %17s %8s %17s %9s\n", "variant", "case", "wake us", "min-max", "rt us",
           "min-max", "futex/rt");
    for (int i = 0; i < NCASES; i++) {
        const struct bench_case *c = &cases[i];
        double wake[MAXREPS], rt[MAXREPS], fx[MAXREPS];
        for (int r = 0; r < reps; r++) {
            wake[r] = s[i][r].wake_us;
            rt[r] = s[i][r].rt_us;
            fx[r] = s[i][r].futex;
        }
        char metric[64], mm_wake[40], mm_rt[40], fxs[32];
        case_name(c, name, sizeof name);
        snprintf(mm_wake, sizeof mm_wake, "%.2f-%.2f", bench_min(wake, reps), bench_max(wake, reps));
        snprintf(mm_rt, sizeof mm_rt, "%.2f-%.2f", bench_min(rt, reps), bench_max(rt, reps));
        snprintf(metric, sizeof metric, "%s_wake_us", name);
        double mw = bench_csv_samples(&o, "waitany", var_name[c->var], metric, "us", wake, reps);
        snprintf(metric, sizeof metric, "%s_rt_us", name);
        double mr = bench_csv_samples(&o, "waitany", var_name[c->var], metric, "us", rt, reps);
        snprintf(metric, sizeof metric, "%s_futex", name);
        double mf = bench_csv_samples(&o, "waitany", var_name[c->var], metric, "calls", fx, reps);
        if (c->var == V_COND) snprintf(fxs, sizeof fxs, "(bench/run)"); /* the C library's calls */
        else snprintf(fxs, sizeof fxs, "%.3f", mf);
        printf("%-44s %-9s %8.2f %17s %8.2f %17s %9s\n", var_title[c->var], name, mw, mm_wake, mr,
               mm_rt, fxs);
    }
    printf("(wake: post to the waiter's return, median of each pass's round trips; rt: a whole"
           " round trip less the gap, the reply leg a fastsync semaphore in every variant;"
           " futex/rt: fastsync's calls, both legs)\n");
    return 0;
}
