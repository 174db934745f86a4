/* SPDX-License-Identifier: MIT */
/* cond_api: every return code of fastsync_cond_t that one thread can see. init (0, EINVAL for
 * bad flags, FASTSYNC_SHARED as the backend has it), the static initializer, the size;
 * destroy EBUSY while a ticket is registered, 0 once it is cancelled or awaited; wait on an
 * unlocked mutex EPERM (no ticket left); timedwait/clockwait: EINVAL (NULL, another clock,
 * a bad tv_nsec) and ETIMEDOUT for a past deadline, each at once with the mutex still held,
 * and ETIMEDOUT after a short sleep with the mutex held again; the ticket's awaits: EINVAL
 * and ETIMEDOUT, each leaving no ticket registered; a signal pending for a ticket is taken
 * by await at once, even with a past deadline; with FASTSYNC_COND_TICKETS_MAX (2047) tickets
 * registered, register and wait say EAGAIN, and every ticket can still be cancelled.
 * destroy (issue 16, item 5): EBUSY while a ticket that nothing has called is registered (two
 * tickets, one signal: one of them is uncalled), 0 once none is registered.
 * A malformed deadline (issue 16, item 3; tv_nsec 2e9 or -1, or tv_sec and tv_nsec -1) is
 * EINVAL only when the call would block: on a ticket a signal or broadcast has called,
 * timedawait, clockawait MONOTONIC and clockawait REALTIME return 0 (the signal is not
 * consumed by an EINVAL); on a ticket with nothing for it, EINVAL, and the ticket is gone
 * (destroy 0); with two tickets and one signal, either the first's await returns 0 and the
 * second's look ETIMEDOUT, or the first's EINVAL and the second's look 0: the signal returns
 * once. A NULL deadline or another clock: EINVAL even with a signal there, the ticket gone,
 * and with two tickets the signal left to the other. The mutex form keeps its rule: EINVAL
 * at once with the mutex held, a signal meant for a registered ticket untouched.
 * Under the watchdog: a destroy or an await that hangs is a failure. */
#include "harness.h"

static fastsync_cond_t gc = FASTSYNC_COND_INIT;

/* The three deadline-taking awaits, by number. */
enum { AW_TIMED, AW_MONO, AW_REAL, AW_KINDS };
static const char *const aw_name[AW_KINDS] = { "timedawait", "clockawait MONOTONIC", "clockawait REALTIME" };

static int await_by(int how, fastsync_cond_t *c, fastsync_cond_ticket_t *t, const struct timespec *d)
{
    if (how == AW_TIMED) return fastsync_cond_timedawait(c, t, d);
    return fastsync_cond_clockawait(c, t, how == AW_MONO ? CLOCK_MONOTONIC : CLOCK_REALTIME, d);
}

/* The mutex form of the same three. */
static int wait_by(int how, fastsync_cond_t *c, fastsync_mutex_t *m, const struct timespec *d)
{
    if (how == AW_TIMED) return fastsync_cond_timedwait(c, m, d);
    return fastsync_cond_clockwait(c, m, how == AW_MONO ? CLOCK_MONOTONIC : CLOCK_REALTIME, d);
}

/* The malformed deadlines: a second ahead on the call's clock with tv_nsec 2e9 or -1, and
 * tv_sec and tv_nsec both -1 (a past second, were it well-formed). */
enum { BAD_KINDS = 3 };
static const char *const bad_name[BAD_KINDS] = { "tv_nsec 2e9", "tv_nsec -1", "tv_sec -1, tv_nsec -1" };

static struct timespec bad_deadline(int how, int bad)
{
    if (bad == 2) return test_ts(-1, -1);
    struct timespec d = test_deadline_on(how == AW_REAL ? CLOCK_REALTIME : CLOCK_MONOTONIC, 1000000000);
    d.tv_nsec = bad == 0 ? 2000000000L : -1L;
    return d;
}

static const char *code_name(int r)
{
    return r == 0 ? "0" : r == EINVAL ? "EINVAL" : r == ETIMEDOUT ? "ETIMEDOUT" : r == EBUSY ? "EBUSY" : "?";
}

/* A look: timedawait with a deadline already past (0 if a signal or broadcast is there). */
static int look(fastsync_cond_t *c, fastsync_cond_ticket_t *t)
{
    struct timespec past = test_ts(0, 0);
    return fastsync_cond_timedawait(c, t, &past);
}

/* destroy (issue 16, item 5): EBUSY only while an uncalled ticket is registered. One thread:
 * no ticket that a signal called is left registered when destroy is called (destroy may wait
 * for such a ticket to finish). */
static void destroy_busy(fastsync_cond_t *c)
{
    fastsync_cond_ticket_t a, b;
    is_int(fastsync_cond_destroy(c), 0, "destroy, no ticket: 0");
    fastsync_cond_register(c, &a);
    fastsync_cond_register(c, &b);
    is_int(fastsync_cond_destroy(c), EBUSY, "destroy, two uncalled tickets: EBUSY");
    is_int(fastsync_cond_signal(c), 0, "signal");
    is_int(fastsync_cond_destroy(c), EBUSY, "destroy, two tickets, one signal (one uncalled): EBUSY");
    int ra = look(c, &a), rb = look(c, &b);
    ok((ra == 0) != (rb == 0) && (ra == ETIMEDOUT || rb == ETIMEDOUT),
       "... then the two looks: one 0, one ETIMEDOUT (A %s, B %s)", code_name(ra), code_name(rb));
    is_int(fastsync_cond_destroy(c), 0, "destroy, both tickets gone: 0");
}

/* A malformed deadline on a ticket (issue 16, item 3), for one await and one bad deadline. */
static void bad_on_ticket(fastsync_cond_t *c, int how, int bad)
{
    fastsync_cond_ticket_t a, b;
    struct timespec d;
    const char *aw = aw_name[how], *bn = bad_name[bad];

    fastsync_cond_register(c, &a);
    d = bad_deadline(how, bad);
    is_int(await_by(how, c, &a, &d), EINVAL, "%s, %s, nothing for the ticket: EINVAL", aw, bn);
    is_int(fastsync_cond_destroy(c), 0, "... the ticket gone: destroy 0");

    fastsync_cond_register(c, &a);
    fastsync_cond_signal(c);
    d = bad_deadline(how, bad);
    is_int(await_by(how, c, &a, &d), 0, "%s, %s, a signal for the ticket: 0 (it would not block)", aw, bn);
    is_int(fastsync_cond_destroy(c), 0, "... the ticket gone: destroy 0");

    fastsync_cond_register(c, &a);
    fastsync_cond_broadcast(c);
    d = bad_deadline(how, bad);
    is_int(await_by(how, c, &a, &d), 0, "%s, %s, after a broadcast: 0", aw, bn);
    is_int(fastsync_cond_destroy(c), 0, "... the ticket gone: destroy 0");

    fastsync_cond_register(c, &a);
    fastsync_cond_register(c, &b);
    fastsync_cond_signal(c);
    d = bad_deadline(how, bad);
    int ra = await_by(how, c, &a, &d);
    int rb = look(c, &b);
    ok((ra == 0 && rb == ETIMEDOUT) || (ra == EINVAL && rb == 0),
       "%s, %s, two tickets, one signal: returned once (A %s, then B's look %s)", aw, bn, code_name(ra),
       code_name(rb));
    is_int(fastsync_cond_destroy(c), 0, "... both tickets gone: destroy 0");
}

/* A NULL deadline or another clock: EINVAL even with a signal there; the ticket is gone, and
 * a second ticket of the group keeps the signal. */
static void invalid_always(fastsync_cond_t *c, int which)
{
    static const char *const name[4] = { "timedawait, NULL", "clockawait MONOTONIC, NULL",
                                         "clockawait REALTIME, NULL", "clockawait, another clock" };
    fastsync_cond_ticket_t a, b;
    struct timespec d = fastsync_deadline_in(1000000000);
    for (int two = 0; two < 2; two++) {
        fastsync_cond_register(c, &a);
        if (two) fastsync_cond_register(c, &b);
        fastsync_cond_signal(c);
        int r = which == 0   ? fastsync_cond_timedawait(c, &a, NULL)
                : which == 1 ? fastsync_cond_clockawait(c, &a, CLOCK_MONOTONIC, NULL)
                : which == 2 ? fastsync_cond_clockawait(c, &a, CLOCK_REALTIME, NULL)
                             : fastsync_cond_clockawait(c, &a, CLOCK_BOOTTIME, &d);
        is_int(r, EINVAL, "%s, %s: EINVAL", name[which], two ? "two tickets, one signal" : "a signal for the ticket");
        if (two) is_int(look(c, &b), 0, "... the other ticket's look: 0 (the signal is left to it)");
        is_int(fastsync_cond_destroy(c), 0, "... no ticket left: destroy 0");
    }
}

/* The mutex form: a malformed deadline is EINVAL at once, the mutex held throughout (its new
 * ticket would block), and a signal meant for a registered ticket is not touched. */
static void bad_on_wait(fastsync_cond_t *c, fastsync_mutex_t *m)
{
    fastsync_cond_ticket_t a;
    fastsync_cond_register(c, &a);
    fastsync_cond_signal(c);
    fastsync_mutex_lock(m);
    for (int how = 0; how < AW_KINDS; how++) {
        for (int bad = 0; bad < BAD_KINDS; bad++) {
            struct timespec d = bad_deadline(how, bad);
            unsigned long w0 = test_kernel_waits();
            is_int(wait_by(how, c, m, &d), EINVAL, "mutex form: %s, %s: EINVAL",
                   how == AW_TIMED ? "timedwait" : how == AW_MONO ? "clockwait MONOTONIC" : "clockwait REALTIME",
                   bad_name[bad]);
            ok(test_kernel_waits() == w0 && test_mutex_state(m) == 1, "... at once, the mutex held throughout");
        }
    }
    struct timespec d = fastsync_deadline_in(1000000000);
    is_int(fastsync_cond_clockwait(c, m, CLOCK_REALTIME, NULL), EINVAL, "mutex form: clockwait REALTIME, NULL: EINVAL");
    is_int(fastsync_cond_clockwait(c, m, CLOCK_BOOTTIME, &d), EINVAL, "mutex form: clockwait, another clock: EINVAL");
    is_int(test_mutex_state(m), 1, "... the mutex held");
    fastsync_mutex_unlock(m);
    is_int(look(c, &a), 0, "mutex form: the registered ticket's signal untouched: its look says 0");
    is_int(fastsync_cond_destroy(c), 0, "... destroy 0");
}

int main(void)
{
    test_init();
    test_watchdog_start(NULL, NULL);
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

    destroy_busy(&c);
    for (int how = 0; how < AW_KINDS; how++)
        for (int bad = 0; bad < BAD_KINDS; bad++) bad_on_ticket(&c, how, bad);
    for (int which = 0; which < 4; which++) invalid_always(&c, which);
    bad_on_wait(&c, &m);

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
    test_watchdog_stop();
    return done_testing();
}
