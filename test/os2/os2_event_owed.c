/* SPDX-License-Identifier: MIT */
/* os2_event_owed: fastsync_os2.h's event never lets a reset of its HEV swallow the wakeup
 * of a waiter whose round a set has ended (white-box: reads the word's counts).
 * Per round: 4 "old" waiters join a reset event; after a random pause (some are blocked,
 * some between their last look at the word and DosWaitEventSem, more so under
 * FASTSYNC_OS2_INJECT=1) the event is set and at once reset; 4 "new" waiters join the new
 * round, so their sleeps return at once on the HEV that is still posted for the old ones
 * (they must not reset it under the old ones). Then:
 *   round kind A: the old waiters must all return with no further set (each within 2 s);
 *                 then a second set releases the new ones;
 *   round kind B: after a random pause the second set comes at once, racing with the
 *                 old waiters' leaving (the last one resets the HEV: it must post again
 *                 if the second set's post could be in what it reset).
 * Every waiter must return 0. Then the round counter wraps: a set at the last round
 * value still releases every waiter. Private and shared events. */
#include "harness.h"

#define NOLD 4
#define NNEW 4
#define NW (NOLD + NNEW)

enum { KIND_WAIT, KIND_TIMED, KIND_REALTIME, NKINDS };

struct waiter {
    _Atomic(unsigned long) go;   /* the round to wait in */
    _Atomic(unsigned long) done; /* the last round whose wait returned */
    _Atomic(int) where;          /* 0 idle, 1 in wait */
    int ret;                     /* written before done */
};

static struct {
    fastsync_event_t ev;
    struct waiter w[NW];
    _Atomic(bool) quit;
    _Atomic(unsigned long) round;
    const char *phase;
} g;

static uint64_t word(void) { return fastsync__os2_load(&g.ev.o, FASTSYNC__RELAXED); }

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    unsigned long r = 0;
    for (;;) {
        unsigned long go;
        /* acquire: pairs with the release store of go in main (the event is ready). */
        while ((go = atomic_load_explicit(&w->go, memory_order_acquire)) == r) {
            if (atomic_load_explicit(&g.quit, memory_order_acquire)) return NULL;
            test_sleep_ns(20000);
        }
        r = go;
        int ret = 0, kind = (int)(r % NKINDS);
        /* relaxed: progress for the dump. */
        atomic_store_explicit(&w->where, 1, memory_order_relaxed);
        if (kind == KIND_WAIT) {
            fastsync_event_wait(&g.ev);
        } else if (kind == KIND_TIMED) {
            struct timespec far = fastsync_deadline_in(60000000000u);
            ret = fastsync_event_timedwait(&g.ev, &far);
        } else {
            struct timespec far;
            clock_gettime(CLOCK_REALTIME, &far);
            far.tv_sec += 60;
            ret = fastsync_event_clockwait(&g.ev, CLOCK_REALTIME, &far);
        }
        w->ret = ret;
        atomic_store_explicit(&w->where, 0, memory_order_relaxed);
        /* release: pairs with the acquire loads of done in main (ret is read after it). */
        atomic_store_explicit(&w->done, r, memory_order_release);
    }
}

static void dump(void *unused)
{
    (void)unused;
    uint64_t v = word();
    diag("%s, round %lu: word 0x%016" PRIx64 " (set %d, cur %" PRIu64 ", old %" PRIu64 ", round %" PRIu64 ")",
         g.phase, atomic_load_explicit(&g.round, memory_order_relaxed), v, (int)(v & FASTSYNC__EV_SET),
         fastsync__ev_cur(v), fastsync__ev_old(v), (v & FASTSYNC__EV_ROUND) / FASTSYNC__EV_ROUND_ONE);
    for (int i = 0; i < NW; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("  %s waiter %d: go %lu, done %lu, %s", i < NOLD ? "old" : "new", i,
             atomic_load_explicit(&g.w[i].go, memory_order_relaxed),
             atomic_load_explicit(&g.w[i].done, memory_order_relaxed),
             atomic_load_explicit(&g.w[i].where, memory_order_relaxed) ? "in wait" : "idle");
}

static void start(int from, int to, unsigned long r)
{
    for (int i = from; i < to; i++)
        /* release: pairs with the acquire load in waiter_main. */
        atomic_store_explicit(&g.w[i].go, r, memory_order_release);
}

/* Waits until waiters [from, to) have returned from round r, at most ms (scaled). */
static bool returned(int from, int to, unsigned long r, double ms)
{
    uint64_t end = test_box_end(ms);
    for (;;) {
        int n = 0;
        for (int i = from; i < to; i++)
            /* acquire: pairs with the release store of done in waiter_main. */
            n += atomic_load_explicit(&g.w[i].done, memory_order_acquire) == r;
        if (n == to - from) return true;
        if (!test_box_open(end)) return false;
        test_sleep_ns(20000);
    }
}

/* Waits until the word counts n waiters in the current round. */
static bool joined(uint64_t n)
{
    uint64_t end = test_box_end(5000);
    while (fastsync__ev_cur(word()) != n) {
        if (!test_box_open(end)) return false;
        test_sleep_ns(5000);
    }
    return true;
}

int main(void)
{
    test_init();
    pthread_t t[NW];
    for (int i = 0; i < NW; i++) t[i] = test_thread_start(waiter_main, &g.w[i]);
    test_watchdog_start(dump, NULL);
    uint64_t rng = test_stream(1);
    unsigned long posts0 = os2dbl_sem_posts(), wakes0 = test_kernel_wakes();

    for (int flags = 0; flags <= FASTSYNC_SHARED; flags++) {
        const char *label = flags ? "shared" : "private";
        g.phase = label;
        is_int(fastsync_event_init(&g.ev, false, flags), 0, "%s: init", label);
        unsigned long rounds = 0, kind_a = 0, lost_a = 0, lost_b = 0, bad_ret = 0, no_join = 0;
        uint64_t box = test_box_end(1000);
        while (test_box_open(box)) {
            /* relaxed: the round number is only read by the dump. */
            unsigned long r = atomic_fetch_add_explicit(&g.round, 1, memory_order_relaxed) + 1;
            uint64_t x = test_rand(&rng);
            bool kind_is_a = x & 1;
            fastsync_event_reset(&g.ev);
            start(0, NOLD, r);
            if (!joined(NOLD)) no_join++;
            test_sleep_ns((x >> 8) % 300000u);
            fastsync_event_set(&g.ev);
            fastsync_event_reset(&g.ev);
            start(NOLD, NW, r);
            if (!joined(NNEW)) no_join++;
            test_sleep_ns((x >> 28) % 300000u);
            if (kind_is_a) {
                kind_a++;
                if (!returned(0, NOLD, r, 2000)) {
                    if (lost_a++ == 0) {
                        diag("%s, round %lu: old waiters did not return after their set", label, r);
                        dump(NULL);
                    }
                }
            }
            fastsync_event_set(&g.ev);
            if (!returned(0, NW, r, 5000)) {
                lost_b++;
                diag("%s, round %lu: waiters did not return after the second set", label, r);
                dump(NULL);
                bail("a waiter is lost: no further set will come (seed %" PRIu64 ")", test_seed());
            }
            for (int i = 0; i < NW; i++) bad_ret += g.w[i].ret != 0;
            rounds++;
        }
        diag("%s: %lu rounds (%lu of kind A)", label, rounds, kind_a);
        ok(rounds > 0, "%s: rounds ran", label);
        is_int(no_join, 0, "%s: the waiters joined every round", label);
        is_int(lost_a, 0, "%s: old waiters returned after their set, with no other set, every round", label);
        is_int(lost_b, 0, "%s: every waiter returned after a set that raced the old ones leaving", label);
        is_int(bad_ret, 0, "%s: every wait returned 0", label);
        uint64_t v = word();
        is_int(fastsync__ev_cur(v) + fastsync__ev_old(v), 0, "%s: no waiter left counted", label);
        is_int(fastsync_event_destroy(&g.ev), 0, "%s: destroy", label);
    }
    diag("posts: %lu by set, %lu by waiters (settle)", test_kernel_wakes() - wakes0,
         os2dbl_sem_posts() - posts0 - (test_kernel_wakes() - wakes0));

    /* round wrap-around (white-box: writes the last round value into the word) */
    for (int flags = 0; flags <= FASTSYNC_SHARED; flags++) {
        const char *label = flags ? "round wrap (shared)" : "round wrap (private)";
        g.phase = label;
        fastsync_event_init(&g.ev, false, flags);
        uint64_t w0 = word();
#if defined(FASTSYNC_OS2_NO_ATOMICS)
        g.ev.o.state = w0 | FASTSYNC__EV_ROUND; /* no other thread waits yet */
#else
        /* relaxed: no waiter runs yet; the release store of go publishes it. */
        atomic_store_explicit(&g.ev.o.state, w0 | FASTSYNC__EV_ROUND, memory_order_relaxed);
#endif
        unsigned long r = atomic_fetch_add_explicit(&g.round, 1, memory_order_relaxed) + 1;
        start(0, NW, r);
        ok(joined(NW), "%s: %d waiters joined at the last round value", label, NW);
        fastsync_event_set(&g.ev);
        fastsync_event_reset(&g.ev);
        ok(returned(0, NW, r, 5000), "%s: set+reset at the last round: all %d returned", label, NW);
        uint64_t v = word();
        is_int(v & FASTSYNC__EV_ROUND, 0, "%s: the round wrapped to 0", label);
        is_int(v & FASTSYNC__EV_SHARED, flags ? FASTSYNC__EV_SHARED : 0, "%s: the shared flag survived", label);
        is_int(fastsync__ev_cur(v) + fastsync__ev_old(v), 0, "%s: no waiter left counted", label);
        is_int(fastsync_event_destroy(&g.ev), 0, "%s: destroy", label);
    }

    atomic_store_explicit(&g.quit, true, memory_order_release);
    for (int i = 0; i < NW; i++) test_thread_join(t[i]);
    test_watchdog_stop();
    return done_testing();
}
