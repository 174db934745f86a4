/* SPDX-License-Identifier: MIT */
/* latch_free: fastsync.h promises that the count_down that opens a latch uses only its
 * address after its RMW (the wake), and that a waiter leaves before its wait returns, so
 * that a thread that saw the latch open may free it at once, and the latch may be freed
 * once every wait on it has returned. Each round's latch lives at the very end of its own
 * mmap'd page (the harness's test_page_alloc; under AddressSanitizer or ThreadSanitizer a
 * malloc'd block, a touch after free being their report). 1 or 3 waiters (wait, timedwait,
 * clockwait on CLOCK_REALTIME, by turns) register and reach their futex wait; this thread's
 * count_down opens the latch and reaches its wake, which the test's wake override holds
 * until the last waiter to return has destroyed the latch (0: every waiter left before it
 * returned) and unmapped its page. The waiters' futex wait is the override's too: it
 * returns once the word has changed (as a futex wait may), so they need no wake to go on.
 * Private and shared (a MAP_SHARED page), count 1 and count 3 (two count-downs that do not
 * open it first), 4 rounds each. Every round's opening count_down reached its wake exactly
 * once, and every wait returned 0.
 * Fails with: a count_down that touches the word after its wake (a fresh load, a store): a
 * SIGSEGV, or the sanitizer's report; one that makes no wake although waiters were
 * registered (the count); a waiter that has not left when its wait returns (destroy
 * EBUSY). A touch between the CAS and the wake comes before the unmap in time: only
 * ThreadSanitizer sees it here (a race with the free). Not on Windows (mmap). */
#include "harness.h"

#include <signal.h>

#define ROUNDS 4
#define MAXW 3

static _Atomic(fastsync_latch_t *) cur; /* the round's latch; relaxed: the overrides compare
                                         * it with a word's address; the waiters get it by
                                         * thread creation */
static _Atomic(bool) freed;             /* unmapped: release, pairs with the override's acquire */
static _Atomic(int) wakes_held;         /* wakes of cur held; relaxed: read after the joins */
static _Atomic(int) at_wait;            /* waiters that reached the override; relaxed: a poll */
static _Atomic(int) refs;               /* waiters yet to return: the last one frees */
static int destroy_ret;                 /* the freeing waiter's destroy; read after the joins */

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a diagnostic snapshot (the latch itself may be gone) */
    diag("freed %d, wakes held %d, at wait %d, refs %d", (int)atomic_load_explicit(&freed, memory_order_relaxed),
         atomic_load_explicit(&wakes_held, memory_order_relaxed), atomic_load_explicit(&at_wait, memory_order_relaxed),
         atomic_load_explicit(&refs, memory_order_relaxed));
}

#if !TEST_PAGE_MALLOC
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    static const char msg[] = "Bail out! SIGSEGV: a latch touched after its last waiter unmapped it?\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

/* The waiters' wait on the latch: until the word differs from `expected`; every other wait
 * goes to the backend. */
static int wait_poll(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    fastsync_latch_t *l = atomic_load_explicit(&cur, memory_order_relaxed);
    if (word != fastsync__latch_futex(l)) return fastsync__wait_sys(word, expected, shared, clock, abstime);
    atomic_fetch_add_explicit(&at_wait, 1, memory_order_relaxed);
    while (test_latch_low(l) == expected) sched_yield();
    return 0;
}

/* The opener's wake: held until the last waiter has unmapped the latch; nobody sleeps in
 * the kernel on it (the waiters' wait is the poll above), so no wake is made. */
static void wake_held(void *word, int n, int shared)
{
    if (word != fastsync__latch_futex(atomic_load_explicit(&cur, memory_order_relaxed))) {
        fastsync__wake_sys(word, n, shared);
        return;
    }
    atomic_fetch_add_explicit(&wakes_held, 1, memory_order_relaxed);
    uint64_t end = test_limit_end(5000);
    /* acquire: pairs with the freeing waiter's release store, after its unmap */
    while (!atomic_load_explicit(&freed, memory_order_acquire))
        if (!test_box_open(end)) bail("the waiters never unmapped the latch");
        else sched_yield();
}

struct waiter {
    pthread_t t;
    fastsync_latch_t *l;
    int kind;
    int ret;
};

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    fastsync_latch_t *l = w->l;
    struct timespec d;
    switch (w->kind) {
    case TEST_SLEEP_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        w->ret = fastsync_latch_timedwait(l, &d);
        break;
    case TEST_SLEEP_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        w->ret = fastsync_latch_clockwait(l, CLOCK_REALTIME, &d);
        break;
    default:
        w->ret = fastsync_latch_wait(l);
        break;
    }
    /* acq_rel: the last waiter to get here frees the latch after the others' use of it
     * (their waits): release by each decrement, acquire by the last one's. */
    if (atomic_fetch_sub_explicit(&refs, 1, memory_order_acq_rel) == 1) {
        destroy_ret = fastsync_latch_destroy(l);
        test_page_free(l); /* at once: the opener may still be inside its count_down's wake */
        atomic_store_explicit(&freed, true, memory_order_release);
    }
    return NULL;
}

static void rounds(int nw, unsigned count, bool shared)
{
    char what[96];
    snprintf(what, sizeof what, "%d waiter(s), count %u, %s", nw, count, shared ? "shared" : "private");
    int held = 0, bad = 0, destroys = 0;
    for (int r = 0; r < ROUNDS; r++) {
        fastsync_latch_t *l = (fastsync_latch_t *)test_page_alloc(sizeof(fastsync_latch_t), shared);
        fastsync_latch_init(l, count, shared ? TEST_SHARED : 0);
        /* relaxed: no waiter runs yet; their creation publishes these */
        atomic_store_explicit(&cur, l, memory_order_relaxed);
        atomic_store_explicit(&freed, false, memory_order_relaxed);
        atomic_store_explicit(&wakes_held, 0, memory_order_relaxed);
        atomic_store_explicit(&at_wait, 0, memory_order_relaxed);
        atomic_store_explicit(&refs, nw, memory_order_relaxed);
        destroy_ret = -1;
        struct waiter w[MAXW];
        for (int i = 0; i < nw; i++) {
            w[i] = (struct waiter){ .l = l, .kind = (r + i) % TEST_SLEEP_KINDS, .ret = -1 };
            w[i].t = test_thread_start(waiter_main, &w[i]);
        }
        uint64_t end = test_limit_end(5000);
        while ((test_latch_waiters(l) != (uint32_t)nw || atomic_load_explicit(&at_wait, memory_order_relaxed) < nw) &&
               test_box_open(end))
            sched_yield();
        if (test_latch_waiters(l) != (uint32_t)nw) bail("%s: the waiters never registered", what);
        for (unsigned c = 1; c < count; c++) fastsync_latch_count_down(l, 1); /* no wake: not open */
        fastsync_latch_count_down(l, 1); /* l may be unmapped from its wake on */
        for (int i = 0; i < nw; i++) {
            test_thread_join(w[i].t);
            bad += w[i].ret != 0;
        }
        held += atomic_load_explicit(&wakes_held, memory_order_relaxed) == 1; /* relaxed: joined */
        destroys += destroy_ret == 0;
    }
    is_int(held, ROUNDS, "%s: each opening count_down reached its wake once, held until the latch was unmapped", what);
    is_int(bad, 0, "%s: every wait returned 0", what);
    is_int(destroys, ROUNDS, "%s: the last waiter's destroy said 0 (every waiter had left)", what);
}

int main(void)
{
    test_init();
#if !TEST_PAGE_MALLOC
    test_page_on_fault(on_segv);
#endif
    diag("latches live in %s", TEST_PAGE_WHERE);
    test_wait_override = wait_poll;
    test_wake_override = wake_held;
    test_watchdog_start(dump, NULL);
    for (int s = 0; s < 1 + FASTSYNC_HAS_SHARED; s++)
        for (int n = 1; n <= MAXW; n += 2)
            for (unsigned c = 1; c <= 3; c += 2) rounds(n, c, s);
    test_watchdog_stop();
    return done_testing();
}
