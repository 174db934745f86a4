/* SPDX-License-Identifier: MIT */
/* cond_api: every return code of fastsync_cond_t that one thread can see. init (0, EINVAL for
 * bad flags, FASTSYNC_SHARED as the backend has it), the static initializer, the size;
 * destroy EBUSY while a ticket is registered, 0 once it is cancelled or awaited; wait on an
 * unlocked mutex EPERM (no ticket left); timedwait/clockwait: EINVAL (NULL, another clock,
 * a bad tv_nsec) and ETIMEDOUT for a past deadline, each at once with the mutex still held,
 * and ETIMEDOUT after a short sleep with the mutex held again; the ticket's awaits: EINVAL
 * and ETIMEDOUT, each leaving no ticket registered; a signal pending for a ticket is taken
 * by await at once, even with a past deadline; with FASTSYNC_COND_TICKETS_MAX (2047) tickets
 * registered, register and wait say EAGAIN, and every ticket can still be cancelled. */
#include "harness.h"

static fastsync_cond_t gc = FASTSYNC_COND_INIT;

int main(void)
{
    test_init();
    fastsync_cond_t c;
    fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
    fastsync_cond_ticket_t t;
    struct timespec d;

    ok(sizeof(fastsync_cond_t) == 16, "sizeof(fastsync_cond_t) == 16");
    ok(sizeof(fastsync_cond_ticket_t) == 8, "sizeof(fastsync_cond_ticket_t) == 8");
    is_int(fastsync_cond_init(&c, 0), 0, "init, private");
    is_int(fastsync_cond_init(&c, 2), EINVAL, "init, unknown flag: EINVAL");
    is_int(fastsync_cond_init(&c, -1), EINVAL, "init, flags -1: EINVAL");
    is_int(fastsync_cond_init(&c, FASTSYNC_SHARED), FASTSYNC_HAS_SHARED ? 0 : EINVAL,
           "init, FASTSYNC_SHARED: %s on the %s backend", FASTSYNC_HAS_SHARED ? "0" : "EINVAL", FASTSYNC_BACKEND);
    is_int(fastsync_cond_init(&c, 0), 0, "init again");
    is_int(fastsync_cond_destroy(&gc), 0, "FASTSYNC_COND_INIT: destroy says 0");
    is_int(test_cond_word(&gc), 0, "FASTSYNC_COND_INIT: an all-zero word");

    is_int(fastsync_cond_register(&c, &t), 0, "register");
    is_int(test_cond_waiters(&c), 1, "one ticket registered");
    is_int(fastsync_cond_destroy(&c), EBUSY, "destroy with a ticket registered: EBUSY");
    is_int(fastsync_cond_cancel(&c, &t), 0, "cancel");
    is_int(fastsync_cond_destroy(&c), 0, "destroy after the cancel: 0");

    is_int(fastsync_cond_wait(&c, &m), EPERM, "wait on an unlocked mutex: EPERM");
    is_int(test_cond_waiters(&c), 0, "... no ticket left");
    is_int(test_mutex_state(&m), 0, "... the mutex still unlocked");

    fastsync_mutex_lock(&m);
    is_int(fastsync_cond_timedwait(&c, &m, NULL), EINVAL, "timedwait, NULL: EINVAL");
    d = fastsync_deadline_in(1000000000);
    is_int(fastsync_cond_clockwait(&c, &m, CLOCK_BOOTTIME, &d), EINVAL, "clockwait, another clock: EINVAL");
    d.tv_nsec = 1000000000;
    is_int(fastsync_cond_timedwait(&c, &m, &d), EINVAL, "timedwait, tv_nsec 1e9: EINVAL");
    d = test_ts(0, 0);
    unsigned long w0 = test_kernel_waits();
    is_int(fastsync_cond_timedwait(&c, &m, &d), ETIMEDOUT, "timedwait, past deadline: ETIMEDOUT");
    is_int(fastsync_cond_clockwait(&c, &m, CLOCK_REALTIME, &d), ETIMEDOUT, "clockwait REALTIME, past: ETIMEDOUT");
    is_int(test_kernel_waits() - w0, 0, "... no syscall");
    is_int(test_mutex_state(&m), 1, "... the mutex held throughout");
    d = fastsync_deadline_in(20000000);
    is_int(fastsync_cond_timedwait(&c, &m, &d), ETIMEDOUT, "timedwait 20 ms, no signal: ETIMEDOUT");
    ok(test_clock_ns(CLOCK_MONOTONIC) >= test_ts_ns(d), "... not before the deadline");
    is_int(test_mutex_state(&m), 1, "... the mutex held again");
    d = test_deadline_on(CLOCK_REALTIME, 20000000);
    is_int(fastsync_cond_clockwait(&c, &m, CLOCK_REALTIME, &d), ETIMEDOUT, "clockwait REALTIME 20 ms: ETIMEDOUT");
    is_int(test_cond_waiters(&c), 0, "... no ticket left");
    is_int(fastsync_mutex_unlock(&m), 0, "the mutex was locked");

    is_int(fastsync_cond_register(&c, &t), 0, "register");
    is_int(fastsync_cond_timedawait(&c, &t, NULL), EINVAL, "timedawait, NULL: EINVAL");
    is_int(test_cond_waiters(&c), 0, "... the ticket deregistered");
    fastsync_cond_register(&c, &t);
    d = fastsync_deadline_in(1000000000);
    is_int(fastsync_cond_clockawait(&c, &t, CLOCK_BOOTTIME, &d), EINVAL, "clockawait, another clock: EINVAL");
    is_int(test_cond_waiters(&c), 0, "... the ticket deregistered");
    fastsync_cond_register(&c, &t);
    d.tv_nsec = -1;
    is_int(fastsync_cond_timedawait(&c, &t, &d), EINVAL, "timedawait, tv_nsec -1: EINVAL");
    is_int(test_cond_waiters(&c), 0, "... the ticket deregistered");
    fastsync_cond_register(&c, &t);
    d = test_ts(-1, 0);
    is_int(fastsync_cond_timedawait(&c, &t, &d), ETIMEDOUT, "timedawait, tv_sec -1: ETIMEDOUT");
    is_int(test_cond_waiters(&c), 0, "... the ticket deregistered");
    fastsync_cond_register(&c, &t);
    d = fastsync_deadline_in(20000000);
    is_int(fastsync_cond_timedawait(&c, &t, &d), ETIMEDOUT, "timedawait 20 ms: ETIMEDOUT");
    is_int(fastsync_cond_destroy(&c), 0, "... destroy says 0");

    fastsync_cond_register(&c, &t);
    is_int(fastsync_cond_signal(&c), 0, "signal with a ticket registered: 0");
    is_int(test_cond_pending(&c), 1, "... one signal pending");
    d = test_ts(0, 0);
    is_int(fastsync_cond_timedawait(&c, &t, &d), 0, "timedawait, past deadline, signal pending: 0");
    is_int(test_cond_left(&c), 0, "... no ticket, no signal left");
    fastsync_cond_register(&c, &t);
    is_int(fastsync_cond_broadcast(&c), 0, "broadcast with a ticket registered: 0");
    is_int(fastsync_cond_await(&c, &t), 0, "await after it: 0 at once");
    is_int(test_cond_left(&c), 0, "... no ticket, no signal left");
    is_int(fastsync_cond_destroy(&c), 0, "destroy");

    static fastsync_cond_ticket_t many[FASTSYNC_COND_TICKETS_MAX];
    int all = 1;
    for (int i = 0; i < FASTSYNC_COND_TICKETS_MAX; i++) all &= fastsync_cond_register(&c, &many[i]) == 0;
    ok(all, "%d tickets registered", FASTSYNC_COND_TICKETS_MAX);
    is_int(fastsync_cond_register(&c, &t), EAGAIN, "register with %d tickets registered: EAGAIN",
           FASTSYNC_COND_TICKETS_MAX);
    fastsync_mutex_lock(&m);
    is_int(fastsync_cond_wait(&c, &m), EAGAIN, "wait with %d tickets registered: EAGAIN", FASTSYNC_COND_TICKETS_MAX);
    is_int(test_mutex_state(&m), 1, "... the mutex held");
    fastsync_mutex_unlock(&m);
    is_int(test_cond_waiters(&c), FASTSYNC_COND_TICKETS_MAX, "... the count unchanged");
    is_int(fastsync_cond_signal(&c), 0, "a signal to the full condvar");
    for (int i = 0; i < FASTSYNC_COND_TICKETS_MAX; i++) all &= fastsync_cond_cancel(&c, &many[i]) == 0;
    ok(all, "every ticket cancelled");
    is_int(test_cond_left(&c), 0, "... no ticket, no signal left");
    is_int(fastsync_cond_destroy(&c), 0, "destroy");
    return done_testing();
}
