/* SPDX-License-Identifier: MIT */
/* cond_timeout: a waiter that times out neither keeps nor leaks a signal.
 *   late signal:  the waiter's futex wait times out, and a signal comes (made from the
 *                 harness's window after that wait, before the waiter looks at the word):
 *                 the wait reports 0, not ETIMEDOUT, and the signal is gone (no ticket, no
 *                 signal pending): it kept it, as a success;
 *   no signal:    a waiter times out with no signal: ETIMEDOUT, no ticket left; a signal
 *                 made afterwards finds nobody (no wake) and leaves nothing pending;
 *   two waiters:  A times out and leaves while B waits without a deadline; the next signal
 *                 goes to B (it returns 0): A's timeout took nothing.
 * Each with wait (the mutex held again after) and with the ticket's timedawait. */
#include "harness.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
static _Atomic(int) signal_in_window; /* 1: the next futex wait's return signals first */

static void dump(void *unused)
{
    (void)unused;
    test_dump_cond("condvar", &c);
}

/* The waiting thread, after its futex wait: a signal made between the wait's timeout and
 * its look at the word. */
static void after_wait(void)
{
    int one = 1;
    if (atomic_compare_exchange_strong(&signal_in_window, &one, 0)) fastsync_cond_signal(&c);
}

static int timed(bool ticket, uint64_t ns)
{
    struct timespec d = fastsync_deadline_in(ns);
    if (ticket) {
        fastsync_cond_ticket_t t;
        fastsync_cond_register(&c, &t);
        return fastsync_cond_timedawait(&c, &t, &d);
    }
    fastsync_mutex_lock(&m);
    int r = fastsync_cond_timedwait(&c, &m, &d);
    if (test_mutex_state(&m) == 0) r = -100; /* not held again */
    fastsync_mutex_unlock(&m);
    return r;
}

static void *untimed(void *arg)
{
    fastsync_mutex_lock(&m);
    int r = fastsync_cond_wait(&c, &m);
    fastsync_mutex_unlock(&m);
    *(int *)arg = r;
    return NULL;
}

static void cases(bool ticket)
{
    const char *how = ticket ? "timedawait" : "timedwait";

    atomic_store(&signal_in_window, 1);
    int r = timed(ticket, 100000000);
    is_int(atomic_load(&signal_in_window), 0, "late signal, %s: the signal came after the futex wait", how);
    is_int(r, 0, "late signal, %s: the wait reports 0 (it took the signal)", how);
    is_int(test_cond_left(&c), 0, "late signal, %s: no ticket, no signal left", how);

    r = timed(ticket, 20000000);
    is_int(r, ETIMEDOUT, "no signal, %s: ETIMEDOUT", how);
    unsigned long k0 = test_kernel_wakes();
    fastsync_cond_signal(&c);
    is_int(test_kernel_wakes() - k0, 0, "no signal, %s: a signal afterwards wakes nobody", how);
    is_int(test_cond_left(&c), 0, "no signal, %s: ... and leaves nothing", how);

    int rb = -1;
    pthread_t b = test_thread_start(untimed, &rb);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && test_cond_waiters(&c) < 1) test_sleep_ns(1000000);
    r = timed(ticket, 20000000);
    is_int(r, ETIMEDOUT, "two waiters, %s: A times out", how);
    is_int(test_cond_waiters(&c), 1, "two waiters, %s: B still registered", how);
    fastsync_cond_signal(&c);
    test_thread_join(b);
    is_int(rb, 0, "two waiters, %s: the next signal goes to B", how);
    is_int(test_cond_left(&c), 0, "two waiters, %s: no ticket, no signal left", how);
}

int main(void)
{
    test_init();
    /* Warm-up, before any deadline runs: over OS/2 without atomics the first atomic operation
     * attaches the wait table (dozens of Dos* calls), which under ThreadSanitizer took longer
     * than the late-signal case's deadline, so its wait never reached the futex wait. */
    fastsync_cond_signal(&c);
    test_after_futex_wait = after_wait;
    test_watchdog_start(dump, NULL);
    cases(false);
    cases(true);
    test_watchdog_stop();
    return done_testing();
}
