/* SPDX-License-Identifier: MIT */
/* test/os2/inject.h - forced into the os2 suite's builds (-include): a FASTSYNC_OS2_WAIT hook
 * that, when FASTSYNC_OS2_INJECT=1 is in the environment, sleeps a random 0..300 us before
 * half of fastsync_os2.h's DosWaitEventSem calls. That widens the window of its wait table
 * between a waiter's queueing (the bucket unlocked) and its sleep: a wake can post its HEV
 * in between, and the post must still end the sleep. Combined with OS2DBL_INTERRUPT, the
 * waits also return ERROR_INTERRUPT at random. */
#ifndef FASTSYNC_TEST_OS2_INJECT_H
#define FASTSYNC_TEST_OS2_INJECT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#define INCL_DOSSEMAPHORES
#define INCL_DOSERRORS
#include <os2.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline int test_os2_inject_on(void)
{
    static _Atomic(int) on = -1;
    /* relaxed: every thread computes the same value from the environment */
    int v = atomic_load_explicit(&on, memory_order_relaxed);
    if (v < 0) {
        const char *s = getenv("FASTSYNC_OS2_INJECT");
        v = s && atoi(s) > 0;
        atomic_store_explicit(&on, v, memory_order_relaxed);
    }
    return v;
}

/* Half of the calls: a random pause of 0..300 us. */
static inline void test_os2_inject_pause(void)
{
    static _Atomic(uint64_t) rng = 0x9e3779b97f4a7c15u;
    if (!test_os2_inject_on()) return;
    /* relaxed: only distinct values matter */
    uint64_t x = atomic_fetch_add_explicit(&rng, 0x9e3779b97f4a7c15u, memory_order_relaxed);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 29;
    if (x & 1) {
        struct timespec t = { 0, (long)((x >> 8) % 300000u) };
        nanosleep(&t, NULL);
    }
}

static inline APIRET test_os2_inject_wait(HEV hev, ULONG ms)
{
    test_os2_inject_pause();
    return DosWaitEventSem(hev, ms);
}

#define FASTSYNC_OS2_WAIT test_os2_inject_wait

#endif
