/* SPDX-License-Identifier: MIT */
/* latch_million: a latch under load, exact (fastsync.h: "0 once the count is 0: everything
 * the counters did before their count_down happens before the return").
 *   a million count-downs (at FASTSYNC_TEST_SCALE=1; N = 1e6 * min(1, scale), at least 8000,
 *     so 300 000 under the sanitizers' 0.3 and 8000 at 0.001) of 1 from 8 threads on a latch
 *     of count N, each counter writing a plain record of its own before each count_down,
 *     while 4 waiters wait: wait, timedwait (an hour ahead), clockwait on CLOCK_REALTIME (an
 *     hour ahead), and timedwait 100 us ahead again and again (timeouts, each leaving the
 *     waiter count, amid the count-downs). Each waiter, when its wait returns 0, reads the
 *     count 0 in the word and every counter's record complete (N / 8 each).
 *   then the same latch reused as a wait group, round after round for 200 ms * scale (at
 *     least 8 rounds): this thread adds 8 * k (k random, 1..64) from 0 before the round
 *     starts (every wait of the last round has returned: Go's rule), each counter adds 1
 *     more while its own count keeps the latch closed and counts down k + 1 times, and the
 *     4 waiters (the same kinds) wait; each waiter reads the count 0 and every record at
 *     its round's total. Exact totals at the end: every add counted down, every wait back.
 * Also under the fault-injecting futex layer (suite inject).
 * Fails with: a count_down without release or a wait's look without acquire
 * (ThreadSanitizer: the plain records race; elsewhere, on a weaker CPU, a stale record); a
 * lost wakeup (the watchdog); a wait that returns before the count is 0; a count that a
 * refused or lost CAS leaves wrong (the totals, a refused count_down). */
#include "harness.h"

#define COUNTERS 8
#define WAITERS 4

static fastsync_latch_t l;
static pthread_barrier_t bar;
static unsigned long per_counter;   /* phase 1: count-downs per counter; set before the threads */
static struct { unsigned long n; char pad[64 - sizeof(unsigned long)]; } work[COUNTERS]; /* plain */
static unsigned round_k;            /* phase 2: this round's k; written before the barrier */
static unsigned long expect_total;  /* phase 2: each record's total after this round */
static bool quit;                   /* phase 2: written by this thread before the barrier */
static _Atomic(unsigned long) rounds, timeouts, bad_return, refused; /* relaxed: read after the joins */
static _Atomic(int) phase;          /* relaxed: for the dump */

static void dump(void *unused)
{
    (void)unused;
    test_dump_latch("latch", &l);
    /* relaxed: a diagnostic snapshot */
    diag("phase %d, rounds %lu, timeouts %lu", atomic_load_explicit(&phase, memory_order_relaxed),
         atomic_load_explicit(&rounds, memory_order_relaxed), atomic_load_explicit(&timeouts, memory_order_relaxed));
}

static void barrier(void)
{
    int r = pthread_barrier_wait(&bar);
    if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD) bail("pthread_barrier_wait: %d", r);
}

/* Waiter kind i: 0 wait, 1 timedwait an hour ahead, 2 clockwait(REALTIME) an hour ahead,
 * 3 timedwait 100 us ahead until it returns 0. Then the checks of a return. */
static void wait_and_check(int i, unsigned long expect)
{
    struct timespec d;
    int r;
    switch (i) {
    case 1:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        r = fastsync_latch_timedwait(&l, &d);
        break;
    case 2:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        r = fastsync_latch_clockwait(&l, CLOCK_REALTIME, &d);
        break;
    case 3:
        for (;;) {
            d = fastsync_deadline_in(100000);
            r = fastsync_latch_timedwait(&l, &d);
            if (r != ETIMEDOUT) break;
            atomic_fetch_add_explicit(&timeouts, 1, memory_order_relaxed);
        }
        break;
    default:
        r = fastsync_latch_wait(&l);
        break;
    }
    bool good = r == 0 && test_latch_count(&l) == 0;
    for (int c = 0; c < COUNTERS; c++) good = good && work[c].n == expect; /* plain: the latch's acquire */
    if (!good) {
        if (atomic_fetch_add_explicit(&bad_return, 1, memory_order_relaxed) == 0) {
            diag("waiter %d: returned %d, count %u", i, r, (unsigned)test_latch_count(&l));
            for (int c = 0; c < COUNTERS; c++) diag("  record %d: %lu of %lu", c, work[c].n, expect);
        }
    }
}

static void count_downs(int c, unsigned long n)
{
    for (unsigned long j = 0; j < n; j++) {
        work[c].n++;
        if (fastsync_latch_count_down(&l, 1) != 0) atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
    }
}

static void *counter_main(void *p)
{
    int c = (int)(intptr_t)p;
    barrier(); /* phase 1 */
    count_downs(c, per_counter);
    barrier(); /* phase 1 over */
    for (;;) {
        barrier(); /* a round is set up */
        if (quit) break;
        /* the latch stays closed until this counter's own k count-downs are made: an add
         * now is within the rules */
        if (fastsync_latch_add(&l, 1) != 0) atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
        count_downs(c, round_k + 1);
        barrier(); /* the round is over */
    }
    return NULL;
}

static void *waiter_main(void *p)
{
    int i = (int)(intptr_t)p;
    barrier();
    wait_and_check(i, per_counter);
    barrier();
    for (;;) {
        barrier();
        if (quit) break;
        wait_and_check(i, expect_total);
        barrier();
    }
    return NULL;
}

int main(void)
{
    test_init();
    double scale = test_scale() < 1 ? test_scale() : 1;
    unsigned long n = (unsigned long)(1e6 * scale);
    if (n < 8000) n = 8000;
    per_counter = n / COUNTERS;
    n = per_counter * COUNTERS;
    diag("%lu count-downs from %d counters, %d waiters", n, COUNTERS, WAITERS);
    test_watchdog_start(dump, NULL);
    fastsync_latch_init(&l, (unsigned)n, 0);
    pthread_barrier_init(&bar, NULL, COUNTERS + WAITERS + 1);
    pthread_t t[COUNTERS + WAITERS];
    for (int i = 0; i < WAITERS; i++) t[i] = test_thread_start(waiter_main, (void *)(intptr_t)i);
    for (int c = 0; c < COUNTERS; c++) t[WAITERS + c] = test_thread_start(counter_main, (void *)(intptr_t)c);
    uint64_t t0 = test_now_ns();
    barrier(); /* go */
    barrier(); /* every counter and waiter done */
    uint64_t t1 = test_now_ns();
    atomic_store_explicit(&phase, 1, memory_order_relaxed);
    is_int(test_latch_word(&l), 0, "%lu count-downs: count 0, no waiter left", n);
    is_int(atomic_load_explicit(&bad_return, memory_order_relaxed), 0,
           "%lu count-downs: each of the %d waiters returned 0 with the count 0 and every record complete", n, WAITERS);
    is_int(atomic_load_explicit(&refused, memory_order_relaxed), 0, "%lu count-downs: none refused", n);
    diag("phase 1: %.1f ms, %lu timeouts of the 100 us waiter", (double)(t1 - t0) / 1e6,
         atomic_load_explicit(&timeouts, memory_order_relaxed));

    /* phase 2: a wait group */
    uint64_t rng = test_stream(0);
    uint64_t end = test_box_end(200);
    unsigned long total = per_counter, added = 0, r = 0;
    for (;; r++) {
        /* the barrier publishes round_k, expect_total and quit to the threads */
        if (!test_box_more(end, r)) {
            quit = true;
            barrier();
            break;
        }
        round_k = 1 + (unsigned)(test_rand(&rng) % 64);
        total += round_k + 1;
        expect_total = total;
        if (fastsync_latch_add(&l, COUNTERS * round_k) != 0) {
            ok(false, "round %lu: add from 0 refused", r);
            test_dump_latch("latch", &l);
        }
        added += COUNTERS * (round_k + 1);
        barrier(); /* go */
        barrier(); /* the round is over: every wait has returned */
        atomic_store_explicit(&rounds, r + 1, memory_order_relaxed);
    }
    for (int i = 0; i < COUNTERS + WAITERS; i++) test_thread_join(t[i]);
    test_watchdog_stop();
    unsigned long sum = 0;
    for (int c = 0; c < COUNTERS; c++) sum += work[c].n;
    is_int(sum, (unsigned long)n + added, "wait group, %lu rounds: every count_down made (%lu)", r, sum);
    is_int(test_latch_word(&l), 0, "wait group: count 0, no waiter left");
    is_int(atomic_load_explicit(&bad_return, memory_order_relaxed), 0,
           "wait group: every wait of every round returned 0 with the count 0 and every record at the round's total");
    is_int(atomic_load_explicit(&refused, memory_order_relaxed), 0, "wait group: no add or count_down refused");
    diag("%lu timeouts of the 100 us waiter in all", atomic_load_explicit(&timeouts, memory_order_relaxed));
    is_int(fastsync_latch_destroy(&l), 0, "destroy 0");
    pthread_barrier_destroy(&bar);
    return done_testing();
}
