/* SPDX-License-Identifier: MIT */
/* barrier_rounds: 8 threads meet at one barrier round after round: up to 100 000 rounds in
 * all at FASTSYNC_TEST_SCALE=1, 25 000 in each of four runs (private and shared barriers,
 * spread over the CPUs, then with every thread pinned to one CPU, where all but the running
 * thread wait for it), each times the scale and at least TEST_MIN_ROUNDS; and a run ends
 * early when its time box (250 ms times the scale) has closed, so that a slow machine
 * (qemu) is not kept long. Every thread must make the same number of waits: the thread that
 * gets SERIAL in a round r after the box closed sets the run's last round to r + 1 before
 * its next arrival, which every thread's return from round r + 1 comes after, so that each
 * reads it by then at the latest.
 * Before its wait of round r each thread writes r into its own plain slot (slots of even
 * and odd rounds apart, so that a thread already writing for round r+1 does not disturb the
 * readers of round r: it can only write round r+2's, in r's slots, after every thread has
 * arrived in r+1, its checks of r done); after the wait it reads every thread's slot of
 * that parity and finds r in each. One round in 128 one thread (by turns) arrives 200 us
 * late, after the others have gone to sleep: rounds that must wake, in every run. The
 * thread that gets FASTSYNC_BARRIER_SERIAL adds 1 to the round's own counter. At the end:
 * every round's counter exactly 1 (and 0 beyond the rounds made), every thread's returns
 * exactly the rounds, the SERIALs exactly the rounds.
 * Fails with: two SERIALs in a round or none (a count other than 1); a thread released
 * before every thread arrived, or rounds that mix (a slot read wrong); a wait without the
 * release/acquire pair (a slot read wrong; under ThreadSanitizer, a race on the slots); a
 * lost wakeup (the watchdog). */
#include "harness.h"

#define NT 8

static struct {
    fastsync_barrier_t bar;
    unsigned long cap;                 /* this run's most rounds, set before the threads start */
    uint64_t end;                      /* its time box (the same) */
    _Atomic(unsigned long) limit;      /* the rounds it makes: cap, or fewer once the box
                                        * closed (set once, by a SERIAL thread); relaxed:
                                        * the barrier orders the store before the loads
                                        * that must see it (see above) */
    unsigned long slot[2][NT];         /* plain: slot[r % 2][i], thread i's round */
    _Atomic(unsigned char) *serials;   /* per round; relaxed: counts, read after the join */
    unsigned long bad[NT], back[NT], serial[NT]; /* per thread, read after the join */
    _Atomic(unsigned long) at[NT];     /* relaxed: progress for the dump */
} g;

static void dump(void *unused)
{
    (void)unused;
    test_dump_barrier("barrier", &g.bar);
    for (int i = 0; i < NT; i++)
        diag("thread %d at round %lu", i, atomic_load_explicit(&g.at[i], memory_order_relaxed));
}

static void *runner(void *p)
{
    int me = (int)(intptr_t)p;
    for (unsigned long r = 0; r < atomic_load_explicit(&g.limit, memory_order_relaxed); r++) {
        g.slot[r % 2][me] = r;
        /* one round in 128, one thread (by turns) comes 200 us late: the others have spun
         * out their poll by then and sleep, so that every run has rounds that must wake */
        if (r % 128 == 127 && (int)(r / 128 % NT) == me) test_sleep_ns(200000);
        int ret = fastsync_barrier_wait(&g.bar);
        if (ret == FASTSYNC_BARRIER_SERIAL) {
            g.serial[me]++;
            atomic_fetch_add_explicit(&g.serials[r], 1, memory_order_relaxed);
            if (r + 2 < atomic_load_explicit(&g.limit, memory_order_relaxed) && !test_box_more(g.end, r + 1))
                atomic_store_explicit(&g.limit, r + 2, memory_order_relaxed);
        } else if (ret != 0) {
            g.bad[me]++;
        }
        g.back[me]++;
        for (int i = 0; i < NT; i++)
            if (g.slot[r % 2][i] != r) {
                g.bad[me]++;
                break;
            }
        atomic_store_explicit(&g.at[me], r + 1, memory_order_relaxed);
    }
    return NULL;
}

static void run(const char *name, bool pinned, bool shared, double base)
{
    test_pin_all(pinned);
    g.cap = (unsigned long)(base * test_scale());
    if (g.cap < TEST_MIN_ROUNDS) g.cap = TEST_MIN_ROUNDS;
    atomic_store_explicit(&g.limit, g.cap, memory_order_relaxed); /* relaxed: before the threads */
    g.serials = calloc(g.cap, sizeof *g.serials);
    if (!g.serials) bail("calloc: out of memory");
    memset(g.slot, 0xff, sizeof g.slot);
    memset(g.bad, 0, sizeof g.bad);
    memset(g.back, 0, sizeof g.back);
    memset(g.serial, 0, sizeof g.serial);
    for (int i = 0; i < NT; i++) atomic_store_explicit(&g.at[i], 0, memory_order_relaxed); /* before the threads */
    is_int(fastsync_barrier_init(&g.bar, NT, shared ? TEST_SHARED : 0), 0, "%s: init(%d)", name, NT);
    unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    uint64_t t0 = test_now_ns();
    g.end = test_box_end(250);
    pthread_t t[NT];
    for (int i = 0; i < NT; i++) t[i] = test_thread_start(runner, (void *)(intptr_t)i);
    for (int i = 0; i < NT; i++) test_thread_join(t[i]);
    unsigned long rounds = atomic_load_explicit(&g.limit, memory_order_relaxed); /* relaxed: joined */
    unsigned long back = 0, bad = 0, serial = 0, not_one = 0;
    for (int i = 0; i < NT; i++) {
        back += g.back[i];
        bad += g.bad[i];
        serial += g.serial[i];
    }
    for (unsigned long r = 0; r < g.cap; r++)
        not_one += atomic_load_explicit(&g.serials[r], memory_order_relaxed) != (r < rounds);
    diag("%s: %lu rounds of %lu in %.0f ms, %lu futex waits, %lu wakes", name, rounds, g.cap, (test_now_ns() - t0) / 1e6,
         test_kernel_waits() - w0, test_kernel_wakes() - k0);
    is_int(back, rounds * NT, "%s: every thread returned from every round's wait", name);
    is_int(serial, rounds, "%s: FASTSYNC_BARRIER_SERIAL as many times as rounds", name);
    is_int(not_one, 0, "%s: ... exactly one in each round (and none in a round not made)", name);
    is_int(bad, 0, "%s: after each wait every slot said the round (and every return was SERIAL or 0)", name);
    is_int(test_barrier_word(&g.bar) & ~(FASTSYNC__BAR_ROUND | FASTSYNC__BAR_SHARED), 0,
           "%s: nobody arrived, slept clear at the end", name);
    is_int(fastsync_barrier_destroy(&g.bar), 0, "%s: destroy 0", name);
    free(g.serials);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    run("spread, private", false, false, 25000);
    run("spread, shared", false, true, 25000);
    run("pinned, private", true, false, 25000);
    run("pinned, shared", true, true, 25000);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
