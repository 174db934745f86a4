/* SPDX-License-Identifier: MIT */
/* event_cancel: an event wait that sleeps is a deferred cancellation point. pthread_cancel
 * acts while the thread sleeps in wait, timedwait or clockwait, and when the cancel was
 * already pending as the wait went to sleep. A cancelled waiter leaves what a timed-out one
 * leaves (the word BUSY: the next set makes one FUTEX_WAKE, which finds nobody), the event
 * works on, and another waiter is not disturbed. With cancellation disabled a wait goes on
 * untouched; a wait on a set event is not a cancellation point (one load, no call). */
#include "harness.h"

static fastsync_event_t e;

static void dump(void *unused)
{
    (void)unused;
    test_dump_event("event", &e);
}

static int do_wait(int kind)
{
    struct timespec d;
    switch (kind) {
    case TEST_SLEEP_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        return fastsync_event_timedwait(&e, &d);
    case TEST_SLEEP_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        return fastsync_event_clockwait(&e, CLOCK_REALTIME, &d);
    default:
        fastsync_event_wait(&e);
        return 0;
    }
}

/* After a cancelled waiter: the event still sets and waits, and the set's one wake was the
 * BUSY the cancelled waiter left (as a timed-out one would). */
static void check_after(const char *what)
{
    unsigned long wakes0 = test_kernel_wakes();
    fastsync_event_set(&e);
    ok(fastsync_event_is_set(&e), "%s: set afterwards sets it", what);
    is_int(test_kernel_wakes() - wakes0, 1, "%s: ... with the one FUTEX_WAKE the BUSY word asks for", what);
    struct timespec d = fastsync_deadline_in(1000000);
    is_int(fastsync_event_timedwait(&e, &d), 0, "%s: a wait returns at once", what);
    fastsync_event_reset(&e);
    d = fastsync_deadline_in(1000000);
    is_int(fastsync_event_timedwait(&e, &d), ETIMEDOUT, "%s: reset again, a wait times out", what);
    is_int(fastsync_event_destroy(&e), 0, "%s: destroy says 0", what);
}

static void cancel_blocked(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "cancel a blocked %s", test_sleep_kind_name(kind));
    fastsync_event_init(&e, false, 0);
    struct test_cwaiter w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, false, false);
    while (!test_event_asleep(&e, 1, waits0)) test_sleep_ns(200000);
    test_sleep_ns(20000000);
    is_int(pthread_cancel(w.thread), 0, "%s: pthread_cancel", what);
    test_cwaiter_join_cancelled(&w, what);
    check_after(what);
}

static void cancel_pending(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s that is about to sleep with a cancel pending", test_sleep_kind_name(kind));
    fastsync_event_init(&e, false, 0);
    struct test_cwaiter w;
    test_cwaiter_start(&w, do_wait, kind, true, false);
    is_int(test_cwaiter_cancel_pending(&w), 0, "%s: pthread_cancel while disabled", what);
    test_cwaiter_join_cancelled(&w, what);
    check_after(what);
}

static void cancel_disabled(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s with cancellation disabled", test_sleep_kind_name(kind));
    fastsync_event_init(&e, false, 0);
    struct test_cwaiter w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, false, true);
    while (!test_event_asleep(&e, 1, waits0)) test_sleep_ns(200000);
    is_int(pthread_cancel(w.thread), 0, "%s: pthread_cancel", what);
    test_sleep_ns(50000000);
    is_int(test_cwaiter_phase(&w), TEST_CW_WAITING, "%s: still waiting 50 ms later", what);
    fastsync_event_set(&e);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "%s: cancelled once it enabled cancellation", what);
    is_int(w.ret, 0, "%s: ... after its wait returned 0 on the set", what);
    is_int(fastsync_event_destroy(&e), 0, "%s: destroy says 0", what);
}

static void pending_set_event(void)
{
    const char *what = "a wait on a set event, with a cancel pending";
    fastsync_event_init(&e, true, 0);
    struct test_cwaiter w;
    test_cwaiter_start(&w, do_wait, TEST_SLEEP_TIMED, true, true);
    test_cwaiter_cancel_pending(&w);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "%s: the thread ended cancelled (at its testcancel)", what);
    is_int(w.ret, 0, "%s: the wait itself returned 0: not a cancellation point", what);
    is_int(fastsync_event_destroy(&e), 0, "%s: destroy says 0", what);
}

static void other_waiter_undisturbed(void)
{
    const char *what = "one of two sleepers cancelled";
    fastsync_event_init(&e, false, 0);
    struct test_cwaiter w[2];
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w[0], do_wait, TEST_SLEEP_WAIT, false, false);
    test_cwaiter_start(&w[1], do_wait, TEST_SLEEP_TIMED, false, false);
    while (!test_event_asleep(&e, 2, waits0)) test_sleep_ns(200000);
    test_sleep_ns(20000000);
    pthread_cancel(w[0].thread);
    ok(test_thread_join(w[0].thread) == PTHREAD_CANCELED, "%s: it ended cancelled", what);
    is_int(test_cwaiter_phase(&w[1]), TEST_CW_WAITING, "%s: the other still waits", what);
    fastsync_event_set(&e);
    test_thread_join(w[1].thread);
    is_int(w[1].ret, 0, "%s: the set woke the other", what);
    is_int(fastsync_event_destroy(&e), 0, "%s: destroy says 0", what);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    for (int k = 0; k < TEST_SLEEP_KINDS; k++) cancel_blocked(k);
    for (int k = 0; k < TEST_SLEEP_KINDS; k++) cancel_pending(k);
    for (int k = 0; k < TEST_SLEEP_KINDS; k++) cancel_disabled(k);
    pending_set_event();
    other_waiter_undisturbed();
    test_watchdog_stop();
    return done_testing();
}
