/* SPDX-License-Identifier: MIT */
/* cond_cancel: a wait that sleeps is a cancellation point; a cancelled waiter holds the mutex
 * when its cleanup handlers run and leaves no ticket registered; a signal it absorbed goes on.
 *   asleep:    a thread in wait (and one in a far timedwait, one in the ticket's await) is
 *              cancelled in its sleep; its own cleanup handler finds the mutex locked (and
 *              unlocks it); afterwards no ticket is registered and destroy says 0;
 *   pending:   the cancel is pending before the wait: the same, acted on as it sleeps;
 *   absorbed:  A sleeps, then B; a signal wakes A, which is cancelled before it looks at the
 *              word (the cancel made pending from the harness's window after A's futex wait,
 *              acted on there): A's cleanup passes the signal on, and B's wait (a 5 s
 *              timedwait) returns 0, not ETIMEDOUT;
 *   disabled:  with cancellation disabled the wait is no cancellation point: it returns 0 at
 *              the signal, and the thread is cancelled only at its pthread_testcancel.
 * Not on Windows (no thread cancellation). */
#include "harness.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
static _Atomic(int) held_in_cleanup; /* the cleanup handler found the mutex locked */
static _Atomic(int) flag;
static pthread_t absorber;
static _Thread_local bool is_absorber; /* this thread is A */
static _Atomic(int) absorber_armed;
static _Atomic(int) absorber_tid; /* A's thread id (test_tid), for /proc */

enum { K_WAIT, K_TIMED, K_TICKET };

static void dump(void *unused)
{
    (void)unused;
    test_dump_cond("condvar", &c);
    test_dump_mutex("mutex", &m);
}

static void cleanup(void *unused)
{
    (void)unused;
    atomic_store(&held_in_cleanup, test_mutex_state(&m) != 0);
    fastsync_mutex_unlock(&m);
}

/* Its cleanup frame left uninstrumented under AddressSanitizer, as fastsync.h's own
 * (FASTSYNC__CLEANUP_FRAME: ASan trips over the frames a cancellation unwinds). */
static FASTSYNC__CLEANUP_FRAME int wait_kind(int kind)
{
    /* volatile: pthread_cleanup_push may be a setjmp (it is under ASan's build), and r is
     * changed after it (gcc -Wclobbered, an error in CI's ASan section) */
    volatile int r = 0;
    if (kind == K_TICKET) {
        fastsync_cond_ticket_t t;
        fastsync_cond_register(&c, &t);
        if (!atomic_load(&flag)) r = fastsync_cond_await(&c, &t);
        else fastsync_cond_cancel(&c, &t);
        return r;
    }
    fastsync_mutex_lock(&m);
    pthread_cleanup_push(cleanup, NULL);
    while (!atomic_load(&flag) && r == 0) {
        if (kind == K_TIMED) {
            struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
            r = fastsync_cond_timedwait(&c, &m, &far);
        } else {
            r = fastsync_cond_wait(&c, &m);
        }
    }
    pthread_cleanup_pop(1);
    return r;
}

static const char *kind_name(int kind) { return kind == K_WAIT ? "wait" : kind == K_TIMED ? "timedwait" : "await"; }

static void asleep(int kind, bool pending)
{
    struct test_cwaiter w;
    const char *how = kind_name(kind);
    const char *when = pending ? "pending" : "asleep";
    atomic_store(&held_in_cleanup, -1);
    unsigned long w0 = test_kernel_waits();
    test_cwaiter_start(&w, wait_kind, kind, pending, false);
    if (pending) {
        test_cwaiter_cancel_pending(&w); /* acted on as it goes to sleep */
    } else {
        uint64_t end = test_limit_end(5000);
        while (test_box_open(end) && (test_cond_waiters(&c) < 1 || test_kernel_waits() == w0))
            test_sleep_ns(1000000);
        test_sleep_ns(5000000);
        pthread_cancel(w.thread);
    }
    test_cwaiter_join_cancelled(&w, how);
    if (kind != K_TICKET)
        is_int(atomic_load(&held_in_cleanup), 1, "%s, %s: the cleanup handler ran with the mutex held", when, how);
    is_int(test_cond_waiters(&c), 0, "%s, %s: no ticket left", when, how);
    is_int(fastsync_cond_destroy(&c), 0, "%s, %s: destroy says 0", when, how);
    is_int(test_mutex_state(&m), 0, "%s, %s: the mutex unlocked at the end", when, how);
}

/* A's window after its futex wait: once armed, the cancel made pending by this thread's
 * request is acted on here, before A looks at the word. */
static void after_wait(void)
{
    int one = 1;
    if (is_absorber && atomic_compare_exchange_strong(&absorber_armed, &one, 2)) {
        /* The cancel is acted on at pthread_testcancel, not in the sleep that waits for it:
         * nanosleep is a cancellation point too, and ThreadSanitizer's nanosleep, left by the
         * unwinding, stops seeing this thread's later mutex calls (its cleanup's wake then
         * looked unordered with B's wait: a false data race report). */
        int state;
        (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
        while (atomic_load(&absorber_armed) != 3) test_sleep_ns(100000); /* the cancel is sent */
        (void)pthread_setcancelstate(state, &state);
        pthread_testcancel();
    }
}

static FASTSYNC__CLEANUP_FRAME void *absorber_main(void *unused)
{
    (void)unused;
    is_absorber = true;
    atomic_store(&absorber_tid, test_tid());
    fastsync_mutex_lock(&m);
    pthread_cleanup_push(cleanup, NULL);
    fastsync_cond_wait(&c, &m);
    pthread_cleanup_pop(1);
    return NULL;
}

static void *timed_b(void *arg)
{
    struct timespec d = fastsync_deadline_in(5000000000ull);
    fastsync_mutex_lock(&m);
    *(int *)arg = fastsync_cond_timedwait(&c, &m, &d);
    fastsync_mutex_unlock(&m);
    return NULL;
}

static void absorbed(void)
{
    atomic_store(&held_in_cleanup, -1);
    atomic_store(&absorber_armed, 1);
    unsigned long w0 = test_kernel_waits();
    absorber = test_thread_start(absorber_main, NULL);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && (test_cond_waiters(&c) < 1 || test_kernel_waits() == w0))
        test_sleep_ns(1000000);
    /* A asleep first, in the kernel: B, started now, queues behind it, so the signal wakes A */
    ok(test_until_asleep(atomic_load(&absorber_tid), 10000000), "absorbed: A asleep first");
    int rb = -1;
    pthread_t b = test_thread_start(timed_b, &rb);
    while (test_box_open(end) && test_cond_waiters(&c) < 2) test_sleep_ns(1000000);
    test_sleep_ns(10000000);
    fastsync_cond_signal(&c);
    while (test_box_open(end) && atomic_load(&absorber_armed) != 2) test_sleep_ns(100000);
    bool a_woken = atomic_load(&absorber_armed) == 2;
    if (a_woken) {
        pthread_cancel(absorber);
        atomic_store(&absorber_armed, 3);
    }
    ok(a_woken, "absorbed: the signal woke A (the oldest sleeper)");
    ok(test_thread_join(absorber) == PTHREAD_CANCELED, "absorbed: A ended cancelled");
    is_int(atomic_load(&held_in_cleanup), 1, "absorbed: A's cleanup ran with the mutex held");
    test_thread_join(b);
    is_int(rb, 0, "absorbed: B got the signal A passed on (0, not ETIMEDOUT)");
    is_int(test_cond_left(&c), 0, "absorbed: no ticket, no signal left");
    atomic_store(&absorber_armed, 0);
}

static void disabled(void)
{
    struct test_cwaiter w;
    atomic_store(&flag, 0);
    test_cwaiter_start(&w, wait_kind, K_WAIT, false, true);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && test_cond_waiters(&c) < 1) test_sleep_ns(1000000);
    test_sleep_ns(5000000);
    pthread_cancel(w.thread);
    test_sleep_ns(20000000);
    is_int(test_cwaiter_phase(&w), TEST_CW_WAITING, "disabled: the cancel did not end the wait");
    fastsync_mutex_lock(&m);
    atomic_store(&flag, 1);
    fastsync_mutex_unlock(&m);
    fastsync_cond_signal(&c);
    ok(test_thread_join(w.thread) == PTHREAD_CANCELED, "disabled: cancelled at pthread_testcancel");
    is_int(test_cwaiter_phase(&w), TEST_CW_RETURNED, "disabled: ... after the wait returned");
    is_int(w.ret, 0, "disabled: the wait returned 0");
    is_int(test_cond_left(&c), 0, "disabled: no ticket, no signal left");
    atomic_store(&flag, 0);
}

int main(void)
{
    test_init();
    if (!FASTSYNC__CANCEL) skip_all("waits are no cancellation points in this build");
    test_after_futex_wait = after_wait;
    test_watchdog_start(dump, NULL);
    for (int kind = K_WAIT; kind <= K_TICKET; kind++) {
        asleep(kind, false);
        asleep(kind, true);
    }
    absorbed();
    disabled();
    test_watchdog_stop();
    return done_testing();
}
