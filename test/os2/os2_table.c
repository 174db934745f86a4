/* SPDX-License-Identifier: MIT */
/* os2_table: what fastsync_os2.h, the OS/2 backend, promises beyond fastsync.h's API, over
 * the double.
 *  - Fast paths make no Dos* call with atomics (post with no waiter, wait/trywait with a
 *    token, set on a set event, wait and is_set on a set event, reset, lock and unlock of a
 *    free mutex); without atomics no DosWaitEventSem or DosPostEventSem.
 *  - The wait table: named shared memory after the first sleep; a sleep's HEV is closed
 *    after it (no semaphore leaks).
 *  - The seam (fastsync__wait_sys / fastsync__wake_sys, white-box): a wake of n wakes n of
 *    the address's sleepers; a private sleeper is woken by a private wake of its own
 *    process only (not a shared wake, not a waiter slot of another process id); an untimed
 *    sleep that no wake reaches ends after a second, and the waiter looks again.
 *  - FASTSYNC_SHARED objects in DosAllocSharedMem memory sleep and wake.
 *  - OS/2 out of semaphores, and no free waiter slot: waiters poll every tick instead, a
 *    timed wait still ends at its deadline, a post still reaches them.
 *  - ERROR_INTERRUPT on every blocking call: a timed wait ends at its deadline, not before;
 *    an untimed one returns after the post. */
#include "harness.h"

#include <stdlib.h>

/* ---- the Dos* calls an expression makes ---- */
#define COUNT(expr, calls, waits_posts)                                                      \
    do {                                                                                     \
        unsigned long c0 = os2dbl_calls(), w0 = os2dbl_sem_waits() + os2dbl_sem_posts();    \
        expr;                                                                                \
        calls = os2dbl_calls() - c0;                                                         \
        waits_posts = os2dbl_sem_waits() + os2dbl_sem_posts() - w0;                          \
    } while (0)

static void fast_paths(void)
{
    fastsync_sem_t s;
    fastsync_event_t e;
    fastsync_mutex_t m;
    unsigned long c, wp, c_all = 0, wp_all = 0;
    fastsync_sem_init(&s, 0, 0);
    fastsync_event_init(&e, true, 0);
    fastsync_mutex_init(&m, 0);
    struct timespec d = fastsync_deadline_in(1000000);
    COUNT(fastsync_sem_post(&s), c, wp);             c_all += c; wp_all += wp;
    COUNT(fastsync_sem_post_n(&s, 3), c, wp);        c_all += c; wp_all += wp;
    COUNT(fastsync_sem_wait(&s), c, wp);             c_all += c; wp_all += wp;
    COUNT(fastsync_sem_trywait(&s), c, wp);          c_all += c; wp_all += wp;
    COUNT(fastsync_sem_timedwait(&s, &d), c, wp);    c_all += c; wp_all += wp;
    COUNT(fastsync_sem_getvalue(&s), c, wp);         c_all += c; wp_all += wp;
    COUNT(fastsync_event_set(&e), c, wp);            c_all += c; wp_all += wp;
    COUNT(fastsync_event_wait(&e), c, wp);           c_all += c; wp_all += wp;
    COUNT(fastsync_event_timedwait(&e, &d), c, wp);  c_all += c; wp_all += wp;
    COUNT((void)fastsync_event_is_set(&e), c, wp);   c_all += c; wp_all += wp;
    COUNT(fastsync_event_reset(&e), c, wp);          c_all += c; wp_all += wp;
    COUNT(fastsync_event_reset(&e), c, wp);          c_all += c; wp_all += wp;
    COUNT(fastsync_mutex_lock(&m), c, wp);           c_all += c; wp_all += wp;
    COUNT(fastsync_mutex_unlock(&m), c, wp);         c_all += c; wp_all += wp;
    is_int(wp_all, 0, "fast paths: no DosWaitEventSem or DosPostEventSem");
#if defined(FASTSYNC_OS2_NO_ATOMICS)
    ok(c_all > 0, "fast paths without atomics: %lu Dos* calls (the table's lock)", c_all);
#else
    is_int(c_all, 0, "fast paths with atomics: no Dos* call at all");
#endif
    is_int(fastsync_sem_getvalue(&s), 1, "value 1 left");
}

/* OS2DBL_INTERRUPT as the run was given it (the _intr runs: 20) */
static unsigned interrupt_percent;

/* ---- sleepers on the seam, white-box ---- */
struct sleeper {
    void *word;
    int shared;
    int64_t timeout_ns; /* 0: none */
    int ret;
    _Atomic(int) done;
};

static void *sleeper_main(void *p)
{
    struct sleeper *z = (struct sleeper *)p;
    struct timespec d = test_deadline_on(CLOCK_MONOTONIC, z->timeout_ns);
    z->ret = fastsync__wait_sys(z->word, 0, z->shared, CLOCK_MONOTONIC, z->timeout_ns ? &d : NULL);
    atomic_store(&z->done, 1);
    return NULL;
}

static int count_done(struct sleeper *z, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++) k += atomic_load(&z[i].done);
    return k;
}

/* Waits up to ms for `want` sleepers to be done; how many are. */
static int wait_done(struct sleeper *z, int n, int want, int ms)
{
    uint64_t end = test_now_ns() + (uint64_t)ms * 1000000u;
    while (count_done(z, n) < want && test_now_ns() < end) test_sleep_ns(1000000);
    return count_done(z, n);
}

/* Threads blocked on HEVs now (each sleeper's own HEV): the table has queued them. */
static unsigned long queued(struct fastsync__os2_table *t, void *word)
{
    unsigned long k = 0;
    ULONG b = fastsync__os2_bucket(word);
    fastsync__os2_lock(t->lock[b]);
    for (ULONG i = t->slot[b].next; i != b; i = t->slot[i].next) k += t->slot[i].word == (uintptr_t)word;
    fastsync__os2_unlock(t->lock[b]);
    return k;
}

static void wait_queued(struct fastsync__os2_table *t, void *word, unsigned long n)
{
    uint64_t end = test_now_ns() + 5000000000u;
    while (queued(t, word) < n && test_now_ns() < end) test_sleep_ns(1000000);
}

static void seam(void)
{
    /* white-box counts of who returned: no ERROR_INTERRUPT (an early return) meanwhile */
    os2dbl_set_interrupt_percent(0);
    static FASTSYNC__ATOMIC(uint32_t) word; /* 0: the sleepers' expected value */
    struct sleeper z[3];
    pthread_t th[3];
    struct fastsync__os2_table *t = fastsync__os2_table(); /* attached: its 65 semaphores */
    if (t == NULL) bail("no wait table");
    unsigned long h0 = os2dbl_handles_in_use();

    /* wake 2 of 3 */
    for (int i = 0; i < 3; i++) {
        z[i] = (struct sleeper){ (void *)&word, 0, 0, -1, 0 };
        th[i] = test_thread_start(sleeper_main, &z[i]);
    }
    wait_queued(t, (void *)&word, 3);
    is_int(queued(t, (void *)&word), 3, "three sleepers queued in the table");
    is_int(os2dbl_handles_in_use() - h0, 3, "each sleeper made one HEV");
    fastsync__wake_sys((void *)&word, 2, 0);
    is_int(wait_done(z, 3, 2, 5000), 2, "a wake of 2 woke 2 of the 3 sleepers");
    test_sleep_ns(50000000);
    is_int(count_done(z, 3), 2, "... and not the third, 50 ms later");
    fastsync__wake_sys((void *)&word, INT_MAX, 0);
    is_int(wait_done(z, 3, 3, 5000), 3, "a wake of all woke the third");
    for (int i = 0; i < 3; i++) {
        test_thread_join(th[i]);
        is_int(z[i].ret, 0, "sleeper %d: woken (0)", i);
    }
    is_int(os2dbl_handles_in_use(), h0, "every sleeper closed its HEV");
    is_int(queued(t, (void *)&word), 0, "nothing left queued");

    /* a private sleeper: not woken by a shared wake, nor by a private wake that is not of its
     * process (its slot's process id changed, white-box), then woken by its own */
    z[0] = (struct sleeper){ (void *)&word, 0, 0, -1, 0 };
    th[0] = test_thread_start(sleeper_main, &z[0]);
    wait_queued(t, (void *)&word, 1);
    fastsync__wake_sys((void *)&word, 1, 1);
    test_sleep_ns(50000000);
    is_int(count_done(z, 1), 0, "a shared wake left the private sleeper asleep");
    ULONG b = fastsync__os2_bucket((void *)&word), i = t->slot[b].next;
    fastsync__os2_lock(t->lock[b]);
    t->slot[i].pid += 1; /* as if it slept in another process */
    fastsync__os2_unlock(t->lock[b]);
    fastsync__wake_sys((void *)&word, 1, 0);
    test_sleep_ns(50000000);
    is_int(count_done(z, 1), 0, "a private wake of another process id left it asleep");
    fastsync__os2_lock(t->lock[b]);
    t->slot[i].pid -= 1;
    fastsync__os2_unlock(t->lock[b]);
    fastsync__wake_sys((void *)&word, 1, 0);
    is_int(wait_done(z, 1, 1, 5000), 1, "its own process's private wake woke it");
    test_thread_join(th[0]);

    /* a slot of this process id whose HEV is no handle here (as a dead process with the
     * same id would leave, white-box: the oldest sleeper's handle changed): a wake of one
     * passes over it and reaches the next sleeper */
    z[0] = (struct sleeper){ (void *)&word, 0, 0, -1, 0 };
    th[0] = test_thread_start(sleeper_main, &z[0]);
    wait_queued(t, (void *)&word, 1);
    z[1] = (struct sleeper){ (void *)&word, 0, 0, -1, 0 };
    th[1] = test_thread_start(sleeper_main, &z[1]);
    wait_queued(t, (void *)&word, 2);
    fastsync__os2_lock(t->lock[b]);
    i = t->slot[b].next; /* the oldest: z[0]'s */
    ULONG hev0 = t->slot[i].hev;
    t->slot[i].hev = 0x7ffffff0u; /* no handle of the double's */
    fastsync__os2_unlock(t->lock[b]);
    fastsync__wake_sys((void *)&word, 1, 0);
    fastsync__os2_lock(t->lock[b]);
    ok(t->slot[b].next == i && t->slot[i].next == b && !t->slot[i].woken,
       "a stale slot of this process id (no such HEV): a wake of one passed over it (still queued, not woken) and took the next sleeper's");
    t->slot[i].hev = hev0;
    fastsync__os2_unlock(t->lock[b]);
    is_int(wait_done(&z[1], 1, 1, 5000), 1, "... which returned");
    fastsync__wake_sys((void *)&word, 1, 0);
    is_int(wait_done(z, 1, 1, 5000), 1, "with its handle back, a wake woke the first sleeper");
    test_thread_join(th[0]);
    test_thread_join(th[1]);

    /* a shared sleeper is woken by a shared wake only */
    z[0] = (struct sleeper){ (void *)&word, 1, 0, -1, 0 };
    th[0] = test_thread_start(sleeper_main, &z[0]);
    wait_queued(t, (void *)&word, 1);
    fastsync__wake_sys((void *)&word, 1, 0);
    test_sleep_ns(50000000);
    is_int(count_done(z, 1), 0, "a private wake left the shared sleeper asleep");
    fastsync__wake_sys((void *)&word, 1, 1);
    is_int(wait_done(z, 1, 1, 5000), 1, "a shared wake woke it");
    test_thread_join(th[0]);

    /* an untimed sleep that no wake reaches ends after a second (the waiter looks again) */
    uint64_t t0 = test_now_ns();
    z[0] = (struct sleeper){ (void *)&word, 0, 0, -1, 0 };
    sleeper_main(&z[0]);
    uint64_t slept = test_now_ns() - t0;
    is_int(z[0].ret, 0, "an untimed sleep nobody wakes returns 0 ...");
    ok(slept >= 1000000000u && slept < 3000000000u, "... after a second (%.0f ms)", (double)slept / 1e6);

    /* a word that differs: no sleep, no HEV kept */
    fastsync__store(&word, 1u, memory_order_relaxed); /* relaxed: no other thread runs now */
    z[0] = (struct sleeper){ (void *)&word, 0, 0, -1, 0 };
    sleeper_main(&z[0]);
    is_int(z[0].ret, EAGAIN, "a word that differs: the wait returns EAGAIN at once (no wake taken)");
    is_int(os2dbl_handles_in_use(), h0, "... with its HEV closed");
    fastsync__store(&word, 0u, memory_order_relaxed);

    PVOID mem = NULL;
    is_int(DosGetNamedSharedMem(&mem, (PSZ) "\\SHAREMEM\\FASTSYNC\\TABLE.V1", PAG_READ | PAG_WRITE), NO_ERROR,
           "the table is named shared memory");
    ok(mem == (PVOID)t, "... at the address the backend uses");
    if (mem) (void)DosFreeMem(mem);
    os2dbl_set_interrupt_percent(interrupt_percent);
}

/* ---- objects ---- */
struct user {
    fastsync_sem_t *s;
    fastsync_event_t *e;
    int64_t timeout_ns; /* semaphore: 0 for an untimed wait */
    int ret;
    _Atomic(int) done;
};

static void *user_main(void *p)
{
    struct user *u = (struct user *)p;
    if (u->e != NULL) {
        fastsync_event_wait(u->e);
        u->ret = 0;
    } else if (u->timeout_ns == 0) {
        u->ret = fastsync_sem_wait(u->s);
    } else {
        struct timespec d = fastsync_deadline_in((uint64_t)u->timeout_ns);
        u->ret = fastsync_sem_timedwait(u->s, &d);
    }
    atomic_store(&u->done, 1);
    return NULL;
}

static bool user_done(struct user *u, int ms)
{
    uint64_t end = test_now_ns() + (uint64_t)ms * 1000000u;
    while (!atomic_load(&u->done) && test_now_ns() < end) test_sleep_ns(1000000);
    return atomic_load(&u->done);
}

/* A FASTSYNC_SHARED semaphore and event in DosAllocSharedMem memory. */
static void shared_objects(void)
{
    PVOID mem = NULL;
    if (DosAllocSharedMem(&mem, (PSZ) "\\SHAREMEM\\OS2_TABLE_TEST", 4096, PAG_COMMIT | PAG_READ | PAG_WRITE) != NO_ERROR)
        bail("DosAllocSharedMem");
    struct both { fastsync_sem_t s; fastsync_event_t e; } *x = (struct both *)mem;
    is_int(fastsync_sem_init(&x->s, 0, FASTSYNC_SHARED), 0, "shared semaphore in shared memory: init");
    is_int(fastsync_event_init(&x->e, false, FASTSYNC_SHARED), 0, "shared event in shared memory: init");
    struct user u = { &x->s, NULL, 0, -1, 0 }, v = { NULL, &x->e, 0, -1, 0 };
    pthread_t tu = test_thread_start(user_main, &u), tv = test_thread_start(user_main, &v);
    test_sleep_ns(50000000);
    ok(!atomic_load(&u.done) && !atomic_load(&v.done), "both waiters asleep");
    fastsync_sem_post(&x->s);
    fastsync_event_set(&x->e);
    ok(user_done(&u, 5000) && user_done(&v, 5000), "the post and the set woke them");
    test_thread_join(tu);
    test_thread_join(tv);
    is_int(u.ret, 0, "the semaphore waiter took the token");
    (void)DosFreeMem(mem);
}

/* Polling instead of sleeping: a timed wait ends at its deadline, not before, and a post
 * reaches an untimed waiter. `why` names the cause. */
static void polls(const char *why)
{
    fastsync_sem_t s;
    fastsync_sem_init(&s, 0, 0);
    unsigned long w0 = os2dbl_sem_waits();
    uint64_t t0 = test_now_ns();
    struct user u = { &s, NULL, 100000000, -1, 0 };
    user_main(&u);
    uint64_t took = test_now_ns() - t0;
    is_int(u.ret, ETIMEDOUT, "%s: a 100 ms timed wait: ETIMEDOUT", why);
    ok(took >= 100000000, "%s: ... not before its deadline (%.1f ms)", why, (double)took / 1e6);
    is_int(os2dbl_sem_waits() - w0, 0, "%s: ... without a DosWaitEventSem (it polled)", why);
    struct user v = { &s, NULL, 0, -1, 0 };
    pthread_t t = test_thread_start(user_main, &v);
    test_sleep_ns(50000000);
    ok(!atomic_load(&v.done), "%s: an untimed waiter waits", why);
    fastsync_sem_post(&s);
    ok(user_done(&v, 5000), "%s: a post reached it", why);
    test_thread_join(t);
    is_int(fastsync_sem_destroy(&s), 0, "%s: no waiter left registered", why);
}

static void out_of_semaphores(void)
{
    enum { MAXH = 70000 };
    HEV *hs = (HEV *)calloc(MAXH, sizeof *hs);
    if (!hs) bail("out of memory");
    int n = 0;
    while (n < MAXH && DosCreateEventSem(NULL, &hs[n], 0, FALSE) == NO_ERROR) n++;
    diag("the double ran out of semaphores after %d more (%lu in use)", n, os2dbl_handles_in_use());
    ok(n < MAXH, "DosCreateEventSem fails at last");
    polls("no HEV to make");
    while (n > 0) (void)DosCloseEventSem(hs[--n]);
    free(hs);
}

static void no_free_slot(void)
{
    struct fastsync__os2_table *t = fastsync__os2_table();
    fastsync__os2_lock(t->pool_lock);
    ULONG saved = t->free;
    t->free = 0; /* white-box: every slot in use */
    fastsync__os2_unlock(t->pool_lock);
    polls("no free waiter slot");
    fastsync__os2_lock(t->pool_lock);
    t->free = saved;
    fastsync__os2_unlock(t->pool_lock);
}

static void interrupted(void)
{
    os2dbl_set_interrupt_percent(100);
    unsigned long i0 = os2dbl_interrupts();
    fastsync_sem_t s;
    fastsync_sem_init(&s, 0, 0);
    uint64_t t0 = test_now_ns();
    struct user u = { &s, NULL, 200000000, -1, 0 };
    user_main(&u);
    uint64_t took = test_now_ns() - t0;
    is_int(u.ret, ETIMEDOUT, "every wait interrupted: a 200 ms timed wait says ETIMEDOUT");
    ok(took >= 200000000, "... not before its deadline (%.1f ms)", (double)took / 1e6);
    struct user v = { &s, NULL, 0, -1, 0 };
    pthread_t t = test_thread_start(user_main, &v);
    test_sleep_ns(100000000);
    ok(!atomic_load(&v.done), "every wait interrupted: an untimed waiter waits");
    fastsync_sem_post(&s);
    ok(user_done(&v, 5000), "... and returns after the post");
    test_thread_join(t);
    ok(os2dbl_interrupts() > i0, "ERROR_INTERRUPT was given (%lu times)", os2dbl_interrupts() - i0);
    os2dbl_set_interrupt_percent(interrupt_percent);
}

int main(void)
{
    test_init();
    test_watchdog_start(NULL, NULL);
    const char *pct = getenv("OS2DBL_INTERRUPT");
    interrupt_percent = pct ? (unsigned)atoi(pct) : 0;
    fast_paths();
    seam();
    shared_objects();
    out_of_semaphores();
    no_free_slot();
    interrupted();
    test_watchdog_stop();
    return done_testing();
}
