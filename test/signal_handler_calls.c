/* SPDX-License-Identifier: MIT */
/* signal_handler_calls: the calls the manual names async-signal-safe (Linux backend), made
 * from a SIGUSR1 handler.
 *   1. The handler interrupts a thread asleep in a wait and ends that very wait: post (the
 *      thread in sem_wait), event_set (event_wait), cond_signal (cond_await on a ticket),
 *      with and without SA_RESTART. The wait returns 0, the token is taken once, nothing is
 *      left registered.
 *   2. A storm of signals at a thread that posts, takes, sets and signals the same objects
 *      in a loop, its handler doing the same between any two of its instructions (post,
 *      post_n, trywait, getvalue, event_set, event_is_set, cond_signal, cond_broadcast,
 *      deadline_in; init, trywait and destroy of a semaphore of its own; init, reset and
 *      destroy of an event of its own), while three threads sleep on them: a consumer that
 *      takes K tokens, an event waiter and a ticket waiter that each wait until the
 *      handler has set or signalled K times. Exact total: the
 *      semaphore's final value is every token posted minus every token taken; each call
 *      returned what it should and kept errno; none blocked (else the watchdog fails it).
 * The POSIX backend's post, set and signal lock its wait table, which the interrupted thread
 * may hold (the manual says so): skipped there. */
#include "harness.h"

static struct test_storm storm;
static int verdict_k; /* part 2: what each waiter waits for */

/* ---- 1. the handler ends the wait it interrupts ---- */
enum { ONE_SEM, ONE_EVENT, ONE_COND };
static const char *const one_name[] = { "post ends sem_wait", "event_set ends event_wait",
                                        "cond_signal ends cond_await" };
static int one_kind;
static fastsync_sem_t s1;
static fastsync_event_t e1;
static fastsync_cond_t c1;
static fastsync_cond_ticket_t t1;
static _Atomic(int) one_ret;        /* what the handler's call returned */
static _Atomic(bool) one_returned;  /* the waiter's wait has returned */

static void one_action(void)
{
    int r = 0;
    if (one_kind == ONE_SEM) r = fastsync_sem_post(&s1);
    else if (one_kind == ONE_EVENT) fastsync_event_set(&e1);
    else r = fastsync_cond_signal(&c1);
    /* relaxed: read after the waiter is joined */
    atomic_store_explicit(&one_ret, r, memory_order_relaxed);
}

static void *one_waiter(void *arg)
{
    int *result = (int *)arg;
    *result = 0;
    if (one_kind == ONE_SEM) *result = fastsync_sem_wait(&s1);
    else if (one_kind == ONE_EVENT) fastsync_event_wait(&e1);
    else *result = fastsync_cond_await(&c1, &t1);
    /* relaxed: a flag main polls; the join orders the result */
    atomic_store_explicit(&one_returned, true, memory_order_relaxed);
    return NULL;
}

static void one_dump(void *unused)
{
    (void)unused;
    test_dump_sem("s1", &s1);
    test_dump_event("e1", &e1);
    test_dump_cond("c1", &c1);
    diag("signals caught %lu, handler's call returned %d", test_storm_caught(),
         atomic_load_explicit(&one_ret, memory_order_relaxed)); /* relaxed: a dump */
}

static void one_case(int kind, bool restart)
{
    const char *what = one_name[kind], *sa = restart ? "SA_RESTART" : "no SA_RESTART";
    one_kind = kind;
    fastsync_sem_init(&s1, 0, 0);
    fastsync_event_init(&e1, false, 0);
    fastsync_cond_init(&c1, 0);
    if (kind == ONE_COND) fastsync_cond_register(&c1, &t1);
    /* relaxed: before the threads start */
    atomic_store_explicit(&one_ret, -1, memory_order_relaxed);
    atomic_store_explicit(&one_returned, false, memory_order_relaxed);
    test_storm_action = one_action;
    test_storm_init(&storm, restart);
    unsigned long caught0 = test_storm_caught(), waits0 = test_kernel_waits();

    test_watchdog_start(one_dump, NULL);
    int result = -1;
    pthread_t w = test_thread_start(one_waiter, &result);
    /* until it has gone to sleep: its first kernel wait, and then some time to get there */
    uint64_t end = test_limit_end(5000);
    while (test_kernel_waits() == waits0 && test_box_open(end)) test_sleep_ns(100000);
    test_sleep_ns(20000000);
    /* relaxed: a poll */
    bool early = atomic_load_explicit(&one_returned, memory_order_relaxed);
    int kr = pthread_kill(w, SIGUSR1);
    test_thread_join(w);
    test_watchdog_stop();

    ok(test_kernel_waits() > waits0 && !early, "%s, %s: the waiter slept until the signal", what, sa);
    is_int(kr, 0, "%s, %s: pthread_kill", what, sa);
    ok(test_storm_caught() - caught0 == 1, "%s, %s: the handler ran once in the waiter (%lu)", what, sa,
       test_storm_caught() - caught0);
    is_int(atomic_load_explicit(&one_ret, memory_order_relaxed), 0, "%s, %s: the handler's call returned 0", what, sa);
    is_int(result, 0, "%s, %s: the interrupted wait returned 0", what, sa);
    if (kind == ONE_SEM) is_int((int)fastsync_sem_getvalue(&s1), 0, "%s, %s: the token taken once", what, sa);
    if (kind == ONE_EVENT) ok(fastsync_event_is_set(&e1), "%s, %s: the event is set", what, sa);
    ok(fastsync_sem_destroy(&s1) == 0 && fastsync_event_destroy(&e1) == 0 && fastsync_cond_destroy(&c1) == 0,
       "%s, %s: nothing left registered", what, sa);
    test_storm_action = NULL;
}

/* ---- 2. a storm at a thread that uses the same objects ---- */
static fastsync_sem_t s;
static fastsync_event_t e;
static fastsync_cond_t c;
/* relaxed (all): counts and flags, polled, or read after the threads are joined (the joins
 * order them); the objects' own calls order what the waiters conclude. */
static _Atomic(unsigned long) h_runs, h_posted, h_taken, h_sets, h_signals, h_bad_errno, h_bad_ret;
static _Atomic(unsigned long) w_posted, w_taken, w_rounds;
static _Atomic(bool) stop_worker;
static _Atomic(int) waiters_done;

static void count(_Atomic(unsigned long) *n, unsigned long v) { atomic_fetch_add_explicit(n, v, memory_order_relaxed); }
static unsigned long get(_Atomic(unsigned long) *n) { return atomic_load_explicit(n, memory_order_relaxed); }

/* Each call the handler makes, by the bit it sets in h_bad_ret when it returns what it
 * should not. */
enum { BAD_POST, BAD_POST_N, BAD_GETVALUE, BAD_SIGNAL, BAD_DEADLINE, BAD_OWN_INIT,
       BAD_OWN_TRYWAIT, BAD_OWN_DESTROY, BAD_OWN_EVENT };

static void storm_action(void)
{
    errno = EILSEQ; /* no call may change it */
    unsigned long r = atomic_fetch_add_explicit(&h_runs, 1, memory_order_relaxed);
    unsigned long bad = 0;
    if (r % 3 == 2) {
        if (fastsync_sem_post_n(&s, 2) != 0) bad |= 1u << BAD_POST_N;
        count(&h_posted, 2);
    } else {
        if (fastsync_sem_post(&s) != 0) bad |= 1u << BAD_POST;
        count(&h_posted, 1);
    }
    if (r % 5 == 0 && fastsync_sem_trywait(&s) == 0) count(&h_taken, 1);
    if (fastsync_sem_getvalue(&s) > FASTSYNC_SEM_VALUE_MAX) bad |= 1u << BAD_GETVALUE;
    count(&h_sets, 1); /* counted before the set: the event waiter reads it after its reset */
    fastsync_event_set(&e);
    (void)fastsync_event_is_set(&e); /* (either answer: the event waiter resets it) */
    count(&h_signals, 1); /* counted before the signal: the ticket waiter reads it registered */
    if ((r & 1 ? fastsync_cond_broadcast(&c) : fastsync_cond_signal(&c)) != 0) bad |= 1u << BAD_SIGNAL;
    struct timespec d = fastsync_deadline_in(1000000);
    if (d.tv_nsec < 0 || d.tv_nsec >= 1000000000) bad |= 1u << BAD_DEADLINE;
    fastsync_sem_t own;
    if (fastsync_sem_init(&own, 1, 0) != 0) bad |= 1u << BAD_OWN_INIT;
    if (fastsync_sem_trywait(&own) != 0) bad |= 1u << BAD_OWN_TRYWAIT;
    if (fastsync_sem_destroy(&own) != 0) bad |= 1u << BAD_OWN_DESTROY;
    fastsync_event_t own_e; /* reset: on an event of its own (on e it would hide a set from the waiter) */
    if (fastsync_event_init(&own_e, true, 0) != 0) bad |= 1u << BAD_OWN_EVENT;
    fastsync_event_reset(&own_e);
    if (fastsync_event_is_set(&own_e) || fastsync_event_destroy(&own_e) != 0) bad |= 1u << BAD_OWN_EVENT;
    if (bad) atomic_fetch_or_explicit(&h_bad_ret, bad, memory_order_relaxed);
    if (errno != EILSEQ) count(&h_bad_errno, 1);
}

/* The thread the signals land in: the same objects, from outside a handler. */
static void *worker(void *unused)
{
    (void)unused;
    unsigned long n = 0;
    while (!atomic_load_explicit(&stop_worker, memory_order_relaxed)) {
        if (fastsync_sem_post(&s) == 0) count(&w_posted, 1);
        if (fastsync_sem_trywait(&s) == 0) count(&w_taken, 1);
        if (n % 16 == 0) {
            fastsync_event_set(&e);
            fastsync_cond_signal(&c);
        }
        /* now and then an intercepted call: ThreadSanitizer runs a handler only at one */
        if (++n % 64 == 0) test_sleep_ns(1000);
        atomic_store_explicit(&w_rounds, n, memory_order_relaxed);
    }
    return NULL;
}

static void *consumer(void *unused)
{
    (void)unused;
    for (int i = 0; i < verdict_k; i++)
        if (fastsync_sem_wait(&s) != 0) bail("sem_wait failed");
    atomic_fetch_add_explicit(&waiters_done, 1, memory_order_relaxed);
    return NULL;
}

static void *event_waiter(void *unused)
{
    (void)unused;
    for (;;) {
        fastsync_event_reset(&e);
        if (get(&h_sets) >= (unsigned long)verdict_k) break;
        fastsync_event_wait(&e);
    }
    atomic_fetch_add_explicit(&waiters_done, 1, memory_order_relaxed);
    return NULL;
}

static void *ticket_waiter(void *unused)
{
    (void)unused;
    fastsync_cond_ticket_t t;
    for (;;) {
        fastsync_cond_register(&c, &t);
        if (get(&h_signals) >= (unsigned long)verdict_k) {
            fastsync_cond_cancel(&c, &t);
            break;
        }
        if (fastsync_cond_await(&c, &t) != 0) bail("cond_await failed");
    }
    atomic_fetch_add_explicit(&waiters_done, 1, memory_order_relaxed);
    return NULL;
}

static void storm_dump(void *unused)
{
    (void)unused;
    test_dump_sem("s", &s);
    test_dump_event("e", &e);
    test_dump_cond("c", &c);
    test_storm_dump(&storm);
    diag("handler: %lu runs, %lu posted, %lu taken, %lu sets, %lu signals; worker: %lu rounds, "
         "%lu posted, %lu taken; waiters done %d of 3",
         get(&h_runs), get(&h_posted), get(&h_taken), get(&h_sets), get(&h_signals), get(&w_rounds),
         get(&w_posted), get(&w_taken), atomic_load_explicit(&waiters_done, memory_order_relaxed));
}

static void storm_case(bool restart)
{
    const char *sa = restart ? "SA_RESTART" : "no SA_RESTART";
    fastsync_sem_init(&s, 0, 0);
    fastsync_event_init(&e, false, 0);
    fastsync_cond_init(&c, 0);
    _Atomic(unsigned long) *all[] = { &h_runs, &h_posted, &h_taken, &h_sets, &h_signals,
                                      &h_bad_errno, &h_bad_ret, &w_posted, &w_taken, &w_rounds };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) atomic_store_explicit(all[i], 0, memory_order_relaxed);
    atomic_store_explicit(&stop_worker, false, memory_order_relaxed);
    atomic_store_explicit(&waiters_done, 0, memory_order_relaxed);
    test_storm_action = storm_action;
    test_storm_init(&storm, restart);

    test_watchdog_start(storm_dump, NULL);
    pthread_t w = test_thread_start(worker, NULL);
    pthread_t waiters[3] = { test_thread_start(consumer, NULL), test_thread_start(event_waiter, NULL),
                             test_thread_start(ticket_waiter, NULL) };
    test_storm_start(&storm, w);
    while (atomic_load_explicit(&waiters_done, memory_order_relaxed) < 3) test_sleep_ns(1000000);
    test_storm_stop(&storm);
    atomic_store_explicit(&stop_worker, true, memory_order_relaxed);
    test_thread_join(w);
    for (int i = 0; i < 3; i++) test_thread_join(waiters[i]);
    test_watchdog_stop();
    test_storm_action = NULL;

    diag("storm, %s: %lu signals sent, handler ran %lu times (posted %lu, took %lu); worker %lu rounds "
         "(posted %lu, took %lu); consumer took %d",
         sa, test_storm_sent(&storm), get(&h_runs), get(&h_posted), get(&h_taken), get(&w_rounds),
         get(&w_posted), get(&w_taken), verdict_k);
    ok(get(&h_runs) >= (unsigned long)verdict_k, "storm, %s: the handler ran at least %d times", sa, verdict_k);
    long expect = (long)(get(&w_posted) + get(&h_posted)) - (long)(get(&w_taken) + get(&h_taken)) - verdict_k;
    is_int((int)fastsync_sem_getvalue(&s), (int)expect, "storm, %s: value = posted - taken, to the token", sa);
    ok(get(&h_bad_ret) == 0, "storm, %s: every call in the handler returned what it should (failed: mask %#lx)", sa,
       get(&h_bad_ret));
    is_int((int)get(&h_bad_errno), 0, "storm, %s: no call in the handler changed errno", sa);
    ok(fastsync_sem_destroy(&s) == 0 && fastsync_event_destroy(&e) == 0 && fastsync_cond_destroy(&c) == 0,
       "storm, %s: nothing left registered", sa);
}

int main(void)
{
    test_init();
#if !defined(FASTSYNC_BACKEND_LINUX)
    skip_all("the " FASTSYNC_BACKEND " backend's post, set and signal are not async-signal-safe (the manual)");
#endif
    verdict_k = (int)(2000 * test_scale());
    if (verdict_k < 100) verdict_k = 100;
    for (int restart = 0; restart < 2; restart++)
        for (int kind = ONE_SEM; kind <= ONE_COND; kind++) {
#if FASTSYNC__TSAN
            /* ThreadSanitizer defers a handler until the thread next enters a call it
             * intercepts; a thread asleep in a raw futex call (restarted by the kernel under
             * SA_RESTART) may never do so, and sleeps on: the case would hang on the tool. */
            skip("ThreadSanitizer defers signal handlers past a raw futex sleep", "%s", one_name[kind]);
            continue;
#endif
            one_case(kind, restart != 0);
        }
    for (int restart = 0; restart < 2; restart++) storm_case(restart != 0);
    signal(SIGUSR1, SIG_DFL);
    return done_testing();
}
