/* SPDX-License-Identifier: MIT */
/* latch_wait_any: a latch among wait_any's entries (fastsync.h: "the count 0; reported, not
 * changed"; a wait counts itself among each latch's waiters from its first look, and leaves
 * each one it entered before it returns, the winner too). Over [latch, semaphore] and
 * [semaphore, latch]:
 *   both ready: the lowest index wins; the latch reported is not consumed (a second
 *     wait_any reports it again, the semaphore's token untouched); the semaphore winning
 *     takes its token and no other;
 *   the latch closed, a token: the semaphore wins, its token taken; the word of the latch
 *     unchanged (no waiter);
 *   trywait_any EAGAIN and a timedwait_any that times out (10 ms, not before its deadline)
 *     with the latch closed and no token: every registration gone afterwards;
 *   a sleeper (wait_any, timedwait_any an hour ahead, clockwait_any on CLOCK_REALTIME; each
 *     in both orders, each order woken both ways), registered on both (the probes say 1 waiter on each) and asleep: the count_down that
 *     opens the latch wakes it and it reports the latch; or a post wakes it and it takes the
 *     token (the latch still closed). Each time the latch's and the semaphore's waiter
 *     counts are back to 0, and the token count is exact.
 *   an add from 0 while a wait_any is inside the open latch (over [latch, latch2], both
 *     closed at the first look): the harness's CAS hook (TEST_CAS_HOOK), just before the
 *     wait's CAS on the latch (the one that sets `slept` before it sleeps), finds the wait
 *     counted among the latch's waiters (it entered at its first look), opens the latch
 *     and tries an add of 1 (a misuse by the rules of a wait group: the wait is not over):
 *     EINVAL, the count stays 0, and the wait returns at once, without sleeping, reporting
 *     the latch; neither latch changed by it, no waiter and no `slept` left on either.
 *     (Skipped where the header's atomics are not <stdatomic.h>'s, OS/2 without atomics:
 *     no CAS hook.)
 * Run as is and with FASTSYNC_TEST_WAITV=fallback (test/meson.build).
 * Fails with: a latch consumed or changed by a wait_any (a second one blocks: the watchdog;
 * the word differs); a wait_any that leaves its registration on the latch (after winning
 * on it, on the semaphore, or after a timeout: the probe, destroy EBUSY); a count_down that
 * does not wake a wait_any sleeper registered on the latch (the watchdog); a wait_any that
 * does not count itself in the latch from its first look (the hook reads 0 waiters; the add
 * succeeds and closes the latch again, and the wait goes to sleep, where the test opens
 * latch2 to bring it back, and it reports latch2). */
#define TEST_CAS_HOOK 1
#include "harness.h"

static fastsync_latch_t l, l2;
static fastsync_sem_t s;

static void dump(void *unused)
{
    (void)unused;
    test_dump_latch("latch", &l);
    test_dump_latch("latch2", &l2);
    test_dump_sem("sem", &s);
}

/* entries in the order asked: latch_first or the semaphore first */
static void entries(fastsync_wait_entry_t e[2], bool latch_first)
{
    e[latch_first ? 0 : 1] = fastsync_wait_latch(&l);
    e[latch_first ? 1 : 0] = fastsync_wait_sem(&s);
}

static void clean(const char *what)
{
    is_int(test_latch_waiters(&l), 0, "%s: no waiter left on the latch", what);
    is_int(test_sem_waiters(&s), 0, "%s: ... nor on the semaphore", what);
    is_int(fastsync_latch_destroy(&l), 0, "%s: latch destroy 0", what);
}

static void ready(bool latch_first)
{
    const char *order = latch_first ? "[latch, sem]" : "[sem, latch]";
    fastsync_wait_entry_t e[2];
    entries(e, latch_first);
    unsigned idx = 99;
    char what[96];

    fastsync_latch_init(&l, 0, 0);
    fastsync_sem_init(&s, 1, 0);
    snprintf(what, sizeof what, "%s, both ready", order);
    is_int(fastsync_wait_any(e, 2, &idx), 0, "%s: wait_any 0", what);
    is_int(idx, 0, "%s: ... index 0 (the lowest) wins", what);
    if (latch_first) {
        is_int(fastsync_sem_getvalue(&s), 1, "%s: the latch reported, the token untouched", what);
        idx = 99;
        is_int(fastsync_wait_any(e, 2, &idx), 0, "%s: a second wait_any 0", what);
        is_int(idx, 0, "%s: ... reports the latch again (not consumed)", what);
        is_int(fastsync_trywait_any(e, 2, &idx), 0, "%s: trywait_any too", what);
        is_int(idx, 0, "%s: ... the latch", what);
        is_int(fastsync_sem_getvalue(&s), 1, "%s: the token still there", what);
    } else {
        is_int(fastsync_sem_getvalue(&s), 0, "%s: the token taken", what);
        idx = 99;
        is_int(fastsync_wait_any(e, 2, &idx), 0, "%s: a second wait_any 0", what);
        is_int(idx, 1, "%s: ... reports the latch (no token left)", what);
    }
    is_int(test_latch_word(&l), 0, "%s: the latch's word unchanged (count 0, no waiter)", what);
    clean(what);

    fastsync_latch_init(&l, 2, 0);
    fastsync_sem_init(&s, 1, 0);
    snprintf(what, sizeof what, "%s, latch closed, a token", order);
    idx = 99;
    is_int(fastsync_wait_any(e, 2, &idx), 0, "%s: wait_any 0", what);
    is_int(idx, latch_first ? 1 : 0, "%s: ... the semaphore wins", what);
    is_int(fastsync_sem_getvalue(&s), 0, "%s: ... its token taken", what);
    is_int(test_latch_word(&l), 2, "%s: the latch's word unchanged (count 2, no waiter)", what);
    is_int(fastsync_trywait_any(e, 2, &idx), EAGAIN, "%s: then trywait_any EAGAIN", what);
    struct timespec d = fastsync_deadline_in(10000000);
    is_int(fastsync_timedwait_any(e, 2, &idx, &d), ETIMEDOUT, "%s: timedwait_any 10 ms: ETIMEDOUT", what);
    ok(test_clock_ns(CLOCK_MONOTONIC) >= test_ts_ns(d), "%s: ... not before its deadline", what);
    is_int(test_latch_word(&l), 2, "%s: ... the latch's word unchanged", what);
    fastsync_latch_count_down(&l, 2);
    clean(what);
}

struct sleeper {
    pthread_t t;
    fastsync_wait_entry_t e[2];
    int kind;
    int ret;
    unsigned idx;
};

static void *sleeper_main(void *p)
{
    struct sleeper *w = (struct sleeper *)p;
    struct timespec d;
    switch (w->kind) {
    case TEST_SLEEP_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        w->ret = fastsync_timedwait_any(w->e, 2, &w->idx, &d);
        break;
    case TEST_SLEEP_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        w->ret = fastsync_clockwait_any(w->e, 2, &w->idx, CLOCK_REALTIME, &d);
        break;
    default:
        w->ret = fastsync_wait_any(w->e, 2, &w->idx);
        break;
    }
    return NULL;
}

/* A sleeper over both, then the latch opened (by_latch) or a token posted. */
static void sleeper(bool latch_first, int kind, bool by_latch)
{
    char what[128];
    snprintf(what, sizeof what, "%s, %s asleep, %s", latch_first ? "[latch, sem]" : "[sem, latch]",
             kind == TEST_SLEEP_TIMED ? "timedwait_any" : kind == TEST_SLEEP_REALTIME ? "clockwait_any(REALTIME)" : "wait_any",
             by_latch ? "the latch opens" : "a post");
    fastsync_latch_init(&l, 1, 0);
    fastsync_sem_init(&s, 0, 0);
    struct sleeper w = { .kind = kind, .ret = -1, .idx = 99 };
    entries(w.e, latch_first);
    unsigned long waits0 = test_kernel_waits();
    w.t = test_thread_start(sleeper_main, &w);
    uint64_t end = test_limit_end(5000);
    while ((test_latch_waiters(&l) != 1 || test_sem_waiters(&s) != 1 || test_kernel_waits() == waits0) &&
           test_box_open(end))
        test_sleep_ns(100000);
    if (!ok(test_latch_waiters(&l) == 1 && test_sem_waiters(&s) == 1, "%s: registered on the latch and the semaphore", what))
        dump(NULL);
    test_sleep_ns(1000000); /* in the kernel by now, most likely; either way is a test */
    if (by_latch)
        fastsync_latch_count_down(&l, 1);
    else
        fastsync_sem_post(&s);
    test_thread_join(w.t);
    is_int(w.ret, 0, "%s: it returned 0", what);
    is_int(w.idx, by_latch == latch_first ? 0 : 1, "%s: ... reporting the %s", what, by_latch ? "latch" : "semaphore");
    is_int(fastsync_sem_getvalue(&s), 0, "%s: the semaphore's value 0", what);
    is_int(test_latch_count(&l), by_latch ? 0 : 1, "%s: the latch's count %d", what, by_latch ? 0 : 1);
    if (!by_latch) fastsync_latch_count_down(&l, 1);
    clean(what);
}

/* ---- an add from 0 while a wait_any is inside the open latch ---- */

static _Atomic(int) hook_calls;   /* CASes seen by the hook (seq_cst: test counters and flags) */
static _Atomic(int) reopen_step;  /* 1: open the latch, then add, at the wait's CAS on it; 2: done */
static _Atomic(bool) reopen_done; /* the wait returned (its results written before) */
static int reopen_add_ret = -1;   /* the add's result: written in the waiter's hook before
                                   * step 2, read after the join */
static uint32_t reopen_waiters;   /* the latch's waiters at the hook (the same) */
static _Thread_local bool is_reopen_waiter;

static void reopen_hook(const volatile void *word)
{
    atomic_fetch_add(&hook_calls, 1);
    if (!is_reopen_waiter || word != (const volatile void *)&l.state || atomic_load(&reopen_step) != 1) return;
    reopen_waiters = test_latch_waiters(&l);
    fastsync_latch_count_down(&l, 1); /* the wait's CAS fails: it finds the count 0 */
    reopen_add_ret = fastsync_latch_add(&l, 1);
    atomic_store(&reopen_step, 2);
}

static void *reopen_main(void *p)
{
    struct sleeper *w = (struct sleeper *)p;
    is_reopen_waiter = true;
    w->ret = fastsync_wait_any(w->e, 2, &w->idx);
    atomic_store(&reopen_done, true);
    return NULL;
}

static void reopened(void)
{
    const char *what = "[latch, latch2], the latch opened and an add tried as the wait is about to sleep";
    test_before_cas = reopen_hook;
    atomic_store(&hook_calls, 0);
    fastsync_latch_init(&l, 1, 0);
    fastsync_latch_count_down(&l, 1); /* a CAS */
    if (atomic_load(&hook_calls) == 0) {
        test_before_cas = NULL;
        skip("the header's atomics are not <stdatomic.h>'s here (no CAS hook)", "%s", what);
        return;
    }
    fastsync_latch_init(&l, 1, 0);
    fastsync_latch_init(&l2, 1, 0);
    atomic_store(&reopen_done, false);
    atomic_store(&reopen_step, 1);
    struct sleeper w = { .ret = -1, .idx = 99, .e = { fastsync_wait_latch(&l), fastsync_wait_latch(&l2) } };
    unsigned long waits0 = test_kernel_waits();
    w.t = test_thread_start(reopen_main, &w);
    uint64_t end = test_limit_end(5000);
    while (!atomic_load(&reopen_done) && test_kernel_waits() == waits0 && test_box_open(end)) test_sleep_ns(100000);
    bool returned = atomic_load(&reopen_done);
    if (!ok(returned && test_kernel_waits() == waits0, "%s: the wait returned without sleeping", what)) {
        dump(NULL);
        fastsync_latch_count_down(&l2, 1); /* bring it back */
    }
    test_thread_join(w.t);
    test_before_cas = NULL;
    is_int(atomic_load(&reopen_step), 2, "%s: the hook ran at the wait's CAS on the latch", what);
    is_int(reopen_waiters, 1, "%s: ... the wait counted among the latch's waiters there (since its first look)", what);
    is_int(reopen_add_ret, EINVAL, "%s: the add from 0 EINVAL (a wait is still inside: Go's rule)", what);
    is_int(w.ret, 0, "%s: wait_any 0", what);
    is_int(w.idx, 0, "%s: ... reporting the latch", what);
    is_int(test_latch_word(&l), 0, "%s: the latch's word: count 0, no waiter, no `slept`", what);
    is_int(test_latch_word(&l2), returned ? 1u : 0u, "%s: latch2's word: %s, no waiter, no `slept`", what,
           returned ? "count 1" : "opened to bring it back, count 0");
    if (returned) fastsync_latch_count_down(&l2, 1);
    is_int(fastsync_latch_destroy(&l), 0, "%s: latch destroy 0", what);
    is_int(fastsync_latch_destroy(&l2), 0, "%s: latch2 destroy 0", what);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    for (int first = 1; first >= 0; first--) {
        ready(first);
        /* each kind of wait in each order, each way of waking in each order (not every
         * combination: over the fallback's slices each case costs up to a 10 ms slice) */
        for (int k = 0; k < TEST_SLEEP_KINDS; k++) sleeper(first, k, (k + first) % 2 == 0);
    }
    reopened();
    test_watchdog_stop();
    return done_testing();
}
