/* SPDX-License-Identifier: MIT */
/* event_handshake: the reset / check handshake of fastsync.h as a store-buffering litmus
 * test, round after round on a fresh set event:
 *   A (producer):  flag = 1 (relaxed store) ; fastsync_event_set(&ev)
 *   B (consumer):  fastsync_event_reset(&ev) ; f = flag (relaxed load)
 * fastsync.h promises (the fence pair of set and reset) that B's check sees the flag, or
 * A's set comes after B's reset and leaves the event set. The one forbidden outcome,
 * "f == 0 and the event ends reset", is a consumer that would sleep through the
 * producer's news for good (the QEMU 2023 hang). Relaxed flag accesses, so that only the
 * event's own fences order them: on x86 a set without its fence shows here (a store may
 * pass a later load); a reset without its fence cannot (a locked RMW is a full barrier
 * there), only weak-memory machines would show that.
 * Pairs run spread over the CPUs (where reordering can show), pinned to one CPU, and with
 * more threads than cores; B's delay adapts to the outcomes so that the two sides overlap. */
#include "harness.h"

#define MAXPAIRS 64
#define GO_STOP ULONG_MAX

struct pair {
    fastsync_event_t ev;
    _Atomic unsigned flag;
    _Atomic unsigned long go;     /* B -> A: start round go (GO_STOP: leave) */
    _Atomic unsigned long a_done; /* A -> B: round a_done finished */
    uint64_t rng_a, rng_b;
    unsigned lead; /* B's delay before its reset, tuned so that the two sides overlap */
    /* results of B, read after the join: outcomes by (f, event set at the end) */
    unsigned long rounds, outcome[2][2];
};

static struct {
    const char *config;
    int npairs;
    uint64_t end;
    struct pair pairs[MAXPAIRS];
} g;

/* Spins for about n CPU pause hints. */
static void spin(unsigned n)
{
    for (unsigned i = n; i > 0; i--) fastsync__cpu_relax();
}

/* Spins until *v holds at least `want`; yields now and then (the other side may share the
 * CPU). acquire: pairs with the release store of the other side. */
static unsigned long await_value(_Atomic unsigned long *v, unsigned long want)
{
    unsigned long x;
    for (unsigned spins = 1; (x = atomic_load_explicit(v, memory_order_acquire)) < want; spins++)
        if (spins % 64 == 0) sched_yield();
        else fastsync__cpu_relax();
    return x;
}

static void *a_main(void *arg)
{
    struct pair *p = (struct pair *)arg;
    for (unsigned long r = 1;; r++) {
        if (await_value(&p->go, r) == GO_STOP) break;
        spin((unsigned)test_rand(&p->rng_a) % 16);
        /* relaxed: on purpose, only the fences inside set and reset may order it. */
        atomic_store_explicit(&p->flag, 1, memory_order_relaxed);
        fastsync_event_set(&p->ev);
        /* release: pairs with B's acquire in await_value (the round is over). */
        atomic_store_explicit(&p->a_done, r, memory_order_release);
    }
    return NULL;
}

static void *b_main(void *arg)
{
    struct pair *p = (struct pair *)arg;
    for (unsigned long r = 1; r == 1 || test_box_open(g.end); r++) {
        /* a fresh round: event set (no sleeper: nobody waits here), flag clear. relaxed:
         * published to A by the release store of go. */
        fastsync_event_set(&p->ev);
        atomic_store_explicit(&p->flag, 0, memory_order_relaxed);
        /* release: pairs with A's acquire in await_value. */
        atomic_store_explicit(&p->go, r, memory_order_release);
        unsigned jitter = (unsigned)test_rand(&p->rng_b) % 16;
        if (jitter == 0) sched_yield(); /* lets A go first when both share a CPU */
        else spin(p->lead + jitter);
        fastsync_event_reset(&p->ev);
        /* relaxed: on purpose, ordered only by reset's fence against set's. */
        unsigned f = atomic_load_explicit(&p->flag, memory_order_relaxed);
        await_value(&p->a_done, r);
        bool set = fastsync_event_is_set(&p->ev);
        p->outcome[f != 0][set]++;
        /* B all before A (missed the flag, A set the event): wait longer next time; A all
         * before B (saw the flag, B's reset stands): shorter. The rounds then straddle the
         * point where the two sides run at the same moment. */
        if (!f && set && p->lead < 1024) p->lead++;
        else if (f && !set && p->lead > 0) p->lead--;
        p->rounds++;
    }
    /* release: pairs with A's acquire in await_value. */
    atomic_store_explicit(&p->go, GO_STOP, memory_order_release);
    return NULL;
}

static void dump(void *unused)
{
    (void)unused;
    diag("config %s, %d pairs", g.config ? g.config : "-", g.npairs);
    for (int i = 0; i < g.npairs; i++) {
        struct pair *p = &g.pairs[i];
        /* relaxed: a diagnostic snapshot. */
        diag("  pair %d: go %lu, A done %lu, flag %u", i,
             atomic_load_explicit(&p->go, memory_order_relaxed), atomic_load_explicit(&p->a_done, memory_order_relaxed),
             atomic_load_explicit(&p->flag, memory_order_relaxed));
        test_dump_event("    event", &p->ev);
    }
}

static void run(const char *config, bool pinned, int npairs, double box_ms)
{
    g.config = config;
    g.npairs = npairs;
    for (int i = 0; i < npairs; i++) {
        struct pair *p = &g.pairs[i];
        memset(p, 0, sizeof *p);
        fastsync_event_init(&p->ev, true, i % 2 ? TEST_SHARED : 0);
        p->rng_a = test_stream((unsigned)(2 * i));
        p->rng_b = test_stream((unsigned)(2 * i + 1));
    }
    test_pin_all(pinned);
    g.end = test_box_end(box_ms);
    pthread_t ta[MAXPAIRS], tb[MAXPAIRS];
    for (int i = 0; i < npairs; i++) {
        ta[i] = test_thread_start(a_main, &g.pairs[i]);
        tb[i] = test_thread_start(b_main, &g.pairs[i]);
    }
    for (int i = 0; i < npairs; i++) {
        test_thread_join(tb[i]);
        test_thread_join(ta[i]);
    }
    test_pin_all(false);

    char label[96];
    snprintf(label, sizeof label, "%s (%d pair%s)", config, npairs, npairs > 1 ? "s" : "");
    unsigned long rounds = 0, o[2][2] = { { 0, 0 }, { 0, 0 } };
    for (int i = 0; i < npairs; i++) {
        fastsync_event_destroy(&g.pairs[i].ev); /* nobody waits on it: no sleeper in this test */
        rounds += g.pairs[i].rounds;
        for (int f = 0; f < 2; f++)
            for (int s = 0; s < 2; s++) o[f][s] += g.pairs[i].outcome[f][s];
    }
    diag("%s: %lu rounds (final lead of pair 0: %u polls); B saw the flag and the event ended set %lu, saw the flag and reset %lu, "
         "missed the flag and set %lu, missed the flag and reset %lu",
         label, rounds, g.pairs[0].lead, o[1][1], o[1][0], o[0][1], o[0][0]);
    is_int(o[0][0], 0, "%s: never both the flag missed and the event left reset", label);
    is_int(o[0][0] + o[0][1] + o[1][0] + o[1][1], rounds, "%s: every round counted once", label);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    int over = test_ncpu() + 1;
    if (over > MAXPAIRS) over = MAXPAIRS;
    run("spread", false, 1, 300);
    run("pinned", true, 1, 200);
    run("oversubscribed", false, over, 300);
    test_watchdog_stop();
    return done_testing();
}
