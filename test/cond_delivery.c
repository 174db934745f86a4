/* SPDX-License-Identifier: MIT */
/* cond_delivery: to whom a signal goes (the delivery rules of fastsync.h's manual, Guarantees, cited by number), each case forced, none
 * left to a race. Tickets in one thread, a "look" being a timedawait whose deadline has
 * passed (it returns 0 if a signal or broadcast is owed to the ticket, else ETIMEDOUT, and
 * deregisters it either way):
 *   R1   A, B register; broadcast; C, D register; one signal; C and D look, then A and B:
 *        A 0, B 0 (rule 1: registered before the broadcast), exactly one of C, D 0;
 *        again with A and B looking first;
 *   R3   A, B register; two signals; C, D register; A cancels; C and D look first: both
 *        ETIMEDOUT (registered after both signals: rules 2, 5b), B 0;
 *   rule 2: a ticket registered after a signal never takes it; a signal with no uncalled
 *        ticket (none registered, or each already called, by a signal or a broadcast) has
 *        no effect on later tickets; signals go to the oldest group first (a signal that
 *        completes A and B's group is not also C's);
 *   rule 5a: a ticket of the current group cancelled: the group's signal stays with the
 *        others (B), never with a ticket registered after it (C), also when the last of
 *        them is cancelled too;
 *   rule 5b: a group released by signals, one of its tickets cancelled: passed on to the
 *        next group when that group was formed before the last signal and is still
 *        current with a ticket lacking one; dropped when the tickets after it registered
 *        after both signals, when it is a second cancel of the group, and when the group
 *        after it is no longer current; a pass that completes the next group, which then
 *        has nothing to pass to a ticket registered after its signals;
 *   rule 5c: a ticket released by a broadcast, cancelled, passes nothing on;
 *   EAGAIN with FASTSYNC_COND_TICKETS_MAX tickets registered (register and wait), every one
 *        of them still registered and released by a broadcast, and every one deregistered
 *        after (as many can register again, and destroy says 0).
 * And with threads, the mutex form:
 *   R2   A and B asleep in fastsync_cond_timedwait (3 s); broadcast; B is held after the
 *        futex wait that the broadcast ended (the harness's test_after_futex_wait, in B's
 *        thread only) until C and D, which enter timedwait (1 s) after A has returned and
 *        sleep, have both returned from a signal made while they slept; then B runs on.
 *        B 0 (rule 1), exactly one of C, D 0 and the other ETIMEDOUT. (Holding B only until
 *        the signal is made would let B take a pending signal on the old header too: the
 *        defect shows when C or D, at its deadline, has taken B's.)
 * Each case on a fresh condvar, which is left with no ticket (destroy 0). */
#include "harness.h"

static fastsync_cond_t c;

static const char *rs(int r)
{
    return r == 0 ? "0" : r == ETIMEDOUT ? "ETIMEDOUT" : r == EAGAIN ? "EAGAIN" : r == EINVAL ? "EINVAL" : "?";
}

/* A test point: a result, named in the diagnostic on a failure. */
static bool is_r(int got, int want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool pass = tap_point(got == want, NULL, fmt, ap);
    va_end(ap);
    if (!pass) diag("  got %s, want %s", rs(got), rs(want));
    return pass;
}

/* A look: the deadline long past. */
static int look(fastsync_cond_ticket_t *t)
{
    struct timespec past = test_ts(0, 0);
    return fastsync_cond_timedawait(&c, t, &past);
}

static void fresh(void)
{
    is_int(fastsync_cond_init(&c, 0), 0, "init");
}

static void left_clean(const char *name)
{
    is_int(fastsync_cond_destroy(&c), 0, "%s: no ticket left (destroy 0)", name);
}

/* t looks, and must say want: a test point "name: what". */
static void looks(const char *name, fastsync_cond_ticket_t *t, int want, const char *what)
{
    is_r(look(t), want, "%s: %s", name, what);
}
#define LOOKS(name, t, want, what) looks(name, &(t), want, what)

static void r1(bool ab_first)
{
    const char *name = ab_first ? "R1, A and B look first" : "R1";
    fastsync_cond_ticket_t a, b, cc, d;
    int ra = -1, rb = -1, rc, rd;
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_broadcast(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_register(&c, &d);
    fastsync_cond_signal(&c);
    if (ab_first) {
        ra = look(&a);
        rb = look(&b);
    }
    rc = look(&cc);
    rd = look(&d);
    if (!ab_first) {
        ra = look(&a);
        rb = look(&b);
    }
    diag("%s: A %s, B %s, C %s, D %s", name, rs(ra), rs(rb), rs(rc), rs(rd));
    is_r(ra, 0, "%s: A, registered before the broadcast, looks 0", name);
    is_r(rb, 0, "%s: B, registered before the broadcast, looks 0", name);
    is_int((rc == 0) + (rd == 0), 1, "%s: exactly one of C, D (registered after it) looks 0: the one signal", name);
    ok((rc == 0 || rc == ETIMEDOUT) && (rd == 0 || rd == ETIMEDOUT), "%s: ... the other ETIMEDOUT", name);
    left_clean(name);
}

static void r3(void)
{
    fastsync_cond_ticket_t a, b, cc, d;
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_register(&c, &d);
    is_int(fastsync_cond_cancel(&c, &a), 0, "R3: A's cancel returns 0");
    int rc = look(&cc), rd = look(&d), rb = look(&b);
    diag("R3: C %s, D %s, B %s", rs(rc), rs(rd), rs(rb));
    is_r(rc, ETIMEDOUT, "R3: C, registered after both signals, looks ETIMEDOUT (A's cancel passes nothing to it)");
    is_r(rd, ETIMEDOUT, "R3: D, the same, ETIMEDOUT");
    is_r(rb, 0, "R3: B looks 0 (its signal)");
    left_clean("R3");
}

static void rule2(void)
{
    fastsync_cond_ticket_t a, b, cc;
    const char *name = "after a signal";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &b);
    LOOKS(name, b, ETIMEDOUT, "B, registered after the signal, looks ETIMEDOUT");
    LOOKS(name, a, 0, "A, registered before it, looks 0");
    left_clean(name);

    name = "no ticket";
    fresh();
    fastsync_cond_signal(&c);
    fastsync_cond_broadcast(&c);
    fastsync_cond_register(&c, &a);
    LOOKS(name, a, ETIMEDOUT, "a signal and a broadcast with no ticket registered: a later ticket looks ETIMEDOUT");
    left_clean(name);

    name = "every ticket called";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_signal(&c);
    fastsync_cond_signal(&c); /* A has one: no uncalled ticket */
    fastsync_cond_register(&c, &b);
    LOOKS(name, b, ETIMEDOUT, "A registered, signal, signal: B, registered after, looks ETIMEDOUT");
    LOOKS(name, a, 0, "A looks 0");
    left_clean(name);

    name = "every ticket broadcast to";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_broadcast(&c);
    fastsync_cond_signal(&c); /* A released: no uncalled ticket */
    fastsync_cond_register(&c, &b);
    LOOKS(name, b, ETIMEDOUT, "A registered, broadcast, signal: B, registered after, looks ETIMEDOUT");
    LOOKS(name, a, 0, "A looks 0");
    left_clean(name);

    name = "after a broadcast";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_broadcast(&c);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    LOOKS(name, b, 0, "A registered, broadcast, B registered, signal: B looks 0 (the signal is B's)");
    LOOKS(name, a, 0, "A looks 0");
    left_clean(name);

    name = "oldest group first";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_signal(&c);
    LOOKS(name, cc, ETIMEDOUT, "A, B registered, signal, C registered, signal: C looks ETIMEDOUT (both signals A and B's)");
    LOOKS(name, a, 0, "A looks 0");
    LOOKS(name, b, 0, "B looks 0");
    left_clean(name);
}

static void rule5a(void)
{
    fastsync_cond_ticket_t a, b, cc;
    const char *name = "5a";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc);
    is_int(fastsync_cond_cancel(&c, &a), 0, "5a: A, B registered, signal, C registered: A's cancel returns 0");
    LOOKS(name, cc, ETIMEDOUT, "C, registered after the signal, looks ETIMEDOUT (nothing moved to it)");
    LOOKS(name, b, 0, "B looks 0 (the group's signal stayed with it)");
    left_clean(name);

    name = "5a, three";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_signal(&c);
    fastsync_cond_cancel(&c, &a);
    int rb = look(&b), rc = look(&cc);
    diag("%s: A, B, C registered, signal, A cancels: B %s, C %s", name, rs(rb), rs(rc));
    is_int((rb == 0) + (rc == 0), 1, "%s: exactly one of B, C looks 0 (the one signal stayed in the group)", name);
    left_clean(name);

    /* The group is completed by B's cancel (A alone left, with the signal): A's cancel then
     * has only the one signal, made before C registered, to give (rule 2: not to C). */
    name = "5a, then the last";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_cancel(&c, &b);
    fastsync_cond_cancel(&c, &a);
    LOOKS(name, cc, ETIMEDOUT, "A, B registered, signal, C registered, B and A cancel: C looks ETIMEDOUT");
    left_clean(name);
}

static void rule5b(void)
{
    fastsync_cond_ticket_t a, b, cc, d, e;
    const char *name = "5b passed";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc); /* the next group, formed before the second signal */
    fastsync_cond_signal(&c);        /* A and B released; C's group current, no signal */
    is_int(fastsync_cond_cancel(&c, &a), 0, "5b passed: A, B registered, signal, C registered, signal: A's cancel returns 0");
    LOOKS(name, cc, 0, "C, registered before the second signal, looks 0 (A's passed on)");
    LOOKS(name, b, 0, "B looks 0");
    left_clean(name);

    name = "5b dropped, registered after";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_cancel(&c, &a);
    LOOKS(name, cc, ETIMEDOUT, "A, B registered, signal, signal, C registered, A cancels: C looks ETIMEDOUT");
    LOOKS(name, b, 0, "B looks 0");
    left_clean(name);

    name = "5b dropped, second cancel";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &d);
    fastsync_cond_register(&c, &e);
    fastsync_cond_signal(&c);
    fastsync_cond_signal(&c); /* A, B, C released; D and E's group current */
    fastsync_cond_cancel(&c, &a); /* passes one on */
    fastsync_cond_cancel(&c, &b); /* drops */
    int rd = look(&d), re = look(&e);
    diag("%s: A, B, C registered, signal, D, E registered, signal, signal, A and B cancel: D %s, E %s", name, rs(rd), rs(re));
    is_int((rd == 0) + (re == 0), 1, "%s: exactly one of D, E looks 0 (the first cancel passes one, the second drops)", name);
    LOOKS(name, cc, 0, "C looks 0");
    left_clean(name);

    name = "5b dropped, no longer current";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_signal(&c); /* A, B released; C's group current */
    fastsync_cond_signal(&c); /* C's released too */
    fastsync_cond_register(&c, &d);
    fastsync_cond_cancel(&c, &a);
    LOOKS(name, d, ETIMEDOUT, "A, B registered, signal, C registered, signal, signal, D registered, A cancels: D looks ETIMEDOUT");
    LOOKS(name, cc, 0, "C looks 0");
    LOOKS(name, b, 0, "B looks 0");
    left_clean(name);

    name = "5b completes the next group";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_register(&c, &d);
    fastsync_cond_signal(&c); /* A, B released; C and D's group current */
    fastsync_cond_signal(&c); /* one of C, D has it */
    fastsync_cond_cancel(&c, &a); /* the other gets A's */
    fastsync_cond_cancel(&c, &b); /* dropped */
    LOOKS(name, cc, 0, "A, B registered, signal, C, D registered, signal, signal, A, B cancel: C looks 0");
    LOOKS(name, d, 0, "D looks 0");
    left_clean(name);

    /* C and D's group completed by A's pass-on: their signals (the second, passed, and the
     * third) were both made before E registered, so C's cancel gives E nothing (rule 2). */
    name = "5b, a group completed by a pass-on";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_signal(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_register(&c, &d);
    fastsync_cond_signal(&c); /* A, B released; C and D's group current */
    fastsync_cond_signal(&c); /* one of C, D has it */
    fastsync_cond_register(&c, &e);
    fastsync_cond_cancel(&c, &a); /* passed on: C and D's group complete */
    fastsync_cond_cancel(&c, &cc);
    LOOKS(name, e, ETIMEDOUT, "A, B registered, signal, C, D registered, signal, signal, E registered, A and C cancel: E looks ETIMEDOUT");
    LOOKS(name, d, 0, "D looks 0");
    LOOKS(name, b, 0, "B looks 0");
    left_clean(name);
}

static void rule5c(void)
{
    fastsync_cond_ticket_t a, b, cc;
    const char *name = "5c";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_broadcast(&c);
    fastsync_cond_register(&c, &b);
    is_int(fastsync_cond_cancel(&c, &a), 0, "5c: A registered, broadcast, B registered: A's cancel returns 0");
    LOOKS(name, b, ETIMEDOUT, "B looks ETIMEDOUT (a broadcast's ticket passes nothing on)");
    left_clean(name);

    name = "5c, two";
    fresh();
    fastsync_cond_register(&c, &a);
    fastsync_cond_register(&c, &b);
    fastsync_cond_broadcast(&c);
    fastsync_cond_register(&c, &cc);
    fastsync_cond_cancel(&c, &a);
    fastsync_cond_cancel(&c, &b);
    LOOKS(name, cc, ETIMEDOUT, "A, B registered, broadcast, C registered, A and B cancel: C looks ETIMEDOUT");
    left_clean(name);
}

static fastsync_cond_ticket_t many[FASTSYNC_COND_TICKETS_MAX + 1];

static void tickets_max(void)
{
    const int max = FASTSYNC_COND_TICKETS_MAX;
    fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
    fresh();
    int bad = 0;
    for (int i = 0; i < max; i++) bad += fastsync_cond_register(&c, &many[i]) != 0;
    is_int(bad, 0, "max: %d tickets (FASTSYNC_COND_TICKETS_MAX) register", max);
    is_int(fastsync_cond_register(&c, &many[max]), EAGAIN, "max: one more: EAGAIN");
    fastsync_mutex_lock(&m);
    is_int(fastsync_cond_wait(&c, &m), EAGAIN, "max: fastsync_cond_wait: EAGAIN");
    struct timespec d = fastsync_deadline_in(1000000000);
    is_int(fastsync_cond_timedwait(&c, &m, &d), EAGAIN, "max: fastsync_cond_timedwait: EAGAIN");
    is_int(test_mutex_state(&m), 1, "max: ... the mutex still held");
    fastsync_mutex_unlock(&m);
    is_int(fastsync_cond_destroy(&c), EBUSY, "max: destroy EBUSY (uncalled tickets registered)");
    fastsync_cond_cancel(&c, &many[0]);
    is_int(fastsync_cond_register(&c, &many[0]), 0, "max: one cancelled, one registers");
    is_int(fastsync_cond_register(&c, &many[max]), EAGAIN, "max: ... and the next EAGAIN");
    fastsync_cond_broadcast(&c);
    int zero = 0, cancelled = 0;
    for (int i = 0; i < max; i++) {
        if (i % 3 == 0) cancelled += fastsync_cond_cancel(&c, &many[i]) == 0;
        else zero += look(&many[i]) == 0;
    }
    is_int(cancelled + zero, max, "max: after a broadcast each of the %d looks 0 (or is cancelled, 0)", max);
    bad = 0;
    for (int i = 0; i < max; i++) bad += fastsync_cond_register(&c, &many[i]) != 0;
    is_int(bad, 0, "max: every ticket deregistered: %d register again", max);
    is_int(fastsync_cond_register(&c, &many[max]), EAGAIN, "max: ... and one more EAGAIN");
    for (int i = 0; i < max; i++) fastsync_cond_cancel(&c, &many[i]);
    left_clean("max");
}

/* ---- R2: threads in fastsync_cond_timedwait ---- */

static fastsync_mutex_t m2 = FASTSYNC_MUTEX_INIT;

enum { W_START, W_WAITING, W_RETURNED };

struct waiter {
    const char *name;
    uint64_t ns;          /* its deadline, this far from the call */
    bool is_b;
    _Atomic(int) phase;   /* W_* */
    _Atomic(int) tid;     /* test_tid(), stored before phase moves */
    int ret;
    pthread_t thread;
};

static struct waiter wa = { .name = "A" }, wb = { .name = "B", .is_b = true }, wc = { .name = "C" },
                     wd = { .name = "D" };
static _Thread_local bool in_b;
/* B's hold: 0 off, 1 armed (B's next return from a futex wait holds), 2 B held, 3 let go */
static _Atomic(int) b_hold;

static void after_wait(void)
{
    int one = 1;
    if (!in_b || !atomic_compare_exchange_strong(&b_hold, &one, 2)) return;
    while (atomic_load(&b_hold) != 3) test_sleep_ns(100000);
}

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    in_b = w->is_b;
    atomic_store(&w->tid, test_tid());
    fastsync_mutex_lock(&m2);
    atomic_store(&w->phase, W_WAITING); /* under m2: registered once m2 can be locked */
    struct timespec d = fastsync_deadline_in(w->ns);
    int r = fastsync_cond_timedwait(&c, &m2, &d);
    w->ret = r;
    atomic_store(&w->phase, W_RETURNED); /* (seq_cst: ret is read after it) */
    fastsync_mutex_unlock(&m2);
    return NULL;
}

static void dump(void *unused)
{
    (void)unused;
    static const char *const phase[] = { "starting", "in its timedwait", "returned" };
    struct waiter *w[4] = { &wa, &wb, &wc, &wd };
    for (int i = 0; i < 4; i++) diag("  %s: %s", w[i]->name, phase[atomic_load(&w[i]->phase)]);
    diag("  B's hold: %d", atomic_load(&b_hold));
    test_dump_mutex("mutex", &m2);
}

/* Starts w and returns once it is asleep in its timedwait (registered: it held m2 from
 * before its phase moved until the wait unlocked it; asleep: /proc, or a settle). */
static bool start_asleep(struct waiter *w, uint64_t ns)
{
    w->ns = ns;
    w->thread = test_thread_start(waiter_main, w);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && atomic_load(&w->phase) != W_WAITING) test_sleep_ns(100000);
    fastsync_mutex_lock(&m2);
    fastsync_mutex_unlock(&m2);
    return atomic_load(&w->phase) == W_WAITING && test_until_asleep(atomic_load(&w->tid), 20000000);
}

static bool until_returned(struct waiter *w, double ms)
{
    uint64_t end = test_limit_end(ms);
    while (test_box_open(end) && atomic_load(&w->phase) != W_RETURNED) test_sleep_ns(100000);
    return atomic_load(&w->phase) == W_RETURNED;
}

static void r2(void)
{
    const uint64_t long_ns = (uint64_t)(3e9 * test_scale_up()), short_ns = (uint64_t)(1e9 * test_scale_up());
    fresh();
    test_after_futex_wait = after_wait;
    ok(start_asleep(&wa, long_ns) && start_asleep(&wb, long_ns), "R2: A and B asleep in timedwait (3 s)");
    atomic_store(&b_hold, 1); /* before the broadcast: B's wait may also come back just before it */
    fastsync_cond_broadcast(&c);
    ok(until_returned(&wa, 5000), "R2: A returned after the broadcast");
    is_r(wa.ret, 0, "R2: ... 0");
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && atomic_load(&b_hold) != 2) test_sleep_ns(100000);
    ok(atomic_load(&b_hold) == 2, "R2: B woken and held after its futex wait");
    uint64_t t0 = test_now_ns();
    ok(start_asleep(&wc, short_ns) && start_asleep(&wd, short_ns), "R2: C and D asleep in timedwait (1 s)");
    fastsync_cond_signal(&c);
    ok(test_now_ns() - t0 < short_ns, "R2: the signal made before C's and D's deadlines");
    ok(until_returned(&wc, 5000 + 1e-6 * (double)short_ns) && until_returned(&wd, 5000 + 1e-6 * (double)short_ns),
       "R2: C and D returned (one at its deadline)");
    atomic_store(&b_hold, 3);
    ok(until_returned(&wb, 5000 + 1e-6 * (double)long_ns), "R2: B returned");
    test_thread_join(wa.thread);
    test_thread_join(wb.thread);
    test_thread_join(wc.thread);
    test_thread_join(wd.thread);
    test_after_futex_wait = NULL;
    diag("R2: A %s, B %s, C %s, D %s", rs(wa.ret), rs(wb.ret), rs(wc.ret), rs(wd.ret));
    is_r(wb.ret, 0, "R2: B, registered before the broadcast, returns 0 though slow to run after its wake");
    is_int((wc.ret == 0) + (wd.ret == 0), 1, "R2: exactly one of C, D returns 0: the one signal");
    ok((wc.ret == 0 || wc.ret == ETIMEDOUT) && (wd.ret == 0 || wd.ret == ETIMEDOUT), "R2: ... the other ETIMEDOUT");
    left_clean("R2");
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    r1(false);
    r1(true);
    r3();
    rule2();
    rule5a();
    rule5b();
    rule5c();
    tickets_max();
    r2();
    test_watchdog_stop();
    return done_testing();
}
