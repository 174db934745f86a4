/* SPDX-License-Identifier: MIT */
/* mutex_destroy_after_unlock: fastsync.h promises that an unlock touches the mutex only up
 * to its RMW, then at most makes a FUTEX_WAKE on its address, so the next owner may destroy
 * and free the mutex at once. Each round's mutex lives at the very end of its own mmap'd
 * page: one thread of a pair (the holder) locks it and unlocks it after a random delay; the
 * other (the freer) locks it meanwhile (spinning or asleep), unlocks, destroys it (0) and
 * munmaps the page at once, while the holder may still be inside its unlock: any later
 * access by unlock is a SIGSEGV. The holder gives up the CPU after each futex wake (the
 * harness's test_after_futex_wake), so that a freer it woke runs and frees the page before
 * the rest of the unlock runs: an access after the wake faults in nearly every round. (An
 * access between the RMW and the wake can only fault when the freer did not sleep, as the
 * wake is what lets a sleeping freer run: that window is left to preemption.) Under
 * AddressSanitizer or ThreadSanitizer the mutex is a malloc'd block, freed at once (a later
 * access is a heap-use-after-free report, or under TSan a race with the free, whichever came
 * first; the harness's test_page_alloc). Private and shared mutexes; spread over the CPUs,
 * pinned to one CPU, and with more pairs than CPUs. */
#include "harness.h"

#define MAXPAIRS 32

struct pair {
    fastsync_sem_t go, held;            /* freer -> holder: slot is set; holder -> freer: locked */
    _Atomic(fastsync_mutex_t *) slot;   /* NULL: stop */
    _Atomic unsigned long rounds;       /* relaxed: progress for the dump */
    unsigned long bad, shared_rounds;   /* read after the join */
    uint64_t h_rng, f_rng;
};

static struct {
    int npairs;
    uint64_t end;
    struct pair pairs[MAXPAIRS];
} g;

static void dump(void *unused)
{
    (void)unused;
    for (int i = 0; i < g.npairs; i++)
        diag("pair %d: %lu rounds", i, atomic_load_explicit(&g.pairs[i].rounds, memory_order_relaxed));
}

static void after_wake(void)
{
    sched_yield();       /* pinned: the woken freer runs now */
    test_sleep_ns(20000); /* spread: it has 20 us to free */
}

/* A random delay: a short spin, a yield, or (one time in four) 200 us, after which a
 * locker has given up spinning and sleeps, so that the unlock must wake it. */
static void delay(uint64_t *rng)
{
    unsigned r = (unsigned)(test_rand(rng) % 8);
    if (r < 2) test_sleep_ns(200000);
    else if (r == 2) sched_yield();
    else for (volatile unsigned i = 0; i < r * 50; i++) {
    }
}

static void *holder(void *p)
{
    struct pair *q = (struct pair *)p;
    for (;;) {
        fastsync_sem_wait(&q->go);
        /* acquire: pairs with the freer's release store of the slot (the mutex's init). */
        fastsync_mutex_t *m = atomic_load_explicit(&q->slot, memory_order_acquire);
        if (!m) return NULL;
        if (fastsync_mutex_lock(m) != 0) q->bad++;
        fastsync_sem_post(&q->held);
        delay(&q->h_rng);
        if (fastsync_mutex_unlock(m) != 0) q->bad++; /* the freer may free it from here on */
    }
}

static void *freer(void *p)
{
    struct pair *q = (struct pair *)p;
    unsigned long n = 0;
    while (test_box_more(g.end, n)) {
        fastsync_mutex_t *m = (fastsync_mutex_t *)test_page_alloc(sizeof(fastsync_mutex_t), false);
        bool shared = test_rand(&q->f_rng) % 2 && FASTSYNC_HAS_SHARED;
        fastsync_mutex_init(m, shared ? TEST_SHARED : 0);
        q->shared_rounds += shared;
        /* release: pairs with the holder's acquire load of the slot. */
        atomic_store_explicit(&q->slot, m, memory_order_release);
        fastsync_sem_post(&q->go);
        fastsync_sem_wait(&q->held);
        delay(&q->f_rng);
        if (fastsync_mutex_lock(m) != 0) q->bad++;
        if (fastsync_mutex_unlock(m) != 0) q->bad++;
        if (fastsync_mutex_destroy(m) != 0) q->bad++;
        test_page_free(m); /* the holder may still be inside its unlock */
        n++;
        /* relaxed: progress for the dump. */
        atomic_store_explicit(&q->rounds, n, memory_order_relaxed);
    }
    atomic_store_explicit(&q->slot, NULL, memory_order_release); /* release: as above */
    fastsync_sem_post(&q->go);
    return NULL;
}

static void run(const char *name, bool pinned, int npairs, double ms)
{
    test_pin_all(pinned);
    memset(&g.pairs, 0, sizeof g.pairs);
    g.npairs = npairs;
    pthread_t t[2 * MAXPAIRS];
    for (int i = 0; i < npairs; i++) {
        struct pair *q = &g.pairs[i];
        fastsync_sem_init(&q->go, 0, 0);
        fastsync_sem_init(&q->held, 0, 0);
        q->h_rng = test_stream(2 * (unsigned)i);
        q->f_rng = test_stream(2 * (unsigned)i + 1);
    }
    unsigned long wakes0 = test_kernel_wakes();
    g.end = test_box_end(ms);
    for (int i = 0; i < npairs; i++) {
        t[2 * i] = test_thread_start(holder, &g.pairs[i]);
        t[2 * i + 1] = test_thread_start(freer, &g.pairs[i]);
    }
    for (int i = 0; i < 2 * npairs; i++) test_thread_join(t[i]);
    unsigned long rounds = 0, bad = 0, shared = 0, wakes = test_kernel_wakes() - wakes0;
    for (int i = 0; i < npairs; i++) {
        /* relaxed: the threads are joined. */
        rounds += atomic_load_explicit(&g.pairs[i].rounds, memory_order_relaxed);
        bad += g.pairs[i].bad;
        shared += g.pairs[i].shared_rounds;
    }
    ok(rounds >= (unsigned long)npairs,
       "%s, %d pairs: %lu rounds (%lu shared, %lu wakes), each mutex freed by its next owner at once",
       name, npairs, rounds, shared, wakes);
    is_int(bad, 0, "%s, %d pairs: every lock, unlock and destroy returned 0", name, npairs);
}

int main(void)
{
    test_init();
    diag("mutexes live in %s", TEST_PAGE_WHERE);
    test_watchdog_start(dump, NULL);
    test_after_futex_wake = after_wake;
    int over = test_ncpu() + 1;
    if (over > MAXPAIRS) over = MAXPAIRS;
    run("spread", false, 1, 300);
    run("spread", false, over, 300);
    run("pinned", true, 2, 300);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
