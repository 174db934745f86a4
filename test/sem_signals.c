/* SPDX-License-Identifier: MIT */
/* sem_signals: a waiter blocked in the kernel under a storm of SIGUSR1 (pthread_kill in a
 * loop from another thread), with the handler installed with and without SA_RESTART.
 *   wait:       returns 0 only after the post, the token is consumed exactly once;
 *   timedwait / clockwait(REALTIME), ~200 ms: ETIMEDOUT, never before the deadline (read on
 *               the same clock after return), not absurdly late (< deadline + 2 s), value 0;
 *   timedwait with a far deadline: returns 0 only after the post.
 * After each: no waiter left registered (destroy == 0). Waits never return EINTR. */
#include "harness.h"

#include <signal.h>

static fastsync_sem_t s;
static _Atomic(unsigned long) caught;   /* SIGUSR1 handled, in any thread */
static _Atomic(bool) posted;            /* set just before the post */
static _Atomic(bool) returned;          /* the waiter's call has returned */
static _Atomic(bool) storm_stop;
static _Atomic(unsigned long) sent;

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

static void on_usr1(int sig)
{
    (void)sig;
    /* relaxed: a count, read after the threads are joined. (Lock-free: signal-safe.) */
    atomic_fetch_add_explicit(&caught, 1, memory_order_relaxed);
}

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem", &s);
    /* relaxed: progress read for the dump only. */
    diag("signals sent %lu, caught %lu; posted %d, waiter returned %d",
         atomic_load_explicit(&sent, memory_order_relaxed), atomic_load_explicit(&caught, memory_order_relaxed),
         (int)atomic_load_explicit(&posted, memory_order_relaxed),
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

static void *storm_main(void *arg)
{
    pthread_t target = *(pthread_t *)arg;
    uint64_t rng = test_stream(77);
    unsigned long n = 0;
    /* relaxed: only ends the loop; main joins this thread before anything depends on it. */
    while (!atomic_load_explicit(&storm_stop, memory_order_relaxed)) {
        int r = pthread_kill(target, SIGUSR1);
        if (r != 0) bail("pthread_kill: %s", strerror(r));
        atomic_store_explicit(&sent, ++n, memory_order_relaxed);
        uint64_t x = test_rand(&rng) % 8;
        if (x == 0) test_sleep_ns(50000);
        else if (x < 4) sched_yield();
    }
    return NULL;
}

static void one_case(int kind, bool restart)
{
    const char *sa = restart ? "SA_RESTART" : "no SA_RESTART";
    const char *what = case_name[kind];
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigemptyset(&act.sa_mask);
    act.sa_flags = restart ? SA_RESTART : 0;
    if (sigaction(SIGUSR1, &act, NULL) != 0) bail("sigaction: %s", strerror(errno));

    fastsync_sem_init(&s, 0, 0);
    /* relaxed: before the threads start */
    atomic_store_explicit(&posted, false, memory_order_relaxed);
    atomic_store_explicit(&returned, false, memory_order_relaxed);
    atomic_store_explicit(&storm_stop, false, memory_order_relaxed);
    atomic_store_explicit(&sent, 0, memory_order_relaxed);
    struct waiter w;
    memset(&w, 0, sizeof w);
    w.kind = kind;
    w.clock = kind == CASE_CLOCK_RT ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    uint64_t wait_ns = kind == CASE_TIMED_POSTED ? 3600 * 1000000000ull : 200000000u;
    w.deadline = test_deadline_on(w.clock, wait_ns);
    unsigned long caught0 = atomic_load_explicit(&caught, memory_order_relaxed), waits0 = test_kernel_waits();

    test_watchdog_start(dump, NULL);
    pthread_t waiter = test_thread_start(waiter_main, &w);
    /* let it register before the storm starts */
    uint64_t end = test_box_end(5000);
    /* relaxed: polls; nothing is read through them */
    while (fastsync_sem_destroy(&s) != EBUSY && !atomic_load_explicit(&returned, memory_order_relaxed) &&
           test_box_open(end))
        test_sleep_ns(100000);
    pthread_t storm = test_thread_start(storm_main, &waiter);

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
    atomic_store_explicit(&storm_stop, true, memory_order_relaxed);
    test_thread_join(storm);
    test_thread_join(waiter);
    test_watchdog_stop();
    unsigned long during = atomic_load_explicit(&caught, memory_order_relaxed) - caught0, waits = test_kernel_waits() - waits0;

    diag("%s, %s: %lu signals sent, %lu handled, %lu futex waits", what, sa,
         atomic_load_explicit(&sent, memory_order_relaxed), during, waits);
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
