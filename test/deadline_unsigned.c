/* SPDX-License-Identifier: MIT */
/* deadline_unsigned: the deadline arithmetic holds for an unsigned time_t (issue 17, item
 * 6). OpenWatcom's time_t is an unsigned 32-bit long; there a deadline already past made
 * `abstime->tv_sec - now.tv_sec` wrap to "more than a second ahead", and the waiter slept
 * one-second slices for ever. The header's seconds difference, FASTSYNC__SEC_DIFF, compares
 * before it subtracts; here it is applied to uint32_t (OpenWatcom's type) and to signed
 * 32- and 64-bit types on both sides of each other, at the edges; then fastsync__until,
 * which uses it, on this system's time_t: deadlines 2 s and 1 ns in the past, 0.5 s and 5 s
 * ahead, on both clocks. (A build of the OS/2 double with an unsigned time_t would run the
 * header's every use of it; the double runs this test with the system's time_t.) */
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

static void until(clockid_t clock, const char *name)
{
    struct timespec now;
    fastsync__clock_now(clock, &now);
    struct timespec past2 = now, past1ns = now;
    past2.tv_sec -= 2;
    if (past1ns.tv_nsec > 0) {
        past1ns.tv_nsec -= 1;
    } else {
        past1ns.tv_sec -= 1;
        past1ns.tv_nsec = 999999999L;
    }
    ok(fastsync__until(clock, &past2) <= 0, "%s: a deadline 2 s past has passed", name);
    ok(fastsync__until(clock, &past1ns) <= 0, "%s: a deadline 1 ns past has passed", name);
    struct timespec half = test_deadline_on(clock, 500000000u), five = test_deadline_on(clock, 5000000000u);
    int64_t h = fastsync__until(clock, &half);
    ok(h > 0 && h <= 500000000, "%s: 0.5 s ahead: (0, 0.5 s] left (%" PRId64 " ns)", name, h);
    is_int((int)(fastsync__until(clock, &five) / 1000000), 1000, "%s: 5 s ahead reads as one second", name);
}

int main(void)
{
    test_init();
    sec_diff();
    until(CLOCK_MONOTONIC, "MONOTONIC");
    until(CLOCK_REALTIME, "REALTIME");
    return done_testing();
}
