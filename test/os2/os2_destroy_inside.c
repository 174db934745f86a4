/* SPDX-License-Identifier: MIT */
/* os2_destroy_inside: fastsync_os2.h's destroy never lets a thread that is still inside a
 * call on the object touch it, or its handle, after destroy returned 0. Deterministic: the
 * double's hook (os2dbl_set_hook) holds a chosen thread at the start of a chosen
 * DosResetEventSem or DosPostEventSem (a "gate") while main calls destroy; then the gate
 * opens. When destroy returned 0, main at once creates an unrelated event semaphore, which
 * gets the closed handle back (the double reuses the slot freed last, as OS/2 reuses
 * slots): a late call of the held thread would reset or post that one.
 *  - event, the last owed waiter held at its settle (the reset of the HEV that the last
 *    waiter of an ended round makes): destroy must say EBUSY while it is there.
 *  - semaphore, a waiter held at its baton post (its reset wiped a post, and it leaves
 *    tokens and waiters behind), while the other waiter takes the last token and leaves:
 *    destroy must say EBUSY while the baton is on its way. */
#include "harness.h"

/* ---- gates: hold one thread at the start of a DosResetEventSem or DosPostEventSem ---- */

enum { ROLE_MAIN, ROLE_WAITER };
enum { GATE_OFF, GATE_ARMED, GATE_REACHED, GATE_OPEN };
#define NGATES 4

static _Thread_local int my_role; /* ROLE_MAIN unless the thread says otherwise */

static struct gate {
    int call;           /* OS2DBL_HOOK_RESET or OS2DBL_HOOK_POST */
    int role;           /* whose call it holds */
    _Atomic(int) state; /* GATE_*; written by main (arm, open) and the held thread (reached) */
    ULONG h;            /* the handle of the held call, written before GATE_REACHED */
} gates[NGATES];

static void gate_hook(int call, ULONG h)
{
    for (int i = 0; i < NGATES; i++) {
        struct gate *g = &gates[i];
        int want = GATE_ARMED;
        /* acquire: pairs with the release store in gate_arm (call and role are set). */
        if (atomic_load_explicit(&g->state, memory_order_acquire) != GATE_ARMED || g->call != call ||
            g->role != my_role)
            continue;
        g->h = h;
        /* acq_rel: release publishes h to gate_reached; acquire as the load above. A
         * failure means another thread took this gate: try the next one. */
        if (!atomic_compare_exchange_strong_explicit(&g->state, &want, GATE_REACHED, memory_order_acq_rel,
                                                     memory_order_acquire))
            continue;
        /* acquire: pairs with the release store in gate_open (what main did meanwhile,
         * destroy included, happens-before the rest of this call). */
        while (atomic_load_explicit(&g->state, memory_order_acquire) != GATE_OPEN) test_sleep_ns(200000);
        return;
    }
}

static struct gate *gate_arm(int i, int call, int role)
{
    struct gate *g = &gates[i];
    g->call = call;
    g->role = role;
    g->h = 0;
    /* release: pairs with the acquire load in gate_hook. */
    atomic_store_explicit(&g->state, GATE_ARMED, memory_order_release);
    return g;
}

/* Waits until a thread is held at the gate: true, or false after 5 s (scaled). */
static bool gate_reached(struct gate *g)
{
    uint64_t end = test_box_end(5000);
    /* acquire: pairs with the release CAS in gate_hook (h is read after it). */
    while (atomic_load_explicit(&g->state, memory_order_acquire) != GATE_REACHED) {
        if (!test_box_open(end)) return false;
        test_sleep_ns(200000);
    }
    return true;
}

static void gate_open(struct gate *g)
{
    /* release: pairs with the acquire load of the held thread in gate_hook. */
    atomic_store_explicit(&g->state, GATE_OPEN, memory_order_release);
}

static void gates_off(void)
{
    /* relaxed: called when no thread is in the hook any more (joined, or gates open). */
    for (int i = 0; i < NGATES; i++) atomic_store_explicit(&gates[i].state, GATE_OFF, memory_order_relaxed);
}

/* ---- the threads ---- */

static struct {
    fastsync_sem_t s;
    fastsync_event_t e;
    const char *phase;
} g;

struct waiter {
    int kind; /* 0: fastsync_sem_wait, 1: fastsync_event_wait */
    int ret;
    _Atomic(bool) done;
    pthread_t t;
};

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    my_role = ROLE_WAITER;
    if (w->kind == 0) {
        w->ret = fastsync_sem_wait(&g.s);
    } else {
        fastsync_event_wait(&g.e);
        w->ret = 0;
    }
    /* release: pairs with the acquire load in waiter_done (ret is read after it). */
    atomic_store_explicit(&w->done, true, memory_order_release);
    return NULL;
}

static void waiter_start(struct waiter *w, int kind)
{
    w->kind = kind;
    w->ret = -1;
    atomic_store_explicit(&w->done, false, memory_order_relaxed); /* relaxed: thread not started */
    w->t = test_thread_start(waiter_main, w);
}

/* Waits until the waiter returned: true, or false after 5 s (scaled). */
static bool waiter_done(struct waiter *w)
{
    uint64_t end = test_box_end(5000);
    /* acquire: pairs with the release store in waiter_main. */
    while (!atomic_load_explicit(&w->done, memory_order_acquire)) {
        if (!test_box_open(end)) return false;
        test_sleep_ns(200000);
    }
    return true;
}

static void dump(void *unused)
{
    (void)unused;
    diag("phase: %s", g.phase ? g.phase : "-");
    for (int i = 0; i < NGATES; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("  gate %d: state %d", i, atomic_load_explicit(&gates[i].state, memory_order_relaxed));
    test_dump_sem("semaphore", &g.s);
    test_dump_event("event", &g.e);
}

/* After a destroy that returned 0 while a thread was held: an unrelated event semaphore,
 * posted (posted != 0) or reset, made at once; it gets the slot destroy freed last. */
static HEV unrelated(bool posted)
{
    HEV u = 0;
    if (DosCreateEventSem(NULL, &u, 0, posted ? TRUE : FALSE) != NO_ERROR) bail("DosCreateEventSem");
    return u;
}

static ULONG post_count(HEV h)
{
    ULONG n = 12345;
    if (DosQueryEventSem(h, &n) != NO_ERROR) bail("DosQueryEventSem(%lu)", (unsigned long)h);
    return n;
}

/* ---- event: the last owed waiter in its settle ---- */

static void event_settle(int flags)
{
    const char *label = flags ? "event (shared), last owed waiter held at its settle reset"
                              : "event, last owed waiter held at its settle reset";
    unsigned long h0 = os2dbl_handles_in_use();
    g.phase = label;
    is_int(fastsync_event_init(&g.e, false, flags), 0, "%s: init", label);
    ULONG hev = fastsync__os2_hev_load(&g.e.o);
    struct waiter w[2];
    unsigned long waits0 = test_kernel_waits();
    for (int i = 0; i < 2; i++) waiter_start(&w[i], 1);
    uint64_t end = test_box_end(5000);
    while (!test_event_asleep(&g.e, 2, waits0) && test_box_open(end)) test_sleep_ns(200000);
    ok(test_event_asleep(&g.e, 2, waits0), "%s: two waiters asleep", label);
    struct gate *gate = gate_arm(0, OS2DBL_HOOK_RESET, ROLE_WAITER);
    fastsync_event_set(&g.e); /* ends their round: both owed, the last one settles */
    ok(gate_reached(gate), "%s: a waiter reached its reset of the HEV", label);
    is_int(gate->h, hev, "%s: ... of this event's HEV", label);
    int d = fastsync_event_destroy(&g.e);
    is_int(d, EBUSY, "%s: destroy meanwhile: EBUSY", label);
    HEV u = 0;
    if (d == 0) u = unrelated(true); /* what the application may do once destroy said 0 */
    gate_open(gate);
    int zero = 0;
    for (int i = 0; i < 2; i++) {
        test_thread_join(w[i].t);
        zero += w[i].ret == 0;
    }
    is_int(zero, 2, "%s: both waits returned 0", label);
    gates_off();
    if (d != 0) {
        is_int(fastsync_event_destroy(&g.e), 0, "%s: destroy once they left: 0", label);
        u = unrelated(true);
    } else {
        skip("destroy said 0 already", "%s: destroy once they left", label);
    }
    ok(u == hev, "%s: an unrelated semaphore made after destroy got the same handle (%lu)", label,
       (unsigned long)u);
    is_int(post_count(u), 1, "%s: ... and stays posted: no reset of a closed HEV reached it", label);
    DosCloseEventSem(u);
    is_int(os2dbl_handles_in_use(), h0, "%s: no semaphore left open", label);
}

/* ---- semaphore: the baton post of a waiter whose reset wiped a post ---- */

static void sem_baton(int flags)
{
    const char *label = flags ? "semaphore (shared), waiter held at its baton post"
                              : "semaphore, waiter held at its baton post";
    unsigned long h0 = os2dbl_handles_in_use();
    g.phase = label;
    is_int(fastsync_sem_init(&g.s, 0, flags), 0, "%s: init", label);
    ULONG hev = fastsync__os2_hev_load(&g.s.o);
    /* Both waiters registered, each held before its first reset of the HEV. */
    struct gate *r0 = gate_arm(0, OS2DBL_HOOK_RESET, ROLE_WAITER);
    struct gate *r1 = gate_arm(1, OS2DBL_HOOK_RESET, ROLE_WAITER);
    struct waiter w[2];
    for (int i = 0; i < 2; i++) waiter_start(&w[i], 0);
    ok(gate_reached(r0) && gate_reached(r1), "%s: two waiters registered, held before their reset", label);
    is_int(test_sem_waiters(&g.s), 2, "%s: the word counts them", label);
    /* Two tokens; the post finds waiters and posts the HEV, which nobody waits on yet. */
    is_int(fastsync_sem_post_n(&g.s, 2), 0, "%s: post_n(2)", label);
    struct gate *baton = gate_arm(2, OS2DBL_HOOK_POST, ROLE_WAITER);
    /* The first resets (wiping that post), finds 2 tokens and 2 waiters: it takes one and
     * passes the baton, since the other waiter may sleep on the HEV it just reset. */
    gate_open(r0);
    ok(gate_reached(baton), "%s: the first waiter reached its baton post", label);
    is_int(baton->h, hev, "%s: ... on this semaphore's HEV", label);
    /* The second resets, takes the token left and returns. */
    gate_open(r1);
    int first = -1;
    uint64_t end = test_box_end(5000);
    while (first < 0 && test_box_open(end)) {
        for (int i = 0; i < 2 && first < 0; i++)
            /* acquire: pairs with the release store in waiter_main. */
            if (atomic_load_explicit(&w[i].done, memory_order_acquire)) first = i;
        test_sleep_ns(200000);
    }
    ok(first >= 0, "%s: the second waiter returned while the first was held", label);
    int d = fastsync_sem_destroy(&g.s);
    is_int(d, EBUSY, "%s: destroy meanwhile: EBUSY", label);
    HEV u = 0;
    if (d == 0) u = unrelated(false);
    gate_open(baton);
    bool both = waiter_done(&w[0]) && waiter_done(&w[1]);
    if (!both) {
        /* A waiter that found no token sleeps on: one more token ends its wait. */
        fastsync_sem_post(&g.s);
    }
    int zero = 0;
    for (int i = 0; i < 2; i++) {
        test_thread_join(w[i].t);
        zero += w[i].ret == 0;
    }
    ok(both, "%s: both waits returned with the two tokens", label);
    is_int(zero, 2, "%s: both waits returned 0", label);
    gates_off();
    if (d != 0) {
        is_int(fastsync_sem_getvalue(&g.s), 0, "%s: value 0", label);
        is_int(fastsync_sem_destroy(&g.s), 0, "%s: destroy once they left: 0", label);
        u = unrelated(false);
    } else {
        skip("destroy said 0 already", "%s: value 0", label);
        skip("destroy said 0 already", "%s: destroy once they left", label);
    }
    ok(u == hev, "%s: an unrelated semaphore made after destroy got the same handle (%lu)", label,
       (unsigned long)u);
    is_int(post_count(u), 0, "%s: ... and is not posted: no baton reached it", label);
    DosCloseEventSem(u);
    is_int(os2dbl_handles_in_use(), h0, "%s: no semaphore left open", label);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    os2dbl_set_hook(gate_hook);
    for (int flags = 0; flags <= FASTSYNC_SHARED; flags++) {
        event_settle(flags);
        sem_baton(flags);
    }
    os2dbl_set_hook(NULL);
    test_watchdog_stop();
    return done_testing();
}
