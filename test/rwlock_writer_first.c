/* SPDX-License-Identifier: MIT */
/* rwlock_writer_first: writers first. Once a writer waits, new readers wait behind it, so a
 * stream of readers never starves a writer.
 *   order, forced: this thread read-locks; a writer W sleeps behind it (registered); then a
 *            new reader cannot enter (tryrdlock EBUSY, a past deadline ETIMEDOUT) and a
 *            reader R sleeps; the rdunlock lets W in and not R; W's wrunlock lets R in. With
 *            two writers and two readers waiting: each writer in turn, alone, then both
 *            readers together.
 *   continuous readers: four reader threads overlap without a gap (a reader leaves only
 *            once a newer reader is inside, or once a reader sleeps behind a writer: rwait),
 *            so that with readers first the read lock would never be free again; a writer
 *            thread takes the write lock again and again (wrlock, timedwrlock with a far
 *            deadline): it must get in each time (a writer starved for good is the
 *            watchdog's failure). A reader that saw a writer registered in the word before
 *            its rdlock must find, once in, that writer's section done (a count the writer
 *            bumps under the write lock, read before the word with acquire: a writer counted
 *            there had left the registration behind, so the one in the word is later). Never
 *            a reader with the writer inside. Spread over the CPUs and pinned to one.
 * Fails with readers first (readers that ignore a registered writer: the continuous part
 * never lets the writer in, so the watchdog; the order part sees R enter before W), or with
 * a hand-off that wakes the readers while a writer still waits. */
/* The bound: writers first is the order before any waiter reaches the reader-writer lock's hand-off
 * bound; the forced order above keeps readers asleep far longer, and one would claim the
 * readers' turn. So the bound is one no run reaches (rwlock_starving tests the claims). */
#define FASTSYNC_RWLOCK_HANDOFF_NS 1000000000000
#include "harness.h"

static fastsync_rwlock_t rw;
static struct test_rwlocker l[4];

/* ---- order, forced ---- */

static bool asleep_all(int first, int n, uint32_t writers, bool rwait)
{
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && (test_rwlock_writers(&rw) != writers ||
                                  ((test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) != 0) != rwait))
        test_sleep_ns(100000);
    int asleep = 0;
    for (int i = first; i < first + n; i++) asleep += test_rwlocker_asleep(&l[i], 20000000);
    return asleep == n && test_rwlock_writers(&rw) == writers;
}

static int state(int i) { return test_rwlocker_state(&l[i]); }

/* Until exactly one of l[a], l[b] holds; its index, or -1. */
static int one_of(int a, int b)
{
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && state(a) < TEST_RWL_HOLDING && state(b) < TEST_RWL_HOLDING) test_sleep_ns(100000);
    if (state(a) == TEST_RWL_HOLDING && state(b) == TEST_RWL_LOCKING) return a;
    if (state(b) == TEST_RWL_HOLDING && state(a) == TEST_RWL_LOCKING) return b;
    return -1;
}

static void order_one(void)
{
    fastsync_rwlock_init(&rw, 0);
    fastsync_rwlock_rdlock(&rw);
    test_rwlocker_start(&l[0], &rw, TEST_RW_WRLOCK, 0, true);
    ok(asleep_all(0, 1, 1, false), "one writer: W sleeps behind this thread's read lock, registered");
    is_int(fastsync_rwlock_tryrdlock(&rw), EBUSY, "... a new reader: tryrdlock EBUSY");
    struct timespec past = test_ts(0, 0);
    is_int(fastsync_rwlock_timedrdlock(&rw, &past), ETIMEDOUT, "... timedrdlock with a past deadline: ETIMEDOUT");
    test_rwlocker_start(&l[1], &rw, TEST_RW_TIMEDRDLOCK, 60000000000u, true);
    ok(asleep_all(1, 1, 1, true), "... R (timedrdlock) sleeps behind W, rwait set");
    fastsync_rwlock_rdunlock(&rw);
    ok(test_rwlocker_until(&l[0], TEST_RWL_HOLDING, 5000), "the rdunlock lets W in");
    test_sleep_ns(10000000);
    is_int(state(1), TEST_RWL_LOCKING, "... and not R");
    test_rwlocker_release(&l[0]);
    ok(test_rwlocker_until(&l[1], TEST_RWL_HOLDING, 5000), "W's wrunlock lets R in");
    is_int(test_rwlocker_join(&l[0]) + test_rwlocker_join(&l[1]), 0, "... both said 0");
    is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy 0");
}

static void order_two(void)
{
    fastsync_rwlock_init(&rw, 0);
    fastsync_rwlock_rdlock(&rw);
    test_rwlocker_start(&l[0], &rw, TEST_RW_WRLOCK, 0, true);
    test_rwlocker_start(&l[1], &rw, TEST_RW_TIMEDWRLOCK, 60000000000u, true);
    ok(asleep_all(0, 2, 2, false), "two writers: both sleep behind this thread's read lock");
    test_rwlocker_start(&l[2], &rw, TEST_RW_RDLOCK, 0, true);
    test_rwlocker_start(&l[3], &rw, TEST_RW_CLOCKRDLOCK, 60000000000u, true);
    ok(asleep_all(2, 2, 2, true), "... two readers sleep behind them");
    fastsync_rwlock_rdunlock(&rw);
    int first = one_of(0, 1);
    ok(first >= 0, "the rdunlock lets one writer in, alone");
    int second = first == 0 ? 1 : 0;
    test_sleep_ns(10000000);
    ok(state(2) == TEST_RWL_LOCKING && state(3) == TEST_RWL_LOCKING, "... the readers still wait");
    test_rwlocker_release(&l[first < 0 ? 0 : first]);
    ok(test_rwlocker_until(&l[second], TEST_RWL_HOLDING, 5000), "its wrunlock lets the other writer in");
    test_sleep_ns(10000000);
    ok(state(2) == TEST_RWL_LOCKING && state(3) == TEST_RWL_LOCKING, "... the readers still wait");
    test_rwlocker_release(&l[second]);
    ok(test_rwlocker_until(&l[2], TEST_RWL_HOLDING, 5000) && test_rwlocker_until(&l[3], TEST_RWL_HOLDING, 5000),
       "the second wrunlock lets both readers in");
    is_int(test_rwlock_readers(&rw), 2, "... together");
    int r = 0;
    for (int i = 0; i < 4; i++) r += test_rwlocker_join(&l[i]) != 0;
    is_int(r, 0, "... all four said 0");
    is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy 0");
}

/* ---- continuous readers ---- */

#define NREADERS 4

static struct rdr {
    uint64_t rng;
    _Atomic(unsigned long) rounds; /* relaxed: progress for the dump */
    unsigned long behind, bad_order, bad_excl, bad_ret; /* read after the join */
} rdrs[NREADERS];

static _Atomic(unsigned long) entries;     /* read sections entered (each reader's ticket) */
static _Atomic(unsigned long) wins;        /* write sections done: written under the write lock */
static _Atomic(unsigned long) behind_all;  /* readers that saw a writer registered (coverage) */
static _Atomic(int) readers_inside;
static _Atomic(bool) writer_inside, stop;
static _Atomic(int) writer_where;          /* 0 outside, 1 in its lock call, 2 inside */
static uint64_t box_end;

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    test_rwlockers_dump(l, 4);
    /* relaxed: a diagnostic snapshot. */
    diag("writer sections %lu, writer %s; readers inside %d, read sections %lu",
         atomic_load_explicit(&wins, memory_order_relaxed),
         (const char *[]){ "outside", "in its lock call",
                           "inside" }[atomic_load_explicit(&writer_where, memory_order_relaxed)],
         atomic_load_explicit(&readers_inside, memory_order_relaxed),
         atomic_load_explicit(&entries, memory_order_relaxed));
}

static void *reader_main(void *p)
{
    struct rdr *r = (struct rdr *)p;
    unsigned long n = 0;
    /* relaxed: only ends the loop (the joins order the rest). */
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        /* acquire: pairs with the writer's release store of wins; the word is read after it
         * (see the top). */
        unsigned long g0 = atomic_load_explicit(&wins, memory_order_acquire);
        uint64_t w = test_rwlock_word(&rw);
        struct timespec far = fastsync_deadline_in(60000000000u);
        int x = n % 2 ? fastsync_rwlock_timedrdlock(&rw, &far) : fastsync_rwlock_rdlock(&rw);
        if (x != 0) {
            r->bad_ret++;
            continue;
        }
        /* relaxed (this and every access to the counters below but wins): they count, and
         * add no happens-before of their own that could hide a missing one in the lock. */
        if (atomic_load_explicit(&writer_inside, memory_order_relaxed)) r->bad_excl++;
        atomic_fetch_add_explicit(&readers_inside, 1, memory_order_relaxed);
        unsigned long ticket = atomic_fetch_add_explicit(&entries, 1, memory_order_relaxed) + 1;
        if ((w & FASTSYNC__RW_WRITERS) != 0) {
            r->behind++;
            atomic_fetch_add_explicit(&behind_all, 1, memory_order_relaxed);
            /* relaxed: the rdlock synchronized with the wrunlock after the writer's store */
            if (atomic_load_explicit(&wins, memory_order_relaxed) <= g0) r->bad_order++;
        }
        /* leave once a newer reader is inside, or once a reader sleeps behind a writer */
        for (unsigned i = 0; atomic_load_explicit(&entries, memory_order_relaxed) == ticket &&
                             (test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) == 0 &&
                             !atomic_load_explicit(&stop, memory_order_relaxed);
             i++)
            if (i % 16 == 15) sched_yield();
        atomic_fetch_sub_explicit(&readers_inside, 1, memory_order_relaxed);
        if (fastsync_rwlock_rdunlock(&rw) != 0) r->bad_ret++;
        atomic_store_explicit(&r->rounds, ++n, memory_order_relaxed);
    }
    return NULL;
}

static void continuous(const char *name, bool pinned, double ms)
{
    test_pin_all(pinned);
    fastsync_rwlock_init(&rw, 0);
    /* relaxed: before the threads start. */
    atomic_store_explicit(&entries, 0, memory_order_relaxed);
    atomic_store_explicit(&wins, 0, memory_order_relaxed);
    atomic_store_explicit(&behind_all, 0, memory_order_relaxed);
    atomic_store_explicit(&stop, false, memory_order_relaxed);
    pthread_t t[NREADERS];
    for (int i = 0; i < NREADERS; i++) {
        memset(&rdrs[i], 0, sizeof rdrs[i]);
        rdrs[i].rng = test_stream((unsigned)i);
        t[i] = test_thread_start(reader_main, &rdrs[i]);
    }
    /* this thread is the writer */
    uint64_t rng = test_stream(100);
    unsigned long rounds = 0, bad_excl = 0, bad_ret = 0;
    box_end = test_box_end(ms);
    while (test_box_until(box_end, rounds, atomic_load_explicit(&behind_all, memory_order_relaxed) > 0)) {
        test_sleep_ns(test_rand(&rng) % 200000); /* the readers overlap meanwhile */
        struct timespec far = fastsync_deadline_in(60000000000u);
        /* relaxed (writer_where, writer_inside, readers_inside): as in reader_main */
        atomic_store_explicit(&writer_where, 1, memory_order_relaxed);
        int x = rounds % 2 ? fastsync_rwlock_timedwrlock(&rw, &far) : fastsync_rwlock_wrlock(&rw);
        if (x != 0) {
            bad_ret++;
            continue;
        }
        atomic_store_explicit(&writer_where, 2, memory_order_relaxed);
        atomic_store_explicit(&writer_inside, true, memory_order_relaxed);
        if (atomic_load_explicit(&readers_inside, memory_order_relaxed) != 0) bad_excl++;
        /* release: pairs with the readers' acquire load of wins (a plain += under the lock
         * would do for the value; the release is for the word they read after it). */
        atomic_store_explicit(&wins, atomic_load_explicit(&wins, memory_order_relaxed) + 1, memory_order_release);
        if (test_rand(&rng) % 4 == 0) sched_yield();
        atomic_store_explicit(&writer_inside, false, memory_order_relaxed);
        atomic_store_explicit(&writer_where, 0, memory_order_relaxed);
        if (fastsync_rwlock_wrunlock(&rw) != 0) bad_ret++;
        rounds++;
    }
    atomic_store_explicit(&stop, true, memory_order_relaxed);
    for (int i = 0; i < NREADERS; i++) test_thread_join(t[i]);
    unsigned long behind = 0, bad_order = 0, sections = 0;
    for (int i = 0; i < NREADERS; i++) {
        behind += rdrs[i].behind;
        bad_order += rdrs[i].bad_order;
        bad_excl += rdrs[i].bad_excl;
        bad_ret += rdrs[i].bad_ret;
        sections += atomic_load_explicit(&rdrs[i].rounds, memory_order_relaxed); /* relaxed: joined */
    }
    diag("%s: %lu write sections, %lu read sections, %lu readers arrived behind a registered writer", name,
         rounds, sections, behind);
    ok(rounds >= TEST_MIN_ROUNDS, "%s: the writer got in %lu times through %d overlapping readers", name, rounds,
       NREADERS);
    is_int(atomic_load_explicit(&wins, memory_order_relaxed), rounds, "%s: its count == its sections", name);
    ok(behind > 0, "%s: readers arrived behind a registered writer", name);
    is_int(bad_order, 0, "%s: none of them entered before that writer's section", name);
    is_int(bad_excl, 0, "%s: never a reader with the writer inside", name);
    is_int(bad_ret, 0, "%s: every lock and unlock said 0", name);
    is_int(fastsync_rwlock_destroy(&rw), 0, "%s: destroy 0 at the end", name);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    order_one();
    order_two();
    continuous("spread", false, 250);
    continuous("pinned", true, 250);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
