/* SPDX-License-Identifier: MIT */
/* os2_objects: what fastsync_os2.h promises beyond fastsync.h's API, over the double.
 *  - Sizes (printed; exact on the double).
 *  - Semaphores owned: init creates the object's (1 with atomics: the HEV; 2 without: HEV
 *    and mutex), destroy closes them; nothing leaks.
 *  - Static initializers: 8 threads' first waits at once create exactly one set, race-free.
 *  - FASTSYNC_SHARED: fastsync_os2_*_open / _close open and close the handles (the usage
 *    count, as another process would); a private object: EINVAL.
 *  - event_destroy while a thread waits: EBUSY, nothing closed.
 *  - Fast paths make no Dos* call at all with atomics (post with no waiter, wait/trywait
 *    with a token, set on a set event, wait and is_set on a set event, reset on a reset
 *    event, getvalue); without atomics no event-semaphore call.
 *  - OS/2 out of semaphores: init says EAGAIN; a static semaphore's waiter polls instead.
 *  - ERROR_INTERRUPT on every blocking call: a timed wait still ends at its deadline, not
 *    before; an untimed one returns after the post.
 *  - A word with more tokens than the max (white-box): post says EOVERFLOW, word unchanged. */
#include "harness.h"

#if defined(FASTSYNC_OS2_NO_ATOMICS)
#define PER_OBJECT 2UL /* HEV + HMTX */
#else
#define PER_OBJECT 1UL /* HEV */
#endif

static fastsync_sem_t static_sem = FASTSYNC_SEM_INIT(0);
static fastsync_event_t static_ev = FASTSYNC_EVENT_INIT(false);

struct waiter {
    int kind; /* 0 sem wait, 1 event wait, 2 sem timedwait 2 s */
    fastsync_sem_t *s;
    fastsync_event_t *e;
    int ret;
    _Atomic(int) done;
};

static void *waiter_main(void *p)
{
    struct waiter *w = (struct waiter *)p;
    if (w->kind == 0) {
        w->ret = fastsync_sem_wait(w->s);
    } else if (w->kind == 1) {
        fastsync_event_wait(w->e);
        w->ret = 0;
    } else {
        struct timespec d = fastsync_deadline_in(2000000000u);
        w->ret = fastsync_sem_timedwait(w->s, &d);
    }
    /* release: pairs with the acquire load in all_done (ret is read after it). */
    atomic_store_explicit(&w->done, 1, memory_order_release);
    return NULL;
}

/* The HEV stored in an object. Without atomics a static object's handles are written
 * inside a critical section, so they are read inside one too. */
static ULONG hev_of(fastsync__os2_obj_t *o)
{
#if defined(FASTSYNC_OS2_NO_ATOMICS)
    DosEnterCritSec();
    ULONG h = o->hev;
    DosExitCritSec();
    return h;
#else
    return fastsync__os2_hev_load(o);
#endif
}

static bool all_done(struct waiter *w, int n, double ms)
{
    uint64_t end = test_box_end(ms);
    for (;;) {
        int k = 0;
        for (int i = 0; i < n; i++) k += atomic_load_explicit(&w[i].done, memory_order_acquire);
        if (k == n) return true;
        if (!test_box_open(end)) return false;
        test_sleep_ns(100000);
    }
}

static void dump(void *unused)
{
    (void)unused;
    diag("handles in use %lu, interrupts %lu, sem posts %lu, sem waits %lu", os2dbl_handles_in_use(),
         os2dbl_interrupts(), os2dbl_sem_posts(), os2dbl_sem_waits());
}

static void sizes(void)
{
    diag("sizeof(fastsync_sem_t) %zu, sizeof(fastsync_event_t) %zu, ULONG %zu bytes (%s)",
         sizeof(fastsync_sem_t), sizeof(fastsync_event_t), sizeof(ULONG),
#if defined(FASTSYNC_OS2_NO_ATOMICS)
         "no atomics"
#else
         "C11 atomics"
#endif
    );
    /* as fastsync_os2.h documents them (harness.h): with atomics the 8-aligned word and the
     * HEV, 16; without, the word, HEV, HMTX and flags aligned as a 64-bit integer in a struct
     * (20 on 32-bit OS/2 and i386, where that alignment is 4; 32 on the 64-bit double) */
    size_t want = test_os2_object_size();
    is_int(sizeof(fastsync_sem_t), want, "sizeof(fastsync_sem_t) = %zu", want);
    is_int(sizeof(fastsync_event_t), want, "sizeof(fastsync_event_t) = %zu", want);
}

static void lifecycle(void)
{
    unsigned long h0 = os2dbl_handles_in_use();
    fastsync_sem_t s;
    fastsync_event_t e;
    for (int flags = 0; flags <= FASTSYNC_SHARED; flags++) {
        const char *f = flags ? "shared" : "private";
        is_int(fastsync_sem_init(&s, 1, flags), 0, "%s sem: init", f);
        is_int(os2dbl_handles_in_use() - h0, PER_OBJECT, "%s sem: init created %lu semaphore(s)", f, PER_OBJECT);
        is_int(fastsync_event_init(&e, true, flags), 0, "%s event: init", f);
        is_int(os2dbl_handles_in_use() - h0, 2 * PER_OBJECT, "%s event: init created %lu more", f, PER_OBJECT);
        if (flags) {
            is_int(fastsync_os2_sem_open(&s), 0, "shared sem: fastsync_os2_sem_open");
            is_int(fastsync_os2_event_open(&e), 0, "shared event: fastsync_os2_event_open");
            is_int(os2dbl_handles_in_use() - h0, 2 * PER_OBJECT, "shared: open adds uses, not semaphores");
            is_int(fastsync_sem_wait(&s), 0, "shared sem: wait after open");
            fastsync_event_wait(&e);
            is_int(fastsync_os2_sem_close(&s), 0, "shared sem: fastsync_os2_sem_close");
            is_int(fastsync_os2_event_close(&e), 0, "shared event: fastsync_os2_event_close");
            is_int(os2dbl_handles_in_use() - h0, 2 * PER_OBJECT, "shared: close of an open keeps the semaphores");
            is_int(fastsync_sem_post(&s), 0, "shared sem: still usable after the other use closed");
        } else {
            is_int(fastsync_os2_sem_open(&s), EINVAL, "private sem: fastsync_os2_sem_open is EINVAL");
            is_int(fastsync_os2_event_close(&e), EINVAL, "private event: fastsync_os2_event_close is EINVAL");
        }
        is_int(fastsync_sem_destroy(&s), 0, "%s sem: destroy", f);
        is_int(fastsync_event_destroy(&e), 0, "%s event: destroy", f);
        is_int(os2dbl_handles_in_use(), h0, "%s: destroy closed every semaphore", f);
    }

    /* event_destroy with a thread inside wait */
    fastsync_event_init(&e, false, 0);
    struct waiter w = { 1, NULL, &e, -1, 0 };
    pthread_t t = test_thread_start(waiter_main, &w);
    uint64_t end = test_box_end(5000);
    while (test_box_open(end) && os2dbl_blocked(hev_of(&e.o)) == 0) test_sleep_ns(100000);
    is_int(fastsync_event_destroy(&e), EBUSY, "event destroy with a waiter inside: EBUSY");
    is_int(os2dbl_handles_in_use() - h0, PER_OBJECT, "... and nothing closed");
    fastsync_event_set(&e);
    test_thread_join(t);
    is_int(w.ret, 0, "the waiter returned after the set");
    is_int(fastsync_event_destroy(&e), 0, "destroy once it left: 0");
    is_int(os2dbl_handles_in_use(), h0, "nothing leaked");
}

static void statics(void)
{
    enum { N = 8 };
    unsigned long h0 = os2dbl_handles_in_use();
    struct waiter w[N];
    pthread_t t[N];
    for (int round = 0; round < 2; round++) {
        bool ev = round == 1;
        const char *what = ev ? "FASTSYNC_EVENT_INIT" : "FASTSYNC_SEM_INIT";
        for (int i = 0; i < N; i++) {
            w[i].kind = ev ? 1 : 0;
            w[i].s = &static_sem;
            w[i].e = &static_ev;
            w[i].ret = -1;
            atomic_store_explicit(&w[i].done, 0, memory_order_relaxed); /* relaxed: not started */
        }
        for (int i = 0; i < N; i++) t[i] = test_thread_start(waiter_main, &w[i]);
        /* all N asleep: each made a DosWaitEventSem call on the one HEV */
        uint64_t end = test_box_end(10000);
        ULONG hev = 0;
        while (test_box_open(end)) {
            hev = hev_of(ev ? &static_ev.o : &static_sem.o);
            if (hev != 0 && os2dbl_blocked(hev) == N) break;
            test_sleep_ns(200000);
        }
        is_int(os2dbl_blocked(hev), N, "%s: %d first waiters asleep on one event semaphore", what, N);
        is_int(os2dbl_handles_in_use() - h0, PER_OBJECT, "%s: their first uses created exactly %lu semaphore(s)",
               what, PER_OBJECT);
        if (ev) fastsync_event_set(&static_ev);
        else is_int(fastsync_sem_post_n(&static_sem, N), 0, "%s: post_n(%d)", what, N);
        ok(all_done(w, N, 10000), "%s: all %d returned", what, N);
        for (int i = 0; i < N; i++) test_thread_join(t[i]);
        int bad = 0;
        for (int i = 0; i < N; i++) bad += w[i].ret != 0;
        is_int(bad, 0, "%s: every wait returned 0", what);
        is_int(ev ? fastsync_event_destroy(&static_ev) : fastsync_sem_destroy(&static_sem), 0,
               "%s: destroy", what);
        is_int(os2dbl_handles_in_use(), h0, "%s: destroy closed what the first use created", what);
    }
}

/* Runs f and returns the Dos* calls, event-semaphore waits and posts it made. */
#define COUNT(expr, calls, waits, posts)                                                     \
    do {                                                                                     \
        unsigned long c0 = os2dbl_calls(), w0 = os2dbl_sem_waits(), p0 = os2dbl_sem_posts(); \
        expr;                                                                                \
        calls = os2dbl_calls() - c0;                                                         \
        waits = os2dbl_sem_waits() - w0;                                                     \
        posts = os2dbl_sem_posts() - p0;                                                     \
    } while (0)

static void fast_paths(void)
{
    fastsync_sem_t s;
    fastsync_event_t e;
    unsigned long c, w, p, c_all = 0, wp_all = 0;
    fastsync_sem_init(&s, 0, 0);
    fastsync_event_init(&e, true, 0);
    /* each of these must stay out of the kernel */
    COUNT(fastsync_sem_post(&s), c, w, p);         c_all += c; wp_all += w + p;
    COUNT(fastsync_sem_post_n(&s, 3), c, w, p);    c_all += c; wp_all += w + p;
    COUNT(fastsync_sem_wait(&s), c, w, p);         c_all += c; wp_all += w + p;
    COUNT(fastsync_sem_trywait(&s), c, w, p);      c_all += c; wp_all += w + p;
    struct timespec d = fastsync_deadline_in(1000000);
    COUNT(fastsync_sem_timedwait(&s, &d), c, w, p); c_all += c; wp_all += w + p;
    COUNT(fastsync_sem_getvalue(&s), c, w, p);     c_all += c; wp_all += w + p;
    COUNT(fastsync_event_set(&e), c, w, p);        c_all += c; wp_all += w + p;
    COUNT(fastsync_event_wait(&e), c, w, p);       c_all += c; wp_all += w + p;
    COUNT(fastsync_event_timedwait(&e, &d), c, w, p); c_all += c; wp_all += w + p;
    COUNT((void)fastsync_event_is_set(&e), c, w, p); c_all += c; wp_all += w + p;
    COUNT(fastsync_event_reset(&e), c, w, p);      c_all += c; wp_all += w + p;
    COUNT(fastsync_event_reset(&e), c, w, p);      c_all += c; wp_all += w + p;
    is_int(wp_all, 0, "fast paths: no DosWaitEventSem or DosPostEventSem");
#if defined(FASTSYNC_OS2_NO_ATOMICS)
    ok(c_all > 0, "fast paths without atomics: %lu Dos* calls (the mutex)", c_all);
#else
    is_int(c_all, 0, "fast paths with atomics: no Dos* call at all");
#endif
    is_int(fastsync_sem_getvalue(&s), 1, "value 1 left");
    fastsync_sem_destroy(&s);
    fastsync_event_destroy(&e);
}

static void out_of_semaphores(void)
{
    unsigned long h0 = os2dbl_handles_in_use();
    enum { MAXH = 70000 };
    HEV *hs = (HEV *)calloc(MAXH, sizeof *hs);
    if (!hs) bail("out of memory");
    int n = 0;
    while (n < MAXH && DosCreateEventSem(NULL, &hs[n], 0, FALSE) == NO_ERROR) n++;
    diag("the double ran out of semaphores after %d more (%lu in use)", n, os2dbl_handles_in_use());
    ok(n < MAXH, "DosCreateEventSem fails at last");
    fastsync_sem_t s;
    fastsync_event_t e;
    is_int(fastsync_sem_init(&s, 0, 0), EAGAIN, "no semaphore left: fastsync_sem_init is EAGAIN");
    is_int(fastsync_event_init(&e, false, FASTSYNC_SHARED), EAGAIN, "no semaphore left: fastsync_event_init is EAGAIN");
#if !defined(FASTSYNC_OS2_NO_ATOMICS)
    /* a static semaphore's first sleeper cannot create its HEV: it polls every tick */
    static fastsync_sem_t poll_sem = FASTSYNC_SEM_INIT(0);
    struct waiter w = { 2, &poll_sem, NULL, -1, 0 };
    pthread_t t = test_thread_start(waiter_main, &w);
    test_sleep_ns(50000000);
    is_int(hev_of(&poll_sem.o), 0, "the static semaphore has no HEV");
    is_int(fastsync_sem_post(&poll_sem), 0, "post to the polling waiter");
    ok(all_done(&w, 1, 5000), "the polling waiter returned");
    test_thread_join(t);
    is_int(w.ret, 0, "... with the token");
    is_int(fastsync_sem_destroy(&poll_sem), 0, "no waiter left registered");
    /* the same for a static event's first sleeper */
    static fastsync_event_t poll_ev = FASTSYNC_EVENT_INIT(false);
    struct waiter we = { 1, NULL, &poll_ev, -1, 0 };
    t = test_thread_start(waiter_main, &we);
    test_sleep_ns(50000000);
    is_int(hev_of(&poll_ev.o), 0, "the static event has no HEV");
    fastsync_event_set(&poll_ev);
    fastsync_event_reset(&poll_ev);
    ok(all_done(&we, 1, 5000), "the polling event waiter returned after set+reset");
    test_thread_join(t);
    is_int(fastsync_event_destroy(&poll_ev), 0, "no event waiter left counted");
#else
    skip("without atomics a static object's first call waits for a semaphore instead",
         "static semaphore polls when OS/2 has none");
#endif
    for (int i = 0; i < n; i++) DosCloseEventSem(hs[i]);
    free(hs);
    is_int(os2dbl_handles_in_use(), h0, "all closed again");
}

static void interrupts(void)
{
    fastsync_sem_t s;
    fastsync_sem_init(&s, 0, 0);
    os2dbl_set_interrupt_percent(100);
    unsigned long i0 = os2dbl_interrupts();
    for (int clock = 0; clock < 2; clock++) {
        clockid_t c = clock ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        struct timespec d;
        clock_gettime(c, &d);
        d.tv_nsec += 100000000;
        if (d.tv_nsec >= 1000000000L) { d.tv_sec++; d.tv_nsec -= 1000000000L; }
        int r = fastsync_sem_clockwait(&s, c, &d);
        struct timespec after;
        clock_gettime(c, &after);
        is_int(r, ETIMEDOUT, "%s 100 ms, every wait interrupted: ETIMEDOUT", clock ? "REALTIME" : "MONOTONIC");
        ok(after.tv_sec > d.tv_sec || (after.tv_sec == d.tv_sec && after.tv_nsec >= d.tv_nsec),
           "... not before the deadline");
        int64_t late = ((int64_t)after.tv_sec - d.tv_sec) * 1000000000 + (after.tv_nsec - d.tv_nsec);
        ok(late < 2000000000, "... not absurdly late (%lld us)", (long long)(late / 1000));
    }
    struct waiter w = { 0, &s, NULL, -1, 0 };
    pthread_t t = test_thread_start(waiter_main, &w);
    test_sleep_ns(50000000);
    is_int(atomic_load_explicit(&w.done, memory_order_acquire), 0, "untimed wait, interrupted: still waiting");
    fastsync_sem_post(&s);
    ok(all_done(&w, 1, 5000), "... returns after the post");
    test_thread_join(t);
    is_int(w.ret, 0, "... with 0");
    ok(os2dbl_interrupts() - i0 > 0, "ERROR_INTERRUPT was returned %lu times", os2dbl_interrupts() - i0);
    os2dbl_set_interrupt_percent(0);
    is_int(fastsync_sem_destroy(&s), 0, "no waiter left registered");
}

/* A static semaphore initialized at the max (the word cases above the max are sem_init_range's,
 * which runs over this header too). */
static void static_at_max(void)
{
    static fastsync_sem_t at_max = FASTSYNC_SEM_INIT(FASTSYNC_SEM_VALUE_MAX);
    is_int(fastsync_sem_getvalue(&at_max), FASTSYNC_SEM_VALUE_MAX, "FASTSYNC_SEM_INIT(FASTSYNC_SEM_VALUE_MAX)");
    is_int(fastsync_sem_post(&at_max), EOVERFLOW, "... post says EOVERFLOW");
    is_int(fastsync_sem_destroy(&at_max), 0, "... destroy");
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    sizes();
    lifecycle();
    statics();
    fast_paths();
    out_of_semaphores();
    interrupts();
    static_at_max();
    test_watchdog_stop();
    return done_testing();
}
