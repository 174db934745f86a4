/* SPDX-License-Identifier: MIT */
/* sem_post_vs_timeout: a post racing a timeout. Per round, on a fresh semaphore at 0, a
 * waiter calls timedwait (or clockwait on CLOCK_REALTIME) with a deadline now + d, and a
 * poster posts once near the deadline: at d plus an offset drawn from [-d/2, +d/2) by the
 * seed, or (every other round) aimed just before the moment the waiter's timed-out wait
 * has been seen to return, so that the token often lands between the kernel's timeout and
 * the waiter's deregistration. Whichever wins, exactly one of "the wait succeeded" and "the token is still there"
 * holds: success + value == 1, every round; the wait returns 0 or ETIMEDOUT, and no waiter
 * is left registered. Both outcomes are counted and reported (not asserted: timing).
 * Several pairs run at once; modes spread and pinned to one CPU, and more threads than
 * CPUs. */
#include "harness.h"

#if defined(__linux__)
#include <sys/prctl.h>
#endif

struct pair {
    unsigned id;
    uint64_t rng, box_end;
    pthread_barrier_t bar;
    fastsync_sem_t s;
    /* set by the poster before the first barrier of a round */
    struct timespec deadline;
    clockid_t clock;
    bool quit;
    /* set by the waiter before the second barrier */
    int result;
    int64_t returned_at; /* the round's clock, read right after the wait returned */
    /* the poster's tally */
    _Atomic(unsigned long) rounds;
    _Atomic(int) phase; /* 0 set-up, 1 round running, 2 checking (for the dump) */
    unsigned long success, timeout, early_post, late_post, aimed, bad_rounds, bad_codes, registered;
};

static struct pair *pairs;
static int npairs;

static void dump(void *unused)
{
    (void)unused;
    for (int i = 0; i < npairs; i++) {
        /* relaxed: progress read for the dump only. */
        diag("pair %d: %lu rounds, phase %d", i, atomic_load_explicit(&pairs[i].rounds, memory_order_relaxed),
             atomic_load_explicit(&pairs[i].phase, memory_order_relaxed));
        test_dump_sem("  sem", &pairs[i].s);
    }
}

static void barrier(struct pair *p)
{
    int r = pthread_barrier_wait(&p->bar);
    if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD) bail("pthread_barrier_wait: %d", r);
}

/* Timers of this thread fire on time instead of up to 50 us late (the default slack): the
 * moment a timed-out wait returns becomes predictable, and the aimed posts hit it. */
static void precise_timers(void)
{
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
}

static void *waiter_main(void *arg)
{
    struct pair *p = (struct pair *)arg;
    precise_timers();
    for (;;) {
        barrier(p); /* the round is set up */
        if (p->quit) break;
        p->result = p->clock == CLOCK_MONOTONIC ? fastsync_sem_timedwait(&p->s, &p->deadline)
                                                : fastsync_sem_clockwait(&p->s, p->clock, &p->deadline);
        p->returned_at = test_clock_ns(p->clock);
        barrier(p); /* the round is over */
    }
    return NULL;
}

static void *poster_main(void *arg)
{
    struct pair *p = (struct pair *)arg;
    precise_timers();
    unsigned long rounds = 0;
    int64_t lag = 60000; /* running estimate: a timed-out wait returns this long after its deadline */
    for (;;) {
        /* relaxed (every store to phase and rounds): progress for the dump. */
        atomic_store_explicit(&p->phase, 0, memory_order_relaxed);
        if (!test_box_more(p->box_end, rounds)) {
            p->quit = true;
            barrier(p);
            break;
        }
        uint64_t x = test_rand(&p->rng);
        int64_t d = 20000 + (int64_t)(x % 980000);                     /* 20 us .. 1 ms */
        int64_t off = (int64_t)((x >> 20) % (uint64_t)d) - d / 2;      /* [-d/2, d/2) */
        bool aimed = (x >> 52) % 2 == 0;
        if (aimed) off = lag - (int64_t)((x >> 20) % 20000); /* 0-20 us before the usual return */
        p->clock = (x >> 40) % 4 == 0 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        fastsync_sem_init(&p->s, 0, (x >> 44) % 4 == 0 ? TEST_SHARED : 0);
        int64_t deadline = test_clock_ns(p->clock) + d;
        p->deadline = test_ns_ts(deadline);
        atomic_store_explicit(&p->phase, 1, memory_order_relaxed);
        barrier(p); /* go */

        /* Sleep to the target (timer slack makes the post late by up to ~50 us), or sleep
         * to 40 us before it and spin the rest (on time; pinned, it delays the waiter). */
        bool spin = aimed || (x >> 48) % 2 == 0;
        struct timespec at = test_ns_ts(deadline + off - (spin ? 40000 : 0));
        while (clock_nanosleep(p->clock, TIMER_ABSTIME, &at, NULL) == EINTR) {}
        while (spin && test_clock_ns(p->clock) < deadline + off) fastsync__cpu_relax();
        int64_t posted_at = test_clock_ns(p->clock);
        int rp = fastsync_sem_post(&p->s);
        barrier(p); /* the waiter has returned */

        atomic_store_explicit(&p->phase, 2, memory_order_relaxed);
        int r = p->result;
        unsigned value = fastsync_sem_getvalue(&p->s);
        if (posted_at < deadline) p->early_post++;
        else p->late_post++;
        if (r == 0) p->success++;
        else if (r == ETIMEDOUT) p->timeout++;
        if (r == ETIMEDOUT && p->returned_at - deadline < 5000000) lag += (p->returned_at - deadline - lag) / 8;
        if (aimed) p->aimed++;
        if ((r != 0 && r != ETIMEDOUT) || rp != 0) {
            if (p->bad_codes++ == 0) diag("pair %u round %lu: wait returned %d, post %d", p->id, rounds, r, rp);
        }
        if ((r == 0 ? 1u : 0u) + value != 1) {
            if (p->bad_rounds++ < 5)
                diag("pair %u round %lu: wait returned %d and the value is %u (d %" PRId64 " ns, post at "
                     "deadline %+" PRId64 " ns)",
                     p->id, rounds, r, value, d, posted_at - deadline);
        }
        if (fastsync_sem_destroy(&p->s) != 0) p->registered++;
        /* relaxed: progress for the dump; the tally is read after join. */
        atomic_store_explicit(&p->rounds, ++rounds, memory_order_relaxed);
    }
    return NULL;
}

static void run(const char *name, bool pinned, int n, double ms)
{
    test_pin_all(pinned);
    pairs = (struct pair *)calloc((size_t)n, sizeof *pairs);
    pthread_t *t = (pthread_t *)calloc((size_t)(2 * n), sizeof *t);
    if (!pairs || !t) bail("out of memory");
    npairs = n;
    test_watchdog_start(dump, NULL);
    uint64_t end = test_box_end(ms);
    for (int i = 0; i < n; i++) {
        pairs[i].id = (unsigned)i;
        pairs[i].rng = test_stream((unsigned)i);
        pairs[i].box_end = end;
        pthread_barrier_init(&pairs[i].bar, NULL, 2);
        t[2 * i] = test_thread_start(waiter_main, &pairs[i]);
        t[2 * i + 1] = test_thread_start(poster_main, &pairs[i]);
    }
    for (int i = 0; i < 2 * n; i++) test_thread_join(t[i]);
    test_watchdog_stop();

    unsigned long rounds = 0, success = 0, timeout = 0, early = 0, late = 0, aimed = 0, bad_rounds = 0, bad_codes = 0,
                  registered = 0;
    for (int i = 0; i < n; i++) {
        struct pair *p = &pairs[i];
        rounds += atomic_load_explicit(&p->rounds, memory_order_relaxed); /* relaxed: joined */
        success += p->success;
        timeout += p->timeout;
        early += p->early_post;
        aimed += p->aimed;
        late += p->late_post;
        bad_rounds += p->bad_rounds;
        bad_codes += p->bad_codes;
        registered += p->registered;
        pthread_barrier_destroy(&p->bar);
    }
    diag("%s, %d pairs: %lu rounds: %lu waits took the token, %lu timed out (the token stayed); "
         "posts %lu before the deadline, %lu at or after it (%lu aimed at the return of a timeout)",
         name, n, rounds, success, timeout, early, late, aimed);
    ok(rounds > 0, "%s, %d pairs: rounds ran", name, n);
    is_int(bad_rounds, 0, "%s, %d pairs: success + value == 1 in every round", name, n);
    is_int(bad_codes, 0, "%s, %d pairs: wait gave only 0 or ETIMEDOUT, post only 0", name, n);
    is_int(registered, 0, "%s, %d pairs: no waiter left registered after any round", name, n);
    is_int(success + timeout, rounds, "%s, %d pairs: every round counted once", name, n);
    free(t);
    free(pairs);
    pairs = NULL;
    npairs = 0;
}

int main(void)
{
    test_init();
    int n = test_ncpu();
    run("spread", false, 1, 400);
    run("pinned", true, 1, 400);
    run("spread", false, n, 400); /* 2 threads per CPU */
    run("pinned", true, 2, 400);
    test_pin_all(false);
    return done_testing();
}
