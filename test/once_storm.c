/* SPDX-License-Identifier: MIT */
/* once_storm: 64 threads released together (all 64 at a gate, an event set once they are)
 * on one fresh once per round, each calling fastsync_once with the same fn; fn, which
 * sometimes dawdles (a yield, or 100 us, so that the others sleep), counts its calls and
 * writes a plain record of the round; every caller, after fastsync_once returned 0, reads
 * the record. Rounds until the time box ends, private and shared onces alternating, spread
 * over the CPUs, then with every thread pinned to one CPU. Per
 * round, the futex calls on the once's word (the harness's wait and wake overrides, by
 * address): at most one wake, and one exactly when a caller slept (without the fault
 * injection, which can end a sleep before its futex call: then a sleep implies the wake).
 * Fails with: fn run twice or never in a round; a caller back before fn's writes are visible
 * (a plain field read wrong; under ThreadSanitizer, a race with fn's writes: a commit or
 * a done look without release/acquire); a commit that wakes when nobody slept, or twice; a
 * caller left asleep (the watchdog). */
#include "harness.h"

#define NT 64
#define RECN 16

static struct {
    /* this round's once; relaxed: main sets it while the callers wait at the start semaphore,
     * which orders it for them; the overrides only compare it with a word's address (a
     * caller's futex call on the semaphore may read the last round's or this one's) */
    _Atomic(fastsync_once_t *) once;
    int round;
    int fn_calls;                   /* plain: only fn writes it, read after the round */
    int rec[RECN];                  /* plain: fn's record of the round */
    fastsync_sem_t start, finished;
    fastsync_event_t gate;
    _Atomic(int) at_gate;           /* relaxed: a poll of who has arrived; the gate orders */
    _Atomic(bool) stop;             /* relaxed: read after the start semaphore, which orders it */
    _Atomic(unsigned long) waits, wakes; /* on the once's word; relaxed: counts read after the round */
    unsigned long bad[NT];          /* callers that read a wrong record, per thread */
    unsigned long back[NT];         /* fastsync_once returns, per thread */
    uint64_t rng;                   /* fn's dawdling (only fn uses it) */
} g;

static fastsync_once_t onces[2];    /* the round's once alternates */

static void dump(void *unused)
{
    (void)unused;
    diag("round %d, %d at the gate, fn called %d times", g.round,
         atomic_load_explicit(&g.at_gate, memory_order_relaxed), g.fn_calls);
    fastsync_once_t *o = atomic_load_explicit(&g.once, memory_order_relaxed);
    if (o) test_dump_once("this round's once", o);
}

static int wait_counted(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    if (word == (void *)atomic_load_explicit(&g.once, memory_order_relaxed)) atomic_fetch_add_explicit(&g.waits, 1, memory_order_relaxed);
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void wake_counted(void *word, int n, int shared)
{
    if (word == (void *)atomic_load_explicit(&g.once, memory_order_relaxed)) atomic_fetch_add_explicit(&g.wakes, 1, memory_order_relaxed);
    fastsync__wake_sys(word, n, shared);
}

static void fn(void *arg)
{
    (void)arg;
    g.fn_calls++;
    unsigned r = (unsigned)(test_rand(&g.rng) % 4);
    if (r == 0) sched_yield();
    else if (r == 1) test_sleep_ns(100000);
    for (int i = 0; i < RECN; i++) g.rec[i] = g.round * 31 + i;
}

static void *caller(void *p)
{
    int me = (int)(intptr_t)p;
    for (;;) {
        fastsync_sem_wait(&g.start);
        if (atomic_load_explicit(&g.stop, memory_order_relaxed)) return NULL;
        atomic_fetch_add_explicit(&g.at_gate, 1, memory_order_relaxed);
        fastsync_event_wait(&g.gate);
        fastsync_once(atomic_load_explicit(&g.once, memory_order_relaxed), fn, NULL);
        g.back[me]++;
        for (int i = 0; i < RECN; i++)
            if (g.rec[i] != g.round * 31 + i) {
                g.bad[me]++;
                break;
            }
        fastsync_sem_post(&g.finished);
    }
}

static void run(const char *name, bool pinned, double ms)
{
    test_pin_all(pinned);
    atomic_store_explicit(&g.stop, false, memory_order_relaxed); /* relaxed: before the threads */
    memset(g.back, 0, sizeof g.back);
    memset(g.bad, 0, sizeof g.bad);
    pthread_t t[NT];
    for (int i = 0; i < NT; i++) t[i] = test_thread_start(caller, (void *)(intptr_t)i);
    unsigned long rounds = 0, twice = 0, never = 0, slept = 0, woke = 0, extra_wakes = 0, silent = 0;
    unsigned long shared_rounds = 0;
    uint64_t end = test_box_end(ms);
    while (test_box_more(end, rounds)) {
        bool shared = rounds % 2 && FASTSYNC_HAS_SHARED;
        fastsync_once_init(&onces[rounds % 2], shared ? TEST_SHARED : 0);
        atomic_store_explicit(&g.once, &onces[rounds % 2], memory_order_relaxed);
        shared_rounds += shared;
        g.round = (int)rounds + 1;
        g.fn_calls = 0;
        memset(g.rec, 0, sizeof g.rec);
        atomic_store_explicit(&g.waits, 0, memory_order_relaxed);
        atomic_store_explicit(&g.wakes, 0, memory_order_relaxed);
        atomic_store_explicit(&g.at_gate, 0, memory_order_relaxed);
        fastsync_event_reset(&g.gate); /* every caller passed it last round (finished) */
        fastsync_sem_post_n(&g.start, NT);
        uint64_t lim = test_limit_end(5000);
        while (atomic_load_explicit(&g.at_gate, memory_order_relaxed) < NT && test_box_open(lim)) sched_yield();
        fastsync_event_set(&g.gate);
        for (int i = 0; i < NT; i++) fastsync_sem_wait(&g.finished);
        rounds++;
        twice += g.fn_calls > 1;
        never += g.fn_calls == 0;
        unsigned long w = atomic_load_explicit(&g.waits, memory_order_relaxed);
        unsigned long k = atomic_load_explicit(&g.wakes, memory_order_relaxed);
        slept += w > 0;
        woke += k > 0;
        extra_wakes += k > 1 || (k == 1 && g.fn_calls == 0);
        /* a sleep on the word only ever follows WAITED, which the commit reads: its wake */
        silent += w > 0 && k == 0;
    }
    atomic_store_explicit(&g.stop, true, memory_order_relaxed);
    fastsync_sem_post_n(&g.start, NT);
    for (int i = 0; i < NT; i++) test_thread_join(t[i]);
    unsigned long back = 0, bad = 0;
    for (int i = 0; i < NT; i++) {
        back += g.back[i];
        bad += g.bad[i];
    }
    diag("%s: %lu rounds (%lu shared): callers slept in %lu, the commit woke in %lu", name, rounds, shared_rounds,
         slept, woke);
    is_int(back, rounds * NT, "%s: every caller of every round returned (%d a round)", name, NT);
    is_int(twice + never, 0, "%s: fn ran exactly once a round (twice: %lu rounds, never: %lu)", name, twice, never);
    is_int(bad, 0, "%s: every caller read fn's record of its round after fastsync_once returned", name);
    is_int(extra_wakes, 0, "%s: at most one wake a round", name);
    is_int(silent, 0, "%s: a round in which a caller slept had its wake", name);
#ifndef FASTSYNC_TEST_INJECT
    is_int(woke - slept, 0, "%s: a wake only in a round in which a caller slept", name);
#else
    skip("the injected faults end sleeps before their futex call", "%s: a wake only in a round in which a caller slept",
         name);
#endif
}

int main(void)
{
    test_init();
    test_wait_override = wait_counted;
    test_wake_override = wake_counted;
    fastsync_sem_init(&g.start, 0, 0);
    fastsync_sem_init(&g.finished, 0, 0);
    fastsync_event_init(&g.gate, false, 0);
    g.rng = test_stream(0);
    test_watchdog_start(dump, NULL);
    run("spread", false, 150);
    run("pinned", true, 150);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
