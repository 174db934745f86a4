/* SPDX-License-Identifier: MIT */
/* wait32_cancel: the manual's "Waiting on an address": a wait that reaches the backend's
 * sleep is a deferred cancellation point where the primitives' waits are; one that returns
 * at once makes no call and is none.
 *   asleep: a thread asleep in wait32, timedwait32 (far) or clockwait32 (CLOCK_REALTIME,
 *     far) is cancelled by pthread_cancel: it ends cancelled inside the wait;
 *   pending: a cancel pending as the thread calls the wait on a word that holds `expected`
 *     acts as it goes to sleep (the same, each kind);
 *   at once: with a cancel pending, a wait whose word differs returns 0 and a timed wait
 *     past its deadline ETIMEDOUT, and the thread is not cancelled there (it runs on to
 *     its end);
 *   disabled: with cancellation disabled a cancel sent to a sleeper leaves it asleep
 *     (still inside 20 ms later); a store and a wake end the wait with 0, and the cancel
 *     acts at the thread's next pthread_testcancel.
 * Skipped where waits are no cancellation points (FASTSYNC_NO_CANCEL, bionic); not built
 * for Windows or OS/2 (test/meson.build, os2/meson.build).
 * Fails with: a wait that sleeps with cancellation off (the asleep and pending cases
 * hang: the watchdog), one that disables cancellation for good, or makes a call on its
 * fast path with a cancel pending. */
#include "harness.h"

static fastsync_word32_t word;
static struct test_cwaiter *shown; /* the waiter of the case running, for the dump */

static void dump(void *unused)
{
    (void)unused;
    diag("word %u, waiter phase %d", (unsigned)atomic_load(&word), shown ? test_cwaiter_phase(shown) : -1);
}

/* kind 0 wait32, 1 timedwait32 far, 2 clockwait32 CLOCK_REALTIME far: on `word`, expected 0;
 * kind 3 wait32 expecting 1 (the word differs), 4 timedwait32 a second ago */
static int wait_kind(int kind)
{
    struct timespec d;
    switch (kind) {
    case 1:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        return fastsync_timedwait32(&word, 0, 0, &d);
    case 2:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        return fastsync_clockwait32(&word, 0, 0, CLOCK_REALTIME, &d);
    case 3:
        return fastsync_wait32(&word, 1, 0);
    case 4:
        d = test_ns_ts(test_clock_ns(CLOCK_MONOTONIC) - 1000000000);
        return fastsync_timedwait32(&word, 0, 0, &d);
    default:
        return fastsync_wait32(&word, 0, 0);
    }
}

static const char *const kind_name[] = { "wait32", "timedwait32", "clockwait32 CLOCK_REALTIME",
                                         "wait32 on a word that differs", "timedwait32 past its deadline" };

/* Until w is asleep in its wait (its kernel wait counted since waits0, and /proc says so). */
static void until_asleep(struct test_cwaiter *w, unsigned long waits0)
{
    uint64_t end = test_limit_end(5000);
    while ((test_cwaiter_phase(w) != TEST_CW_WAITING || test_kernel_waits() == waits0) && test_box_open(end))
        sched_yield();
    if (test_kernel_waits() == waits0) bail("the waiter never reached its kernel wait");
    test_sleep_ns(5000000); /* its tid is not known here: a settle */
}

static void asleep(int kind, bool pending)
{
    char what[96];
    snprintf(what, sizeof what, "%s, %s", kind_name[kind], pending ? "cancel pending" : "cancelled asleep");
    struct test_cwaiter w;
    atomic_store_explicit(&word, 0, memory_order_relaxed); /* relaxed: before the start */
    shown = &w;
    unsigned long w0 = test_kernel_waits();
    test_cwaiter_start(&w, wait_kind, kind, pending, false);
    if (pending) {
        test_cwaiter_cancel_pending(&w);
    } else {
        until_asleep(&w, w0);
        pthread_cancel(w.thread);
    }
    test_cwaiter_join_cancelled(&w, what);
    shown = NULL;
}

static void at_once(int kind)
{
    struct test_cwaiter w;
    atomic_store_explicit(&word, 0, memory_order_relaxed); /* relaxed: before the start */
    shown = &w;
    unsigned long w0 = test_kernel_waits();
    test_cwaiter_start(&w, wait_kind, kind, true, false);
    test_cwaiter_cancel_pending(&w);
    void *r = test_thread_join(w.thread);
    ok(r != PTHREAD_CANCELED && w.ret == (kind == 4 ? ETIMEDOUT : 0) && test_kernel_waits() == w0,
       "%s, cancel pending: returned %d at once, no kernel wait, not cancelled there", kind_name[kind], w.ret);
    shown = NULL;
}

static void disabled(void)
{
    struct test_cwaiter w;
    atomic_store_explicit(&word, 0, memory_order_relaxed); /* relaxed: before the start */
    shown = &w;
    unsigned long w0 = test_kernel_waits();
    test_cwaiter_start(&w, wait_kind, 0, false, true);
    until_asleep(&w, w0);
    pthread_cancel(w.thread);
    test_sleep_ns(20000000);
    is_int(test_cwaiter_phase(&w), TEST_CW_WAITING, "cancellation disabled: still asleep 20 ms after the cancel");
    atomic_store_explicit(&word, 1, memory_order_relaxed); /* relaxed: the waiter reads nothing after it */
    fastsync_wake32(&word, 1, 0);
    void *r = test_thread_join(w.thread);
    ok(r == PTHREAD_CANCELED && w.ret == 0 && test_cwaiter_phase(&w) == TEST_CW_RETURNED,
       "cancellation disabled: the store and wake end the wait (%d), the cancel acts after it", w.ret);
    shown = NULL;
}

int main(void)
{
    test_init();
    if (!FASTSYNC__CANCEL) skip_all("waits are no cancellation points in this build");
    test_watchdog_start(dump, NULL);
    for (int k = 0; k < 3; k++) asleep(k, false);
    for (int k = 0; k < 3; k++) asleep(k, true);
    at_once(3);
    at_once(4);
    disabled();
    test_watchdog_stop();
    return done_testing();
}
