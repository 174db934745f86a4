/* SPDX-License-Identifier: MIT */
/* barrier_api: the barrier's results and exact error codes. sizeof 8; init says
 * EINVAL for a count of 0, for one above FASTSYNC_BARRIER_MAX and for bad flags, and 0 up to
 * the maximum; FASTSYNC_SHARED sets the shared bit (EINVAL where the backend has no shared
 * objects); a count of 1: every wait returns FASTSYNC_BARRIER_SERIAL at once, with no futex
 * call, and the barrier is back as init left it (round number aside); destroy says 0 on a
 * fresh barrier and after a round, EBUSY while a round is in progress (a thread has arrived:
 * seen in the word), and the round then completes with one SERIAL among its two threads;
 * after the serial return the word's arrived count and `slept` are 0 again and, the other
 * thread out, `leaving` too. Not a cancellation point: a thread asleep in wait that is
 * cancelled (and one whose cancel was pending as it called wait) stays in the call until the
 * round completes, returns from it, and ends cancelled at its next pthread_testcancel
 * (skipped where waits are no cancellation points: FASTSYNC_NO_CANCEL, bionic, Windows,
 * OS/2). The split calls (std::barrier's): arrive(0) and arrive(n) beyond what the round needs
 * say EINVAL and change nothing; arrive(n) returns the round as its token, counts n
 * arrivals and nobody in `leaving`; the arrival that completes the round says SERIAL and
 * ends it; wait_token of an ended round returns 0 at once, no futex call; a thread asleep
 * in wait_token is counted in `leaving`, woken by a split arrival's end, and out after;
 * arrive_and_drop arrives (count 2: the next wait ends the round) and lowers the count
 * for later rounds; the last one's drop ends its round, after which arrive and drop say
 * EINVAL. Private and shared.
 * Fails with: init that takes a count of 0 or above the maximum, or a flag it should refuse;
 * a count-1 wait that sleeps or says 0; destroy that says 0 with a thread arrived, or EBUSY
 * on an idle barrier; a round that does not reset arrived and slept; a sleep in wait with
 * cancellation enabled (the thread ends cancelled inside wait, its round short); an arrive
 * that takes more arrivals than the round needs, a drop that does not lower the count, or
 * a wait_token that is not woken by a split arrival's end. */
#include "harness.h"

static fastsync_barrier_t bar;

static void dump(void *unused)
{
    (void)unused;
    test_dump_barrier("barrier", &bar);
}

static unsigned long syscalls(void) { return test_kernel_waits() + test_kernel_wakes(); }

/* A thread that makes one wait on bar. pending: its cancellation is disabled while the test
 * sends the cancel, then enabled just before the call. After the call a pthread_testcancel:
 * a cancel that did not act inside the call acts there. */
struct waiter {
    pthread_t t;
    bool pending;
    bool split; /* arrive(1), then wait_token, instead of wait */
    _Atomic(int) phase; /* 0 start, 1 ready for a pending cancel, 2 in the call, 3 back;
                         * relaxed (all its accesses): a poll, ret is read after the join */
    _Atomic(int) tid;   /* relaxed: for /proc, stored before the call */
    int ret;
};

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    atomic_store_explicit(&w->tid, test_tid(), memory_order_relaxed);
#if FASTSYNC__CANCEL
    int old;
    pthread_cleanup_push(test_cwaiter_unpoison, NULL);
    if (w->pending) {
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
        atomic_store_explicit(&w->phase, 1, memory_order_relaxed);
        while (atomic_load_explicit(&w->phase, memory_order_relaxed) == 1) test_sleep_ns(100000);
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old); /* not a cancellation point */
    }
#endif
    atomic_store_explicit(&w->phase, 2, memory_order_relaxed);
    if (w->split) {
        fastsync_barrier_token_t t;
        w->ret = fastsync_barrier_arrive(&bar, 1, &t);
        if (w->ret == 0) w->ret = fastsync_barrier_wait_token(&bar, t) == 0 ? 0 : 98;
    } else {
        w->ret = fastsync_barrier_wait(&bar);
    }
    atomic_store_explicit(&w->phase, 3, memory_order_relaxed);
#if FASTSYNC__CANCEL
    pthread_testcancel();
    pthread_cleanup_pop(0);
#endif
    return NULL;
}

static void start_as(struct waiter *w, bool pending, bool split)
{
    w->pending = pending;
    w->split = split;
    w->ret = 99;
    atomic_store_explicit(&w->phase, 0, memory_order_relaxed); /* relaxed: before the thread */
    atomic_store_explicit(&w->tid, 0, memory_order_relaxed);
    w->t = test_thread_start(waiter_main, w);
}
static void start(struct waiter *w, bool pending) { start_as(w, pending, false); }

/* start, for a thread that arrives (split) and then waits on its token */
static void start_split(struct waiter *w) { start_as(w, false, true); }

static inline int phase(struct waiter *w) { return atomic_load_explicit(&w->phase, memory_order_relaxed); }

/* Until the word shows `n` arrived and `slept` set, and w's thread reads asleep. */
static bool until_asleep(struct waiter *w, uint32_t n)
{
    uint64_t end = test_limit_end(5000);
    while ((test_barrier_arrived(&bar) != n || !(test_barrier_word(&bar) & FASTSYNC__BAR_SLEPT)) && test_box_open(end))
        test_sleep_ns(100000);
    if (test_barrier_arrived(&bar) != n || !(test_barrier_word(&bar) & FASTSYNC__BAR_SLEPT)) return false;
    return test_until_asleep(atomic_load_explicit(&w->tid, memory_order_relaxed), 20000000);
}

static void init_args(void)
{
    is_int(sizeof(fastsync_barrier_t), 8, "sizeof(fastsync_barrier_t) 8");
    fastsync_barrier_t st = FASTSYNC_BARRIER_INIT(3);
    is_int(fastsync_barrier_init(&bar, 3, 0), 0, "init(3): 0");
    ok(test_barrier_full(&st) == test_barrier_full(&bar), "FASTSYNC_BARRIER_INIT(3) is init(3, 0)'s word");
    is_int(fastsync_barrier_init(&bar, 0, 0), EINVAL, "init(count 0): EINVAL");
    is_int(fastsync_barrier_init(&bar, FASTSYNC_BARRIER_MAX + 1u, 0), EINVAL, "init(FASTSYNC_BARRIER_MAX + 1): EINVAL");
    is_int(fastsync_barrier_init(&bar, UINT_MAX, 0), EINVAL, "init(UINT_MAX): EINVAL");
    is_int(fastsync_barrier_init(&bar, FASTSYNC_BARRIER_MAX, 0), 0, "init(FASTSYNC_BARRIER_MAX): 0");
    is_int(fastsync_barrier_destroy(&bar), 0, "... destroy 0");
    is_int(fastsync_barrier_init(&bar, 1, 0), 0, "init(1): 0");
    is_int(test_barrier_word(&bar), 0, "... the word is 0 (no arrival, private)");
    int bad[] = { 2, 3, FASTSYNC_SHARED << 1, FASTSYNC_SHARED | 2, -1, 0x100, INT_MIN };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i] == FASTSYNC_SHARED) continue;
        is_int(fastsync_barrier_init(&bar, 2, bad[i]), EINVAL, "init(2, flags %#x): EINVAL", (unsigned)bad[i]);
    }
#if FASTSYNC_HAS_SHARED
    is_int(fastsync_barrier_init(&bar, 2, FASTSYNC_SHARED), 0, "init(2, FASTSYNC_SHARED): 0");
    is_int(test_barrier_word(&bar), FASTSYNC__BAR_SHARED, "... the word has the shared bit only");
#else
    is_int(fastsync_barrier_init(&bar, 2, FASTSYNC_SHARED), EINVAL, "init(2, FASTSYNC_SHARED): EINVAL (no shared objects here)");
#endif
}

static void count_one(const char *kind, int flags)
{
    uint32_t sh = flags ? FASTSYNC__BAR_SHARED : 0;
    is_int(fastsync_barrier_init(&bar, 1, flags), 0, "%s: init(1)", kind);
    is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy on a fresh barrier: 0", kind);
    unsigned long s0 = syscalls();
    int serial = 0;
    for (int i = 0; i < 5; i++) serial += fastsync_barrier_wait(&bar) == FASTSYNC_BARRIER_SERIAL;
    is_int(serial, 5, "%s: count 1: 5 waits, each FASTSYNC_BARRIER_SERIAL", kind);
    is_int(syscalls() - s0, 0, "%s: ... without a futex call", kind);
    is_int(test_barrier_word(&bar) & ~FASTSYNC__BAR_ROUND, sh, "%s: ... nobody arrived, slept clear, shared kept", kind);
    is_int((test_barrier_word(&bar) & FASTSYNC__BAR_ROUND) / FASTSYNC__BAR_ROUND_ONE, 5, "%s: ... round 5", kind);
    is_int(test_barrier_leaving(&bar), 0, "%s: ... nobody leaving", kind);
    is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy: 0", kind);
}

/* Two threads: the other arrives first and sleeps; destroy says EBUSY; this thread arrives. */
static void busy(const char *kind, int flags)
{
    uint32_t sh = flags ? FASTSYNC__BAR_SHARED : 0;
    fastsync_barrier_init(&bar, 2, flags);
    struct waiter w;
    start(&w, false);
    ok(until_asleep(&w, 1), "%s: a thread arrived and sleeps (arrived 1, slept)", kind);
    is_int(fastsync_barrier_destroy(&bar), EBUSY, "%s: destroy while a round is in progress: EBUSY", kind);
    is_int(test_barrier_arrived(&bar), 1, "%s: ... the round untouched", kind);
    int r = fastsync_barrier_wait(&bar);
    test_thread_join(w.t);
    ok((r == FASTSYNC_BARRIER_SERIAL) + (w.ret == FASTSYNC_BARRIER_SERIAL) == 1 && (r == 0 || w.ret == 0),
       "%s: this thread's wait completed the round: one SERIAL, one 0 (%d, %d)", kind, r, w.ret);
    is_int(test_barrier_word(&bar) & ~FASTSYNC__BAR_ROUND, sh, "%s: ... the word as init left it (round aside)", kind);
    is_int(test_barrier_leaving(&bar), 0, "%s: ... the other thread is out (leaving 0)", kind);
    is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy after the round: 0", kind);

    /* a second round on the same barrier, this thread first this time */
    fastsync_barrier_init(&bar, 2, flags);
    start(&w, false);
    r = fastsync_barrier_wait(&bar);
    test_thread_join(w.t);
    ok((r == FASTSYNC_BARRIER_SERIAL) + (w.ret == FASTSYNC_BARRIER_SERIAL) == 1 && (r == 0 || w.ret == 0),
       "%s: a round, either thread first: one SERIAL, one 0 (%d, %d)", kind, r, w.ret);
    is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy: 0", kind);
}

/* std::barrier's split arrivals and dropping out, in the C calls. */
static void split(const char *kind, int flags)
{
    fastsync_barrier_token_t t = 12345, t2 = 0;
    is_int(fastsync_barrier_init(&bar, 3, flags), 0, "%s: init(3)", kind);
    uint32_t round0 = test_barrier_word(&bar) & (uint32_t)FASTSYNC__BAR_ROUND;
    is_int(fastsync_barrier_arrive(&bar, 0, &t), EINVAL, "%s: arrive(0): EINVAL", kind);
    is_int(fastsync_barrier_arrive(&bar, 4, &t), EINVAL, "%s: arrive(4) with count 3: EINVAL", kind);
    is_int(t, 12345, "%s: ... the token untouched", kind);
    is_int(test_barrier_arrived(&bar), 0, "%s: ... nobody arrived", kind);
    is_int(fastsync_barrier_arrive(&bar, 2, &t), 0, "%s: arrive(2): 0", kind);
    is_int(t, round0, "%s: ... the token is the round", kind);
    is_int(test_barrier_arrived(&bar), 2, "%s: ... arrived 2", kind);
    is_int(test_barrier_leaving(&bar), 0, "%s: ... nobody leaving (a split arrival does not wait)", kind);
    is_int(fastsync_barrier_destroy(&bar), EBUSY, "%s: destroy in the round: EBUSY", kind);
    is_int(fastsync_barrier_arrive(&bar, 2, &t2), EINVAL, "%s: arrive(2) when 1 is left: EINVAL", kind);
    unsigned long s0 = syscalls();
    is_int(fastsync_barrier_arrive(&bar, 1, &t2), FASTSYNC_BARRIER_SERIAL, "%s: arrive(1): the last: SERIAL", kind);
    is_int(t2, round0, "%s: ... its token the same round", kind);
    is_int(test_barrier_arrived(&bar), 0, "%s: ... the round ended (arrived 0)", kind);
    is_int(fastsync_barrier_wait_token(&bar, t), 0, "%s: wait_token of the ended round: 0", kind);
    is_int(syscalls() - s0, 0, "%s: ... no futex call (nobody slept)", kind);
    is_int(test_barrier_count(&bar), 3, "%s: ... count still 3", kind);

    /* a thread arrives (split) and sleeps in wait_token; a split arrival ends the round */
    is_int(fastsync_barrier_init(&bar, 2, flags), 0, "%s: init(2)", kind);
    struct waiter w;
    start_split(&w);
    ok(until_asleep(&w, 1), "%s: a thread arrived (split) and sleeps in wait_token (slept)", kind);
    is_int(test_barrier_leaving(&bar), 1, "%s: ... counted in leaving while it waits", kind);
    is_int(fastsync_barrier_arrive(&bar, 1, &t), FASTSYNC_BARRIER_SERIAL, "%s: this thread's arrive(1): SERIAL", kind);
    test_thread_join(w.t);
    is_int(w.ret, 0, "%s: ... the sleeper's arrive said 0 and its wait_token returned 0", kind);
    is_int(test_barrier_leaving(&bar), 0, "%s: ... leaving 0", kind);
    is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy: 0", kind);

    /* arrive_and_drop: an arrival now, one fewer in later rounds */
    is_int(fastsync_barrier_init(&bar, 2, flags), 0, "%s: init(2)", kind);
    is_int(fastsync_barrier_arrive_and_drop(&bar), 0, "%s: arrive_and_drop: 0 (the round needs one more)", kind);
    is_int(test_barrier_count(&bar), 1, "%s: ... count 1", kind);
    is_int(test_barrier_arrived(&bar), 0, "%s: ... arrived 0 (the drop is the arrival: a round ends at arrived = count)", kind);
    is_int(fastsync_barrier_wait(&bar), FASTSYNC_BARRIER_SERIAL, "%s: a wait ends the round: SERIAL", kind);
    is_int(fastsync_barrier_wait(&bar), FASTSYNC_BARRIER_SERIAL, "%s: the next round needs one arrival: SERIAL", kind);
    is_int(fastsync_barrier_arrive_and_drop(&bar), FASTSYNC_BARRIER_SERIAL, "%s: the last drops out: SERIAL (it ended the round)", kind);
    is_int(test_barrier_count(&bar), 0, "%s: ... count 0", kind);
    is_int(fastsync_barrier_arrive(&bar, 1, &t), EINVAL, "%s: then arrive(1): EINVAL", kind);
    is_int(fastsync_barrier_arrive_and_drop(&bar), EINVAL, "%s: and arrive_and_drop: EINVAL", kind);
    is_int((test_barrier_word(&bar) & FASTSYNC__BAR_ROUND) / FASTSYNC__BAR_ROUND_ONE, 3, "%s: ... round 3", kind);
    is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy: 0", kind);
}

#if FASTSYNC__CANCEL
static void not_cancelled(bool pending)
{
    const char *what = pending ? "a cancel pending before a wait" : "a cancel sent to a sleeper in wait";
    fastsync_barrier_init(&bar, 2, 0);
    struct waiter w;
    start(&w, pending);
    if (pending) {
        uint64_t end = test_limit_end(5000);
        while (phase(&w) != 1 && test_box_open(end)) test_sleep_ns(100000);
        is_int(pthread_cancel(w.t), 0, "%s: pthread_cancel while its cancellation is disabled", what);
        atomic_store_explicit(&w.phase, 0, memory_order_relaxed);
        ok(until_asleep(&w, 1), "%s: ... it enabled cancellation, arrived and sleeps", what);
    } else {
        ok(until_asleep(&w, 1), "%s: it arrived and sleeps", what);
        is_int(pthread_cancel(w.t), 0, "%s: pthread_cancel", what);
    }
    /* The cancel has had its time to act (a cancellation point acts on it at once, by the
     * signal that interrupts the sleep, or, pending, before the thread sleeps). */
    test_sleep_ns(20000000);
    is_int(phase(&w), 2, "%s: 20 ms later it is still in the call", what);
    is_int(test_barrier_arrived(&bar), 1, "%s: ... still counted as arrived", what);
    is_int(fastsync_barrier_wait(&bar), FASTSYNC_BARRIER_SERIAL, "%s: this thread completes the round: SERIAL", what);
    ok(test_thread_join(w.t) == PTHREAD_CANCELED, "%s: the thread ended cancelled", what);
    is_int(phase(&w), 3, "%s: ... after its wait returned (at its pthread_testcancel)", what);
    is_int(w.ret, 0, "%s: ... which returned 0", what);
    is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy: 0 (the thread counted itself out)", what);
}
#endif

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    init_args();
    count_one("private", 0);
    busy("private", 0);
    split("private", 0);
#if FASTSYNC_HAS_SHARED
    count_one("shared", FASTSYNC_SHARED);
    busy("shared", FASTSYNC_SHARED);
    split("shared", FASTSYNC_SHARED);
#else
    skip("the backend has no shared objects", "shared: the same as private");
#endif
#if FASTSYNC__CANCEL
    not_cancelled(false);
    not_cancelled(true);
#else
    skip("waits are no cancellation points in this build", "not a cancellation point");
#endif
    test_watchdog_stop();
    return done_testing();
}
