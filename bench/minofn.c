/* SPDX-License-Identifier: MIT */
/* bench/minofn.c - seed 000 (OS/2 timings): the minimum of 300 timed samples of one
 * uncontended acquire.
 *
 * The seed's method: read a high-resolution timer just before and just after one call,
 * 300 times, keep the smallest difference; the object is created afresh for every sample
 * (outside the timed window), as the seed did. Two timers: the CPU's time-stamp counter
 * (ticks; x86 only) and CLOCK_MONOTONIC (ns). The first row is the timer alone: its cost is
 * inside every other row. Where one call is shorter than the timer's resolution, the last
 * column applies the same method to a batch of 100 calls per sample. Each figure is the
 * median over --reps runs of the 300 samples.
 *
 *   minofn [--quick] [--reps N] [--csv FILE] [--build NAME] [--iters SAMPLES]
 */
#include "bench.h"

#include <semaphore.h>

enum row { R_TIMER, R_MUTEX, R_SEM, R_FS_SEM, R_FS_EVENT, R_COUNT };
static const char *const rname[R_COUNT] = { "timer", "mutex", "sem", "fs-sem", "fs-event" };
static const char *const rtitle[R_COUNT] = {
    "(timer alone)", "pthread_mutex_lock()", "sem_wait() on a posted sem_t",
    "fastsync_sem_wait() on a posted sem", "fastsync_event_wait() on a set event" };

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

enum { BATCH = 100 };

/* One sample of row r: (ticks, ns) of one call, and ns of BATCH calls in a row (on BATCH
 * fresh mutexes; on a semaphore posted BATCH times; on one set event). */
static void sample(enum row r, uint64_t *dt, uint64_t *dn, uint64_t *db)
{
    static pthread_mutex_t m[BATCH];
    static sem_t s;
    static fastsync_sem_t fs;
    static fastsync_event_t fe;
    uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0;
    switch (r) {
    case R_TIMER:
        a = ticks(); b = ticks();
        c = bench_now_ns(); d = bench_now_ns();
        e = bench_now_ns(); f = bench_now_ns();
        break;
    case R_MUTEX:
        for (int i = 0; i < BATCH; i++) pthread_mutex_init(&m[i], NULL);
        a = ticks(); pthread_mutex_lock(&m[0]); b = ticks();
        pthread_mutex_unlock(&m[0]);
        c = bench_now_ns(); pthread_mutex_lock(&m[0]); d = bench_now_ns();
        pthread_mutex_unlock(&m[0]);
        e = bench_now_ns();
        for (int i = 0; i < BATCH; i++) pthread_mutex_lock(&m[i]);
        f = bench_now_ns();
        for (int i = 0; i < BATCH; i++) pthread_mutex_unlock(&m[i]);
        for (int i = 0; i < BATCH; i++) pthread_mutex_destroy(&m[i]);
        break;
    case R_SEM:
        sem_init(&s, 0, 2 + BATCH);
        a = ticks(); sem_wait(&s); b = ticks();
        c = bench_now_ns(); sem_wait(&s); d = bench_now_ns();
        e = bench_now_ns();
        for (int i = 0; i < BATCH; i++) sem_wait(&s);
        f = bench_now_ns();
        sem_destroy(&s);
        break;
    case R_FS_SEM:
        fastsync_sem_init(&fs, 2 + BATCH, 0);
        a = ticks(); fastsync_sem_wait(&fs); b = ticks();
        c = bench_now_ns(); fastsync_sem_wait(&fs); d = bench_now_ns();
        e = bench_now_ns();
        for (int i = 0; i < BATCH; i++) fastsync_sem_wait(&fs);
        f = bench_now_ns();
        fastsync_sem_destroy(&fs);
        break;
    case R_FS_EVENT:
        fastsync_event_init(&fe, true, 0);
        a = ticks(); fastsync_event_wait(&fe); b = ticks();
        c = bench_now_ns(); fastsync_event_wait(&fe); d = bench_now_ns();
        e = bench_now_ns();
        for (int i = 0; i < BATCH; i++) fastsync_event_wait(&fe);
        f = bench_now_ns();
        fastsync_event_destroy(&fe);
        break;
    default: break;
    }
    *dt = b - a;
    *dn = d - c;
    *db = f - e;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    (void)bench_parse(argc, argv, &o);
    const long samples = o.iters ? o.iters : 300;
    const int R = o.reps;
    double *v = (double *)calloc((size_t)R * 3 * R_COUNT, sizeof(double));
    if (!v) bench_fail("out of memory");
    for (int rep = 0; rep < R; rep++) {
        uint64_t mt[R_COUNT], mn[R_COUNT], mb[R_COUNT];
        for (int r = 0; r < R_COUNT; r++) mt[r] = mn[r] = mb[r] = UINT64_MAX;
        for (long i = 0; i < samples; i++)
            for (int r = 0; r < R_COUNT; r++) { /* interleaved, as the seed did */
                uint64_t dt, dn, db;
                sample((enum row)r, &dt, &dn, &db);
                mt[r] = dt < mt[r] ? dt : mt[r];
                mn[r] = dn < mn[r] ? dn : mn[r];
                mb[r] = db < mb[r] ? db : mb[r];
            }
        for (int r = 0; r < R_COUNT; r++) {
            v[(3 * r) * R + rep] = (double)mt[r];
            v[(3 * r + 1) * R + rep] = (double)mn[r];
            v[(3 * r + 2) * R + rep] = r == R_TIMER ? (double)mb[r] : (double)mb[r] / BATCH;
        }
    }
    printf("minofn: %s; minimum of %ld samples of one call (median of %d runs)\n", o.build, samples, R);
    printf("%-40s %10s %8s   %s\n", "", "TSC ticks", "ns", "batch of 100: ns per call");
    for (int r = 0; r < R_COUNT; r++) {
        double t = bench_csv_samples(&o, "minofn", rname[r], "min_ticks", "ticks", &v[(3 * r) * R], R);
        double n = bench_csv_samples(&o, "minofn", rname[r], "min_ns", "ns", &v[(3 * r + 1) * R], R);
        double b = bench_csv_samples(&o, "minofn", rname[r], "min_batch_ns", "ns", &v[(3 * r + 2) * R], R);
        printf("%-40s %10.0f %8.0f   %6.2f%s\n", rtitle[r], t, n, b, r == R_TIMER ? " (whole batch)" : "");
    }
    printf("(one call is below the timers' resolution here when its row equals the timer's;\n"
           " the batch column times %d calls per sample, the timer's cost spread over them)\n", BATCH);
    free(v);
    return 0;
}
