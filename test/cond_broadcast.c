/* SPDX-License-Identifier: MIT */
/* cond_broadcast: one broadcast wakes every waiter. 8 threads lock the mutex and wait on the
 * condvar while a plain flag is clear, half in wait and half in a far timedwait; once all 8
 * are asleep in the kernel (8 futex waits, 8 tickets registered), this thread sets the flag
 * under the mutex and broadcasts once, still holding it: the broadcast makes one wake (of
 * all sleepers), counted while no waiter can run far enough to make a wake of its own (its
 * mutex unlock; counted after the broadcast, it failed this test under qemu-s390x); then
 * every waiter returns 0 having seen the flag, and no ticket or signal is left. Rounds
 * spread over the CPUs and pinned to one. */
#include "harness.h"

enum { WAITERS = 8 };

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
static int flag;            /* plain: under m */
static _Atomic(int) done;   /* waiters returned with the flag seen */
static _Atomic(int) errors; /* waits that returned something else than 0 */

static void dump(void *unused)
{
    (void)unused;
    test_dump_cond("condvar", &c);
    test_dump_mutex("mutex", &m);
    /* relaxed: a diagnostic snapshot. */
    diag("waiters done: %d of %d", atomic_load_explicit(&done, memory_order_relaxed), WAITERS);
}

static void *waiter(void *arg)
{
    bool timed = arg != NULL;
    fastsync_mutex_lock(&m);
    while (!flag) {
        int r;
        if (timed) {
            struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
            r = fastsync_cond_timedwait(&c, &m, &far);
        } else {
            r = fastsync_cond_wait(&c, &m);
        }
        /* relaxed (both counters): read after the joins. */
        if (r != 0) atomic_fetch_add_explicit(&errors, 1, memory_order_relaxed);
    }
    fastsync_mutex_unlock(&m);
    atomic_fetch_add_explicit(&done, 1, memory_order_relaxed);
    return NULL;
}

static void round_of(const char *name, bool pinned)
{
    test_pin_all(pinned);
    flag = 0;
    /* relaxed: before the threads start. */
    atomic_store_explicit(&done, 0, memory_order_relaxed);
    atomic_store_explicit(&errors, 0, memory_order_relaxed);
    unsigned long w0 = test_kernel_waits();
    pthread_t t[WAITERS];
    for (int i = 0; i < WAITERS; i++) t[i] = test_thread_start(waiter, i % 2 ? &c : NULL);
    uint64_t end = test_limit_end(10000);
    while (test_box_open(end) && (test_cond_waiters(&c) < WAITERS || test_kernel_waits() - w0 < WAITERS))
        test_sleep_ns(1000000);
    test_sleep_ns(10000000); /* let the last one reach its sleep */
    is_int(test_cond_waiters(&c), WAITERS, "%s: %d tickets registered", name, WAITERS);
    fastsync_mutex_lock(&m);
    flag = 1;
    /* under the mutex: a woken waiter blocks on it, and makes no wake, until k1 is read */
    unsigned long k0 = test_kernel_wakes();
    is_int(fastsync_cond_broadcast(&c), 0, "%s: broadcast", name);
    unsigned long k1 = test_kernel_wakes();
    fastsync_mutex_unlock(&m);
    for (int i = 0; i < WAITERS; i++) test_thread_join(t[i]);
    is_int(k1 - k0, 1, "%s: the broadcast made one wake (of all)", name);
    /* relaxed: the threads are joined. */
    is_int(atomic_load_explicit(&done, memory_order_relaxed), WAITERS, "%s: every waiter returned", name);
    is_int(atomic_load_explicit(&errors, memory_order_relaxed), 0, "%s: ... every wait with 0", name);
    is_int(test_cond_left(&c), 0, "%s: no ticket, no signal left", name);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    round_of("spread", false);
    round_of("pinned", true);
    test_watchdog_stop();
    return done_testing();
}
