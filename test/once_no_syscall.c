/* SPDX-License-Identifier: MIT */
/* once_no_syscall: the one-time initialisation's futex economy (fastsync.h: "a wake only if
 * one slept"; done is one acquire load). The futex calls on the once's word are counted
 * through the harness's wait and wake overrides (below the counting layer, by address), which
 * also hold the sleepers: each one announces itself there, just before its futex call, so
 * the test knows it has made its way to the sleep, and waits until /proc reads it asleep.
 *   uncontended: begin then commit, begin then abort, fastsync_once on a new once, and
 *     every call on a done once make no futex call at all;
 *   sleepers: while this thread initialises, 1 (then 3) threads call begin (one of them
 *     fastsync_once) and sleep; the commit makes exactly one wake, every sleeper returns 0
 *     and reads the plain record this thread wrote before it committed;
 *   abort: a sleeper woken by an abort (one wake) gets 1 and initialises; its commit, with
 *     nobody asleep, makes no wake; this thread's next begin says 0 and reads its record.
 * Private and shared.
 * Fails with: a commit (or abort) that wakes when nobody slept (RUNNING -> DONE waking), or
 * wakes once per sleeper; a done call that makes a futex call; a commit that does not wake a
 * sleeper (here caught at a 3 s limit, then the test wakes it itself); a commit or begin
 * without the release/acquire pair (the record read wrong; under ThreadSanitizer a race). */
#include "harness.h"

#define MAXS 3

static fastsync_once_t o;
static _Atomic(unsigned long) word_waits, word_wakes; /* futex calls on o's word */

struct record { int a, b[4]; };
static struct record rec; /* plain: written by the initialiser, read after begin said 0 */

struct sleeper {
    pthread_t t;
    bool once;            /* fastsync_once (fn never run), else begin */
    bool commit_if_one;   /* begin said 1: write the record and commit */
    int ret;              /* begin's result (fastsync_once: 1 if its fn ran) */
    struct record seen;   /* the record, read after the call */
    _Atomic(int) tid;     /* relaxed: for /proc, stored before the sleeper's call */
    _Atomic(bool) at_wait; /* relaxed: reached its futex call (a poll: then /proc says more) */
    _Atomic(bool) back;   /* returned (release: pairs with the rescue's acquire load) */
};
static struct sleeper s[MAXS];
static _Thread_local struct sleeper *me_sleeper; /* this thread's, in a sleeper */

static void dump(void *unused)
{
    (void)unused;
    test_dump_once("once", &o);
    /* relaxed: a diagnostic snapshot */
    diag("waits %lu, wakes %lu on its word", atomic_load_explicit(&word_waits, memory_order_relaxed),
         atomic_load_explicit(&word_wakes, memory_order_relaxed));
}

static int wait_counted(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    if (word == (void *)&o) {
        /* relaxed: a count, read after the threads are joined (or as a poll) */
        atomic_fetch_add_explicit(&word_waits, 1, memory_order_relaxed);
        /* relaxed: a poll, which only says when to look at /proc */
        if (me_sleeper) atomic_store_explicit(&me_sleeper->at_wait, true, memory_order_relaxed);
    }
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void wake_counted(void *word, int n, int shared)
{
    /* relaxed: a count, read after the threads are joined */
    if (word == (void *)&o) atomic_fetch_add_explicit(&word_wakes, 1, memory_order_relaxed);
    fastsync__wake_sys(word, n, shared);
}

/* relaxed: counts of calls this thread made, or that threads made before they announced
 * themselves (read as a total once they have returned) */
static unsigned long waits(void) { return atomic_load_explicit(&word_waits, memory_order_relaxed); }
static unsigned long wakes(void) { return atomic_load_explicit(&word_wakes, memory_order_relaxed); }

static void never(void *unused)
{
    (void)unused;
    ok(false, "fastsync_once ran fn in a sleeper");
}

static void *sleeper_main(void *p)
{
    struct sleeper *me = (struct sleeper *)p;
    me_sleeper = me;
    atomic_store_explicit(&me->tid, test_tid(), memory_order_relaxed);
    if (me->once) {
        me->ret = fastsync_once(&o, never, NULL);
    } else {
        me->ret = fastsync_once_begin(&o);
        if (me->ret == 1 && me->commit_if_one) {
            rec.a = 2;
            for (int i = 0; i < 4; i++) rec.b[i] = 20 + i;
            fastsync_once_commit(&o);
        }
    }
    me->seen = rec;
    atomic_store_explicit(&me->back, true, memory_order_release);
    return NULL;
}

static void start(int i, bool once, bool commit_if_one)
{
    s[i].once = once;
    s[i].commit_if_one = commit_if_one;
    s[i].ret = -1;
    atomic_store_explicit(&s[i].back, false, memory_order_relaxed); /* relaxed: before the thread */
    atomic_store_explicit(&s[i].at_wait, false, memory_order_relaxed);
    s[i].t = test_thread_start(sleeper_main, &s[i]);
}

/* Until sleepers 0..n-1 have each reached their futex call and read asleep. */
static bool until_asleep(int n)
{
    uint64_t end = test_limit_end(5000);
    for (int i = 0; i < n; i++) {
        /* relaxed: a poll; what the test concludes is ordered by the once itself */
        while (!atomic_load_explicit(&s[i].at_wait, memory_order_relaxed) && test_box_open(end)) test_sleep_ns(100000);
        if (!atomic_load_explicit(&s[i].at_wait, memory_order_relaxed)) return false;
        if (!test_until_asleep(atomic_load_explicit(&s[i].tid, memory_order_relaxed), 20000000)) return false;
    }
    return true;
}

/* Joins sleeper i; one still asleep after 3 s is reported, and woken by the test itself. */
static bool join(int i)
{
    uint64_t end = test_limit_end(3000);
    /* acquire: pairs with the sleeper's release store */
    while (!atomic_load_explicit(&s[i].back, memory_order_acquire) && test_box_open(end)) test_sleep_ns(100000);
    bool back = atomic_load_explicit(&s[i].back, memory_order_acquire);
    if (!back) {
        test_dump_once("  still asleep on", &o);
        fastsync__wake_sys(&o, INT_MAX, (test_once_word(&o) & FASTSYNC__ONCE_SHARED) != 0);
    }
    test_thread_join(s[i].t);
    return back;
}

static bool rec_is(const struct record *r, int a)
{
    if (r->a != a) return false;
    for (int i = 0; i < 4; i++)
        if (r->b[i] != a * 10 + i) return false;
    return true;
}

static void write_rec(int a)
{
    rec.a = a;
    for (int i = 0; i < 4; i++) rec.b[i] = a * 10 + i;
}

static void count(void *arg) { ++*(int *)arg; }

static void uncontended(const char *kind, int flags)
{
    atomic_store_explicit(&word_waits, 0, memory_order_relaxed); /* relaxed: no other thread */
    atomic_store_explicit(&word_wakes, 0, memory_order_relaxed);
    unsigned long w0 = test_kernel_waits() + test_kernel_wakes();
    fastsync_once_init(&o, flags);
    fastsync_once_begin(&o);
    fastsync_once_commit(&o);
    is_int(wakes() + waits(), 0, "%s: begin and commit, uncontended: no futex call", kind);
    for (int i = 0; i < 3; i++) fastsync_once_begin(&o);
    fastsync_once(&o, never, NULL);
    is_int(wakes() + waits(), 0, "%s: ... begin and fastsync_once on the done once: none", kind);
    fastsync_once_init(&o, flags);
    fastsync_once_begin(&o);
    fastsync_once_abort(&o);
    is_int(wakes() + waits(), 0, "%s: begin and abort, uncontended: none", kind);
    int n = 0;
    fastsync_once(&o, count, &n);
    fastsync_once(&o, count, &n);
    is_int(n, 1, "%s: fastsync_once after it ran fn once", kind);
    is_int(test_kernel_waits() + test_kernel_wakes() - w0, 0, "%s: ... and no futex call was made at all", kind);
}

static void commit_wakes(const char *kind, int flags, int n)
{
    fastsync_once_init(&o, flags);
    atomic_store_explicit(&word_waits, 0, memory_order_relaxed); /* relaxed: no thread yet */
    atomic_store_explicit(&word_wakes, 0, memory_order_relaxed);
    write_rec(0);
    is_int(fastsync_once_begin(&o), 1, "%s, %d asleep: this thread initialises (begin 1)", kind, n);
    for (int i = 0; i < n; i++) start(i, i == 1, false);
    ok(until_asleep(n), "%s, %d asleep: each reached its futex call and sleeps", kind, n);
    is_int(test_once_state(&o), FASTSYNC__ONCE_WAITED, "%s, %d asleep: ... the word says waited", kind, n);
    write_rec(7);
    is_int(fastsync_once_commit(&o), 0, "%s, %d asleep: commit 0", kind, n);
    is_int(wakes(), 1, "%s, %d asleep: ... with exactly one wake", kind, n);
    bool all = true, zero = true, seen = true;
    for (int i = 0; i < n; i++) {
        all &= join(i);
        zero &= s[i].ret == 0;
        seen &= rec_is(&s[i].seen, 7);
    }
    ok(all, "%s, %d asleep: every sleeper returned", kind, n);
    ok(zero, "%s, %d asleep: ... with 0 (fastsync_once's fn not run)", kind, n);
    ok(seen, "%s, %d asleep: ... and read the record written before the commit", kind, n);
    is_int(wakes(), 1, "%s, %d asleep: one wake in all (%lu futex waits)", kind, n, waits());
    unsigned long w = waits() + wakes();
    fastsync_once_begin(&o);
    fastsync_once(&o, never, NULL);
    is_int(waits() + wakes() - w, 0, "%s, %d asleep: afterwards, done calls make no futex call", kind, n);
}

static void abort_wakes(const char *kind, int flags)
{
    fastsync_once_init(&o, flags);
    atomic_store_explicit(&word_waits, 0, memory_order_relaxed); /* relaxed: no thread yet */
    atomic_store_explicit(&word_wakes, 0, memory_order_relaxed);
    write_rec(0);
    is_int(fastsync_once_begin(&o), 1, "%s, abort: this thread initialises (begin 1)", kind);
    start(0, false, true);
    ok(until_asleep(1), "%s, abort: a sleeper reached its futex call and sleeps", kind);
    is_int(fastsync_once_abort(&o), 0, "%s, abort: abort 0", kind);
    is_int(wakes(), 1, "%s, abort: ... with exactly one wake", kind);
    ok(join(0), "%s, abort: the sleeper returned", kind);
    is_int(s[0].ret, 1, "%s, abort: ... with 1: it initialised (and committed)", kind);
    is_int(wakes(), 1, "%s, abort: its commit, nobody asleep, made no wake", kind);
    is_int(test_once_state(&o), FASTSYNC__ONCE_DONE, "%s, abort: the once is done", kind);
    unsigned long w = waits() + wakes();
    is_int(fastsync_once_begin(&o), 0, "%s, abort: this thread's begin: 0", kind);
    ok(rec_is(&rec, 2), "%s, abort: ... and it reads the sleeper's record", kind);
    is_int(waits() + wakes() - w, 0, "%s, abort: ... without a futex call", kind);
}

int main(void)
{
    test_init();
    test_wait_override = wait_counted;
    test_wake_override = wake_counted;
    test_watchdog_start(dump, NULL);
    const char *kinds[2] = { "private", "shared" };
    for (int k = 0; k < 2; k++) {
        int flags = k ? TEST_SHARED : 0;
        uncontended(kinds[k], flags);
        commit_wakes(kinds[k], flags, 1);
        commit_wakes(kinds[k], flags, MAXS);
        abort_wakes(kinds[k], flags);
    }
    test_watchdog_stop();
    return done_testing();
}
