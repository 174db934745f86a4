/* SPDX-License-Identifier: MIT */
/* test/os2/dbl_util.h - small helpers for the OS/2 double's own tests (dbl_*.c): a
 * clock, a sleep that does not go through the double, and a watchdog built on plain
 * pthreads (never on the code under test) that turns a hang into a failure. */
#ifndef OS2DBL_TEST_UTIL_H
#define OS2DBL_TEST_UTIL_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

static inline uint64_t dbl_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void dbl_sleep_ms(unsigned ms)
{
    struct timespec t = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&t, &t) != 0) {
    }
}

/* ms rounded up to the double's tick: what a timeout of ms really lasts */
static inline uint64_t dbl_round_ms(unsigned long ms, unsigned long tick)
{
    return (ms + tick - 1) / tick * tick;
}

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    unsigned seconds;
    void (*dump)(void *);
    void *arg;
    pthread_t thread;
} dbl_wd = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, NULL, 0 };

static inline void *dbl_watchdog_main(void *unused)
{
    (void)unused;
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += dbl_wd.seconds;
    pthread_mutex_lock(&dbl_wd.lock);
    while (!dbl_wd.stop) {
        if (pthread_cond_timedwait(&dbl_wd.cond, &dbl_wd.lock, &end) != 0 && !dbl_wd.stop) {
            diag("watchdog: no end after %u s: a lost wakeup or a hang; state follows", dbl_wd.seconds);
            if (dbl_wd.dump) dbl_wd.dump(dbl_wd.arg);
            printf("not ok %d - watchdog expired\nBail out! watchdog expired\n", tap_next());
            fflush(stdout);
            _exit(1);
        }
    }
    pthread_mutex_unlock(&dbl_wd.lock);
    return NULL;
}

/* Start once per program, stop at the end. dump(arg) prints the test's progress. */
static inline void dbl_watchdog_start(unsigned seconds, void (*dump)(void *), void *arg)
{
    dbl_wd.seconds = seconds;
    dbl_wd.dump = dump;
    dbl_wd.arg = arg;
    if (pthread_create(&dbl_wd.thread, NULL, dbl_watchdog_main, NULL) != 0) bail("watchdog: pthread_create");
}

static inline void dbl_watchdog_stop(void)
{
    pthread_mutex_lock(&dbl_wd.lock);
    dbl_wd.stop = 1;
    pthread_cond_signal(&dbl_wd.cond);
    pthread_mutex_unlock(&dbl_wd.lock);
    pthread_join(dbl_wd.thread, NULL);
}

/* For tests that include <os2.h> (with INCL_DOSPROCESS) before this header. */
#ifdef INCL_DOSPROCESS
/* Joins a thread made with DosCreateThread; a failure ends the run. */
static inline void dbl_join(TID t)
{
    APIRET rc = DosWaitThread(&t, DCWW_WAIT);
    if (rc != NO_ERROR) bail("DosWaitThread: %lu", rc);
}
#endif

/* Waits (outside the double) until n threads are blocked on h: 1, or 0 after 5 s. */
static inline int dbl_until_blocked(ULONG h, unsigned long n)
{
    uint64_t end = dbl_now_ns() + 5000000000u;
    while (os2dbl_blocked(h) != n) {
        if (dbl_now_ns() > end) return 0;
        dbl_sleep_ms(1);
    }
    return 1;
}

#endif
