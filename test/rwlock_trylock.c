/* SPDX-License-Identifier: MIT */
/* rwlock_trylock: the trylocks never fail spuriously, and a past deadline never says
 * ETIMEDOUT when the lock could be taken at once.
 *   states: the word set (white-box) to every combination of its fields that the lock can
 *           reach (readers 0, 1, 2, MAX - 1, MAX; rwait; wlocked; shared; writers registered
 * 0, 1, 2, 255; wseq 0, 1, 2^31 - 1; with wlocked only when readers is 0, and rwait
 *           only when a writer holds or is registered): tryrdlock says 0 exactly when no
 *           writer holds or is registered (EAGAIN at MAX read locks, else EBUSY), trywrlock
 *           0 exactly when no one holds it (registered writers, rwait and wseq do not keep it
 *           out: barging), else EBUSY; each 0 changes the word by its own field only, each
 *           refusal not at all; timedrdlock and timedwrlock with a past deadline say the
 *           same, ETIMEDOUT in place of EBUSY; none makes a futex call.
 *   contention: readers only (no writer ever holds or waits), some in rdlock/rdunlock loops,
 *           the rest in tryrdlock loops: every tryrdlock says 0, though the CASes of all
 *           of them collide on the word; spread and pinned to one CPU.
 *   a CAS that loses, forced (the harness's CAS hook, in this thread): another reader
 *           comes in just before the CAS of tryrdlock, timedrdlock and rdlock, and wseq moves
 *           on a free lock just before that of trywrlock, timedwrlock (a past deadline) and
 *           wrlock: each must try again and say 0.
 *   one thread: 100000 trywrlock/wrunlock pairs on a free lock, each 0 (a weak CAS may
 *           fail spuriously where it is a load-linked/store-conditional pair: it must be
 *           retried).
 * Fails with a trylock that gives up after one failed CAS (the forced part; the contention
 * part too, most runs), that
 * tests the wrong fields (a registered writer keeping trywrlock out, rwait keeping readers
 * out, a reader count that is not checked for MAX), or a timed lock that checks its past
 * deadline before it tries. */
#define TEST_CAS_HOOK 1
#include "harness.h"

static const uint32_t readers_v[] = { 0, 1, 2, FASTSYNC_RWLOCK_READERS_MAX - 1, FASTSYNC_RWLOCK_READERS_MAX };
static const uint32_t writers_v[] = { 0, 1, 2, FASTSYNC__RW_WRITERS_MAX };
static const uint32_t wseq_v[] = { 0, 1, TEST_RW_WSEQ_MAX };

static unsigned long syscalls(void) { return test_kernel_waits() + test_kernel_wakes(); }

static void states(void)
{
    fastsync_rwlock_t rw;
    fastsync_rwlock_init(&rw, 0);
    unsigned long n = 0, bad_rd = 0, bad_wr = 0, bad_trd = 0, bad_twr = 0, c0 = syscalls();
    uint64_t first_bad = 0;
    struct timespec past = test_ts(0, 0);
    for (size_t r = 0; r < sizeof readers_v / sizeof *readers_v; r++)
        for (int rwait = 0; rwait < 2; rwait++)
            for (int wl = 0; wl < 2; wl++)
                for (int sh = 0; sh < 2; sh++)
                    for (size_t w = 0; w < sizeof writers_v / sizeof *writers_v; w++)
                        for (size_t q = 0; q < sizeof wseq_v / sizeof *wseq_v; q++) {
                            if (wl && readers_v[r] != 0) continue;             /* unreachable */
                            if (rwait && !wl && writers_v[w] == 0) continue; /* unreachable */
                            uint64_t v = test_rwlock_make(readers_v[r], rwait, wl, sh, writers_v[w], wseq_v[q]);
                            bool readable = !wl && writers_v[w] == 0, writable = !wl && readers_v[r] == 0;
                            int want_rd = !readable ? EBUSY : readers_v[r] == FASTSYNC_RWLOCK_READERS_MAX ? EAGAIN : 0;
                            int want_wr = writable ? 0 : EBUSY;
                            n++;
                            test_rwlock_force_word(&rw, v);
                            int got = fastsync_rwlock_tryrdlock(&rw);
                            if (got != want_rd || test_rwlock_word(&rw) != (want_rd == 0 ? v + 1 : v)) {
                                if (!bad_rd++) first_bad = v;
                            }
                            test_rwlock_force_word(&rw, v);
                            got = fastsync_rwlock_trywrlock(&rw);
                            if (got != want_wr ||
                                test_rwlock_word(&rw) != (want_wr == 0 ? v | FASTSYNC__RW_WLOCKED : v)) {
                                if (!bad_wr++) first_bad = v;
                            }
                            test_rwlock_force_word(&rw, v);
                            got = fastsync_rwlock_timedrdlock(&rw, &past);
                            if (got != (want_rd == EBUSY ? ETIMEDOUT : want_rd) ||
                                test_rwlock_word(&rw) != (want_rd == 0 ? v + 1 : v)) {
                                if (!bad_trd++) first_bad = v;
                            }
                            test_rwlock_force_word(&rw, v);
                            got = fastsync_rwlock_timedwrlock(&rw, &past);
                            if (got != (want_wr == 0 ? 0 : ETIMEDOUT) ||
                                test_rwlock_word(&rw) != (want_wr == 0 ? v | FASTSYNC__RW_WLOCKED : v)) {
                                if (!bad_twr++) first_bad = v;
                            }
                        }
    diag("%lu reachable states of the word", n);
    is_int(bad_rd, 0, "tryrdlock: 0 exactly when no writer holds or is registered (EAGAIN at MAX), else EBUSY");
    is_int(bad_wr, 0, "trywrlock: 0 exactly when nobody holds the lock, else EBUSY");
    is_int(bad_trd, 0, "timedrdlock, past deadline: as tryrdlock, ETIMEDOUT for EBUSY");
    is_int(bad_twr, 0, "timedwrlock, past deadline: as trywrlock, ETIMEDOUT for EBUSY");
    if (bad_rd + bad_wr + bad_trd + bad_twr) diag("  first wrong state: 0x%016" PRIx64, first_bad);
    is_int(syscalls() - c0, 0, "no futex call in any of them");
    test_rwlock_force_word(&rw, 0);
}

/* ---- a CAS that loses, forced ---- */

static fastsync_rwlock_t hrw;
static _Thread_local bool hook_here; /* this thread's CASes on hrw go through the hook */
/* 0: nothing; 1: another reader comes in first; 2: wseq moves first (as a hand-off's would).
 * seq_cst (default), with hook_calls and hook_fired: a hook and its counts, one thread. */
static _Atomic(int) hook_action;
static _Atomic(int) hook_calls, hook_fired;

static void before_cas(const volatile void *p)
{
    if (!hook_here || p != (const volatile void *)&hrw.state) return;
    atomic_fetch_add(&hook_calls, 1);
    int a = atomic_exchange(&hook_action, 0);
    if (a == 1 && fastsync_rwlock_tryrdlock(&hrw) == 0) atomic_fetch_add(&hook_fired, 1);
    if (a == 2) {
        test_rwlock_force_word(&hrw, test_rwlock_word(&hrw) + FASTSYNC__RW_WSEQ);
        atomic_fetch_add(&hook_fired, 1);
    }
}

static void lost_cas(void)
{
    static const char *const rd[3] = { "tryrdlock", "timedrdlock (far)", "rdlock" };
    static const char *const wr[3] = { "trywrlock", "timedwrlock (past deadline)", "wrlock" };
    struct timespec far = fastsync_deadline_in(60000000000u), past = test_ts(0, 0);
    hook_here = true;
    fastsync_rwlock_init(&hrw, 0);
    atomic_store(&hook_calls, 0);
    fastsync_rwlock_tryrdlock(&hrw);
    fastsync_rwlock_rdunlock(&hrw);
    if (atomic_load(&hook_calls) == 0) {
        hook_here = false;
        skip("the header's atomics are not <stdatomic.h>'s here (no CAS hook)", "a CAS that loses, forced");
        return;
    }
    for (int how = 0; how < 3; how++) {
        fastsync_rwlock_init(&hrw, 0);
        atomic_store(&hook_fired, 0);
        atomic_store(&hook_action, 1);
        int r = how == 0 ? fastsync_rwlock_tryrdlock(&hrw)
              : how == 1 ? fastsync_rwlock_timedrdlock(&hrw, &far) : fastsync_rwlock_rdlock(&hrw);
        is_int(r, 0, "%s whose CAS loses to another reader (forced): tries again, 0", rd[how]);
        ok(atomic_load(&hook_fired) == 1 && test_rwlock_word(&hrw) == 2, "... both read locks held (word 2)");
        fastsync_rwlock_rdunlock(&hrw);
        fastsync_rwlock_rdunlock(&hrw);
    }
    for (int how = 0; how < 3; how++) {
        fastsync_rwlock_init(&hrw, 0);
        atomic_store(&hook_fired, 0);
        atomic_store(&hook_action, 2);
        int r = how == 0 ? fastsync_rwlock_trywrlock(&hrw)
              : how == 1 ? fastsync_rwlock_timedwrlock(&hrw, &past) : fastsync_rwlock_wrlock(&hrw);
        is_int(r, 0, "%s whose CAS loses to a change of wseq on a free lock (forced): tries again, 0", wr[how]);
        ok(atomic_load(&hook_fired) == 1 && test_rwlock_word(&hrw) == (FASTSYNC__RW_WLOCKED | FASTSYNC__RW_WSEQ),
           "... the write lock held, wseq as moved");
        fastsync_rwlock_wrunlock(&hrw);
    }
    hook_here = false;
}

/* ---- contention: readers only ---- */

static fastsync_rwlock_t crw;
static uint64_t box_end;

struct reader {
    bool try_only;
    uint64_t rng;
    _Atomic(unsigned long) rounds; /* relaxed: progress for the dump */
    unsigned long tries, busy, other;
    int other_code;
};

static struct reader *readers;
static int nreaders;

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &crw);
    for (int i = 0; i < nreaders; i++)
        diag("reader %d (%s): %lu rounds", i, readers[i].try_only ? "tryrdlock" : "rdlock",
             atomic_load_explicit(&readers[i].rounds, memory_order_relaxed));
}

static void *reader_main(void *p)
{
    struct reader *r = (struct reader *)p;
    unsigned long n = 0;
    while (test_box_more(box_end, n)) {
        int x;
        if (r->try_only) {
            x = fastsync_rwlock_tryrdlock(&crw);
            r->tries++;
            if (x == EBUSY) r->busy++;
        } else {
            x = fastsync_rwlock_rdlock(&crw);
        }
        if (x != 0 && x != EBUSY) {
            r->other++;
            r->other_code = x;
        }
        if (test_rand(&r->rng) % 64 == 0) sched_yield(); /* be preempted holding it */
        if (x == 0 && fastsync_rwlock_rdunlock(&crw) != 0) r->other++;
        atomic_store_explicit(&r->rounds, ++n, memory_order_relaxed);
    }
    return NULL;
}

static void contention(const char *name, bool pinned, int n, double ms)
{
    test_pin_all(pinned);
    fastsync_rwlock_init(&crw, 0);
    readers = (struct reader *)calloc((size_t)n, sizeof *readers);
    pthread_t *t = (pthread_t *)calloc((size_t)n, sizeof *t);
    if (!readers || !t) bail("out of memory");
    nreaders = n;
    box_end = test_box_end(ms);
    for (int i = 0; i < n; i++) {
        readers[i].try_only = i % 2 == 0;
        readers[i].rng = test_stream((unsigned)i);
        t[i] = test_thread_start(reader_main, &readers[i]);
    }
    for (int i = 0; i < n; i++) test_thread_join(t[i]);
    unsigned long tries = 0, busy = 0, other = 0, rounds = 0;
    for (int i = 0; i < n; i++) {
        tries += readers[i].tries;
        busy += readers[i].busy;
        other += readers[i].other;
        rounds += atomic_load_explicit(&readers[i].rounds, memory_order_relaxed); /* relaxed: joined */
    }
    diag("%s, %d readers: %lu rounds, %lu tryrdlocks", name, n, rounds, tries);
    is_int(busy, 0, "%s, %d readers, no writer: no tryrdlock said EBUSY", name, n);
    is_int(other, 0, "%s, %d readers: every other call said 0", name, n);
    is_int(test_rwlock_word(&crw), 0, "%s, %d readers: the word 0 at the end", name, n);
    is_int(fastsync_rwlock_destroy(&crw), 0, "%s, %d readers: destroy 0", name, n);
    free(t);
    free(readers);
    readers = NULL;
    nreaders = 0;
}

int main(void)
{
    test_init();
    test_before_cas = before_cas;
    states();
    lost_cas();

    fastsync_rwlock_t rw;
    fastsync_rwlock_init(&rw, 0);
    unsigned long bad = 0;
    for (int i = 0; i < 100000; i++) {
        bad += fastsync_rwlock_trywrlock(&rw) != 0;
        bad += fastsync_rwlock_wrunlock(&rw) != 0;
    }
    is_int(bad, 0, "one thread: 100000 x trywrlock, wrunlock on a free lock: each 0");

    test_watchdog_start(dump, NULL);
    int many = 2 * test_ncpu() > 6 ? 2 * test_ncpu() : 6;
    contention("spread", false, 4, 100);
    contention("pinned", true, 4, 100);
    contention("spread", false, many, 100);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
