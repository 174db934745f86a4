/* SPDX-License-Identifier: MIT */
/* event_storm: one toggler sets and resets the event in a loop (sometimes twice in a row,
 * sometimes pausing) while several waiters loop over wait, timedwait with tiny or past
 * deadlines and clockwait on the realtime clock (and, after a wait that returned 0,
 * sometimes reset the event themselves, so that they sleep rather than spin on a set
 * event and the setter finds sleepers to wake). At the end the toggler sets the event for
 * good: every waiter must leave (a lost wakeup fails within seconds; the watchdog catches
 * the rest). Checked on every call:
 *   - only 0 or ETIMEDOUT, and ETIMEDOUT never before the deadline;
 *   - no spurious return: the toggler bumps `phase` to odd before each set and to even
 *     after each reset, so a wait that returns 0 while it read the same even phase before
 *     and after never saw a set (reading phase 2k after the reset that preceded its store
 *     also orders the wait after that reset: seq_cst store/load, then coherence).
 * Runs spread over the CPUs, pinned to one CPU, and with more waiters than cores (private
 * and shared events). Prints per-thread counts. */
#include "harness.h"

#define MAXWAITERS 64

enum { K_WAIT, K_TIMED, K_PAST, K_REALTIME, NKINDS };
static const char *const kind_name[NKINDS] = { "wait", "timedwait", "timedwait(past)", "clockwait(RT)" };

struct waiter {
    int idx;
    uint64_t rng;
    /* progress for the dump. relaxed: only read by the dump */
    _Atomic unsigned long loops;
    _Atomic int in_kind; /* kind of the call it is in, -1 outside */
    /* results, read after the join */
    unsigned long ok[NKINDS], timeouts[NKINDS], resets, early, bad_code, spurious;
};

static struct {
    const char *config;
    fastsync_event_t ev;
    _Atomic unsigned long phase; /* odd: a set may be in effect; even: reset, see above */
    _Atomic bool stop;
    _Atomic unsigned long sets, resets; /* toggler progress, relaxed */
    _Atomic int left;                   /* waiters that returned from their thread */
    int nwaiters;
    uint64_t end;
    struct waiter w[MAXWAITERS];
} g;

static void *waiter_main(void *arg)
{
    struct waiter *w = (struct waiter *)arg;
    /* acquire: pairs with the seq_cst store of stop by the toggler (nothing else needed). */
    while (!atomic_load_explicit(&g.stop, memory_order_acquire)) {
        /* kinds: wait 7/16, timedwait 5/16, realtime 3/16, past deadline 1/16 (it never
         * sleeps: more would only spin) */
        unsigned pick = (unsigned)(test_rand(&w->rng) % 16);
        int kind = pick < 7 ? K_WAIT : pick < 12 ? K_TIMED : pick < 15 ? K_REALTIME : K_PAST;
        /* seq_cst: see the header comment (pairs with the toggler's seq_cst phase stores). */
        unsigned long p0 = atomic_load(&g.phase);
        atomic_store_explicit(&w->in_kind, kind, memory_order_relaxed); /* relaxed: dump only */
        int r = 0;
        struct timespec d;
        clockid_t clock = CLOCK_MONOTONIC;
        switch (kind) {
        case K_WAIT:
            fastsync_event_wait(&g.ev);
            break;
        case K_TIMED:
            d = fastsync_deadline_in(test_rand(&w->rng) % 200000);
            r = fastsync_event_timedwait(&g.ev, &d);
            break;
        case K_PAST:
            d = fastsync_deadline_in(0);
            d.tv_sec -= (time_t)(test_rand(&w->rng) % 3);
            r = fastsync_event_timedwait(&g.ev, &d);
            break;
        default:
            clock = CLOCK_REALTIME;
            d = test_deadline_on(CLOCK_REALTIME, test_rand(&w->rng) % 200000);
            r = fastsync_event_clockwait(&g.ev, CLOCK_REALTIME, &d);
            break;
        }
        unsigned long p1 = atomic_load(&g.phase); /* seq_cst: as p0 */
        atomic_store_explicit(&w->in_kind, -1, memory_order_relaxed); /* relaxed: dump only */
        if (r == 0) {
            w->ok[kind]++;
            if (p0 == p1 && p0 % 2 == 0) w->spurious++;
            /* sometimes reset it ourselves, as QEMU's consumers do: more sleeps, fewer
             * spins on a set event. (The phase check holds still: only the toggler sets.) */
            if (test_rand(&w->rng) % 4 == 0) {
                fastsync_event_reset(&g.ev);
                w->resets++;
                /* seq_cst: the resetter's side of the handshake with the final set (the
                 * toggler stores stop, then sets): either the toggler's set comes after
                 * this reset, or this load sees stop and puts the set back itself. Either
                 * way the event ends set and no other waiter sleeps through the end. */
                if (atomic_load(&g.stop)) fastsync_event_set(&g.ev);
            }
        } else if (r == ETIMEDOUT) {
            w->timeouts[kind]++;
            if (test_clock_ns(clock) < test_ts_ns(d)) w->early++;
        } else {
            w->bad_code++;
        }
        atomic_fetch_add_explicit(&w->loops, 1, memory_order_relaxed); /* relaxed: dump only */
    }
    /* relaxed: a count polled by main; the results are read after the join. */
    atomic_fetch_add_explicit(&g.left, 1, memory_order_relaxed);
    return NULL;
}

static void *toggler_main(void *arg)
{
    uint64_t rng = test_stream(999);
    (void)arg;
    while (test_box_open(g.end)) {
        unsigned r = (unsigned)test_rand(&rng);
        atomic_fetch_add(&g.phase, 1); /* seq_cst: odd, before the set (see the header) */
        fastsync_event_set(&g.ev);
        if (r & 1) fastsync_event_set(&g.ev);
        atomic_fetch_add_explicit(&g.sets, 1, memory_order_relaxed); /* relaxed: dump only */
        /* the set window: mostly none, sometimes a few polls, rarely a yield */
        if ((r & 0x1e) == 0) sched_yield();
        else if ((r & 6) == 0) for (unsigned i = r >> 22 & 0xff; i > 0; i--) fastsync__cpu_relax();
        fastsync_event_reset(&g.ev);
        if (r & 0x40) fastsync_event_reset(&g.ev);
        atomic_fetch_add(&g.phase, 1); /* seq_cst: even, after the reset */
        atomic_fetch_add_explicit(&g.resets, 1, memory_order_relaxed); /* relaxed: dump only */
        /* the reset window, where waiters go to sleep: polls, a yield, or a short sleep */
        switch (r >> 8 & 15) {
        case 0: test_sleep_ns(r >> 12 & 0xffff); break;
        case 1: case 2: sched_yield(); break;
        default: for (unsigned i = r >> 12 & 0x3ff; i > 0; i--) fastsync__cpu_relax(); break;
        }
    }
    /* seq_cst: odd for good, before stop: a waiter's set after it reads stop then comes
     * after this increment too, which keeps the phase check valid. */
    atomic_fetch_add(&g.phase, 1);
    /* seq_cst: pairs with the loads of stop in waiter_main (see there). */
    atomic_store(&g.stop, true);
    fastsync_event_set(&g.ev);
    return NULL;
}

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a diagnostic snapshot. */
    diag("config %s: phase %lu, stop %d, %lu sets, %lu resets, %d of %d waiters left",
         g.config ? g.config : "-", atomic_load_explicit(&g.phase, memory_order_relaxed), (int)atomic_load_explicit(&g.stop, memory_order_relaxed),
         atomic_load_explicit(&g.sets, memory_order_relaxed), atomic_load_explicit(&g.resets, memory_order_relaxed),
         atomic_load_explicit(&g.left, memory_order_relaxed), g.nwaiters);
    test_dump_event("  event", &g.ev);
    for (int i = 0; i < g.nwaiters; i++) {
        int k = atomic_load_explicit(&g.w[i].in_kind, memory_order_relaxed);
        diag("  waiter %d: %lu calls, now %s", i, atomic_load_explicit(&g.w[i].loops, memory_order_relaxed),
             k < 0 ? "outside the event" : kind_name[k]);
    }
}

static void run(const char *config, bool pinned, int nwaiters, int flags, double box_ms)
{
    g.config = config;
    g.nwaiters = nwaiters;
    fastsync_event_init(&g.ev, false, flags);
    /* relaxed (here and for in_kind below): no thread runs yet; thread creation publishes. */
    atomic_store_explicit(&g.phase, 0, memory_order_relaxed);
    atomic_store_explicit(&g.stop, false, memory_order_relaxed);
    atomic_store_explicit(&g.sets, 0, memory_order_relaxed);
    atomic_store_explicit(&g.resets, 0, memory_order_relaxed);
    atomic_store_explicit(&g.left, 0, memory_order_relaxed);
    for (int i = 0; i < nwaiters; i++) {
        memset(&g.w[i], 0, sizeof g.w[i]);
        g.w[i].idx = i;
        g.w[i].rng = test_stream((unsigned)i);
        atomic_store_explicit(&g.w[i].in_kind, -1, memory_order_relaxed);
    }
    test_pin_all(pinned);
    unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    g.end = test_box_end(box_ms);
    pthread_t tw[MAXWAITERS];
    for (int i = 0; i < nwaiters; i++) tw[i] = test_thread_start(waiter_main, &g.w[i]);
    pthread_t tt = test_thread_start(toggler_main, NULL);
    test_thread_join(tt);

    /* after the final set every waiter must leave: give them 5 s (scaled), then fail */
    char label[96];
    snprintf(label, sizeof label, "%s (%d waiters, %s)", config, nwaiters, flags ? "shared" : "private");
    uint64_t end = test_limit_end(5000);
    /* relaxed: a count to poll; the results are read after the joins. */
    while (test_box_open(end) && atomic_load_explicit(&g.left, memory_order_relaxed) < nwaiters)
        test_sleep_ns(1000000);
    if (!is_int(atomic_load_explicit(&g.left, memory_order_relaxed), nwaiters,
                "%s: every waiter left after the final set", label)) {
        dump(NULL);
        bail("waiters stuck after the final set (seed %" PRIu64 ")", test_seed());
    }
    for (int i = 0; i < nwaiters; i++) test_thread_join(tw[i]);
    test_pin_all(false);

    unsigned long early = 0, bad = 0, spurious = 0, calls = 0;
    for (int i = 0; i < nwaiters; i++) {
        struct waiter *w = &g.w[i];
        early += w->early;
        bad += w->bad_code;
        spurious += w->spurious;
        unsigned long c = atomic_load_explicit(&w->loops, memory_order_relaxed); /* relaxed: joined */
        calls += c;
        diag("%s waiter %d: %lu calls (0/ETIMEDOUT): wait %lu, timedwait %lu/%lu, past %lu/%lu, realtime %lu/%lu; "
             "%lu resets", label, i, c, w->ok[K_WAIT], w->ok[K_TIMED], w->timeouts[K_TIMED], w->ok[K_PAST],
             w->timeouts[K_PAST], w->ok[K_REALTIME], w->timeouts[K_REALTIME], w->resets);
    }
    diag("%s: toggler made %lu set rounds, %lu reset rounds; %lu futex waits, %lu futex wakes", label,
         atomic_load_explicit(&g.sets, memory_order_relaxed), atomic_load_explicit(&g.resets, memory_order_relaxed),
         test_kernel_waits() - w0, test_kernel_wakes() - k0);
    is_int(bad, 0, "%s: every wait returned 0 or ETIMEDOUT", label);
    is_int(early, 0, "%s: no ETIMEDOUT before the deadline", label);
    is_int(spurious, 0, "%s: no wait returned 0 without a set", label);
    ok(fastsync_event_is_set(&g.ev), "%s: the event is set at the end", label);
    unsigned long sum = 0;
    for (int i = 0; i < nwaiters; i++) {
        struct waiter *w = &g.w[i];
        for (int k = 0; k < NKINDS; k++) sum += w->ok[k] + w->timeouts[k];
        sum += w->bad_code;
    }
    is_int(sum, calls, "%s: the per-kind counts add up to the calls made", label);
    is_int(fastsync_event_destroy(&g.ev), 0, "%s: destroy: no waiter left in the event", label);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    int over = 2 * test_ncpu() + 2;
    if (over > MAXWAITERS) over = MAXWAITERS;
    run("spread", false, 3, 0, 250);
    run("pinned", true, 3, 0, 250);
    run("oversubscribed", false, over, TEST_SHARED, 250);
    run("pinned, oversubscribed", true, over, 0, 250);
    test_watchdog_stop();
    return done_testing();
}
