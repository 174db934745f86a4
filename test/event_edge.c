/* SPDX-License-Identifier: MIT */
/* event_edge: the edges of the event's state machine.
 *  - A thread blocked in wait when set is called returns, even if the setter resets the
 *    event at once, before the sleeper runs (fastsync.h's generation field).
 *  - A waiter that starts after that reset blocks (a timedwait times out).
 *  - reset on an event with sleepers (BUSY) wakes nobody and makes no syscall; the next set
 *    still wakes them all.
 *  - The generation field wraps around without losing a sleeper or the shared flag
 *    (white-box: the test writes the word's largest generation itself). */
#include "harness.h"

#define NSLEEPERS 4

enum { KIND_WAIT, KIND_TIMED };
enum { ST_IDLE, ST_STARTING, ST_WAITING, ST_RETURNED };
static const char *const st_name[] = { "idle", "starting", "inside the wait", "returned" };

struct sleeper {
    int kind;
    _Atomic int state; /* ST_*: progress, for the checks and the dump */
    int ret;           /* written before state becomes ST_RETURNED */
};

static struct {
    fastsync_event_t ev;
    struct sleeper s[NSLEEPERS];
    pthread_t t[NSLEEPERS];
    const char *phase;
} g;

/* How long a timed sleeper waits: long enough never to expire in a passing run, short
 * enough that a lost wakeup fails the test in seconds rather than at the watchdog. */
static uint64_t timed_ns(void) { return (uint64_t)(5e9 * (test_scale() > 1 ? test_scale() : 1)); }

static void *sleeper_main(void *p)
{
    struct sleeper *s = (struct sleeper *)p;
    /* relaxed: progress for the dump; the result is published by the release store below. */
    atomic_store_explicit(&s->state, ST_WAITING, memory_order_relaxed);
    int r = 0;
    if (s->kind == KIND_WAIT) {
        fastsync_event_wait(&g.ev);
    } else {
        struct timespec d = fastsync_deadline_in(timed_ns());
        r = fastsync_event_timedwait(&g.ev, &d);
    }
    s->ret = r;
    /* release: pairs with the acquire load in returned(). */
    atomic_store_explicit(&s->state, ST_RETURNED, memory_order_release);
    return NULL;
}

static int returned(void)
{
    int n = 0;
    for (int i = 0; i < NSLEEPERS; i++)
        /* acquire: pairs with the release store in sleeper_main (ret is read after it). */
        n += atomic_load_explicit(&g.s[i].state, memory_order_acquire) == ST_RETURNED;
    return n;
}

static void dump(void *unused)
{
    (void)unused;
    diag("phase: %s; event word 0x%08" PRIx32, g.phase ? g.phase : "-",
         atomic_load_explicit(&g.ev.state, memory_order_relaxed));
    for (int i = 0; i < NSLEEPERS; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("  sleeper %d (%s): %s", i, g.s[i].kind == KIND_WAIT ? "wait" : "timedwait",
             st_name[atomic_load_explicit(&g.s[i].state, memory_order_relaxed)]);
}

/* Starts NSLEEPERS threads blocking on g.ev and returns once every one has called futex
 * wait (each makes exactly one call until the event changes) and had time to get into
 * the kernel. */
static void start_sleepers(int kind, const char *label)
{
    unsigned long w0 = test_kernel_waits();
    for (int i = 0; i < NSLEEPERS; i++) {
        g.s[i].kind = kind;
        g.s[i].ret = -1;
        /* relaxed: the thread is not started yet; thread creation publishes it. */
        atomic_store_explicit(&g.s[i].state, ST_STARTING, memory_order_relaxed);
        g.t[i] = test_thread_start(sleeper_main, &g.s[i]);
    }
    uint64_t end = test_box_end(10000);
    while (test_box_open(end) && test_kernel_waits() - w0 < NSLEEPERS) test_sleep_ns(200000);
    ok(test_kernel_waits() - w0 >= NSLEEPERS, "%s: all %d sleepers called futex wait", label, NSLEEPERS);
    test_sleep_ns(10000000);
    is_int(returned(), 0, "%s: none returned yet", label);
}

/* Joins the sleepers; the number that returned 0. */
static int join_sleepers(void)
{
    int zero = 0;
    for (int i = 0; i < NSLEEPERS; i++) {
        test_thread_join(g.t[i]);
        zero += g.s[i].ret == 0;
        atomic_store_explicit(&g.s[i].state, ST_IDLE, memory_order_relaxed); /* relaxed: joined */
    }
    return zero;
}

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
             kind == KIND_WAIT ? "wait" : "timedwait 5 s");
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
        pass &= set_then_reset_round(round, round % 2 ? FASTSYNC_SHARED : 0, KIND_TIMED);
    for (int round = 6; round < 12; round++) {
        if (pass) set_then_reset_round(round, round % 2 ? FASTSYNC_SHARED : 0, KIND_WAIT);
        else skip("the timed rounds lost sleepers", "set+reset round %d (wait)", round);
    }

    /* reset while sleepers are blocked (BUSY): nobody wakes, no syscall; set wakes them */
    for (int flags = 0; flags <= FASTSYNC_SHARED; flags++) {
        const char *label = flags ? "reset on BUSY (shared)" : "reset on BUSY (private)";
        g.phase = label;
        fastsync_event_init(&g.ev, false, flags);
        start_sleepers(KIND_TIMED, label);
        unsigned long s0 = test_kernel_waits() + test_kernel_wakes();
        fastsync_event_reset(&g.ev);
        fastsync_event_reset(&g.ev);
        is_int(test_kernel_waits() + test_kernel_wakes() - s0, 0, "%s: reset makes no syscall", label);
        test_sleep_ns(10000000);
        is_int(returned(), 0, "%s: nobody returned", label);
        unsigned long k0 = test_kernel_wakes();
        fastsync_event_set(&g.ev);
        is_int(join_sleepers(), NSLEEPERS, "%s: the next set woke all %d", label, NSLEEPERS);
        is_int(test_kernel_wakes() - k0, 1, "%s: with one FUTEX_WAKE", label);
    }

    /* generation wrap-around (white-box: writes the largest generation into the word) */
    for (int flags = 0; flags <= FASTSYNC_SHARED; flags++) {
        const char *label = flags ? "generation wrap (shared)" : "generation wrap (private)";
        g.phase = label;
        fastsync_event_init(&g.ev, false, flags);
        /* relaxed (load and store): no other thread runs yet; thread creation publishes it. */
        uint32_t w = atomic_load_explicit(&g.ev.state, memory_order_relaxed);
        atomic_store_explicit(&g.ev.state, w | FASTSYNC__EV_GEN, memory_order_relaxed);
        start_sleepers(KIND_TIMED, label);
        fastsync_event_set(&g.ev);
        fastsync_event_reset(&g.ev);
        is_int(join_sleepers(), NSLEEPERS, "%s: set+reset at the last generation: all %d returned 0", label,
               NSLEEPERS);
        uint32_t after = atomic_load_explicit(&g.ev.state, memory_order_relaxed); /* relaxed: all joined */
        is_int(after & FASTSYNC__EV_GEN, 0, "%s: the generation wrapped to 0", label);
        is_int(after & FASTSYNC__EV_SHARED, flags ? FASTSYNC__EV_SHARED : 0, "%s: the shared flag survived", label);
        ok(!fastsync_event_is_set(&g.ev), "%s: reset", label);
        start_sleepers(KIND_TIMED, label);
        fastsync_event_set(&g.ev);
        is_int(join_sleepers(), NSLEEPERS, "%s: the next set wakes all %d", label, NSLEEPERS);
    }

    test_watchdog_stop();
    return done_testing();
}
