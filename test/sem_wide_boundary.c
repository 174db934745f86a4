/* SPDX-License-Identifier: MIT */
/* sem_wide_boundary: the wide kind of fastsync.hpp's counting_semaphore (counting_semaphore<N>
 * for N above FASTSYNC_SEM_VALUE_MAX: a C semaphore of up to INT_MAX tokens, T, and a 64-bit
 * excess, E; the kind's section in fastsync.hpp) across INT_MAX, through sem_wide_peer.cpp.
 * Its futex calls go through this file's harness (counted; faults injected in the inject
 * build).
 * 1. Asleep, then crossed in one release: 4 waiters (2 acquire, try_acquire_for(60 s),
 *    try_acquire_until(system_clock + 60 s)) registered and asleep on 0; one release of
 *    INT_MAX + 5 tokens (all into E, then moved into T as it has room): each returns true
 *    and sees the plain write made before the release, and then T == INT_MAX, E == 1
 *    (INT_MAX + 5 - 4, each take having refilled T from E).
 * 2. Rounds, in a time box, of two kinds:
 *    top: the semaphore made with INT_MAX - k tokens (k 0..7, so the C semaphore is full at
 *      once): releasers push it across INT_MAX (release of 1..4 tokens, now and then 2^20)
 *      while acquirers take (acquire, try_acquire, try_acquire_for and _until with deadlines
 *      of 0-20 us): releases overflow into E, takes refill T from it;
 *    bottom: the semaphore made with 0..2 tokens: the acquirers take them and go to sleep;
 *      once one is registered, one release of INT_MAX + j (j 0..99) crosses INT_MAX from the
 *      bottom, waking them; then the releasers start, as in a top round.
 *    After each round (every thread joined): initial + released == acquired + T + E, exactly;
 *    E == 0 or T == INT_MAX (no token left in E beside room in T: where that held, a waiter
 *    asleep on T == 0 would sleep beside tokens, the lost wakeup the refills rule out); no
 *    waiter left registered. Coverage: tokens in E in some round, and a bottom round whose
 *    big release found a waiter registered.
 * A waiter that sleeps through the crossing is the watchdog's failure. Modes: spread and
 * pinned to one CPU, and more threads than CPUs. Only where ptrdiff_t is wider than 32 bits
 * (elsewhere the wide kind does not exist: skipped). */
#include "harness.h"
#include "sem_wide_peer.h"

/* the harness's futex layer, for the C++ side (sem_wide_peer.h) */
int sem_wide_futex_wait(void *word, uint32_t expected, int shared, clockid_t clock,
                        const struct timespec *abstime)
{
    return test_futex_wait(word, expected, shared, clock, abstime);
}

void sem_wide_futex_wake(void *word, int n, int shared) { test_futex_wake(word, n, shared); }

#define M ((uint64_t)INT_MAX)

enum { BY_ACQUIRE, BY_TRY, BY_FOR, BY_UNTIL, BY_N };
static const char *const by_name[BY_N] = { "acquire", "try_acquire", "try_acquire_for", "try_acquire_until" };

struct actor {
    uint64_t rng;
    bool releaser;
    _Atomic(uint64_t) count; /* tokens released, or acquired (progress too) */
    _Atomic(int) in;         /* an acquirer's call now (BY_*), or -1 */
    unsigned long by[BY_N], failed;
};

static struct {
    struct sem_wide *s;
    uint64_t initial, big; /* made with; the bottom round's one release (0: none) */
    _Atomic(bool) stop, go; /* every thread: leave; releasers: start */
    _Atomic(bool) saw_excess; /* a releaser saw tokens in E */
    int n;
    struct actor *a;
} R;

static void dump(void *unused)
{
    (void)unused;
    if (R.s)
        diag("T %" PRIu64 ", E %" PRIu64 ", waiters %u; made with %" PRIu64 ", big release %" PRIu64,
             sem_wide_tokens(R.s), sem_wide_excess(R.s), sem_wide_waiters(R.s), R.initial, R.big);
    for (int i = 0; i < R.n; i++) {
        /* relaxed: progress, for the dump only */
        int in = atomic_load_explicit(&R.a[i].in, memory_order_relaxed);
        diag("%s %d: %" PRIu64 " tokens, now %s", R.a[i].releaser ? "releaser" : "acquirer", i,
             atomic_load_explicit(&R.a[i].count, memory_order_relaxed),
             R.a[i].releaser ? "-" : in < 0 ? "between calls" : by_name[in]);
    }
}

static void *releaser_main(void *arg)
{
    struct actor *a = (struct actor *)arg;
    uint64_t released = 0;
    /* relaxed (go, stop): they only start and end the loop; the counts are read after join */
    while (!atomic_load_explicit(&R.go, memory_order_relaxed))
        if (atomic_load_explicit(&R.stop, memory_order_relaxed)) return NULL;
        else sched_yield();
    while (!atomic_load_explicit(&R.stop, memory_order_relaxed)) {
        uint64_t x = test_rand(&a->rng);
        uint64_t n = x % 64 == 0 ? (uint64_t)1 << 20 : 1 + (x >> 8) % 4;
        sem_wide_release(R.s, (int64_t)n);
        released += n;
        atomic_store_explicit(&a->count, released, memory_order_relaxed); /* relaxed: read after join */
        if (sem_wide_excess(R.s) != 0)
            atomic_store_explicit(&R.saw_excess, true, memory_order_relaxed); /* relaxed: coverage */
        if (x % 128 == 1) sched_yield();
    }
    return NULL;
}

static void *acquirer_main(void *arg)
{
    struct actor *a = (struct actor *)arg;
    uint64_t acquired = 0;
    /* relaxed: the flag only ends the loop (no acquirer blocks once T is near INT_MAX, which
     * every round reaches before `stop`: see run_round) */
    while (!atomic_load_explicit(&R.stop, memory_order_relaxed)) {
        uint64_t x = test_rand(&a->rng);
        int by = (int)(x % BY_N), got;
        int64_t ns = (int64_t)((x >> 8) % 20000u);
        atomic_store_explicit(&a->in, by, memory_order_relaxed); /* relaxed: for the dump */
        switch (by) {
        case BY_ACQUIRE: sem_wide_acquire(R.s); got = 1; break;
        case BY_TRY: got = sem_wide_try_acquire(R.s); break;
        case BY_FOR: got = sem_wide_try_acquire_for(R.s, ns); break;
        default: got = sem_wide_try_acquire_until_system(R.s, ns); break;
        }
        atomic_store_explicit(&a->in, -1, memory_order_relaxed);
        if (got) {
            a->by[by]++;
            acquired++;
            atomic_store_explicit(&a->count, acquired, memory_order_relaxed); /* relaxed: read after join */
        } else {
            a->failed++;
        }
    }
    return NULL;
}

struct totals {
    unsigned long rounds, bottom, registered, by[BY_N], failed, bad;
    uint64_t released, acquired;
};

/* One round: top (the semaphore made near INT_MAX) or bottom (made near 0, crossed by one
 * release once a waiter is registered). */
static void run_round(bool bottom, int nrel, int nacq, double ms, uint64_t *rng, struct totals *t)
{
    R.initial = bottom ? test_rand(rng) % 3 : M - test_rand(rng) % 8;
    R.big = 0;
    R.s = sem_wide_new((int64_t)R.initial);
    R.n = nrel + nacq;
    /* relaxed: before the threads start */
    atomic_store_explicit(&R.stop, false, memory_order_relaxed);
    atomic_store_explicit(&R.go, !bottom, memory_order_relaxed);
    pthread_t th[64];
    for (int i = 0; i < R.n; i++) {
        struct actor *a = &R.a[i];
        memset(a, 0, sizeof *a);
        a->rng = test_stream((unsigned)(1000 * t->rounds + (unsigned)i));
        a->releaser = i < nrel;
        atomic_store_explicit(&a->in, -1, memory_order_relaxed); /* relaxed: before its thread */
        th[i] = test_thread_start(a->releaser ? releaser_main : acquirer_main, a);
    }
    if (bottom) {
        /* the acquirers take the 0..2 tokens and sleep; once one is registered, the crossing */
        uint64_t end = test_limit_end(5000);
        while (sem_wide_waiters(R.s) == 0 && test_box_open(end)) test_sleep_ns(50000);
        if (sem_wide_waiters(R.s) != 0) t->registered++;
        R.big = M + test_rand(rng) % 100;
        sem_wide_release(R.s, (int64_t)R.big);
        /* relaxed: only starts the releasers */
        atomic_store_explicit(&R.go, true, memory_order_relaxed);
    }
    uint64_t box = test_box_end(ms);
    while (test_box_open(box)) test_sleep_ns(1000000);
    /* relaxed: ends the loops; no acquirer can block now (T is near INT_MAX: the big
     * release of a bottom round came before, and no round takes 2^31 tokens) */
    atomic_store_explicit(&R.stop, true, memory_order_relaxed);
    uint64_t released = R.big, acquired = 0;
    for (int i = 0; i < R.n; i++) {
        test_thread_join(th[i]);
        struct actor *a = &R.a[i];
        uint64_t c = atomic_load_explicit(&a->count, memory_order_relaxed); /* relaxed: joined */
        if (a->releaser) released += c;
        else acquired += c;
        for (int b = 0; b < BY_N; b++) t->by[b] += a->by[b];
        t->failed += a->failed;
    }
    uint64_t T = sem_wide_tokens(R.s), E = sem_wide_excess(R.s);
    unsigned w = sem_wide_waiters(R.s);
    bool exact = R.initial + released == acquired + T + E, refilled = E == 0 || T == M;
    if (!exact || !refilled || w != 0) {
        t->bad++;
        diag("round %lu (%s): made with %" PRIu64 ", released %" PRIu64 ", acquired %" PRIu64 ", T %" PRIu64
             ", E %" PRIu64 ", waiters %u:%s%s%s", t->rounds, bottom ? "bottom" : "top", R.initial, released,
             acquired, T, E, w, exact ? "" : " tokens lost or made up;", refilled ? "" : " E > 0 beside room in T;",
             w == 0 ? "" : " a waiter left registered");
    }
    t->released += released;
    t->acquired += acquired;
    t->rounds++;
    t->bottom += bottom;
    sem_wide_delete(R.s);
    R.s = NULL;
}

static void run(const char *name, bool pinned, int nrel, int nacq, double ms)
{
    test_pin_all(pinned);
    struct totals t;
    memset(&t, 0, sizeof t);
    uint64_t rng = test_stream(999);
    /* relaxed: before the threads start */
    atomic_store_explicit(&R.saw_excess, false, memory_order_relaxed);
    unsigned long waits0 = test_kernel_waits(), wakes0 = test_kernel_wakes();
    test_watchdog_start(dump, NULL);
    uint64_t end = test_box_end(ms);
    /* rounds of 20 ms, alternating, until the box is up and both kinds, the excess and a
     * registered waiter at a crossing have been seen */
    while (test_box_until(end, t.rounds,
                          t.bottom > 0 && t.rounds > t.bottom && t.registered > 0 &&
                              atomic_load_explicit(&R.saw_excess, memory_order_relaxed)))
        run_round(t.rounds % 2 == 1, nrel, nacq, 20, &rng, &t);
    test_watchdog_stop();
    diag("%s, %d releasers, %d acquirers: %lu rounds (%lu bottom, %lu with a waiter registered at the "
         "crossing), %" PRIu64 " tokens released, %" PRIu64 " acquired (%s %lu, %s %lu, %s %lu, %s %lu), "
         "%lu tries and timeouts that failed; %lu futex waits, %lu wakes",
         name, nrel, nacq, t.rounds, t.bottom, t.registered, t.released, t.acquired, by_name[0], t.by[0],
         by_name[1], t.by[1], by_name[2], t.by[2], by_name[3], t.by[3], t.failed,
         test_kernel_waits() - waits0, test_kernel_wakes() - wakes0);
    is_int(t.bad, 0, "%s, %dr/%da: every round exact (initial + released == acquired + T + E), E == 0 or T "
           "== INT_MAX, no waiter left", name, nrel, nacq);
    /* relaxed: read after the joins */
    ok(atomic_load_explicit(&R.saw_excess, memory_order_relaxed) && t.registered > 0,
       "%s, %dr/%da: coverage: tokens in the excess; a crossing with a waiter registered", name, nrel, nacq);
}

/* 1: waiters asleep on 0, then one release of INT_MAX + 5. */
static int payload; /* plain: written before the release, read after each acquire */

struct sleeper {
    int by, tid, seen;
    _Atomic(int) state; /* 0 before its call, 1 in it, 2 returned true, 3 returned false */
};

static void *sleeper_main(void *arg)
{
    struct sleeper *z = (struct sleeper *)arg;
    z->tid = test_tid();
    atomic_store(&z->state, 1);
    int got = 1;
    switch (z->by) {
    case BY_ACQUIRE: sem_wide_acquire(R.s); break;
    case BY_FOR: got = sem_wide_try_acquire_for(R.s, 60000000000LL); break;
    default: got = sem_wide_try_acquire_until_system(R.s, 60000000000LL); break;
    }
    if (got) z->seen = payload;
    atomic_store(&z->state, got ? 2 : 3);
    return NULL;
}

static void dump_sleepers(void *arg)
{
    struct sleeper *z = (struct sleeper *)arg;
    if (R.s) diag("T %" PRIu64 ", E %" PRIu64 ", waiters %u", sem_wide_tokens(R.s), sem_wide_excess(R.s),
                  sem_wide_waiters(R.s));
    for (int i = 0; i < 4; i++) diag("sleeper %d (%s): state %d", i, by_name[z[i].by], atomic_load(&z[i].state));
}

static void crossed_in_one_release(void)
{
    struct sleeper z[4];
    pthread_t th[4];
    R.s = sem_wide_new(0);
    test_watchdog_start(dump_sleepers, z);
    for (int i = 0; i < 4; i++) {
        z[i].by = i < 2 ? BY_ACQUIRE : i == 2 ? BY_FOR : BY_UNTIL;
        z[i].tid = z[i].seen = 0;
        atomic_init(&z[i].state, 0);
        th[i] = test_thread_start(sleeper_main, &z[i]);
    }
    uint64_t end = test_limit_end(5000);
    while (sem_wide_waiters(R.s) < 4 && test_box_open(end)) test_sleep_ns(100000);
    bool registered = sem_wide_waiters(R.s) == 4, asleep = registered;
    /* (its tid, written before its state's store, read after a load that reads it) */
    for (int i = 0; i < 4 && asleep; i++)
        asleep = atomic_load(&z[i].state) >= 1 && test_until_asleep(z[i].tid, 20000000);
    ok(registered && asleep, "4 waiters (2 acquire, try_acquire_for and _until(60 s)) registered and asleep on 0");
    payload = 42;
    sem_wide_release(R.s, (int64_t)(M + 5));
    int got = 0, seen = 0;
    for (int i = 0; i < 4; i++) {
        test_thread_join(th[i]);
        got += atomic_load(&z[i].state) == 2;
        seen += z[i].seen == 42;
    }
    test_watchdog_stop();
    is_int(got, 4, "one release(INT_MAX + 5): every waiter returned true");
    is_int(seen, 4, "each saw the write made before the release (a plain int: TSan checks the order)");
    uint64_t T = sem_wide_tokens(R.s), E = sem_wide_excess(R.s);
    ok(T == M && E == 1 && sem_wide_waiters(R.s) == 0,
       "then T == INT_MAX and E == 1 (INT_MAX + 5 - 4), no waiter registered (T %" PRIu64 ", E %" PRIu64 ")", T, E);
    sem_wide_delete(R.s);
    R.s = NULL;
}

int main(void)
{
    test_init();
    if (!sem_wide_exists()) {
        skip("ptrdiff_t has 32 bits here: no LeastMaxValue above INT_MAX, no wide kind", "the wide semaphore");
        return done_testing();
    }
    crossed_in_one_release();
    int n = test_ncpu();
    struct actor a[32];
    R.a = a;
    run("spread", false, 2, 2, 300);
    run("pinned", true, 2, 2, 300);
    int more = 2 * n > 4 ? 2 * n : 4; /* more threads than CPUs */
    if (more > 16) more = 16;
    run("spread", false, more / 2, more, 300);
    test_pin_all(false);
    return done_testing();
}
