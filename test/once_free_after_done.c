/* SPDX-License-Identifier: MIT */
/* once_free_after_done: fastsync.h promises that commit and abort touch the once only up to
 * their CAS, then at most make a wake on its address, so that a caller that returned from
 * begin may unmap it at once. Each round's once lives at the very end of its own mmap'd page
 * (the harness's test_page_alloc; under AddressSanitizer or ThreadSanitizer a malloc'd block,
 * a touch after free being their report). This thread initialises; the caller C calls begin
 * and makes its way to the sleep (the word says WAITED); then this thread's commit (or
 * abort) reaches its wake, which the test's wake override holds until C has unmapped the
 * page. C's futex wait is the override's too: it returns once the word has changed (as a
 * futex wait may), so C needs no wake to go on.
 *   commit: C's begin says 0, C unmaps the page; then the commit's wake goes on.
 *   abort:  C's begin says 1, C commits (no wake: nobody sleeps) and unmaps the page; then
 *           the abort's wake goes on.
 * C calls begin, or fastsync_once (which returns 0, or runs C's own fn after the abort);
 * this thread commits by begin/commit, or by fastsync_once (its fn starts C and returns once
 * C sleeps); private and shared (a MAP_SHARED page), 8 rounds each. Every round's commit or
 * abort reached its wake exactly once.
 * Fails with a commit or abort that touches the word after its wake (a fresh load, a store):
 * a SIGSEGV, or the sanitizer's report; or with one that makes no wake although the word
 * said WAITED (the count). A touch between the CAS and the wake (the wake's shared bit read
 * from the word) comes before C's unmap in time: only ThreadSanitizer sees it here (a race
 * with the free); once_destroy_genmc sees it in every execution. */
#include "harness.h"

#define ROUNDS 8

static _Atomic(fastsync_once_t *) cur; /* the round's once; relaxed: the overrides compare it
                                        * with a word's address; C gets it by thread creation */
static _Atomic(bool) freed;            /* C unmapped it: release, pairs with the override's acquire */
static _Atomic(int) wakes_held;        /* wakes of cur held; relaxed: read after the join */
static bool c_once;                    /* C calls fastsync_once (else begin); set before C starts */
static int c_ret, c_ran;               /* C's begin result, its fn's calls: read after the join */

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a diagnostic snapshot */
    diag("freed %d, wakes held %d", (int)atomic_load_explicit(&freed, memory_order_relaxed),
         atomic_load_explicit(&wakes_held, memory_order_relaxed));
}

/* C's wait on the once: until the word differs from `expected` (a futex wait may return then
 * without a wake); every other wait goes to the backend. */
static int wait_poll(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    fastsync_once_t *o = atomic_load_explicit(&cur, memory_order_relaxed);
    if (word != (void *)o) return fastsync__wait_sys(word, expected, shared, clock, abstime);
    while (test_once_word(o) == expected) sched_yield();
    return 0;
}

/* The initialiser's wake on the once: held until C has unmapped it; nobody sleeps in the
 * kernel on it (C's wait is the poll above), so no wake is made. */
static void wake_held(void *word, int n, int shared)
{
    if (word != (void *)atomic_load_explicit(&cur, memory_order_relaxed)) {
        fastsync__wake_sys(word, n, shared);
        return;
    }
    atomic_fetch_add_explicit(&wakes_held, 1, memory_order_relaxed);
    uint64_t end = test_limit_end(5000);
    /* acquire: pairs with C's release store, after its unmap */
    while (!atomic_load_explicit(&freed, memory_order_acquire))
        if (!test_box_open(end)) bail("C never unmapped the once");
        else sched_yield();
}

static void c_fn(void *unused)
{
    (void)unused;
    c_ran++;
}

static void *c_main(void *p)
{
    fastsync_once_t *o = (fastsync_once_t *)p;
    if (c_once) {
        c_ret = fastsync_once(o, c_fn, NULL);
    } else {
        c_ret = fastsync_once_begin(o);
        if (c_ret == 1) fastsync_once_commit(o);
    }
    test_page_free(o); /* the initialiser may still be inside its commit's (abort's) wake */
    atomic_store_explicit(&freed, true, memory_order_release);
    return NULL;
}

static pthread_t c_thread;

/* This thread's fn (the commit by fastsync_once): starts C, returns once C has made its way
 * to the sleep. */
static void i_fn(void *p)
{
    fastsync_once_t *o = (fastsync_once_t *)p;
    c_thread = test_thread_start(c_main, o);
    while (test_once_state(o) != FASTSYNC__ONCE_WAITED) sched_yield();
}

/* commit or abort; by_once: C calls fastsync_once (else begin), and this thread commits
 * through fastsync_once too (an abort is begin/abort: fastsync_once aborts only when
 * cancelled, once_cancel's case). */
static void rounds(bool commit, bool by_once, bool shared)
{
    char what[96];
    snprintf(what, sizeof what, "%s, %s, %s", commit ? "commit" : "abort", by_once ? "fastsync_once" : "begin",
             shared ? "shared" : "private");
    int bad = 0, held = 0;
    for (int r = 0; r < ROUNDS; r++) {
        fastsync_once_t *o = (fastsync_once_t *)test_page_alloc(sizeof(fastsync_once_t), shared);
        fastsync_once_init(o, shared ? TEST_SHARED : 0);
        /* relaxed: no other thread of the test runs; C's creation publishes them to C */
        atomic_store_explicit(&cur, o, memory_order_relaxed);
        atomic_store_explicit(&freed, false, memory_order_relaxed);
        atomic_store_explicit(&wakes_held, 0, memory_order_relaxed);
        c_once = by_once;
        c_ret = -1;
        c_ran = 0;
        if (commit && by_once) {
            fastsync_once(o, i_fn, o); /* o may be unmapped from its commit's wake on */
        } else {
            /* begin before C starts: C then sleeps behind this thread */
            if (fastsync_once_begin(o) != 1) bail("%s: this thread's begin on a new once said 0", what);
            c_thread = test_thread_start(c_main, o);
            while (test_once_state(o) != FASTSYNC__ONCE_WAITED) sched_yield();
            if (commit)
                fastsync_once_commit(o); /* (the same) */
            else
                fastsync_once_abort(o);  /* (the same) */
        }
        test_thread_join(c_thread);
        held += atomic_load_explicit(&wakes_held, memory_order_relaxed) == 1; /* relaxed: joined */
        bad += c_ret != (commit || by_once ? 0 : 1) || c_ran != (!commit && by_once);
    }
    is_int(held, ROUNDS, "%s: each %s reached its wake once, held until the caller unmapped the once", what,
           commit ? "commit" : "abort");
    is_int(bad, 0, "%s: the caller's call said what it should (%s)", what,
           commit ? "0" : by_once ? "0, after running its fn" : "1, and it committed");
}

int main(void)
{
    test_init();
    diag("onces live in %s", TEST_PAGE_WHERE);
    test_wait_override = wait_poll;
    test_wake_override = wake_held;
    test_watchdog_start(dump, NULL);
    for (int s = 0; s < 1 + FASTSYNC_HAS_SHARED; s++)
        for (int c = 1; c >= 0; c--)
            for (int b = 0; b < 2; b++) rounds(c, b, s);
    test_watchdog_stop();
    return done_testing();
}
