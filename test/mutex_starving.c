/* SPDX-License-Identifier: MIT */
/* mutex_starving: a sleeper that has waited FASTSYNC_MUTEX_HANDOFF_NS claims the mutex's next
 * unlock, which hands it the lock instead of freeing it (the mutex section's "Fairness").
 * Every step is forced, none waited for: the futex seam is the harness's script
 * (test_script_*). A wait records the value it was called with and returns only when this
 * thread releases it, with the answer this thread chose (0: woken; ETIMEDOUT); it returns no
 * sooner than 1.5 ms after it began, so that a sleeper has waited past the default bound of
 * 1 ms by the clock when it looks again. A wake records its count. No kernel call is made.
 *
 *   barge     main holds the mutex; A sleeps (the word CONTENDED); main unlocks (one wake)
 *             and at once locks again, before A runs: the barge that starves a sleeper. A
 *             wakes, finds it held and, having waited past the bound, claims the next unlock:
 *             the word CONTENDED | STARVING, A asleep on exactly that. main's unlock then
 *             hands the mutex to A: the word is STARVING alone (handed, not free) and every
 *             sleeper is woken (a count of INT_MAX: the claimant cannot be singled out). While
 *             it is handed, nobody else takes it: trylock EBUSY, a timedlock with a past
 *             deadline ETIMEDOUT, destroy EBUSY, an unlock EPERM, and B, a new locker, goes to
 *             sleep on the handed word. A runs on, takes it (the word CONTENDED, STARVING gone),
 *             unlocks (one wake, for B); B takes it and unlocks. Order: A, then B.
 *   timeout   the same up to A's claim, but A is a timedlock whose wait then times out while
 *             main still holds the mutex: A gives the claim back (ETIMEDOUT; the word
 *             CONTENDED, STARVING gone), and main's unlock is an ordinary one (one wake).
 *   late      A's claimed wait times out only after main's unlock handed it the mutex: A takes
 *             it (0, never ETIMEDOUT once handed), and its unlock frees it.
 * Built again with a bound no run reaches (mutex_starving_never, 10^12 ns): A, woken into the
 * barged mutex, does not claim (the word CONTENDED only), main's unlock frees the mutex with
 * one wake, and A takes it: the hand-off costs nothing until a sleeper has waited that long.
 * Fails if a sleeper's RMW drops STARVING, if an unlock frees a claimed mutex, if anyone but
 * the claimant takes a handed one, if a timed-out claimant keeps its claim. */
#include "harness.h"

#ifndef STARVING_NEVER
#define STARVING_NEVER 0
#endif
#define WORD_CONTENDED 2u
#define WORD_STARVING FASTSYNC__MX_STARVING

static fastsync_mutex_t m;

static uint32_t word(void) { return fastsync__load(&m.state, memory_order_relaxed); }

static void reset(void)
{
    test_script_install(1500000);
    fastsync_mutex_init(&m, 0);
}

static _Atomic(int) order[4];
static _Atomic(int) norder;

struct locker {
    int id;        /* 1: A, 2: B */
    bool timed;
    _Atomic(int) ret;
};

static void *locker_main(void *p)
{
    struct locker *l = (struct locker *)p;
    int r;
    if (l->timed) {
        struct timespec far = fastsync_deadline_in(60000000000u);
        r = fastsync_mutex_timedlock(&m, &far);
    } else {
        r = fastsync_mutex_lock(&m);
    }
    if (r == 0) {
        atomic_store(&order[atomic_fetch_add(&norder, 1)], l->id);
        r = fastsync_mutex_unlock(&m);
    }
    atomic_store(&l->ret, r);
    return NULL;
}

static void dump(void *unused)
{
    (void)unused;
    test_dump_mutex("mutex", &m);
    test_script_dump();
}

/* main holds the mutex, A sleeps, main unlocks and locks again before A runs, A wakes into
 * the barged mutex. Returns A's thread; `what` names the case. */
static pthread_t barge(const char *what, struct locker *a)
{
    is_int(fastsync_mutex_lock(&m), 0, "%s: main locks", what);
    pthread_t t = test_thread_start(locker_main, a);
    ok(test_script_until_waits(1), "%s: A sleeps", what);
    is_int(atomic_load(&test_script.expected[0]), WORD_CONTENDED, "%s: ... on the word CONTENDED", what);
    is_int(fastsync_mutex_unlock(&m), 0, "%s: main unlocks", what);
    ok(atomic_load(&test_script.wakes) == 1 && atomic_load(&test_script.wake_n[0]) == 1, "%s: ... with one wake of one", what);
    is_int(word(), 0, "%s: ... the word free", what);
    is_int(fastsync_mutex_lock(&m), 0, "%s: main locks again before A runs (the barge)", what);
    is_int(word(), 1, "%s: ... the word LOCKED", what);
    test_script_release(0, 0);
    ok(test_script_until_waits(2), "%s: A, woken into the held mutex, sleeps again", what);
    return t;
}

static void case_barge(void)
{
    reset();
    struct locker a = { 1, false, -1 }, b = { 2, false, -1 };
    atomic_store(&norder, 0);
    pthread_t ta = barge("barge", &a);
    uint32_t claimed = STARVING_NEVER ? WORD_CONTENDED : WORD_CONTENDED | WORD_STARVING;
    is_int(atomic_load(&test_script.expected[1]), claimed, "barge: ... on the word 0x%x (%s)", claimed,
           STARVING_NEVER ? "no claim: the bound not reached" : "CONTENDED | STARVING: its claim");
    is_int(word(), claimed, "barge: the word 0x%x", claimed);
    is_int(fastsync_mutex_unlock(&m), 0, "barge: main unlocks");
    if (STARVING_NEVER) {
        ok(atomic_load(&test_script.wakes) == 2 && atomic_load(&test_script.wake_n[1]) == 1, "never: ... one wake of one");
        is_int(word(), 0, "never: ... the word free");
        test_script_release(1, 0);
        test_thread_join(ta);
        is_int(atomic_load(&a.ret), 0, "never: A took the mutex and unlocked it");
        is_int(word(), 0, "never: the word free at the end");
        return;
    }
    ok(atomic_load(&test_script.wakes) == 2 && atomic_load(&test_script.wake_n[1]) == INT_MAX,
       "barge: ... waking every sleeper (wake %d of count %d)", atomic_load(&test_script.wakes),
       atomic_load(&test_script.wake_n[1]));
    is_int(word(), WORD_STARVING, "barge: the word STARVING alone: handed to A, not free");
    is_int(fastsync_mutex_trylock(&m), EBUSY, "barge: handed: trylock EBUSY");
    struct timespec past = test_ts(0, 0);
    is_int(fastsync_mutex_timedlock(&m, &past), ETIMEDOUT, "barge: handed: timedlock, past deadline, ETIMEDOUT");
    is_int(fastsync_mutex_destroy(&m), EBUSY, "barge: handed: destroy EBUSY");
    is_int(fastsync_mutex_unlock(&m), EPERM, "barge: handed: unlock EPERM");
    is_int(word(), WORD_STARVING, "barge: ... the word unchanged");
    pthread_t tb = test_thread_start(locker_main, &b);
    ok(test_script_until_waits(3), "barge: B, a new locker, sleeps");
    is_int(atomic_load(&test_script.expected[2]), WORD_STARVING, "barge: ... on the handed word, unchanged");
    is_int(atomic_load(&norder), 0, "barge: nobody has had the mutex since");
    test_script_release(1, 0);
    test_thread_join(ta);
    is_int(atomic_load(&a.ret), 0, "barge: A took the handed mutex and unlocked it");
    ok(atomic_load(&test_script.wakes) == 3 && atomic_load(&test_script.wake_n[2]) == 1,
       "barge: ... A held it CONTENDED, STARVING gone: its unlock woke one");
    is_int(word(), 0, "barge: ... the word free");
    test_script_release(2, 0);
    test_thread_join(tb);
    is_int(atomic_load(&b.ret), 0, "barge: B took it and unlocked it");
    ok(atomic_load(&norder) == 2 && atomic_load(&order[0]) == 1 && atomic_load(&order[1]) == 2,
       "barge: A first, then B");
    is_int(word(), 0, "barge: the word free at the end");
    is_int(fastsync_mutex_destroy(&m), 0, "barge: destroy 0");
}

/* A timed claimant whose wait times out: before the hand-off (late false) it gives the
 * claim back; after it (late true) it takes the handed mutex. */
static void case_timeout(bool late)
{
    const char *what = late ? "late" : "timeout";
    reset();
    struct locker a = { 1, true, -1 };
    atomic_store(&norder, 0);
    pthread_t ta = barge(what, &a);
    is_int(word(), WORD_CONTENDED | WORD_STARVING, "%s: A claimed (CONTENDED | STARVING)", what);
    if (!late) {
        test_script_release(1, ETIMEDOUT);
        test_thread_join(ta);
        is_int(atomic_load(&a.ret), ETIMEDOUT, "timeout: A's timedlock ETIMEDOUT");
        is_int(word(), WORD_CONTENDED, "timeout: ... its claim given back: the word CONTENDED");
        is_int(fastsync_mutex_unlock(&m), 0, "timeout: main unlocks");
        ok(atomic_load(&test_script.wakes) == 2 && atomic_load(&test_script.wake_n[1]) == 1, "timeout: ... an ordinary unlock: one wake of one");
        is_int(word(), 0, "timeout: ... the word free");
        return;
    }
    is_int(fastsync_mutex_unlock(&m), 0, "late: main unlocks");
    is_int(word(), WORD_STARVING, "late: ... handed to A");
    test_script_release(1, ETIMEDOUT);
    test_thread_join(ta);
    is_int(atomic_load(&a.ret), 0, "late: A's wait timed out after the hand-off: it took the mutex (0)");
    is_int(atomic_load(&norder), 1, "late: ... and held it once");
    is_int(word(), 0, "late: the word free at the end");
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    case_barge();
    if (!STARVING_NEVER) {
        case_timeout(false);
        case_timeout(true);
    }
    test_watchdog_stop();
    return done_testing();
}
