/* SPDX-License-Identifier: MIT */
/* wait_any_own_seam: a program that replaces the seam's wait and wake (FASTSYNC_FUTEX_WAIT /
 * FASTSYNC_FUTEX_WAKE: "another kernel") and not the multi-wait gets a wait_any that sleeps
 * through its wait, never through the backend's own multi-wait, which its wake would not
 * reach. Here the replaced wait polls its word (1 ms naps) and the replaced wake does
 * nothing: a wait_any asleep in futex_waitv would never see the post (the watchdog thread
 * then fails the test after 10 s); through the replaced wait it returns within a nap.
 * Runs on every backend. (Not through harness.h, which replaces all three itself.) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static _Atomic(unsigned long) own_waits, own_wakes;

static int own_wait(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime);
static void own_wake(void *word, int n, int shared);
#define FASTSYNC_FUTEX_WAIT own_wait
#define FASTSYNC_FUTEX_WAKE own_wake
#include "fastsync.h"
#include "tap.h"

static int own_wait(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    (void)shared;
    atomic_fetch_add(&own_waits, 1);
    /* relaxed: a poll; the caller reads the word again with the order it needs. Through the
     * header's atomics layer, as the backends read it: over the OS/2 double without
     * <stdatomic.h> the word is a plain one, written under the table's lock. */
    if (fastsync__load((FASTSYNC__ATOMIC(uint32_t) *)word, memory_order_relaxed) != expected) return 0;
    if (abstime != NULL && fastsync__until(clock, abstime) <= 0) return ETIMEDOUT;
    struct timespec nap = { 0, 1000000 };
    nanosleep(&nap, NULL);
    return 0;
}

static void own_wake(void *word, int n, int shared)
{
    (void)word;
    (void)n;
    (void)shared;
    atomic_fetch_add(&own_wakes, 1);
}

static fastsync_sem_t a = FASTSYNC_SEM_INIT(0), b = FASTSYNC_SEM_INIT(0);
static fastsync_event_t e = FASTSYNC_EVENT_INIT(false);

static void *watchdog(void *unused)
{
    (void)unused;
    struct timespec t = { 10, 0 };
    nanosleep(&t, NULL);
    diag("the wait_any never returned: it slept where the replaced wake does not reach");
    bail("watchdog");
    return NULL;
}

static void *poster(void *unused)
{
    (void)unused;
    struct timespec t = { 0, 30000000 };
    nanosleep(&t, NULL);
    fastsync_sem_post(&b);
    return NULL;
}

int main(void)
{
    pthread_t wd, p;
    pthread_create(&wd, NULL, watchdog, NULL);
    pthread_detach(wd);
    fastsync_wait_entry_t list[3] = { fastsync_wait_sem(&a), fastsync_wait_event(&e), fastsync_wait_sem(&b) };
    unsigned idx = 99;
    pthread_create(&p, NULL, poster, NULL);
    int r = fastsync_wait_any(list, 3, &idx);
    pthread_join(p, NULL);
    is_int(r, 0, "wait_any returned 0");
    is_int((int)idx, 2, "... with the index of the semaphore posted");
    ok(atomic_load(&own_waits) > 0, "it slept through the replaced wait (%lu calls)", atomic_load(&own_waits));
    ok(fastsync_sem_getvalue(&b) == 0 && fastsync_sem_destroy(&a) == 0 && fastsync_sem_destroy(&b) == 0,
       "the token taken, no waiter left");
    return done_testing();
}
