/* SPDX-License-Identifier: MIT */
/* wait32_free: the manual's "Waiting on an address": a wake never reads or writes the word,
 * only its address counts, so the word's owner may free it as soon as it has seen the value
 * the wake follows, even while the wake is still being made; a wait touches the word only
 * until it returns. Each round's word lives at the very end of its own mmap'd page (the
 * harness's test_page_alloc; under AddressSanitizer or ThreadSanitizer a malloc'd block, a
 * touch after free being their report). A waiter waits while the word holds 0, then
 * unmaps the page at once; this thread stores 1 (release) and calls fastsync_wake32 (or
 * wake32_all, by turns):
 *   during: the wake reaches the harness's layer, which holds it until the waiter has
 *     unmapped the page, then makes the backend's wake on the unmapped address. The waiter
 *     waits with timedwait32 1 ms at a time (no wake reaches it before the unmap).
 *   after: the waiter sleeps in wait32; the backend's wake wakes it, and the layer holds the
 *     waker after that wake (test_after_futex_wake) until the waiter has unmapped the page,
 *     then fastsync_wake32 returns.
 * Private and shared (a MAP_SHARED page, FASTSYNC_SHARED where the backend has it), 4
 * rounds each. Every wake returned 0 and was held once; every wait 0 or ETIMEDOUT.
 * Fails with: a wake that touches the word (a SIGSEGV, or the sanitizer's report), in the
 * public call or the backend; a backend's wake that faults on an unmapped address. A touch
 * before the unmap comes before it in time: only ThreadSanitizer sees that here. Not on
 * Windows (mmap). */
#include "harness.h"

#include <signal.h>

#define ROUNDS 4

static _Atomic(fastsync_word32_t *) cur; /* the round's word; relaxed: the hooks compare
                                          * addresses, the waiter gets it by its creation */
static _Atomic(bool) freed;             /* unmapped: release, pairs with the hooks' acquire */
static _Atomic(int) held;               /* wakes held; relaxed: read after the join */
static _Atomic(int) mode;               /* bit 0: after (else during); bit 1: shared;
                                         * relaxed: set before the waiter starts */
static int wait_bad;                    /* the waiter's waits that returned other than 0 or
                                         * ETIMEDOUT; read after the join */

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a diagnostic snapshot (the word itself may be gone) */
    diag("mode %d, freed %d, wakes held %d", atomic_load_explicit(&mode, memory_order_relaxed),
         (int)atomic_load_explicit(&freed, memory_order_relaxed), atomic_load_explicit(&held, memory_order_relaxed));
}

#if !TEST_PAGE_MALLOC
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    static const char msg[] = "Bail out! SIGSEGV: a word touched after its waiter unmapped it?\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

/* Until the waiter has unmapped the word (acquire: pairs with its release store). */
static void until_freed(void)
{
    uint64_t end = test_limit_end(5000);
    while (!atomic_load_explicit(&freed, memory_order_acquire))
        if (!test_box_open(end)) bail("the waiter never unmapped the word");
        else sched_yield();
}

static int wait_fwd(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

/* during: the round's wake waits for the unmap, then goes to the backend. */
static void wake_during(void *word, int n, int shared)
{
    if (word == (void *)atomic_load_explicit(&cur, memory_order_relaxed) &&
        (atomic_load_explicit(&mode, memory_order_relaxed) & 1) == 0) {
        atomic_fetch_add_explicit(&held, 1, memory_order_relaxed);
        until_freed();
    }
    fastsync__wake_sys(word, n, shared);
}

/* after: the waker, back from the round's wake, waits for the unmap. */
static void after_wake(void)
{
    /* (the word's address is not passed: in mode "after" this thread's only wakes are the
     * round's; the waiter may have unmapped the word already, woken by the backend's wake
     * on another CPU: then it returns at once) */
    if ((atomic_load_explicit(&mode, memory_order_relaxed) & 1) == 1 &&
        atomic_load_explicit(&cur, memory_order_relaxed) != NULL) {
        atomic_fetch_add_explicit(&held, 1, memory_order_relaxed);
        until_freed();
    }
}

static void *waiter_main(void *p)
{
    fastsync_word32_t *w = (fastsync_word32_t *)p;
    int flags = atomic_load_explicit(&mode, memory_order_relaxed) >> 1 ? TEST_SHARED : 0;
    /* acquire: pairs with the release store of 1 (nothing else to see here; as a caller).
     * Through the header's layer (fastsync__load, fastsync__store): the word is a plain
     * uint32_t where the OS/2 double runs without atomics, read there under its lock. */
    while (fastsync__load(w, memory_order_acquire) == 0) {
        int r;
        if ((atomic_load_explicit(&mode, memory_order_relaxed) & 1) == 0) {
            struct timespec d = fastsync_deadline_in(1000000);
            r = fastsync_timedwait32(w, 0, flags, &d);
        } else {
            r = fastsync_wait32(w, 0, flags);
        }
        if (r != 0 && r != ETIMEDOUT) wait_bad++;
    }
    test_page_free(w); /* at once: the waker may still be inside its wake */
    atomic_store_explicit(&freed, true, memory_order_release);
    return NULL;
}

static void rounds(int after, bool shared)
{
    int bad = 0;
    atomic_store_explicit(&held, 0, memory_order_relaxed); /* relaxed: no waiter runs yet */
    for (int r = 0; r < ROUNDS; r++) {
        fastsync_word32_t *w = (fastsync_word32_t *)test_page_alloc(sizeof *w, shared);
        fastsync__store(w, 0u, memory_order_relaxed); /* relaxed: no waiter runs yet */
        /* relaxed: no waiter runs yet; its creation publishes these */
        atomic_store_explicit(&mode, after | (shared ? 2 : 0), memory_order_relaxed);
        atomic_store_explicit(&freed, false, memory_order_relaxed);
        atomic_store_explicit(&cur, w, memory_order_relaxed);
        wait_bad = 0;
        unsigned long w0 = test_kernel_waits();
        pthread_t t = test_thread_start(waiter_main, w);
        if (after) { /* until it sleeps in the kernel: the wake must reach it there */
            uint64_t end = test_limit_end(5000);
            while (test_kernel_waits() == w0 && test_box_open(end)) sched_yield();
            test_sleep_ns(2000000);
        }
        /* release: pairs with the waiter's acquire load */
        fastsync__store(w, 1u, memory_order_release);
        int ret = r % 2 ? fastsync_wake32_all(w, shared ? TEST_SHARED : 0) : fastsync_wake32(w, 1, shared ? TEST_SHARED : 0);
        /* w may be unmapped from here on */
        test_thread_join(t);
        atomic_store_explicit(&cur, NULL, memory_order_relaxed);
        bad += ret != 0 || wait_bad != 0;
    }
    int h = atomic_load_explicit(&held, memory_order_relaxed);
    ok(h == ROUNDS && bad == 0, "%s, %s: %d of %d wakes held until the word was unmapped; %d rounds with a wait or wake "
                                "that was not 0",
       after ? "freed after the backend's wake, inside wake32" : "freed before the backend's wake",
       shared ? "shared page" : "private", h, ROUNDS, bad);
}

int main(void)
{
    test_init();
#if !TEST_PAGE_MALLOC
    test_page_on_fault(on_segv);
#endif
    diag("words live in %s", TEST_PAGE_WHERE);
    test_wait_override = wait_fwd;
    test_wake_override = wake_during;
    test_after_futex_wake = after_wake;
    test_watchdog_start(dump, NULL);
    for (int s = 0; s < 2; s++) {
        rounds(0, s != 0);
        rounds(1, s != 0);
    }
    test_watchdog_stop();
    return done_testing();
}
