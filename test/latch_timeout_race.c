/* SPDX-License-Identifier: MIT */
/* latch_timeout_race: a timed latch wait and its deadline (fastsync.h: "0 once the count is
 * 0"; a waiter leaves once it saw the count 0 or timed out).
 *   the deadline passes as the latch opens: a timed waiter (timedwait, clockwait on
 *     CLOCK_REALTIME; deadline 10 ms from its call, the case made again with twice the span
 *     when the thread started too late to register in time) is held in the test's wait
 *     override after its registration; this thread counts the latch down to 0 (the wake
 *     goes nowhere: nobody is in the kernel), the override waits until the deadline has
 *     passed and returns ETIMEDOUT, as a futex wait whose deadline and wake come together
 *     may. The wait returns 0 (the latch is open when it returns), and has left: the word
 *     is 0, destroy 0.
 *   a timeout leaves the waiter count as it was: an untimed waiter asleep (registered: the
 *     word says 1), then a timed one whose 10 ms pass: ETIMEDOUT, not before its deadline,
 *     and the word says 1 waiter again (count unchanged); the latch's opening then wakes
 *     the first (one wake), which returns 0, and the word is 0.
 * Fails with: a wait that reports ETIMEDOUT although it saw the latch open after its futex
 * wait; a timed-out waiter that does not leave (the word keeps 2, or 1 after the opening:
 * destroy EBUSY) or leaves twice (the word's waiter field wraps). The other window, the
 * count reaching 0 between the timed-out waiter's look and its leave (the leave's own
 * value then says 0), cannot be reached from a seam of the harness (no call between them). */
#include "harness.h"

static fastsync_latch_t l;
static _Thread_local int role;      /* 1: the held timed waiter; 2: the untimed sleeper */
static _Atomic(int) at_wait[3];     /* relaxed: polls; the word says the rest */
static _Atomic(bool) opened;        /* relaxed: a poll; the latch's word carries what matters */
static _Thread_local struct timespec held_deadline; /* the held waiter's, for its override */
static clockid_t held_clock;        /* written before the held waiter starts */
static _Atomic(bool) held_done;     /* the held waiter returned; relaxed: a poll, the join orders */
static _Atomic(unsigned long) word_wakes; /* relaxed: a count, read after the joins */

static void dump(void *unused)
{
    (void)unused;
    test_dump_latch("latch", &l);
    /* relaxed: a diagnostic snapshot */
    diag("at_wait %d %d, opened %d", atomic_load_explicit(&at_wait[1], memory_order_relaxed),
         atomic_load_explicit(&at_wait[2], memory_order_relaxed),
         (int)atomic_load_explicit(&opened, memory_order_relaxed));
}

static int wait_roles(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    if (word == fastsync__latch_futex(&l) && role) atomic_fetch_add_explicit(&at_wait[role], 1, memory_order_relaxed);
    if (word == fastsync__latch_futex(&l) && role == 1) {
        /* held until the latch is open and the deadline has passed: then a timeout */
        while (!atomic_load_explicit(&opened, memory_order_relaxed)) sched_yield();
        while (test_clock_ns(held_clock) < test_ts_ns(held_deadline)) test_sleep_ns(1000000);
        return ETIMEDOUT;
    }
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void wake_counted(void *word, int n, int shared)
{
    if (word == fastsync__latch_futex(&l)) atomic_fetch_add_explicit(&word_wakes, 1, memory_order_relaxed);
    fastsync__wake_sys(word, n, shared);
}

struct waiter {
    pthread_t t;
    int role;
    int kind; /* TEST_SLEEP_* */
    uint64_t ns;  /* its deadline, from its call */
    int ret;
    int64_t late; /* ns after its deadline on its clock when it returned */
};

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    role = w->role;
    clockid_t c = w->kind == TEST_SLEEP_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    struct timespec d = test_deadline_on(c, w->ns);
    held_deadline = d;
    switch (w->kind) {
    case TEST_SLEEP_TIMED: w->ret = fastsync_latch_timedwait(&l, &d); break;
    case TEST_SLEEP_REALTIME: w->ret = fastsync_latch_clockwait(&l, CLOCK_REALTIME, &d); break;
    default: w->ret = fastsync_latch_wait(&l); break;
    }
    if (w->kind != TEST_SLEEP_WAIT) w->late = test_clock_ns(c) - test_ts_ns(d);
    if (w->role == 1) atomic_store_explicit(&held_done, true, memory_order_relaxed);
    return NULL;
}

static bool until(int r, int n_waiters)
{
    uint64_t end = test_limit_end(5000);
    while ((atomic_load_explicit(&at_wait[r], memory_order_relaxed) < 1 || test_latch_waiters(&l) != (uint32_t)n_waiters) &&
           test_box_open(end))
        test_sleep_ns(100000);
    return atomic_load_explicit(&at_wait[r], memory_order_relaxed) >= 1 && test_latch_waiters(&l) == (uint32_t)n_waiters;
}

static void deadline_as_it_opens(int kind, int flags)
{
    char what[96];
    snprintf(what, sizeof what, "%s, %s: deadline as the latch opens", test_sleep_kind_name(kind),
             flags ? "shared" : "private");
    held_clock = kind == TEST_SLEEP_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    struct waiter w;
    bool held = false;
    /* The deadline is 10 ms from the waiter's call: a thread that starts later than that
     * (wine's first threads, a loaded machine) times out before it registers, and the case
     * is made again with twice the span. */
    for (uint64_t span = 10000000; !held && span <= 10000000ull << 8; span *= 2) {
        fastsync_latch_init(&l, 2, flags);
        /* relaxed: before the waiter starts (its creation publishes them) */
        atomic_store_explicit(&at_wait[1], 0, memory_order_relaxed);
        atomic_store_explicit(&opened, false, memory_order_relaxed);
        atomic_store_explicit(&held_done, false, memory_order_relaxed);
        w = (struct waiter){ .role = 1, .kind = kind, .ns = span, .ret = -1 };
        w.t = test_thread_start(waiter_main, &w);
        uint64_t end = test_limit_end(5000);
        while (!(held = atomic_load_explicit(&at_wait[1], memory_order_relaxed) >= 1 && test_latch_waiters(&l) == 1) &&
               !atomic_load_explicit(&held_done, memory_order_relaxed) && test_box_open(end))
            test_sleep_ns(100000);
        if (!held) {
            test_thread_join(w.t);
            if (w.ret != ETIMEDOUT || test_latch_word(&l) != (flags ? FASTSYNC__LATCH_SHARED | 2u : 2u)) break;
        }
    }
    if (!ok(held, "%s: the timed waiter registered and inside its futex call", what)) {
        dump(NULL);
        return;
    }
    fastsync_latch_count_down(&l, 2);
    atomic_store_explicit(&opened, true, memory_order_relaxed);
    test_thread_join(w.t);
    is_int(w.ret, 0, "%s: the wait returned 0 (the latch open), not ETIMEDOUT", what);
    ok(w.late >= 0, "%s: ... after its deadline had passed (%.3f ms)", what, (double)w.late / 1e6);
    is_int(test_latch_word(&l), flags ? FASTSYNC__LATCH_SHARED : 0, "%s: ... and it left (no waiter)", what);
    is_int(fastsync_latch_destroy(&l), 0, "%s: destroy 0", what);
}

static void timeout_leaves(int kind, int flags)
{
    char what[96];
    snprintf(what, sizeof what, "%s, %s: a timeout beside a sleeper", test_sleep_kind_name(kind),
             flags ? "shared" : "private");
    fastsync_latch_init(&l, 1, flags);
    atomic_store_explicit(&at_wait[2], 0, memory_order_relaxed); /* relaxed: before the threads */
    atomic_store_explicit(&word_wakes, 0, memory_order_relaxed);
    struct waiter u = { .role = 2, .kind = TEST_SLEEP_WAIT, .ret = -1 };
    u.t = test_thread_start(waiter_main, &u);
    if (!ok(until(2, 1), "%s: the untimed waiter registered and inside its futex call", what)) dump(NULL);
    uint64_t v = test_latch_word(&l);
    struct waiter t = { .role = 0, .kind = kind, .ns = 10000000, .ret = -1 };
    t.t = test_thread_start(waiter_main, &t);
    test_thread_join(t.t);
    is_int(t.ret, ETIMEDOUT, "%s: the timed wait returned ETIMEDOUT", what);
    ok(t.late >= 0, "%s: ... not before its deadline (%.3f ms after it)", what, (double)t.late / 1e6);
    is_int(test_latch_word(&l), v, "%s: ... the word as before it (count 1, 1 waiter)", what);
    fastsync_latch_count_down(&l, 1);
    test_thread_join(u.t);
    is_int(u.ret, 0, "%s: the opening woke the sleeper: 0", what);
    is_int(atomic_load_explicit(&word_wakes, memory_order_relaxed), 1, "%s: ... with one wake", what);
    is_int(test_latch_word(&l), flags ? FASTSYNC__LATCH_SHARED : 0, "%s: ... no waiter left", what);
    is_int(fastsync_latch_destroy(&l), 0, "%s: destroy 0", what);
}

int main(void)
{
    test_init();
    test_wait_override = wait_roles;
    test_wake_override = wake_counted;
    test_watchdog_start(dump, NULL);
    for (int k = 0; k < 1 + FASTSYNC_HAS_SHARED; k++) {
        int flags = k ? TEST_SHARED : 0;
        deadline_as_it_opens(TEST_SLEEP_TIMED, flags);
        deadline_as_it_opens(TEST_SLEEP_REALTIME, flags);
        timeout_leaves(TEST_SLEEP_TIMED, flags);
        timeout_leaves(TEST_SLEEP_REALTIME, flags);
    }
    test_watchdog_stop();
    return done_testing();
}
