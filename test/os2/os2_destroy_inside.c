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
 *    destroy must say EBUSY while the baton is on its way.
 *  - semaphore post and event set held between their RMW and their DosPostEventSem (a
 *    post in flight), while the waiter's timeout wakes it: it finds the token (its round
 *    ended), returns 0, destroys the object and creates an unrelated semaphore at once.
 *    destroy must wait for the post in flight, so that the post reaches the object's own
 *    HEV and the unrelated semaphore stays reset; held for good, destroy must give up
 *    after about a second with EBUSY, the object still valid. */
#include "harness.h"

/* ---- gates: hold one thread at the start of a DosResetEventSem or DosPostEventSem ---- */

enum { ROLE_MAIN, ROLE_WAITER, ROLE_POSTER };
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

/* The unrelated semaphore u, made after the object's destroy: it got the object's old HEV
 * handle back, and its post count is still `count` (what it was created with), then it is
 * closed; and no semaphore is left open (h0: in use before the case). */
static void check_unrelated(const char *label, HEV u, ULONG hev, ULONG count, unsigned long h0)
{
    ok(u == hev, "%s: an unrelated semaphore made after destroy got the same handle (%lu)", label,
       (unsigned long)u);
    is_int(post_count(u), count, "%s: ... and no late call on the old one reached it (post count %lu)", label,
           (unsigned long)count);
    DosCloseEventSem(u);
    is_int(os2dbl_handles_in_use(), h0, "%s: no semaphore left open", label);
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
    check_unrelated(label, u, hev, 1, h0);
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
    check_unrelated(label, u, hev, 0, h0);
}

/* ---- a post in flight: the posting call held between its RMW and DosPostEventSem ---- */

#if defined(FASTSYNC_OS2_NO_ATOMICS)
#define PER_OBJECT 2UL /* HEV + HMTX */
#else
#define PER_OBJECT 1UL /* HEV */
#endif

enum { LATE_WAITING, LATE_DESTROYING, LATE_DONE };

/* The waiter of a post in flight: one timed wait, then at once destroy and, if that said
 * 0, an unrelated event semaphore. */
static struct late {
    bool event;         /* the event, else the semaphore */
    int ret, destroyed; /* what the wait and destroy returned */
    uint64_t destroy_ns;
    bool after_open;    /* destroy returned after the poster's gate had opened */
    struct gate *gate;  /* the poster's */
    HEV u;
    _Atomic(int) at;    /* LATE_* */
} late;

static void *late_waiter_main(void *unused)
{
    (void)unused;
    my_role = ROLE_WAITER;
    /* Long enough for the poster's RMW to come while it is registered; it then finds the
     * token (or its round ended) when this timeout wakes it. */
    struct timespec d = fastsync_deadline_in(300000000u);
    late.ret = late.event ? fastsync_event_timedwait(&g.e, &d) : fastsync_sem_timedwait(&g.s, &d);
    /* relaxed (every store of `at`): progress for main's polls, which order nothing. */
    atomic_store_explicit(&late.at, LATE_DESTROYING, memory_order_relaxed);
    uint64_t t0 = test_now_ns();
    late.destroyed = late.event ? fastsync_event_destroy(&g.e) : fastsync_sem_destroy(&g.s);
    late.destroy_ns = test_now_ns() - t0;
    /* acquire: pairs with the release store in gate_open. */
    late.after_open = atomic_load_explicit(&late.gate->state, memory_order_acquire) == GATE_OPEN;
    if (late.destroyed == 0) late.u = unrelated(false);
    /* release: pairs with the acquire load in late_at (the results are read after it). */
    atomic_store_explicit(&late.at, LATE_DONE, memory_order_release);
    return NULL;
}

static int late_at(void)
{
    /* acquire: pairs with the release store of LATE_DONE in late_waiter_main. */
    return atomic_load_explicit(&late.at, memory_order_acquire);
}

static void *poster_main(void *unused)
{
    (void)unused;
    my_role = ROLE_POSTER;
    if (late.event) fastsync_event_set(&g.e);
    else if (fastsync_sem_post(&g.s) != 0) bail("fastsync_sem_post failed");
    return NULL;
}

/* hold_ms: how long the poster stays held once the waiter is inside destroy (a short
 * preemption), or 0: until destroy has returned (a poster that never finishes). */
static void in_flight(bool event, int flags, unsigned hold_ms)
{
    char label[128];
    snprintf(label, sizeof label, "%s%s, post in flight %s", event ? "event set" : "semaphore post",
             flags ? " (shared)" : "", hold_ms ? "for a while" : "for good");
    unsigned long h0 = os2dbl_handles_in_use();
    g.phase = label;
    late.event = event;
    late.ret = late.destroyed = -1;
    late.u = 0;
    atomic_store_explicit(&late.at, LATE_WAITING, memory_order_relaxed); /* relaxed: no thread yet */
    if (event) is_int(fastsync_event_init(&g.e, false, flags), 0, "%s: init", label);
    else is_int(fastsync_sem_init(&g.s, 0, flags), 0, "%s: init", label);
    fastsync__os2_obj_t *o = event ? &g.e.o : &g.s.o;
    ULONG hev = fastsync__os2_hev_load(o);
    late.gate = gate_arm(0, OS2DBL_HOOK_POST, ROLE_POSTER);
    pthread_t tw = test_thread_start(late_waiter_main, NULL);
    uint64_t end = test_box_end(5000);
    for (;;) {
        uint64_t v = 0;
        (void)test_os2_word(o, &v);
        if ((event ? fastsync__ev_cur(v) : fastsync__sem_waiters(v)) == 1 || !test_box_open(end)) break;
        test_sleep_ns(100000);
    }
    pthread_t tp = test_thread_start(poster_main, NULL);
    ok(gate_reached(late.gate), "%s: the poster found the waiter and is held before DosPostEventSem", label);
    is_int(late.gate->h, hev, "%s: ... of the object's HEV", label);
    /* The waiter wakes at its deadline, returns 0 and calls destroy. */
    end = test_box_end(5000);
    while (late_at() == LATE_WAITING && test_box_open(end)) test_sleep_ns(200000);
    ok(late_at() != LATE_WAITING, "%s: the waiter's wait returned while the post was in flight", label);
    uint64_t held0 = test_now_ns();
    if (hold_ms) {
        /* A poster preempted for hold_ms: destroy must wait for it, not return. */
        end = test_box_end(hold_ms);
        while (late_at() != LATE_DONE && test_box_open(end)) test_sleep_ns(200000);
        gate_open(late.gate);
    }
    end = test_box_end(10000);
    while (late_at() != LATE_DONE && test_box_open(end)) test_sleep_ns(200000);
    ok(late_at() == LATE_DONE, "%s: destroy returned", label);
    if (!hold_ms) gate_open(late.gate);
    test_thread_join(tw);
    test_thread_join(tp);
    gates_off();
    is_int(late.ret, 0, "%s: the wait returned 0 (the token, or its round ended)", label);
    if (hold_ms) {
        is_int(late.destroyed, 0, "%s: destroy returned 0 ...", label);
        ok(late.after_open, "%s: ... only after the post in flight went on (%.1f ms in destroy)", label,
           late.destroy_ns / 1e6);
    } else {
        is_int(late.destroyed, EBUSY, "%s: destroy gave up: EBUSY", label);
        ok(late.destroy_ns >= 1000000000u && late.destroy_ns < 10000000000u,
           "%s: ... after about a second, never less (%.1f ms)", label, late.destroy_ns / 1e6);
        ok(test_now_ns() - held0 >= 1000000000u, "%s: ... while the post stayed in flight", label);
        if (late.destroyed != 0) {
            is_int(os2dbl_handles_in_use() - h0, PER_OBJECT, "%s: ... and closed nothing", label);
            is_int(event ? fastsync_event_destroy(&g.e) : fastsync_sem_destroy(&g.s), 0,
                   "%s: destroy once the post went on: 0", label);
            late.u = unrelated(false);
        } else {
            skip("destroy said 0 already", "%s: ... and closed nothing", label);
            skip("destroy said 0 already", "%s: destroy once the post went on", label);
        }
    }
    if (late.u == 0) late.u = unrelated(false); /* destroy failed: keep the checks below going */
    check_unrelated(label, late.u, hev, 0, h0);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    os2dbl_set_hook(gate_hook);
    for (int flags = 0; flags <= FASTSYNC_SHARED; flags++) {
        event_settle(flags);
        sem_baton(flags);
        in_flight(false, flags, 200);
        in_flight(true, flags, 200);
    }
    in_flight(false, 0, 0);
    in_flight(true, 0, 0);
    os2dbl_set_hook(NULL);
    test_watchdog_stop();
    return done_testing();
}
