/* SPDX-License-Identifier: MIT */
/* test/harness.h - what every fastsync test shares. Include it instead of fastsync.h.
 *
 * The primitive under test: fastsync.h, whose futex layer is replaced here by one that
 * counts calls (and, built with FASTSYNC_TEST_INJECT, returns spurious wakeups, EINTR and
 * EAGAIN at random before sleeping for real). Built with -D__OS2__ -Itest/os2, the same
 * include brings fastsync_os2.h over the OS/2 API double, whose calls are counted instead.
 *
 *   test_kernel_waits()/wakes()  sleeping and waking kernel calls made so far
 *   test_scale()                 FASTSYNC_TEST_SCALE (default 1): multiplies time boxes
 *   test_box_end(ms)             the end of a time box of ms * scale milliseconds
 *   test_box_open(end)           whether that time box still runs
 *   test_init()                  first in main: reads and prints the seed and the scale
 *   test_seed(), test_stream(i)  the run's random seed (FASTSYNC_TEST_SEED to replay), and a
 *   test_rand(&state)            distinct generator state per thread i; next random number
 *   test_watchdog_start(dump, arg) / test_watchdog_stop()
 *                                a hang becomes a failure: after 20 s * max(1, scale) the
 *                                watchdog prints the test's state through dump(arg), then
 *                                "Bail out!" and exits 1
 *   test_pin_all(bool)           pin every thread started afterwards (and this one) to one
 *                                CPU: preemption lands inside the critical windows
 *   test_thread_start(fn, arg) / test_thread_join(t)
 *   test_ncpu(), test_now_ns(), test_sleep_ns(ns)
 */
#ifndef FASTSYNC_TEST_HARNESS_H
#define FASTSYNC_TEST_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

static inline uint64_t test_seed(void);
static inline uint64_t test_rand(uint64_t *state);
static inline uint64_t test_stream(unsigned i);

#if defined(__OS2__)
/* fastsync_os2.h over the double. Waits: the DosWaitEventSem calls, counted by the double.
 * Wakes: the DosPostEventSem of posting calls (sem_post*, event_set), counted through the
 * header's FASTSYNC_OS2_POST hook. A waiter's post on behalf of other waiters (the
 * semaphore's baton, the event's settle) is not a posting call's wake; os2dbl_sem_posts()
 * counts every post. */
static _Atomic(unsigned long) test_os2_wakes_made;
static inline void test_os2_post(unsigned long hev, int by_waiter);
#define FASTSYNC_OS2_POST test_os2_post
#include "fastsync.h"
static inline void test_os2_post(unsigned long hev, int by_waiter)
{
    /* relaxed: a statistic, read after the threads are joined. */
    if (!by_waiter) atomic_fetch_add_explicit(&test_os2_wakes_made, 1, memory_order_relaxed);
    (void)DosPostEventSem(hev);
}
static inline unsigned long test_kernel_waits(void) { return os2dbl_sem_waits(); }
static inline unsigned long test_kernel_wakes(void) { return atomic_load(&test_os2_wakes_made); }
#else
static _Atomic(unsigned long) test_waits_made, test_wakes_made;
static inline int test_futex_wait(void *word, uint32_t expected, int shared, clockid_t clock,
                           const struct timespec *abstime);
static inline void test_futex_wake(void *word, int n, int shared);
#define FASTSYNC_FUTEX_WAIT test_futex_wait
#define FASTSYNC_FUTEX_WAKE test_futex_wake
#include "fastsync.h"

#ifdef FASTSYNC_TEST_INJECT
/* Per-thread generator for the injected faults, seeded from the run's seed. */
static _Thread_local uint64_t test_inject_state;
static _Atomic(uint64_t) test_inject_threads;
#endif

static inline int test_futex_wait(void *word, uint32_t expected, int shared, clockid_t clock,
                           const struct timespec *abstime)
{
    /* relaxed: a statistic, read after the threads are joined. */
    atomic_fetch_add_explicit(&test_waits_made, 1, memory_order_relaxed);
#ifdef FASTSYNC_TEST_INJECT
    if (test_inject_state == 0)
        test_inject_state = test_stream(1000 + (unsigned)atomic_fetch_add(&test_inject_threads, 1));
    switch (test_rand(&test_inject_state) % 8) {
    case 0: return 0;      /* spurious wakeup */
    case 1: return EINTR;  /* a signal */
    case 2: return EAGAIN; /* the word changed (raw kernel answer) */
    default: break;
    }
#endif
    return fastsync__futex_wait_sys(word, expected, shared, clock, abstime);
}

static inline void test_futex_wake(void *word, int n, int shared)
{
    /* relaxed: a statistic, read after the threads are joined. */
    atomic_fetch_add_explicit(&test_wakes_made, 1, memory_order_relaxed);
    fastsync__futex_wake_sys(word, n, shared);
}

static inline unsigned long test_kernel_waits(void) { return atomic_load(&test_waits_made); }
static inline unsigned long test_kernel_wakes(void) { return atomic_load(&test_wakes_made); }
#endif

/* ---- time ---- */

static inline uint64_t test_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void test_sleep_ns(uint64_t ns)
{
    struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static inline double test_scale(void)
{
    static double scale;
    if (scale == 0) {
        const char *s = getenv("FASTSYNC_TEST_SCALE");
        scale = s && atof(s) > 0 ? atof(s) : 1.0;
    }
    return scale;
}

static inline uint64_t test_box_end(double ms) { return test_now_ns() + (uint64_t)(ms * test_scale() * 1e6); }
static inline bool test_box_open(uint64_t end) { return test_now_ns() < end; }

/* ---- randomness ---- */

static uint64_t test_seed_value;

/* The run's seed: FASTSYNC_TEST_SEED, else from the clock; set by test_init(). */
static inline uint64_t test_seed(void) { return test_seed_value; }

/* xorshift64*: small, fast, good enough to shuffle interleavings. */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x2545f4914f6cdd1du;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1du;
}

/* A distinct non-zero stream for thread i of this run. */
static inline uint64_t test_stream(unsigned i) { return (test_seed() + 1) * 0x9e3779b97f4a7c15u ^ (i + 1) * 0xbf58476d1ce4e5b9u; }

/* Call first in main: reads the seed and prints it, so any run can be replayed. */
static inline void test_init(void)
{
    const char *s = getenv("FASTSYNC_TEST_SEED");
    test_seed_value = s ? strtoull(s, NULL, 0) : test_now_ns() ^ ((uint64_t)getpid() << 32);
    diag("seed %" PRIu64 " (replay with FASTSYNC_TEST_SEED=%" PRIu64 "), scale %.2f", test_seed_value,
         test_seed_value, test_scale());
}

/* ---- threads and CPUs ---- */

static bool test_pinned;

static inline int test_ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Pins the calling thread to the first CPU it may run on. */
static inline void test_pin_self(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set)) {
            CPU_ZERO(&set);
            CPU_SET(c, &set);
            (void)sched_setaffinity(0, sizeof set, &set);
            return;
        }
    }
}

/* Every thread started afterwards, and the caller, run on one CPU (true) or anywhere. */
static inline void test_pin_all(bool pinned)
{
    test_pinned = pinned;
    if (pinned) {
        test_pin_self();
    } else {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int c = 0; c < test_ncpu() && c < CPU_SETSIZE; c++) CPU_SET(c, &set);
        (void)sched_setaffinity(0, sizeof set, &set);
    }
}

struct test_thread_arg { void *(*fn)(void *); void *arg; };

static inline void *test_thread_main(void *p)
{
    struct test_thread_arg a = *(struct test_thread_arg *)p;
    free(p);
    if (test_pinned) test_pin_self();
    return a.fn(a.arg);
}

static inline pthread_t test_thread_start(void *(*fn)(void *), void *arg)
{
    struct test_thread_arg *a = (struct test_thread_arg *)malloc(sizeof *a);
    if (!a) bail("out of memory");
    a->fn = fn;
    a->arg = arg;
    pthread_t t;
    int r = pthread_create(&t, NULL, test_thread_main, a);
    if (r != 0) bail("pthread_create: %s", strerror(r));
    return t;
}

static inline void *test_thread_join(pthread_t t)
{
    void *ret = NULL;
    int r = pthread_join(t, &ret);
    if (r != 0) bail("pthread_join: %s", strerror(r));
    return ret;
}

/* ---- watchdog: pthread primitives only, never the code under test ---- */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC, set up by test_watchdog_start */
    pthread_t thread;
    bool running, stop, cond_ready;
    void (*dump)(void *);
    void *arg;
} test_wd = { .lock = PTHREAD_MUTEX_INITIALIZER };

static inline double test_watchdog_seconds(void) { return 20.0 * (test_scale() > 1 ? test_scale() : 1); }

static inline void *test_watchdog_main(void *unused)
{
    (void)unused;
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    double secs = test_watchdog_seconds();
    end.tv_sec += (time_t)secs;
    pthread_mutex_lock(&test_wd.lock);
    while (!test_wd.stop) {
        if (pthread_cond_timedwait(&test_wd.cond, &test_wd.lock, &end) == ETIMEDOUT && !test_wd.stop) {
            diag("watchdog: no end after %.0f s: a lost wakeup or a hang; state follows", secs);
            if (test_wd.dump) test_wd.dump(test_wd.arg);
            printf("not ok %d - watchdog expired\n", ++tap_count);
            bail("watchdog expired (seed %" PRIu64 ")", test_seed());
        }
    }
    pthread_mutex_unlock(&test_wd.lock);
    return NULL;
}

static inline void test_watchdog_start(void (*dump)(void *), void *arg)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (test_wd.cond_ready) pthread_cond_destroy(&test_wd.cond);
    test_wd.cond_ready = true;
    pthread_cond_init(&test_wd.cond, &ca);
    pthread_condattr_destroy(&ca);
    test_wd.dump = dump;
    test_wd.arg = arg;
    test_wd.stop = false;
    int r = pthread_create(&test_wd.thread, NULL, test_watchdog_main, NULL);
    if (r != 0) bail("watchdog: pthread_create: %s", strerror(r));
    test_wd.running = true;
}

static inline void test_watchdog_stop(void)
{
    if (!test_wd.running) return;
    pthread_mutex_lock(&test_wd.lock);
    test_wd.stop = true;
    pthread_cond_signal(&test_wd.cond);
    pthread_mutex_unlock(&test_wd.lock);
    pthread_join(test_wd.thread, NULL);
    test_wd.running = false;
}

#endif
