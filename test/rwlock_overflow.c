/* SPDX-License-Identifier: MIT */
/* rwlock_overflow: the lock's counts at their limits (white-box: the word set with
 * test_rwlock_force_word, since 2^20 readers or 255 writers are not threads a test can
 * start).
 *   readers: at FASTSYNC_RWLOCK_READERS_MAX - 1 read locks, rdlock, tryrdlock, timedrdlock
 *            and clockrdlock each take the last one (0), then say EAGAIN without a futex
 *            call, the word unchanged; after one rdunlock, one more read lock is 0 again.
 *            A reader asleep behind a registered writer, let in by that writer's give-up
 *            (its deadline) onto MAX read locks, returns EAGAIN too, not 0 and not a hang.
 *   writers: with the count of registered writers at its maximum (255), a further writer
 *            cannot register: it waits in 1 ms slices. The word stays exact while it waits
 *            (the count not carried into wseq); a wrunlock's hand-off lets it in (and the
 *            count it never joined is left as it was); when the lock becomes free with no
 *            hand-off at all (nothing then wakes anyone), its slices still let it in; a
 *            timedwrlock in that state says ETIMEDOUT, not early, the word unchanged.
 *   wseq:    a hand-off at the largest wseq (2^31 - 1) wraps it to 0, the other fields untouched, and the
 *            writer it wakes takes the lock.
 * Fails with: no EAGAIN at MAX (the reader count spills into rwait), a writer that registers
 * past the maximum (the count spills into wseq), a writer past the maximum that sleeps
 * untimed (it sleeps for ever once the lock is freed without a wake: the limit), a writer
 * that takes the lock subtracting a registration it never made, a wseq carry that spills
 * into the fields below it. */
/* The bound: the words checked above have no claim in them: a reader held asleep here for longer than
 * the reader-writer lock's hand-off bound would claim (rstarve in the word). So the bound is
 * one no run reaches (rwlock_starving tests the claims). */
#define FASTSYNC_RWLOCK_HANDOFF_NS 1000000000000
#include "harness.h"

#define RMAX FASTSYNC_RWLOCK_READERS_MAX
#define WMAX FASTSYNC__RW_WRITERS_MAX

static unsigned long syscalls(void) { return test_kernel_waits() + test_kernel_wakes(); }

static fastsync_rwlock_t rw;
static struct test_rwlocker lockers[2];

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    test_rwlockers_dump(lockers, 2);
}

static int rd(int how)
{
    struct timespec far = fastsync_deadline_in(60000000000u);
    struct timespec far_rt = test_deadline_on(CLOCK_REALTIME, 60000000000u);
    switch (how) {
    case 0: return fastsync_rwlock_rdlock(&rw);
    case 1: return fastsync_rwlock_tryrdlock(&rw);
    case 2: return fastsync_rwlock_timedrdlock(&rw, &far);
    default: return fastsync_rwlock_clockrdlock(&rw, CLOCK_REALTIME, &far_rt);
    }
}

static void readers_max(void)
{
    static const char *const name[] = { "rdlock", "tryrdlock", "timedrdlock", "clockrdlock" };
    for (int sh = 0; sh < 2; sh++)
        for (int how = 0; how < 4; how++) {
            uint64_t v = test_rwlock_make(RMAX - 1, false, false, sh, 0, 3);
            test_rwlock_force_word(&rw, v);
            unsigned long c0 = syscalls();
            is_int(rd(how), 0, "%s at MAX - 1 read locks (shared bit %d): 0", name[how], sh);
            is_int(test_rwlock_word(&rw), v + 1, "... the word says MAX, nothing else changed");
            is_int(rd(how), EAGAIN, "%s at MAX: EAGAIN", name[how]);
            is_int(test_rwlock_word(&rw), v + 1, "... the word unchanged");
            is_int(syscalls() - c0, 0, "... no futex call");
            is_int(fastsync_rwlock_rdunlock(&rw), 0, "rdunlock: 0");
            is_int(rd(how), 0, "%s at MAX - 1 again: 0", name[how]);
        }
    test_rwlock_force_word(&rw, 0);
}

static void reader_let_in_at_max(void)
{
    /* The writer stays after its timed-out wait (the harness's hold) until the reader is
     * seen asleep behind it: its give-up then lets the reader in onto MAX read locks. */
    test_rwlock_force_word(&rw, test_rwlock_make(RMAX, false, false, false, 0, 0));
    test_after_futex_wait = test_rwlocker_hold_window;
    test_rwlocker_hold(&lockers[0]);
    unsigned long w0 = test_kernel_waits();
    test_rwlocker_start(&lockers[0], &rw, TEST_RW_TIMEDWRLOCK, 50000000u, false);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && test_rwlock_writers(&rw) != 1) test_sleep_ns(100000);
    ok(test_rwlock_writers(&rw) == 1, "a timedwrlock (50 ms) behind MAX readers registers");
    test_rwlocker_start(&lockers[1], &rw, TEST_RW_RDLOCK, 0, false);
    while (test_box_open(end) && ((test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) == 0 || test_kernel_waits() - w0 < 2))
        test_sleep_ns(100000);
    ok(test_rwlocker_asleep(&lockers[1], 20000000) && (test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) != 0,
       "a rdlock behind it sleeps (rwait set)");
    test_rwlocker_unhold();
    bool both = test_rwlocker_until(&lockers[0], TEST_RWL_DONE, 5000) &&
                test_rwlocker_until(&lockers[1], TEST_RWL_DONE, 5000);
    ok(both, "the writer's give-up lets the reader look again");
    if (!both) {
        test_dump_rwlock("  rwlock", &rw);
        diag("  the reader sleeps on: rwait cleared and a wake let it look again");
        test_rwlock_force_word(&rw, test_rwlock_word(&rw) & ~FASTSYNC__RW_RWAIT);
        fastsync__rw_wake(&rw, FASTSYNC__RW_WAKE_READERS, 0);
    }
    is_int(test_rwlocker_join(&lockers[0]), ETIMEDOUT, "... the writer: ETIMEDOUT");
    is_int(test_rwlocker_join(&lockers[1]), EAGAIN, "... the reader, let in onto MAX read locks: EAGAIN");
    is_int(test_rwlock_word(&rw), test_rwlock_make(RMAX, false, false, false, 0, 0),
           "... the word: MAX readers, no writer, no rwait");
    test_after_futex_wait = NULL;
    test_rwlock_force_word(&rw, 0);
}

static void writers_max(void)
{
    /* a writer past the maximum, let in by a wrunlock's hand-off */
    fastsync_rwlock_wrlock(&rw);
    uint64_t held = test_rwlock_make(0, false, true, false, WMAX, 9);
    test_rwlock_force_word(&rw, held);
    unsigned long w0 = test_kernel_waits();
    test_rwlocker_start(&lockers[0], &rw, TEST_RW_WRLOCK, 0, true);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && test_kernel_waits() - w0 < 3) test_sleep_ns(1000000);
    ok(test_kernel_waits() - w0 >= 3, "a wrlock with 255 writers registered waits in slices (%lu futex waits)",
       test_kernel_waits() - w0);
    is_int(test_rwlock_word(&rw), held, "... the word unchanged: the count full, not carried into wseq");
    is_int(test_rwlocker_state(&lockers[0]), TEST_RWL_LOCKING, "... the writer still waits");
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "wrunlock (a hand-off: wseq + 1, a wake)");
    ok(test_rwlocker_until(&lockers[0], TEST_RWL_HOLDING, 5000), "... the writer past the maximum takes the lock");
    is_int(test_rwlock_word(&rw), test_rwlock_make(0, false, true, false, WMAX, 10),
           "... the count it never joined left at 255, wseq 10");
    test_rwlocker_join(&lockers[0]);
    is_int(lockers[0].unlock_ret, 0, "... its wrunlock: 0");
    test_rwlock_force_word(&rw, 0); /* the 255 writers that never were */

    /* the lock freed with no hand-off at all: only the slices can let the writer in */
    fastsync_rwlock_rdlock(&rw);
    test_rwlock_force_word(&rw, test_rwlock_make(1, false, false, false, WMAX, 0));
    w0 = test_kernel_waits();
    unsigned long k0 = test_kernel_wakes();
    test_rwlocker_start(&lockers[0], &rw, TEST_RW_WRLOCK, 0, true);
    end = test_limit_end(5000);
    while (test_box_open(end) && test_kernel_waits() - w0 < 3) test_sleep_ns(1000000);
    ok(test_kernel_waits() - w0 >= 3 && test_rwlocker_state(&lockers[0]) == TEST_RWL_LOCKING,
       "a wrlock behind a reader with 255 writers registered waits in slices");
    /* the reader and every registered writer gone at once: no RMW of the lock's, no wake */
    test_rwlock_force_word(&rw, 0);
    bool in = test_rwlocker_until(&lockers[0], TEST_RWL_HOLDING, 3000);
    ok(in, "... the word then made free without a wake: a slice lets the writer in");
    is_int(test_kernel_wakes() - k0, 0, "... (no wake was made)");
    if (!in) {
        diag("  the writer sleeps on: a wake lets it in");
        fastsync__rw_wake(&rw, FASTSYNC__RW_WAKE_WRITER, 0);
    }
    test_rwlocker_join(&lockers[0]);
    is_int(test_rwlock_word(&rw), 0, "... and its wrunlock leaves the word 0");

    /* a timed writer past the maximum */
    fastsync_rwlock_rdlock(&rw);
    uint64_t v = test_rwlock_make(1, false, false, false, WMAX, 5);
    test_rwlock_force_word(&rw, v);
    struct timespec d = fastsync_deadline_in(50000000u);
    int r = fastsync_rwlock_timedwrlock(&rw, &d);
    int64_t late = test_clock_ns(CLOCK_MONOTONIC) - test_ts_ns(d);
    is_int(r, ETIMEDOUT, "timedwrlock 50 ms behind a reader, 255 writers registered: ETIMEDOUT");
    ok(late >= 0, "... not before the deadline (%.3f ms after it)", (double)late / 1e6);
    is_int(test_rwlock_word(&rw), v, "... the word unchanged (it never registered, so it leaves nothing)");
    struct timespec past = test_ts(0, 0);
    is_int(fastsync_rwlock_timedwrlock(&rw, &past), ETIMEDOUT, "... a past deadline: ETIMEDOUT");
    test_rwlock_force_word(&rw, 0);
    is_int(fastsync_rwlock_destroy(&rw), 0, "destroy: 0");
}

static void wseq_wrap(void)
{
    fastsync_rwlock_init(&rw, TEST_SHARED);
    uint64_t sh = TEST_SHARED ? FASTSYNC__RW_SHARED : 0;
    fastsync_rwlock_rdlock(&rw);
    unsigned long w0 = test_kernel_waits();
    test_rwlocker_start(&lockers[0], &rw, TEST_RW_WRLOCK, 0, true);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && (test_rwlock_writers(&rw) != 1 || test_kernel_waits() == w0)) test_sleep_ns(100000);
    ok(test_rwlocker_asleep(&lockers[0], 20000000) && test_rwlock_writers(&rw) == 1,
       "a wrlock behind a reader sleeps, registered");
    /* while it sleeps in the kernel (which compared the word as it went to sleep) */
    test_rwlock_force_word(&rw, test_rwlock_word(&rw) | (uint64_t)TEST_RW_WSEQ_MAX * FASTSYNC__RW_WSEQ);
    is_int(fastsync_rwlock_rdunlock(&rw), 0, "rdunlock with wseq at its largest: a hand-off");
    ok(test_rwlocker_until(&lockers[0], TEST_RWL_HOLDING, 5000), "... the writer takes the lock");
    is_int(test_rwlock_word(&rw), sh | FASTSYNC__RW_WLOCKED,
           "... wseq wrapped to 0, shared bit kept, no writer, no reader, no rwait");
    test_rwlocker_join(&lockers[0]);
    is_int(fastsync_rwlock_destroy(&rw), 0, "destroy: 0");
}

int main(void)
{
    test_init();
    fastsync_rwlock_init(&rw, 0);
    test_watchdog_start(dump, NULL);
    readers_max();
    reader_let_in_at_max();
    writers_max();
    wseq_wrap();
    test_watchdog_stop();
    return done_testing();
}
