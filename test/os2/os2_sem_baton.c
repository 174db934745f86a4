/* SPDX-License-Identifier: MIT */
/* os2_sem_baton: fastsync_os2.h's semaphore never leaves a token unclaimed while a waiter
 * sleeps, although its waiters reset the shared HEV (white-box: reads the word's waiter
 * count). Per round N waiters (4 or 8) register in the word; after a random pause (some
 * asleep, some between their last look at the word and DosWaitEventSem, more so under
 * FASTSYNC_OS2_INJECT=1) main makes N tokens in one of three ways (N posts, post_n(N),
 * post_n in random chunks) and then posts nothing more: every waiter must return 0 (the
 * watchdog catches a lost one), the value must end at 0 and no waiter stay registered.
 * Each posting call found waiters registered, so each made exactly one DosPostEventSem;
 * the waiters' baton posts are counted apart (os2dbl_sem_posts() minus those). */
#include "harness.h"

#define MAXW 8

static struct {
    fastsync_sem_t s;
    int n;
    _Atomic(unsigned long) go[MAXW], done[MAXW];
    int ret[MAXW];
    _Atomic(bool) quit;
    _Atomic(unsigned long) round;
} g;

static uint32_t registered(void) { return fastsync__sem_waiters(fastsync__os2_load(&g.s.o, FASTSYNC__RELAXED)); }

static void *waiter_main(void *p)
{
    int i = (int)(intptr_t)p;
    unsigned long r = 0;
    uint64_t rng = test_stream((unsigned)i + 100);
    for (;;) {
        unsigned long go;
        /* acquire: pairs with the release store of go in main. */
        while ((go = atomic_load_explicit(&g.go[i], memory_order_acquire)) == r) {
            if (atomic_load_explicit(&g.quit, memory_order_acquire)) return NULL;
            test_sleep_ns(20000);
        }
        r = go;
        int ret;
        if (test_rand(&rng) % 4 == 0) {
            struct timespec far = fastsync_deadline_in(60000000000u);
            ret = fastsync_sem_timedwait(&g.s, &far);
        } else {
            ret = fastsync_sem_wait(&g.s);
        }
        g.ret[i] = ret;
        /* release: pairs with the acquire loads of done in main (ret is read after it). */
        atomic_store_explicit(&g.done[i], r, memory_order_release);
    }
}

static void dump(void *unused)
{
    (void)unused;
    uint64_t v = fastsync__os2_load(&g.s.o, FASTSYNC__RELAXED);
    diag("round %lu: value %u, waiters %u", atomic_load_explicit(&g.round, memory_order_relaxed),
         fastsync__sem_tokens(v), fastsync__sem_waiters(v));
    for (int i = 0; i < g.n; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("  waiter %d: go %lu, done %lu", i, atomic_load_explicit(&g.go[i], memory_order_relaxed),
             atomic_load_explicit(&g.done[i], memory_order_relaxed));
}

static void run(int n, bool pinned)
{
    char label[64];
    snprintf(label, sizeof label, "%d waiters, %s", n, pinned ? "pinned" : "spread");
    test_pin_all(pinned);
    g.n = n;
    atomic_store_explicit(&g.quit, false, memory_order_relaxed); /* relaxed: before the threads */
    for (int i = 0; i < n; i++) {
        /* relaxed: no waiter thread runs yet; thread creation publishes these. */
        atomic_store_explicit(&g.go[i], 0, memory_order_relaxed);
        atomic_store_explicit(&g.done[i], 0, memory_order_relaxed);
    }
    pthread_t t[MAXW];
    for (int i = 0; i < n; i++) t[i] = test_thread_start(waiter_main, (void *)(intptr_t)i);
    uint64_t rng = test_stream((unsigned)n + (pinned ? 50u : 0u));
    unsigned long rounds = 0, bad_wakes = 0, bad_ret = 0, bad_value = 0, bad_destroy = 0, no_reg = 0;
    unsigned long wakes0 = test_kernel_wakes(), posts0 = os2dbl_sem_posts();
    uint64_t box = test_box_end(700);
    while (test_box_open(box)) {
        /* relaxed: the round number is only read by the dump. */
        unsigned long r = atomic_fetch_add_explicit(&g.round, 1, memory_order_relaxed) + 1;
        uint64_t x = test_rand(&rng);
        fastsync_sem_init(&g.s, 0, x % 4 == 0 ? FASTSYNC_SHARED : 0);
        for (int i = 0; i < n; i++)
            /* release: pairs with the acquire load in waiter_main (the semaphore is ready). */
            atomic_store_explicit(&g.go[i], r, memory_order_release);
        uint64_t end = test_box_end(5000);
        while (registered() != (uint32_t)n && test_box_open(end)) test_sleep_ns(5000);
        if (registered() != (uint32_t)n) no_reg++;
        if ((x >> 8) % 4 != 0) test_sleep_ns((x >> 16) % 300000u);
        unsigned long k0 = test_kernel_wakes(), calls = 0;
        int kind = (int)((x >> 40) % 3);
        if (kind == 0) {
            for (int i = 0; i < n; i++, calls++) fastsync_sem_post(&g.s);
        } else if (kind == 1) {
            fastsync_sem_post_n(&g.s, (unsigned)n);
            calls = 1;
        } else {
            for (int left = n; left > 0; calls++) {
                int k = 1 + (int)(test_rand(&rng) % (uint64_t)left);
                fastsync_sem_post_n(&g.s, (unsigned)k);
                left -= k;
            }
        }
        /* before the i-th call at most i-1 of the n registered waiters had left */
        if (test_kernel_wakes() - k0 != calls) bad_wakes++;
        for (int i = 0; i < n; i++) {
            /* acquire: pairs with the release store of done in waiter_main. */
            while (atomic_load_explicit(&g.done[i], memory_order_acquire) != r) test_sleep_ns(10000);
            bad_ret += g.ret[i] != 0;
        }
        bad_value += fastsync_sem_getvalue(&g.s) != 0;
        bad_destroy += fastsync_sem_destroy(&g.s) != 0;
        rounds++;
    }
    atomic_store_explicit(&g.quit, true, memory_order_release);
    for (int i = 0; i < n; i++) test_thread_join(t[i]);
    test_pin_all(false);
    unsigned long wakes = test_kernel_wakes() - wakes0;
    diag("%s: %lu rounds; %lu posts by posting calls, %lu baton posts by waiters", label, rounds, wakes,
         os2dbl_sem_posts() - posts0 - wakes);
    ok(rounds > 0, "%s: rounds ran", label);
    is_int(no_reg, 0, "%s: all registered every round", label);
    is_int(bad_ret, 0, "%s: every wait returned 0 (none left asleep with a token there)", label);
    is_int(bad_value, 0, "%s: value 0 after every round", label);
    is_int(bad_destroy, 0, "%s: no waiter left registered", label);
    is_int(bad_wakes, 0, "%s: each posting call made exactly one DosPostEventSem", label);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    run(4, false);
    run(4, true);
    run(8, false);
    run(8, true);
    test_watchdog_stop();
    return done_testing();
}
