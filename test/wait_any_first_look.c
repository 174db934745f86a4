/* SPDX-License-Identifier: MIT */
/* wait_any_first_look: a wait_any begins at its first look. An event entry is ready "if it
 * was set since the wait began (even if reset again)", and the wait begins at the first look
 * of its entries, as fastsync_event_wait begins at its first load: a set followed by a reset
 * between that look and the rest of the wait is not missed. The window is forced: the
 * header's test hook FASTSYNC__WA_BETWEEN_LOOKS, defined here, runs in the waiting thread
 * right after the first look found nothing ready, and sets then resets the event there (as
 * other threads could have). Then timedwait_any over [event] (and over [semaphore, event],
 * the event second) must return 0 with the event's index at once, not time out. Before the
 * fix the generation was taken at the second look, after the set and reset, and every case
 * slept to its 200 ms deadline (ETIMEDOUT; shown with the hook added to a copy of 0.2's
 * header at the same place). Also with the fallback (wait_any_first_look_fallback). */
static void test_between_looks(void);
#define FASTSYNC__WA_BETWEEN_LOOKS() test_between_looks()
#include "harness.h"

static fastsync_event_t ev;
static fastsync_sem_t sem;
static int armed; /* the hook sets and resets ev once, then disarms */
static unsigned hooked;

static void dump(void *unused)
{
    (void)unused;
    test_dump_event("the event", &ev);
}

static void test_between_looks(void)
{
    hooked++;
    if (!armed) return;
    armed = 0;
    fastsync_event_set(&ev);
    fastsync_event_reset(&ev);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL); /* the untimed wait below would sleep for ever */
    fastsync_wait_entry_t one[1], two[2];
    unsigned index;
    struct timespec d;

    fastsync_event_init(&ev, 0, 0);
    fastsync_sem_init(&sem, 0, 0);
    one[0] = fastsync_wait_event(&ev);
    two[0] = fastsync_wait_sem(&sem);
    two[1] = fastsync_wait_event(&ev);

    /* no set: the hook runs, nothing is ready, the wait times out (the window exists) */
    armed = 0;
    hooked = 0;
    d = fastsync_deadline_in(20000000);
    is_int(fastsync_timedwait_any(one, 1, &index, &d), ETIMEDOUT, "no set: ETIMEDOUT");
    is_int((long)hooked, 1, "... the hook ran once, between the looks");

    for (int clock = 0; clock < 2; clock++) {
        clockid_t ck = clock ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        const char *cn = clock ? "REALTIME" : "MONOTONIC";
        armed = 1;
        index = 99;
        d = test_deadline_on(ck, 200000000);
        is_int(fastsync_clockwait_any(one, 1, &index, ck, &d), 0,
               "[event], %s: set and reset between the looks: 0", cn);
        is_int((long)index, 0, "... index 0, the event");
        ok(!fastsync_event_is_set(&ev), "... the event left reset");

        armed = 1;
        index = 99;
        d = test_deadline_on(ck, 200000000);
        is_int(fastsync_clockwait_any(two, 2, &index, ck, &d), 0,
               "[semaphore, event], %s: the same: 0", cn);
        is_int((long)index, 1, "... index 1, the event");
        is_int((long)test_sem_waiters(&sem), 0, "... no waiter left on the semaphore");
    }

    /* untimed, too */
    armed = 1;
    index = 99;
    is_int(fastsync_wait_any(one, 1, &index), 0, "wait_any, untimed: 0");
    is_int((long)index, 0, "... index 0");
    test_watchdog_stop();
    return done_testing();
}
