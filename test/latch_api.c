/* SPDX-License-Identifier: MIT */
/* latch_api: every latch function's results and exact error codes. sizeof 8;
 * FASTSYNC_LATCH_INIT (automatic and static) is an open latch of count 0, as init(0, 0) is;
 * init EINVAL for a count above FASTSYNC_LATCH_MAX and for bad flags (FASTSYNC_SHARED: 0 and
 * the shared bit where the backend has shared objects, else EINVAL); count_down EINVAL above
 * the count with the word unchanged, count_down(0) and add(0) 0 with the word unchanged; add
 * EOVERFLOW above the max (the word unchanged); trywait EAGAIN while the count is above 0,
 * then 0; the deadline rules as the other primitives' (EINVAL for a NULL deadline or another
 * clock always, for a bad tv_nsec only when the wait would block; ETIMEDOUT for a past
 * deadline without a futex call, never on an open latch; a timed wait that sleeps returns at
 * its deadline, never before, on both clocks, and leaves no registration).
 * A waiter inside: a thread in wait (or timedwait, clockwait on CLOCK_REALTIME,
 * arrive_and_wait) is held in the test's wait override, so the word says 1 waiter (and
 * `slept`) for as long as the test needs: destroy EBUSY at once with the count above 0; with
 * the count 0 before the waiter has left, destroy waits for it, and says EBUSY at its limit
 * without progress (300 ms here: FASTSYNC__DESTROY_NS); add from 0 EINVAL while it is inside
 * (the word unchanged), and 0 (the latch reopened) once it has returned; then destroy 0.
 * The opening count_down clears `slept`. arrive_and_wait: EINVAL above the count (the word
 * unchanged); the arrival that opens the latch returns 0 at once, without a futex call and
 * without counting itself in; one that does not counts down and in with one CAS.
 * Fails with: a limit or flag not checked; a count_down or add that changes the word when it
 * refuses; an add that reopens a latch whose waiters have not left (Go's rule); destroy blind
 * to a waiter inside, or one that does not wait for it; a waiter that does not leave (destroy
 * EBUSY after it returned); a timed wait that checks the deadline before the count, or leaves
 * its registration behind; an opening that leaves `slept` set (the next use's count_down
 * would wake nobody). */
#define FASTSYNC__DESTROY_NS 300000000u /* destroy's limit without progress: 300 ms here */
#include "harness.h"

static fastsync_latch_t l;
static fastsync_latch_t static_l = FASTSYNC_LATCH_INIT;

static void dump(void *unused)
{
    (void)unused;
    test_dump_latch("latch", &l);
}

/* The held waiter: its wait override (on l's word only) counts the call, then holds it while
 * `hold` is set; then the real wait, which returns at once if the word has changed. */
static _Atomic(int) at_wait; /* relaxed: a poll of the calls made; the word says the rest */
static _Atomic(bool) hold;   /* relaxed: a poll; the latch's word carries what matters */

static int wait_held(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    if (word == fastsync__latch_futex(&l)) {
        atomic_fetch_add_explicit(&at_wait, 1, memory_order_relaxed);
        while (atomic_load_explicit(&hold, memory_order_relaxed)) sched_yield();
    }
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

struct waiter {
    pthread_t t;
    int kind;
    int ret;
};

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    struct timespec d;
    switch (w->kind) {
    case TEST_SLEEP_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        w->ret = fastsync_latch_timedwait(&l, &d);
        break;
    case TEST_SLEEP_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        w->ret = fastsync_latch_clockwait(&l, CLOCK_REALTIME, &d);
        break;
    case TEST_SLEEP_KINDS: /* arrive_and_wait(1) */
        w->ret = fastsync_latch_arrive_and_wait(&l, 1);
        break;
    default:
        w->ret = fastsync_latch_wait(&l);
        break;
    }
    return NULL;
}

/* Until the waiter is registered and inside its held futex call. */
static bool until_held(void)
{
    uint64_t end = test_limit_end(5000);
    while ((atomic_load_explicit(&at_wait, memory_order_relaxed) < 1 || test_latch_waiters(&l) != 1) &&
           test_box_open(end))
        test_sleep_ns(100000);
    return atomic_load_explicit(&at_wait, memory_order_relaxed) >= 1 && test_latch_waiters(&l) == 1;
}

static void basics(void)
{
    is_int((long long)sizeof(fastsync_latch_t), 8, "sizeof(fastsync_latch_t) == 8");
    is_int((long long)_Alignof(fastsync_latch_t), 8, "_Alignof(fastsync_latch_t) == 8");
    fastsync_latch_t a = FASTSYNC_LATCH_INIT;
    is_int(test_latch_word(&a), 0, "FASTSYNC_LATCH_INIT: the word is 0 (count 0, no waiter, private)");
    is_int(fastsync_latch_trywait(&a), 0, "... open: trywait 0");
    is_int(fastsync_latch_wait(&a), 0, "... wait 0");
    is_int(test_latch_word(&a), 0, "... the word 0 after it: the wait counted itself in and out");
    is_int(test_latch_word(&static_l), 0, "... also as a static object");
    is_int(fastsync_latch_add(&static_l, 2), 0, "... which is a wait group: add(2) 0");
    is_int(fastsync_latch_trywait(&static_l), EAGAIN, "... trywait EAGAIN");
    is_int(fastsync_latch_count_down(&static_l, 2), 0, "... count_down(2) 0");
    is_int(fastsync_latch_trywait(&static_l), 0, "... open again: trywait 0");
    is_int(fastsync_latch_destroy(&static_l), 0, "... destroy 0");

    /* init: the count's limit and the flags */
    is_int(fastsync_latch_init(&l, 0, 0), 0, "init(0, 0): 0");
    is_int(test_latch_word(&l), 0, "... the word as FASTSYNC_LATCH_INIT's");
    is_int(fastsync_latch_init(&l, FASTSYNC_LATCH_MAX, 0), 0, "init(FASTSYNC_LATCH_MAX): 0");
    is_int(test_latch_count(&l), FASTSYNC_LATCH_MAX, "... the count is 2^30 - 1");
    is_int(FASTSYNC_LATCH_MAX, 0x3FFFFFFF, "FASTSYNC_LATCH_MAX == 2^30 - 1");
    uint64_t v = test_latch_word(&l);
    is_int(fastsync_latch_init(&l, FASTSYNC_LATCH_MAX + 1u, 0), EINVAL, "init(FASTSYNC_LATCH_MAX + 1): EINVAL");
    is_int(fastsync_latch_init(&l, UINT_MAX, 0), EINVAL, "init(UINT_MAX): EINVAL");
    is_int(test_latch_word(&l), v, "... neither touched the word");
    is_int(fastsync_latch_init(&l, 1, 2), EINVAL, "init with an unknown flag: EINVAL");
    is_int(fastsync_latch_init(&l, 1, -1), EINVAL, "init with every flag: EINVAL");
    is_int(fastsync_latch_init(&l, 1, FASTSYNC_SHARED | 2), EINVAL, "init(FASTSYNC_SHARED | 2): EINVAL");
    is_int(fastsync_latch_init(&l, 3, FASTSYNC_SHARED), FASTSYNC_HAS_SHARED ? 0 : EINVAL,
           "init(3, FASTSYNC_SHARED): %s on the %s backend", FASTSYNC_HAS_SHARED ? "0" : "EINVAL", FASTSYNC_BACKEND);
    if (FASTSYNC_HAS_SHARED) {
        is_int(test_latch_word(&l), 3u | FASTSYNC__LATCH_SHARED, "... the word: count 3 and the shared bit");
        is_int(fastsync_latch_count_down(&l, 3), 0, "... count_down(3): 0");
        is_int(test_latch_word(&l), FASTSYNC__LATCH_SHARED, "... count 0, the shared bit kept");
        is_int(fastsync_latch_add(&l, FASTSYNC_LATCH_MAX), 0, "... add(FASTSYNC_LATCH_MAX): 0");
        is_int(test_latch_word(&l), FASTSYNC_LATCH_MAX | FASTSYNC__LATCH_SHARED,
               "... the count at the max reaches neither `slept` nor the shared bit");
        is_int(fastsync_latch_add(&l, 1), EOVERFLOW, "... add(1) at the max: EOVERFLOW");
        is_int(test_latch_word(&l), FASTSYNC_LATCH_MAX | FASTSYNC__LATCH_SHARED, "... the word unchanged");
        is_int(fastsync_latch_destroy(&l), 0, "... destroy 0");
    }
}

static void counting(void)
{
    fastsync_latch_init(&l, 5, 0);
    unsigned long w0 = test_kernel_waits() + test_kernel_wakes();
    is_int(fastsync_latch_trywait(&l), EAGAIN, "count 5: trywait EAGAIN");
    is_int(fastsync_latch_count_down(&l, 6), EINVAL, "count_down(6) with count 5: EINVAL");
    is_int(fastsync_latch_count_down(&l, UINT_MAX), EINVAL, "count_down(UINT_MAX): EINVAL");
    is_int(test_latch_word(&l), 5, "... the word unchanged");
    is_int(fastsync_latch_count_down(&l, 0), 0, "count_down(0): 0");
    is_int(fastsync_latch_add(&l, 0), 0, "add(0): 0");
    is_int(test_latch_word(&l), 5, "... the word unchanged");
    is_int(fastsync_latch_count_down(&l, 2), 0, "count_down(2): 0");
    is_int(test_latch_count(&l), 3, "... count 3");
    is_int(fastsync_latch_add(&l, 4), 0, "add(4) on count 3: 0");
    is_int(test_latch_count(&l), 7, "... count 7");
    is_int(fastsync_latch_count_down(&l, 6), 0, "count_down(6): 0");
    is_int(fastsync_latch_trywait(&l), EAGAIN, "count 1: trywait EAGAIN");
    is_int(fastsync_latch_count_down(&l, 1), 0, "count_down(1): 0");
    is_int(fastsync_latch_trywait(&l), 0, "count 0: trywait 0");
    is_int(fastsync_latch_wait(&l), 0, "... wait 0");
    is_int(fastsync_latch_count_down(&l, 1), EINVAL, "count_down(1) on count 0: EINVAL");
    is_int(test_latch_word(&l), 0, "... the word unchanged");
    is_int(fastsync_latch_count_down(&l, 0), 0, "count_down(0) on count 0: 0");
    is_int(fastsync_latch_add(&l, 2), 0, "add(2) from 0, nobody waiting: 0 (reopened)");
    is_int(fastsync_latch_trywait(&l), EAGAIN, "... trywait EAGAIN");
    is_int(fastsync_latch_add(&l, FASTSYNC_LATCH_MAX - 1), EOVERFLOW, "add(max - 1) on count 2: EOVERFLOW");
    is_int(fastsync_latch_add(&l, UINT_MAX), EOVERFLOW, "add(UINT_MAX): EOVERFLOW");
    is_int(test_latch_word(&l), 2, "... the word unchanged");
    is_int(fastsync_latch_add(&l, FASTSYNC_LATCH_MAX - 2), 0, "add(max - 2) on count 2: 0");
    is_int(test_latch_word(&l), FASTSYNC_LATCH_MAX, "... count at the max, nothing else in the word");
    is_int(fastsync_latch_count_down(&l, FASTSYNC_LATCH_MAX), 0, "count_down(max): 0");
    is_int(test_latch_word(&l), 0, "... the word 0");
    is_int(fastsync_latch_destroy(&l), 0, "destroy 0");
    is_int(test_kernel_waits() + test_kernel_wakes() - w0, 0, "none of it a futex call");
}

static void deadlines(void)
{
    struct timespec past = fastsync_deadline_in(0), soon = fastsync_deadline_in(20000000);
    struct timespec bad_ns = soon, neg_ns = soon, neg = { -1, 0 };
    bad_ns.tv_nsec = 1000000000;
    neg_ns.tv_nsec = -1;
    test_sleep_ns(1000);

    fastsync_latch_init(&l, 0, 0);
    /* NULL and another clock: EINVAL always, also on an open latch */
    is_int(fastsync_latch_timedwait(&l, NULL), EINVAL, "open: timedwait(NULL) EINVAL");
    is_int(fastsync_latch_clockwait(&l, CLOCK_REALTIME, NULL), EINVAL, "open: clockwait(REALTIME, NULL) EINVAL");
    is_int(fastsync_latch_clockwait(&l, CLOCK_BOOTTIME, &soon), EINVAL, "open: clockwait on another clock EINVAL");
    /* open: a bad tv_nsec and a past deadline are not looked at */
    is_int(fastsync_latch_timedwait(&l, &bad_ns), 0, "open: timedwait with tv_nsec 1e9: 0");
    is_int(fastsync_latch_clockwait(&l, CLOCK_REALTIME, &neg_ns), 0, "open: clockwait with tv_nsec -1: 0");
    is_int(fastsync_latch_timedwait(&l, &past), 0, "open: timedwait with a past deadline: 0");
    is_int(fastsync_latch_clockwait(&l, CLOCK_REALTIME, &neg), 0, "open: clockwait with tv_sec -1: 0");

    fastsync_latch_init(&l, 1, 0);
    unsigned long w0 = test_kernel_waits();
    is_int(fastsync_latch_timedwait(&l, NULL), EINVAL, "closed: timedwait(NULL) EINVAL");
    is_int(fastsync_latch_clockwait(&l, CLOCK_BOOTTIME, &soon), EINVAL, "closed: clockwait on another clock EINVAL");
    is_int(fastsync_latch_timedwait(&l, &bad_ns), EINVAL, "closed: timedwait with tv_nsec 1e9: EINVAL");
    is_int(fastsync_latch_clockwait(&l, CLOCK_REALTIME, &neg_ns), EINVAL, "closed: clockwait with tv_nsec -1: EINVAL");
    is_int(fastsync_latch_timedwait(&l, &past), ETIMEDOUT, "closed: timedwait with a past deadline: ETIMEDOUT");
    is_int(fastsync_latch_clockwait(&l, CLOCK_REALTIME, &neg), ETIMEDOUT, "closed: clockwait with tv_sec -1: ETIMEDOUT");
    is_int(test_kernel_waits() - w0, 0, "... none of them a futex wait");
    is_int(test_latch_word(&l), 1, "... the word unchanged: count 1, no waiter");

    /* a wait that sleeps: at its deadline, never before, on both clocks; no registration left */
    clockid_t clocks[2] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
    for (int c = 0; c < 2; c++) {
        const char *name = c ? "clockwait(REALTIME)" : "timedwait";
        struct timespec d = test_deadline_on(clocks[c], 20000000);
        int r = c ? fastsync_latch_clockwait(&l, CLOCK_REALTIME, &d) : fastsync_latch_timedwait(&l, &d);
        int64_t late = test_clock_ns(clocks[c]) - test_ts_ns(d);
        is_int(r, ETIMEDOUT, "closed: %s 20 ms ahead: ETIMEDOUT", name);
        ok(late >= 0, "... not before its deadline (%.3f ms after it)", (double)late / 1e6);
        is_int(test_latch_word(&l), 1, "... the word back to count 1, no waiter");
    }
    is_int(fastsync_latch_destroy(&l), 0, "destroy 0");
}

/* A waiter held inside its wait (in its futex call): destroy EBUSY, add from 0 EINVAL, then
 * reopened once it left. kind: TEST_SLEEP_* or TEST_SLEEP_KINDS for arrive_and_wait(1). */
static void inside(int kind)
{
    char what[64];
    snprintf(what, sizeof what, "a %s inside", kind == TEST_SLEEP_KINDS ? "arrive_and_wait" : test_sleep_kind_name(kind));
    fastsync_latch_init(&l, kind == TEST_SLEEP_KINDS ? 2 : 1, 0);
    /* relaxed: before the waiter starts (its creation publishes them) */
    atomic_store_explicit(&at_wait, 0, memory_order_relaxed);
    atomic_store_explicit(&hold, true, memory_order_relaxed);
    struct waiter w = { .kind = kind, .ret = -1 };
    w.t = test_thread_start(waiter_main, &w);
    if (!ok(until_held(), "%s: counted in the word and inside its futex call", what)) test_dump_latch(what, &l);
    is_int(test_latch_count(&l), 1, "%s: count 1", what);
    ok(test_latch_slept(&l), "%s: ... and `slept` set (it went to sleep)", what);
    uint64_t t0 = test_now_ns();
    is_int(fastsync_latch_destroy(&l), EBUSY, "%s, count 1: destroy EBUSY", what);
    ok(test_now_ns() - t0 < 250000000u, "%s: ... at once (a blocked waiter: a misuse, not a wait)", what);
    unsigned long k0 = test_kernel_wakes();
    is_int(fastsync_latch_count_down(&l, 1), 0, "%s: count_down(1): 0", what);
    is_int(test_kernel_wakes() - k0, 1, "%s: ... one wake (`slept` was set)", what);
    is_int(test_latch_count(&l), 0, "%s: count 0", what);
    ok(!test_latch_slept(&l), "%s: ... `slept` cleared by the opening", what);
    is_int(test_latch_waiters(&l), 1, "%s: ... still inside (held in its futex call)", what);
    t0 = test_now_ns();
    is_int(fastsync_latch_destroy(&l), EBUSY, "%s, count 0: destroy waits for it, EBUSY at the limit", what);
    ok(test_now_ns() - t0 >= 300000000u, "%s: ... after 300 ms without progress, not before", what);
    uint64_t v = test_latch_word(&l);
    is_int(fastsync_latch_add(&l, 1), EINVAL, "%s, count 0: add(1) EINVAL (the waits are not over)", what);
    is_int(test_latch_word(&l), v, "%s: ... the word unchanged", what);
    atomic_store_explicit(&hold, false, memory_order_relaxed);
    is_int(fastsync_latch_destroy(&l), 0, "%s: destroy 0 once it let go (destroy waits until it left)", what);
    is_int(test_latch_waiters(&l), 0, "%s: ... it had left when destroy returned", what);
    test_thread_join(w.t);
    is_int(w.ret, 0, "%s: returned 0", what);
    is_int(test_latch_word(&l), 0, "%s: ... and left (the word 0)", what);
    is_int(fastsync_latch_add(&l, 1), 0, "%s: add(1) once it returned: 0 (reopened)", what);
    is_int(fastsync_latch_trywait(&l), EAGAIN, "%s: ... trywait EAGAIN", what);
    is_int(fastsync_latch_count_down(&l, 1), 0, "%s: count_down(1): 0", what);
    is_int(fastsync_latch_destroy(&l), 0, "%s: destroy 0", what);
}

/* arrive_and_wait without another thread: EINVAL above the count; the opening arrival. */
static void arrive(void)
{
    fastsync_latch_init(&l, 2, 0);
    unsigned long w0 = test_kernel_waits() + test_kernel_wakes();
    is_int(fastsync_latch_arrive_and_wait(&l, 3), EINVAL, "arrive_and_wait(3) on count 2: EINVAL");
    is_int(fastsync_latch_arrive_and_wait(&l, UINT_MAX), EINVAL, "arrive_and_wait(UINT_MAX): EINVAL");
    is_int(test_latch_word(&l), 2, "... the word unchanged");
    fastsync_latch_count_down(&l, 1);
    is_int(fastsync_latch_arrive_and_wait(&l, 1), 0, "arrive_and_wait(1) on count 1 opens it: 0");
    is_int(test_latch_word(&l), 0, "... the word 0: not counted in (it did not wait)");
    is_int(fastsync_latch_arrive_and_wait(&l, 0), 0, "arrive_and_wait(0) on an open latch: 0 (a wait)");
    is_int(fastsync_latch_arrive_and_wait(&l, 1), EINVAL, "arrive_and_wait(1) on count 0: EINVAL");
    is_int(test_latch_word(&l), 0, "... the word 0");
    is_int(test_kernel_waits() + test_kernel_wakes() - w0, 0, "none of it a futex call");
    is_int(fastsync_latch_destroy(&l), 0, "destroy 0");
}

int main(void)
{
    test_init();
    test_wait_override = wait_held;
    test_wake_override = fastsync__wake_sys;
    test_watchdog_start(dump, NULL);
    basics();
    counting();
    deadlines();
    arrive();
    for (int k = 0; k <= TEST_SLEEP_KINDS; k++) inside(k);
    test_watchdog_stop();
    return done_testing();
}
