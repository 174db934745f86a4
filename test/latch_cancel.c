/* SPDX-License-Identifier: MIT */
/* latch_cancel: a latch wait that sleeps is a deferred cancellation point (fastsync.h: "a
 * cancelled waiter deregisters"). pthread_cancel acts while the thread sleeps in wait,
 * timedwait or clockwait (CLOCK_REALTIME), and when the cancel was already pending as the
 * wait went to sleep; the cancelled waiter leaves no registration behind: the word says no
 * waiter, destroy says 0, the count_down that opens the latch makes no FUTEX_WAKE, and an
 * add from 0 reopens it (EINVAL while a waiter is registered). Beside a second sleeper that
 * is not cancelled: the word says 1 waiter after the cancel, and the opening wakes that one.
 * With cancellation disabled a wait goes on untouched (registered; 0 at the opening), and a
 * wait on an open latch with a cancel pending is no cancellation point (the fast path
 * makes no call).
 * Skipped where waits are no cancellation points (FASTSYNC_NO_CANCEL, bionic); not built
 * for Windows or OS/2 (test/meson.build, os2/meson.build).
 * Fails with: a sleep without its cleanup handler (the word keeps the waiter: destroy
 * EBUSY, add EINVAL, a needless wake); a cleanup that leaves twice; a sleep with
 * cancellation disabled by the library. */
#include "harness.h"

static fastsync_latch_t l;
static struct test_cwaiter *shown[2]; /* the waiters of the case running, for the dump */

static void dump(void *unused)
{
    (void)unused;
    test_dump_latch("latch", &l);
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
        return fastsync_latch_timedwait(&l, &d);
    case TEST_SLEEP_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        return fastsync_latch_clockwait(&l, CLOCK_REALTIME, &d);
    default:
        return fastsync_latch_wait(&l);
    }
}

/* Until n waiters are registered and each has made a futex wait since waits0 (asleep). */
static void until_asleep(unsigned n, unsigned long waits0)
{
    while (test_latch_waiters(&l) < n || test_kernel_waits() - waits0 < n) test_sleep_ns(200000);
    test_sleep_ns(10000000); /* in the kernel by now, most likely; either way is a test */
}

/* After the cancelled waiter(s), none left: the opening makes no wake, an add reopens. */
static void check_clean(const char *what)
{
    is_int(test_latch_waiters(&l), 0, "%s: no waiter left registered", what);
    is_int(fastsync_latch_destroy(&l), 0, "%s: destroy says 0", what);
    unsigned long wakes0 = test_kernel_wakes();
    is_int(fastsync_latch_count_down(&l, 1), 0, "%s: count_down(1) opens the latch", what);
    is_int(test_kernel_wakes() - wakes0, 0, "%s: ... with no FUTEX_WAKE", what);
    is_int(fastsync_latch_add(&l, 1), 0, "%s: add(1) from 0: 0 (reopened)", what);
    is_int(fastsync_latch_trywait(&l), EAGAIN, "%s: ... trywait EAGAIN", what);
}

static void cancel_blocked(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "cancel a blocked %s", test_sleep_kind_name(kind));
    fastsync_latch_init(&l, 1, 0);
    struct test_cwaiter w;
    shown[0] = &w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, false, false);
    until_asleep(1, waits0);
    is_int(pthread_cancel(w.thread), 0, "%s: pthread_cancel", what);
    test_cwaiter_join_cancelled(&w, what);
    check_clean(what);
    shown[0] = NULL;
}

static void cancel_pending(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s that is about to sleep with a cancel pending", test_sleep_kind_name(kind));
    fastsync_latch_init(&l, 1, 0);
    struct test_cwaiter w;
    shown[0] = &w;
    test_cwaiter_start(&w, do_wait, kind, true, false);
    is_int(test_cwaiter_cancel_pending(&w), 0, "%s: pthread_cancel while disabled", what);
    test_cwaiter_join_cancelled(&w, what);
    check_clean(what);
    shown[0] = NULL;
}

/* Two sleepers, one cancelled: the other stays registered and the opening wakes it. */
static void cancel_one_of_two(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "one of two blocked %ss cancelled", test_sleep_kind_name(kind));
    fastsync_latch_init(&l, 1, 0);
    struct test_cwaiter w[2];
    shown[0] = &w[0];
    shown[1] = &w[1];
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w[0], do_wait, kind, false, false);
    test_cwaiter_start(&w[1], do_wait, kind, false, false);
    until_asleep(2, waits0);
    is_int(pthread_cancel(w[0].thread), 0, "%s: pthread_cancel", what);
    test_cwaiter_join_cancelled(&w[0], what);
    is_int(test_latch_waiters(&l), 1, "%s: the other still registered", what);
    is_int(fastsync_latch_destroy(&l), EBUSY, "%s: destroy EBUSY", what);
    unsigned long wakes0 = test_kernel_wakes();
    fastsync_latch_count_down(&l, 1);
    is_int(test_kernel_wakes() - wakes0, 1, "%s: the opening made one wake", what);
    ok(test_thread_join(w[1].thread) == NULL, "%s: the other returned", what);
    is_int(w[1].ret, 0, "%s: ... with 0", what);
    is_int(test_latch_waiters(&l), 0, "%s: no waiter left", what);
    is_int(fastsync_latch_destroy(&l), 0, "%s: destroy 0", what);
    shown[0] = shown[1] = NULL;
}

static void cancel_disabled(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s with cancellation disabled", test_sleep_kind_name(kind));
    fastsync_latch_init(&l, 1, 0);
    struct test_cwaiter w;
    shown[0] = &w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, false, true);
    until_asleep(1, waits0);
    is_int(pthread_cancel(w.thread), 0, "%s: pthread_cancel", what);
    test_sleep_ns(20000000);
    is_int(test_cwaiter_phase(&w), TEST_CW_WAITING, "%s: still waiting 20 ms later", what);
    is_int(test_latch_waiters(&l), 1, "%s: ... and registered", what);
    fastsync_latch_count_down(&l, 1);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "%s: cancelled once it enabled cancellation", what);
    is_int(w.ret, 0, "%s: ... after its wait returned 0 at the opening", what);
    is_int(test_latch_waiters(&l), 0, "%s: no waiter left", what);
    is_int(fastsync_latch_destroy(&l), 0, "%s: destroy says 0", what);
    shown[0] = NULL;
}

static void pending_fast_path(void)
{
    const char *what = "a wait on an open latch, with a cancel pending";
    fastsync_latch_init(&l, 0, 0);
    struct test_cwaiter w;
    test_cwaiter_start(&w, do_wait, TEST_SLEEP_WAIT, true, true);
    test_cwaiter_cancel_pending(&w);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "%s: the thread ended cancelled (at its testcancel)", what);
    is_int(w.ret, 0, "%s: the wait itself returned 0: not a cancellation point", what);
    is_int(fastsync_latch_destroy(&l), 0, "%s: destroy says 0", what);
}

int main(void)
{
    test_init();
    if (!FASTSYNC__CANCEL) skip_all("waits are no cancellation points in this build");
    test_watchdog_start(dump, NULL);
    for (int k = 0; k < TEST_SLEEP_KINDS; k++) {
        cancel_blocked(k);
        cancel_pending(k);
    }
    cancel_one_of_two(TEST_SLEEP_TIMED);
    cancel_disabled(TEST_SLEEP_WAIT);
    pending_fast_path();
    test_watchdog_stop();
    return done_testing();
}
