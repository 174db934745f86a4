/* SPDX-License-Identifier: MIT */
/* rwlock_writer_timeout: a writer that gives up at its deadline lets in the readers it held
 * back (the class of glibc bug 23844, where the timed-out writer left them asleep). Each
 * case is forced: the writer W, a timedwrlock (or a clockwrlock on CLOCK_REALTIME) with a
 * 50 ms deadline, stays after its timed-out futex wait (the harness's test_rwlocker_hold)
 * until the readers that arrived after W registered are seen asleep behind it (rwait set,
 * each thread asleep in the kernel where /proc says so); only then does W give up.
 *   alone:   this thread holds a read lock throughout; W times out; three readers asleep
 *            behind W (rdlock, timedrdlock and clockrdlock, far deadlines) all enter while
 *            this thread still holds its read lock, with one wake (the give-up's);
 *   another writer waits: W2 (wrlock) registered too: W's give-up leaves the readers
 *            asleep (W2 still first); this thread's rdunlock lets W2 in, the readers still
 *            out; W2's wrunlock lets them in;
 *   write-held: this thread holds the write lock: W's give-up leaves the readers asleep
 *            (they cannot enter); the wrunlock lets them in.
 * Fails with a give-up that leaves the word without its hand-off (the readers sleep on
 * while the read lock is held: the 5 s limit, then this thread's rdunlock rescues them),
 * one that keeps W registered (destroy EBUSY, readers held), or one that lets readers in
 * while a writer still waits or holds. */
/* The bound: the words and the order above are those of writers first: the readers sleep here far longer
 * than the reader-writer lock's hand-off bound, and one would claim the readers' turn. So the
 * bound is one no run reaches (rwlock_starving tests the claims). */
#define FASTSYNC_RWLOCK_HANDOFF_NS 1000000000000
#include "harness.h"

static fastsync_rwlock_t rw;
static struct test_rwlocker l[5];

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    test_rwlockers_dump(l, 5);
}

/* Until W has registered (the word's writer count reaches `writers`). */
static bool until_writers(uint32_t writers)
{
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && test_rwlock_writers(&rw) != writers) test_sleep_ns(100000);
    return test_rwlock_writers(&rw) == writers;
}

/* Starts the three readers (at l[first..first+2]) and waits until they sleep behind the
 * writer, rwait set. */
static bool readers_asleep(int first)
{
    test_rwlocker_start(&l[first], &rw, TEST_RW_RDLOCK, 0, true);
    test_rwlocker_start(&l[first + 1], &rw, TEST_RW_TIMEDRDLOCK, 60000000000u, true);
    test_rwlocker_start(&l[first + 2], &rw, TEST_RW_CLOCKRDLOCK, 60000000000u, true);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && (test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) == 0) test_sleep_ns(100000);
    int asleep = 0;
    for (int i = first; i < first + 3; i++) asleep += test_rwlocker_asleep(&l[i], 20000000);
    return asleep == 3 && (test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) != 0;
}

/* How many of the three readers hold their read locks, waiting up to 5 s for all three. */
static int readers_holding(int first)
{
    uint64_t end = test_limit_end(5000);
    for (;;) {
        int in = 0;
        for (int i = first; i < first + 3; i++) in += test_rwlocker_state(&l[i]) >= TEST_RWL_HOLDING;
        if (in == 3 || !test_box_open(end)) return in;
        test_sleep_ns(100000);
    }
}

static int readers_still_waiting(int first)
{
    int waiting = 0;
    for (int i = first; i < first + 3; i++) waiting += test_rwlocker_state(&l[i]) == TEST_RWL_LOCKING;
    return waiting;
}

static void join_readers(int first)
{
    for (int i = first; i < first + 3; i++) {
        test_rwlocker_join(&l[i]);
        /* (each locker's lock result was checked as it held) */
    }
}

static void alone(int wkind)
{
    const char *wn = test_rw_kind_name(wkind);
    fastsync_rwlock_init(&rw, 0);
    is_int(fastsync_rwlock_rdlock(&rw), 0, "%s alone: this thread read-locks", wn);
    test_rwlocker_hold(&l[0]);
    test_rwlocker_start(&l[0], &rw, wkind, 50000000u, false);
    ok(until_writers(1), "%s alone: W registers behind the read lock", wn);
    ok(readers_asleep(1), "%s alone: three readers arrive after it and sleep, rwait set", wn);
    unsigned long k0 = test_kernel_wakes();
    test_rwlocker_unhold();
    ok(test_rwlocker_until(&l[0], TEST_RWL_DONE, 5000), "%s alone: W returns", wn);
    is_int(l[0].ret, ETIMEDOUT, "... ETIMEDOUT");
    int in = readers_holding(1);
    is_int(in, 3, "... and the three readers enter, this thread's read lock still held");
    if (in != 3) {
        test_dump_rwlock("  rwlock", &rw);
        diag("  this thread's rdunlock lets them in");
    }
    is_int(test_rwlock_word(&rw), in == 3 ? 4 : 1, "... the word: 4 readers, no writer, no rwait");
    is_int(test_kernel_wakes() - k0, 1, "... with one wake (the give-up's, of every reader)");
    fastsync_rwlock_rdunlock(&rw);
    test_rwlocker_join(&l[0]);
    join_readers(1);
    is_int(l[1].ret + l[2].ret + l[3].ret, 0, "... their lock calls said 0");
    is_int(fastsync_rwlock_destroy(&rw), 0, "%s alone: destroy 0 at the end", wn);
}

static void another_writer(void)
{
    fastsync_rwlock_init(&rw, 0);
    fastsync_rwlock_rdlock(&rw);
    test_rwlocker_hold(&l[0]);
    test_rwlocker_start(&l[0], &rw, TEST_RW_TIMEDWRLOCK, 50000000u, false);
    test_rwlocker_start(&l[4], &rw, TEST_RW_WRLOCK, 0, true);
    ok(until_writers(2), "another writer: W (timedwrlock) and W2 (wrlock) register behind the read lock");
    ok(readers_asleep(1), "another writer: three readers sleep behind them");
    test_rwlocker_unhold();
    ok(test_rwlocker_until(&l[0], TEST_RWL_DONE, 5000) && l[0].ret == ETIMEDOUT, "... W times out");
    test_sleep_ns(20000000);
    is_int(readers_still_waiting(1), 3, "... the readers still wait 20 ms later (W2 is still registered)");
    is_int(test_rwlock_writers(&rw), 1, "... the word: one writer registered");
    ok((test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) != 0, "... rwait still set");
    fastsync_rwlock_rdunlock(&rw);
    ok(test_rwlocker_until(&l[4], TEST_RWL_HOLDING, 5000), "the rdunlock lets W2 in");
    test_sleep_ns(10000000);
    is_int(readers_still_waiting(1), 3, "... the readers still wait");
    test_rwlocker_release(&l[4]);
    is_int(readers_holding(1), 3, "W2's wrunlock lets the three readers in");
    test_rwlocker_join(&l[0]);
    is_int(test_rwlocker_join(&l[4]), 0, "... W2 said 0");
    join_readers(1);
    is_int(l[1].ret + l[2].ret + l[3].ret, 0, "... the readers said 0");
    is_int(fastsync_rwlock_destroy(&rw), 0, "another writer: destroy 0 at the end");
}

static void write_held(void)
{
    fastsync_rwlock_init(&rw, 0);
    fastsync_rwlock_wrlock(&rw);
    test_rwlocker_hold(&l[0]);
    test_rwlocker_start(&l[0], &rw, TEST_RW_TIMEDWRLOCK, 50000000u, false);
    ok(until_writers(1), "write-held: W registers behind this thread's write lock");
    ok(readers_asleep(1), "write-held: three readers sleep behind it");
    test_rwlocker_unhold();
    ok(test_rwlocker_until(&l[0], TEST_RWL_DONE, 5000) && l[0].ret == ETIMEDOUT, "... W times out");
    test_sleep_ns(20000000);
    is_int(readers_still_waiting(1), 3, "... the readers still wait 20 ms later (the lock is write-held)");
    is_int(test_rwlock_word(&rw), FASTSYNC__RW_WLOCKED | FASTSYNC__RW_RWAIT,
           "... the word: write-held, rwait, no writer");
    fastsync_rwlock_wrunlock(&rw);
    is_int(readers_holding(1), 3, "the wrunlock lets them in");
    test_rwlocker_join(&l[0]);
    join_readers(1);
    is_int(l[1].ret + l[2].ret + l[3].ret, 0, "... the readers said 0");
    is_int(fastsync_rwlock_destroy(&rw), 0, "write-held: destroy 0 at the end");
}

int main(void)
{
    test_init();
    test_after_futex_wait = test_rwlocker_hold_window;
    test_watchdog_start(dump, NULL);
    alone(TEST_RW_TIMEDWRLOCK);
    alone(TEST_RW_CLOCKWRLOCK);
    another_writer();
    write_held();
    test_watchdog_stop();
    return done_testing();
}
