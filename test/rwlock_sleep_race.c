/* SPDX-License-Identifier: MIT */
/* rwlock_sleep_race: the no-lost-wakeup argument of fastsync.h's reader-writer lock section,
 * its two races forced. A waiter decides to sleep on a value of its half of the word, then
 * the lock is handed on before its futex call: the hand-off's wake finds nobody asleep, so
 * the futex call itself must refuse to sleep, because the hand-off changed that half.
 *   writer: W registers behind this thread's read lock (or write lock) and is held (the
 *           test's wait override, below the counting layer) just before its futex call;
 *           this thread's rdunlock (wrunlock) hands the lock to the registered writer
 *           (wseq + 1 and a wake of nobody); then W's futex call goes ahead, with the value
 *           it read before: it must not sleep, and W takes the lock.
 *   reader: R sets rwait behind a writer W2 registered behind this thread's read lock (W2,
 *           a timedwrlock, kept after its futex waits until R is in place: the harness's
 *           after-wait hook), and R is held just before its futex call; W2 then gives
 *           up, letting the readers in (rwait cleared, a wake of nobody): R's half changed by
 *           rwait and W2's registration (the writer count is in that half; the readers
 *           count and wlocked are as they were), so R must see that and enter, this
 *           thread's read lock still held. Then the same behind this
 *           thread's write lock, let in by its wrunlock.
 * Fails with a hand-off to a writer that leaves the writers' half as it was (wseq not
 * bumped: W sleeps on a free lock), or one that lets readers in without clearing rwait (R
 * sleeps on a lock it may enter); each time for ever, here up to a 3 s limit, after which
 * the test wakes the sleeper itself. */
/* The bound: the words checked above are those of writers first: a reader held asleep here for
 * longer than the reader-writer lock's hand-off bound would claim (rstarve in the word). So the
 * bound is one no run reaches (rwlock_starving tests the claims). */
#define FASTSYNC_RWLOCK_HANDOFF_NS 1000000000000
#include "harness.h"

static fastsync_rwlock_t rw;
static struct test_rwlocker l[2];
static _Atomic(bool) arrived; /* the held locker reached its futex call (seq_cst: a flag) */
static _Atomic(bool) w2_held;  /* W2 stays after its futex waits (seq_cst: a flag) */

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    test_rwlockers_dump(l, 2);
}

/* The wait override: the held locker (test_rwlocker_hold) stops here, just before its
 * futex call, until unheld; every wait then goes to the backend as it came. */
static int wait_held(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    /* seq_cst (default): a hook; nothing is published through it. */
    if (test_rwlocker_me != NULL && atomic_load(&test_rwlocker_held) == test_rwlocker_me) atomic_store(&arrived, true);
    test_rwlocker_hold_window();
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void wake_plain(void *word, int n, int shared) { fastsync__wake_sys(word, n, shared); }

/* After each futex wait: W2 (l[1]) stays, still registered, until this thread lets it go, so
 * that its registration is seen and R gets behind it however late the threads run. */
static void after_wait(void)
{
    while (test_rwlocker_me == &l[1] && atomic_load(&w2_held)) test_sleep_ns(100000);
}

static bool until_arrived(void)
{
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && !atomic_load(&arrived)) test_sleep_ns(100000);
    return atomic_load(&arrived);
}

static void writer_race(bool write_held)
{
    const char *h = write_held ? "write-held" : "read-held";
    fastsync_rwlock_init(&rw, 0);
    write_held ? fastsync_rwlock_wrlock(&rw) : fastsync_rwlock_rdlock(&rw);
    atomic_store(&arrived, false);
    test_rwlocker_hold(&l[0]);
    test_rwlocker_start(&l[0], &rw, TEST_RW_WRLOCK, 0, true);
    ok(until_arrived() && test_rwlock_writers(&rw) == 1, "writer, %s: W registered, held at its futex call", h);
    uint64_t before = test_rwlock_word(&rw);
    is_int(write_held ? fastsync_rwlock_wrunlock(&rw) : fastsync_rwlock_rdunlock(&rw), 0, "... the unlock: 0");
    ok((test_rwlock_word(&rw) >> 32) != (before >> 32), "... changed the writers' half of the word (wseq)");
    test_rwlocker_unhold();
    bool in = test_rwlocker_until(&l[0], TEST_RWL_HOLDING, 3000);
    ok(in, "... W, let go with its old value, does not sleep: it takes the lock");
    if (!in) {
        test_dump_rwlock("  rwlock", &rw);
        diag("  W sleeps on a free lock: a wake of the writers' half lets it in");
        fastsync__rw_wake(&rw, FASTSYNC__RW_WAKE_WRITER, 0);
    }
    is_int(test_rwlocker_join(&l[0]), 0, "... its wrlock said 0");
    is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy 0");
}

static void reader_race_giveup(void)
{
    fastsync_rwlock_init(&rw, 0);
    fastsync_rwlock_rdlock(&rw);
    atomic_store(&w2_held, true);
    test_rwlocker_start(&l[1], &rw, TEST_RW_TIMEDWRLOCK, 50000000u, false);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && test_rwlock_writers(&rw) != 1) test_sleep_ns(100000);
    ok(test_rwlock_writers(&rw) == 1, "reader, give-up: W2 (timedwrlock, 50 ms) registers behind the read lock");
    atomic_store(&arrived, false);
    test_rwlocker_hold(&l[0]);
    test_rwlocker_start(&l[0], &rw, TEST_RW_RDLOCK, 0, true);
    ok(until_arrived() && (test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) != 0,
       "... R set rwait behind W2, held at its futex call");
    uint32_t low = (uint32_t)test_rwlock_word(&rw);
    atomic_store(&w2_held, false);
    ok(test_rwlocker_until(&l[1], TEST_RWL_DONE, 5000) && l[1].ret == ETIMEDOUT, "... W2 times out");
    is_int((uint32_t)test_rwlock_word(&rw), (low & ~(uint32_t)FASTSYNC__RW_RWAIT) - (uint32_t)FASTSYNC__RW_WRITER,
           "... its give-up changed the readers' half by rwait and its registration alone");
    test_rwlocker_unhold();
    bool in = test_rwlocker_until(&l[0], TEST_RWL_HOLDING, 3000);
    ok(in, "... R, let go with its old value, does not sleep: it enters beside this thread's read lock");
    if (!in) {
        test_dump_rwlock("  rwlock", &rw);
        diag("  R sleeps on a lock it may enter: a wake of the readers' half lets it in");
        test_rwlock_force_word(&rw, test_rwlock_word(&rw) & ~FASTSYNC__RW_RWAIT);
        fastsync__rw_wake(&rw, FASTSYNC__RW_WAKE_READERS, 0);
    }
    test_rwlocker_join(&l[1]);
    is_int(test_rwlocker_join(&l[0]), 0, "... its rdlock said 0");
    fastsync_rwlock_rdunlock(&rw);
    is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy 0");
}

static void reader_race_wrunlock(void)
{
    fastsync_rwlock_init(&rw, 0);
    fastsync_rwlock_wrlock(&rw);
    atomic_store(&arrived, false);
    test_rwlocker_hold(&l[0]);
    test_rwlocker_start(&l[0], &rw, TEST_RW_TIMEDRDLOCK, 60000000000u, true);
    ok(until_arrived() && (test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) != 0,
       "reader, wrunlock: R set rwait behind this thread's write lock, held at its futex call");
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "... wrunlock: 0");
    test_rwlocker_unhold();
    bool in = test_rwlocker_until(&l[0], TEST_RWL_HOLDING, 3000);
    ok(in, "... R, let go with its old value, does not sleep: it enters");
    if (!in) fastsync__rw_wake(&rw, FASTSYNC__RW_WAKE_READERS, 0);
    is_int(test_rwlocker_join(&l[0]), 0, "... its timedrdlock said 0");
    is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy 0");
}

int main(void)
{
    test_init();
    test_wait_override = wait_held;
    test_wake_override = wake_plain;
    test_after_futex_wait = after_wait;
    test_watchdog_start(dump, NULL);
    writer_race(false);
    writer_race(true);
    reader_race_giveup();
    reader_race_wrunlock();
    test_watchdog_stop();
    return done_testing();
}
