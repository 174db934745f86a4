/* SPDX-License-Identifier: MIT */
/* rwlock_downgrade: fastsync_rwlock_downgrade turns the write lock into a read lock at once,
 * lets in the readers that wait unless a writer waits too, and lets no writer in between.
 *   readers waiting: this thread write-locks and writes a plain record; three readers
 *            (rdlock, timedrdlock, clockrdlock) sleep behind it; the downgrade lets all three
 *            in with one wake while this thread still holds its read lock, and each reads the
 *            record as written (plain reads: ThreadSanitizer checks that the downgrade's
 *            release orders them after the writes); a writer that arrives then waits until
 *            the last of the four read locks is released, and only then writes.
 *   a writer waiting: this thread write-locks; a writer W (wrlock) registers and sleeps, then
 *            a reader R sleeps behind both; the downgrade makes this thread a reader with
 *            neither let in: W stays out while this thread reads (20 ms, the record
 *            unchanged), R stays behind W (tryrdlock says EBUSY: a writer waits); this
 *            thread's rdunlock lets W in (R still out), W's wrunlock lets R in, and R reads
 *            W's record.
 *   one thread, no waiter: downgrade makes no futex call (rwlock_api counts them too).
 * Fails with a downgrade that is an unlock and a lock (W, woken by the unlock, comes in
 * between and writes: the record changes under the downgraded reader, or the downgrade
 * waits behind W), one that makes no hand-off (the readers sleep on: the 5 s limit, then a
 * wrlock and wrunlock here let them in), or one that lets readers past a waiting writer. */
/* The bound: the order checked above is writers first: a reader held asleep behind the write lock
 * here for longer than the reader-writer lock's hand-off bound (wine and qemu are slow enough)
 * would claim the downgrade's hand-off and come in before the waiting writer. So the bound is
 * one no run reaches (rwlock_starving tests the claims). */
#define FASTSYNC_RWLOCK_HANDOFF_NS 1000000000000
#include "harness.h"

static fastsync_rwlock_t rw;
/* The record: plain, written under the write lock, read under read locks. */
static struct record {
    unsigned long a, b, writer;
} rec;

static struct test_rwlocker readers[3], writer;

/* A reader that reads the record in its own thread, under its read lock. */
static struct rec_reader {
    _Atomic(int) tid;   /* test_tid() (0 where there is no /proc), set before state 1 */
    _Atomic(int) state; /* 0 start, 1 in rdlock, 2 read the record, 3 unlocked */
    struct record seen; /* written before state 2 */
    pthread_t thread;
} rr;

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    test_rwlockers_dump(readers, 3);
    test_rwlockers_dump(&writer, 1);
    /* relaxed: a diagnostic snapshot. */
    diag("record reader: state %d", atomic_load_explicit(&rr.state, memory_order_relaxed));
}

static void *rec_reader_main(void *unused)
{
    (void)unused;
    /* relaxed: an id, published by the release store of state 1 (which pairs with the
     * acquire load in rec_reader_state). */
    atomic_store_explicit(&rr.tid, test_tid(), memory_order_relaxed);
    atomic_store_explicit(&rr.state, 1, memory_order_release);
    if (fastsync_rwlock_rdlock(&rw) != 0) return NULL;
    rr.seen = rec;
    /* release: pairs with the acquire loads in rec_reader_state. */
    atomic_store_explicit(&rr.state, 2, memory_order_release);
    fastsync_rwlock_rdunlock(&rw);
    atomic_store_explicit(&rr.state, 3, memory_order_release);
    return NULL;
}

static void rec_reader_start(void)
{
    /* relaxed: before its thread starts. */
    atomic_store_explicit(&rr.tid, 0, memory_order_relaxed);
    atomic_store_explicit(&rr.state, 0, memory_order_relaxed);
    rr.thread = test_thread_start(rec_reader_main, NULL);
}

static int rec_reader_state(void)
{
    /* acquire: pairs with the release stores in rec_reader_main. */
    return atomic_load_explicit(&rr.state, memory_order_acquire);
}

static bool rec_reader_until(int state)
{
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && rec_reader_state() < state) test_sleep_ns(100000);
    return rec_reader_state() >= state;
}

/* Until the three reader lockers sleep (rwait set, three futex waits since w0, each thread
 * asleep where /proc says). */
static bool readers_asleep(unsigned long w0)
{
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) &&
           ((test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) == 0 || test_kernel_waits() - w0 < 3))
        test_sleep_ns(100000);
    int asleep = 0;
    for (int i = 0; i < 3; i++) asleep += test_rwlocker_asleep(&readers[i], 20000000);
    return asleep == 3;
}

static void readers_waiting(void)
{
    fastsync_rwlock_init(&rw, 0);
    is_int(fastsync_rwlock_wrlock(&rw), 0, "readers waiting: this thread write-locks");
    unsigned long w0 = test_kernel_waits();
    test_rwlocker_start(&readers[0], &rw, TEST_RW_RDLOCK, 0, true);
    test_rwlocker_start(&readers[1], &rw, TEST_RW_TIMEDRDLOCK, 60000000000u, true);
    test_rwlocker_start(&readers[2], &rw, TEST_RW_CLOCKRDLOCK, 60000000000u, true);
    ok(readers_asleep(w0), "... three readers sleep behind it (rwait set)");
    rec.a = 1;
    rec.b = 2;
    rec.writer = 0;
    unsigned long k0 = test_kernel_wakes();
    is_int(fastsync_rwlock_downgrade(&rw), 0, "... downgrade: 0");
    uint64_t end = test_limit_end(5000);
    int in = 0; /* (the loop's limit is the rescue's too) */
    while (test_box_open(end) && (in = (test_rwlocker_state(&readers[0]) >= TEST_RWL_HOLDING) +
                                       (test_rwlocker_state(&readers[1]) >= TEST_RWL_HOLDING) +
                                       (test_rwlocker_state(&readers[2]) >= TEST_RWL_HOLDING)) < 3)
        test_sleep_ns(100000);
    is_int(in, 3, "... all three readers enter, this thread still reading");
    if (in != 3) {
        test_dump_rwlock("  rwlock", &rw);
        diag("  this thread's rdunlock lets them in (then it reads again)");
        fastsync_rwlock_rdunlock(&rw);
        while (test_box_open(end) && (test_rwlocker_state(&readers[0]) < TEST_RWL_HOLDING ||
                                      test_rwlocker_state(&readers[1]) < TEST_RWL_HOLDING ||
                                      test_rwlocker_state(&readers[2]) < TEST_RWL_HOLDING))
            test_sleep_ns(100000);
        fastsync_rwlock_rdlock(&rw);
    }
    is_int(test_rwlock_word(&rw), 4, "... the word: 4 readers, nothing else");
    is_int(test_kernel_wakes() - k0, 1, "... with one wake");
    is_int(rec.a + rec.b, 3, "... this thread reads the record it wrote");
    rec_reader_start();
    bool read = rec_reader_until(2); /* (rr.seen is read only after it says so) */
    if (!ok(read && rr.seen.a == 1 && rr.seen.b == 2,
            "... a fifth reader, in its own thread, reads the record as written") && read)
        diag("  it read %lu, %lu", rr.seen.a, rr.seen.b);
    test_thread_join(rr.thread);
    ok(readers[0].ret == 0 && readers[1].ret == 0 && readers[2].ret == 0, "... the three readers' locks said 0");

    /* a writer now waits until the last read lock is gone */
    test_rwlocker_start(&writer, &rw, TEST_RW_WRLOCK, 0, true);
    end = test_limit_end(5000);
    while (test_box_open(end) && test_rwlock_writers(&rw) != 1) test_sleep_ns(100000);
    is_int(test_rwlock_writers(&rw), 1, "a writer arrives and registers");
    for (int i = 0; i < 3; i++) test_rwlocker_join(&readers[i]);
    test_sleep_ns(10000000);
    is_int(test_rwlocker_state(&writer), TEST_RWL_LOCKING, "... it still waits once they left (this thread reads)");
    is_int(fastsync_rwlock_rdunlock(&rw), 0, "this thread's rdunlock: 0");
    ok(test_rwlocker_until(&writer, TEST_RWL_HOLDING, 5000), "... lets the writer in");
    is_int(test_rwlocker_join(&writer), 0, "... its wrlock said 0");
    is_int(fastsync_rwlock_destroy(&rw), 0, "readers waiting: destroy 0 at the end");
}

/* The writer W of the second case writes the record in its own thread: a locker of its own. */
static _Atomic(int) w_state; /* 0 start, 1 in wrlock, 2 wrote, 3 done */

static void *w_main(void *unused)
{
    (void)unused;
    /* relaxed: progress; the release below publishes the write. */
    atomic_store_explicit(&w_state, 1, memory_order_relaxed);
    if (fastsync_rwlock_wrlock(&rw) != 0) return NULL;
    rec.a = 10;
    rec.b = 20;
    rec.writer = 1;
    /* release: pairs with the acquire loads in main. */
    atomic_store_explicit(&w_state, 2, memory_order_release);
    fastsync_rwlock_wrunlock(&rw);
    atomic_store_explicit(&w_state, 3, memory_order_release);
    return NULL;
}

static void writer_waiting(void)
{
    fastsync_rwlock_init(&rw, 0);
    is_int(fastsync_rwlock_wrlock(&rw), 0, "a writer waiting: this thread write-locks");
    rec.a = 1;
    rec.b = 2;
    rec.writer = 0;
    atomic_store_explicit(&w_state, 0, memory_order_relaxed); /* relaxed: before its thread */
    pthread_t w = test_thread_start(w_main, NULL);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && test_rwlock_writers(&rw) != 1) test_sleep_ns(100000);
    is_int(test_rwlock_writers(&rw), 1, "... W registers behind it");
    unsigned long w0 = test_kernel_waits();
    rec_reader_start();
    end = test_limit_end(5000);
    while (test_box_open(end) && ((test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) == 0 || test_kernel_waits() == w0 ||
                                  rec_reader_state() < 1))
        test_sleep_ns(100000);
    ok(test_until_asleep(atomic_load_explicit(&rr.tid, memory_order_relaxed), 20000000) &&
           (test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) != 0 && rec_reader_state() == 1,
       "... R sleeps behind both (rwait set)");
    is_int(fastsync_rwlock_downgrade(&rw), 0, "downgrade: 0");
    is_int(test_rwlock_readers(&rw), 1, "... this thread holds a read lock");
    test_sleep_ns(20000000);
    /* acquire: pairs with W's release stores. */
    is_int(atomic_load_explicit(&w_state, memory_order_acquire), 1, "... W still waits 20 ms later");
    ok(rec.a == 1 && rec.b == 2 && rec.writer == 0, "... and the record is still this thread's");
    is_int(rec_reader_state(), 1, "... R still waits (behind W)");
    is_int(fastsync_rwlock_tryrdlock(&rw), EBUSY, "... tryrdlock: EBUSY (a writer waits)");
    is_int(test_rwlock_word(&rw) & ~FASTSYNC__RW_WSEQS,
           test_rwlock_make(1, true, false, false, 1, 0), "... the word: 1 reader, rwait, 1 writer registered");
    is_int(fastsync_rwlock_rdunlock(&rw), 0, "this thread's rdunlock: 0");
    end = test_limit_end(5000);
    while (test_box_open(end) && atomic_load_explicit(&w_state, memory_order_acquire) < 3) test_sleep_ns(100000);
    is_int(atomic_load_explicit(&w_state, memory_order_acquire), 3, "... lets W in (it writes and unlocks)");
    bool read = rec_reader_until(2); /* (rr.seen is read only after it says so) */
    ok(read, "W's wrunlock lets R in");
    ok(read && rr.seen.a == 10 && rr.seen.b == 20 && rr.seen.writer == 1, "... which reads W's record");
    test_thread_join(w);
    test_thread_join(rr.thread);
    is_int(fastsync_rwlock_destroy(&rw), 0, "a writer waiting: destroy 0 at the end");
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    readers_waiting();
    writer_waiting();
    fastsync_rwlock_init(&rw, 0);
    unsigned long c0 = test_kernel_waits() + test_kernel_wakes(), bad = 0;
    for (int i = 0; i < 1000; i++) {
        bad += fastsync_rwlock_wrlock(&rw) != 0;
        bad += fastsync_rwlock_downgrade(&rw) != 0;
        bad += fastsync_rwlock_rdunlock(&rw) != 0;
    }
    is_int(bad, 0, "one thread: 1000 x wrlock, downgrade, rdunlock: each 0");
    is_int(test_kernel_waits() + test_kernel_wakes() - c0, 0, "... no futex call");
    test_watchdog_stop();
    return done_testing();
}
