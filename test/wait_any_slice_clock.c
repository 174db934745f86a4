/* SPDX-License-Identifier: MIT */
/* wait_any_slice_clock: wait_any's fallback (slices, one entry slept on at a time; forced
 * by FASTSYNC_TEST_WAITV=fallback in its meson test, and the only way on the POSIX backend
 * and under qemu-user) times its slices on CLOCK_MONOTONIC, so that a step back of the
 * real-time clock does not stretch a slice of a CLOCK_REALTIME wait (issue 17, item 7).
 * A step back as the kernel sees it is the waiting thread's CLOCK_REALTIME reading 8 s ahead
 * of the kernel's (clock_gettime wrapped at link time, -Wl,--wrap=clock_gettime, in this
 * thread only). clockwait_any over [e1, e2] on CLOCK_REALTIME with a deadline 20 s ahead;
 * 100 ms in, another thread sets e2, an entry the waiter is not asleep on when its slice is
 * on e1: the wait must return index 1 within 2 s of the set. With slices timed on the
 * deadline's clock it returned 8 s late (the slice's end, 8 s ahead on the kernel's clock).
 * The same on CLOCK_MONOTONIC (the clock as it is) and, without the step, a REALTIME
 * deadline 300 ms ahead: ETIMEDOUT, never before it. */
#include <stdbool.h>
#include <time.h>
static bool adjust(clockid_t clock, struct timespec *t);
#define TEST_CLOCK_ADJUST adjust
#include "harness.h"

static _Thread_local int stepped; /* this thread's CLOCK_REALTIME reads 8 s ahead */

static bool adjust(clockid_t clock, struct timespec *t)
{
    if (!stepped || clock != CLOCK_REALTIME) return false;
    t->tv_sec += 8;
    return true;
}

static fastsync_event_t e1, e2;

static void *setter(void *unused)
{
    (void)unused;
    test_sleep_ns(100000000);
    fastsync_event_set(&e2);
    return NULL;
}

static void one(const char *name, clockid_t clock, int step)
{
    fastsync_event_init(&e1, 0, 0);
    fastsync_event_init(&e2, 0, 0);
    atomic_store_explicit(&test_clock_wrapped, 0, memory_order_relaxed);
    fastsync_wait_entry_t l[2] = { fastsync_wait_event(&e1), fastsync_wait_event(&e2) };
    struct timespec d = test_deadline_on(clock, 20000000000u);
    pthread_t t = test_thread_start(setter, NULL);
    unsigned index = 9;
    int64_t t0 = test_clock_ns(CLOCK_MONOTONIC);
    stepped = step;
    int r = fastsync_clockwait_any(l, 2, &index, clock, &d);
    stepped = 0;
    int64_t took = test_clock_ns(CLOCK_MONOTONIC) - t0;
    test_thread_join(t);
    diag("%s: %d, index %u, after %.1f ms (e2 set at 100 ms)", name, r, index, (double)took / 1e6);
    if (step && !atomic_load_explicit(&test_clock_wrapped, memory_order_relaxed)) {
        skip("clock_gettime is redirected by the C library here: the wrap does not take", "%s", name);
    } else {
        ok(r == 0 && index == 1, "%s: returns e2 (got %d, index %u)", name, r, index);
        ok(took < 2100000000, "%s: within 2 s of the set (%.1f ms)", name, (double)took / 1e6);
    }
    fastsync_event_destroy(&e1);
    fastsync_event_destroy(&e2);
}

static void deadline(void)
{
    fastsync_event_init(&e1, 0, 0);
    fastsync_event_init(&e2, 0, 0);
    fastsync_wait_entry_t l[2] = { fastsync_wait_event(&e1), fastsync_wait_event(&e2) };
    struct timespec d = test_deadline_on(CLOCK_REALTIME, 300000000u);
    unsigned index = 9;
    int r = fastsync_clockwait_any(l, 2, &index, CLOCK_REALTIME, &d);
    int64_t margin = test_clock_ns(CLOCK_REALTIME) - test_ts_ns(d);
    is_int(r, ETIMEDOUT, "REALTIME deadline 300 ms ahead: ETIMEDOUT");
    ok(margin >= 0, "REALTIME deadline 300 ms ahead: never before it (%+.3f ms)", (double)margin / 1e6);
    fastsync_event_destroy(&e1);
    fastsync_event_destroy(&e2);
}

int main(void)
{
    test_init();
    test_watchdog_start(NULL, NULL);
    one("REALTIME deadline, the real-time clock stepped back 8 s", CLOCK_REALTIME, 1);
    one("REALTIME deadline", CLOCK_REALTIME, 0);
    one("MONOTONIC deadline", CLOCK_MONOTONIC, 0);
    deadline();
    test_watchdog_stop();
    return done_testing();
}
