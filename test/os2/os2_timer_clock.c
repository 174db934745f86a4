/* SPDX-License-Identifier: MIT */
/* os2_timer_clock: fastsync_os2.h with FASTSYNC_OS2_TIMER_CLOCK, the clock of OpenWatcom
 * and of C libraries without clock_gettime: CLOCK_MONOTONIC read from DosTmrQueryTime /
 * DosTmrQueryFreq (1.19 MHz: 0.84 us per tick), CLOCK_REALTIME from gettimeofday.
 *  - fastsync_deadline_in(ns) is now + ns on the timer: between the system's monotonic
 *    clock before the call, less one timer tick, and after it;
 *  - it never goes back; deadline_in(0) is already past for the next wait (no sleep);
 *  - timed waits of 1..100 ms on both clocks time out, never before their deadline on the
 *    timer nor on the system clock, and not absurdly late;
 *  - a post 30 ms into a 2 s timed wait ends it with the token. */
#define FASTSYNC_OS2_TIMER_CLOCK 1
#include "harness.h"

static int64_t ns_of(struct timespec t) { return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec; }

static fastsync_sem_t s;

static void *poster(void *unused)
{
    (void)unused;
    test_sleep_ns(30000000);
    fastsync_sem_post(&s);
    return NULL;
}

int main(void)
{
    test_init();
    test_watchdog_start(NULL, NULL);
    const int64_t tick = 1000000000 / 1193182 + 1; /* ns per timer tick, rounded up */

    int bracket = 0, back = 0;
    struct timespec prev = fastsync_deadline_in(0);
    for (int i = 0; i < 2000; i++) {
        int64_t ns = (int64_t)(i % 7) * 1000003;
        struct timespec before, after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        struct timespec d = fastsync_deadline_in((uint64_t)ns);
        clock_gettime(CLOCK_MONOTONIC, &after);
        if (ns_of(d) - ns < ns_of(before) - tick || ns_of(d) - ns > ns_of(after)) {
            if (bracket++ == 0)
                diag("deadline_in(%lld) = %lld, clock before %lld, after %lld", (long long)ns,
                     (long long)ns_of(d), (long long)ns_of(before), (long long)ns_of(after));
        }
        struct timespec z = fastsync_deadline_in(0);
        if (ns_of(z) < ns_of(prev)) back++;
        prev = z;
    }
    is_int(bracket, 0, "deadline_in(ns) is clock + ns within one timer tick (0.84 us)");
    is_int(back, 0, "deadline_in(0) never goes back");

    fastsync_sem_init(&s, 0, 0);
    unsigned long w0 = test_kernel_waits();
    struct timespec z = fastsync_deadline_in(0);
    is_int(fastsync_sem_timedwait(&s, &z), ETIMEDOUT, "deadline_in(0): ETIMEDOUT");
    is_int(test_kernel_waits() - w0, 0, "... without a wait on the semaphore");

    static const int ms[] = { 1, 2, 10, 31, 45, 100 };
    int early_timer = 0, early_sys = 0, late = 0, code = 0;
    for (int c = 0; c < 2; c++) {
        clockid_t clock = c ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        for (unsigned i = 0; i < sizeof ms / sizeof ms[0]; i++) {
            struct timespec d, sys_d, after_sys;
            if (clock == CLOCK_MONOTONIC) {
                d = fastsync_deadline_in((uint64_t)ms[i] * 1000000);
            } else {
                clock_gettime(CLOCK_REALTIME, &d);
                d.tv_nsec += (long)ms[i] * 1000000;
                while (d.tv_nsec >= 1000000000L) { d.tv_sec++; d.tv_nsec -= 1000000000L; }
            }
            sys_d = d;
            int r = fastsync_sem_clockwait(&s, clock, &d);
            clock_gettime(clock, &after_sys);
            struct timespec after_timer = fastsync_deadline_in(0);
            if (r != ETIMEDOUT) code++;
            if (clock == CLOCK_MONOTONIC && ns_of(after_timer) < ns_of(d)) early_timer++;
            if (ns_of(after_sys) < ns_of(sys_d)) early_sys++;
            if (ns_of(after_sys) - ns_of(sys_d) > 2000000000) late++;
        }
    }
    is_int(code, 0, "timed waits of 1..100 ms on both clocks: ETIMEDOUT");
    is_int(early_timer, 0, "... never before the deadline on the timer");
    is_int(early_sys, 0, "... never before the deadline on the system clock");
    is_int(late, 0, "... not absurdly late (< 2 s)");

    pthread_t t = test_thread_start(poster, NULL);
    struct timespec d = fastsync_deadline_in(2000000000u);
    is_int(fastsync_sem_timedwait(&s, &d), 0, "a post 30 ms into a 2 s timed wait: 0");
    test_thread_join(t);
    is_int(fastsync_sem_destroy(&s), 0, "no waiter left registered");
    test_watchdog_stop();
    return done_testing();
}
