/* SPDX-License-Identifier: MIT */
/* event_edge: the edges of the event's state machine.
 *  - A thread blocked in wait when set is called returns, even if the setter resets the
 *    event at once, before the sleeper runs (fastsync.h's generation field).
 *  - A waiter that starts after that reset blocks (a timedwait times out).
 *  - reset on an event with sleepers (BUSY) wakes nobody and makes no syscall (over the
 *    OS/2 backend, whose sleepers wait again after ERROR_INTERRUPT: no wake); the next set
 *    still wakes them all.
 *  - Several resetters (fastsync.h's "Intended use"): a reset by B after a set undoes it for
 *    A, which reset and checked before that set and has not waited yet (A's wait times out
 *    with its condition true); with the reset under the condition's lock, made only on
 *    finding the condition false, B sees the news and does not reset, and A's wait returns.
 *    The interleaving is played in one thread: the event keeps no thread identity, so the
 *    calls' order is all that matters.
 *  - The generation field wraps around without losing a sleeper or the shared flag
 *    (white-box: the test writes the word's largest generation itself). */
#include "harness.h"

#define NSLEEPERS 4

static struct {
    fastsync_event_t ev;
    struct test_sleeper s[NSLEEPERS];
    const char *phase;
} g;

/* How long a timed sleeper waits: long enough never to expire in a passing run, short
 * enough that a lost wakeup fails the test in seconds rather than at the watchdog. */
static uint64_t timed_ns(void) { return (uint64_t)(5e9 * test_scale_up()); }

static int returned(void) { return test_sleepers_returned(g.s, NSLEEPERS); }

static void dump(void *unused)
{
    (void)unused;
    diag("phase: %s", g.phase ? g.phase : "-");
    test_dump_event("event", &g.ev);
    test_sleepers_dump(g.s, NSLEEPERS);
}

/* Starts NSLEEPERS threads blocking on g.ev and returns once every one looks asleep (see
 * test_event_asleep) and had time to get into the kernel. */
static void start_sleepers(int kind, const char *label)
{
    unsigned long w0 = test_kernel_waits();
    for (int i = 0; i < NSLEEPERS; i++) test_sleeper_start(&g.s[i], &g.ev, kind, timed_ns());
    uint64_t end = test_limit_end(10000);
    while (test_box_open(end) && !test_event_asleep(&g.ev, NSLEEPERS, w0)) test_sleep_ns(200000);
    ok(test_event_asleep(&g.ev, NSLEEPERS, w0), "%s: all %d sleepers called futex wait", label, NSLEEPERS);
    test_sleep_ns(10000000);
    is_int(returned(), 0, "%s: none returned yet", label);
}

/* Joins the sleepers; the number that returned 0. */
static int join_sleepers(void) { return test_sleepers_join(g.s, NSLEEPERS); }

struct late { int ret; uint64_t deadline, after; };

static void *late_main(void *p)
{
    struct late *l = (struct late *)p;
    struct timespec d = fastsync_deadline_in(20000000);
    l->deadline = (uint64_t)d.tv_sec * 1000000000u + (uint64_t)d.tv_nsec;
    l->ret = fastsync_event_timedwait(&g.ev, &d);
    l->after = test_now_ns();
    return NULL;
}

/* set immediately followed by reset while NSLEEPERS sleep: all must return 0. */
static bool set_then_reset_round(int round, int flags, int kind)
{
    char label[96];
    snprintf(label, sizeof label, "set+reset round %d (%s, %s)", round, flags ? "shared" : "private",
             kind == TEST_SLEEP_WAIT ? "wait" : "timedwait 5 s");
    g.phase = "set then reset with sleepers";
    fastsync_event_init(&g.ev, false, flags);
    start_sleepers(kind, label);
    unsigned long k0 = test_kernel_wakes();
    fastsync_event_set(&g.ev);
    fastsync_event_reset(&g.ev);
    int zero = join_sleepers();
    bool pass = is_int(zero, NSLEEPERS, "%s: every sleeper returned 0 although the event was reset at once", label);
    is_int(test_kernel_wakes() - k0, 1, "%s: one FUTEX_WAKE", label);
    ok(!fastsync_event_is_set(&g.ev), "%s: the event is reset", label);

    /* a waiter that starts after the reset blocks: here and in a new thread */
    g.phase = "waiters after the reset";
    struct late l;
    struct timespec d = fastsync_deadline_in(20000000);
    uint64_t dn = (uint64_t)d.tv_sec * 1000000000u + (uint64_t)d.tv_nsec;
    is_int(fastsync_event_timedwait(&g.ev, &d), ETIMEDOUT, "%s: a timedwait started after the reset times out", label);
    ok(test_now_ns() >= dn, "%s: ... not early", label);
    test_thread_join(test_thread_start(late_main, &l));
    is_int(l.ret, ETIMEDOUT, "%s: a new thread's timedwait after the reset times out", label);
    ok(l.after >= l.deadline, "%s: ... not early", label);
    is_int(fastsync_event_destroy(&g.ev), 0, "%s: destroy: no waiter left in the event", label);
    return pass;
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);

    /* timed sleepers first: a lost wakeup shows as ETIMEDOUT within seconds; the untimed
     * rounds then run only if those passed (else they would hang until the watchdog) */
    bool pass = true;
    for (int round = 0; round < 6; round++)
        pass &= set_then_reset_round(round, round % 2 ? TEST_SHARED : 0, TEST_SLEEP_TIMED);
    for (int round = 6; round < 12; round++) {
        if (pass) set_then_reset_round(round, round % 2 ? TEST_SHARED : 0, TEST_SLEEP_WAIT);
        else skip("the timed rounds lost sleepers", "set+reset round %d (wait)", round);
    }

    /* reset while sleepers are blocked (BUSY): nobody wakes, no syscall; set wakes them */
    for (int flags = 0; flags <= TEST_SHARED; flags++) {
        const char *label = flags ? "reset on BUSY (shared)" : "reset on BUSY (private)";
        g.phase = label;
        fastsync_event_init(&g.ev, false, flags);
        start_sleepers(TEST_SLEEP_TIMED, label);
#if defined(__OS2__)
        /* The sleepers wait again after each ERROR_INTERRUPT (the _intr runs), so only wakes
         * are counted here. */
        unsigned long s0 = test_kernel_wakes();
        fastsync_event_reset(&g.ev);
        fastsync_event_reset(&g.ev);
        is_int(test_kernel_wakes() - s0, 0, "%s: reset makes no wake", label);
#else
        unsigned long s0 = test_kernel_waits() + test_kernel_wakes();
        fastsync_event_reset(&g.ev);
        fastsync_event_reset(&g.ev);
        is_int(test_kernel_waits() + test_kernel_wakes() - s0, 0, "%s: reset makes no syscall", label);
#endif
        test_sleep_ns(10000000);
        is_int(returned(), 0, "%s: nobody returned", label);
        unsigned long k0 = test_kernel_wakes();
        fastsync_event_set(&g.ev);
        is_int(join_sleepers(), NSLEEPERS, "%s: the next set woke all %d", label, NSLEEPERS);
        is_int(test_kernel_wakes() - k0, 1, "%s: with one FUTEX_WAKE", label);
        is_int(fastsync_event_destroy(&g.ev), 0, "%s: destroy: no waiter left in the event", label);
    }

    /* several resetters: the hazard the manual names, then its recipe */
    for (int flags = 0; flags <= TEST_SHARED; flags++) {
        char label[64];
        snprintf(label, sizeof label, "several resetters (%s)", flags ? "shared" : "private");
        g.phase = label;
        struct timespec d;
        uint64_t dn;
        bool news = false;
        pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        fastsync_event_init(&g.ev, false, flags);
        fastsync_event_reset(&g.ev);        /* A: reset, then finds no news */
        news = true;                        /* the producer publishes ... */
        fastsync_event_set(&g.ev);          /* ... and sets */
        fastsync_event_reset(&g.ev);        /* B: reset, then sees the news */
        d = fastsync_deadline_in(20000000);
        dn = (uint64_t)test_ts_ns(d);
        is_int(fastsync_event_timedwait(&g.ev, &d), ETIMEDOUT,
               "%s: reset, check, wait by each: B's reset undid the set for A, whose wait times out", label);
        ok(test_now_ns() >= dn, "%s: ... not early", label);

        news = false;
        pthread_mutex_lock(&lock);          /* A: finds nothing under the lock, resets there */
        if (!news) fastsync_event_reset(&g.ev);
        pthread_mutex_unlock(&lock);
        pthread_mutex_lock(&lock);          /* the producer publishes under the lock ... */
        news = true;
        pthread_mutex_unlock(&lock);
        fastsync_event_set(&g.ev);          /* ... then sets */
        int b_reset = 0;
        pthread_mutex_lock(&lock);          /* B: sees the news, so does not reset */
        if (!news) {
            fastsync_event_reset(&g.ev);
            b_reset = 1;
        }
        pthread_mutex_unlock(&lock);
        is_int(b_reset, 0, "%s: with the reset under the lock, B saw the news and did not reset", label);
        d = fastsync_deadline_in(20000000);
        is_int(fastsync_event_timedwait(&g.ev, &d), 0, "%s: ... and A's wait returns at once", label);
        pthread_mutex_destroy(&lock);
        fastsync_event_destroy(&g.ev);
    }

    /* generation wrap-around (white-box: writes the largest generation into the word) */
    for (int flags = 0; flags <= TEST_SHARED; flags++) {
        const char *label = flags ? "generation wrap (shared)" : "generation wrap (private)";
        g.phase = label;
        fastsync_event_init(&g.ev, false, flags);
        /* relaxed (load and store): no other thread runs yet; thread creation publishes it. */
        uint32_t w = fastsync__load(&g.ev.state, memory_order_relaxed);
        fastsync__store(&g.ev.state, w | FASTSYNC__EV_GEN, memory_order_relaxed);
        start_sleepers(TEST_SLEEP_TIMED, label);
        fastsync_event_set(&g.ev);
        fastsync_event_reset(&g.ev);
        is_int(join_sleepers(), NSLEEPERS, "%s: set+reset at the last generation: all %d returned 0", label,
               NSLEEPERS);
        uint32_t after = fastsync__load(&g.ev.state, memory_order_relaxed); /* relaxed: all joined */
        is_int(after & FASTSYNC__EV_GEN, 0, "%s: the generation wrapped to 0", label);
        is_int(after & FASTSYNC__EV_SHARED, flags ? FASTSYNC__EV_SHARED : 0, "%s: the shared flag survived", label);
        ok(!fastsync_event_is_set(&g.ev), "%s: reset", label);
        start_sleepers(TEST_SLEEP_TIMED, label);
        fastsync_event_set(&g.ev);
        is_int(join_sleepers(), NSLEEPERS, "%s: the next set wakes all %d", label, NSLEEPERS);
        fastsync_event_destroy(&g.ev);
    }

    test_watchdog_stop();
    return done_testing();
}
