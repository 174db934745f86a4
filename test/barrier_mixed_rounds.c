/* SPDX-License-Identifier: MIT */
/* barrier_mixed_rounds: fastsync.h promises that any threads may take part in any round
 * (POSIX asks no more than count threads per round) and that destroy, called as soon as any
 * thread's last wait has returned, waits until every thread released by any round has
 * finished with the barrier. Count 2; round r is A and B, round r+1 is B and C:
 *   A arrives first and sleeps (the wait override, below the injected faults, says it
 *     reached its futex wait); B arrives and ends round r (SERIAL). A is then held, in one of
 *     two places: asleep (inside the wait override, before its futex wait: off the CPU
 *     between its `slept` CAS and its sleep), or woken (in the harness's hook after its
 *     futex wait, test_after_futex_wait, once the round has moved); either way released by
 *     round r and not yet counted out.
 *   B arrives in round r+1 and sleeps (the override says so); this thread, C, ends it
 *     (SERIAL) and B returns 0. A is still to count itself out: leaving 1.
 *   Both B's and C's last waits have returned: a destroy, called now in another thread, is
 *     still inside the call 20 ms later; A let go, its wait returns 0 and destroy 0, with
 *     leaving 0, after which the destroying thread unmaps the page at once.
 * Private and shared, each way of holding A. The barrier lives at the very end of its own
 * mmap'd page (the harness's page allocator; under AddressSanitizer or ThreadSanitizer a
 * malloc'd block): A touching it after the destroy said 0 is a SIGSEGV (or their report).
 * Fails with: a count of leaving threads that a round's end sets rather than adjusts (the
 * first design stored count - 1: round r+1's end dropped A, leaving 0 after B and C,
 * destroy back at once with 0, then A touched the unmapped page: a SIGSEGV or a
 * use-after-free report), or an end that takes out more than the serial thread's own
 * place; a destroy that does not
 * wait for a thread released by an earlier round (the same); a round number that comes back
 * to A's while it is held (A sleeps on: the watchdog). */
#include "harness.h"

static fastsync_barrier_t *bar;
static uint32_t round0;            /* A's round, set before A starts */
static bool hold_asleep;           /* where A is held; set before A starts */
static _Atomic(bool) a_in_wait;    /* A reached its futex wait (seq_cst: test flags) */
static _Atomic(bool) a_held;       /* A is held, released by round r */
static _Atomic(bool) a_let_go;     /* A may go on */
static _Atomic(bool) b_in_wait;    /* B reached its futex wait in round r+1 */
static _Atomic(int) destroy_ret;   /* the destroyer's result; -1 while inside (release: pairs
                                    * with the acquire poll) */
static uint32_t leaving_at_destroy; /* the probe in the destroyer after its destroy said 0 */
static _Thread_local bool is_a, is_b;

static void dump(void *unused)
{
    (void)unused;
    diag("A in its wait %d, held %d, let go %d; B in its second wait %d; destroy %d", atomic_load(&a_in_wait),
         atomic_load(&a_held), atomic_load(&a_let_go), atomic_load(&b_in_wait),
         atomic_load_explicit(&destroy_ret, memory_order_relaxed)); /* relaxed: a snapshot */
}

#if !TEST_PAGE_MALLOC
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    static const char msg[] = "Bail out! SIGSEGV: the barrier touched after destroy said 0 and its page was unmapped\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

static void hold_a(void)
{
    atomic_store(&a_held, true);
    while (!atomic_load(&a_let_go)) test_sleep_ns(100000);
}

/* The wait layer below the injected faults: says that A or B reached a futex wait of its own
 * (B's first wait ends round r: only its wait in round r+1 can sleep); held asleep, A stays
 * here, before its futex wait, until let go (the word has moved by then: the wait returns at
 * once). */
static int wait_flagged(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    if (is_a) {
        atomic_store(&a_in_wait, true);
        if (hold_asleep && !atomic_load(&a_held)) hold_a();
    }
    if (is_b) atomic_store(&b_in_wait, true);
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void wake_plain(void *word, int n, int shared) { fastsync__wake_sys(word, n, shared); }

/* Held woken: A back from its futex wait once round r has ended (before that, a spurious
 * return: it sleeps again). */
static void after_wait(void)
{
    if (!is_a || hold_asleep || atomic_load(&a_held)) return;
    /* relaxed: a test's probe; B's end of round r moved it */
    if ((test_barrier_word(bar) & FASTSYNC__BAR_ROUND) == round0) return;
    hold_a();
}

static void *a_main(void *p)
{
    (void)p;
    is_a = true;
    return (void *)(intptr_t)fastsync_barrier_wait(bar);
}

static int b_ret[2];

static void *b_main(void *p)
{
    (void)p;
    is_b = true;
    b_ret[0] = fastsync_barrier_wait(bar); /* round r: A arrived */
    b_ret[1] = fastsync_barrier_wait(bar); /* round r+1 */
    return NULL;
}

static void *destroyer_main(void *p)
{
    (void)p;
    int r = fastsync_barrier_destroy(bar);
    if (r == 0) {
        leaving_at_destroy = test_barrier_leaving(bar);
        test_page_free(bar); /* A may still be inside its wait */
    }
    atomic_store_explicit(&destroy_ret, r, memory_order_release);
    return NULL;
}

static int poll_destroy(void) { return atomic_load_explicit(&destroy_ret, memory_order_acquire); }

static bool wait_for(_Atomic(bool) *flag)
{
    uint64_t end = test_limit_end(5000);
    while (!atomic_load(flag) && test_box_open(end)) test_sleep_ns(100000);
    return atomic_load(flag);
}

static void mixed(bool asleep, bool shared)
{
    char what[96];
    snprintf(what, sizeof what, "%s, A held %s", shared ? "shared" : "private",
             asleep ? "asleep" : "woken, before it counts itself out");
    bar = (fastsync_barrier_t *)test_page_alloc(sizeof(fastsync_barrier_t), shared);
    fastsync_barrier_init(bar, 2, shared ? TEST_SHARED : 0);
    round0 = test_barrier_word(bar) & FASTSYNC__BAR_ROUND;
    hold_asleep = asleep;
    atomic_store(&a_in_wait, false);
    atomic_store(&a_held, false);
    atomic_store(&a_let_go, false);
    atomic_store(&b_in_wait, false);
    atomic_store_explicit(&destroy_ret, -1, memory_order_relaxed); /* relaxed: before the thread */
    leaving_at_destroy = 99;

    pthread_t a = test_thread_start(a_main, NULL);
    ok(wait_for(&a_in_wait), "%s: round r: A arrived and went to sleep", what);
    pthread_t b = test_thread_start(b_main, NULL);
    ok(wait_for(&a_held), "%s: A held", what);
    ok(wait_for(&b_in_wait), "%s: B ended round r, arrived in round r+1 and went to sleep", what);
    is_int(fastsync_barrier_wait(bar), FASTSYNC_BARRIER_SERIAL, "%s: ... C (this thread) ends it: SERIAL", what);
    test_thread_join(b);
    is_int(b_ret[0], FASTSYNC_BARRIER_SERIAL, "%s: B's wait in round r SERIAL", what);
    is_int(b_ret[1], 0, "%s: B's wait in round r+1 0", what);
    if (!is_int(test_barrier_leaving(bar), 1, "%s: B's and C's waits returned: leaving 1 (A)", what))
        test_dump_barrier("barrier", bar);

    pthread_t d = test_thread_start(destroyer_main, NULL);
    test_sleep_ns(20000000);
    is_int(poll_destroy(), -1, "%s: destroy is still inside the call 20 ms later (A to count itself out)", what);
    atomic_store(&a_let_go, true);
    is_int((int)(intptr_t)test_thread_join(a), 0, "%s: A let go: its wait of round r returned 0", what);
    test_thread_join(d);
    is_int(poll_destroy(), 0, "%s: ... destroy 0 (the page unmapped at once)", what);
    is_int(leaving_at_destroy, 0, "%s: ... leaving 0 when it returned", what);
}

int main(void)
{
    test_init();
#if !TEST_PAGE_MALLOC
    test_page_on_fault(on_segv);
#endif
    diag("barriers live in %s", TEST_PAGE_WHERE);
    test_watchdog_start(dump, NULL);
    test_wait_override = wait_flagged;
    test_wake_override = wake_plain;
    test_after_futex_wait = after_wait;
    for (int s = 0; s < 1 + FASTSYNC_HAS_SHARED; s++) {
        mixed(true, s);
        mixed(false, s);
    }
    test_after_futex_wait = NULL;
    test_wait_override = NULL;
    test_wake_override = NULL;
    test_watchdog_stop();
    return done_testing();
}
