/* SPDX-License-Identifier: MIT */
/* latch_destroy_in_wait: a latch may be destroyed as soon as it is open and no thread is
 * blocked on it, while released waiters are still on their way out of their waits (C++'s
 * rule for std::latch: "[~latch] may be called even if some threads have not yet returned
 * from invocations of wait on this object, provided that they are unblocked"); fastsync.h
 * keeps it by counting every waiter in the word from its first access to its last, and
 * destroy waits for the count to fall to 0.
 * The scene, for each way into a wait (wait, timedwait, clockwait on CLOCK_REALTIME,
 * arrive_and_wait, and wait_any over [latch, semaphore]): the latch lives at the very end of
 * its own mmap'd page (test_page_alloc; under ASan or TSan a malloc'd block). The waiter W
 * calls in on a closed latch and is held by the harness's CAS hook (TEST_CAS_HOOK) just
 * before its first compare-and-swap on the latch's word after it started waiting (for
 * arrive_and_wait, the one after its arrival's): by then it has read the word, spun, and is
 * about to go to sleep. There:
 *   1. the word counts W among the latch's waiters (the hook reads it);
 *   2. this thread opens the latch (count_down: no wake, W has not slept), and another
 *      thread D destroys it at once,
 *      and unmaps the page if destroy says 0; destroy must wait for W instead, and, W being
 *      held, say EBUSY after its limit without progress (shortened here to 300 ms:
 *      FASTSYNC__DESTROY_NS); only then is W let go;
 *   3. W's wait returns 0, and destroy then says 0 (W has left), the word's waiter count 0.
 * The latch is unmapped (or freed) only after that second destroy.
 * Before fastsync 0.4 a waiter registered only after its spin, with a CAS, and a wait_any
 * after its looks: W, held before that CAS, was not counted (1 failed), D's destroy said 0
 * and unmapped the page, and W's CAS then touched it: a SIGSEGV (ASan: heap-use-after-free).
 * Not on Windows (mmap) nor where the header's atomics are not <stdatomic.h>'s (OS/2
 * without atomics: no CAS hook). */
#define TEST_CAS_HOOK 1
#define FASTSYNC__DESTROY_NS 300000000u /* destroy's limit without progress: 300 ms here */
#include "harness.h"

#include <signal.h>

enum { W_WAIT, W_TIMED, W_REALTIME, W_ARRIVE, W_WAIT_ANY, W_KINDS };
static const char *const kind_name[W_KINDS] = { "wait", "timedwait", "clockwait(REALTIME)",
                                                "arrive_and_wait", "wait_any" };

static fastsync_latch_t *_Atomic cur; /* the scene's latch; relaxed: the hook compares it with
                                       * a word's address; W and D get it by thread creation */
static fastsync_sem_t sem;            /* wait_any's second entry, never posted */
static pthread_t w_thread;            /* W: the hook holds it only; set before W starts */
static _Atomic(int) w_cas;            /* W's CASes on the latch so far; relaxed: W's own count */
static _Atomic(int) hold_at;          /* the CAS W is held before (1 or 2); relaxed: set before W starts */
static _Atomic(bool) w_held;          /* W is in the hook: release, pairs with the poll's acquire */
static _Atomic(uint32_t) w_counted;   /* the waiter count W's hook read; written before w_held */
static _Atomic(bool) go;              /* W may go on: release, pairs with the hook's acquire */

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a diagnostic snapshot */
    diag("W's CASes %d, held %d, go %d", atomic_load_explicit(&w_cas, memory_order_relaxed),
         (int)atomic_load_explicit(&w_held, memory_order_relaxed), (int)atomic_load_explicit(&go, memory_order_relaxed));
}

#if !TEST_PAGE_MALLOC
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    static const char msg[] = "Bail out! SIGSEGV: a waiter touched the latch after destroy said 0 and it was unmapped\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

/* Before every CAS of the header: W's hold_at-th on the latch's word waits there for `go`. */
static void before_cas(const volatile void *word)
{
    fastsync_latch_t *l = atomic_load_explicit(&cur, memory_order_relaxed);
    if (l == NULL || word != (const volatile void *)&l->state || !pthread_equal(pthread_self(), w_thread)) return;
    if (atomic_fetch_add_explicit(&w_cas, 1, memory_order_relaxed) + 1 != atomic_load_explicit(&hold_at, memory_order_relaxed))
        return;
    atomic_store_explicit(&w_counted, test_latch_waiters(l), memory_order_relaxed);
    atomic_store_explicit(&w_held, true, memory_order_release);
    uint64_t end = test_limit_end(10000);
    /* acquire: pairs with the release store of `go` (the scene's steps come before it) */
    while (!atomic_load_explicit(&go, memory_order_acquire))
        if (!test_box_open(end)) bail("W was never let go");
        else sched_yield();
}

struct w_args {
    int kind;
    int ret;
};

static void *w_main(void *p)
{
    struct w_args *a = (struct w_args *)p;
    fastsync_latch_t *l = atomic_load_explicit(&cur, memory_order_relaxed);
    struct timespec d;
    unsigned idx = 99;
    fastsync_wait_entry_t e[2] = { fastsync_wait_latch(l), fastsync_wait_sem(&sem) };
    switch (a->kind) {
    case W_TIMED:
        d = fastsync_deadline_in(3600 * 1000000000ull);
        a->ret = fastsync_latch_timedwait(l, &d);
        break;
    case W_REALTIME:
        d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
        a->ret = fastsync_latch_clockwait(l, CLOCK_REALTIME, &d);
        break;
    case W_ARRIVE:
        a->ret = fastsync_latch_arrive_and_wait(l, 1);
        break;
    case W_WAIT_ANY:
        a->ret = fastsync_wait_any(e, 2, &idx);
        if (a->ret == 0 && idx != 0) a->ret = -2; /* not the latch */
        break;
    default:
        a->ret = fastsync_latch_wait(l);
        break;
    }
    return NULL;
}

struct d_args {
    fastsync_latch_t *l;
    int ret;
};

/* D: destroys the latch, and unmaps it if destroy says 0 (what a caller may do then). */
static void *d_main(void *p)
{
    struct d_args *a = (struct d_args *)p;
    a->ret = fastsync_latch_destroy(a->l);
    if (a->ret == 0) test_page_free(a->l);
    return NULL;
}

static void scene(int kind)
{
    const char *what = kind_name[kind];
    fastsync_latch_t *l = (fastsync_latch_t *)test_page_alloc(sizeof *l, false);
    fastsync_latch_init(l, kind == W_ARRIVE ? 2 : 1, 0);
    /* relaxed: before W starts (its creation publishes them) */
    atomic_store_explicit(&cur, l, memory_order_relaxed);
    atomic_store_explicit(&w_cas, 0, memory_order_relaxed);
    atomic_store_explicit(&hold_at, kind == W_ARRIVE ? 2 : 1, memory_order_relaxed);
    atomic_store_explicit(&w_held, false, memory_order_relaxed);
    atomic_store_explicit(&go, false, memory_order_relaxed);
    struct w_args wa = { kind, -1 };
    if (pthread_create(&w_thread, NULL, w_main, &wa) != 0) bail("pthread_create");
    uint64_t end = test_limit_end(10000);
    /* acquire: pairs with the hook's release store (w_counted before it) */
    while (!atomic_load_explicit(&w_held, memory_order_acquire))
        if (!test_box_open(end)) bail("%s: W never reached its CAS on the latch", what);
        else sched_yield();
    is_int(atomic_load_explicit(&w_counted, memory_order_relaxed), 1,
           "%s: a waiter that has read the word and spun is counted in it before it sleeps", what);

    unsigned long k0 = test_kernel_wakes();
    is_int(fastsync_latch_count_down(l, 1), 0, "%s: the count_down that opens the latch: 0", what);
    is_int(test_kernel_wakes() - k0, 0, "%s: ... no wake: W was inside but had not gone to sleep", what);
    struct d_args da = { l, -1 };
    pthread_t d = test_thread_start(d_main, &da);
    test_thread_join(d);
    is_int(da.ret, EBUSY, "%s: destroy right after the opening waits for W, held inside its wait "
                          "(EBUSY at its limit; 0 would have unmapped the latch under W)", what);

    atomic_store_explicit(&go, true, memory_order_release);
    test_thread_join(w_thread);
    is_int(wa.ret, 0, "%s: W's wait returned 0", what);
    if (da.ret == 0) {
        atomic_store_explicit(&cur, NULL, memory_order_relaxed);
        return; /* unmapped already (not reached: W would have faulted) */
    }
    is_int(test_latch_waiters(l), 0, "%s: W left the latch before its wait returned", what);
    is_int(fastsync_latch_destroy(l), 0, "%s: destroy 0 once W has left", what);
    atomic_store_explicit(&cur, NULL, memory_order_relaxed);
    test_page_free(l);
}

int main(void)
{
    test_init();
#if defined(FASTSYNC__LOCKED_ATOMICS)
    skip_all("the header's atomics are its own here (OS/2 without atomics): no CAS hook");
#endif
#if !TEST_PAGE_MALLOC
    test_page_on_fault(on_segv);
#endif
    diag("latches live in %s", TEST_PAGE_WHERE);
    fastsync_sem_init(&sem, 0, 0);
    test_before_cas = before_cas;
    test_watchdog_start(dump, NULL);
    for (int k = 0; k < W_KINDS; k++) scene(k);
    test_watchdog_stop();
    is_int(test_sem_waiters(&sem), 0, "wait_any left the semaphore");
    return done_testing();
}
