/* SPDX-License-Identifier: MIT */
/* event_handoff: QEMU's use of the event, as a ping-pong between two threads P and Q over
 * two events (evq: Q sleeps on it waiting for pings, evp: P sleeps on it waiting for pongs).
 * Up to 100 k handoffs each way per pair, bounded by a time box; exact counts at the end;
 * a lost wakeup hangs both threads and the watchdog fails the test. Three variants:
 *   flag   the consumer loops reset / check an atomic flag / wait; the producer stores the
 *          flag (release, a plain store on x86: a missing fence in set can show there)
 *          then sets the event
 *   mutex  the same loop, the condition a plain counter under a pthread mutex (as the
 *          two-queue benchmark uses it)
 *   event  no flag at all: each side waits, resets, reads a plain payload the other wrote
 *          before its set; only set's release and wait's acquire order it (TSan checks)
 * Each variant runs spread over the CPUs, with every thread pinned to one CPU, and with
 * ncpu + 1 pairs (more threads than cores). */
#include "harness.h"

#define MAXPAIRS 64
#define STOP_BIT (1ul << (sizeof(unsigned long) * CHAR_BIT - 1))

enum { V_FLAG, V_MUTEX, V_EVENT, NVARIANTS };
static const char *const variant_name[NVARIANTS] = { "flag", "mutex", "event" };

enum { W_START, W_RESET, W_CHECK, W_WAIT, W_SET, W_DONE };
static const char *const where_name[] = { "start", "reset", "check", "wait", "set", "done" };

struct side {
    /* progress for the dump. relaxed: only read by the dump, nothing is ordered by it */
    _Atomic unsigned long iter;
    _Atomic int where;
    /* results: written by the thread, read after it is joined */
    unsigned long sent, seen, errors;
};

struct pair {
    fastsync_event_t evp, evq;
    /* variant flag */
    _Atomic unsigned long ping, pong;
    _Atomic bool stop;
    /* variant mutex: plain, under mu */
    pthread_mutex_t mu;
    unsigned long mping, mpong;
    bool mstop;
    /* every variant: plain data handed over with the ping or pong */
    unsigned long payload_p, payload_q;
    struct side p, q;
};

static struct {
    const char *config;
    int variant, npairs;
    uint64_t end;
    unsigned long limit;
    struct pair pairs[MAXPAIRS];
} g;

static void at(struct side *s, int where)
{
    /* relaxed: progress for the dump only. */
    atomic_store_explicit(&s->where, where, memory_order_relaxed);
}

/* The p.iter / q.iter stores below are relaxed: progress for the dump only. */
static bool last_round(unsigned long i) { return i >= g.limit || !test_box_open(g.end); }

/* ---- variant flag: QEMU's reset / check / wait loop on an atomic flag ---- */

static unsigned long await_flag(fastsync_event_t *ev, _Atomic unsigned long *flag, unsigned long want,
                                struct side *s)
{
    unsigned long v;
    for (;;) {
        at(s, W_RESET);
        fastsync_event_reset(ev);
        at(s, W_CHECK);
        /* acquire: pairs with the release store of the flag by the other side (payload). */
        v = atomic_load_explicit(flag, memory_order_acquire);
        if (v >= want) return v;
        at(s, W_WAIT);
        fastsync_event_wait(ev);
    }
}

static void *p_flag(void *arg)
{
    struct pair *pr = (struct pair *)arg;
    for (unsigned long i = 1;; i++) {
        atomic_store_explicit(&pr->p.iter, i, memory_order_relaxed);
        bool last = last_round(i);
        pr->payload_p = i;
        /* relaxed: published by the release store of ping below. */
        if (last) atomic_store_explicit(&pr->stop, true, memory_order_relaxed);
        /* release: pairs with the acquire load in Q's await_flag (payload_p, stop). */
        atomic_store_explicit(&pr->ping, i, memory_order_release);
        at(&pr->p, W_SET);
        fastsync_event_set(&pr->evq);
        pr->p.sent++;
        if (last) break;
        unsigned long v = await_flag(&pr->evp, &pr->pong, i, &pr->p);
        if (v != i || pr->payload_q != i) pr->p.errors++;
        pr->p.seen++;
    }
    at(&pr->p, W_DONE);
    return NULL;
}

static void *q_flag(void *arg)
{
    struct pair *pr = (struct pair *)arg;
    for (unsigned long i = 1;; i++) {
        atomic_store_explicit(&pr->q.iter, i, memory_order_relaxed);
        unsigned long v = await_flag(&pr->evq, &pr->ping, i, &pr->q);
        if (v != i || pr->payload_p != i) pr->q.errors++;
        pr->q.seen++;
        /* relaxed: ordered by the acquire load of ping that returned i. */
        if (atomic_load_explicit(&pr->stop, memory_order_relaxed)) break;
        pr->payload_q = i;
        /* release: pairs with the acquire load in P's await_flag (payload_q). */
        atomic_store_explicit(&pr->pong, i, memory_order_release);
        at(&pr->q, W_SET);
        fastsync_event_set(&pr->evp);
        pr->q.sent++;
    }
    at(&pr->q, W_DONE);
    return NULL;
}

/* ---- variant mutex: the condition is a plain counter under a pthread mutex ---- */

static unsigned long await_mutex(struct pair *pr, fastsync_event_t *ev, unsigned long *counter,
                                 unsigned long want, struct side *s)
{
    unsigned long v;
    for (;;) {
        at(s, W_RESET);
        fastsync_event_reset(ev);
        at(s, W_CHECK);
        pthread_mutex_lock(&pr->mu);
        v = *counter;
        pthread_mutex_unlock(&pr->mu);
        if (v >= want) return v;
        at(s, W_WAIT);
        fastsync_event_wait(ev);
    }
}

static void *p_mutex(void *arg)
{
    struct pair *pr = (struct pair *)arg;
    for (unsigned long i = 1;; i++) {
        atomic_store_explicit(&pr->p.iter, i, memory_order_relaxed);
        bool last = last_round(i);
        pthread_mutex_lock(&pr->mu);
        pr->payload_p = i;
        pr->mstop = last;
        pr->mping = i;
        pthread_mutex_unlock(&pr->mu);
        at(&pr->p, W_SET);
        fastsync_event_set(&pr->evq);
        pr->p.sent++;
        if (last) break;
        unsigned long v = await_mutex(pr, &pr->evp, &pr->mpong, i, &pr->p);
        pthread_mutex_lock(&pr->mu);
        if (v != i || pr->payload_q != i) pr->p.errors++;
        pthread_mutex_unlock(&pr->mu);
        pr->p.seen++;
    }
    at(&pr->p, W_DONE);
    return NULL;
}

static void *q_mutex(void *arg)
{
    struct pair *pr = (struct pair *)arg;
    for (unsigned long i = 1;; i++) {
        atomic_store_explicit(&pr->q.iter, i, memory_order_relaxed);
        unsigned long v = await_mutex(pr, &pr->evq, &pr->mping, i, &pr->q);
        pthread_mutex_lock(&pr->mu);
        bool stop = pr->mstop;
        if (v != i || pr->payload_p != i) pr->q.errors++;
        pthread_mutex_unlock(&pr->mu);
        pr->q.seen++;
        if (stop) break;
        pthread_mutex_lock(&pr->mu);
        pr->payload_q = i;
        pr->mpong = i;
        pthread_mutex_unlock(&pr->mu);
        at(&pr->q, W_SET);
        fastsync_event_set(&pr->evp);
        pr->q.sent++;
    }
    at(&pr->q, W_DONE);
    return NULL;
}

/* ---- variant event: wait, reset, read what the setter wrote; no other synchronization ---- */

static void *p_event(void *arg)
{
    struct pair *pr = (struct pair *)arg;
    for (unsigned long i = 1;; i++) {
        atomic_store_explicit(&pr->p.iter, i, memory_order_relaxed);
        bool last = last_round(i);
        pr->payload_p = last ? i | STOP_BIT : i;
        at(&pr->p, W_SET);
        fastsync_event_set(&pr->evq);
        pr->p.sent++;
        if (last) break;
        at(&pr->p, W_WAIT);
        fastsync_event_wait(&pr->evp);
        at(&pr->p, W_RESET);
        fastsync_event_reset(&pr->evp);
        if (pr->payload_q != i) pr->p.errors++;
        pr->p.seen++;
    }
    at(&pr->p, W_DONE);
    return NULL;
}

static void *q_event(void *arg)
{
    struct pair *pr = (struct pair *)arg;
    for (unsigned long i = 1;; i++) {
        atomic_store_explicit(&pr->q.iter, i, memory_order_relaxed);
        at(&pr->q, W_WAIT);
        fastsync_event_wait(&pr->evq);
        at(&pr->q, W_RESET);
        fastsync_event_reset(&pr->evq);
        unsigned long v = pr->payload_p;
        if ((v & ~STOP_BIT) != i) pr->q.errors++;
        pr->q.seen++;
        if (v & STOP_BIT) break;
        pr->payload_q = i;
        at(&pr->q, W_SET);
        fastsync_event_set(&pr->evp);
        pr->q.sent++;
    }
    at(&pr->q, W_DONE);
    return NULL;
}

static void *(*const p_main[NVARIANTS])(void *) = { p_flag, p_mutex, p_event };
static void *(*const q_main[NVARIANTS])(void *) = { q_flag, q_mutex, q_event };

static void dump(void *unused)
{
    (void)unused;
    diag("config %s, variant %s, %d pairs, limit %lu", g.config ? g.config : "-", variant_name[g.variant],
         g.npairs, g.limit);
    for (int i = 0; i < g.npairs; i++) {
        struct pair *pr = &g.pairs[i];
        /* relaxed: a diagnostic snapshot. */
        diag("  pair %d: P at %lu (%s), Q at %lu (%s); ping %lu pong %lu",
             i, atomic_load_explicit(&pr->p.iter, memory_order_relaxed),
             where_name[atomic_load_explicit(&pr->p.where, memory_order_relaxed)],
             atomic_load_explicit(&pr->q.iter, memory_order_relaxed),
             where_name[atomic_load_explicit(&pr->q.where, memory_order_relaxed)],
             atomic_load_explicit(&pr->ping, memory_order_relaxed),
             atomic_load_explicit(&pr->pong, memory_order_relaxed));
        test_dump_event("    evp", &pr->evp);
        test_dump_event("    evq", &pr->evq);
    }
}

static void run(const char *config, bool pinned, int npairs, int variant, double box_ms)
{
    g.config = config;
    g.variant = variant;
    g.npairs = npairs;
    g.limit = (unsigned long)(100000 * test_scale());
    if (g.limit < 1) g.limit = 1;
    for (int i = 0; i < npairs; i++) {
        struct pair *pr = &g.pairs[i];
        memset(pr, 0, sizeof *pr);
        /* alternate private and shared events between pairs */
        fastsync_event_init(&pr->evp, false, i % 2 ? TEST_SHARED : 0);
        fastsync_event_init(&pr->evq, false, i % 2 ? TEST_SHARED : 0);
        pthread_mutex_init(&pr->mu, NULL);
    }
    test_pin_all(pinned);
    g.end = test_box_end(box_ms);
    uint64_t t0 = test_now_ns();
    pthread_t tp[MAXPAIRS], tq[MAXPAIRS];
    for (int i = 0; i < npairs; i++) {
        tq[i] = test_thread_start(q_main[variant], &g.pairs[i]);
        tp[i] = test_thread_start(p_main[variant], &g.pairs[i]);
    }
    for (int i = 0; i < npairs; i++) {
        test_thread_join(tp[i]);
        test_thread_join(tq[i]);
    }
    double secs = (double)(test_now_ns() - t0) / 1e9;
    test_pin_all(false);

    unsigned long total = 0, bad_p = 0, bad_q = 0, bad_sent = 0, errors = 0, busy = 0;
    for (int i = 0; i < npairs; i++) {
        struct pair *pr = &g.pairs[i];
        unsigned long n = pr->p.sent;
        total += n;
        bad_q += pr->q.seen != n;
        bad_p += pr->p.seen != n - 1;
        bad_sent += pr->q.sent != n - 1;
        errors += pr->p.errors + pr->q.errors;
        diag("%s/%s pair %d: %lu pings, %lu pongs", config, variant_name[variant], i, n, pr->q.sent);
        pthread_mutex_destroy(&pr->mu);
        busy += (fastsync_event_destroy(&pr->evp) != 0) + (fastsync_event_destroy(&pr->evq) != 0);
    }
    char label[96];
    snprintf(label, sizeof label, "%s, %s, %d pair%s", variant_name[variant], config, npairs, npairs > 1 ? "s" : "");
    is_int(bad_q, 0, "%s: Q saw exactly the pings P sent", label);
    is_int(bad_p + bad_sent, 0, "%s: P saw exactly the pongs Q sent, one fewer than the pings", label);
    is_int(errors, 0, "%s: every handoff carried the right number and payload", label);
    is_int(busy, 0, "%s: every event destroyed with no waiter left in it", label);
    diag("%s: %lu handoffs each way in %.3f s", label, total, secs);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    int over = test_ncpu() + 1;
    if (over > MAXPAIRS) over = MAXPAIRS;
    for (int v = 0; v < NVARIANTS; v++) {
        run("spread", false, 1, v, 200);
        run("pinned", true, 1, v, 200);
        run("oversubscribed", false, over, v, 200);
    }
    test_watchdog_stop();
    return done_testing();
}
