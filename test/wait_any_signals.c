/* SPDX-License-Identifier: MIT */
/* wait_any_signals: wait_any never returns EINTR. A thread asleep in wait_any over two
 * semaphores, an event and a condvar ticket takes a storm of SIGUSR1 (pthread_kill in a loop
 * from another thread), with the handler installed with and without SA_RESTART:
 *   wait_any:                    returns 0 only after the post, with the posted semaphore's
 *                                index, its one token taken;
 *   timedwait_any / clockwait_any(REALTIME), ~200 ms: ETIMEDOUT, never before the deadline
 *                                (read on the same clock after return), not absurdly late
 *                                (< deadline + 2 s), nothing taken.
 * After each: no waiter left on either semaphore (destroy says 0), the ticket still
 * registered, the event still reset. Run with futex_waitv and with the fallback
 * (FASTSYNC_TEST_WAITV=fallback), whose slices each signal may also cut short.
 * Not on Windows (no signals to send) nor over the OS/2 double (whose ERROR_INTERRUPT the
 * os2 suite's _intr runs inject instead, as for sem_signals). */
#include "harness.h"

enum { IA, IE, IT, IB, NLIST }; /* sem a, event e, ticket (c, t), sem b */

static fastsync_sem_t a, b;
static fastsync_event_t e;
static fastsync_cond_t c;
static fastsync_cond_ticket_t t;
static fastsync_wait_entry_t list[NLIST];
static struct test_storm storm; /* SIGUSR1 at the waiter */
static _Atomic(bool) posted;     /* set just before the post */
static _Atomic(bool) returned;   /* the waiter's call has returned */

enum { CASE_WAIT, CASE_TIMEDOUT, CASE_CLOCK_RT };
static const char *const case_name[] = { "wait_any", "timedwait_any 200 ms", "clockwait_any(REALTIME) 200 ms" };

struct waiter {
    int kind;
    struct timespec deadline; /* on `clock` */
    clockid_t clock;
    int result;
    unsigned idx;
    bool posted_at_return;
    unsigned long caught;  /* signals handled from the call to its return */
    struct timespec after; /* `clock` read after the return */
};

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem a", &a);
    test_dump_sem("sem b", &b);
    test_dump_event("event e", &e);
    test_dump_cond("cond c", &c);
    test_storm_dump(&storm);
    /* relaxed: progress read for the dump only. */
    diag("posted %d, waiter returned %d", (int)atomic_load_explicit(&posted, memory_order_relaxed),
         (int)atomic_load_explicit(&returned, memory_order_relaxed));
}

static void *waiter_main(void *arg)
{
    struct waiter *w = (struct waiter *)arg;
    /* The storm first (on a loaded machine its thread has been seen to start only after a
     * 200 ms wait was over), then the wait, its deadline from then. Polled with
     * sched_yield, not a sleep: a nanosleep that a signal interrupts goes on with the time
     * it has left, and when the next signal is pending again by then it sleeps no time at
     * all, for ever (seen: 20 s). (test_storm_sent/caught: relaxed polls and counts.) */
    while (test_storm_sent(&storm) == 0) sched_yield();
    unsigned long caught0 = test_storm_caught();
    w->deadline = test_deadline_on(w->clock, 200000000u);
    if (w->kind == CASE_WAIT) w->result = fastsync_wait_any(list, NLIST, &w->idx);
    else w->result = fastsync_clockwait_any(list, NLIST, &w->idx, w->clock, &w->deadline);
    clock_gettime(w->clock, &w->after);
    w->caught = test_storm_caught() - caught0;
    /* relaxed on purpose: main stores posted = true before its post, so a wait that took
     * that token (acquire, paired with the post's release) must read true here. */
    w->posted_at_return = atomic_load_explicit(&posted, memory_order_relaxed);
    /* relaxed: a flag main polls; w's fields are read after the join. */
    atomic_store_explicit(&returned, true, memory_order_relaxed);
    return NULL;
}

static void one_case(int kind, bool restart)
{
    const char *sa = restart ? "SA_RESTART" : "no SA_RESTART";
    const char *what = case_name[kind];
    test_storm_init(&storm, restart); /* sent 0 before the waiter polls it */

    fastsync_sem_init(&a, 0, 0);
    fastsync_sem_init(&b, 0, 0);
    fastsync_event_init(&e, false, 0);
    fastsync_cond_init(&c, 0);
    fastsync_cond_register(&c, &t);
    list[IA] = fastsync_wait_sem(&a);
    list[IE] = fastsync_wait_event(&e);
    list[IT] = fastsync_wait_ticket(&c, &t);
    list[IB] = fastsync_wait_sem(&b);
    /* relaxed: before the threads start */
    atomic_store_explicit(&posted, false, memory_order_relaxed);
    atomic_store_explicit(&returned, false, memory_order_relaxed);
    struct waiter w;
    memset(&w, 0, sizeof w);
    w.kind = kind;
    w.idx = 99;
    w.clock = kind == CASE_CLOCK_RT ? CLOCK_REALTIME : CLOCK_MONOTONIC;

    test_watchdog_start(dump, NULL);
    pthread_t waiter = test_thread_start(waiter_main, &w);
    test_storm_start(&storm, waiter);

    bool early = false;
    if (kind == CASE_WAIT) {
        /* until it is registered on both semaphores, then 150 ms, and until signals have
         * been handled since it registered (a time box: the check below says if none) */
        uint64_t end = test_limit_end(10000);
        /* relaxed: polls */
        while ((test_sem_waiters(&a) == 0 || test_sem_waiters(&b) == 0) && test_box_open(end))
            test_sleep_ns(100000);
        unsigned long caught0 = test_storm_caught();
        test_sleep_ns(150000000);
        while (test_storm_caught() - caught0 < 10 && test_box_open(end))
            test_sleep_ns(1000000);
        early = atomic_load_explicit(&returned, memory_order_relaxed); /* relaxed: a poll */
        /* relaxed: the post's release below carries it to the wait that takes the token */
        atomic_store_explicit(&posted, true, memory_order_relaxed);
        is_int(fastsync_sem_post(&b), 0, "%s, %s: post the second semaphore", what, sa);
    }
    /* relaxed: polls and flags; the joins order what is read afterwards */
    while (!atomic_load_explicit(&returned, memory_order_relaxed)) test_sleep_ns(1000000);
    test_storm_stop(&storm);
    test_thread_join(waiter);
    test_watchdog_stop();
    diag("%s, %s: %lu signals sent, %lu handled during the wait", what, sa, test_storm_sent(&storm), w.caught);
    ok(w.caught > 0, "%s, %s: the waiter was hit by signals during its wait", what, sa);
    if (kind == CASE_WAIT) {
        is_int(w.result, 0, "%s, %s: returned 0 (never EINTR)", what, sa);
        is_int(w.idx, IB, "%s, %s: ... with the posted semaphore's index", what, sa);
        ok(!early && w.posted_at_return, "%s, %s: returned only after the post", what, sa);
    } else {
        is_int(w.result, ETIMEDOUT, "%s, %s: ETIMEDOUT (never EINTR)", what, sa);
        int64_t late = test_ts_ns(w.after) - test_ts_ns(w.deadline);
        ok(late >= 0, "%s, %s: not before the deadline (%+" PRId64 " us)", what, sa, late / 1000);
        ok(late < 2000000000, "%s, %s: not absurdly late (< 2 s)", what, sa);
        ok(!w.posted_at_return, "%s, %s: nothing was posted", what, sa);
    }
    ok(fastsync_sem_getvalue(&a) == 0 && fastsync_sem_getvalue(&b) == 0,
       "%s, %s: no token left (the one posted, if any, taken once)", what, sa);
    ok(fastsync_sem_destroy(&a) == 0 && fastsync_sem_destroy(&b) == 0, "%s, %s: no waiter left on either semaphore",
       what, sa);
    ok(!fastsync_event_is_set(&e), "%s, %s: the event still reset", what, sa);
    is_int(test_cond_waiters(&c), 1, "%s, %s: the ticket still registered", what, sa);
    fastsync_cond_cancel(&c, &t);
}

int main(void)
{
    test_init();
    for (int restart = 0; restart < 2; restart++)
        for (int kind = CASE_WAIT; kind <= CASE_CLOCK_RT; kind++) one_case(kind, restart != 0);
    signal(SIGUSR1, SIG_DFL);
    return done_testing();
}
