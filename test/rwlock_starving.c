/* SPDX-License-Identifier: MIT */
/* rwlock_starving: a reader or a writer that has waited FASTSYNC_RWLOCK_HANDOFF_NS claims the
 * next turn of the reader-writer lock (fastsync.h, the section's "Fairness"). Every step is
 * forced, none waited for: the futex seam is the harness's script (test_script_*), whose waits
 * return only when this thread releases them, and no sooner than 1.5 ms after they began, so
 * that a sleeper has waited past the default bound of 1 ms by the clock when it looks again.
 * No kernel call is made. W and B are writers, R a reader; each unlocks at once once it has
 * the lock, and records the order it had it in.
 *
 *   reader     main write-locks; W sleeps (registered), then R sleeps behind both, in a slice
 *              (a timed wait: no writer's unlock is sure to wake it); the slice ends, R finds
 *              the lock still write-held, past its bound, and claims the readers' turn
 *              (rstarve, with rwait), then sleeps untimed. main's wrunlock gives R its read
 *              lock, not W the write lock: the word one reader, rstarve gone, rwait kept (W
 *              still registered), and every reader woken (rfutex, INT_MAX), no writer. Then:
 *              trywrlock EBUSY, a timedwrlock on a past deadline ETIMEDOUT, destroy EBUSY;
 *              a new reader stays out (tryrdlock EBUSY: the hand-off is R's alone, W still
 *              first for the others); a new writer B sleeps. R runs on holding the lock (no
 *              CAS of its own) and its rdunlock hands to the writers (one wake); order R,
 *              then W and B.
 *   writer     main write-locks; W sleeps; main's wrunlock wakes it (one wake) and main locks
 *              again before W runs (the barge); W, woken past its bound into the held lock,
 *              claims wstarve and sleeps again. main's wrunlock hands the lock to W: the word
 *              free but wstarve, every writer woken (wfutex, INT_MAX). While handed: trywrlock
 *              and tryrdlock EBUSY, destroy EBUSY, wrunlock and rdunlock EPERM, a timedwrlock
 *              on a past deadline ETIMEDOUT, the word unchanged; a reader R and a writer B
 *              sleep. W takes it (wstarve gone), and its wrunlock hands to B (one wake); order
 *              W, B, R.
 *   timeouts   a timed claimant whose wait times out before the hand-off gives the claim
 *              back: the reader clears rstarve and wakes the readers (rfutex, INT_MAX), the
 *              word otherwise as it was; the writer leaves the count and wstarve (no wake: the
 *              lock is held); each returns ETIMEDOUT, and main's wrunlock is then an ordinary
 *              one. One that times out after the hand-off takes the lock (0).
 * Built again with a bound no run reaches (rwlock_starving_never, 10^12 ns): R's slice ends
 * and it sleeps again unclaimed, main's wrunlock hands to W (one wake, wfutex), and W goes
 * first; W woken into the barged lock sleeps again unclaimed, main's wrunlock wakes one.
 * Fails if a claim is not made or not kept (a reader that sleeps untimed while nobody claims
 * is never woken to claim: the hand-off goes to W), if a claimed turn goes to another (a
 * writer taking the lock from the claimant reader, other readers let in with it, anyone
 * taking one handed to W), if a wake misses the claimant (one wake of one writer), or if a
 * timed-out claimant keeps its claim. */
#include "harness.h"

#ifndef STARVING_NEVER
#define STARVING_NEVER 0
#endif

static fastsync_rwlock_t rw;

#define RSTARVE FASTSYNC__RW_RSTARVE
#define WSTARVE FASTSYNC__RW_WSTARVE
/* A word: readers, rwait, wlocked, writers registered, wseq (private, not shared). */
static uint64_t w(uint32_t readers, bool rwait, bool wlocked, uint32_t writers, uint32_t wseq)
{
    return test_rwlock_make(readers, rwait, wlocked, false, writers, wseq);
}
static uint64_t word(void) { return test_rwlock_word(&rw); }
static void *rfutex(void) { return fastsync__rw_rfutex(&rw); }
static void *wfutex(void) { return fastsync__rw_wfutex(&rw); }

/* Wait i: on the readers' half (or the writers'), expecting that half of `v`, timed or not. */
static bool wait_was(int i, bool readers, uint64_t v, bool timed)
{
    return atomic_load(&test_script.word[i]) == (uintptr_t)(readers ? rfutex() : wfutex()) &&
           atomic_load(&test_script.expected[i]) == (uint32_t)(readers ? v : v >> 32) &&
           atomic_load(&test_script.timed[i]) == timed;
}

static _Atomic(int) order[4];
static _Atomic(int) norder;

enum { ID_R = 1, ID_W, ID_B };
struct locker {
    int id;
    bool writes, timed;
    _Atomic(int) ret;  /* -1 while inside */
    pthread_t t;
};

static void *locker_main(void *p)
{
    struct locker *l = (struct locker *)p;
    struct timespec far = fastsync_deadline_in(60000000000u);
    int r = l->writes ? (l->timed ? fastsync_rwlock_timedwrlock(&rw, &far) : fastsync_rwlock_wrlock(&rw))
                      : (l->timed ? fastsync_rwlock_timedrdlock(&rw, &far) : fastsync_rwlock_rdlock(&rw));
    if (r == 0) {
        atomic_store(&order[atomic_fetch_add(&norder, 1)], l->id);
        r = l->writes ? fastsync_rwlock_wrunlock(&rw) : fastsync_rwlock_rdunlock(&rw);
    }
    atomic_store(&l->ret, r);
    return NULL;
}

static void start(struct locker *l, int id, bool writes, bool timed)
{
    l->id = id, l->writes = writes, l->timed = timed;
    atomic_store(&l->ret, -1);
    l->t = test_thread_start(locker_main, l);
}

/* Lets every wait return 0 until the lockers are done (the order among them is theirs). */
static void finish(struct locker *const *ls, int n)
{
    uint64_t end = test_limit_end(5000);
    for (;;) {
        int inside = 0;
        for (int i = 0; i < n; i++) inside += atomic_load(&ls[i]->ret) == -1;
        if (inside == 0 || !test_box_open(end)) break;
        test_script_release_all();
        test_sleep_ns(100000);
    }
    for (int i = 0; i < n; i++) test_thread_join(ls[i]->t);
}

static void reset(void)
{
    test_script_install(1500000);
    fastsync_rwlock_init(&rw, 0);
    atomic_store(&norder, 0);
}

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    test_script_dump();
}

/* main write-locks, W sleeps registered, R sleeps behind both and looks again after its
 * slice; returns with R asleep again (wait 2), claimed unless STARVING_NEVER. */
static void reader_claims(const char *what, struct locker *wr, struct locker *r, bool timed)
{
    is_int(fastsync_rwlock_wrlock(&rw), 0, "%s: main write-locks", what);
    start(wr, ID_W, true, false);
    ok(test_script_until_waits(1) && wait_was(0, false, w(0, false, true, 1, 0), false),
       "%s: W sleeps, registered, untimed", what);
    start(r, ID_R, false, timed);
    ok(test_script_until_waits(2) && wait_was(1, true, w(0, true, true, 1, 0), true),
       "%s: R sleeps behind it (rwait) in a timed slice", what);
    test_script_release(1, ETIMEDOUT);
    ok(test_script_until_waits(3), "%s: R's slice ends, the lock still write-held: R sleeps again", what);
    uint64_t want = w(0, true, true, 1, 0) | (STARVING_NEVER ? 0 : RSTARVE);
    ok(wait_was(2, true, want, STARVING_NEVER || timed), "%s: ... on 0x%08x, %s", what, (uint32_t)want,
       STARVING_NEVER ? "unclaimed (the bound not reached), in a slice" : "rstarve set: the readers' turn claimed");
    is_int(word(), want, "%s: the word 0x%016" PRIx64, what, want);
}

static void case_reader(void)
{
    reset();
    struct locker wr, r, b;
    reader_claims("reader", &wr, &r, false);
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "reader: main's wrunlock");
    if (STARVING_NEVER) {
        ok(test_script_woke(1, wfutex(), 1), "never: ... hands to W: one wake of one writer");
        is_int(word(), w(0, true, false, 1, 1), "never: ... the word: W's turn (wseq 1), rwait kept");
        finish((struct locker *[]){ &wr, &r }, 2);
        ok(atomic_load(&norder) == 2 && atomic_load(&order[0]) == ID_W && atomic_load(&order[1]) == ID_R,
           "never: W first, then R");
        is_int(word(), w(0, false, false, 0, 1), "never: the word free at the end");
        return;
    }
    ok(test_script_woke(1, rfutex(), INT_MAX), "reader: ... every reader woken (R among them), no writer");
    is_int(word(), w(1, true, false, 1, 0), "reader: ... the word: R's read lock, rstarve gone, rwait and W kept");
    is_int(fastsync_rwlock_trywrlock(&rw), EBUSY, "reader: R's hold: trywrlock EBUSY");
    struct timespec past = test_ts(0, 0);
    is_int(fastsync_rwlock_timedwrlock(&rw, &past), ETIMEDOUT, "reader: ... timedwrlock, past deadline, ETIMEDOUT");
    is_int(fastsync_rwlock_destroy(&rw), EBUSY, "reader: ... destroy EBUSY");
    is_int(fastsync_rwlock_tryrdlock(&rw), EBUSY, "reader: ... a new reader stays out (the hand-off is R's alone)");
    is_int(word(), w(1, true, false, 1, 0), "reader: ... the word unchanged");
    start(&b, ID_B, true, false);
    ok(test_script_until_waits(4) && wait_was(3, false, w(1, true, false, 2, 0), false),
       "reader: a new writer B sleeps, registered");
    is_int(atomic_load(&norder), 0, "reader: nobody has had the lock since");
    test_script_release(2, 0);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && atomic_load(&r.ret) == -1) test_sleep_ns(100000);
    is_int(atomic_load(&r.ret), 0, "reader: R runs on holding the lock, and leaves");
    ok(atomic_load(&norder) >= 1 && atomic_load(&order[0]) == ID_R, "reader: ... first");
    ok(test_script_woke(2, wfutex(), 1), "reader: ... its rdunlock hands to the writers: one wake of one");
    finish((struct locker *[]){ &wr, &r, &b }, 3);
    ok(atomic_load(&wr.ret) == 0 && atomic_load(&b.ret) == 0 && atomic_load(&norder) == 3,
       "reader: W and B have it after R, once each");
    uint64_t v = word();
    is_int(v & ~FASTSYNC__RW_WSEQS, 0, "reader: the word free at the end (0x%016" PRIx64 ")", v);
    is_int(fastsync_rwlock_destroy(&rw), 0, "reader: destroy 0");
}

/* main write-locks, W sleeps, main's wrunlock wakes it and main locks again before W runs;
 * returns with W asleep again (wait 1), claimed unless STARVING_NEVER. */
static void writer_claims(const char *what, struct locker *wr, bool timed)
{
    is_int(fastsync_rwlock_wrlock(&rw), 0, "%s: main write-locks", what);
    start(wr, ID_W, true, timed);
    ok(test_script_until_waits(1) && wait_was(0, false, w(0, false, true, 1, 0), timed),
       "%s: W sleeps, registered", what);
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "%s: main's wrunlock", what);
    ok(test_script_woke(1, wfutex(), 1), "%s: ... one wake of one writer", what);
    is_int(fastsync_rwlock_wrlock(&rw), 0, "%s: main write-locks again before W runs (the barge)", what);
    test_script_release(0, 0);
    ok(test_script_until_waits(2), "%s: W, woken into the held lock, sleeps again", what);
    uint64_t want = w(0, false, true, 1, 1) | (STARVING_NEVER ? 0 : WSTARVE);
    ok(wait_was(1, false, want, timed), "%s: ... on the writers' half, wseq 1", what);
    is_int(word(), want, "%s: the word 0x%016" PRIx64 " (%s)", what, want,
           STARVING_NEVER ? "unclaimed: the bound not reached" : "wstarve: W's claim");
}

static void case_writer(void)
{
    reset();
    struct locker wr, r, b;
    writer_claims("writer", &wr, false);
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "writer: main's wrunlock");
    if (STARVING_NEVER) {
        ok(test_script_woke(2, wfutex(), 1), "never: ... one wake of one writer");
        is_int(word(), w(0, false, false, 1, 2), "never: ... the word free, W registered");
        finish((struct locker *[]){ &wr }, 1);
        is_int(atomic_load(&wr.ret), 0, "never: W took it and unlocked it");
        return;
    }
    ok(test_script_woke(2, wfutex(), INT_MAX), "writer: ... hands to W: every writer woken");
    uint64_t handed = w(0, false, false, 1, 2) | WSTARVE;
    is_int(word(), handed, "writer: ... the word free but wstarve: handed to W");
    is_int(fastsync_rwlock_trywrlock(&rw), EBUSY, "writer: handed: trywrlock EBUSY");
    is_int(fastsync_rwlock_tryrdlock(&rw), EBUSY, "writer: ... tryrdlock EBUSY");
    struct timespec past = test_ts(0, 0);
    is_int(fastsync_rwlock_timedwrlock(&rw, &past), ETIMEDOUT, "writer: ... timedwrlock, past deadline, ETIMEDOUT");
    is_int(fastsync_rwlock_destroy(&rw), EBUSY, "writer: ... destroy EBUSY");
    is_int(fastsync_rwlock_wrunlock(&rw), EPERM, "writer: ... wrunlock EPERM");
    is_int(fastsync_rwlock_rdunlock(&rw), EPERM, "writer: ... rdunlock EPERM");
    is_int(word(), handed, "writer: ... the word unchanged");
    start(&r, ID_R, false, false);
    ok(test_script_until_waits(3) && wait_was(2, true, handed | FASTSYNC__RW_RWAIT, true),
       "writer: a reader R sleeps (rwait)");
    start(&b, ID_B, true, false);
    ok(test_script_until_waits(4) && wait_was(3, false, handed, false), "writer: a writer B sleeps, registered");
    is_int(atomic_load(&norder), 0, "writer: nobody has had the lock since");
    test_script_release(1, 0);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && atomic_load(&wr.ret) == -1) test_sleep_ns(100000);
    is_int(atomic_load(&wr.ret), 0, "writer: W takes the handed lock and unlocks it");
    ok(test_script_woke(3, wfutex(), 1), "writer: ... wstarve gone: its wrunlock woke one writer");
    finish((struct locker *[]){ &wr, &r, &b }, 3);
    ok(atomic_load(&norder) == 3 && atomic_load(&order[0]) == ID_W && atomic_load(&order[1]) == ID_B &&
           atomic_load(&order[2]) == ID_R,
       "writer: W, then B (writers first), then R");
    uint64_t v = word();
    is_int(v & ~FASTSYNC__RW_WSEQS, 0, "writer: the word free at the end (0x%016" PRIx64 ")", v);
}

/* A timed claimant whose wait times out before the hand-off (late false) or after it. */
static void case_reader_timeout(bool late)
{
    const char *what = late ? "reader late" : "reader timeout";
    reset();
    struct locker wr, r;
    reader_claims(what, &wr, &r, true);
    if (late) {
        is_int(fastsync_rwlock_wrunlock(&rw), 0, "%s: main's wrunlock gives R its read lock", what);
        test_script_release(2, ETIMEDOUT);
        test_thread_join(r.t);
        is_int(atomic_load(&r.ret), 0, "%s: R's wait timed out after that: it holds the lock (0)", what);
        finish((struct locker *[]){ &wr }, 1);
        ok(atomic_load(&norder) == 2 && atomic_load(&order[0]) == ID_R, "%s: R first, then W", what);
        return;
    }
    test_script_release(2, ETIMEDOUT);
    test_thread_join(r.t);
    is_int(atomic_load(&r.ret), ETIMEDOUT, "%s: R's timedrdlock ETIMEDOUT", what);
    is_int(word(), w(0, true, true, 1, 0), "%s: ... its claim given back (rwait stays)", what);
    ok(test_script_woke(1, rfutex(), INT_MAX), "%s: ... the readers woken, to claim again", what);
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "%s: main's wrunlock", what);
    ok(test_script_woke(2, wfutex(), 1), "%s: ... an ordinary one: hands to W", what);
    finish((struct locker *[]){ &wr }, 1);
    is_int(atomic_load(&wr.ret), 0, "%s: W had it", what);
}

static void case_writer_timeout(bool late)
{
    const char *what = late ? "writer late" : "writer timeout";
    reset();
    struct locker wr;
    writer_claims(what, &wr, true);
    if (late) {
        is_int(fastsync_rwlock_wrunlock(&rw), 0, "%s: main's wrunlock hands to W", what);
        test_script_release(1, ETIMEDOUT);
        test_thread_join(wr.t);
        is_int(atomic_load(&wr.ret), 0, "%s: W's wait timed out after that: it took the lock (0)", what);
        is_int(word() & ~FASTSYNC__RW_WSEQS, 0, "%s: the word free at the end", what);
        return;
    }
    test_script_release(1, ETIMEDOUT);
    test_thread_join(wr.t);
    is_int(atomic_load(&wr.ret), ETIMEDOUT, "%s: W's timedwrlock ETIMEDOUT", what);
    is_int(word(), w(0, false, true, 0, 1), "%s: ... its count and claim gone, the lock main's", what);
    is_int(atomic_load(&test_script.wakes), 1, "%s: ... no wake (the lock is held)", what);
    is_int(fastsync_rwlock_wrunlock(&rw), 0, "%s: main's wrunlock", what);
    is_int(atomic_load(&test_script.wakes), 1, "%s: ... nobody waits: no wake", what);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    case_reader();
    case_writer();
    if (!STARVING_NEVER) {
        case_reader_timeout(false);
        case_reader_timeout(true);
        case_writer_timeout(false);
        case_writer_timeout(true);
    }
    test_watchdog_stop();
    return done_testing();
}
