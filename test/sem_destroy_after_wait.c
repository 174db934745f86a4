/* SPDX-License-Identifier: MIT */
/* sem_destroy_after_wait: a waiter may destroy and free the semaphore as soon as its wait
 * returns, while the poster is still inside post (between the RMW that publishes the token
 * and its FUTEX_WAKE). Per round the semaphore lives in its own mmap'd page, or in a
 * malloc'd block under a sanitizer; the last waiter to return destroys it and unmaps (or
 * frees) it at once. A post that touched the object after publishing its token crashes
 * (SIGSEGV), or ASan reports a use after free when the touch came after the free; under
 * TSan the free is a write that the touch is not ordered with, a data race reported
 * whichever came first in time: the one build that catches it in every round.
 * Groups of one poster and one or two waiters, private and FASTSYNC_SHARED semaphores,
 * waits by wait, timedwait and clockwait(REALTIME); modes spread and pinned to one CPU, and
 * more threads than CPUs. */
#include "harness.h"

#include <signal.h>

struct group {
    unsigned id;
    int nwaiters;
    uint64_t rng, box_end;
    pthread_barrier_t bar;
    /* set by the poster before the first barrier of a round */
    fastsync_sem_t *sem;
    int how;
    bool quit;
    _Atomic(int) refs; /* waiters yet to return this round: the last one frees */
    _Atomic(unsigned long) rounds;
    _Atomic(int) poster_phase; /* 0 set-up, 1 before post, 2 posting, 3 posted */
    unsigned long bad_post, freed_by_waiter, freed_in_post;
    struct { _Atomic(int) phase; unsigned long bad; int code; } w[2]; /* 0 idle, 1 in wait, 2 returned */
};

static struct group *groups;
static int ngroups;

static void dump(void *unused)
{
    (void)unused;
    for (int i = 0; i < ngroups; i++) {
        struct group *g = &groups[i];
        /* relaxed: progress read for the dump only. The semaphore itself may be gone, so
         * its word is printed only while a waiter is still in wait. */
        int p0 = atomic_load_explicit(&g->w[0].phase, memory_order_relaxed);
        int p1 = g->nwaiters > 1 ? atomic_load_explicit(&g->w[1].phase, memory_order_relaxed) : 0;
        diag("group %d: %lu rounds, poster phase %d, waiter phases %d %d, refs %d", i,
             atomic_load_explicit(&g->rounds, memory_order_relaxed),
             atomic_load_explicit(&g->poster_phase, memory_order_relaxed), p0, p1,
             atomic_load_explicit(&g->refs, memory_order_relaxed));
        if (p0 == 1 || p1 == 1) {
            char what[48];
            snprintf(what, sizeof what, "  sem %p", (void *)g->sem);
            test_dump_sem(what, g->sem);
        }
    }
}

#if !TEST_PAGE_MALLOC
/* A touch of an unmapped semaphore: say so on the TAP stream, then die. */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char msg[96] = "Bail out! SIGSEGV at 0x";
    size_t n = strlen(msg);
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int shift = (int)sizeof a * 8 - 4; shift >= 0; shift -= 4) msg[n++] = "0123456789abcdef"[(a >> shift) & 15];
    const char *tail = ": a semaphore touched after its waiter unmapped it?\n";
    for (size_t i = 0; tail[i] && n < sizeof msg - 1; i++) msg[n++] = tail[i];
    ssize_t w = write(1, msg, n);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

/* In its own page (the harness's test_page_alloc_at): at the start, the end or anywhere in it;
 * or a malloc'd block under a sanitizer. */
static fastsync_sem_t *sem_alloc(uint64_t x, bool shared)
{
    size_t slots = test_page_size() / sizeof(fastsync_sem_t);
    size_t at = x % 3 == 0 ? 0 : x % 3 == 1 ? slots - 1 : (size_t)(x >> 8) % slots;
    return (fastsync_sem_t *)test_page_alloc_at(sizeof(fastsync_sem_t), at * sizeof(fastsync_sem_t), shared);
}

static void barrier(struct group *g)
{
    int r = pthread_barrier_wait(&g->bar);
    if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD) bail("pthread_barrier_wait: %d", r);
}

struct waiter_arg { struct group *g; int i; };

static void *waiter_main(void *arg)
{
    struct group *g = ((struct waiter_arg *)arg)->g;
    int i = ((struct waiter_arg *)arg)->i;
    for (;;) {
        barrier(g); /* the round is set up */
        if (g->quit) break;
        fastsync_sem_t *s = g->sem;
        /* relaxed (every store to phase): progress for the dump. */
        atomic_store_explicit(&g->w[i].phase, 1, memory_order_relaxed);
        int r;
        struct timespec far;
        switch (g->how) {
        case 0:
            r = fastsync_sem_wait(s);
            break;
        case 1:
            far = fastsync_deadline_in(3600 * 1000000000ull);
            r = fastsync_sem_timedwait(s, &far);
            break;
        default:
            clock_gettime(CLOCK_REALTIME, &far);
            far.tv_sec += 3600;
            r = fastsync_sem_clockwait(s, CLOCK_REALTIME, &far);
            break;
        }
        atomic_store_explicit(&g->w[i].phase, 2, memory_order_relaxed);
        if (r != 0) {
            g->w[i].bad++;
            g->w[i].code = r;
        }
        /* acq_rel: the last waiter to get here frees the semaphore, after the other's use of
         * it (its wait) — release by the other's decrement, acquire by the last one's. */
        if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1) {
            int d = fastsync_sem_destroy(s);
            if (d != 0) {
                g->w[i].bad++;
                g->w[i].code = d;
            }
            /* relaxed: a statistic, how often the window was hit */
            if (atomic_load_explicit(&g->poster_phase, memory_order_relaxed) == 2) g->freed_in_post++;
            test_page_free(s); /* at once: the poster may still be inside post */
            g->freed_by_waiter++;
        }
        barrier(g); /* the round is over */
        atomic_store_explicit(&g->w[i].phase, 0, memory_order_relaxed);
    }
    return NULL;
}

static void *poster_main(void *arg)
{
    struct group *g = (struct group *)arg;
    unsigned long rounds = 0;
    for (;;) {
        /* relaxed (every store to poster_phase and rounds): progress for the dump. */
        atomic_store_explicit(&g->poster_phase, 0, memory_order_relaxed);
        if (!test_box_more(g->box_end, rounds)) {
            g->quit = true;
            barrier(g);
            break;
        }
        uint64_t x = test_rand(&g->rng);
        bool shared = (x >> 4) % 2 == 0;
        g->sem = sem_alloc(x >> 8, shared);
        fastsync_sem_init(g->sem, 0, shared ? TEST_SHARED : 0);
        g->how = (int)((x >> 32) % 3);
        atomic_store_explicit(&g->refs, g->nwaiters, memory_order_relaxed); /* published by the barrier */
        atomic_store_explicit(&g->poster_phase, 1, memory_order_relaxed);
        fastsync_sem_t *s = g->sem;
        barrier(g); /* go */

        /* Post at once (the waiter may still be spinning or registering), after a few polls
         * or after a sleep (the waiter asleep in the kernel). */
        switch ((x >> 40) % 4) {
        case 0: break;
        case 1: for (int i = 0; i < (int)((x >> 44) % 200); i++) fastsync__cpu_relax(); break;
        case 2: sched_yield(); break;
        default: test_sleep_ns((x >> 44) % 50000); break;
        }
        atomic_store_explicit(&g->poster_phase, 2, memory_order_relaxed);
        int r = 0;
        if (g->nwaiters == 1) r = fastsync_sem_post(s);
        else if ((x >> 50) % 2) r = fastsync_sem_post_n(s, 2);
        else {
            r = fastsync_sem_post(s);
            r |= fastsync_sem_post(s); /* the second may find the first waiter gone */
        }
        /* `s` may be unmapped by now: never touch it again. */
        atomic_store_explicit(&g->poster_phase, 3, memory_order_relaxed);
        if (r != 0) g->bad_post++;
        barrier(g); /* the waiters have returned and freed it */
        atomic_store_explicit(&g->rounds, ++rounds, memory_order_relaxed);
    }
    return NULL;
}

static void run(const char *name, bool pinned, int n, int nwaiters, double ms)
{
    test_pin_all(pinned);
    groups = (struct group *)calloc((size_t)n, sizeof *groups);
    pthread_t *t = (pthread_t *)calloc((size_t)(n * (1 + nwaiters)), sizeof *t);
    struct waiter_arg *wa = (struct waiter_arg *)calloc((size_t)(n * nwaiters), sizeof *wa);
    if (!groups || !t || !wa) bail("out of memory");
    ngroups = n;
    test_watchdog_start(dump, NULL);
    uint64_t end = test_box_end(ms);
    int nt = 0;
    for (int i = 0; i < n; i++) {
        struct group *g = &groups[i];
        g->id = (unsigned)i;
        g->nwaiters = nwaiters;
        g->rng = test_stream((unsigned)i);
        g->box_end = end;
        pthread_barrier_init(&g->bar, NULL, (unsigned)nwaiters + 1);
        for (int k = 0; k < nwaiters; k++) {
            wa[i * nwaiters + k].g = g;
            wa[i * nwaiters + k].i = k;
            t[nt++] = test_thread_start(waiter_main, &wa[i * nwaiters + k]);
        }
        t[nt++] = test_thread_start(poster_main, g);
    }
    for (int i = 0; i < nt; i++) test_thread_join(t[i]);
    test_watchdog_stop();

    unsigned long rounds = 0, freed = 0, in_post = 0, bad_post = 0, bad_wait = 0;
    int code = 0;
    for (int i = 0; i < n; i++) {
        struct group *g = &groups[i];
        rounds += atomic_load_explicit(&g->rounds, memory_order_relaxed); /* relaxed: joined */
        freed += g->freed_by_waiter;
        in_post += g->freed_in_post;
        bad_post += g->bad_post;
        for (int k = 0; k < nwaiters; k++) {
            bad_wait += g->w[k].bad;
            if (g->w[k].bad) code = g->w[k].code;
        }
        pthread_barrier_destroy(&g->bar);
    }
    diag("%s, %d groups of 1 poster + %d waiter(s): %lu rounds, each semaphore %s by its last waiter, "
         "%lu of them while the poster was still inside post", name, n,
         nwaiters, rounds, TEST_PAGE_MALLOC ? "freed" : "unmapped", in_post);
    ok(rounds > 0, "%s, %d x (1+%d): rounds ran", name, n, nwaiters);
    is_int(freed, rounds, "%s, %d x (1+%d): every round's semaphore freed by a waiter", name, n, nwaiters);
    if (!is_int(bad_wait, 0, "%s, %d x (1+%d): every wait and destroy returned 0", name, n, nwaiters))
        diag("  last code %d", code);
    is_int(bad_post, 0, "%s, %d x (1+%d): every post returned 0", name, n, nwaiters);
    free(wa);
    free(t);
    free(groups);
    groups = NULL;
    ngroups = 0;
}

int main(void)
{
    test_init();
#if !TEST_PAGE_MALLOC
    test_page_on_fault(on_segv);
#endif
    diag("semaphores live in %s", TEST_PAGE_WHERE);
    int n = test_ncpu();
    run("spread", false, 1, 1, 400);
    run("pinned", true, 1, 1, 400);
    run("spread", false, n, 2, 400); /* 3 threads per CPU */
    run("pinned", true, 2, 2, 400);
    test_pin_all(false);
    return done_testing();
}
