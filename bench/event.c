/* SPDX-License-Identifier: MIT */
/* bench/event.c - seed 004 (QemuEvent): a manual-reset event under a light, bursty load.
 *
 * N waiter threads think (sleep a random time, mean THINK ms), then wait for the next event
 * with the intended loop  for (;;) { reset; if (new event) break; wait; }; a signaller
 * publishes an event (a generation counter) and sets the event at random distances (mean
 * DIST ms), for SECONDS. As in the seed: waits that did not sleep (fast) with their time,
 * slow waits, signals with their time, and the signals that found the event already set
 * (fast path). Variants: a mutex+condvar event, and fastsync_event.
 * Then the fast paths alone: set on a set event, wait on a set event, reset on a reset
 * event: ns per op, futex calls per op, and whether the op writes the event word at all
 * (it runs on a read-only page: a write, hence any atomic RMW, would kill it with SIGSEGV).
 *
 *   event [--quick] [--reps N] [--csv FILE] [--build NAME] [THINK DIST THREADS SECONDS]
 *   event --op OP --iters N      one loop only (for callgrind: --toggle-collect=loop_OP,
 *         with - as _): set-on-set wait-on-set reset-on-reset cv-set-on-set cv-wait-on-set
 */
#include "bench.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* ---- the two events behind one small interface ---- */

/* A manual-reset event from a mutex, a condvar, a flag and a generation: the one a user
 * would write. The generation matters: a waiter woken by a broadcast may find the flag
 * already reset by another thread before it runs; it returns because a set happened. */
struct cv_event {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool set;          /* guarded by m */
    unsigned long gen; /* sets that changed the state; guarded by m */
};

static void cv_init(struct cv_event *e, bool set)
{
    pthread_mutex_init(&e->m, NULL);
    pthread_cond_init(&e->c, NULL);
    e->set = set;
    e->gen = 0;
}
static void cv_set(struct cv_event *e)
{
    pthread_mutex_lock(&e->m);
    if (!e->set) {
        e->set = true;
        e->gen++;
        pthread_cond_broadcast(&e->c);
    }
    pthread_mutex_unlock(&e->m);
}
static void cv_reset(struct cv_event *e)
{
    pthread_mutex_lock(&e->m);
    e->set = false;
    pthread_mutex_unlock(&e->m);
}
static void cv_wait(struct cv_event *e)
{
    pthread_mutex_lock(&e->m);
    unsigned long gen = e->gen;
    while (!e->set && e->gen == gen) pthread_cond_wait(&e->c, &e->m);
    pthread_mutex_unlock(&e->m);
}
static bool cv_is_set(struct cv_event *e)
{
    pthread_mutex_lock(&e->m);
    bool s = e->set;
    pthread_mutex_unlock(&e->m);
    return s;
}

enum kind { K_CV, K_FS, K_COUNT };
static const char *const kname[K_COUNT] = { "condvar", "fastsync" };
static const char *const ktitle[K_COUNT] = { "mutex+condvar event", "fastsync_event" };

struct ev {
    enum kind k;
    struct cv_event cv;
    char pad[64];
    fastsync_event_t fs;
};

static void ev_set(struct ev *e)
{
    if (e->k == K_CV) cv_set(&e->cv);
    else fastsync_event_set(&e->fs);
}
static void ev_reset(struct ev *e)
{
    if (e->k == K_CV) cv_reset(&e->cv);
    else fastsync_event_reset(&e->fs);
}
static void ev_wait(struct ev *e)
{
    if (e->k == K_CV) cv_wait(&e->cv);
    else fastsync_event_wait(&e->fs);
}
static bool ev_is_set(struct ev *e) { return e->k == K_CV ? cv_is_set(&e->cv) : fastsync_event_is_set(&e->fs); }

/* ---- the seed's experiment ---- */

struct shared {
    struct ev *e;
    _Atomic(unsigned long) gen; /* events published */
    _Atomic(int) stop;
    double think_ns, dist_ns;
};

struct waiter {
    struct shared *sh;
    uint64_t rng;
    long fast, slow;
    double fast_ns; /* sum over fast waits */
    char pad[64];
};

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1du;
}

/* uniform in [0, 2 * mean): the mean is what the seed's command line gives */
static uint64_t rand_ns(uint64_t *s, double mean) { return (uint64_t)((double)(xorshift(s) >> 11) / 9007199254740992.0 * 2 * mean); }

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    struct shared *sh = w->sh;
    /* relaxed: a starting point; the wait loop below re-reads it after each reset. */
    unsigned long seen = atomic_load_explicit(&sh->gen, memory_order_relaxed);
    /* relaxed: stop is written before the last generation bump (release), and every pass
     * of this loop ends having read a new generation with acquire; after the last one
     * this load sees stop. */
    while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
        bench_sleep_ns(rand_ns(&w->rng, sh->think_ns));
        bool slept = false;
        uint64_t t0 = bench_now_ns();
        unsigned long g;
        for (;;) {
            ev_reset(sh->e);
            /* The reset (fastsync: its closing seq_cst fence, paired with the fence opening
             * the signaller's set; condvar: the mutex) orders this read after it. acquire:
             * pairs with the signaller's release bump, for the stop flag written before the
             * last one. */
            g = atomic_load_explicit(&sh->gen, memory_order_acquire);
            if (g != seen) break;
            slept = true;
            ev_wait(sh->e);
        }
        uint64_t t1 = bench_now_ns();
        seen = g;
        if (slept) w->slow++;
        else {
            w->fast++;
            w->fast_ns += (double)(t1 - t0);
        }
    }
    bench_futex_flush();
    return NULL;
}

struct result { double fast, fast_us, slow, signals, signal_us, fastpath; };

static struct result run_kind(enum kind k, double think_ms, double dist_ms, int nthreads, double secs,
                              uint64_t seed)
{
    struct ev *e = (struct ev *)bench_alloc(sizeof *e);
    e->k = k;
    cv_init(&e->cv, false);
    fastsync_event_init(&e->fs, false, 0);
    struct shared sh;
    sh.e = e;
    atomic_init(&sh.gen, 0);
    atomic_init(&sh.stop, 0);
    sh.think_ns = think_ms * 1e6;
    sh.dist_ns = dist_ms * 1e6;
    enum { MAXT = 64 };
    if (nthreads < 1 || nthreads > MAXT) bench_fail("threads out of range");
    struct waiter *w = (struct waiter *)bench_alloc(sizeof(struct waiter) * (size_t)nthreads);
    pthread_t th[MAXT];
    for (int i = 0; i < nthreads; i++) {
        w[i].sh = &sh;
        w[i].rng = seed * 0x9e3779b97f4a7c15u + (uint64_t)i * 0xbf58476d1ce4e5b9u + 1;
        th[i] = bench_thread_start(waiter_main, &w[i]);
    }
    /* the signaller is this thread */
    uint64_t rng = seed ^ 0x5851f42d4c957f2du;
    long signals = 0, fastpath = 0;
    double signal_ns = 0;
    const uint64_t end = bench_now_ns() + (uint64_t)(secs * 1e9);
    while (bench_now_ns() < end) {
        bench_sleep_ns(rand_ns(&rng, sh.dist_ns));
        /* Ordered before the waiters' reads after a reset by set (its opening seq_cst fence,
         * paired with the fence closing their reset; or the condvar's mutex). release:
         * pairs with the waiters' acquire load of the generation (see the last bump). */
        atomic_fetch_add_explicit(&sh.gen, 1, memory_order_release);
        bool was_set = ev_is_set(e); /* a statistic, outside the timed call: racy by nature */
        uint64_t t0 = bench_now_ns();
        ev_set(e);
        uint64_t t1 = bench_now_ns();
        signals++;
        fastpath += was_set;
        signal_ns += (double)(t1 - t0);
    }
    /* relaxed: published by the release bump that follows. */
    atomic_store_explicit(&sh.stop, 1, memory_order_relaxed);
    /* release: pairs with the waiters' acquire load of the generation, so that a waiter that
     * sees this last generation also sees stop. The set below wakes the sleepers. */
    atomic_fetch_add_explicit(&sh.gen, 1, memory_order_release);
    ev_set(e);
    struct result r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        r.fast += (double)w[i].fast;
        r.slow += (double)w[i].slow;
        r.fast_us += w[i].fast_ns / 1e3;
    }
    r.fast_us = r.fast > 0 ? r.fast_us / r.fast : 0;
    r.signals = (double)signals;
    r.signal_us = signals ? signal_ns / 1e3 / (double)signals : 0;
    r.fastpath = (double)fastpath;
    pthread_cond_destroy(&e->cv.c);
    free(w);
    free(e);
    return r;
}

/* ---- the fast paths alone ---- */

enum op { OP_SET_ON_SET, OP_WAIT_ON_SET, OP_RESET_ON_RESET, OP_RESET_ON_SET, OP_CV_SET_ON_SET,
          OP_CV_WAIT_ON_SET, OP_COUNT };
static const char *const opname[OP_COUNT] = { "set-on-set", "wait-on-set", "reset-on-reset",
                                              "reset-on-set", "cv-set-on-set", "cv-wait-on-set" };

/* The event starts set for every op but reset-on-reset. */
static void op_prepare(enum op op, fastsync_event_t *fe, struct cv_event *ce)
{
    fastsync_event_init(fe, op != OP_RESET_ON_RESET, 0);
    cv_init(ce, true);
}

/* One function per op, so that callgrind can count it alone (--toggle-collect=loop_NAME). */
#define OP_LOOP(name, stmt)                                                                  \
    BENCH_NOINLINE static void loop_##name(fastsync_event_t *fe, struct cv_event *ce, long n) \
    {                                                                                        \
        (void)fe;                                                                            \
        (void)ce;                                                                            \
        for (long i = 0; i < n; i++) stmt;                                                   \
    }
OP_LOOP(set_on_set, fastsync_event_set(fe))
OP_LOOP(wait_on_set, fastsync_event_wait(fe))
OP_LOOP(reset_on_reset, fastsync_event_reset(fe))
OP_LOOP(reset_on_set, fastsync_event_reset(fe)) /* the read-only probe's control */
OP_LOOP(cv_set_on_set, cv_set(ce))
OP_LOOP(cv_wait_on_set, cv_wait(ce))

static void op_loop(enum op op, fastsync_event_t *fe, struct cv_event *ce, long n)
{
    static void (*const loop[OP_COUNT])(fastsync_event_t *, struct cv_event *, long) = {
        loop_set_on_set, loop_wait_on_set, loop_reset_on_reset,
        loop_reset_on_set, loop_cv_set_on_set, loop_cv_wait_on_set };
    loop[op](fe, ce, n);
}

/* Runs op n times in a child on a read-only page: 1 if it wrote the event word (the child
 * died of SIGSEGV), 0 if not, -1 if the probe could not run. */
static int op_writes(enum op op, long n)
{
    long page = sysconf(_SC_PAGESIZE);
    void *mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return -1;
    fastsync_event_t *fe = (fastsync_event_t *)mem;
    struct cv_event ce;
    op_prepare(op, fe, &ce);
    if (mprotect(mem, (size_t)page, PROT_READ) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        op_loop(op, fe, &ce, n);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    munmap(mem, (size_t)page);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) return 1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static double op_ns(enum op op, long n, double *futex_per_op)
{
    fastsync_event_t *fe = (fastsync_event_t *)bench_alloc(sizeof *fe);
    struct cv_event *ce = (struct cv_event *)bench_alloc(sizeof *ce);
    op_prepare(op, fe, ce);
    unsigned long f0 = bench_futex_calls();
    uint64_t t0 = bench_now_ns();
    op_loop(op, fe, ce, n);
    uint64_t t1 = bench_now_ns();
    *futex_per_op = (double)(bench_futex_calls() - f0) / (double)n;
    free(fe);
    free(ce);
    return (double)(t1 - t0) / (double)n;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int argn = bench_parse(argc, argv, &o);
    if (o.op) {
        for (int k = 0; k < OP_COUNT; k++)
            if (strcmp(o.op, opname[k]) == 0) {
                double fx;
                (void)op_ns((enum op)k, o.iters > 0 ? o.iters : 1, &fx);
                return 0;
            }
        fprintf(stderr, "event: unknown --op %s\n", o.op);
        return 2;
    }
    double think = 10, dist = 1, secs = o.quick ? 0.2 : 2;
    int nthreads = 4;
    if (argn >= 2) think = atof(argv[1]);
    if (argn >= 3) dist = atof(argv[2]);
    if (argn >= 4) nthreads = atoi(argv[3]);
    if (argn >= 5) secs = atof(argv[4]);
    const int R = o.reps;

    /* timer overhead, for the reader: the minimum of back-to-back readings */
    double timer = 1e9;
    for (int i = 0; i < 1000; i++) {
        uint64_t a = bench_now_ns(), b = bench_now_ns();
        timer = (double)(b - a) < timer ? (double)(b - a) : timer;
    }

    double *v = (double *)calloc((size_t)R * 6 * K_COUNT, sizeof(double));
    if (!v) bench_fail("out of memory");
    for (int r = 0; r < R; r++)
        for (int k = 0; k < K_COUNT; k++) {
            struct result x = run_kind((enum kind)k, think, dist, nthreads, secs, (uint64_t)r + 1);
            double f[6] = { x.fast, x.fast_us, x.slow, x.signals, x.signal_us, x.fastpath };
            for (int j = 0; j < 6; j++) v[(k * 6 + j) * R + r] = f[j];
        }
    printf("event: %s; %d threads, avg think time %g msec, avg event distance %g msec, running "
           "%g sec; median of %d (timer overhead %.3f us, included)\n",
           o.build, nthreads, think, dist, secs, R, timer / 1e3);
    static const char *const metric[6] = { "waits_fast", "wait_fast_us", "waits_slow", "signals",
                                           "signal_us", "signals_fastpath" };
    for (int k = 0; k < K_COUNT; k++) {
        double m[6];
        for (int j = 0; j < 6; j++)
            m[j] = bench_csv_samples(&o, "event", kname[k], metric[j], j == 1 || j == 4 ? "us" : "ops",
                                     &v[(k * 6 + j) * R], R);
        printf("%s:\n", ktitle[k]);
        printf("waits          %7.0f  %7.3f us (fast)\n", m[0], m[1]);
        printf("  slow waits   %7.0f\n", m[2]);
        printf("signal         %7.0f  %7.3f us\n", m[3], m[4]);
        printf("  fast path    %7.0f\n", m[5]);
    }

    /* the fast paths */
    const long n = o.quick ? 1000000 : 10000000;
    printf("fast paths (one thread, %ld ops; median of %d)  ns/op  futex/op  writes the word\n", n, R);
    static const char *const optitle[OP_COUNT] = {
        "fastsync_event_set on a set event", "fastsync_event_wait on a set event",
        "fastsync_event_reset on a reset event", "fastsync_event_reset on a set event (control)",
        "condvar event set on a set event", "condvar event wait on a set event" };
    for (int k = 0; k < OP_COUNT; k++) {
        double *ns = v, fx = 0;
        for (int r = 0; r < R; r++) ns[r] = op_ns((enum op)k, n, &fx);
        double med = bench_csv_samples(&o, "event", opname[k], "ns", "ns", ns, R);
        bench_csv_row(&o, "event", opname[k], "futex", "calls", fx, fx, fx, 1);
        int w = k < OP_CV_SET_ON_SET ? op_writes((enum op)k, 1000) : -1;
        if (w >= 0) bench_csv_row(&o, "event", opname[k], "writes_word", "bool", w, w, w, 1);
        printf("  %-46s %6.2f  %7.3f   %s\n", optitle[k], med, fx,
               w < 0 ? "-" : w ? "yes (SIGSEGV on a read-only page)" : "no (ran on a read-only page)");
    }
    free(v);
    return 0;
}
