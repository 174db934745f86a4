/* SPDX-License-Identifier: MIT */
/* sem_conservation: tokens are neither lost nor made up. Producers post (post and post_n)
 * while consumers take tokens by trywait, by timedwait/clockwait with tiny deadlines (some
 * already past) and, for half of them, by plain wait. The producers stop once the time box
 * is up and a consumer has taken a token (so the check that tokens went through fails only
 * where none can be taken, a hang and the watchdog's failure, not where the box ended before
 * the consumers ran). Then the consumers are told to stop and as many tokens as there are
 * consumers are posted, so every consumer blocked in a plain wait gets out. Then, exactly:
 *   successful waits + final value == initial value + tokens posted
 * and no waiter is left registered. Modes: spread and pinned to one CPU, few threads and
 * more threads than CPUs. */
#include "harness.h"

enum { BY_TRY, BY_TIMED, BY_CLOCK_RT, BY_WAIT, BY_N };
static const char *const by_name[BY_N] = { "trywait", "timedwait", "clockwait(REALTIME)", "wait" };

struct producer {
    uint64_t rng;
    _Atomic(unsigned long) posted; /* tokens posted successfully (progress too) */
    unsigned long calls, bad;
    int bad_code;
};

struct consumer {
    uint64_t rng;
    bool plain_waits;              /* this consumer also uses plain wait */
    _Atomic(unsigned long) taken;  /* successful waits (progress too) */
    _Atomic(int) in;               /* the method it is in now, or -1 */
    unsigned long by[BY_N], eagain, timeouts, bad, released;
    int bad_code;
};

static struct {
    fastsync_sem_t s;
    unsigned initial;
    uint64_t box_end;
    _Atomic(bool) stop; /* consumers: leave */
    _Atomic(bool) took; /* a consumer has taken a token */
    int np, nc;
    struct producer *p;
    struct consumer *c;
} R;

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem", &R.s);
    /* relaxed: progress read for the dump only. */
    diag("stop %d, a token taken %d", (int)atomic_load_explicit(&R.stop, memory_order_relaxed),
         (int)atomic_load_explicit(&R.took, memory_order_relaxed));
    for (int i = 0; i < R.np; i++)
        diag("producer %d: %lu tokens posted", i,
             atomic_load_explicit(&R.p[i].posted, memory_order_relaxed));
    for (int i = 0; i < R.nc; i++) {
        int in = atomic_load_explicit(&R.c[i].in, memory_order_relaxed);
        diag("consumer %d%s: %lu taken, now %s", i, R.c[i].plain_waits ? " (plain waits)" : "",
             atomic_load_explicit(&R.c[i].taken, memory_order_relaxed), in < 0 ? "between calls" : by_name[in]);
    }
}

static void *producer_main(void *arg)
{
    struct producer *p = (struct producer *)arg;
    unsigned long posted = 0;
    /* relaxed (took): it only keeps the producers going; the counts are read after join. */
    while (test_box_until(R.box_end, posted, atomic_load_explicit(&R.took, memory_order_relaxed))) {
        if (fastsync_sem_getvalue(&R.s) > 256) { /* keep the value small: consumers must run dry */
            sched_yield();
            continue;
        }
        uint64_t x = test_rand(&p->rng);
        unsigned n = x % 4 == 0 ? 1 + (unsigned)(x >> 8) % 4 : 1;
        int r = n == 1 && x % 8 != 0 ? fastsync_sem_post(&R.s) : fastsync_sem_post_n(&R.s, n);
        p->calls++;
        if (r == 0) {
            posted += n;
            /* relaxed: progress for the dump; the total is read after join. */
            atomic_store_explicit(&p->posted, posted, memory_order_relaxed);
        } else {
            p->bad++;
            p->bad_code = r;
        }
        if (x % 64 == 0) sched_yield();
    }
    return NULL;
}

static void *consumer_main(void *arg)
{
    struct consumer *c = (struct consumer *)arg;
    unsigned long taken = 0;
    /* relaxed: the flag only ends the loop; the argument that every plain waiter gets out
     * rests on the tokens posted after it (see run), not on when this load sees it. */
    while (!atomic_load_explicit(&R.stop, memory_order_relaxed)) {
        uint64_t x = test_rand(&c->rng);
        int by = (int)(x % (c->plain_waits ? BY_N : BY_N - 1));
        int r, expect;
        struct timespec d;
        atomic_store_explicit(&c->in, by, memory_order_relaxed);
        switch (by) {
        case BY_TRY:
            r = fastsync_sem_trywait(&R.s);
            expect = EAGAIN;
            break;
        case BY_TIMED:
            /* 0-20 us ahead, sometimes already past when the wait looks at it */
            d = fastsync_deadline_in((x >> 8) % 20000u);
            r = fastsync_sem_timedwait(&R.s, &d);
            expect = ETIMEDOUT;
            break;
        case BY_CLOCK_RT:
            d = test_deadline_on(CLOCK_REALTIME, (x >> 8) % 20000u);
            r = fastsync_sem_clockwait(&R.s, CLOCK_REALTIME, &d);
            expect = ETIMEDOUT;
            break;
        default:
            r = fastsync_sem_wait(&R.s);
            expect = 0;
            /* relaxed: a statistic (a wait the final posts ended) */
            if (atomic_load_explicit(&R.stop, memory_order_relaxed)) c->released++;
            break;
        }
        atomic_store_explicit(&c->in, -1, memory_order_relaxed);
        if (r == 0) {
            c->by[by]++;
            taken++;
            /* relaxed: progress for the dump and the producers' loop; the total is read after
             * join. */
            atomic_store_explicit(&c->taken, taken, memory_order_relaxed);
            atomic_store_explicit(&R.took, true, memory_order_relaxed);
        } else if (r == expect) {
            if (r == EAGAIN) c->eagain++;
            else c->timeouts++;
        } else {
            c->bad++;
            c->bad_code = r;
        }
    }
    return NULL;
}

static void run(const char *name, bool pinned, int np, int nc, double ms)
{
    test_pin_all(pinned);
    uint64_t rng = test_stream(999);
    R.initial = (unsigned)(test_rand(&rng) % 4);
    fastsync_sem_init(&R.s, R.initial, test_rand(&rng) % 4 == 0 ? TEST_SHARED : 0);
    /* relaxed: before the threads start */
    atomic_store_explicit(&R.stop, false, memory_order_relaxed);
    atomic_store_explicit(&R.took, false, memory_order_relaxed);
    R.np = np;
    R.nc = nc;
    R.p = (struct producer *)calloc((size_t)np, sizeof *R.p);
    R.c = (struct consumer *)calloc((size_t)nc, sizeof *R.c);
    pthread_t *t = (pthread_t *)calloc((size_t)(np + nc), sizeof *t);
    if (!R.p || !R.c || !t) bail("out of memory");
    unsigned long waits0 = test_kernel_waits(), wakes0 = test_kernel_wakes();

    test_watchdog_start(dump, NULL);
    R.box_end = test_box_end(ms);
    for (int i = 0; i < nc; i++) {
        R.c[i].rng = test_stream((unsigned)(100 + i));
        R.c[i].plain_waits = i % 2 == 0;
        atomic_store_explicit(&R.c[i].in, -1, memory_order_relaxed); /* relaxed: before its thread starts */
        t[np + i] = test_thread_start(consumer_main, &R.c[i]);
    }
    for (int i = 0; i < np; i++) {
        R.p[i].rng = test_stream((unsigned)i);
        t[i] = test_thread_start(producer_main, &R.p[i]);
    }
    for (int i = 0; i < np; i++) test_thread_join(t[i]);
    /* The producers are done. Tell the consumers to stop, then post one token per consumer.
     * A consumer that takes one of these tokens synchronizes with the post (the release
     * sequence of the word), so it sees `stop` afterwards and takes no second one; so at
     * least one token is left for each consumer blocked in a plain wait. */
    /* relaxed: sequenced before the post_n below, whose release carries it to any consumer
     * that takes one of those tokens (its acquire); see above. */
    atomic_store_explicit(&R.stop, true, memory_order_relaxed);
    unsigned long final_posts = (unsigned long)nc;
    int r = fastsync_sem_post_n(&R.s, (unsigned)nc);
    for (int i = 0; i < nc; i++) test_thread_join(t[np + i]);
    test_watchdog_stop();

    unsigned long posted = final_posts, calls = 0, taken = 0, by[BY_N] = { 0 }, eagain = 0, timeouts = 0,
                  bad = 0, released = 0;
    int bad_code = 0;
    for (int i = 0; i < np; i++) {
        posted += atomic_load_explicit(&R.p[i].posted, memory_order_relaxed); /* relaxed: joined */
        calls += R.p[i].calls;
        bad += R.p[i].bad;
        if (R.p[i].bad) bad_code = R.p[i].bad_code;
    }
    for (int i = 0; i < nc; i++) {
        taken += atomic_load_explicit(&R.c[i].taken, memory_order_relaxed); /* relaxed: joined */
        for (int b = 0; b < BY_N; b++) by[b] += R.c[i].by[b];
        eagain += R.c[i].eagain;
        timeouts += R.c[i].timeouts;
        released += R.c[i].released;
        bad += R.c[i].bad;
        if (R.c[i].bad) bad_code = R.c[i].bad_code;
    }
    unsigned value = fastsync_sem_getvalue(&R.s);
    diag("%s, %d producers, %d consumers: initial %u, %lu tokens posted in %lu calls (+%d at the end), "
         "%lu taken (%s %lu, %s %lu, %s %lu, %s %lu), %lu EAGAIN, %lu ETIMEDOUT, %lu plain waits "
         "released by the final posts, final value %u; %lu futex waits, %lu wakes",
         name, np, nc, R.initial, posted, calls, nc, taken, by_name[0], by[0], by_name[1], by[1],
         by_name[2], by[2], by_name[3], by[3], eagain, timeouts, released, value,
         test_kernel_waits() - waits0, test_kernel_wakes() - wakes0);
    is_int(r, 0, "%s, %dp/%dc: the final post_n(%d)", name, np, nc, nc);
    ok(taken > 0 && posted > final_posts, "%s, %dp/%dc: tokens went through", name, np, nc);
    is_int(taken + value, R.initial + posted, "%s, %dp/%dc: successes + final value == initial + posts",
           name, np, nc);
    if (!is_int(bad, 0, "%s, %dp/%dc: only the expected return codes", name, np, nc))
        diag("  last unexpected code: %d", bad_code);
    is_int(fastsync_sem_destroy(&R.s), 0, "%s, %dp/%dc: no waiter left registered", name, np, nc);
    free(t);
    free(R.p);
    free(R.c);
    R.p = NULL;
    R.c = NULL;
    R.np = R.nc = 0;
}

int main(void)
{
    test_init();
    int n = test_ncpu();
    run("spread", false, 2, 2, 400);
    run("pinned", true, 2, 2, 400);
    run("spread", false, n, 2 * n > 4 ? 2 * n : 4, 400); /* 3x the CPUs */
    run("pinned", true, 2, 6, 400);
    test_pin_all(false);
    return done_testing();
}
