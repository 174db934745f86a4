/* SPDX-License-Identifier: MIT */
/* rwlock_api: every reader-writer lock function's results and exact error codes; init's
 * flags (FASTSYNC_SHARED: 0, or EINVAL where the backend has none; anything else EINVAL) and
 * FASTSYNC_RWLOCK_INIT; sizeof 8 (8-aligned); EPERM for rdunlock when no read lock is held
 * and for wrunlock and downgrade when not write-locked, the word unchanged; destroy EBUSY
 * while held or waited on (a registered writer, a reader's rwait), 0 otherwise (whatever
 * wseq says); the deadline rules (EINVAL for a NULL deadline or another clock, always; a bad
 * tv_nsec only when the call would block; ETIMEDOUT for a past deadline without a futex
 * call, never when the lock could be taken at once; timeouts never early on either clock,
 * the word left as the manual says); the promised syscall economy (locks and unlocks with
 * nobody asleep: no futex call; an unlock wakes only when the word says a thread may sleep,
 * one wake for a writer, one for every reader); a sleeping writer woken by the last rdunlock,
 * sleeping readers all woken by one wrunlock or downgrade, a writer by a wrunlock, private
 * and shared. No owner is recorded, so this thread plays holder and contender at once.
 * Fails with: an unlock that wakes with nobody registered (or does not wake a registered
 * writer: the watchdog); a read lock that goes to the kernel uncontended; EPERM not given,
 * or given with the word changed; destroy blind to a registered writer or rwait; a timed lock
 * that checks the deadline before trying the lock, or sleeps on a past one; a writer's
 * timeout that leaves its registration behind. */
/* The bound: the syscall economy counted here is that of writers first, before any waiter
 * reaches the reader-writer lock's hand-off bound. Readers sleep here behind a write lock far
 * longer than that; with the default bound one would claim the readers' turn, and each would
 * sleep once more (the slice that looks at the bound). So the bound is one no run reaches;
 * rwlock_starving counts the claims' own calls. */
#define FASTSYNC_RWLOCK_HANDOFF_NS 1000000000000
#include "harness.h"

static unsigned long syscalls(void) { return test_kernel_waits() + test_kernel_wakes(); }

static fastsync_rwlock_t *dump_rw;
static struct test_rwlocker *dump_lockers;
static int dump_n;

static void dump(void *unused)
{
    (void)unused;
    if (dump_rw) test_dump_rwlock("rwlock", dump_rw);
    if (dump_lockers) test_rwlockers_dump(dump_lockers, dump_n);
}

static fastsync_rwlock_t static_rw = FASTSYNC_RWLOCK_INIT;

static void basics(void)
{
    is_int((long long)sizeof(fastsync_rwlock_t), 8, "sizeof(fastsync_rwlock_t) == 8");
    is_int((long long)_Alignof(fastsync_rwlock_t), 8, "_Alignof(fastsync_rwlock_t) == 8");
    fastsync_rwlock_t rw = FASTSYNC_RWLOCK_INIT;
    is_int(test_rwlock_word(&rw), 0, "FASTSYNC_RWLOCK_INIT: the word is 0");
    is_int(test_rwlock_word(&static_rw), 0, "... also as a static object");
    is_int(fastsync_rwlock_tryrdlock(&static_rw), 0, "... whose tryrdlock says 0");
    is_int(fastsync_rwlock_rdunlock(&static_rw), 0, "... and rdunlock 0");
    is_int(fastsync_rwlock_tryrdlock(&rw), 0, "FASTSYNC_RWLOCK_INIT is unlocked: tryrdlock 0");
    is_int(fastsync_rwlock_tryrdlock(&rw), 0, "a second read lock: 0");
    is_int(test_rwlock_readers(&rw), 2, "... the word says 2 readers");
    is_int(fastsync_rwlock_trywrlock(&rw), EBUSY, "trywrlock while read-held: EBUSY");
    is_int(fastsync_rwlock_destroy(&rw), EBUSY, "destroy while read-held: EBUSY");
    uint64_t v = test_rwlock_word(&rw);
    is_int(fastsync_rwlock_wrunlock(&rw), EPERM, "wrunlock while read-held: EPERM");
    is_int(fastsync_rwlock_downgrade(&rw), EPERM, "downgrade while read-held: EPERM");
    is_int(test_rwlock_word(&rw), v, "... neither changed the word");
    is_int(fastsync_rwlock_rdunlock(&rw), 0, "rdunlock: 0");
    is_int(fastsync_rwlock_rdunlock(&rw), 0, "rdunlock: 0");
    is_int(fastsync_rwlock_rdunlock(&rw), EPERM, "rdunlock with no read lock held: EPERM");
    is_int(fastsync_rwlock_wrunlock(&rw), EPERM, "wrunlock, unlocked: EPERM");
    is_int(fastsync_rwlock_downgrade(&rw), EPERM, "downgrade, unlocked: EPERM");
    is_int(test_rwlock_word(&rw), 0, "... the word still 0");
    is_int(fastsync_rwlock_trywrlock(&rw), 0, "trywrlock: 0");
    is_int(fastsync_rwlock_trywrlock(&rw), EBUSY, "trywrlock while write-held: EBUSY");
    is_int(fastsync_rwlock_tryrdlock(&rw), EBUSY, "tryrdlock while write-held: EBUSY");
    is_int(fastsync_rwlock_destroy(&rw), EBUSY, "destroy while write-held: EBUSY");
    is_int(fastsync_rwlock_rdunlock(&rw), EPERM, "rdunlock while write-held: EPERM");
    is_int(test_rwlock_word(&rw), FASTSYNC__RW_WLOCKED, "... the word unchanged");
    is_int(fastsync_rwlock_downgrade(&rw), 0, "downgrade: 0");
    is_int(test_rwlock_word(&rw), 1, "... the word says one reader");
    is_int(fastsync_rwlock_tryrdlock(&rw), 0, "... another reader comes in: 0");
    is_int(fastsync_rwlock_rdunlock(&rw) + fastsync_rwlock_rdunlock(&rw), 0, "both rdunlock: 0");
    is_int(fastsync_rwlock_wrlock(&rw), 0, "wrlock: 0");
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "wrunlock: 0");
    is_int(fastsync_rwlock_wrunlock(&rw), EPERM, "wrunlock again: EPERM");
    is_int(fastsync_rwlock_destroy(&rw), 0, "destroy, unlocked: 0");

    /* destroy sees a waiter in the word: a registered writer on a free lock (the moment
     * after a hand-off, before the woken writer takes it), a reader's rwait; wseq is no one */
    test_rwlock_force_word(&rw, test_rwlock_make(0, false, false, false, 1, 7));
    is_int(fastsync_rwlock_destroy(&rw), EBUSY, "destroy with a writer registered on a free lock: EBUSY");
    test_rwlock_force_word(&rw, test_rwlock_make(0, true, false, false, 1, 7));
    is_int(fastsync_rwlock_destroy(&rw), EBUSY, "... and with a reader's rwait too: EBUSY");
    test_rwlock_force_word(&rw, test_rwlock_make(0, false, false, true, 0, TEST_RW_WSEQ_MAX));
    is_int(fastsync_rwlock_destroy(&rw), 0, "destroy with only the shared bit and wseq at its maximum: 0");

    is_int(fastsync_rwlock_init(&rw, 0), 0, "init(0): 0");
    is_int(test_rwlock_word(&rw), 0, "... the word 0");
    is_int(fastsync_rwlock_init(&rw, FASTSYNC_SHARED), FASTSYNC_HAS_SHARED ? 0 : EINVAL,
           "init(FASTSYNC_SHARED): %s on the %s backend", FASTSYNC_HAS_SHARED ? "0" : "EINVAL", FASTSYNC_BACKEND);
    is_int(fastsync_rwlock_init(&rw, 2), EINVAL, "init with an unknown flag: EINVAL");
    is_int(fastsync_rwlock_init(&rw, -1), EINVAL, "init with every flag: EINVAL");

    /* the uncontended paths, private and shared: no futex call, the shared bit kept */
    int flags[2] = { 0, TEST_SHARED };
    for (int f = 0; f < 2; f++) {
        fastsync_rwlock_init(&rw, flags[f]);
        uint64_t sh = flags[f] ? FASTSYNC__RW_SHARED : 0;
        unsigned long c0 = syscalls(), bad = 0;
        struct timespec far = fastsync_deadline_in(60000000000u);
        struct timespec far_rt = test_deadline_on(CLOCK_REALTIME, 60000000000u);
        for (int i = 0; i < 1000; i++) {
            bad += fastsync_rwlock_rdlock(&rw) != 0;
            bad += fastsync_rwlock_tryrdlock(&rw) != 0;
            bad += fastsync_rwlock_timedrdlock(&rw, &far) != 0;
            bad += fastsync_rwlock_clockrdlock(&rw, CLOCK_REALTIME, &far_rt) != 0;
            bad += test_rwlock_word(&rw) != (sh | 4u);
            for (int k = 0; k < 4; k++) bad += fastsync_rwlock_rdunlock(&rw) != 0;
            bad += fastsync_rwlock_wrlock(&rw) != 0;
            bad += test_rwlock_word(&rw) != (sh | FASTSYNC__RW_WLOCKED);
            bad += fastsync_rwlock_wrunlock(&rw) != 0;
            bad += fastsync_rwlock_trywrlock(&rw) != 0;
            bad += fastsync_rwlock_wrunlock(&rw) != 0;
            bad += fastsync_rwlock_timedwrlock(&rw, &far) != 0;
            bad += fastsync_rwlock_downgrade(&rw) != 0;
            bad += test_rwlock_word(&rw) != (sh | 1u);
            bad += fastsync_rwlock_rdunlock(&rw) != 0;
            bad += fastsync_rwlock_clockwrlock(&rw, CLOCK_REALTIME, &far_rt) != 0;
            bad += fastsync_rwlock_wrunlock(&rw) != 0;
            bad += test_rwlock_word(&rw) != sh;
        }
        is_int(bad, 0, "flags %d: 1000 x every lock, unlock and downgrade uncontended: each 0, the word exact",
               flags[f]);
        is_int(syscalls() - c0, 0, "... and no futex call");
        is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy: 0");
    }
}

static void deadlines(void)
{
    fastsync_rwlock_t rw;
    fastsync_rwlock_init(&rw, 0);
    dump_rw = &rw;
    struct timespec soon = fastsync_deadline_in(1000000000u);
    /* NULL and another clock: EINVAL always, even on a free lock, and nothing taken */
    is_int(fastsync_rwlock_timedrdlock(&rw, NULL), EINVAL, "timedrdlock(NULL), free: EINVAL");
    is_int(fastsync_rwlock_timedwrlock(&rw, NULL), EINVAL, "timedwrlock(NULL), free: EINVAL");
    is_int(fastsync_rwlock_clockrdlock(&rw, CLOCK_REALTIME, NULL), EINVAL, "clockrdlock(REALTIME, NULL): EINVAL");
    is_int(fastsync_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, NULL), EINVAL, "clockwrlock(MONOTONIC, NULL): EINVAL");
    is_int(fastsync_rwlock_clockrdlock(&rw, CLOCK_BOOTTIME, &soon), EINVAL, "clockrdlock on another clock: EINVAL");
    is_int(fastsync_rwlock_clockwrlock(&rw, CLOCK_BOOTTIME, &soon), EINVAL, "clockwrlock on another clock: EINVAL");
    is_int(test_rwlock_word(&rw), 0, "... none of them took the lock");

    /* a malformed tv_nsec: no check when the lock can be taken at once */
    struct timespec bad_ns = test_ts(soon.tv_sec, 1000000000L), neg_ns = test_ts(soon.tv_sec, -1);
    is_int(fastsync_rwlock_timedrdlock(&rw, &bad_ns), 0, "tv_nsec 1e9, free: timedrdlock 0 (no block, no check)");
    is_int(fastsync_rwlock_clockrdlock(&rw, CLOCK_REALTIME, &neg_ns), 0,
           "tv_nsec -1, read-held: clockrdlock 0 (readers share: no block)");
    is_int(fastsync_rwlock_timedwrlock(&rw, &bad_ns), EINVAL, "tv_nsec 1e9, read-held: timedwrlock EINVAL");
    is_int(fastsync_rwlock_clockwrlock(&rw, CLOCK_REALTIME, &neg_ns), EINVAL,
           "tv_nsec -1, read-held: clockwrlock EINVAL");
    fastsync_rwlock_rdunlock(&rw);
    fastsync_rwlock_rdunlock(&rw);
    is_int(fastsync_rwlock_timedwrlock(&rw, &neg_ns), 0, "tv_nsec -1, free: timedwrlock 0");
    is_int(fastsync_rwlock_timedrdlock(&rw, &bad_ns), EINVAL, "tv_nsec 1e9, write-held: timedrdlock EINVAL");
    is_int(fastsync_rwlock_timedwrlock(&rw, &neg_ns), EINVAL, "tv_nsec -1, write-held: timedwrlock EINVAL");
    is_int(test_rwlock_word(&rw), FASTSYNC__RW_WLOCKED, "... the word still says write-held, nobody waiting");

    /* a past deadline: ETIMEDOUT without a futex call when the lock cannot be taken */
    unsigned long c0 = syscalls();
    struct timespec past = test_ts(0, 0), neg = test_ts(-1, 0);
    is_int(fastsync_rwlock_timedrdlock(&rw, &past), ETIMEDOUT, "a past deadline, write-held: timedrdlock ETIMEDOUT");
    is_int(fastsync_rwlock_clockrdlock(&rw, CLOCK_REALTIME, &neg), ETIMEDOUT, "tv_sec -1: clockrdlock ETIMEDOUT");
    is_int(fastsync_rwlock_timedwrlock(&rw, &past), ETIMEDOUT, "a past deadline: timedwrlock ETIMEDOUT");
    is_int(fastsync_rwlock_clockwrlock(&rw, CLOCK_REALTIME, &neg), ETIMEDOUT, "tv_sec -1: clockwrlock ETIMEDOUT");
    is_int(syscalls() - c0, 0, "... without a futex call");
    is_int(test_rwlock_word(&rw), FASTSYNC__RW_WLOCKED, "... nobody registered (no rwait, no writer)");
    fastsync_rwlock_wrunlock(&rw);
    is_int(fastsync_rwlock_timedrdlock(&rw, &past), 0, "a past deadline, free: timedrdlock 0 (taken)");
    is_int(fastsync_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &past), 0, "... read-held: clockrdlock 0 (taken)");
    is_int(fastsync_rwlock_timedwrlock(&rw, &past), ETIMEDOUT, "... read-held: timedwrlock ETIMEDOUT");
    fastsync_rwlock_rdunlock(&rw);
    fastsync_rwlock_rdunlock(&rw);
    is_int(fastsync_rwlock_clockwrlock(&rw, CLOCK_REALTIME, &past), 0, "a past deadline, free: clockwrlock 0 (taken)");
    fastsync_rwlock_wrunlock(&rw);
    /* a writer registered behind a reader: a reader could not enter at once */
    fastsync_rwlock_rdlock(&rw);
    test_rwlock_force_word(&rw, test_rwlock_make(1, false, false, false, 1, 0));
    c0 = syscalls();
    is_int(fastsync_rwlock_timedrdlock(&rw, &past), ETIMEDOUT,
           "a past deadline, read-held with a writer registered: timedrdlock ETIMEDOUT");
    is_int(syscalls() - c0, 0, "... without a futex call");
    test_rwlock_force_word(&rw, test_rwlock_make(1, false, false, false, 0, 0));
    fastsync_rwlock_rdunlock(&rw);
    is_int(syscalls() - c0, 0, "... and the rdunlock, once the writer is gone, none either");

    /* timed locks that must sleep: they return at their deadline, never before, on either
     * clock, having slept in the kernel, and leave the word as the manual says */
    clockid_t clocks[2] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
    for (int i = 0; i < 2; i++) {
        const char *cn = clocks[i] == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_REALTIME";
        /* a reader behind this thread's write lock: rwait stays set (one needless wake) */
        fastsync_rwlock_wrlock(&rw);
        unsigned long w0 = test_kernel_waits();
        struct timespec d = test_deadline_on(clocks[i], 50000000u);
        int r = fastsync_rwlock_clockrdlock(&rw, clocks[i], &d);
        int64_t late = test_clock_ns(clocks[i]) - test_ts_ns(d);
        is_int(r, ETIMEDOUT, "clockrdlock 50 ms on %s, write-held: ETIMEDOUT", cn);
        ok(late >= 0, "... not before the deadline (%.3f ms after it)", (double)late / 1e6);
        ok(test_kernel_waits() > w0, "... having slept in the kernel (%lu futex waits)", test_kernel_waits() - w0);
        is_int(test_rwlock_word(&rw), FASTSYNC__RW_WLOCKED | FASTSYNC__RW_RWAIT, "... leaving rwait set behind");
        unsigned long k0 = test_kernel_wakes();
        is_int(fastsync_rwlock_wrunlock(&rw), 0, "wrunlock: 0");
        is_int(test_kernel_wakes() - k0, 1, "... one (needless) wake, for the rwait the reader left");
        is_int(test_rwlock_word(&rw), 0, "... the word 0 again");

        /* a writer behind this thread's read lock: it deregisters as it gives up */
        fastsync_rwlock_rdlock(&rw);
        w0 = test_kernel_waits();
        d = test_deadline_on(clocks[i], 50000000u);
        r = fastsync_rwlock_clockwrlock(&rw, clocks[i], &d);
        late = test_clock_ns(clocks[i]) - test_ts_ns(d);
        is_int(r, ETIMEDOUT, "clockwrlock 50 ms on %s, read-held: ETIMEDOUT", cn);
        ok(late >= 0, "... not before the deadline (%.3f ms after it)", (double)late / 1e6);
        ok(test_kernel_waits() > w0, "... having slept in the kernel (%lu futex waits)", test_kernel_waits() - w0);
        is_int(test_rwlock_readers(&rw), 1, "... the read lock still held");
        is_int(test_rwlock_writers(&rw), 0, "... no writer left registered");
        k0 = test_kernel_wakes();
        is_int(fastsync_rwlock_rdunlock(&rw), 0, "rdunlock: 0");
        is_int(test_kernel_wakes() - k0, 0, "... no wake (nobody registered)");

        /* a writer behind this thread's write lock */
        fastsync_rwlock_wrlock(&rw);
        d = test_deadline_on(clocks[i], 50000000u);
        r = fastsync_rwlock_clockwrlock(&rw, clocks[i], &d);
        late = test_clock_ns(clocks[i]) - test_ts_ns(d);
        is_int(r, ETIMEDOUT, "clockwrlock 50 ms on %s, write-held: ETIMEDOUT", cn);
        ok(late >= 0, "... not before the deadline (%.3f ms after it)", (double)late / 1e6);
        is_int(test_rwlock_writers(&rw), 0, "... no writer left registered");
        k0 = test_kernel_wakes();
        is_int(fastsync_rwlock_wrunlock(&rw), 0, "wrunlock: 0");
        is_int(test_kernel_wakes() - k0, 0, "... no wake");
    }
    /* timedrdlock and timedwrlock are CLOCK_MONOTONIC's */
    fastsync_rwlock_wrlock(&rw);
    struct timespec d = fastsync_deadline_in(30000000u);
    is_int(fastsync_rwlock_timedrdlock(&rw, &d), ETIMEDOUT, "timedrdlock 30 ms, write-held: ETIMEDOUT");
    ok(test_clock_ns(CLOCK_MONOTONIC) >= test_ts_ns(d), "... not before its CLOCK_MONOTONIC deadline");
    d = fastsync_deadline_in(30000000u);
    is_int(fastsync_rwlock_timedwrlock(&rw, &d), ETIMEDOUT, "timedwrlock 30 ms, write-held: ETIMEDOUT");
    ok(test_clock_ns(CLOCK_MONOTONIC) >= test_ts_ns(d), "... not before its CLOCK_MONOTONIC deadline");
    fastsync_rwlock_wrunlock(&rw);
    is_int(fastsync_rwlock_destroy(&rw), 0, "destroy: 0");
    dump_rw = NULL;
}

/* Until n lockers read asleep in their lock calls and the word satisfies `want` (or the limit). */
static bool until_asleep(fastsync_rwlock_t *rw, struct test_rwlocker *l, int n, unsigned long w0, bool rwait,
                         uint32_t writers)
{
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) &&
           (test_kernel_waits() - w0 < (unsigned long)n ||
            ((test_rwlock_word(rw) & FASTSYNC__RW_RWAIT) != 0) != rwait || test_rwlock_writers(rw) != writers))
        test_sleep_ns(1000000);
    int asleep = 0;
    for (int i = 0; i < n; i++) asleep += test_rwlocker_asleep(&l[i], 5000000);
    return asleep == n && test_kernel_waits() - w0 == (unsigned long)n;
}

/* Sleepers woken: a writer by the last rdunlock, readers by one wrunlock, readers by one
 * downgrade, a writer by a wrunlock. Exactly one wake each time, none from the unlocks the
 * woken threads make afterwards, and every sleeper takes the lock. */
static void wakes(int flags)
{
    fastsync_rwlock_t rw;
    fastsync_rwlock_init(&rw, flags);
    dump_rw = &rw;
    struct test_rwlocker l[3];
    dump_lockers = l;

    /* a writer asleep behind two read locks (wrlock and a far timedwrlock) */
    for (int timed = 0; timed < 2; timed++) {
        fastsync_rwlock_rdlock(&rw);
        fastsync_rwlock_rdlock(&rw);
        unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
        dump_n = 1;
        test_rwlocker_start(&l[0], &rw, timed ? TEST_RW_TIMEDWRLOCK : TEST_RW_WRLOCK, 60000000000u, false);
        ok(until_asleep(&rw, l, 1, w0, false, 1),
           "flags %d: %s behind two readers: asleep in the kernel (one futex wait), registered", flags,
           test_rw_kind_name(l[0].kind));
        is_int(fastsync_rwlock_rdunlock(&rw), 0, "... one rdunlock: 0");
        is_int(test_kernel_wakes() - k0, 0, "... no wake (a reader still inside)");
        test_sleep_ns(10000000);
        is_int(test_rwlocker_state(&l[0]), TEST_RWL_LOCKING, "... the writer still waits");
        is_int(fastsync_rwlock_rdunlock(&rw), 0, "... the last rdunlock: 0");
        is_int(test_rwlocker_join(&l[0]), 0, "... the writer took the lock");
        is_int(l[0].unlock_ret, 0, "... and its wrunlock said 0");
        is_int(test_kernel_wakes() - k0, 1, "... one wake in all (the last rdunlock's)");
        is_int(test_kernel_waits() - w0, 1, "... the writer slept once");
        is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy: 0");
    }

    /* three readers asleep behind a write lock, woken by one wrunlock, then by one downgrade */
    for (int down = 0; down < 2; down++) {
        fastsync_rwlock_wrlock(&rw);
        unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
        dump_n = 3;
        test_rwlocker_start(&l[0], &rw, TEST_RW_RDLOCK, 0, true);
        test_rwlocker_start(&l[1], &rw, TEST_RW_TIMEDRDLOCK, 60000000000u, true);
        test_rwlocker_start(&l[2], &rw, TEST_RW_CLOCKRDLOCK, 60000000000u, true);
        ok(until_asleep(&rw, l, 3, w0, true, 0),
           "flags %d: rdlock, timedrdlock, clockrdlock behind a write lock: asleep (one futex wait each), rwait set",
           flags);
        const char *how = down ? "downgrade" : "wrunlock";
        is_int(down ? fastsync_rwlock_downgrade(&rw) : fastsync_rwlock_wrunlock(&rw), 0, "... %s: 0", how);
        int in = 0;
        for (int i = 0; i < 3; i++) in += test_rwlocker_until(&l[i], TEST_RWL_HOLDING, 5000);
        is_int(in, 3, "... all three readers are in, together");
        is_int(test_rwlock_readers(&rw), 3 + down, "... the word says %d readers", 3 + down);
        is_int(test_kernel_wakes() - k0, 1, "... with one wake (the %s's)", how);
        for (int i = 0; i < 3; i++) test_rwlocker_join(&l[i]);
        if (down) fastsync_rwlock_rdunlock(&rw);
        is_int(l[0].unlock_ret + l[1].unlock_ret + l[2].unlock_ret, 0, "... their rdunlocks said 0");
        is_int(test_kernel_wakes() - k0, 1, "... and made no wake");
        is_int(test_kernel_waits() - w0, 3, "... no reader slept twice");
        is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy: 0");
    }

    /* a writer asleep behind a write lock */
    fastsync_rwlock_wrlock(&rw);
    unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    dump_n = 1;
    test_rwlocker_start(&l[0], &rw, TEST_RW_CLOCKWRLOCK, 60000000000u, false);
    ok(until_asleep(&rw, l, 1, w0, false, 1), "flags %d: clockwrlock behind a write lock: asleep, registered", flags);
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "... wrunlock: 0");
    is_int(test_rwlocker_join(&l[0]), 0, "... the writer took the lock");
    is_int(test_kernel_wakes() - k0, 1, "... one wake in all (its own wrunlock found nobody registered)");
    is_int(fastsync_rwlock_destroy(&rw), 0, "... destroy: 0");
    dump_rw = NULL;
    dump_lockers = NULL;
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    basics();
    deadlines();
    wakes(0);
    if (TEST_SHARED) wakes(TEST_SHARED);
    test_watchdog_stop();
    return done_testing();
}
