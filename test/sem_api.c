/* SPDX-License-Identifier: MIT */
/* sem_api: every semaphore function's results and exact error codes, and that no failure
 * path leaves a waiter registered (destroy says EBUSY while one is). A destroyed semaphore
 * is initialized again before it is used again (on OS/2 destroy closes its semaphores). */
#include "harness.h"

static void dump(void *s) { test_dump_sem("sem", (fastsync_sem_t *)s); }

static void *wait_once(void *p)
{
    fastsync_sem_wait((fastsync_sem_t *)p);
    return NULL;
}

int main(void)
{
    test_init();
    fastsync_sem_t s;

    ok(sizeof(fastsync_sem_t) <= 8, "sizeof(fastsync_sem_t) = %zu <= 8", sizeof(fastsync_sem_t));
    /* The futex word is the token count, whatever the byte order (on a big-endian CPU the
     * second half of the 64-bit word): waiters sleep while it reads 0, posts change it. A
     * wrong half would be caught here directly, not only by a hang elsewhere. */
    fastsync_sem_init(&s, 0, TEST_SHARED);
    test_sem_force_word(&s, test_sem_word(&s) + 5 + 3 * FASTSYNC__SEM_WAITER);
    uint32_t futex_word;
    memcpy(&futex_word, fastsync__sem_futex(&s), sizeof futex_word);
    is_int(futex_word, 5, "the futex word holds the tokens (5), not the waiters (3) or the shared flag");
    test_sem_force_word(&s, test_sem_word(&s) - 5 - 3 * FASTSYNC__SEM_WAITER);
    fastsync_sem_destroy(&s);

    /* init limits and flags */
    is_int(fastsync_sem_init(&s, FASTSYNC_SEM_VALUE_MAX, 0), 0, "init at FASTSYNC_SEM_VALUE_MAX");
    is_int(fastsync_sem_getvalue(&s), FASTSYNC_SEM_VALUE_MAX, "getvalue = FASTSYNC_SEM_VALUE_MAX");
    fastsync_sem_destroy(&s);
    is_int(fastsync_sem_init(&s, (unsigned)FASTSYNC_SEM_VALUE_MAX + 1, 0), EINVAL, "init above the max: EINVAL");
    is_int(fastsync_sem_init(&s, 0, 2), EINVAL, "init with an unknown flag: EINVAL");
    is_int(fastsync_sem_init(&s, 0, -1), EINVAL, "init with all flags: EINVAL");
    is_int(fastsync_sem_init(&s, 2, FASTSYNC_SHARED), FASTSYNC_HAS_SHARED ? 0 : EINVAL, "init FASTSYNC_SHARED: %s",
           FASTSYNC_HAS_SHARED ? "0" : "EINVAL (the " FASTSYNC_BACKEND " backend has no shared objects)");
    if (!FASTSYNC_HAS_SHARED) fastsync_sem_init(&s, 2, 0);
    is_int(fastsync_sem_trywait(&s), 0, "shared: trywait takes a token");
    is_int(fastsync_sem_getvalue(&s), 1, "shared: value 1 left");
    is_int(fastsync_sem_destroy(&s), 0, "destroy an idle semaphore");

    fastsync_sem_t st = FASTSYNC_SEM_INIT(3);
    is_int(fastsync_sem_getvalue(&st), 3, "FASTSYNC_SEM_INIT(3) holds 3");
    is_int(fastsync_sem_wait(&st), 0, "wait on a positive semaphore");
    is_int(fastsync_sem_getvalue(&st), 2, "wait took one token");
    is_int(fastsync_sem_destroy(&st), 0, "destroy the statically initialized semaphore");

    /* trywait */
    fastsync_sem_init(&s, 0, 0);
    is_int(fastsync_sem_trywait(&s), EAGAIN, "trywait on 0: EAGAIN");
    is_int(fastsync_sem_getvalue(&s), 0, "value still 0");

    /* deadlines, on an empty semaphore: nothing sleeps */
    unsigned long waits0 = test_kernel_waits();
    struct timespec past = test_ts(1, 0), neg = test_ts(-5, 0), badn = test_ts(1, 1000000000L), negn = test_ts(1, -1);
    is_int(fastsync_sem_timedwait(&s, &past), ETIMEDOUT, "timedwait, deadline past: ETIMEDOUT");
    is_int(fastsync_sem_timedwait(&s, &neg), ETIMEDOUT, "timedwait, negative tv_sec: ETIMEDOUT");
    is_int(fastsync_sem_timedwait(&s, &badn), EINVAL, "timedwait, tv_nsec = 1e9: EINVAL");
    is_int(fastsync_sem_timedwait(&s, &negn), EINVAL, "timedwait, tv_nsec < 0: EINVAL");
    is_int(fastsync_sem_timedwait(&s, NULL), EINVAL, "timedwait, NULL deadline: EINVAL");
    is_int(fastsync_sem_clockwait(&s, CLOCK_REALTIME, &past), ETIMEDOUT, "clockwait REALTIME, past: ETIMEDOUT");
    is_int(fastsync_sem_clockwait(&s, CLOCK_MONOTONIC, &past), ETIMEDOUT, "clockwait MONOTONIC, past: ETIMEDOUT");
    is_int(fastsync_sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL, "clockwait, CPU-time clock: EINVAL");
    is_int(fastsync_sem_clockwait(&s, CLOCK_BOOTTIME, &past), EINVAL, "clockwait, CLOCK_BOOTTIME: EINVAL");
    is_int(fastsync_sem_clockwait(&s, CLOCK_REALTIME, NULL), EINVAL, "clockwait, NULL deadline: EINVAL");
    is_int(test_kernel_waits() - waits0, 0, "no futex wait for a past or malformed deadline");
    is_int(fastsync_sem_destroy(&s), 0, "no waiter left registered after the failed waits");

    /* a deadline is checked only when the call would block */
    fastsync_sem_init(&s, 0, 0);
    fastsync_sem_post(&s);
    is_int(fastsync_sem_timedwait(&s, &past), 0, "past deadline, token there: 0");
    fastsync_sem_post(&s);
    is_int(fastsync_sem_timedwait(&s, &badn), 0, "bad tv_nsec, token there: 0 (checked only when blocking)");
    fastsync_sem_post(&s);
    is_int(fastsync_sem_timedwait(&s, &neg), 0, "negative tv_sec, token there: 0");
    fastsync_sem_post(&s);
    is_int(fastsync_sem_clockwait(&s, CLOCK_BOOTTIME, &past), EINVAL, "unknown clock, token there: still EINVAL");
    is_int(fastsync_sem_getvalue(&s), 1, "the EINVAL took no token");
    is_int(fastsync_sem_trywait(&s), 0, "token still there");

    /* a real timeout through the kernel, and errno untouched */
    errno = 1234;
    struct timespec soon = fastsync_deadline_in(2000000);
    is_int(fastsync_sem_timedwait(&s, &soon), ETIMEDOUT, "timedwait 2 ms on 0: ETIMEDOUT");
    is_int(errno, 1234, "errno untouched");
    is_int(fastsync_sem_getvalue(&s), 0, "value 0 after the timeout");
    is_int(fastsync_sem_destroy(&s), 0, "no waiter left registered after a timeout");
    fastsync_sem_init(&s, 0, 0);
    struct timespec rt = test_deadline_on(CLOCK_REALTIME, 2000000);
    is_int(fastsync_sem_clockwait(&s, CLOCK_REALTIME, &rt), ETIMEDOUT, "clockwait REALTIME 2 ms: ETIMEDOUT");
    is_int(fastsync_sem_destroy(&s), 0, "no waiter left registered after a REALTIME timeout");
    fastsync_sem_init(&s, 0, 0);

    /* deadline_in: UINT64_MAX ns is 584 years; with a 32-bit time_t it saturates */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    struct timespec far = fastsync_deadline_in(UINT64_MAX);
    bool saturated = sizeof(time_t) < 8 && far.tv_sec == (time_t)INT32_MAX && far.tv_nsec == 999999999L;
    int64_t span = (int64_t)far.tv_sec - (int64_t)now.tv_sec; /* (no compare a 32-bit time_t cannot hold) */
    bool exact = sizeof(time_t) >= 8 && span >= 18446744073 && span <= 18446744075 && far.tv_nsec >= 0 &&
                 far.tv_nsec < 1000000000L;
    ok(saturated || exact, "deadline_in(UINT64_MAX) = now + 584 years, or saturated (tv_sec %lld)",
       (long long)far.tv_sec);
    struct timespec in1 = fastsync_deadline_in(1000000000u);
    ok(in1.tv_sec == now.tv_sec + 1 || in1.tv_sec == now.tv_sec + 2, "deadline_in(1 s) is about now + 1 s");
    ok(in1.tv_nsec >= 0 && in1.tv_nsec < 1000000000L, "deadline_in gives a normalized tv_nsec");
    fastsync_sem_post(&s);
    is_int(fastsync_sem_timedwait(&s, &far), 0, "timedwait with the saturated deadline takes a token");
    fastsync_sem_destroy(&s);

    /* post limits */
    fastsync_sem_init(&s, FASTSYNC_SEM_VALUE_MAX, 0);
    is_int(fastsync_sem_post(&s), EOVERFLOW, "post at the max: EOVERFLOW");
    is_int(fastsync_sem_getvalue(&s), FASTSYNC_SEM_VALUE_MAX, "value unchanged");
    fastsync_sem_destroy(&s);
    fastsync_sem_init(&s, FASTSYNC_SEM_VALUE_MAX - 3, 0);
    is_int(fastsync_sem_post_n(&s, 4), EOVERFLOW, "post_n past the max: EOVERFLOW");
    is_int(fastsync_sem_getvalue(&s), FASTSYNC_SEM_VALUE_MAX - 3, "post_n added nothing");
    is_int(fastsync_sem_post_n(&s, 3), 0, "post_n up to the max");
    is_int(fastsync_sem_getvalue(&s), FASTSYNC_SEM_VALUE_MAX, "value at the max");
    is_int(fastsync_sem_post_n(&s, UINT_MAX), EOVERFLOW, "post_n(UINT_MAX): EOVERFLOW");
    fastsync_sem_destroy(&s);
    fastsync_sem_init(&s, 0, 0);
    is_int(fastsync_sem_post_n(&s, 0), 0, "post_n(0) is a no-op");
    is_int(fastsync_sem_post_n(&s, 5), 0, "post_n(5)");
    is_int(fastsync_sem_getvalue(&s), 5, "value 5");
    is_int(fastsync_sem_post_n(&s, (unsigned)FASTSYNC_SEM_VALUE_MAX), EOVERFLOW, "post_n(max) on 5: EOVERFLOW");
    int taken = 0;
    while (fastsync_sem_trywait(&s) == 0) taken++;
    is_int(taken, 5, "trywait took exactly 5 tokens");
    fastsync_sem_destroy(&s);

    /* destroy says EBUSY while a waiter is registered. Polled in the word, not by calling
     * destroy until it fails: a destroy that comes before the waiter registered succeeds,
     * and on OS/2 it closes the semaphores the waiter is about to sleep on. */
    fastsync_sem_init(&s, 0, 0);
    test_watchdog_start(dump, &s);
    pthread_t t = test_thread_start(wait_once, &s);
    uint64_t end = test_limit_end(10000);
    while (test_box_open(end) && test_sem_waiters(&s) == 0) test_sleep_ns(100000);
    is_int(test_sem_waiters(&s), 1, "the waiter registered");
    is_int(fastsync_sem_destroy(&s), EBUSY, "destroy with a blocked waiter: EBUSY");
    is_int(fastsync_sem_post(&s), 0, "post to the blocked waiter");
    test_thread_join(t);
    test_watchdog_stop();
    is_int(fastsync_sem_getvalue(&s), 0, "the waiter took the token");
    is_int(fastsync_sem_destroy(&s), 0, "destroy once the waiter left: 0");

    return done_testing();
}
