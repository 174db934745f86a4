/* SPDX-License-Identifier: MIT */
/* rwlock_reader_stale_guess: a reader never goes to sleep on a lock that readers may enter.
 * The race: a reader in rdlock's slow path loads the word (readable), and its read-lock CAS
 * fails because a writer took the lock in between; then, before the reader marks the word
 * (rwait) to sleep on it, that writer unlocks again, so the word is back to the very value
 * the reader loaded. A reader that marks and sleeps on that stale guess sleeps on a free
 * lock with rwait set (which the invariant of fastsync.h's section forbids: rwait only while
 * a writer holds or waits), and nothing will wake it until some other thread happens to lock
 * and unlock: an untimed rdlock hangs, a timed one says ETIMEDOUT with the lock free all
 * along.
 * Deterministic: the harness's CAS hook (TEST_CAS_HOOK: a function called before every
 * compare-and-swap of the header) runs the writer's part in the reader's own thread (no
 * owner is recorded: any thread may lock and unlock). The reader goes to sleep behind this
 * thread's write lock; this thread arms the hook and unlocks, waking it; then, before the
 * reader's first CAS from a readable word, the hook makes a trywrlock, and before its next
 * CAS a wrunlock. The reader must then return 0 with the read lock (untimed rdlock, and
 * timedrdlock with a deadline 10 s ahead), and the word must never show rwait on a free lock.
 * Fails with a reader that marks and sleeps on the value it loaded before its read-lock CAS
 * failed (the untimed one sleeps until this thread rescues it, the timed one until its
 * deadline): fastsync.h before its fix did. Where the header's atomics are not
 * <stdatomic.h>'s (OS/2 without atomics) the hook is never called: skipped. */
/* The bound: the race needs a reader without the readers' claim (a claim keeps the writer's
 * trywrlock out). The reader sleeps here behind the write lock until this thread is ready,
 * which on a loaded machine may pass the reader-writer lock's hand-off bound; so the bound is
 * one no run reaches (rwlock_starving tests the claims). */
#define FASTSYNC_RWLOCK_HANDOFF_NS 1000000000000
#define TEST_CAS_HOOK 1
#include "harness.h"

static fastsync_rwlock_t rw;
static _Thread_local bool is_reader;
/* 0: the hook does nothing; 1: armed (before the reader's next CAS from a readable word,
 * trywrlock); 2: before its next CAS, wrunlock; 3: both done. Written by this thread before
 * the wake and by the reader's hook; seq_cst (default): no ordering subtlety worth having in
 * a hook. */
static _Atomic(int) stage;
static _Atomic(int) hook_calls; /* the reader's CASes on rw seen by the hook (added relaxed: a
                                 * count, read after the reader slept or returned) */
static int took, released;      /* the hook's results: written by the reader before it stores
                                 * stage 2 and 3, read here after loading them */
static _Atomic(bool) bad_word;  /* rwait seen on a word readers may enter (hook, or main) */
/* (The other atomics of this file, bad_word and the reader's tid, called: seq_cst, the
 * default, as stage: flags of a test.) */

static void before_cas(const volatile void *p)
{
    if (!is_reader || p != (const volatile void *)&rw.state) return;
    atomic_fetch_add_explicit(&hook_calls, 1, memory_order_relaxed);
    uint64_t v = test_rwlock_word(&rw);
    if ((v & FASTSYNC__RW_RWAIT) != 0 && fastsync__rw_readable(v)) atomic_store(&bad_word, true);
    int st = atomic_load(&stage);
    if (st == 1 && fastsync__rw_readable(v)) {
        took = fastsync_rwlock_trywrlock(&rw); /* the reader's CAS now fails */
        atomic_store(&stage, 2);
    } else if (st == 2) {
        released = fastsync_rwlock_wrunlock(&rw); /* the word is back to the reader's guess */
        atomic_store(&stage, 3);
    }
}

struct reader {
    bool timed;
    _Atomic(int) tid;     /* its test_tid() (0 where there is no /proc) */
    _Atomic(bool) called; /* it has called rdlock (tid is set) */
    _Atomic(int) ret;     /* -1 while inside rdlock */
};

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    diag("hook stage %d", atomic_load(&stage));
}

static void *reader_main(void *p)
{
    struct reader *r = (struct reader *)p;
    is_reader = true;
    atomic_store(&r->tid, test_tid());
    atomic_store(&r->called, true);
    int x;
    if (r->timed) {
        struct timespec far = fastsync_deadline_in(10000000000u);
        x = fastsync_rwlock_timedrdlock(&rw, &far);
    } else {
        x = fastsync_rwlock_rdlock(&rw);
    }
    is_reader = false;
    /* release: pairs with the acquire loads in main that read the result. */
    atomic_store_explicit(&r->ret, x, memory_order_release);
    return NULL;
}

static void one(bool timed)
{
    const char *how = timed ? "timedrdlock" : "rdlock";
    fastsync_rwlock_init(&rw, 0);
    atomic_store(&stage, 0);
    atomic_store(&hook_calls, 0);
    atomic_store(&bad_word, false);
    took = released = -1;
    is_int(fastsync_rwlock_wrlock(&rw), 0, "%s: this thread write-locks", how);
    unsigned long w0 = test_kernel_waits();
    struct reader r = { timed, 0, false, -1 };
    pthread_t t = test_thread_start(reader_main, &r);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) &&
           ((test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) == 0 || test_kernel_waits() == w0 ||
            !atomic_load(&r.called)))
        test_sleep_ns(100000);
    ok(test_until_asleep(atomic_load(&r.tid), 20000000) && (test_rwlock_word(&rw) & FASTSYNC__RW_RWAIT) != 0,
       "%s: the reader sleeps behind the write lock (rwait set)", how);
    if (atomic_load(&hook_calls) == 0) {
        /* the reader's rwait CAS went through the hook, if the hook is in the header's CAS */
        fastsync_rwlock_wrunlock(&rw);
        test_thread_join(t);
        skip("the header's atomics are not <stdatomic.h>'s here (no hook)", "%s: the race", how);
        return;
    }
    atomic_store(&stage, 1);
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "%s: wrunlock wakes it", how);
    /* acquire (both loads of ret): pair with the reader's release store. */
    end = test_limit_end(3000);
    while (test_box_open(end) && atomic_load_explicit(&r.ret, memory_order_acquire) == -1) {
        uint64_t v = test_rwlock_word(&rw);
        if ((v & FASTSYNC__RW_RWAIT) != 0 && fastsync__rw_readable(v)) atomic_store(&bad_word, true);
        test_sleep_ns(100000);
    }
    int got = atomic_load_explicit(&r.ret, memory_order_acquire);
    int st = atomic_load(&stage); /* (took and released are read only after it says so) */
    is_int(st, 3, "%s: the hook made the race: a writer locked before the reader's CAS", how);
    ok(st == 3 && took == 0 && released == 0,
       "%s: ... (trywrlock 0) and unlocked before the reader's next CAS (wrunlock 0)", how);
    if (!is_int(got, 0, "%s: the reader then took the read lock (the lock was free)", how)) {
        test_dump_rwlock("  rwlock", &rw);
        if (got == -1) {
            diag("  the reader still sleeps on a free lock: a write lock and unlock here wake it");
            fastsync_rwlock_wrlock(&rw);
            fastsync_rwlock_wrunlock(&rw);
        }
    }
    test_thread_join(t);
    got = atomic_load_explicit(&r.ret, memory_order_acquire);
    ok(!atomic_load(&bad_word), "%s: the word never showed rwait on a lock readers may enter", how);
    if (got == 0) {
        is_int(test_rwlock_word(&rw), 1, "%s: the word says one reader, nothing else", how);
        fastsync_rwlock_rdunlock(&rw);
    }
    is_int(fastsync_rwlock_destroy(&rw), 0, "%s: destroy: 0", how);
}

int main(void)
{
    test_init();
    test_before_cas = before_cas;
    test_watchdog_start(dump, NULL);
    one(false);
    one(true);
    test_watchdog_stop();
    return done_testing();
}
