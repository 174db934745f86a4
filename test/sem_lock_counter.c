/* SPDX-License-Identifier: MIT */
/* sem_lock_counter: a semaphore(1) used as a lock (the pattern of glibc's tst-sem14) by
 * several threads around a plain, non-atomic counter. Each thread takes the lock by wait,
 * by trywait (retried) or by timedwait/clockwait with a short deadline (retried after
 * ETIMEDOUT). The final counter equals the number of critical sections exactly, no two
 * threads are ever inside at once, the value ends at 1 and no waiter is left registered.
 * Modes: spread over the CPUs and pinned to one CPU, with 4 threads and with more threads
 * than CPUs. mutex_lock_counter.c runs the same over fastsync_mutex_t (lock, trylock,
 * timedlock/clocklock), defining LOCK_MUTEX. */
#include "harness.h"

#if defined(LOCK_MUTEX)
static fastsync_mutex_t lock;
#define LOCK_INIT() fastsync_mutex_init(&lock, 0)
#define LOCK_WAIT() fastsync_mutex_lock(&lock)
#define LOCK_TRY() fastsync_mutex_trylock(&lock)
#define LOCK_TRY_BUSY EBUSY
#define LOCK_TIMED(d) fastsync_mutex_timedlock(&lock, d)
#define LOCK_CLOCK(c, d) fastsync_mutex_clocklock(&lock, c, d)
#define LOCK_RELEASE() fastsync_mutex_unlock(&lock)
#define LOCK_DUMP() test_dump_mutex("lock", &lock)
static const char *const how_name[] = { "lock", "trylock", "timedlock/clocklock" };
#else
static fastsync_sem_t lock;
#define LOCK_INIT() fastsync_sem_init(&lock, 1, 0)
#define LOCK_WAIT() fastsync_sem_wait(&lock)
#define LOCK_TRY() fastsync_sem_trywait(&lock)
#define LOCK_TRY_BUSY EAGAIN
#define LOCK_TIMED(d) fastsync_sem_timedwait(&lock, d)
#define LOCK_CLOCK(c, d) fastsync_sem_clockwait(&lock, c, d)
#define LOCK_RELEASE() fastsync_sem_post(&lock)
#define LOCK_DUMP() test_dump_sem("lock", &lock)
static const char *const how_name[] = { "wait", "trywait", "timedwait/clockwait" };
#endif
enum { HOW_WAIT, HOW_TRYWAIT, HOW_TIMED, HOW_N };

struct worker {
    unsigned id;
    uint64_t rng;
    _Atomic(unsigned long) done;     /* critical sections completed (progress, for the dump) */
    _Atomic(int) where;              /* 0 outside, 1 taking the lock, 2 inside */
    unsigned long by[HOW_N];         /* sections entered by each way of taking the lock */
    unsigned long timeouts, eagains; /* retries */
    unsigned long bad;               /* unexpected return codes */
    int bad_code;
};

static unsigned long counter; /* plain: guarded by `lock` alone */
static _Atomic(int) inside;
static _Atomic(unsigned long) overlaps;
static uint64_t box_end;
static struct worker *workers;
static int nworkers;

static void dump(void *unused)
{
    (void)unused;
    LOCK_DUMP();
    /* relaxed: progress counters read for the dump only. */
    diag("threads inside: %d, overlaps seen: %lu", atomic_load_explicit(&inside, memory_order_relaxed),
         atomic_load_explicit(&overlaps, memory_order_relaxed));
    for (int i = 0; i < nworkers; i++)
        diag("thread %d: %lu sections, %s", i,
             atomic_load_explicit(&workers[i].done, memory_order_relaxed),
             (const char *[]){ "outside", "taking the lock", "inside" }[atomic_load_explicit(
                 &workers[i].where, memory_order_relaxed)]);
}

static void check_code(struct worker *w, int r, int allowed)
{
    if (r != 0 && r != allowed) {
        w->bad++;
        w->bad_code = r;
    }
}

/* Takes the lock one of three ways; returns how. */
static int take(struct worker *w)
{
    int how = (int)(test_rand(&w->rng) % HOW_N);
    int r;
    switch (how) {
    case HOW_WAIT:
        r = LOCK_WAIT();
        check_code(w, r, 0);
        break;
    case HOW_TRYWAIT:
        for (unsigned tries = 1; (r = LOCK_TRY()) != 0; tries++) {
            check_code(w, r, LOCK_TRY_BUSY);
            w->eagains++;
            if (tries % 8 == 0) sched_yield(); /* let the holder run when pinned */
        }
        break;
    default: {
        for (;;) {
            clockid_t clock = test_rand(&w->rng) % 3 == 0 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
            struct timespec d = test_deadline_on(clock, test_rand(&w->rng) % 200000u);
            if (clock == CLOCK_MONOTONIC && test_rand(&w->rng) % 2)
                r = LOCK_TIMED(&d);
            else
                r = LOCK_CLOCK(clock, &d);
            if (r == 0) break;
            check_code(w, r, ETIMEDOUT);
            w->timeouts++;
        }
        break;
    }
    }
    return how;
}

static void *worker_main(void *p)
{
    struct worker *w = (struct worker *)p;
    unsigned long done = 0;
    while (test_box_more(box_end, done)) {
        /* relaxed (this and every store to where/done): progress for the dump. */
        atomic_store_explicit(&w->where, 1, memory_order_relaxed);
        int how = take(w);
        atomic_store_explicit(&w->where, 2, memory_order_relaxed);
        /* relaxed: counts the threads inside, to name an overlap precisely; relaxed so that
         * it adds no happens-before of its own, which could hide a missing release/acquire
         * in the semaphore from TSan (the plain counter is the real check). */
        if (atomic_fetch_add_explicit(&inside, 1, memory_order_relaxed) != 0)
            atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
        unsigned long c = counter;
        if (test_rand(&w->rng) % 32 == 0) sched_yield(); /* get preempted inside */
        counter = c + 1;
        atomic_fetch_sub_explicit(&inside, 1, memory_order_relaxed);
        w->by[how]++;
        done++;
        /* relaxed: progress for the dump. */
        atomic_store_explicit(&w->done, done, memory_order_relaxed);
        atomic_store_explicit(&w->where, 0, memory_order_relaxed);
        int r = LOCK_RELEASE();
        check_code(w, r, 0);
    }
    return NULL;
}

static void run(const char *name, bool pinned, int n, double ms)
{
    test_pin_all(pinned);
    LOCK_INIT();
    counter = 0;
    atomic_store_explicit(&overlaps, 0, memory_order_relaxed); /* relaxed: before the threads start */
    workers = (struct worker *)calloc((size_t)n, sizeof *workers);
    if (!workers) bail("out of memory");
    nworkers = n;
    pthread_t *t = (pthread_t *)calloc((size_t)n, sizeof *t);
    if (!t) bail("out of memory");
    unsigned long waits0 = test_kernel_waits(), wakes0 = test_kernel_wakes();

    test_watchdog_start(dump, NULL);
    box_end = test_box_end(ms);
    for (int i = 0; i < n; i++) {
        workers[i].id = (unsigned)i;
        workers[i].rng = test_stream((unsigned)i);
        t[i] = test_thread_start(worker_main, &workers[i]);
    }
    for (int i = 0; i < n; i++) test_thread_join(t[i]);
    test_watchdog_stop();

    unsigned long sections = 0, by[HOW_N] = { 0 }, timeouts = 0, eagains = 0, bad = 0;
    int bad_code = 0;
    for (int i = 0; i < n; i++) {
        for (int h = 0; h < HOW_N; h++) by[h] += workers[i].by[h];
        sections += atomic_load_explicit(&workers[i].done, memory_order_relaxed); /* relaxed: joined */
        timeouts += workers[i].timeouts;
        eagains += workers[i].eagains;
        bad += workers[i].bad;
        if (workers[i].bad) bad_code = workers[i].bad_code;
    }
    diag("%s, %d threads: %lu sections (%s %lu, %s %lu, %s %lu), %lu busy and %lu ETIMEDOUT "
         "retries, %lu futex waits, %lu wakes",
         name, n, sections, how_name[0], by[0], how_name[1], by[1], how_name[2], by[2], eagains,
         timeouts, test_kernel_waits() - waits0, test_kernel_wakes() - wakes0);
    ok(sections > 0, "%s, %d threads: some critical sections ran", name, n);
    is_int(counter, sections, "%s, %d threads: plain counter == critical sections", name, n);
    unsigned long overlapped = atomic_load_explicit(&overlaps, memory_order_relaxed); /* relaxed: joined */
    is_int(overlapped, 0, "%s, %d threads: never two threads inside", name, n);
    if (!is_int(bad, 0, "%s, %d threads: only the expected return codes", name, n))
        diag("  last unexpected code: %d", bad_code);
#if defined(LOCK_MUTEX)
    is_int(test_mutex_state(&lock), 0, "%s, %d threads: unlocked at the end", name, n);
    is_int(fastsync_mutex_destroy(&lock), 0, "%s, %d threads: destroy says 0", name, n);
#else
    is_int(fastsync_sem_getvalue(&lock), 1, "%s, %d threads: value back to 1", name, n);
    is_int(fastsync_sem_destroy(&lock), 0, "%s, %d threads: no waiter left registered", name, n);
#endif
    free(t);
    free(workers);
    workers = NULL;
    nworkers = 0;
}

int main(void)
{
    test_init();
    int many = 2 * test_ncpu() > 8 ? 2 * test_ncpu() : 8; /* more threads than CPUs */
    run("spread", false, 4, 400);
    run("pinned", true, 4, 400);
    run("spread", false, many, 400);
    run("pinned", true, many, 400);
    test_pin_all(false);
    return done_testing();
}
