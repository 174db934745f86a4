/* SPDX-License-Identifier: MIT */
/* posix_slice_deadline: the POSIX backend's wait table (forced here, whatever the build's
 * backend) times a timed wait's slices on CLOCK_MONOTONIC and gives pthread_cond_timedwait
 * a normalized deadline for every one (issue 17, items 3 and 4).
 *
 * The clocks are set in the waiting thread only, by wrapping clock_gettime at link time
 * (-Wl,--wrap=clock_gettime); every slice's deadline is seen through the table's hook for
 * its sleep (FASTSYNC__POSIX_TIMEDWAIT). A second thread sets the event once the first
 * slice has begun, where the case wants the wait ended by a set.
 * - Item 4: a slice ends at the slices' clock now plus what is left of the deadline, up to
 *   2 s; with a 32-bit long (i686, arm) now's tv_nsec plus 2e9 overflows, and
 *   pthread_cond_timedwait says EINVAL without sleeping: the waiter spins with the bucket's
 *   lock held. Here the slices' clock reads x.999999000 s and the deadline is on the other
 *   clock, {now + 1 s, 999999999}, at least 1.15 s ahead: the first slice's tv_nsec is at
 *   least 2.15e9 before normalizing. Every slice's deadline must have 0 <= tv_nsec < 1e9,
 *   and the set must end the wait.
 * - Item 3: a step back of the real-time clock, as the kernel sees it, is the waiter's
 *   CLOCK_REALTIME reading 8 s ahead of the kernel's. A CLOCK_MONOTONIC deadline 300 ms ahead
 *   must then time out within 2 s of it (the manual: a step of the real-time clock does not
 *   delay it); with slices timed on CLOCK_REALTIME it returned after 8.3 s.
 * - fastsync__ts_add itself on the edges (carry, saturation).
 * Where the C library redirects clock_gettime (a 64-bit time_t on a 32-bit ABI), the wrap
 * does not take, and the forced cases say so and are skipped: the 32-bit time_t build of the
 * same ABI runs them. */
#define FASTSYNC_BACKEND_POSIX 1
#include <pthread.h>
#include <time.h>
#include <stdbool.h>
static int test_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
#define FASTSYNC__POSIX_TIMEDWAIT test_timedwait
static bool adjust(clockid_t clock, struct timespec *t);
#define TEST_CLOCK_ADJUST adjust
#include "harness.h"

enum { FORCE_NONE, FORCE_NSEC, FORCE_STEP };
static _Thread_local int forced;        /* this thread's clocks, FORCE_* */
static _Atomic(int) slices, bad_slices; /* slices begun; deadlines not normalized */
static long bad_nsec;                   /* the first bad tv_nsec */

static bool adjust(clockid_t clock, struct timespec *t)
{
    if (forced == FORCE_NSEC && clock == FASTSYNC__POSIX_SLICE_CLOCK)
        t->tv_nsec = 999999000;
    else if (forced == FORCE_STEP && clock == CLOCK_REALTIME)
        t->tv_sec += 8;
    else
        return false;
    return true;
}

static int test_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
    if (t->tv_nsec < 0 || t->tv_nsec >= 1000000000L) {
        /* relaxed: counts read after the threads joined */
        if (atomic_fetch_add_explicit(&bad_slices, 1, memory_order_relaxed) == 0) bad_nsec = t->tv_nsec;
    }
    atomic_fetch_add_explicit(&slices, 1, memory_order_release); /* pairs with setter's acquire */
    return pthread_cond_timedwait(c, m, t);
}

static fastsync_event_t ev;

static void *setter(void *unused)
{
    (void)unused;
    /* acquire: pairs with the release add of the first slice (the waiter is in the table) */
    while (atomic_load_explicit(&slices, memory_order_acquire) == 0) test_sleep_ns(1000000);
    test_sleep_ns(20000000); /* the waiter into its sleep, or spinning there on a bad deadline */
    fastsync_event_set(&ev);
    return NULL;
}

/* A wait on ev with deadline d on `clock`, the waiter's clocks forced so; a setter thread if
 * `set`. Returns the wait's result; *took its time in ns; 0 in *wrap_took if the wrap never
 * changed a reading. */
static int wait_once(clockid_t clock, struct timespec d, int force, bool set, int64_t *took, int *wrap_took)
{
    fastsync_event_init(&ev, 0, 0);
    atomic_store_explicit(&slices, 0, memory_order_relaxed);
    atomic_store_explicit(&bad_slices, 0, memory_order_relaxed);
    atomic_store_explicit(&test_clock_wrapped, 0, memory_order_relaxed);
    pthread_t t;
    if (set) t = test_thread_start(setter, NULL);
    int64_t t0 = test_clock_ns(CLOCK_MONOTONIC);
    forced = force;
    int r = fastsync_event_clockwait(&ev, clock, &d);
    forced = FORCE_NONE;
    *took = test_clock_ns(CLOCK_MONOTONIC) - t0;
    if (set) test_thread_join(t);
    /* relaxed: the setter has joined */
    *wrap_took = atomic_load_explicit(&test_clock_wrapped, memory_order_relaxed);
    fastsync_event_destroy(&ev);
    return r;
}

/* Item 4: the deadline on the clock the slices do not use, at least 1.15 s ahead. */
static void overflow(const char *name, int force)
{
    clockid_t clock = FASTSYNC__POSIX_SLICE_CLOCK == CLOCK_MONOTONIC ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    struct timespec now, d;
    for (;;) { /* tv_nsec under 0.85e9 */
        clock_gettime(clock, &now);
        if (now.tv_nsec < 850000000L) break;
        test_sleep_ns(50000000);
    }
    d.tv_sec = now.tv_sec + 1;
    d.tv_nsec = 999999999L;
    int64_t took;
    int wrap_took;
    int r = wait_once(clock, d, force, true, &took, &wrap_took);
    /* relaxed: the setter has joined */
    int n = atomic_load_explicit(&slices, memory_order_relaxed);
    int bad = atomic_load_explicit(&bad_slices, memory_order_relaxed);
    diag("%s: %d slices, %d not normalized, wait %.1f ms", name, n, bad, (double)took / 1e6);
    if (force && !wrap_took) {
        const char *why = "clock_gettime is redirected by the C library here: the wrap does not take";
        skip(why, "%s: every slice's deadline normalized", name);
        skip(why, "%s: the set ended the wait", name);
        return;
    }
    if (!is_int(bad, 0, "%s: every slice's deadline normalized (0 <= tv_nsec < 1e9)", name))
        diag("  the first bad tv_nsec: %ld", bad_nsec);
    if (!is_int(r, 0, "%s: the set ended the wait (not its deadline)", name)) diag("  %d slices", n);
}

/* Item 3: the waiter's real-time clock 8 s ahead of the kernel's (a step back). */
static void step_back(void)
{
    const char *name = "CLOCK_MONOTONIC deadline 300 ms ahead, the real-time clock stepped back 8 s";
    int64_t took;
    int wrap_took;
    int r = wait_once(CLOCK_MONOTONIC, test_deadline_on(CLOCK_MONOTONIC, 300000000u), FORCE_STEP, false, &took,
                      &wrap_took);
    diag("%s: ETIMEDOUT after %.1f ms", name, (double)took / 1e6);
    if (!wrap_took && !FASTSYNC__POSIX_SLICE_MONOTONIC) {
        skip("clock_gettime is redirected by the C library here: the wrap does not take", "%s", name);
        return;
    }
    is_int(r, ETIMEDOUT, "%s: times out", name);
    ok(took < 2300000000, "%s: within 2 s of its deadline (took %.1f ms)", name, (double)took / 1e6);
}

static void ts_add_edges(void)
{
    struct timespec t = { 5, 999999999L };
    fastsync__ts_add(&t, 1999999999u);
    ok(t.tv_sec == 7 && t.tv_nsec == 999999998L, "ts_add: {5, 999999999} + 1999999999 = {7, 999999998} (got {%lld, %ld})",
       (long long)t.tv_sec, t.tv_nsec);
    t.tv_sec = 1;
    t.tv_nsec = 0;
    fastsync__ts_add(&t, 0);
    ok(t.tv_sec == 1 && t.tv_nsec == 0, "ts_add: + 0 leaves it");
    t.tv_sec = FASTSYNC__TIME_MAX - 1;
    t.tv_nsec = 500000000L;
    fastsync__ts_add(&t, 2000000000u);
    ok(t.tv_sec == FASTSYNC__TIME_MAX && t.tv_nsec == 999999999L, "ts_add: saturates at the largest time_t");
    t.tv_sec = 0;
    t.tv_nsec = 1;
    fastsync__ts_add(&t, UINT64_MAX);
    volatile uint64_t secs = UINT64_MAX / 1000000000u; /* 18446744073 s and 709551615 ns; volatile:
                                                        * no warning for a 32-bit time_t */
    if ((uint64_t)FASTSYNC__TIME_MAX < secs)
        ok(t.tv_sec == FASTSYNC__TIME_MAX && t.tv_nsec == 999999999L, "ts_add: + UINT64_MAX saturates");
    else
        ok((uint64_t)t.tv_sec == secs && t.tv_nsec == 709551616L, "ts_add: + UINT64_MAX, exact");
}

int main(void)
{
    test_init();
    test_watchdog_start(NULL, NULL); /* a wait that never ends becomes a failure */
    ts_add_edges();
    overflow("the slices' clock at x.999999", FORCE_NSEC);
    overflow("the clocks as they are", FORCE_NONE);
    step_back();
    test_watchdog_stop();
    return done_testing();
}
