/* SPDX-License-Identifier: MIT */
/* barrier_wake_economy: the barrier's futex economy (fastsync.h: "a FUTEX_WAKE per round only
 * if a thread slept"). The futex calls on the barrier's word are counted through the
 * harness's wait and wake overrides (below the counting layer, by address), which also tell
 * the test that a thread has made its way to its sleep.
 *   nobody slept: 1 (then 3) threads arrive and spin out their poll; each is then held in
 *     the harness's CAS hook (TEST_CAS_HOOK), just before the CAS that would set `slept`,
 *     until this thread, arriving last, has ended the round and returned SERIAL; the held
 *     threads' CAS then fails on the moved round and they return 0 without sleeping. No
 *     futex wait and no wake on the word; deterministic, whatever the spin's length;
 *   slept: 1 (then 3) threads arrive and sleep (each reached its futex wait and reads asleep
 *     in /proc); this thread's arrival ends the round with exactly one wake, and every
 *     sleeper returns 0;
 *   mixed: of 3 threads, 2 are held in the CAS hook (started first: a thread that finds
 *     `slept` already set sleeps without that CAS), then 1 sleeps: exactly one wake.
 * Each round is checked for one SERIAL (this thread's) and the word as init left it (round
 * aside). Private and shared. Where the header's atomics are not <stdatomic.h>'s (OS/2
 * without atomics) the hook is never called: those rounds are skipped.
 * Fails with: a round's end that wakes when `slept` is clear (or that wakes in a round where
 * nobody slept); one that does not wake a sleeper (here caught at a 3 s limit, then the test
 * wakes it itself); one wake per sleeper. */
#define TEST_CAS_HOOK 1
#include "harness.h"

#define MAXT 3

static fastsync_barrier_t bar;
static _Atomic(unsigned long) word_waits, word_wakes; /* futex calls on bar's word; relaxed:
                                                       * counts read after the threads are
                                                       * back (or as a poll) */

struct worker {
    pthread_t t;
    bool hold;              /* to be held before its `slept` CAS */
    int ret;                /* the wait's result, read after the join */
    _Atomic(int) tid;       /* relaxed: for /proc, stored before the wait */
    _Atomic(bool) at_wait;  /* relaxed: reached its futex wait (a poll: then /proc says more) */
    _Atomic(bool) at_cas;   /* reached the hook (seq_cst, as `release`: flags of a test) */
    _Atomic(bool) release;  /* the hook may return */
    _Atomic(bool) back;     /* returned (release: pairs with join's acquire load) */
};
static struct worker w[MAXT];
static _Thread_local struct worker *me_worker; /* this thread's, in a worker */

static void dump(void *unused)
{
    (void)unused;
    test_dump_barrier("barrier", &bar);
    /* relaxed: a diagnostic snapshot */
    diag("waits %lu, wakes %lu on its word", atomic_load_explicit(&word_waits, memory_order_relaxed),
         atomic_load_explicit(&word_wakes, memory_order_relaxed));
}

static int wait_counted(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    if (word == fastsync__bar_futex(&bar)) {
        /* relaxed: a count, and a poll that only says when to look at /proc */
        atomic_fetch_add_explicit(&word_waits, 1, memory_order_relaxed);
        if (me_worker) atomic_store_explicit(&me_worker->at_wait, true, memory_order_relaxed);
    }
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void wake_counted(void *word, int n, int shared)
{
    /* relaxed: a count, read after the threads are back */
    if (word == fastsync__bar_futex(&bar)) atomic_fetch_add_explicit(&word_wakes, 1, memory_order_relaxed);
    fastsync__wake_sys(word, n, shared);
}

/* Before each CAS of the header: a worker to be held stops here, before its CAS on the
 * barrier's word (the only one a non-serial thread makes: the one that sets `slept`). */
static void before_cas(const volatile void *word)
{
    if (word != (const volatile void *)&bar.state) return;
    if (me_worker == NULL || !me_worker->hold) return;
    atomic_store(&me_worker->at_cas, true);
    while (!atomic_load(&me_worker->release)) test_sleep_ns(50000);
}

static unsigned long waits(void) { return atomic_load_explicit(&word_waits, memory_order_relaxed); }
static unsigned long wakes(void) { return atomic_load_explicit(&word_wakes, memory_order_relaxed); }

static void *worker_main(void *p)
{
    struct worker *me = (struct worker *)p;
    me_worker = me;
    atomic_store_explicit(&me->tid, test_tid(), memory_order_relaxed);
    me->ret = fastsync_barrier_wait(&bar);
    atomic_store_explicit(&me->back, true, memory_order_release);
    return NULL;
}

static void start(int i, bool hold)
{
    w[i].hold = hold;
    w[i].ret = 99;
    /* relaxed / seq_cst: before the thread starts, which orders them */
    atomic_store_explicit(&w[i].back, false, memory_order_relaxed);
    atomic_store_explicit(&w[i].at_wait, false, memory_order_relaxed);
    atomic_store(&w[i].at_cas, false);
    atomic_store(&w[i].release, false);
    w[i].t = test_thread_start(worker_main, &w[i]);
}

/* Until worker i is held in the hook, or (asleep) has reached its futex wait and reads
 * asleep. held: false if it slept instead (the hook not called: no <stdatomic.h> CAS). */
static bool until_there(int i, bool *no_hook)
{
    uint64_t end = test_limit_end(5000);
    if (w[i].hold) {
        while (!atomic_load(&w[i].at_cas) && !atomic_load_explicit(&w[i].at_wait, memory_order_relaxed) &&
               test_box_open(end))
            test_sleep_ns(100000);
        if (!atomic_load(&w[i].at_cas) && atomic_load_explicit(&w[i].at_wait, memory_order_relaxed)) *no_hook = true;
        return atomic_load(&w[i].at_cas) || *no_hook;
    }
    while (!atomic_load_explicit(&w[i].at_wait, memory_order_relaxed) && test_box_open(end)) test_sleep_ns(100000);
    if (!atomic_load_explicit(&w[i].at_wait, memory_order_relaxed)) return false;
    return test_until_asleep(atomic_load_explicit(&w[i].tid, memory_order_relaxed), 20000000);
}

/* Joins worker i; one still asleep after 3 s is reported, and woken by the test itself. */
static bool join(int i)
{
    atomic_store(&w[i].release, true);
    uint64_t end = test_limit_end(3000);
    /* acquire: pairs with the worker's release store */
    while (!atomic_load_explicit(&w[i].back, memory_order_acquire) && test_box_open(end)) test_sleep_ns(100000);
    bool back = atomic_load_explicit(&w[i].back, memory_order_acquire);
    if (!back) {
        test_dump_barrier("  still asleep on", &bar);
        /* the round moved (its count unchanged), and a wake: the sleeper leaves */
        (void)fastsync__fetch_add(&bar.state, FASTSYNC__BAR_ROUND_ONE, memory_order_relaxed);
        fastsync__wake_sys(fastsync__bar_futex(&bar), INT_MAX, (test_barrier_word(&bar) & FASTSYNC__BAR_SHARED) != 0);
    }
    test_thread_join(w[i].t);
    return back;
}

/* A round of n workers and this thread, the last to arrive: `asleep` of them sleep, the
 * others are held before their `slept` CAS. */
static void round_of(const char *kind, int flags, int n, int asleep)
{
    char what[96];
    snprintf(what, sizeof what, "%s, %d threads, %d asleep, %d held", kind, n + 1, asleep, n - asleep);
    uint32_t sh = flags ? FASTSYNC__BAR_SHARED : 0;
    fastsync_barrier_init(&bar, (unsigned)n + 1, flags);
    atomic_store_explicit(&word_waits, 0, memory_order_relaxed); /* relaxed: no worker yet */
    atomic_store_explicit(&word_wakes, 0, memory_order_relaxed);
    bool no_hook = false, there = true;
    /* the held ones first: a thread that finds `slept` set already sleeps without the CAS */
    for (int i = asleep; i < n; i++) {
        start(i, true);
        there &= until_there(i, &no_hook);
    }
    for (int i = 0; i < asleep; i++) {
        start(i, false);
        there &= until_there(i, &no_hook);
    }
    if (no_hook) {
        fastsync_barrier_wait(&bar);
        for (int i = 0; i < n; i++) join(i);
        skip("the header's atomics are not <stdatomic.h>'s here (no CAS hook)", "%s", what);
        return;
    }
    ok(there, "%s: each worker arrived and %s", what, asleep ? "sleeps, or is held" : "is held before it sleeps");
    is_int(test_barrier_arrived(&bar), (uint32_t)n, "%s: ... arrived %d", what, n);
    is_int(fastsync_barrier_wait(&bar), FASTSYNC_BARRIER_SERIAL, "%s: this thread ends the round: SERIAL", what);
    is_int(wakes(), asleep ? 1 : 0, "%s: ... with %s", what, asleep ? "exactly one wake" : "no wake");
    bool all = true, zero = true;
    for (int i = 0; i < n; i++) {
        all &= join(i);
        zero &= w[i].ret == 0;
    }
    ok(all, "%s: every worker returned", what);
    ok(zero, "%s: ... with 0", what);
    is_int(wakes(), asleep ? 1 : 0, "%s: %s wake in all", what, asleep ? "one" : "no");
    if (!asleep) is_int(waits(), 0, "%s: no futex wait at all", what);
    is_int(test_barrier_word(&bar) & ~FASTSYNC__BAR_ROUND, sh, "%s: the word as init left it (round aside)", what);
    is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy 0", what);
}

int main(void)
{
    test_init();
    test_wait_override = wait_counted;
    test_wake_override = wake_counted;
    test_before_cas = before_cas;
    test_watchdog_start(dump, NULL);
    const char *kinds[2] = { "private", "shared" };
    for (int k = 0; k < 2; k++) {
        int flags = k ? TEST_SHARED : 0;
        round_of(kinds[k], flags, 1, 0);
        round_of(kinds[k], flags, MAXT, 0);
        round_of(kinds[k], flags, 1, 1);
        round_of(kinds[k], flags, MAXT, MAXT);
        round_of(kinds[k], flags, MAXT, 1);
    }
    test_watchdog_stop();
    return done_testing();
}
