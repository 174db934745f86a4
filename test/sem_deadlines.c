/* SPDX-License-Identifier: MIT */
/* sem_deadlines: timed waits on an empty semaphore end with ETIMEDOUT never before their
 * deadline and not absurdly late. timedwait (CLOCK_MONOTONIC), clockwait(CLOCK_MONOTONIC)
 * and clockwait(CLOCK_REALTIME), deadlines 1, 5 and 20 ms ahead, 3 times each: the same
 * clock read after the return is >= the deadline and < deadline + 2 s; the value stays 0
 * and no waiter is left registered. Also fastsync_deadline_in(): now + ns, bracketed by
 * clock reads before and after the call, tv_nsec normalized (carries into tv_sec),
 * non-decreasing in ns and over time, no wrap for huge ns; a wait on deadline_in(0)
 * times out without a futex call. */
#include "harness.h"

#define REPS 3

/* ts compare: -1, 0, 1 */
static int ts_cmp(struct timespec a, struct timespec b)
{
    if (a.tv_sec != b.tv_sec) return a.tv_sec < b.tv_sec ? -1 : 1;
    return a.tv_nsec < b.tv_nsec ? -1 : a.tv_nsec > b.tv_nsec;
}

enum { VIA_TIMEDWAIT, VIA_CLOCK_MONO, VIA_CLOCK_RT, VIAS };
static const char *const via_name[VIAS] = { "timedwait", "clockwait(MONOTONIC)", "clockwait(REALTIME)" };

static void deadlines(int via, int ms)
{
    clockid_t clock = via == VIA_CLOCK_RT ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    fastsync_sem_t s;
    if (fastsync_sem_init(&s, 0, 0) != 0) bail("fastsync_sem_init failed");
    int bad_code = 0, code = 0, early = 0, late = 0, bad_value = 0, registered = 0;
    int64_t min_margin = INT64_MAX, max_margin = INT64_MIN;
    for (int rep = 0; rep < REPS; rep++) {
        struct timespec d = test_deadline_on(clock, (uint64_t)ms * 1000000u);
        if (via == VIA_TIMEDWAIT && rep == 0) d = fastsync_deadline_in((uint64_t)ms * 1000000u);
        int r = via == VIA_TIMEDWAIT ? fastsync_sem_timedwait(&s, &d) : fastsync_sem_clockwait(&s, clock, &d);
        int64_t margin = test_clock_ns(clock) - test_ts_ns(d);
        if (r != ETIMEDOUT) {
            bad_code++;
            code = r;
        }
        if (margin < 0) early++;
        if (margin >= 2000000000) late++;
        if (margin < min_margin) min_margin = margin;
        if (margin > max_margin) max_margin = margin;
        if (fastsync_sem_getvalue(&s) != 0) bad_value++;
        if (test_sem_waiters(&s) != 0) registered++;
    }
    if (fastsync_sem_destroy(&s) != 0) registered++;
    const char *v = via_name[via];
    if (!is_int(bad_code, 0, "%s %d ms: ETIMEDOUT x %d", v, ms, REPS)) diag("  last code %d", code);
    if (!is_int(early, 0, "%s %d ms: never before the deadline (min %+" PRId64 " us)", v, ms, min_margin / 1000))
        diag("  %d of %d waits returned early, the earliest %" PRId64 " ns before the deadline", early, REPS,
             -min_margin);
    is_int(late, 0, "%s %d ms: not absurdly late (max %+" PRId64 " us, < 2 s)", v, ms, max_margin / 1000);
    is_int(bad_value, 0, "%s %d ms: value still 0", v, ms);
    is_int(registered, 0, "%s %d ms: no waiter left registered", v, ms);
}

static void deadline_in_props(void)
{
    static const uint64_t fixed[] = { 0, 1, 999, 1000, 999999, 1000000, 999999999, 1000000000, 1000000001,
                                      1500000000, 2999999999u, 86400000000000ull, 1000000000000000000ull };
    enum { NFIXED = sizeof fixed / sizeof fixed[0], NRANDOM = 200 };
    uint64_t rng = test_stream(5);
    int bracket = 0, normal = 0, carries = 0;
    for (int i = 0; i < NFIXED + NRANDOM; i++) {
        uint64_t ns = i < NFIXED ? fixed[i] : test_rand(&rng) % (i % 2 ? 1000000000u : 100000000000000ull);
        struct timespec before, after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        struct timespec d = fastsync_deadline_in(ns);
        clock_gettime(CLOCK_MONOTONIC, &after);
        if (d.tv_nsec < 0 || d.tv_nsec >= 1000000000L) {
            if (normal++ == 0) diag("deadline_in(%" PRIu64 ") = {%lld, %ld}", ns, (long long)d.tv_sec, d.tv_nsec);
            continue;
        }
        /* before + ns <= d <= after + ns */
        if (test_ts_ns(d) - (int64_t)ns < test_ts_ns(before) || test_ts_ns(d) - (int64_t)ns > test_ts_ns(after)) {
            if (bracket++ == 0)
                diag("deadline_in(%" PRIu64 ") = %" PRId64 " ns, clock before %" PRId64 ", after %" PRId64, ns,
                     test_ts_ns(d), test_ts_ns(before), test_ts_ns(after));
        }
        if ((uint64_t)before.tv_nsec + ns % 1000000000u >= 1000000000u) carries++;
    }
    is_int(normal, 0, "deadline_in: tv_nsec always in [0, 1e9) (%d values)", NFIXED + NRANDOM);
    is_int(bracket, 0, "deadline_in(ns): between clock-before + ns and clock-after + ns");
    ok(carries > 0, "deadline_in: nanosecond carries into tv_sec were exercised (%d)", carries);

    /* non-decreasing over time and in ns */
    int back = 0;
    struct timespec prev = fastsync_deadline_in(1000);
    for (int i = 0; i < 10000; i++) {
        struct timespec d = fastsync_deadline_in(1000);
        if (ts_cmp(d, prev) < 0) back++;
        prev = d;
    }
    is_int(back, 0, "deadline_in(1 us) called 10000 times: never goes back");
    struct timespec a = fastsync_deadline_in(INT64_MAX), b = fastsync_deadline_in(UINT64_MAX - 1),
                    c = fastsync_deadline_in(UINT64_MAX), now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    bool wide = sizeof(time_t) >= 8; /* with a 32-bit time_t all three saturate */
    ok(ts_cmp(now, a) < 0 && (wide ? ts_cmp(a, b) < 0 : ts_cmp(a, b) <= 0) && ts_cmp(b, c) <= 0,
       "deadline_in: now < (INT64_MAX ns) < (UINT64_MAX-1 ns) <= (UINT64_MAX ns): no wrap (%lld, %lld, %lld s)",
       (long long)a.tv_sec, (long long)b.tv_sec, (long long)c.tv_sec);
    ok(a.tv_nsec >= 0 && a.tv_nsec < 1000000000L && c.tv_nsec >= 0 && c.tv_nsec < 1000000000L,
       "deadline_in of huge values: tv_nsec normalized");

    /* deadline_in(0) is already past when the wait looks at it: no futex call */
    fastsync_sem_t s;
    if (fastsync_sem_init(&s, 0, 0) != 0) bail("fastsync_sem_init failed");
    unsigned long w0 = test_kernel_waits();
    struct timespec d0 = fastsync_deadline_in(0);
    is_int(fastsync_sem_timedwait(&s, &d0), ETIMEDOUT, "timedwait(deadline_in(0)): ETIMEDOUT");
    is_int(test_kernel_waits() - w0, 0, "... without a futex wait");
    d0 = fastsync_deadline_in(0);
    is_int(fastsync_sem_clockwait(&s, CLOCK_MONOTONIC, &d0), ETIMEDOUT, "clockwait(MONOTONIC, deadline_in(0)): ETIMEDOUT");
    struct timespec d1 = fastsync_deadline_in(1);
    is_int(fastsync_sem_timedwait(&s, &d1), ETIMEDOUT, "timedwait(deadline_in(1 ns)): ETIMEDOUT");
    ok(ts_cmp(d1, (struct timespec){ 0, 0 }) > 0 && test_clock_ns(CLOCK_MONOTONIC) >= test_ts_ns(d1), "... and not early");
    is_int(fastsync_sem_destroy(&s), 0, "no waiter left registered");
}

static void dump(void *unused)
{
    (void)unused;
    diag("a timed wait did not end (single thread: the semaphore is at 0, nobody posts)");
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL); /* a wait that never times out becomes a failure */
    static const int ms[] = { 1, 5, 20 };
    for (int via = 0; via < VIAS; via++)
        for (int i = 0; i < 3; i++) deadlines(via, ms[i]);
    deadline_in_props();
    test_watchdog_stop();
    return done_testing();
}
