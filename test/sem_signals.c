/* SPDX-License-Identifier: MIT */
/* sem_signals: a waiter blocked in the kernel under a storm of SIGUSR1 (pthread_kill in a
 * loop from another thread), with the handler installed with and without SA_RESTART.
 *   wait:       returns 0 only after the post, the token is consumed exactly once;
 *   timedwait / clockwait(REALTIME), ~200 ms: ETIMEDOUT, never before the deadline (read on
 *               the same clock after return), not absurdly late (< deadline + 2 s), value 0;
 *   timedwait with a far deadline: returns 0 only after the post.
 * After each: no waiter left registered (destroy == 0). Waits never return EINTR. */
#include "harness.h"

static fastsync_sem_t s;
static struct test_storm storm; /* SIGUSR1 at the waiter */
static _Atomic(bool) posted;     /* set just before the post */
static _Atomic(bool) returned;   /* the waiter's call has returned */

enum { CASE_WAIT, CASE_TIMEDOUT, CASE_CLOCK_RT, CASE_TIMED_POSTED };
static const char *const case_name[] = { "wait", "timedwait 200 ms", "clockwait(REALTIME) 200 ms",
                                         "timedwait, posted after 150 ms" };

struct waiter {
    int kind;
    struct timespec deadline; /* on `clock` */
    clockid_t clock;
    int result;
    bool posted_at_return;
    struct timespec after;    /* `clock` read after the return */
};

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem", &s);
    test_storm_dump(&storm);
    /* relaxed: progress read for the dump only. */
    diag("posted %d, waiter returned %d", (int)atomic_load_explicit(&posted, memory_order_relaxed),
         (int)atomic_load_explicit(&returned, memory_order_relaxed));
}

static void *waiter_main(void *arg)
{
    struct waiter *w = (struct waiter *)arg;
    if (w->kind == CASE_WAIT) w->result = fastsync_sem_wait(&s);
    else w->result = fastsync_sem_clockwait(&s, w->clock, &w->deadline);
    clock_gettime(w->clock, &w->after);
    /* relaxed on purpose: main stores posted = true before its post, so a wait that took
     * that token (acquire, paired with the post's release) must read true here; a wait that
     * returned without the token, or without that synchronization, may read false. */
    w->posted_at_return = atomic_load_explicit(&posted, memory_order_relaxed);
    /* relaxed: a flag main polls; w's fields are read after the join. */
    atomic_store_explicit(&returned, true, memory_order_relaxed);
    return NULL;
}

static void one_case(int kind, bool restart)
{
    const char *sa = restart ? "SA_RESTART" : "no SA_RESTART";
    const char *what = case_name[kind];
    test_storm_init(&storm, restart);

    fastsync_sem_init(&s, 0, 0);
    /* relaxed: before the threads start */
    atomic_store_explicit(&posted, false, memory_order_relaxed);
    atomic_store_explicit(&returned, false, memory_order_relaxed);
    struct waiter w;
    memset(&w, 0, sizeof w);
    w.kind = kind;
    w.clock = kind == CASE_CLOCK_RT ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    uint64_t wait_ns = kind == CASE_TIMED_POSTED ? 3600 * 1000000000ull : 200000000u;
    w.deadline = test_deadline_on(w.clock, wait_ns);
    unsigned long caught0 = test_storm_caught(), waits0 = test_kernel_waits();

    test_watchdog_start(dump, NULL);
    pthread_t waiter = test_thread_start(waiter_main, &w);
    /* let it register before the storm starts */
    uint64_t end = test_limit_end(5000);
    /* relaxed: polls; nothing is read through them */
    while (fastsync_sem_destroy(&s) != EBUSY && !atomic_load_explicit(&returned, memory_order_relaxed) &&
           test_box_open(end))
        test_sleep_ns(100000);
    test_storm_start(&storm, waiter);

    bool early = false;
    if (kind == CASE_WAIT || kind == CASE_TIMED_POSTED) {
        test_sleep_ns(150000000);
        early = atomic_load_explicit(&returned, memory_order_relaxed); /* relaxed: a poll */
        /* relaxed: the post's release below carries it to the wait that takes the token */
        atomic_store_explicit(&posted, true, memory_order_relaxed);
        is_int(fastsync_sem_post(&s), 0, "%s, %s: post", what, sa);
    }
    /* relaxed: polls and flags; the joins order what is read afterwards */
    while (!atomic_load_explicit(&returned, memory_order_relaxed)) test_sleep_ns(1000000);
    test_storm_stop(&storm);
    test_thread_join(waiter);
    test_watchdog_stop();
    unsigned long during = test_storm_caught() - caught0, waits = test_kernel_waits() - waits0;

    diag("%s, %s: %lu signals sent, %lu handled, %lu futex waits", what, sa, test_storm_sent(&storm), during, waits);
    ok(during > 0, "%s, %s: the waiter was hit by signals", what, sa);
    /* Without SA_RESTART each signal that lands in the kernel ends the futex wait (EINTR),
     * and the semaphore must wait again. (The POSIX backend sleeps in pthread_cond_wait,
     * which absorbs signals itself: nothing to interrupt.) */
#if defined(FASTSYNC_BACKEND_LINUX)
    if (!restart) ok(waits > 1, "%s, %s: the signals interrupted the futex wait", what, sa);
#else
    if (!restart) skip("the " FASTSYNC_BACKEND " backend's sleep absorbs signals", "%s, %s: the signals interrupted the wait", what, sa);
#endif
    if (kind == CASE_WAIT || kind == CASE_TIMED_POSTED) {
        is_int(w.result, 0, "%s, %s: returned 0 (never EINTR)", what, sa);
        ok(!early && w.posted_at_return, "%s, %s: returned only after the post", what, sa);
    } else {
        is_int(w.result, ETIMEDOUT, "%s, %s: ETIMEDOUT (never EINTR)", what, sa);
        int64_t late = test_ts_ns(w.after) - test_ts_ns(w.deadline);
        ok(late >= 0, "%s, %s: not before the deadline (%+" PRId64 " us)", what, sa, late / 1000);
        ok(late < 2000000000, "%s, %s: not absurdly late (< 2 s)", what, sa);
        ok(!w.posted_at_return, "%s, %s: nothing was posted", what, sa);
    }
    is_int(fastsync_sem_getvalue(&s), 0, "%s, %s: value 0 (the one token, if any, taken once)", what, sa);
    is_int(fastsync_sem_destroy(&s), 0, "%s, %s: no waiter left registered", what, sa);
}

int main(void)
{
    test_init();
    for (int restart = 0; restart < 2; restart++)
        for (int kind = CASE_WAIT; kind <= CASE_TIMED_POSTED; kind++) one_case(kind, restart != 0);
    signal(SIGUSR1, SIG_DFL);
    return done_testing();
}
