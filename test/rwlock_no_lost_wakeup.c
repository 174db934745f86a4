/* SPDX-License-Identifier: MIT */
/* rwlock_no_lost_wakeup: no reader or writer sleeps for ever. Readers and writers, timed and
 * untimed, mixed: each takes the lock by its untimed call, or by a timed one (timedrdlock,
 * clockrdlock on CLOCK_REALTIME, timedwrlock, clockwrlock) with a deadline 0 to 300 us ahead,
 * or 1 to 20 ms, so that many time out: readers behind a writer (leaving rwait behind), and
 * writers registered behind readers or a writer (their give-ups hand the lock on). Holders
 * sleep inside now and then (up to 150 us), so waiters go past their spin and sleep in the
 * kernel; a writer downgrades one section in four. Every thread must come back (a wake that
 * never comes is the watchdog's failure), and, at the end: a plain counter that writers add
 * to equals their sections exactly, readers found it unchanged across their sections, never
 * a reader beside a writer nor two writers, every call said 0 or ETIMEDOUT (timed calls
 * only), the timeouts happened (readers' and writers'; the box runs until both have), nobody
 * holds or waits, destroy 0; and every value of the word a thread read (before and after each
 * of its calls) kept the invariants of fastsync.h's section: rwait only while a writer holds
 * or is registered, a writer's hold alone. Spread over the CPUs and pinned to one, 2 + 2 threads and more
 * threads than CPUs; the inject suite runs it again over spurious wakeups, EINTR and EAGAIN.
 * Fails with a hand-off that does not wake (a writer's give-up, an unlock, a downgrade: a
 * thread asleep for ever), a wake of one reader where every reader must go, a timeout that
 * leaves a registration behind (destroy EBUSY, writers held back for ever), a hand-off that
 * lets readers in but leaves rwait set (a give-up or a downgrade without it: the invariant),
 * or a timed lock that returns ETIMEDOUT holding the lock (the counter). */
#include "harness.h"

static fastsync_rwlock_t rw;
static unsigned long counter; /* plain: written under the write lock */
static _Atomic(int) readers_in, writers_in;
static _Atomic(unsigned long) rd_timeouts, wr_timeouts;
static uint64_t box_end;

struct worker {
    bool writer;
    uint64_t rng;
    _Atomic(unsigned long) done; /* relaxed: progress for the dump */
    _Atomic(int) where;          /* 0 outside, 1 in a lock call, 2 inside */
    unsigned long sections, timeouts, downgrades, bad_excl, bad_read, bad_ret, bad_word;
    int bad_code;
    uint64_t bad_word_seen;
};

static struct worker *workers;
static int nworkers;

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    for (int i = 0; i < nworkers; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("%s %d: %lu sections, %s", workers[i].writer ? "writer" : "reader", i,
             atomic_load_explicit(&workers[i].done, memory_order_relaxed),
             (const char *[]){ "outside", "in a lock call", "inside" }[atomic_load_explicit(&workers[i].where,
                                                                                             memory_order_relaxed)]);
}

static void code(struct worker *w, int r, int allowed)
{
    if (r != 0 && r != allowed) {
        w->bad_ret++;
        w->bad_code = r;
    }
}

/* One lock call, the kind and deadline drawn at random: 0 or ETIMEDOUT. */
static int lock_once(struct worker *w)
{
    uint64_t x = test_rand(&w->rng);
    int how = (int)(x % 3);
    if (how == 0) return w->writer ? fastsync_rwlock_wrlock(&rw) : fastsync_rwlock_rdlock(&rw);
    uint64_t ns = (x >> 8) % 4 == 0 ? 1000000u + (x >> 16) % 19000000u : (x >> 16) % 300000u;
    clockid_t clock = how == 1 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    struct timespec d = test_deadline_on(clock, ns);
    if (w->writer)
        return how == 1 ? fastsync_rwlock_timedwrlock(&rw, &d) : fastsync_rwlock_clockwrlock(&rw, clock, &d);
    return how == 1 ? fastsync_rwlock_timedrdlock(&rw, &d) : fastsync_rwlock_clockrdlock(&rw, clock, &d);
}

/* The word's invariants (fastsync.h's section), on a value it had: rwait only while a writer
 * holds or is registered; a writer holds only alone. Any value a thread reads was the word's
 * at some moment, so one that breaks them is a defect, whatever the timing. */
static void check_word(struct worker *w)
{
    uint64_t v = test_rwlock_word(&rw);
    if (((v & FASTSYNC__RW_RWAIT) != 0 && fastsync__rw_readable(v)) ||
        ((v & FASTSYNC__RW_WLOCKED) != 0 && fastsync__rw_readers(v) != 0)) {
        w->bad_word++;
        w->bad_word_seen = v;
    }
}

static void hold(struct worker *w)
{
    unsigned r = (unsigned)(test_rand(&w->rng) % 8);
    if (r == 0) test_sleep_ns(20000 + test_rand(&w->rng) % 130000); /* the waiters go to sleep */
    else if (r == 1) sched_yield();
}

static void *worker_main(void *p)
{
    struct worker *w = (struct worker *)p;
    unsigned long n = 0;
    /* relaxed (every access to where, done, the inside counts and the timeout counts):
     * progress and counts, which add no happens-before of their own (that could hide a
     * missing one in the lock from ThreadSanitizer: the plain counter is the real check). */
    while (test_box_until(box_end, n,
                          atomic_load_explicit(&rd_timeouts, memory_order_relaxed) > 0 &&
                              atomic_load_explicit(&wr_timeouts, memory_order_relaxed) > 0)) {
        atomic_store_explicit(&w->where, 1, memory_order_relaxed);
        check_word(w);
        int r = lock_once(w);
        atomic_store_explicit(&w->where, 2, memory_order_relaxed);
        if (r != 0) {
            code(w, r, ETIMEDOUT);
            if (r == ETIMEDOUT) {
                w->timeouts++;
                atomic_fetch_add_explicit(w->writer ? &wr_timeouts : &rd_timeouts, 1, memory_order_relaxed);
            }
        } else if (w->writer) {
            if (atomic_fetch_add_explicit(&writers_in, 1, memory_order_relaxed) != 0 ||
                atomic_load_explicit(&readers_in, memory_order_relaxed) != 0)
                w->bad_excl++;
            unsigned long c = counter;
            hold(w);
            counter = c + 1;
            atomic_fetch_sub_explicit(&writers_in, 1, memory_order_relaxed);
            w->sections++;
            if (test_rand(&w->rng) % 4 == 0) {
                code(w, fastsync_rwlock_downgrade(&rw), 0);
                w->downgrades++;
                atomic_fetch_add_explicit(&readers_in, 1, memory_order_relaxed);
                hold(w);
                if (counter != c + 1) w->bad_read++;
                atomic_fetch_sub_explicit(&readers_in, 1, memory_order_relaxed);
                code(w, fastsync_rwlock_rdunlock(&rw), 0);
            } else {
                code(w, fastsync_rwlock_wrunlock(&rw), 0);
            }
        } else {
            atomic_fetch_add_explicit(&readers_in, 1, memory_order_relaxed);
            if (atomic_load_explicit(&writers_in, memory_order_relaxed) != 0) w->bad_excl++;
            unsigned long c = counter;
            hold(w);
            if (counter != c) w->bad_read++;
            atomic_fetch_sub_explicit(&readers_in, 1, memory_order_relaxed);
            w->sections++;
            code(w, fastsync_rwlock_rdunlock(&rw), 0);
        }
        atomic_store_explicit(&w->where, 0, memory_order_relaxed);
        check_word(w);
        if (test_rand(&w->rng) % 8 == 0) test_sleep_ns(test_rand(&w->rng) % 100000); /* gaps */
        atomic_store_explicit(&w->done, ++n, memory_order_relaxed);
    }
    return NULL;
}

static void run(const char *name, bool pinned, int pairs, double ms)
{
    test_pin_all(pinned);
    fastsync_rwlock_init(&rw, TEST_SHARED);
    counter = 0;
    /* relaxed: before the threads start. */
    atomic_store_explicit(&rd_timeouts, 0, memory_order_relaxed);
    atomic_store_explicit(&wr_timeouts, 0, memory_order_relaxed);
    int n = 2 * pairs;
    workers = (struct worker *)calloc((size_t)n, sizeof *workers);
    pthread_t *t = (pthread_t *)calloc((size_t)n, sizeof *t);
    if (!workers || !t) bail("out of memory");
    nworkers = n;
    unsigned long waits0 = test_kernel_waits(), wakes0 = test_kernel_wakes();
    box_end = test_box_end(ms);
    for (int i = 0; i < n; i++) {
        workers[i].writer = i % 2 == 1;
        workers[i].rng = test_stream((unsigned)i);
        t[i] = test_thread_start(worker_main, &workers[i]);
    }
    for (int i = 0; i < n; i++) test_thread_join(t[i]);
    unsigned long wsec = 0, rsec = 0, wto = 0, rto = 0, down = 0, bad_excl = 0, bad_read = 0, bad_ret = 0;
    unsigned long bad_word = 0;
    uint64_t bad_word_seen = 0;
    int bad_code = 0;
    for (int i = 0; i < n; i++) {
        struct worker *w = &workers[i];
        *(w->writer ? &wsec : &rsec) += w->sections;
        *(w->writer ? &wto : &rto) += w->timeouts;
        down += w->downgrades;
        bad_excl += w->bad_excl;
        bad_read += w->bad_read;
        bad_ret += w->bad_ret;
        if (w->bad_ret) bad_code = w->bad_code;
        bad_word += w->bad_word;
        if (w->bad_word) bad_word_seen = w->bad_word_seen;
    }
    diag("%s, %d + %d: %lu read and %lu write sections (%lu downgraded), %lu reader and %lu writer timeouts, "
         "%lu futex waits, %lu wakes",
         name, pairs, pairs, rsec, wsec, down, rto, wto, test_kernel_waits() - waits0, test_kernel_wakes() - wakes0);
    is_int(counter, wsec, "%s, %d + %d: plain counter == write sections", name, pairs, pairs);
    ok(rto > 0 && wto > 0, "%s, %d + %d: readers and writers timed out", name, pairs, pairs);
    is_int(bad_read, 0, "%s, %d + %d: readers found the counter unchanged", name, pairs, pairs);
    is_int(bad_excl, 0, "%s, %d + %d: never a reader with a writer, never two writers", name, pairs, pairs);
    if (!is_int(bad_ret, 0, "%s, %d + %d: every call said 0, or ETIMEDOUT", name, pairs, pairs))
        diag("  last unexpected code: %d", bad_code);
    if (!is_int(bad_word, 0, "%s, %d + %d: every word read kept the invariants (rwait only behind a writer)", name,
                pairs, pairs))
        diag("  last word that broke them: 0x%016" PRIx64, bad_word_seen);
    is_int(test_rwlock_word(&rw) & ~(FASTSYNC__RW_SHARED | FASTSYNC__RW_WSEQS), 0,
           "%s, %d + %d: nobody holds or waits at the end", name, pairs, pairs);
    is_int(fastsync_rwlock_destroy(&rw), 0, "%s, %d + %d: destroy 0", name, pairs, pairs);
    free(t);
    free(workers);
    workers = NULL;
    nworkers = 0;
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    int many = test_ncpu() > 3 ? test_ncpu() : 3;
    run("spread", false, 2, 250);
    run("pinned", true, 2, 250);
    run("spread", false, many, 250);
    run("pinned", true, many, 250);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
