/* SPDX-License-Identifier: MIT */
/* wait_any_cancel: a wait_any that sleeps is a deferred cancellation point, as the other
 * waits are. A thread asleep in wait_any, timedwait_any or clockwait_any (CLOCK_REALTIME)
 * over two semaphores and an event is cancelled: it ends cancelled inside the wait, both
 * semaphores have no waiter left (destroy says 0), a later post to each makes no FUTEX_WAKE
 * and its token stays, and the event still works. The same when the cancel was already
 * pending as the wait went to sleep. With cancellation disabled the wait goes on and returns
 * the semaphore posted afterwards. A wait that can return at once (a token, a set event, a
 * past deadline) is not a cancellation point: it returns with the cancel pending. And a
 * wait_any woken by a post and cancelled before it takes the token passes the wake on: a
 * plain waiter on the same semaphore gets the token (or, if the plain waiter was the one
 * woken and cancelled, the wait_any gets it).
 * POSIX only: Windows and OS/2 have no thread cancellation (the waits are no cancellation
 * points there), and a build with FASTSYNC_NO_CANCEL skips it. */
#include "harness.h"

enum { IA, IB, IE, NLIST }; /* the list: sem a, sem b, event e */
enum { K_WAIT, K_TIMED, K_REALTIME, K_PAST, K_PLAIN };
static const char *const kname[] = { "wait_any", "timedwait_any", "clockwait_any(REALTIME)",
                                     "timedwait_any (past deadline)", "sem_wait" };

static fastsync_sem_t a, b;
static fastsync_event_t e;
static fastsync_wait_entry_t list[NLIST];
static unsigned wa_index; /* the index the wait_any waiter got (written by it before it returns) */
static struct test_cwaiter *shown[2]; /* the waiters of the case running, for the dump */

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem a", &a);
    test_dump_sem("sem b", &b);
    test_dump_event("event e", &e);
    for (int i = 0; i < 2; i++)
        if (shown[i])
            diag("waiter %d (%s): phase %d (1 pending, 2 in the wait, 3 returned), ret %d", i,
                 kname[shown[i]->kind], test_cwaiter_phase(shown[i]), shown[i]->ret);
}

static int do_wait(int kind)
{
    struct timespec d;
    switch (kind) {
    case K_WAIT:
        return fastsync_wait_any(list, NLIST, &wa_index);
    case K_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        return fastsync_timedwait_any(list, NLIST, &wa_index, &d);
    case K_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        return fastsync_clockwait_any(list, NLIST, &wa_index, CLOCK_REALTIME, &d);
    case K_PAST:
        d = test_ts(1, 0);
        return fastsync_timedwait_any(list, NLIST, &wa_index, &d);
    default:
        return fastsync_sem_wait(&a);
    }
}

static void fresh(void)
{
    fastsync_sem_init(&a, 0, 0);
    fastsync_sem_init(&b, 0, 0);
    fastsync_event_init(&e, false, 0);
    list[IA] = fastsync_wait_sem(&a);
    list[IB] = fastsync_wait_sem(&b);
    list[IE] = fastsync_wait_event(&e);
    wa_index = 99;
}

/* Until the wait_any is registered on both semaphores and has made a futex wait since
 * waits0; then a little longer (in the kernel by now, most likely; either way is a test). */
static void until_asleep(unsigned long waits0)
{
    while (test_sem_waiters(&a) < 1 || test_sem_waiters(&b) < 1 || test_kernel_waits() - waits0 < 1)
        test_sleep_ns(200000);
    test_sleep_ns(20000000);
}

/* After a cancelled wait_any: nothing registered, a post is a plain token, the event works. */
static void check_clean(const char *what)
{
    is_int(test_sem_waiters(&a), 0, "%s: no waiter left on the first semaphore", what);
    is_int(test_sem_waiters(&b), 0, "%s: no waiter left on the second semaphore", what);
    is_int(fastsync_sem_destroy(&a), 0, "%s: destroy says 0 for the first", what);
    is_int(fastsync_sem_destroy(&b), 0, "%s: destroy says 0 for the second", what);
    fastsync_sem_init(&a, 0, 0);
    fastsync_sem_init(&b, 0, 0);
    unsigned long wakes0 = test_kernel_wakes();
    is_int(fastsync_sem_post(&a), 0, "%s: post the first", what);
    is_int(fastsync_sem_post(&b), 0, "%s: post the second", what);
    is_int(test_kernel_wakes() - wakes0, 0, "%s: ... the posts made no FUTEX_WAKE", what);
    ok(fastsync_sem_getvalue(&a) == 1 && fastsync_sem_getvalue(&b) == 1, "%s: ... and their tokens stay", what);
    fastsync_event_set(&e);
    ok(fastsync_event_is_set(&e), "%s: the event sets afterwards", what);
    unsigned idx = 99;
    fastsync_sem_init(&a, 0, 0);
    fastsync_sem_init(&b, 0, 0);
    is_int(fastsync_trywait_any(list, NLIST, &idx), 0, "%s: a trywait_any afterwards: 0", what);
    is_int(idx, IE, "%s: ... the event's index", what);
}

static void cancel_blocked(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "cancel a blocked %s", kname[kind]);
    fresh();
    struct test_cwaiter w;
    shown[0] = &w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, false, false);
    until_asleep(waits0);
    is_int(pthread_cancel(w.thread), 0, "%s: pthread_cancel", what);
    test_cwaiter_join_cancelled(&w, what);
    check_clean(what);
    shown[0] = NULL;
}

static void cancel_pending(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s that is about to sleep with a cancel pending", kname[kind]);
    fresh();
    struct test_cwaiter w;
    shown[0] = &w;
    test_cwaiter_start(&w, do_wait, kind, true, false);
    is_int(test_cwaiter_cancel_pending(&w), 0, "%s: pthread_cancel while disabled", what);
    test_cwaiter_join_cancelled(&w, what);
    check_clean(what);
    shown[0] = NULL;
}

static void cancel_disabled(int kind)
{
    char what[96];
    snprintf(what, sizeof what, "a %s with cancellation disabled", kname[kind]);
    fresh();
    struct test_cwaiter w;
    shown[0] = &w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, false, true);
    until_asleep(waits0);
    is_int(pthread_cancel(w.thread), 0, "%s: pthread_cancel", what);
    test_sleep_ns(50000000);
    is_int(test_cwaiter_phase(&w), TEST_CW_WAITING, "%s: still waiting 50 ms later", what);
    ok(test_sem_waiters(&a) == 1 && test_sem_waiters(&b) == 1, "%s: ... and registered on both semaphores", what);
    fastsync_sem_post(&b);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "%s: cancelled once it enabled cancellation", what);
    is_int(w.ret, 0, "%s: ... after its wait returned 0", what);
    is_int(wa_index, IB, "%s: ... with the posted semaphore's index", what);
    ok(fastsync_sem_getvalue(&a) == 0 && fastsync_sem_getvalue(&b) == 0, "%s: ... its token taken", what);
    ok(fastsync_sem_destroy(&a) == 0 && fastsync_sem_destroy(&b) == 0, "%s: destroy says 0 for both", what);
    shown[0] = NULL;
}

/* A wait that returns at once, run with a cancel pending and cancellation enabled. */
static void pending_at_once(const char *what, int kind, int want, unsigned want_index)
{
    struct test_cwaiter w;
    shown[0] = &w;
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w, do_wait, kind, true, true);
    test_cwaiter_cancel_pending(&w);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "%s: the thread ended cancelled (at its testcancel)", what);
    is_int(w.ret, want, "%s: the wait itself returned %d: not a cancellation point", what, want);
    if (want == 0) is_int(wa_index, want_index, "%s: ... the ready entry's index", what);
    is_int(test_kernel_waits() - waits0, 0, "%s: ... without a futex wait", what);
    ok(test_sem_waiters(&a) == 0 && test_sem_waiters(&b) == 0, "%s: no waiter left on the semaphores", what);
    shown[0] = NULL;
}

static void fast_paths(void)
{
    fresh();
    fastsync_sem_post(&b);
    pending_at_once("a wait_any that finds a token, with a cancel pending", K_WAIT, 0, IB);
    is_int(fastsync_sem_getvalue(&b), 0, "... the token taken");
    fresh();
    fastsync_event_set(&e);
    pending_at_once("a timedwait_any that finds the event set, with a cancel pending", K_TIMED, 0, IE);
    ok(fastsync_event_is_set(&e), "... the event still set");
    fresh();
    pending_at_once("a timedwait_any with a past deadline, with a cancel pending", K_PAST, ETIMEDOUT, 0);
}

/* ---- a wait woken by a post, cancelled before it takes the token ---- */

static void woken_then_cancelled(int kind)
{
    char what[128];
    snprintf(what, sizeof what, "a %s and a sem_wait asleep, a post, the one back first cancelled", kname[kind]);
    fresh();
    struct test_cwaiter w[2]; /* 0: the wait_any, 1: the plain sem_wait on the first semaphore */
    shown[0] = &w[0];
    shown[1] = &w[1];
    unsigned long waits0 = test_kernel_waits();
    test_cwaiter_start(&w[0], do_wait, kind, false, false);
    until_asleep(waits0); /* the wait_any first: the kernel's wake order favours it */
    waits0 = test_kernel_waits();
    test_cwaiter_start(&w[1], do_wait, K_PLAIN, false, false);
    while (test_sem_waiters(&a) < 2 || test_kernel_waits() - waits0 < 1) test_sleep_ns(200000);
    test_sleep_ns(20000000);
    test_claim_arm();
    fastsync_sem_post(&a); /* one FUTEX_WAKE; whichever waiter comes back first claims */
    pthread_t claimer = test_claim_cancel(what);
    int victim = pthread_equal(claimer, w[0].thread) ? 0 : 1;
    diag("%s: the %s came back first", what, victim == 0 ? "wait_any" : "sem_wait");
    test_cwaiter_join_cancelled(&w[victim], what);
    test_thread_join(w[1 - victim].thread); /* hangs (watchdog) if the wake was not passed on */
    is_int(w[1 - victim].ret, 0, "%s: the other waiter got the token", what);
    if (victim == 1) is_int(wa_index, IA, "%s: ... the wait_any with the first semaphore's index", what);
    is_int(fastsync_sem_getvalue(&a), 0, "%s: value 0", what);
    ok(test_sem_waiters(&a) == 0 && test_sem_waiters(&b) == 0, "%s: no waiter left on either semaphore", what);
    ok(fastsync_sem_destroy(&a) == 0 && fastsync_sem_destroy(&b) == 0, "%s: destroy says 0 for both", what);
    shown[0] = shown[1] = NULL;
}

int main(void)
{
    test_init();
    if (!FASTSYNC__CANCEL) skip_all("waits are no cancellation points in this build");
    test_watchdog_start(dump, NULL);
    for (int k = K_WAIT; k <= K_REALTIME; k++) cancel_blocked(k);
    for (int k = K_WAIT; k <= K_REALTIME; k++) cancel_pending(k);
    for (int k = K_WAIT; k <= K_REALTIME; k++) cancel_disabled(k);
    fast_paths();
    test_after_futex_wait = test_claim_window;
    for (int k = K_WAIT; k <= K_REALTIME; k++) woken_then_cancelled(k);
    test_after_futex_wait = NULL;
    test_watchdog_stop();
    return done_testing();
}
