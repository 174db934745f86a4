/* SPDX-License-Identifier: MIT */
/* sem_cancel: a semaphore wait that sleeps is a deferred cancellation point, as sem_wait is.
 * pthread_cancel acts while the thread sleeps in wait, timedwait or clockwait, and when the
 * cancel was already pending as the wait went to sleep; the cancelled waiter leaves no
 * registration behind (destroy says 0, a post makes no FUTEX_WAKE and stays in the value).
 * A waiter that was woken by a post and is cancelled before it takes the token passes the
 * wake on: the other sleeper gets the token. With cancellation disabled a wait goes on
 * untouched, and a wait that finds a token at once is not a cancellation point (the fast
 * path makes no call), as before. */
#include "harness.h"

static fastsync_sem_t s;
static struct test_cwaiter *shown[2]; /* the waiters of the case running, for the dump */

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem", &s);
    for (int i = 0; i < 2; i++)
        if (shown[i])
            diag("waiter %d: phase %d (1 pending, 2 in the wait, 3 returned), ret %d", i,
                 test_cwaiter_phase(shown[i]), shown[i]->ret);
}

static int do_wait(int kind)
{
    struct timespec d;
    switch (kind) {
    case TEST_SLEEP_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        return fastsync_sem_timedwait(&s, &d);
    case TEST_SLEEP_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        return fastsync_sem_clockwait(&s, CLOCK_REALTIME, &d);
    default:
        return fastsync_sem_wait(&s);
    }
}

/* Until n waiters are registered and each has made a futex wait since waits0 (asleep). */
static void until_asleep(unsigned n, unsigned long waits0)
{
    while (test_sem_waiters(&s) < n || test_kernel_waits() - waits0 < n) test_sleep_ns(200000);
    test_sleep_ns(20000000); /* in the kernel by now, most likely; either way is a test */
}

/* After a cancelled waiter: nothing registered, and a post is a plain token. */
static void check_clean(const char *what)
{
    is_int(test_sem_waiters(&s), 0, "%s: no waiter left registered", what);
    unsigned long wakes0 = test_kernel_wakes();
    is_int(fastsync_sem_post(&s), 0, "%s: post", what);
    is_int(test_kernel_wakes() - wakes0, 0, "%s: ... made no FUTEX_WAKE", what);
    is_int(fastsync_sem_getvalue(&s), 1, "%s: ... and its token stays", what);
    is_int(fastsync_sem_destroy(&s), 0, "%s: destroy says 0", what);
}

static void cancel_blocked(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "cancel a blocked %s", test_sleep_kind_name(kind));
    fastsync_sem_init(&s, 0, 0);
    struct test_cwaiter w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, false, false);
    until_asleep(1, waits0);
    is_int(pthread_cancel(w.thread), 0, "%s: pthread_cancel", what);
    test_cwaiter_join_cancelled(&w, what);
    check_clean(what);
}

static void cancel_pending(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s that is about to sleep with a cancel pending", test_sleep_kind_name(kind));
    fastsync_sem_init(&s, 0, 0);
    struct test_cwaiter w;
    test_cwaiter_start(&w, do_wait, kind, true, false);
    is_int(test_cwaiter_cancel_pending(&w), 0, "%s: pthread_cancel while disabled", what);
    test_cwaiter_join_cancelled(&w, what);
    check_clean(what);
}

static void cancel_disabled(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s with cancellation disabled", test_sleep_kind_name(kind));
    fastsync_sem_init(&s, 0, 0);
    struct test_cwaiter w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, false, true);
    until_asleep(1, waits0);
    is_int(pthread_cancel(w.thread), 0, "%s: pthread_cancel", what);
    test_sleep_ns(50000000);
    is_int(test_cwaiter_phase(&w), TEST_CW_WAITING, "%s: still waiting 50 ms later", what);
    is_int(test_sem_waiters(&s), 1, "%s: ... and registered", what);
    fastsync_sem_post(&s);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "%s: cancelled once it enabled cancellation", what);
    is_int(w.ret, 0, "%s: ... after its wait returned 0 with the post's token", what);
    is_int(fastsync_sem_getvalue(&s), 0, "%s: value 0", what);
    is_int(fastsync_sem_destroy(&s), 0, "%s: destroy says 0", what);
}

static void pending_fast_path(void)
{
    const char *what = "a wait that finds a token, with a cancel pending";
    fastsync_sem_init(&s, 1, 0);
    struct test_cwaiter w;
    test_cwaiter_start(&w, do_wait, TEST_SLEEP_WAIT, true, true);
    test_cwaiter_cancel_pending(&w);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "%s: the thread ended cancelled (at its testcancel)", what);
    is_int(w.ret, 0, "%s: the wait itself returned 0: not a cancellation point", what);
    is_int(fastsync_sem_getvalue(&s), 0, "%s: ... and took the token", what);
    is_int(fastsync_sem_destroy(&s), 0, "%s: destroy says 0", what);
}

/* ---- a woken waiter cancelled before it takes its token ---- */

static void woken_then_cancelled(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s woken by a post, cancelled before it takes the token", test_sleep_kind_name(kind));
    fastsync_sem_init(&s, 0, 0);
    struct test_cwaiter w[2];
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w[0], do_wait, kind, false, false);
    test_cwaiter_start(&w[1], do_wait, kind, false, false);
    shown[0] = &w[0];
    shown[1] = &w[1];
    until_asleep(2, waits0);
    test_claim_arm();
    fastsync_sem_post(&s); /* one FUTEX_WAKE: one of the two sleepers claims */
    pthread_t claimer = test_claim_cancel(what);
    int victim = pthread_equal(claimer, w[0].thread) ? 0 : 1;
    test_cwaiter_join_cancelled(&w[victim], what);
    test_thread_join(w[1 - victim].thread); /* hangs (watchdog) if the wake was not passed on */
    is_int(w[1 - victim].ret, 0, "%s: the other sleeper got the token", what);
    is_int(fastsync_sem_getvalue(&s), 0, "%s: value 0", what);
    is_int(test_sem_waiters(&s), 0, "%s: no waiter left registered", what);
    is_int(fastsync_sem_destroy(&s), 0, "%s: destroy says 0", what);
    shown[0] = shown[1] = NULL;
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    for (int k = 0; k < TEST_SLEEP_KINDS; k++) cancel_blocked(k);
    for (int k = 0; k < TEST_SLEEP_KINDS; k++) cancel_pending(k);
    for (int k = 0; k < TEST_SLEEP_KINDS; k++) cancel_disabled(k);
    pending_fast_path();
    test_after_futex_wait = test_claim_window;
    for (int k = 0; k < TEST_SLEEP_KINDS; k++) woken_then_cancelled(k);
    test_after_futex_wait = NULL;
    test_watchdog_stop();
    return done_testing();
}
