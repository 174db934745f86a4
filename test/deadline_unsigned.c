/* SPDX-License-Identifier: MIT */
/* deadline_unsigned: the deadline arithmetic holds for an unsigned time_t (issue 17, item
 * 6). OpenWatcom's time_t is an unsigned 32-bit long; there a deadline already past made
 * `abstime->tv_sec - now.tv_sec` wrap to "more than a second ahead", and the waiter slept
 * one-second slices for ever. The header's seconds difference, FASTSYNC__SEC_DIFF, compares
 * before it subtracts; here it is applied to uint32_t (OpenWatcom's type) and to signed
 * 32- and 64-bit types on both sides of each other, at the edges; then fastsync__until,
 * which uses it, on this system's time_t: deadlines 2 s and 1 ns in the past, 0.5 s and 5 s
 * ahead, on both clocks; then real waits with deadlines past and just before a second
 * boundary. The OS/2 double also builds it with an unsigned time_t
 * (deadline_unsigned_os2_utime: test/os2/unsigned_time.h), where the OS/2 backend's every
 * use of time_t runs unsigned, as under OpenWatcom. */
#include "harness.h"

static void sec_diff(void)
{
    uint32_t u5 = 5, u7 = 7, u0 = 0, umax = UINT32_MAX;
    is_int((int)FASTSYNC__SEC_DIFF(u5, u7), -2, "unsigned 32: 5 - 7 = -2 (a deadline 2 s past)");
    is_int((int)FASTSYNC__SEC_DIFF(u7, u5), 2, "unsigned 32: 7 - 5 = 2");
    is_int((int)FASTSYNC__SEC_DIFF(u5, u5), 0, "unsigned 32: 5 - 5 = 0");
    ok(FASTSYNC__SEC_DIFF(u0, umax) == -(int64_t)UINT32_MAX, "unsigned 32: 0 - UINT32_MAX = -4294967295");
    ok(FASTSYNC__SEC_DIFF(umax, u0) == (int64_t)UINT32_MAX, "unsigned 32: UINT32_MAX - 0 = 4294967295");
    int32_t s5 = 5, s7 = 7, smax = INT32_MAX;
    is_int((int)FASTSYNC__SEC_DIFF(s5, s7), -2, "signed 32: 5 - 7 = -2");
    ok(FASTSYNC__SEC_DIFF(smax, s5) == (int64_t)INT32_MAX - 5, "signed 32: INT32_MAX - 5");
    int64_t l5 = 5, lmax = INT64_MAX;
    ok(FASTSYNC__SEC_DIFF(l5, lmax) == 5 - INT64_MAX, "signed 64: 5 - INT64_MAX, no overflow");
    ok(FASTSYNC__SEC_DIFF(lmax, l5) == INT64_MAX - 5, "signed 64: INT64_MAX - 5");
}

/* Deadlines 2 s and 1 ns before now on clock. */
static void pasts(clockid_t clock, struct timespec *past2, struct timespec *past1ns)
{
    struct timespec now;
    fastsync__clock_now(clock, &now);
    *past2 = *past1ns = now;
    past2->tv_sec -= 2;
    if (past1ns->tv_nsec > 0) {
        past1ns->tv_nsec -= 1;
    } else {
        past1ns->tv_sec -= 1;
        past1ns->tv_nsec = 999999999L;
    }
}

static void until(clockid_t clock, const char *name)
{
    struct timespec past2, past1ns;
    pasts(clock, &past2, &past1ns);
    ok(fastsync__until(clock, &past2) <= 0, "%s: a deadline 2 s past has passed", name);
    ok(fastsync__until(clock, &past1ns) <= 0, "%s: a deadline 1 ns past has passed", name);
    struct timespec half = test_deadline_on(clock, 500000000u), five = test_deadline_on(clock, 5000000000u);
    int64_t h = fastsync__until(clock, &half);
    ok(h > 0 && h <= 500000000, "%s: 0.5 s ahead: (0, 0.5 s] left (%" PRId64 " ns)", name, h);
    is_int((int)(fastsync__until(clock, &five) / 1000000), 1000, "%s: 5 s ahead reads as one second", name);
}

/* Whether a wait on an empty semaphore with deadline d timed out, and not early. */
static bool times_out(clockid_t clock, const struct timespec *d)
{
    fastsync_sem_t s;
    fastsync_sem_init(&s, 0, 0);
    int r = fastsync_sem_clockwait(&s, clock, d);
    int64_t now = test_clock_ns(clock);
    bool late_enough = now >= test_ts_ns(*d);
    if (r != ETIMEDOUT || !late_enough)
        diag("  returned %d at %" PRId64 " ns, deadline %" PRId64 " ns", r, now, test_ts_ns(*d));
    return r == ETIMEDOUT && late_enough;
}

/* Real waits (the watchdog catches one that never ends): deadlines 2 s and 1 ns past on
 * both clocks, and 1, 5 and 11 ms before a second boundary on CLOCK_MONOTONIC (over the
 * OS/2 backend with an unsigned time_t, 4 of 9 such waits once slept for ever). */
static void waits(void)
{
    static const clockid_t clocks[2] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
    for (int c = 0; c < 2; c++) {
        const char *name = c == 0 ? "MONOTONIC" : "REALTIME";
        struct timespec past2, past1ns;
        pasts(clocks[c], &past2, &past1ns);
        ok(times_out(clocks[c], &past2), "%s: a wait with a deadline 2 s past says ETIMEDOUT", name);
        ok(times_out(clocks[c], &past1ns), "%s: a wait with a deadline 1 ns past says ETIMEDOUT", name);
    }
    static const long before_ms[3] = { 1, 5, 11 };
    for (int i = 0; i < 3; i++) {
        struct timespec now, d;
        fastsync__clock_now(CLOCK_MONOTONIC, &now);
        d.tv_sec = now.tv_sec + (now.tv_nsec < 1000000000L - 20000000L ? 0 : 1);
        d.tv_nsec = 1000000000L - before_ms[i] * 1000000L;
        ok(times_out(CLOCK_MONOTONIC, &d), "MONOTONIC: a deadline %ld ms before a second boundary: ETIMEDOUT, not early",
           before_ms[i]);
    }
}

int main(void)
{
    test_init();
    test_watchdog_start(NULL, NULL);
#if defined(OS2DBL_UNSIGNED_TIME)
    ok((time_t)-1 > 0, "time_t is unsigned in this build (test/os2/unsigned_time.h)");
#endif
    sec_diff();
    until(CLOCK_MONOTONIC, "MONOTONIC");
    until(CLOCK_REALTIME, "REALTIME");
    waits();
    test_watchdog_stop();
    return done_testing();
}
