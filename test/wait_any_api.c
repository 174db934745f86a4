/* SPDX-License-Identifier: MIT */
/* wait_any_api: every result of fastsync_wait_any, trywait_any, timedwait_any and
 * clockwait_any, and what each leaves in the objects' words. EINVAL for n 0 or 65, a NULL
 * list, index or object, an object named twice (two tickets of one condvar included), a bad
 * clock or a NULL deadline, each taking nothing even when entries are ready; 64 entries
 * work. trywait_any says EAGAIN with nothing ready and changes no word. Each kind wins alone
 * (a semaphore gives one token, an event is reported and stays set, a signalled ticket is
 * claimed and deregistered); with several ready the lowest index wins and the others keep
 * their tokens, their set and their registration. A past deadline: ETIMEDOUT with nothing
 * ready (no futex wait), 0 with something ready; tv_nsec out of range: EINVAL only when the
 * call would block. A wait that sleeps returns the index of the semaphore posted, the event
 * set or the ticket signalled by another thread (each kind, with wait_any, timedwait_any and
 * clockwait_any on CLOCK_REALTIME; with the farthest deadline; over FASTSYNC_SHARED objects,
 * whose futex calls are not private, where the backend has them; over 64 semaphores), leaving
 * no waiter registered on any semaphore. A timed wait that times out returns ETIMEDOUT no earlier than its deadline,
 * with errno untouched, no waiter left on the semaphores and its ticket still registered
 * (a later signal is awaited on it). An event set and reset again while the wait sleeps is
 * still reported (the generation rule).
 * Run as is (futex_waitv on Linux >= 5.16) and with FASTSYNC_TEST_WAITV=fallback (one word
 * at a time, in slices); the other backends always take the fallback. */
#include "harness.h"

enum { IA, IE, IT, IB, NLIST }; /* the list's entries: sem a, event e, ticket (c, t), sem b */
enum { W_TRY, W_WAIT, W_TIMED, W_REALTIME, W_KINDS, W_FAR = W_KINDS };
static const char *const wname[W_KINDS + 1] = { "trywait_any", "wait_any", "timedwait_any",
                                                "clockwait_any(REALTIME)",
                                                "timedwait_any(deadline_in(UINT64_MAX))" };

static fastsync_sem_t a, b;
static fastsync_event_t e;
static fastsync_cond_t c, c2;
static fastsync_cond_ticket_t t, t2;
static fastsync_wait_entry_t list[NLIST];
static fastsync_sem_t many[FASTSYNC_WAIT_ANY_MAX + 1];
static fastsync_wait_entry_t manyl[FASTSYNC_WAIT_ANY_MAX + 1];

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem a", &a);
    test_dump_sem("sem b", &b);
    test_dump_event("event e", &e);
    test_dump_cond("cond c", &c);
    test_dump_sem("many[63]", &many[FASTSYNC_WAIT_ANY_MAX - 1]);
}

/* The event's whole word (relaxed: a snapshot; the threads are joined or asleep). */
static uint32_t ev_word(void) { return fastsync__load(&e.state, memory_order_relaxed); }

/* Both semaphores empty, the event reset, ticket t registered on c and not called; every
 * object made with `flags` (0, or TEST_SHARED: the futex calls without the private flag). */
static void fresh_flags(int flags)
{
    fastsync_sem_init(&a, 0, flags);
    fastsync_sem_init(&b, 0, flags);
    fastsync_event_init(&e, false, flags);
    fastsync_cond_init(&c, flags);
    fastsync_cond_register(&c, &t);
    list[IA] = fastsync_wait_sem(&a);
    list[IE] = fastsync_wait_event(&e);
    list[IT] = fastsync_wait_ticket(&c, &t);
    list[IB] = fastsync_wait_sem(&b);
}

static void fresh(void) { fresh_flags(0); }

/* One call of kind `how` (the timed kinds with a deadline an hour ahead; W_FAR: the farthest
 * deadline there is, 584 years or the saturated time_t). */
static int call(int how, const fastsync_wait_entry_t *l, unsigned n, unsigned *idx)
{
    struct timespec d;
    switch (how) {
    case W_TRY:
        return fastsync_trywait_any(l, n, idx);
    case W_WAIT:
        return fastsync_wait_any(l, n, idx);
    case W_FAR:
        d = fastsync_deadline_in(UINT64_MAX);
        return fastsync_timedwait_any(l, n, idx, &d);
    case W_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        return fastsync_timedwait_any(l, n, idx, &d);
    default:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        return fastsync_clockwait_any(l, n, idx, CLOCK_REALTIME, &d);
    }
}

/* ---- EINVAL ---- */

static void einval(void)
{
    fastsync_wait_entry_t l[3];
    unsigned idx = 99;
    struct timespec past = test_ts(1, 0);
    fresh();
    fastsync_sem_post(&a);
    fastsync_event_set(&e);
    fastsync_cond_signal(&c); /* t called, its signal pending */
    unsigned long waits0 = test_kernel_waits();
    for (int how = 0; how < W_KINDS; how++) {
        const char *w = wname[how];
        is_int(call(how, list, 0, &idx), EINVAL, "%s: n 0: EINVAL", w);
        is_int(call(how, manyl, FASTSYNC_WAIT_ANY_MAX + 1, &idx), EINVAL, "%s: n 65: EINVAL", w);
        is_int(call(how, NULL, 1, &idx), EINVAL, "%s: NULL list: EINVAL", w);
        is_int(call(how, list, NLIST, NULL), EINVAL, "%s: NULL index: EINVAL", w);
        /* each with a ready semaphore before it: the list is checked before any look */
        l[0] = fastsync_wait_sem(&a);
        l[1] = fastsync_wait_sem(NULL);
        is_int(call(how, l, 2, &idx), EINVAL, "%s: a NULL semaphore: EINVAL", w);
        l[1] = fastsync_wait_event(NULL);
        is_int(call(how, l, 2, &idx), EINVAL, "%s: a NULL event: EINVAL", w);
        l[1] = fastsync_wait_ticket(NULL, &t2);
        is_int(call(how, l, 2, &idx), EINVAL, "%s: a ticket of a NULL condvar: EINVAL", w);
        l[1] = fastsync_wait_ticket(&c2, NULL);
        is_int(call(how, l, 2, &idx), EINVAL, "%s: a NULL ticket: EINVAL", w);
        l[1] = fastsync_wait_event(&e);
        l[2] = fastsync_wait_sem(&a);
        is_int(call(how, l, 3, &idx), EINVAL, "%s: the same semaphore twice: EINVAL", w);
        l[0] = fastsync_wait_event(&e);
        l[2] = fastsync_wait_sem(&b);
        is_int(call(how, l, 3, &idx), EINVAL, "%s: the same event twice: EINVAL", w);
        l[0] = fastsync_wait_ticket(&c, &t);
        l[1] = fastsync_wait_ticket(&c, &t);
        is_int(call(how, l, 2, &idx), EINVAL, "%s: the same ticket twice: EINVAL", w);
        fastsync_cond_register(&c, &t2);
        l[1] = fastsync_wait_ticket(&c, &t2);
        is_int(call(how, l, 2, &idx), EINVAL, "%s: two tickets of one condvar: EINVAL", w);
        is_int(test_cond_waiters(&c), 2, "%s: ... both tickets still registered", w);
        fastsync_cond_cancel(&c, &t2);
    }
    /* deadlines: checked before any look, whatever is ready */
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_BOOTTIME, &past), EINVAL,
           "clockwait_any, CLOCK_BOOTTIME: EINVAL");
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL,
           "clockwait_any, a CPU-time clock: EINVAL");
    is_int(fastsync_timedwait_any(list, NLIST, &idx, NULL), EINVAL, "timedwait_any, NULL deadline: EINVAL");
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_MONOTONIC, NULL), EINVAL,
           "clockwait_any MONOTONIC, NULL deadline: EINVAL");
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_REALTIME, NULL), EINVAL,
           "clockwait_any REALTIME, NULL deadline: EINVAL");
    is_int(test_kernel_waits() - waits0, 0, "no EINVAL made a futex wait");
    is_int(fastsync_sem_getvalue(&a), 1, "no EINVAL took the token");
    ok(fastsync_event_is_set(&e), "the event still set");
    is_int(test_cond_waiters(&c), 1, "the ticket still registered");
    is_int(test_cond_pending(&c), 1, "... its signal still pending");
    is_int(fastsync_cond_cancel(&c, &t), 0, "cancel the ticket");
    is_int(fastsync_sem_destroy(&a), 0, "no waiter left on the semaphore");

    /* the most entries: 64 */
    for (unsigned i = 0; i < FASTSYNC_WAIT_ANY_MAX + 1; i++) {
        fastsync_sem_init(&many[i], 0, 0);
        manyl[i] = fastsync_wait_sem(&many[i]);
    }
    is_int(fastsync_trywait_any(manyl, FASTSYNC_WAIT_ANY_MAX, &idx), EAGAIN, "64 empty semaphores: EAGAIN");
    fastsync_sem_post(&many[FASTSYNC_WAIT_ANY_MAX - 1]);
    is_int(fastsync_trywait_any(manyl, FASTSYNC_WAIT_ANY_MAX, &idx), 0, "64 entries, the last with a token: 0");
    is_int(idx, FASTSYNC_WAIT_ANY_MAX - 1, "... index 63");
    is_int(fastsync_sem_getvalue(&many[FASTSYNC_WAIT_ANY_MAX - 1]), 0, "... its token taken");
    fastsync_sem_post(&many[FASTSYNC_WAIT_ANY_MAX]);
    is_int(fastsync_trywait_any(manyl, FASTSYNC_WAIT_ANY_MAX + 1, &idx), EINVAL,
           "65 entries, the 65th with a token: EINVAL");
    is_int(fastsync_sem_getvalue(&many[FASTSYNC_WAIT_ANY_MAX]), 1, "... its token not taken");
    fastsync_sem_init(&many[FASTSYNC_WAIT_ANY_MAX], 0, 0);
}

/* ---- nothing ready: EAGAIN, a past deadline, a bad tv_nsec; no word changes ---- */

static void nothing_ready(void)
{
    unsigned idx = 99;
    struct timespec past = test_ts(1, 0), neg = test_ts(-5, 0);
    struct timespec badn = test_ts(1, 1000000000L), negn = test_ts(1, -1);
    fresh();
    const uint64_t wa = test_sem_word(&a), wb = test_sem_word(&b), wc = test_cond_word(&c);
    const uint32_t we = ev_word();
    unsigned long waits0 = test_kernel_waits();
    is_int(fastsync_trywait_any(list, NLIST, &idx), EAGAIN, "trywait_any, nothing ready: EAGAIN");
    is_int(fastsync_timedwait_any(list, NLIST, &idx, &past), ETIMEDOUT, "timedwait_any, past deadline: ETIMEDOUT");
    is_int(fastsync_timedwait_any(list, NLIST, &idx, &neg), ETIMEDOUT, "timedwait_any, tv_sec -5: ETIMEDOUT");
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_MONOTONIC, &past), ETIMEDOUT,
           "clockwait_any MONOTONIC, past: ETIMEDOUT");
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_REALTIME, &past), ETIMEDOUT,
           "clockwait_any REALTIME, past: ETIMEDOUT");
    is_int(fastsync_timedwait_any(list, NLIST, &idx, &badn), EINVAL, "timedwait_any, tv_nsec 1e9: EINVAL");
    is_int(fastsync_timedwait_any(list, NLIST, &idx, &negn), EINVAL, "timedwait_any, tv_nsec -1: EINVAL");
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_REALTIME, &badn), EINVAL,
           "clockwait_any REALTIME, tv_nsec 1e9: EINVAL");
    is_int(test_kernel_waits() - waits0, 0, "none of them made a futex wait");
    ok(test_sem_word(&a) == wa && test_sem_word(&b) == wb, "... the semaphores' words unchanged (no waiter)");
    is_int(ev_word(), we, "... the event's word unchanged (still FREE)");
    ok(test_cond_word(&c) == wc, "... the condvar's word unchanged (the ticket registered, uncalled)");
    fastsync_cond_cancel(&c, &t);
}

/* ---- each kind wins alone ---- */

static void wins_alone(int how)
{
    const char *w = wname[how];
    unsigned idx = 99;

    fresh();
    fastsync_sem_post_n(&b, 2);
    uint64_t wa = test_sem_word(&a), wc = test_cond_word(&c);
    uint32_t we = ev_word();
    is_int(call(how, list, NLIST, &idx), 0, "%s: a semaphore with 2 tokens, alone ready: 0", w);
    is_int(idx, IB, "%s: ... its index", w);
    is_int(fastsync_sem_getvalue(&b), 1, "%s: ... one token taken", w);
    ok(test_sem_word(&a) == wa && ev_word() == we && test_cond_word(&c) == wc,
       "%s: ... the other entries' words unchanged", w);
    fastsync_cond_cancel(&c, &t);

    fresh();
    fastsync_event_set(&e);
    wa = test_sem_word(&a);
    uint64_t wb = test_sem_word(&b);
    wc = test_cond_word(&c);
    is_int(call(how, list, NLIST, &idx), 0, "%s: a set event, alone ready: 0", w);
    is_int(idx, IE, "%s: ... its index", w);
    ok(fastsync_event_is_set(&e), "%s: ... the event still set", w);
    ok(test_sem_word(&a) == wa && test_sem_word(&b) == wb && test_cond_word(&c) == wc,
       "%s: ... the other entries' words unchanged", w);
    fastsync_cond_cancel(&c, &t);

    fresh();
    is_int(fastsync_cond_signal(&c), 0, "%s: signal the registered ticket", w);
    wa = test_sem_word(&a);
    wb = test_sem_word(&b);
    we = ev_word();
    is_int(call(how, list, NLIST, &idx), 0, "%s: a signalled ticket, alone ready: 0", w);
    is_int(idx, IT, "%s: ... its index", w);
    is_int(test_cond_waiters(&c), 0, "%s: ... the ticket deregistered", w);
    is_int(test_cond_pending(&c), 0, "%s: ... its signal claimed", w);
    ok(test_sem_word(&a) == wa && test_sem_word(&b) == wb && ev_word() == we,
       "%s: ... the other entries' words unchanged", w);
}

/* ---- several ready: the lowest index wins, the others keep their state ---- */

static void lowest_wins(int how)
{
    const char *w = wname[how];
    unsigned idx = 99;
    fresh();
    fastsync_sem_post(&a);
    fastsync_event_set(&e);
    fastsync_cond_signal(&c);
    fastsync_sem_post(&b);
    is_int(call(how, list, NLIST, &idx), 0, "%s: all four ready: 0", w);
    is_int(idx, IA, "%s: ... index 0 (the first semaphore)", w);
    ok(fastsync_sem_getvalue(&a) == 0 && fastsync_sem_getvalue(&b) == 1,
       "%s: ... its token taken, the other semaphore's kept", w);
    ok(fastsync_event_is_set(&e), "%s: ... the event still set", w);
    ok(test_cond_waiters(&c) == 1 && test_cond_pending(&c) == 1, "%s: ... the ticket registered, its signal pending", w);
    is_int(call(how, list, NLIST, &idx), 0, "%s: again, three ready: 0", w);
    is_int(idx, IE, "%s: ... index 1 (the event)", w);
    ok(fastsync_event_is_set(&e), "%s: ... the event still set", w);
    ok(test_cond_waiters(&c) == 1 && test_cond_pending(&c) == 1 && fastsync_sem_getvalue(&b) == 1,
       "%s: ... the ticket and the token kept", w);
    fastsync_event_reset(&e);
    is_int(call(how, list, NLIST, &idx), 0, "%s: the event reset, two ready: 0", w);
    is_int(idx, IT, "%s: ... index 2 (the ticket)", w);
    ok(test_cond_waiters(&c) == 0 && test_cond_pending(&c) == 0, "%s: ... the ticket claimed and deregistered", w);
    is_int(fastsync_sem_getvalue(&b), 1, "%s: ... the token kept", w);
    fastsync_cond_register(&c, &t); /* a new ticket, not called */
    is_int(call(how, list, NLIST, &idx), 0, "%s: only the last semaphore ready: 0", w);
    is_int(idx, IB, "%s: ... index 3", w);
    is_int(fastsync_sem_getvalue(&b), 0, "%s: ... its token taken", w);
    is_int(test_cond_waiters(&c), 1, "%s: ... the new ticket still registered", w);
    is_int(fastsync_trywait_any(list, NLIST, &idx), EAGAIN, "%s: then nothing is ready", w);
    fastsync_cond_cancel(&c, &t);

    /* two signalled tickets of two condvars: the first is claimed, the second kept */
    fastsync_wait_entry_t l[2];
    fastsync_cond_init(&c2, 0);
    fastsync_cond_register(&c, &t);
    fastsync_cond_register(&c2, &t2);
    fastsync_cond_signal(&c);
    fastsync_cond_signal(&c2);
    l[0] = fastsync_wait_ticket(&c, &t);
    l[1] = fastsync_wait_ticket(&c2, &t2);
    is_int(call(how, l, 2, &idx), 0, "%s: two signalled tickets: 0", w);
    is_int(idx, 0, "%s: ... index 0", w);
    is_int(test_cond_waiters(&c), 0, "%s: ... the first claimed and deregistered", w);
    ok(test_cond_waiters(&c2) == 1 && test_cond_pending(&c2) == 1, "%s: ... the second registered, its signal pending", w);
    struct timespec past = test_ts(1, 0);
    is_int(fastsync_cond_timedawait(&c2, &t2, &past), 0, "%s: ... and an await on it claims that signal", w);
    is_int(fastsync_cond_destroy(&c2), 0, "%s: ... no ticket left", w);
}

/* ---- deadlines with something ready: 0, never ETIMEDOUT or a tv_nsec EINVAL ---- */

static void deadline_ready(void)
{
    unsigned idx = 99;
    struct timespec past = test_ts(1, 0), neg = test_ts(-5, 0);
    struct timespec badn = test_ts(1, 1000000000L), negn = test_ts(1, -1);
    fresh();
    fastsync_sem_post(&b);
    is_int(fastsync_timedwait_any(list, NLIST, &idx, &past), 0, "timedwait_any, past deadline, last semaphore ready: 0");
    is_int(idx, IB, "... index 3");
    is_int(fastsync_sem_getvalue(&b), 0, "... its token taken");
    fastsync_sem_post(&b);
    is_int(fastsync_timedwait_any(list, NLIST, &idx, &badn), 0, "timedwait_any, tv_nsec 1e9, a token there: 0");
    is_int(idx, IB, "... index 3");
    fastsync_event_set(&e);
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_REALTIME, &past), 0,
           "clockwait_any REALTIME, past deadline, event set: 0");
    is_int(idx, IE, "... index 1");
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_REALTIME, &negn), 0,
           "clockwait_any REALTIME, tv_nsec -1, event set: 0");
    is_int(idx, IE, "... index 1");
    fastsync_event_reset(&e);
    fastsync_cond_signal(&c);
    is_int(fastsync_timedwait_any(list, NLIST, &idx, &neg), 0, "timedwait_any, tv_sec -5, ticket signalled: 0");
    is_int(idx, IT, "... index 2");
    is_int(test_cond_waiters(&c), 0, "... the ticket claimed and deregistered");
    fastsync_cond_register(&c, &t);
    fastsync_cond_signal(&c);
    is_int(fastsync_clockwait_any(list, NLIST, &idx, CLOCK_MONOTONIC, &badn), 0,
           "clockwait_any MONOTONIC, tv_nsec 1e9, ticket signalled: 0");
    is_int(idx, IT, "... index 2");
    is_int(test_cond_waiters(&c), 0, "... the ticket claimed and deregistered");
    ok(test_sem_waiters(&a) == 0 && test_sem_waiters(&b) == 0, "no waiter registered on the semaphores");
}

/* ---- a wait that sleeps, woken from another thread ---- */

struct waiter {
    int how;
    const fastsync_wait_entry_t *l;
    unsigned n;
    int ret;
    unsigned idx;
    pthread_t thread;
};

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    w->ret = call(w->how, w->l, w->n, &w->idx);
    return NULL;
}

static void waiter_start(struct waiter *w, int how, const fastsync_wait_entry_t *l, unsigned n)
{
    w->how = how;
    w->l = l;
    w->n = n;
    w->ret = -1;
    w->idx = 99;
    w->thread = test_thread_start(waiter_main, w);
}

/* Until the waiter registered on both semaphores (so it has recorded every word, each
 * event's generation included) and made a futex wait since waits0; then a little longer, so
 * that it sleeps in the kernel most likely (either way is a test). */
static void until_asleep(fastsync_sem_t *s1, fastsync_sem_t *s2, unsigned long waits0)
{
    while (test_sem_waiters(s1) != 1 || test_sem_waiters(s2) != 1 || test_kernel_waits() - waits0 < 1)
        test_sleep_ns(200000);
    test_sleep_ns(20000000);
}

enum { WAKE_POST_A, WAKE_SET, WAKE_SIGNAL, WAKE_POST_B, WAKES };
static const char *const wakename[WAKES] = { "a post to the first semaphore", "a set", "a signal",
                                              "a post to the last semaphore" };
static const unsigned wakeidx[WAKES] = { IA, IE, IT, IB };

static void woken(int how, int wake, int flags)
{
    char what[160];
    snprintf(what, sizeof what, "%s woken by %s%s", wname[how], wakename[wake],
             flags ? " (FASTSYNC_SHARED objects)" : "");
    struct waiter w;
    fresh_flags(flags);
    unsigned long waits0 = test_kernel_waits();
    waiter_start(&w, how, list, NLIST);
    until_asleep(&a, &b, waits0);
    switch (wake) {
    case WAKE_POST_A: fastsync_sem_post(&a); break;
    case WAKE_SET: fastsync_event_set(&e); break;
    case WAKE_SIGNAL: fastsync_cond_signal(&c); break;
    default: fastsync_sem_post(&b); break;
    }
    test_thread_join(w.thread);
    is_int(w.ret, 0, "%s: 0", what);
    is_int(w.idx, wakeidx[wake], "%s: ... that entry's index", what);
    ok(test_sem_waiters(&a) == 0 && test_sem_waiters(&b) == 0, "%s: ... no waiter left on either semaphore", what);
    ok(fastsync_sem_getvalue(&a) == 0 && fastsync_sem_getvalue(&b) == 0, "%s: ... no token left", what);
    is_int(fastsync_event_is_set(&e), wake == WAKE_SET, "%s: ... the event %s", what,
           wake == WAKE_SET ? "still set" : "still reset");
    is_int(test_cond_waiters(&c), wake == WAKE_SIGNAL ? 0 : 1, "%s: ... the ticket %s", what,
           wake == WAKE_SIGNAL ? "claimed and deregistered" : "still registered");
    is_int(test_cond_pending(&c), 0, "%s: ... no signal pending", what);
    if (wake != WAKE_SIGNAL) fastsync_cond_cancel(&c, &t);
}

static void woken_of_64(void)
{
    const char *what = "wait_any over 64 semaphores woken by a post to the last";
    struct waiter w;
    for (unsigned i = 0; i < FASTSYNC_WAIT_ANY_MAX; i++) fastsync_sem_init(&many[i], 0, 0);
    unsigned long waits0 = test_kernel_waits();
    waiter_start(&w, W_WAIT, manyl, FASTSYNC_WAIT_ANY_MAX);
    until_asleep(&many[0], &many[FASTSYNC_WAIT_ANY_MAX - 1], waits0);
    unsigned registered = 0;
    for (unsigned i = 0; i < FASTSYNC_WAIT_ANY_MAX; i++) registered += test_sem_waiters(&many[i]);
    is_int(registered, FASTSYNC_WAIT_ANY_MAX, "%s: asleep, registered on all 64", what);
    fastsync_sem_post(&many[FASTSYNC_WAIT_ANY_MAX - 1]);
    test_thread_join(w.thread);
    is_int(w.ret, 0, "%s: 0", what);
    is_int(w.idx, FASTSYNC_WAIT_ANY_MAX - 1, "%s: ... index 63", what);
    registered = 0;
    unsigned tokens = 0;
    for (unsigned i = 0; i < FASTSYNC_WAIT_ANY_MAX; i++) {
        registered += test_sem_waiters(&many[i]);
        tokens += fastsync_sem_getvalue(&many[i]);
    }
    is_int(registered, 0, "%s: ... no waiter left on any", what);
    is_int(tokens, 0, "%s: ... the token taken", what);
}

/* ---- timeouts ---- */

static void times_out(clockid_t clock)
{
    const char *what = clock == CLOCK_REALTIME ? "clockwait_any REALTIME 20 ms" : "timedwait_any 20 ms";
    unsigned idx = 99;
    fresh();
    struct timespec d = test_deadline_on(clock, 20000000);
    errno = 1234;
    int r = clock == CLOCK_REALTIME ? fastsync_clockwait_any(list, NLIST, &idx, CLOCK_REALTIME, &d)
                                    : fastsync_timedwait_any(list, NLIST, &idx, &d);
    int64_t now = test_clock_ns(clock);
    is_int(r, ETIMEDOUT, "%s, nothing ready: ETIMEDOUT", what);
    ok(now >= test_ts_ns(d), "%s: ... not before the deadline (%.3f ms after it)", what,
       (double)(now - test_ts_ns(d)) / 1e6);
    is_int(errno, 1234, "%s: ... errno untouched", what);
    ok(test_sem_waiters(&a) == 0 && test_sem_waiters(&b) == 0, "%s: ... no waiter left on either semaphore", what);
    ok(fastsync_sem_destroy(&a) == 0 && fastsync_sem_destroy(&b) == 0, "%s: ... destroy says 0 for both", what);
    ok(!fastsync_event_is_set(&e), "%s: ... the event still reset", what);
    is_int(test_cond_waiters(&c), 1, "%s: ... the ticket still registered", what);
    is_int(test_cond_pending(&c), 0, "%s: ... no signal pending", what);
    is_int(fastsync_cond_signal(&c), 0, "%s: a signal afterwards", what);
    is_int(test_cond_pending(&c), 1, "%s: ... is pending for the ticket", what);
    struct timespec past = test_ts(1, 0);
    is_int(fastsync_cond_timedawait(&c, &t, &past), 0, "%s: ... and the ticket's await claims it", what);
    is_int(fastsync_cond_destroy(&c), 0, "%s: ... no ticket left", what);
}

/* ---- the generation rule ---- */

static void set_and_reset(int how)
{
    char what[128];
    snprintf(what, sizeof what, "%s, the event set and reset again while it sleeps", wname[how]);
    struct waiter w;
    fresh();
    unsigned long waits0 = test_kernel_waits();
    waiter_start(&w, how, list, NLIST);
    until_asleep(&a, &b, waits0);
    fastsync_event_set(&e);
    fastsync_event_reset(&e);
    test_thread_join(w.thread);
    is_int(w.ret, 0, "%s: 0", what);
    is_int(w.idx, IE, "%s: ... the event's index", what);
    ok(!fastsync_event_is_set(&e), "%s: ... the event reset (reported, not set)", what);
    ok(test_sem_waiters(&a) == 0 && test_sem_waiters(&b) == 0, "%s: ... no waiter left on either semaphore", what);
    is_int(test_cond_waiters(&c), 1, "%s: ... the ticket still registered", what);
    fastsync_cond_cancel(&c, &t);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    einval();
    nothing_ready();
    for (int how = 0; how < W_KINDS; how++) wins_alone(how);
    for (int how = 0; how < W_KINDS; how++) lowest_wins(how);
    deadline_ready();
    for (int how = W_WAIT; how < W_KINDS; how++)
        for (int wake = 0; wake < WAKES; wake++) woken(how, wake, 0);
    woken(W_FAR, WAKE_POST_B, 0);
    if (TEST_SHARED)
        for (int wake = 0; wake < WAKES; wake++) woken(W_WAIT, wake, TEST_SHARED);
    woken_of_64();
    times_out(CLOCK_MONOTONIC);
    times_out(CLOCK_REALTIME);
    for (int how = W_WAIT; how < W_KINDS; how++) set_and_reset(how);
    test_watchdog_stop();
    diag("multi-waits tried: %lu (each answered ENOSYS on a backend without one: the fallback)",
         (unsigned long)atomic_load(&test_waitvs_made));
    return done_testing();
}
