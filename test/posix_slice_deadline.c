/* SPDX-License-Identifier: MIT */
/* posix_slice_deadline: the POSIX backend's wait table (forced here, whatever the build's
 * backend) gives pthread_cond_timedwait a normalized deadline for every slice of a timed
 * wait (issue 17, item 4). A slice ends at CLOCK_REALTIME now plus what is left of the
 * deadline, up to 2 s: with a 32-bit long (i686, arm), now's tv_nsec plus 2e9 overflows,
 * pthread_cond_timedwait says EINVAL without sleeping, and the waiter spins with the
 * bucket's lock held until the deadline, so a set of the same event cannot end it.
 *
 * The realtime clock is made to read x.999999000 s in the waiting thread (clock_gettime
 * wrapped at link time, -Wl,--wrap=clock_gettime), and the deadline is
 * {monotonic now + 1 s, 999999999} on CLOCK_MONOTONIC, at least 1.15 s ahead: the first
 * slice's tv_nsec is then at least 2.15e9 before normalizing. A second thread sets the event
 * once the first slice has begun. Every slice's deadline must have 0 <= tv_nsec < 1e9, and
 * the wait must return 0 (the set ended it) after a few slices. Also the same on
 * CLOCK_REALTIME with its deadline 1.9 s ahead (no overflow possible there: both reads are
 * of one clock), and fastsync__ts_add itself on the edges (carry, saturation).
 * Where the C library redirects clock_gettime (a 64-bit time_t on a 32-bit ABI), the wrap
 * does not take, and the forced case says so and is skipped: the 32-bit time_t build of the
 * same ABI runs it. */
#define FASTSYNC_BACKEND_POSIX 1
#include <pthread.h>
#include <time.h>
static int test_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
#define FASTSYNC__POSIX_TIMEDWAIT test_timedwait
#include "harness.h"

static _Thread_local int forced;        /* this thread's realtime clock reads x.999999000 */
static _Atomic(int) wrapped;            /* the wrap ran with forced set */
static _Atomic(int) slices, bad_slices; /* slices begun; deadlines not normalized */
static long bad_nsec;                   /* the first bad tv_nsec */

int __real_clock_gettime(clockid_t clock, struct timespec *t);
int __wrap_clock_gettime(clockid_t clock, struct timespec *t);
int __wrap_clock_gettime(clockid_t clock, struct timespec *t)
{
    int r = __real_clock_gettime(clock, t);
    if (r == 0 && forced && clock == CLOCK_REALTIME) {
        t->tv_nsec = 999999000;
        /* relaxed: a flag read after the wait by this thread */
        atomic_store_explicit(&wrapped, 1, memory_order_relaxed);
    }
    return r;
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

static void one(const char *name, clockid_t clock, int force)
{
    fastsync_event_init(&ev, 0, 0);
    atomic_store_explicit(&slices, 0, memory_order_relaxed);
    atomic_store_explicit(&bad_slices, 0, memory_order_relaxed);
    atomic_store_explicit(&wrapped, 0, memory_order_relaxed);
    struct timespec now, d;
    if (clock == CLOCK_MONOTONIC) {
        /* at least 1.15 s left: monotonic tv_nsec under 0.85e9 */
        for (;;) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_nsec < 850000000L) break;
            test_sleep_ns(50000000);
        }
        d.tv_sec = now.tv_sec + 1;
        d.tv_nsec = 999999999L;
    } else {
        d = test_deadline_on(CLOCK_REALTIME, 1900000000u);
    }
    pthread_t t = test_thread_start(setter, NULL);
    forced = force;
    int64_t t0 = test_clock_ns(CLOCK_MONOTONIC);
    int r = fastsync_event_clockwait(&ev, clock, &d);
    int64_t took = test_clock_ns(CLOCK_MONOTONIC) - t0;
    forced = 0;
    test_thread_join(t);
    /* relaxed: the setter has joined */
    int n = atomic_load_explicit(&slices, memory_order_relaxed);
    int bad = atomic_load_explicit(&bad_slices, memory_order_relaxed);
    diag("%s: %d slices, %d not normalized, wait %.1f ms", name, n, bad, (double)took / 1e6);
    if (force && !atomic_load_explicit(&wrapped, memory_order_relaxed)) {
        const char *why = "clock_gettime is redirected by the C library here: the wrap does not take";
        skip(why, "%s: every slice's deadline normalized", name);
        skip(why, "%s: the set ended the wait", name);
        fastsync_event_destroy(&ev);
        return;
    }
    if (!is_int(bad, 0, "%s: every slice's deadline normalized (0 <= tv_nsec < 1e9)", name))
        diag("  the first bad tv_nsec: %ld", bad_nsec);
    if (!is_int(r, 0, "%s: the set ended the wait (not its deadline)", name)) diag("  %d slices", n);
    fastsync_event_destroy(&ev);
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
    one("MONOTONIC deadline, realtime at x.999999", CLOCK_MONOTONIC, 1);
    one("MONOTONIC deadline, realtime as it is", CLOCK_MONOTONIC, 0);
    one("REALTIME deadline", CLOCK_REALTIME, 0);
    test_watchdog_stop();
    return done_testing();
}
