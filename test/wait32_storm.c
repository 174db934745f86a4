/* SPDX-License-Identifier: MIT */
/* wait32_storm: the compare and the block of fastsync_wait32 are atomic with respect to a
 * wake on the same address (the manual's "Waiting on an address"), under a storm of
 * store + wake pairs, each of which a waiter must not miss: a missed one leaves a thread
 * asleep for good, which the watchdog turns into a failure.
 *   ping-pong: two threads pass one word back and forth (A stores 2k+1 and wakes one, B
 *     stores 2k+2 and wakes one), each waiting while the word holds the value it saw
 *     (fastsync_wait32, _timedwait32 and _clockwait32 on CLOCK_REALTIME with far deadlines,
 *     by turns); a plain payload written before each release store must be read after the
 *     other side's acquire load (the orders the manual tells the caller to use). Spread
 *     over the CPUs, then every thread pinned to one CPU (the waker preempted between its
 *     store and its wake, the waiter between its load and its sleep). Exact: both sides
 *     count the same rounds, every payload as written, every wait 0.
 *   gate: three waiters wait while a generation word holds the generation they saw; each,
 *     once through, adds one to an arrival word and wakes it; the opener waits on the
 *     arrival word until all three are through, then stores the next generation and makes
 *     one wake32_all. Exact: arrivals = 3 x generations.
 * Time-boxed (about 0.1 s each at FASTSYNC_TEST_SCALE=1); also built with the harness's
 * injected spurious returns, EINTR and EAGAIN (suite inject), which the loops absorb. */
#include "harness.h"

#define STOP 0xffffffffu

static fastsync_word32_t pp;       /* the ping-pong word */
static unsigned long payload_ab;   /* plain: written by A before its release store of 2k+1 */
static unsigned long payload_ba;   /* plain: written by B before its release store of 2k+2 */
static _Atomic(unsigned long) a_rounds, b_rounds; /* relaxed: progress, for the dump */
static _Atomic(int) bad_waits;     /* relaxed: read after the joins */

static fastsync_word32_t gen, arrived; /* the gate's words */

static void dump(void *unused)
{
    (void)unused;
    diag("ping-pong word %u, A %lu rounds, B %lu; gate generation %u, arrived %u", (unsigned)atomic_load(&pp),
         atomic_load_explicit(&a_rounds, memory_order_relaxed), atomic_load_explicit(&b_rounds, memory_order_relaxed),
         (unsigned)atomic_load(&gen), (unsigned)atomic_load(&arrived));
}

/* One wait of kind k % 3 while *w holds v. */
static void wait_kind(fastsync_word32_t *w, uint32_t v, unsigned long k)
{
    struct timespec d;
    int r;
    switch (k % 3) {
    case 1:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        r = fastsync_timedwait32(w, v, 0, &d);
        break;
    case 2:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        r = fastsync_clockwait32(w, v, 0, CLOCK_REALTIME, &d);
        break;
    default:
        r = fastsync_wait32(w, v, 0);
        break;
    }
    /* relaxed: a count, read after the joins */
    if (r != 0) atomic_fetch_add_explicit(&bad_waits, 1, memory_order_relaxed);
}

/* Waits while *w holds `old`; returns the value that differs. acquire: pairs with the
 * release store of that value (the caller then reads what was written before it). */
static uint32_t await_change(fastsync_word32_t *w, uint32_t old, unsigned long k)
{
    uint32_t v;
    while ((v = atomic_load_explicit(w, memory_order_acquire)) == old) wait_kind(w, old, k);
    return v;
}

static _Atomic(int) b_bad; /* relaxed: read after the join */

static void *b_main(void *unused)
{
    (void)unused;
    uint32_t seen = 0;
    for (unsigned long k = 0;; k++) {
        uint32_t v = await_change(&pp, seen, k + 1);
        if (v == STOP) break;
        if (v != 2 * k + 1 || payload_ab != k) atomic_fetch_add_explicit(&b_bad, 1, memory_order_relaxed);
        payload_ba = k;
        /* release: pairs with A's acquire load in await_change (payload_ba before it) */
        atomic_store_explicit(&pp, (uint32_t)(2 * k + 2), memory_order_release);
        fastsync_wake32(&pp, 1, 0);
        seen = (uint32_t)(2 * k + 2);
        atomic_store_explicit(&b_rounds, k + 1, memory_order_relaxed);
    }
    return NULL;
}

static void ping_pong(bool pinned)
{
    test_pin_all(pinned);
    atomic_store_explicit(&pp, 0, memory_order_relaxed); /* relaxed: published by the start */
    atomic_store_explicit(&b_bad, 0, memory_order_relaxed);
    atomic_store_explicit(&bad_waits, 0, memory_order_relaxed);
    atomic_store_explicit(&a_rounds, 0, memory_order_relaxed);
    atomic_store_explicit(&b_rounds, 0, memory_order_relaxed);
    payload_ab = payload_ba = 0;
    pthread_t b = test_thread_start(b_main, NULL);
    int a_bad = 0;
    unsigned long k;
    uint64_t end = test_box_end(100);
    for (k = 0; test_box_more(end, k); k++) {
        payload_ab = k;
        /* release: pairs with B's acquire load in await_change (payload_ab before it) */
        atomic_store_explicit(&pp, (uint32_t)(2 * k + 1), memory_order_release);
        fastsync_wake32(&pp, 1, 0);
        uint32_t v = await_change(&pp, (uint32_t)(2 * k + 1), k);
        if (v != 2 * k + 2 || payload_ba != k) a_bad++;
        atomic_store_explicit(&a_rounds, k + 1, memory_order_relaxed);
    }
    atomic_store_explicit(&pp, STOP, memory_order_release); /* pairs with B's acquire */
    fastsync_wake32(&pp, 1, 0);
    test_thread_join(b);
    test_pin_all(false);
    unsigned long br = atomic_load_explicit(&b_rounds, memory_order_relaxed);
    ok(br == k && a_bad == 0 && atomic_load_explicit(&b_bad, memory_order_relaxed) == 0 &&
           atomic_load_explicit(&bad_waits, memory_order_relaxed) == 0,
       "ping-pong%s: %lu rounds each way (B %lu), values and payloads as stored: %d and %d wrong, %d waits not 0",
       pinned ? ", pinned to one CPU" : "", k, br, a_bad, atomic_load_explicit(&b_bad, memory_order_relaxed),
       atomic_load_explicit(&bad_waits, memory_order_relaxed));
}

/* ---- the gate ---- */

#define GATE_WAITERS 3

static void *gate_main(void *p)
{
    unsigned long i = (unsigned long)(uintptr_t)p;
    uint32_t g = 0;
    for (unsigned long k = i;; k++) {
        /* acquire: pairs with the opener's release store of the generation */
        uint32_t v = await_change(&gen, g, k);
        if (v == STOP) break;
        g = v;
        /* release: pairs with the opener's acquire load of the arrivals */
        atomic_fetch_add_explicit(&arrived, 1, memory_order_release);
        fastsync_wake32(&arrived, 1, 0);
    }
    return NULL;
}

static void gate(void)
{
    atomic_store_explicit(&gen, 0, memory_order_relaxed); /* relaxed: published by the starts */
    atomic_store_explicit(&arrived, 0, memory_order_relaxed);
    atomic_store_explicit(&bad_waits, 0, memory_order_relaxed);
    pthread_t t[GATE_WAITERS];
    for (unsigned long i = 0; i < GATE_WAITERS; i++) t[i] = test_thread_start(gate_main, (void *)(uintptr_t)i);
    unsigned long g;
    uint64_t end = test_box_end(100);
    uint32_t a = 0;
    for (g = 1; test_box_more(end, g - 1); g++) {
        /* release: pairs with the waiters' acquire loads */
        atomic_store_explicit(&gen, (uint32_t)g, memory_order_release);
        fastsync_wake32_all(&gen, 0);
        /* until all are through generation g: acquire, as in await_change */
        while ((a = atomic_load_explicit(&arrived, memory_order_acquire)) < GATE_WAITERS * g) wait_kind(&arrived, a, g);
    }
    atomic_store_explicit(&gen, STOP, memory_order_release);
    fastsync_wake32_all(&gen, 0);
    for (int i = 0; i < GATE_WAITERS; i++) test_thread_join(t[i]);
    a = atomic_load_explicit(&arrived, memory_order_relaxed);
    ok(a == GATE_WAITERS * (g - 1) && atomic_load_explicit(&bad_waits, memory_order_relaxed) == 0,
       "gate: %lu generations, each opened by one wake32_all, %u arrivals (= 3 x generations), %d waits not 0", g - 1, a,
       atomic_load_explicit(&bad_waits, memory_order_relaxed));
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    ping_pong(false);
    ping_pong(true);
    gate();
    test_watchdog_stop();
    return done_testing();
}
