/* SPDX-License-Identifier: MIT */
/* latch_wake_economy: the latch's futex economy (fastsync.h: "a count_down is one CAS, and
 * makes a FUTEX_WAKE only when it opens the latch with a waiter registered"). The futex calls on
 * the latch's word are counted through the harness's wait and wake overrides (by address);
 * the wait override also announces each sleeper just before its futex call, and the test
 * then waits until the word says that many waiters registered and /proc reads each asleep.
 *   nobody waits: count-downs one by one to 0, a count_down of the whole count, adds, waits
 *     and trywaits on the open latch, reopening by add: no futex call at all;
 *   1 and then 4 sleepers (wait, timedwait, clockwait on CLOCK_REALTIME, mixed): the
 *     count-downs and adds that leave the count above 0 make no wake; the count_down that
 *     opens the latch makes exactly one wake (of all: every sleeper returns 0, with no
 *     second wake and no futex wait after the sleepers were asleep), and the word is 0
 *     again once they have returned; then a count_down
 *     after a reopening add, with nobody waiting, makes none.
 * Private and shared.
 * Fails with: a count_down that wakes without a registered waiter, or on every count_down,
 * or once per sleeper (a wake of 1); one that does not wake the sleepers (caught at a 3 s
 * limit: the test wakes them itself and says so); a waiter that does not leave. */
#include "harness.h"

#define MAXS 4

static fastsync_latch_t l;
static _Atomic(unsigned long) word_waits, word_wakes; /* futex calls on l's word */
static _Atomic(int) word_wake_n;                      /* the n of the last wake on it */

struct sleeper {
    pthread_t t;
    int kind;
    int ret;
    _Atomic(int) tid;      /* relaxed: for /proc, stored before the sleeper's call */
    _Atomic(bool) at_wait; /* relaxed: reached its futex call (a poll: then /proc says more) */
    _Atomic(bool) back;    /* returned; relaxed: a poll, the join orders the results */
};
static struct sleeper s[MAXS];
static _Thread_local struct sleeper *me_sleeper;

static void dump(void *unused)
{
    (void)unused;
    test_dump_latch("latch", &l);
    /* relaxed: a diagnostic snapshot */
    diag("waits %lu, wakes %lu on its word", atomic_load_explicit(&word_waits, memory_order_relaxed),
         atomic_load_explicit(&word_wakes, memory_order_relaxed));
}

static int wait_counted(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    if (word == fastsync__latch_futex(&l)) {
        /* relaxed: a count, read after the threads are joined (or as a poll) */
        atomic_fetch_add_explicit(&word_waits, 1, memory_order_relaxed);
        /* relaxed: a poll, which only says when to look at /proc */
        if (me_sleeper) atomic_store_explicit(&me_sleeper->at_wait, true, memory_order_relaxed);
    }
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void wake_counted(void *word, int n, int shared)
{
    if (word == fastsync__latch_futex(&l)) {
        /* relaxed: counts, read by this thread after its own call or after the joins */
        atomic_fetch_add_explicit(&word_wakes, 1, memory_order_relaxed);
        atomic_store_explicit(&word_wake_n, n, memory_order_relaxed);
    }
    fastsync__wake_sys(word, n, shared);
}

/* relaxed: counts of calls this thread made, or that the sleepers made before announcing
 * themselves (read as totals once they have returned) */
static unsigned long waits(void) { return atomic_load_explicit(&word_waits, memory_order_relaxed); }
static unsigned long wakes(void) { return atomic_load_explicit(&word_wakes, memory_order_relaxed); }

static void *sleeper_main(void *p)
{
    struct sleeper *me = (struct sleeper *)p;
    me_sleeper = me;
    atomic_store_explicit(&me->tid, test_tid(), memory_order_relaxed);
    struct timespec d;
    switch (me->kind) {
    case TEST_SLEEP_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        me->ret = fastsync_latch_timedwait(&l, &d);
        break;
    case TEST_SLEEP_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        me->ret = fastsync_latch_clockwait(&l, CLOCK_REALTIME, &d);
        break;
    default:
        me->ret = fastsync_latch_wait(&l);
        break;
    }
    atomic_store_explicit(&me->back, true, memory_order_relaxed);
    return NULL;
}

/* Until sleepers 0..n-1 are registered, have each reached their futex call and read asleep. */
static bool until_asleep(int n)
{
    uint64_t end = test_limit_end(5000);
    for (int i = 0; i < n; i++) {
        /* relaxed: a poll; what the test concludes is ordered by the latch itself */
        while (!atomic_load_explicit(&s[i].at_wait, memory_order_relaxed) && test_box_open(end)) test_sleep_ns(100000);
        if (!atomic_load_explicit(&s[i].at_wait, memory_order_relaxed)) return false;
        if (!test_until_asleep(atomic_load_explicit(&s[i].tid, memory_order_relaxed), 20000000)) return false;
    }
    return test_latch_waiters(&l) == (uint32_t)n;
}

/* Until sleepers 0..n-1 have returned; false after 3 s (then they are woken by hand). */
static bool until_back(int n)
{
    uint64_t end = test_limit_end(3000);
    for (int i = 0; i < n; i++)
        while (!atomic_load_explicit(&s[i].back, memory_order_relaxed))
            if (!test_box_open(end)) {
                fastsync__wake_sys(fastsync__latch_futex(&l), INT_MAX, fastsync__latch_shared(test_latch_word(&l)));
                return false;
            } else {
                test_sleep_ns(100000);
            }
    return true;
}

static void nobody(const char *kind, int flags)
{
    fastsync_latch_init(&l, 4, flags);
    unsigned long c = waits() + wakes() + test_kernel_waits() + test_kernel_wakes();
    for (int i = 0; i < 4; i++) fastsync_latch_count_down(&l, 1);
    is_int(fastsync_latch_trywait(&l), 0, "%s, nobody waits: 4 count-downs of 1 open the latch", kind);
    fastsync_latch_wait(&l);
    fastsync_latch_add(&l, 3);
    fastsync_latch_add(&l, 2);
    fastsync_latch_count_down(&l, 5);
    struct timespec d = fastsync_deadline_in(1000000000);
    is_int(fastsync_latch_timedwait(&l, &d), 0, "%s, nobody waits: reopened by adds, opened by count_down(5)", kind);
    is_int(waits() + wakes() + test_kernel_waits() + test_kernel_wakes() - c, 0,
           "%s, nobody waits: no futex call at all", kind);
    is_int(fastsync_latch_destroy(&l), 0, "%s, nobody waits: destroy 0", kind);
}

static void sleepers(const char *kind, int flags, int n)
{
    fastsync_latch_init(&l, 3, flags);
    atomic_store_explicit(&word_waits, 0, memory_order_relaxed); /* relaxed: no thread yet */
    atomic_store_explicit(&word_wakes, 0, memory_order_relaxed);
    atomic_store_explicit(&word_wake_n, 0, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        s[i].kind = (int)(i % TEST_SLEEP_KINDS);
        s[i].ret = -1;
        atomic_store_explicit(&s[i].at_wait, false, memory_order_relaxed); /* relaxed: before the thread */
        atomic_store_explicit(&s[i].back, false, memory_order_relaxed);
        s[i].t = test_thread_start(sleeper_main, &s[i]);
    }
    if (!ok(until_asleep(n), "%s, %d asleep: every sleeper registered and asleep", kind, n))
        test_dump_latch("latch", &l);
    /* Every sleeper is asleep in the kernel now: from here on, a futex wait is one a sleeper
     * made again, after it was woken. (Before, a sleeper may have made more than one: its
     * futex call says EAGAIN when another sleeper's registration changed the word in
     * between, and it sleeps again on the new value.) */
    unsigned long waits_asleep = waits();
    fastsync_latch_count_down(&l, 1);
    fastsync_latch_add(&l, 2);
    fastsync_latch_count_down(&l, 3);
    is_int(test_latch_count(&l), 1, "%s, %d asleep: count-downs and an add leave the count at 1", kind, n);
    is_int(wakes(), 0, "%s, %d asleep: ... with no wake", kind, n);
    is_int(fastsync_latch_count_down(&l, 1), 0, "%s, %d asleep: the count_down that opens the latch", kind, n);
    is_int(wakes(), 1, "%s, %d asleep: ... made exactly one wake", kind, n);
    is_int(atomic_load_explicit(&word_wake_n, memory_order_relaxed), INT_MAX, "%s, %d asleep: ... of all", kind, n);
    ok(until_back(n), "%s, %d asleep: every sleeper returned", kind, n);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        test_thread_join(s[i].t);
        bad += s[i].ret != 0;
    }
    is_int(bad, 0, "%s, %d asleep: ... each with 0", kind, n);
    is_int(wakes(), 1, "%s, %d asleep: one wake in all", kind, n);
    ok(waits_asleep >= (unsigned long)n, "%s, %d asleep: a futex wait each (%lu)", kind, n, waits_asleep);
    is_int(waits() - waits_asleep, 0, "%s, %d asleep: none after they were asleep: the wake ended every sleep",
           kind, n);
    is_int(test_latch_word(&l), flags ? FASTSYNC__LATCH_SHARED : 0, "%s, %d asleep: every waiter left (count 0, no waiter)", kind, n);
    fastsync_latch_add(&l, 1);
    fastsync_latch_count_down(&l, 1);
    is_int(wakes(), 1, "%s, %d asleep: reopened and opened again with nobody waiting: no wake", kind, n);
    is_int(fastsync_latch_destroy(&l), 0, "%s, %d asleep: destroy 0", kind, n);
}

int main(void)
{
    test_init();
    test_wait_override = wait_counted;
    test_wake_override = wake_counted;
    test_watchdog_start(dump, NULL);
    const char *kinds[2] = { "private", "shared" };
    for (int k = 0; k < 1 + FASTSYNC_HAS_SHARED; k++) {
        int flags = k ? TEST_SHARED : 0;
        nobody(kinds[k], flags);
        sleepers(kinds[k], flags, 1);
        sleepers(kinds[k], flags, MAXS);
    }
    test_watchdog_stop();
    return done_testing();
}
