/* SPDX-License-Identifier: MIT */
/* sem_wake_economy: the semaphore makes system calls only when a thread must sleep or be
 * woken. One thread alone: 1 M post/wait pairs (and trywait, timedwait, post_n pairs) make
 * no futex call at all. 8 sleepers: one post lets exactly one of them return and makes
 * exactly one FUTEX_WAKE; post_n(3) lets exactly three return with one FUTEX_WAKE; single
 * posts while waiters are registered make one FUTEX_WAKE each; with nobody registered,
 * none. */
#include "harness.h"

#define SLEEPERS 8

static fastsync_sem_t s;
static _Atomic(int) returned;
static _Atomic(int) sleeper_state[SLEEPERS]; /* 0 not started, 1 in wait, 2 returned */
static int sleeper_code[SLEEPERS];

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem", &s);
    /* relaxed: progress read for the dump only. */
    diag("%d sleepers returned", atomic_load_explicit(&returned, memory_order_relaxed));
    for (int i = 0; i < SLEEPERS; i++)
        diag("sleeper %d: %s", i,
             (const char *[]){ "not started", "in wait", "returned" }[atomic_load_explicit(
                 &sleeper_state[i], memory_order_relaxed)]);
}

/* Waiters registered in the word (a poll; what the test asserts is ordered by the
 * semaphore and the joins). */
static int registered(void) { return (int)test_sem_waiters(&s); }

static void *sleeper(void *arg)
{
    int i = (int)(intptr_t)arg;
    /* relaxed (this and the store below): state for the dump. */
    atomic_store_explicit(&sleeper_state[i], 1, memory_order_relaxed);
    sleeper_code[i] = fastsync_sem_wait(&s);
    atomic_store_explicit(&sleeper_state[i], 2, memory_order_relaxed);
    /* relaxed: a count polled by main; the token itself carries the ordering. */
    atomic_fetch_add_explicit(&returned, 1, memory_order_relaxed);
    return NULL;
}

/* Polls until n waiters are registered and at least n futex waits were made since waits0
 * (each sleeper made its first), or 5 s (scaled) pass; returns whether they are. */
static bool until_asleep(int n, unsigned long waits0)
{
    uint64_t end = test_limit_end(5000);
    while ((registered() != n || test_kernel_waits() - waits0 < (unsigned long)n) && test_box_open(end))
        test_sleep_ns(200000);
    /* A sleeper counted its futex call just before making it: give it time to get there. */
    test_sleep_ns(20000000);
    return registered() == n && test_kernel_waits() - waits0 >= (unsigned long)n;
}

static bool until_returned(int n)
{
    /* relaxed: a count polled; the tokens carry the ordering */
    uint64_t end = test_limit_end(5000);
    while (atomic_load_explicit(&returned, memory_order_relaxed) < n && test_box_open(end))
        test_sleep_ns(200000);
    return atomic_load_explicit(&returned, memory_order_relaxed) >= n;
}

static void start_sleepers(pthread_t *t)
{
    /* relaxed: before the threads start */
    atomic_store_explicit(&returned, 0, memory_order_relaxed);
    for (int i = 0; i < SLEEPERS; i++) {
        atomic_store_explicit(&sleeper_state[i], 0, memory_order_relaxed);
        sleeper_code[i] = -1;
        t[i] = test_thread_start(sleeper, (void *)(intptr_t)i);
    }
}

static void join_sleepers(pthread_t *t, const char *what)
{
    int bad = 0;
    for (int i = 0; i < SLEEPERS; i++) {
        test_thread_join(t[i]);
        if (sleeper_code[i] != 0) bad++;
    }
    is_int(bad, 0, "%s: every sleeper's wait returned 0", what);
}

int main(void)
{
    test_init();
    const long pairs = 1000000;

    /* ---- one thread alone: no futex call ---- */
    fastsync_sem_init(&s, 0, 0);
    unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    long bad = 0;
    for (long i = 0; i < pairs; i++) {
        bad += fastsync_sem_post(&s) != 0;
        bad += fastsync_sem_wait(&s) != 0;
    }
    is_int(bad, 0, "1 M post/wait pairs all returned 0");
    is_int(test_kernel_waits() - w0, 0, "1 M post/wait pairs: no futex wait");
    is_int(test_kernel_wakes() - k0, 0, "1 M post/wait pairs: no futex wake");
    is_int(fastsync_sem_getvalue(&s), 0, "value 0 after the pairs");

    w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    bad = 0;
    for (long i = 0; i < pairs; i++) {
        bad += fastsync_sem_post(&s) != 0;
        bad += fastsync_sem_trywait(&s) != 0;
    }
    is_int(bad, 0, "1 M post/trywait pairs all returned 0");
    is_int(test_kernel_waits() - w0 + test_kernel_wakes() - k0, 0, "1 M post/trywait pairs: no futex call");

    struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
    struct timespec past = { 0, 0 };
    w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    bad = 0;
    for (long i = 0; i < 100000; i++) {
        bad += fastsync_sem_post_n(&s, 3) != 0;
        bad += fastsync_sem_timedwait(&s, &far) != 0;
        bad += fastsync_sem_clockwait(&s, CLOCK_REALTIME, &past) != 0; /* a token is there */
        bad += fastsync_sem_trywait(&s) != 0;
        bad += fastsync_sem_trywait(&s) != EAGAIN;
    }
    is_int(bad, 0, "100 k rounds of post_n(3), timedwait, clockwait, trywait, trywait(EAGAIN): expected codes");
    is_int(test_kernel_waits() - w0 + test_kernel_wakes() - k0, 0, "... and no futex call");
    is_int(fastsync_sem_destroy(&s), 0, "no waiter registered");

    /* ---- 8 sleepers, one post: exactly one returns ---- */
    pthread_t t[SLEEPERS];
    test_watchdog_start(dump, NULL);
    fastsync_sem_init(&s, 0, 0);
    w0 = test_kernel_waits();
    start_sleepers(t);
    ok(until_asleep(SLEEPERS, w0), "8 sleepers registered and in futex wait (%lu calls)", test_kernel_waits() - w0);
    k0 = test_kernel_wakes();
    is_int(fastsync_sem_post(&s), 0, "one post");
    ok(until_returned(1), "a sleeper returned");
    test_sleep_ns(100000000); /* a generous pause: would a second one return? */
    /* relaxed: a count; the pause above is what gives a second sleeper the time to show */
    is_int(atomic_load_explicit(&returned, memory_order_relaxed), 1, "exactly one sleeper returned after one post");
    is_int(test_kernel_wakes() - k0, 1, "one post, one FUTEX_WAKE");
    is_int(fastsync_sem_getvalue(&s), 0, "the token was taken");
    is_int(registered(), SLEEPERS - 1, "7 still registered");
    k0 = test_kernel_wakes();
    is_int(fastsync_sem_post_n(&s, SLEEPERS - 1), 0, "post_n(7) for the rest");
    ok(until_returned(SLEEPERS), "all 8 returned");
    join_sleepers(t, "one post");
    is_int(test_kernel_wakes() - k0, 1, "post_n(7): one FUTEX_WAKE");
    is_int(fastsync_sem_getvalue(&s), 0, "value 0");
    is_int(fastsync_sem_destroy(&s), 0, "no waiter registered");

    /* ---- 8 sleepers, post_n(3): exactly three return ---- */
    fastsync_sem_init(&s, 0, 0);
    w0 = test_kernel_waits();
    start_sleepers(t);
    ok(until_asleep(SLEEPERS, w0), "8 sleepers registered and in futex wait again");
    k0 = test_kernel_wakes();
    is_int(fastsync_sem_post_n(&s, 3), 0, "post_n(3)");
    ok(until_returned(3), "three sleepers returned");
    test_sleep_ns(100000000);
    /* relaxed: as above */
    is_int(atomic_load_explicit(&returned, memory_order_relaxed), 3, "exactly three sleepers returned after post_n(3)");
    is_int(test_kernel_wakes() - k0, 1, "post_n(3): one FUTEX_WAKE");
    is_int(fastsync_sem_getvalue(&s), 0, "the 3 tokens were taken");
    is_int(registered(), SLEEPERS - 3, "5 still registered");
    /* Five single posts back to back: before the i-th, at most i-1 of the 5 registered
     * waiters have left, so each post sees one registered and makes one FUTEX_WAKE. */
    k0 = test_kernel_wakes();
    bad = 0;
    for (int i = 0; i < SLEEPERS - 3; i++) bad += fastsync_sem_post(&s) != 0;
    is_int(bad, 0, "5 posts");
    ok(until_returned(SLEEPERS), "all 8 returned");
    join_sleepers(t, "post_n(3)");
    is_int(test_kernel_wakes() - k0, SLEEPERS - 3, "5 posts with waiters registered: 5 FUTEX_WAKE");
    test_watchdog_stop();

    /* ---- nobody registered: a post makes no wake ---- */
    k0 = test_kernel_wakes();
    is_int(fastsync_sem_post(&s), 0, "post with nobody registered");
    is_int(test_kernel_wakes() - k0, 0, "... makes no FUTEX_WAKE");
    is_int(fastsync_sem_getvalue(&s), 1, "value 1");
    is_int(fastsync_sem_destroy(&s), 0, "no waiter registered at the end");
    return done_testing();
}
