/* SPDX-License-Identifier: MIT */
/* barrier_destroy: fastsync.h promises that destroy, called as soon as any thread's last
 * wait has returned, waits until every released thread has finished with the barrier and
 * says 0, after which the memory may be freed; and EBUSY once a released thread has not
 * counted itself out for the destroy's limit (one died).
 *   free at once (time box): groups of 3 threads meet at a fresh barrier at the very end of
 *     its own mmap'd page each round; as soon as its wait returns, one of them (by turns:
 *     the thread that got FASTSYNC_BARRIER_SERIAL, or a thread named in advance, whatever
 *     its wait returned) destroys it (0) and unmaps the page, while the other two may still
 *     be inside their wait: any later access by them is a SIGSEGV (under AddressSanitizer or
 *     ThreadSanitizer a report: the harness's test_page_alloc). The waker gives up the CPU
 *     after its wake (test_after_futex_wake), so that a woken thread is the one still in its
 *     call; each thread comes to its wait after a random delay (a short spin, a yield, or
 *     one time in four 200 us, so that the others sleep and the round's end wakes them).
 *     Private and shared; spread over the CPUs, with more groups than CPUs, and pinned.
 *   destroy waits (deterministic): of a round of 2, the other thread sleeps (it reached its
 *     futex wait: the wait override, below the injected faults, says so) and, woken by
 *     this thread's arrival, is held in the harness's hook after its futex wait
 *     (test_after_futex_wait), before it counts itself out; a third thread's destroy, called
 *     then, is still inside the call 20 ms later (leaving 1); the held thread let go,
 *     destroy says 0 and that thread unmaps the page at once.
 *   one that never leaves: the same, held for good: destroy says EBUSY once its limit has
 *     passed with nobody leaving. That limit is the header's FASTSYNC__DESTROY_NS, one
 *     second; this test sets it to 300 ms (it is a #ifndef of the header, as a GenMC
 *     harness sets it to 0) to stay short; the destroy-waits case looks at 20 ms, well
 *     within it. After EBUSY the thread is let go, and destroy says 0.
 * Fails with: a destroy that returns while a released thread is still to count itself out
 * (a SIGSEGV or sanitizer report in its wait, or, deterministically, the destroy back within
 * the 20 ms); a non-serial thread that touches the barrier after its leaving RMW (under
 * ThreadSanitizer the touch races with the free; elsewhere a SIGSEGV only when the free
 * comes first, which the window of one instruction makes rare); a serial thread that
 * touches it after its wake (a SIGSEGV: the woken destroyer frees it in the waker's
 * 20 us); a destroy that
 * never gives up on a thread that never leaves (the watchdog), or gives up early. */
#define FASTSYNC__DESTROY_NS 300000000u
#include "harness.h"

#define MAXGROUPS 16
#define GN 3

struct group {
    fastsync_sem_t go[GN], done;
    _Atomic(fastsync_barrier_t *) slot; /* NULL: stop */
    _Atomic(int) destroyer;             /* -1: the serial thread; else that thread */
    _Atomic(unsigned long) rounds;      /* relaxed: progress for the dump */
    unsigned long by_serial, by_named, shared_rounds, bad[GN], serials[GN];
    int bad_code;
    uint64_t rng, member_rng[GN];
};

static struct {
    int ngroups;
    uint64_t end;
    struct group groups[MAXGROUPS];
} g;

struct member { struct group *q; int i; };

static void dump(void *unused)
{
    (void)unused;
    for (int i = 0; i < g.ngroups; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("group %d: %lu rounds", i, atomic_load_explicit(&g.groups[i].rounds, memory_order_relaxed));
}

static void after_wake(void)
{
    sched_yield();        /* pinned: the woken thread runs now */
    test_sleep_ns(20000); /* spread: it has 20 us */
}

/* A random delay before a wait: a short spin, a yield, or (one time in four) 200 us, after
 * which the others have spun out their poll and sleep, so that the round's end must wake. */
static void delay(uint64_t *rng)
{
    unsigned r = (unsigned)(test_rand(rng) % 8);
    if (r < 2) test_sleep_ns(200000);
    else if (r == 2) sched_yield();
    else for (volatile unsigned i = 0; i < r * 50; i++) {
    }
}

static void *member_main(void *p)
{
    struct member *m = (struct member *)p;
    struct group *q = m->q;
    for (;;) {
        fastsync_sem_wait(&q->go[m->i]);
        /* acquire: pairs with thread 0's release store of the slot (the barrier's init). */
        fastsync_barrier_t *b = atomic_load_explicit(&q->slot, memory_order_acquire);
        if (!b) return NULL;
        /* relaxed: published with the slot, read after it. */
        int d = atomic_load_explicit(&q->destroyer, memory_order_relaxed);
        delay(&q->member_rng[m->i]);
        int r = fastsync_barrier_wait(b);
        if (r == FASTSYNC_BARRIER_SERIAL) q->serials[m->i]++;
        if (r != 0 && r != FASTSYNC_BARRIER_SERIAL) {
            q->bad[m->i]++;
            q->bad_code = r;
        }
        if (d == m->i || (d < 0 && r == FASTSYNC_BARRIER_SERIAL)) {
            int e = fastsync_barrier_destroy(b);
            if (e != 0) {
                q->bad[m->i]++;
                q->bad_code = e;
            }
            test_page_free(b); /* the others may still be inside their wait */
        }
        fastsync_sem_post(&q->done);
    }
}

/* A fourth thread of each group, its driver, makes each round's barrier and waits until the
 * round's three threads are back, the page gone. */
static void *driver_main(void *p)
{
    struct member *m = (struct member *)p;
    struct group *q = m->q;
    unsigned long n = 0;
    while (test_box_more(g.end, n)) {
        fastsync_barrier_t *b = (fastsync_barrier_t *)test_page_alloc(sizeof(fastsync_barrier_t), false);
        bool shared = test_rand(&q->rng) % 2 && FASTSYNC_HAS_SHARED;
        fastsync_barrier_init(b, GN, shared ? TEST_SHARED : 0);
        q->shared_rounds += shared;
        int d = (int)(test_rand(&q->rng) % (GN + 1)) - 1;
        if (d < 0) q->by_serial++;
        else q->by_named++;
        /* relaxed: published by the release store of the slot. */
        atomic_store_explicit(&q->destroyer, d, memory_order_relaxed);
        /* release: pairs with the members' acquire loads of the slot. */
        atomic_store_explicit(&q->slot, b, memory_order_release);
        for (int i = 0; i < GN; i++) fastsync_sem_post(&q->go[i]);
        for (int i = 0; i < GN; i++) fastsync_sem_wait(&q->done); /* the page is gone */
        atomic_store_explicit(&q->rounds, ++n, memory_order_relaxed); /* relaxed: for the dump */
    }
    atomic_store_explicit(&q->slot, NULL, memory_order_release); /* release: as above */
    for (int i = 0; i < GN; i++) fastsync_sem_post(&q->go[i]);
    return NULL;
}

static void run(const char *name, bool pinned, int ngroups, double ms)
{
    test_pin_all(pinned);
    memset(&g.groups, 0, sizeof g.groups);
    g.ngroups = ngroups;
    pthread_t t[(GN + 1) * MAXGROUPS];
    struct member ms_[GN * MAXGROUPS];
    for (int i = 0; i < ngroups; i++) {
        struct group *q = &g.groups[i];
        for (int k = 0; k < GN; k++) fastsync_sem_init(&q->go[k], 0, 0);
        fastsync_sem_init(&q->done, 0, 0);
        q->rng = test_stream((GN + 1) * (unsigned)i);
        for (int k = 0; k < GN; k++) q->member_rng[k] = test_stream((GN + 1) * (unsigned)i + 1 + (unsigned)k);
    }
    g.end = test_box_end(ms);
    int nt = 0;
    for (int i = 0; i < ngroups; i++) {
        for (int k = 0; k < GN; k++) {
            ms_[GN * i + k].q = &g.groups[i];
            ms_[GN * i + k].i = k;
            t[nt++] = test_thread_start(member_main, &ms_[GN * i + k]);
        }
        t[nt++] = test_thread_start(driver_main, &ms_[GN * i]);
    }
    for (int i = 0; i < nt; i++) test_thread_join(t[i]);
    unsigned long rounds = 0, by_serial = 0, by_named = 0, shared = 0, bad = 0, serials = 0;
    int bad_code = 0;
    for (int i = 0; i < ngroups; i++) {
        struct group *q = &g.groups[i];
        rounds += atomic_load_explicit(&q->rounds, memory_order_relaxed); /* relaxed: joined */
        by_serial += q->by_serial;
        by_named += q->by_named;
        shared += q->shared_rounds;
        for (int k = 0; k < GN; k++) {
            bad += q->bad[k];
            serials += q->serials[k];
        }
        if (q->bad_code) bad_code = q->bad_code;
    }
    ok(rounds >= (unsigned long)ngroups,
       "%s, %d groups: %lu rounds (destroyed by the serial thread %lu, by a named one %lu; %lu shared), each "
       "barrier freed at once",
       name, ngroups, rounds, by_serial, by_named, shared);
    is_int(serials, rounds, "%s, %d groups: one SERIAL a round", name, ngroups);
    if (!is_int(bad, 0, "%s, %d groups: every wait said SERIAL or 0, every destroy 0", name, ngroups))
        diag("  last unexpected code: %d", bad_code);
}

/* ---- a released thread held before it counts itself out ---- */

static fastsync_barrier_t *held_bar;
static _Atomic(bool) hold_armed;  /* the held thread stops in the hook (seq_cst: test flags) */
static _Atomic(bool) held;        /* it is there */
static _Atomic(bool) let_go;      /* it may go on */
static _Atomic(int) destroy_ret;  /* the destroyer's result; -1 while inside (release: pairs
                                   * with the acquire poll, which then reads the page freed) */
static _Atomic(bool) in_wait;     /* it reached a real futex wait (past the injected faults) */
static _Thread_local bool is_held_thread;

/* The wait layer below the injected faults: tells the test that the thread to be held is in
 * a futex wait of its own, from which only the round's end (its wake, or the changed word)
 * brings it back through hold_window. */
static int wait_flagged(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    if (is_held_thread) atomic_store(&in_wait, true);
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void wake_plain(void *word, int n, int shared) { fastsync__wake_sys(word, n, shared); }

static void hold_window(void)
{
    if (!is_held_thread || !atomic_load(&hold_armed)) return;
    /* relaxed: the round's end is what woke it; a test's probe of its state */
    if ((test_barrier_word(held_bar) & FASTSYNC__BAR_ARRIVED) != 0) return; /* not yet: sleep again */
    atomic_store(&held, true);
    while (!atomic_load(&let_go)) test_sleep_ns(100000);
}

static void *held_main(void *p)
{
    (void)p;
    is_held_thread = true;
    int r = fastsync_barrier_wait(held_bar);
    return (void *)(intptr_t)(r == 0);
}

static void *destroyer_main(void *p)
{
    (void)p;
    int r = fastsync_barrier_destroy(held_bar);
    if (r == 0) test_page_free(held_bar);
    atomic_store_explicit(&destroy_ret, r, memory_order_release);
    return NULL;
}

static int poll_destroy(void) { return atomic_load_explicit(&destroy_ret, memory_order_acquire); }

static void held_case(bool for_good)
{
    const char *what = for_good ? "a released thread never leaves" : "a released thread held";
    held_bar = (fastsync_barrier_t *)test_page_alloc(sizeof(fastsync_barrier_t), false);
    fastsync_barrier_init(held_bar, 2, 0);
    atomic_store(&held, false);
    atomic_store(&in_wait, false);
    atomic_store(&let_go, false);
    atomic_store(&hold_armed, true);
    atomic_store_explicit(&destroy_ret, -1, memory_order_relaxed); /* relaxed: before the thread */
    pthread_t h = test_thread_start(held_main, NULL);
    uint64_t end = test_limit_end(5000);
    while (!atomic_load(&in_wait) && test_box_open(end)) test_sleep_ns(100000);
    ok(atomic_load(&in_wait), "%s: the other thread arrived and went to sleep", what);
    is_int(fastsync_barrier_wait(held_bar), FASTSYNC_BARRIER_SERIAL, "%s: this thread ends the round: SERIAL", what);
    end = test_limit_end(5000);
    while (!atomic_load(&held) && test_box_open(end)) test_sleep_ns(100000);
    ok(atomic_load(&held), "%s: the other thread, woken, is held before it counts itself out", what);
    is_int(test_barrier_leaving(held_bar), 1, "%s: ... leaving 1", what);
    uint64_t t0 = test_now_ns();
    pthread_t d = test_thread_start(destroyer_main, NULL);
    if (!for_good) {
        test_sleep_ns(20000000);
        is_int(poll_destroy(), -1, "%s: destroy is still inside the call 20 ms later", what);
        atomic_store(&let_go, true);
        test_thread_join(d);
        is_int(poll_destroy(), 0, "%s: ... let go, it counts itself out: destroy 0 (the page unmapped at once)", what);
    } else {
        test_thread_join(d);
        uint64_t took = test_now_ns() - t0;
        is_int(poll_destroy(), EBUSY, "%s: destroy says EBUSY", what);
        ok(took >= FASTSYNC__DESTROY_NS, "%s: ... after its limit of %u ms (%.0f ms)", what,
           FASTSYNC__DESTROY_NS / 1000000u, took / 1e6);
        atomic_store(&let_go, true);
    }
    ok(test_thread_join(h) != NULL, "%s: its wait returned 0", what);
    atomic_store(&hold_armed, false);
    if (for_good) {
        is_int(fastsync_barrier_destroy(held_bar), 0, "%s: once it left, destroy 0", what);
        test_page_free(held_bar);
    }
}

int main(void)
{
    test_init();
    diag("barriers live in %s", TEST_PAGE_WHERE);
    test_watchdog_start(dump, NULL);
    test_after_futex_wait = hold_window;
    test_wait_override = wait_flagged;
    test_wake_override = wake_plain;
    held_case(false);
    held_case(true);
    test_after_futex_wait = NULL;
    test_wait_override = NULL;
    test_wake_override = NULL;
    test_after_futex_wake = after_wake;
    int over = test_ncpu() + 1;
    if (over > MAXGROUPS) over = MAXGROUPS;
    run("spread", false, 1, 100);
    run("spread", false, over, 100);
    run("pinned", true, 2, 100);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
