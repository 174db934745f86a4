/* SPDX-License-Identifier: MIT */
/* event_destroy_after_wait: fastsync.h promises that event_set touches the event only up
 * to the RMW that sets it, then at most makes a FUTEX_WAKE on its address, so a waiter may
 * destroy and free the event as soon as its wait returns. Here each round's event lives in
 * its own mmap'd page (at the very end of it), and the waiter munmaps the page the moment
 * its wait returns, while the setter may still be inside set: any later access by set is
 * a SIGSEGV. Under AddressSanitizer or ThreadSanitizer the event is a malloc'd block instead,
 * freed at once (a later access is a heap-use-after-free report, or under TSan a race with the
 * free, whichever came first; the harness's test_page_alloc). Many rounds, waits of every kind,
 * private and shared events, with random delays on the setter's side; spread over the
 * CPUs, pinned to one CPU, and with more threads than cores. */
#include "harness.h"

#define MAXPAIRS 64

enum { W_ALLOC, W_WAIT, W_FREE, W_DONE };
static const char *const w_where[] = { "allocating", "waiting", "freeing", "done" };
enum { S_TAKE, S_DELAY, S_SET, S_DONE };
static const char *const s_where[] = { "waiting for an event", "delaying", "inside set", "done" };

struct pair {
    fastsync_sem_t go;                  /* waiter -> setter: slot holds this round's event */
    _Atomic(fastsync_event_t *) slot;   /* NULL: stop */
    /* progress for the dump. relaxed: only read by the dump */
    _Atomic unsigned long w_rounds, s_rounds;
    _Atomic int w_at, s_at;
    /* results, read after the join */
    unsigned long waits_ok, bad, bad_destroy, sets, shared_rounds;
    uint64_t w_rng, s_rng;
};

static struct {
    const char *config;
    int npairs;
    uint64_t end;
    struct pair pairs[MAXPAIRS];
} g;

/* Destroys and frees the event; returns what destroy returned. */
static int ev_free(fastsync_event_t *e)
{
    int r = fastsync_event_destroy(e);
    test_page_free(e);
    return r;
}

static void at(_Atomic int *where, int w)
{
    /* relaxed: progress for the dump only. */
    atomic_store_explicit(where, w, memory_order_relaxed);
}

static void *waiter_main(void *arg)
{
    struct pair *pr = (struct pair *)arg;
    for (unsigned long round = 0; round == 0 || test_box_open(g.end); round++) {
        atomic_store_explicit(&pr->w_rounds, round, memory_order_relaxed); /* relaxed: dump only */
        at(&pr->w_at, W_ALLOC);
        unsigned r = (unsigned)test_rand(&pr->w_rng);
        int flags = r & 1 ? TEST_SHARED : 0;
        pr->shared_rounds += (unsigned long)flags;
        fastsync_event_t *e = (fastsync_event_t *)test_page_alloc(sizeof(fastsync_event_t), false);
        fastsync_event_init(e, false, flags);
        /* relaxed: published by the post below (release, paired with the setter's wait). */
        atomic_store_explicit(&pr->slot, e, memory_order_relaxed);
        fastsync_sem_post(&pr->go);
        /* sometimes let the setter get there first (the wait's fast path) */
        if ((r & 0x1e) == 0) sched_yield();
        at(&pr->w_at, W_WAIT);
        int ret = 0;
        struct timespec d;
        switch (r >> 5 & 3) {
        case 0:
        case 1:
            fastsync_event_wait(e);
            break;
        case 2:
            d = fastsync_deadline_in(60000000000u);
            ret = fastsync_event_timedwait(e, &d);
            break;
        default:
            clock_gettime(CLOCK_REALTIME, &d);
            d.tv_sec += 60;
            ret = fastsync_event_clockwait(e, CLOCK_REALTIME, &d);
            break;
        }
        /* the wait returned: the event is ours to destroy, whatever set is still doing */
        at(&pr->w_at, W_FREE);
        if (ev_free(e) != 0) pr->bad_destroy++;
        if (ret == 0) pr->waits_ok++;
        else pr->bad++;
    }
    atomic_store_explicit(&pr->slot, NULL, memory_order_relaxed); /* relaxed: as above */
    fastsync_sem_post(&pr->go);
    at(&pr->w_at, W_DONE);
    return NULL;
}

static void *setter_main(void *arg)
{
    struct pair *pr = (struct pair *)arg;
    for (;;) {
        at(&pr->s_at, S_TAKE);
        fastsync_sem_wait(&pr->go);
        /* relaxed: ordered by the wait above (acquire, paired with the waiter's post). */
        fastsync_event_t *e = atomic_load_explicit(&pr->slot, memory_order_relaxed);
        if (!e) break;
        at(&pr->s_at, S_DELAY);
        unsigned r = (unsigned)test_rand(&pr->s_rng);
        switch (r & 7) {
        case 0: sched_yield(); break;
        case 1: case 2: for (unsigned i = r >> 8 & 0xfff; i > 0; i--) fastsync__cpu_relax(); break;
        default: break;
        }
        at(&pr->s_at, S_SET);
        fastsync_event_set(e);
        pr->sets++;
        atomic_store_explicit(&pr->s_rounds, pr->sets, memory_order_relaxed); /* relaxed: dump only */
    }
    at(&pr->s_at, S_DONE);
    return NULL;
}

static void dump(void *unused)
{
    (void)unused;
    diag("config %s, %d pairs, events %s", g.config ? g.config : "-", g.npairs, TEST_PAGE_MALLOC ? "malloc'd" : "mmap'd");
    for (int i = 0; i < g.npairs; i++) {
        struct pair *pr = &g.pairs[i];
        /* relaxed: a diagnostic snapshot. */
        int w_at = atomic_load_explicit(&pr->w_at, memory_order_relaxed);
        diag("  pair %d: waiter round %lu (%s), setter %lu sets (%s)", i,
             atomic_load_explicit(&pr->w_rounds, memory_order_relaxed), w_where[w_at],
             atomic_load_explicit(&pr->s_rounds, memory_order_relaxed),
             s_where[atomic_load_explicit(&pr->s_at, memory_order_relaxed)]);
        test_dump_sem("    go semaphore", &pr->go);
        /* The event word only while the waiter hangs in its wait: else it may be unmapped. */
        fastsync_event_t *e = atomic_load_explicit(&pr->slot, memory_order_relaxed);
        if (w_at == W_WAIT && e) test_dump_event("    its event", e);
    }
}

static void run(const char *config, bool pinned, int npairs, double box_ms)
{
    g.config = config;
    g.npairs = npairs;
    for (int i = 0; i < npairs; i++) {
        struct pair *pr = &g.pairs[i];
        memset(pr, 0, sizeof *pr);
        fastsync_sem_init(&pr->go, 0, 0);
        pr->w_rng = test_stream((unsigned)(2 * i));
        pr->s_rng = test_stream((unsigned)(2 * i + 1));
    }
    unsigned long k0 = test_kernel_wakes();
    test_pin_all(pinned);
    g.end = test_box_end(box_ms);
    pthread_t tw[MAXPAIRS], ts[MAXPAIRS];
    for (int i = 0; i < npairs; i++) {
        ts[i] = test_thread_start(setter_main, &g.pairs[i]);
        tw[i] = test_thread_start(waiter_main, &g.pairs[i]);
    }
    for (int i = 0; i < npairs; i++) {
        test_thread_join(tw[i]);
        test_thread_join(ts[i]);
    }
    test_pin_all(false);

    char label[96];
    snprintf(label, sizeof label, "%s (%d pair%s)", config, npairs, npairs > 1 ? "s" : "");
    unsigned long waits = 0, sets = 0, bad = 0, bad_destroy = 0, shared = 0;
    for (int i = 0; i < npairs; i++) {
        waits += g.pairs[i].waits_ok;
        sets += g.pairs[i].sets;
        bad += g.pairs[i].bad;
        bad_destroy += g.pairs[i].bad_destroy + (fastsync_sem_destroy(&g.pairs[i].go) != 0);
        shared += g.pairs[i].shared_rounds;
    }
    diag("%s: %lu rounds (%lu shared), %lu FUTEX_WAKEs (sets and the handoff semaphore)", label, waits + bad, shared, test_kernel_wakes() - k0);
    is_int(bad, 0, "%s: every wait returned 0", label);
    is_int(bad_destroy, 0, "%s: every event destroy (and the handoff semaphore's) returned 0", label);
    is_int(waits, sets, "%s: one successful wait per set, and the event freed each time", label);
    ok(waits >= (unsigned long)npairs, "%s: every pair ran at least one round", label);
}

int main(void)
{
    test_init();
    diag("events live in %s", TEST_PAGE_WHERE);
    test_watchdog_start(dump, NULL);
    int over = test_ncpu() + 1;
    if (over > MAXPAIRS) over = MAXPAIRS;
    run("spread", false, 1, 300);
    run("pinned", true, 1, 300);
    run("oversubscribed", false, over, 300);
    test_watchdog_stop();
    return done_testing();
}
