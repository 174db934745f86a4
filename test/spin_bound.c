/* SPDX-License-Identifier: MIT */
/* spin_bound: the spin before a sleep is bounded in time, not only in steps. Built with step
 * counts no run can reach (FASTSYNC_SPIN 10^9 pauses; or, as spin_bound_yields, one pause
 * and FASTSYNC_SPIN_YIELDS 10^9 yields: seconds to hours of spinning) and time bounds of
 * 200 us (FASTSYNC_SPIN_NS for the pauses, FASTSYNC_SPIN_YIELDS_NS for the yields): a waiter
 * on an object this thread keeps unavailable must go to sleep (its wait reaches the kernel:
 * the counting layer's test_kernel_waits) within the 5 s limit, for every primitive that
 * spins: the semaphore at 0, the mutex held, a writer on a read-held reader-writer lock
 * (which spins with pauses only and registers as it goes to sleep: writers-first from then
 * on), a reader on a write-held one, a latch at 1, a barrier short of its count; and a timed
 * write lock on a read-held lock (20 ms) returns ETIMEDOUT, never before its deadline. Then
 * the object is made available and the waiter's call returns 0. Fails with a spin that
 * ignores a time bound (the waiter spins past the limit: "never slept"). */
#include "harness.h"

enum kind { K_SEM, K_MUTEX, K_WRITER, K_READER, K_LATCH, K_BARRIER, K_TIMED_WRITER, K_KINDS };
static const char *const kind_name[K_KINDS] = {
    "semaphore at 0", "mutex held", "writer on a read-held rwlock", "reader on a write-held rwlock",
    "latch at 1", "barrier of 2, one arrived", "20 ms timed writer on a read-held rwlock"};

static fastsync_sem_t sem;
static fastsync_mutex_t mx;
static fastsync_rwlock_t rw;
static fastsync_latch_t latch;
static fastsync_barrier_t bar;
static enum kind kind; /* set before the waiter starts (thread creation orders it) */
static _Atomic(int) result = -1; /* the waiter's call; release by the waiter, acquire here */
static int64_t timed_late_ns;    /* K_TIMED_WRITER: return less deadline; read after the join */

static void dump(void *unused)
{
    (void)unused;
    diag("case %s, waits made %lu", kind_name[kind], test_kernel_waits());
}

static void *waiter(void *unused)
{
    (void)unused;
    int r = -1;
    switch (kind) {
    case K_SEM: r = fastsync_sem_wait(&sem); break;
    case K_MUTEX: r = fastsync_mutex_lock(&mx); break;
    case K_WRITER: r = fastsync_rwlock_wrlock(&rw); break;
    case K_READER: r = fastsync_rwlock_rdlock(&rw); break;
    case K_LATCH: r = fastsync_latch_wait(&latch); break;
    case K_BARRIER: r = fastsync_barrier_wait(&bar); r = r == FASTSYNC_BARRIER_SERIAL ? 0 : r; break;
    case K_TIMED_WRITER: {
        struct timespec d = test_deadline_on(CLOCK_MONOTONIC, 20000000);
        r = fastsync_rwlock_timedwrlock(&rw, &d);
        timed_late_ns = test_clock_ns(CLOCK_MONOTONIC) - test_ts_ns(d);
        break;
    }
    default: break;
    }
    atomic_store_explicit(&result, r, memory_order_release);
    return NULL;
}

/* Makes the object unavailable (before the waiter starts) or available again (after). */
static void hold(enum kind k)
{
    switch (k) {
    case K_SEM: fastsync_sem_init(&sem, 0, 0); break;
    case K_MUTEX: fastsync_mutex_init(&mx, 0); fastsync_mutex_lock(&mx); break;
    case K_WRITER:
    case K_TIMED_WRITER: fastsync_rwlock_init(&rw, 0); fastsync_rwlock_rdlock(&rw); break;
    case K_READER: fastsync_rwlock_init(&rw, 0); fastsync_rwlock_wrlock(&rw); break;
    case K_LATCH: fastsync_latch_init(&latch, 1, 0); break;
    case K_BARRIER: fastsync_barrier_init(&bar, 2, 0); break;
    default: break;
    }
}

static void release(enum kind k)
{
    switch (k) {
    case K_SEM: fastsync_sem_post(&sem); break;
    case K_MUTEX: fastsync_mutex_unlock(&mx); break;
    case K_WRITER:
    case K_TIMED_WRITER: fastsync_rwlock_rdunlock(&rw); break;
    case K_READER: fastsync_rwlock_wrunlock(&rw); break;
    case K_LATCH: fastsync_latch_count_down(&latch, 1); break;
    case K_BARRIER: {
        int r = fastsync_barrier_wait(&bar);
        ok(r == 0 || r == FASTSYNC_BARRIER_SERIAL, "%s: this thread's barrier wait returned %d", kind_name[k], r);
        break;
    }
    default: break;
    }
}

/* The waiter's object and its own unlock after its call, then destroy. */
static void finish(enum kind k)
{
    switch (k) {
    case K_SEM: is_int(fastsync_sem_destroy(&sem), 0, "%s: destroy", kind_name[k]); break;
    case K_MUTEX:
        fastsync_mutex_unlock(&mx);
        is_int(fastsync_mutex_destroy(&mx), 0, "%s: destroy", kind_name[k]);
        break;
    case K_WRITER: fastsync_rwlock_wrunlock(&rw); /* fall through */
    case K_TIMED_WRITER: is_int(fastsync_rwlock_destroy(&rw), 0, "%s: destroy", kind_name[k]); break;
    case K_READER:
        fastsync_rwlock_rdunlock(&rw);
        is_int(fastsync_rwlock_destroy(&rw), 0, "%s: destroy", kind_name[k]);
        break;
    case K_LATCH: is_int(fastsync_latch_destroy(&latch), 0, "%s: destroy", kind_name[k]); break;
    case K_BARRIER: is_int(fastsync_barrier_destroy(&bar), 0, "%s: destroy", kind_name[k]); break;
    default: break;
    }
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    for (int k = 0; k < K_KINDS; k++) {
        kind = (enum kind)k;
        hold(kind);
        atomic_store_explicit(&result, -1, memory_order_relaxed); /* before the thread starts */
        unsigned long w0 = test_kernel_waits();
        pthread_t t = test_thread_start(waiter, NULL);
        /* A sound spin ends 200 us (plus one step) after it began: the waiter then sleeps.
         * One that ignored the bound would spin for half a minute or more. */
        uint64_t end = test_limit_end(5000);
        while (test_box_open(end) && test_kernel_waits() == w0) test_sleep_ns(100000);
        if (!ok(test_kernel_waits() != w0, "%s: the waiter went to sleep (its spin ended)", kind_name[k]))
            bail("the waiter spins on: no way to end it");
        if (kind == K_WRITER)
            is_int(test_rwlock_writers(&rw), 1, "%s: the writer registered before it slept", kind_name[k]);
        if (kind == K_TIMED_WRITER) {
            test_thread_join(t);
            is_int(atomic_load_explicit(&result, memory_order_acquire), ETIMEDOUT, "%s: ETIMEDOUT",
                   kind_name[k]);
            ok(timed_late_ns >= 0, "%s: not before its deadline (%lld ns after it)", kind_name[k],
               (long long)timed_late_ns);
            release(kind);
        } else {
            release(kind);
            test_thread_join(t);
            is_int(atomic_load_explicit(&result, memory_order_acquire), 0, "%s: the waiter's call returned 0",
                   kind_name[k]);
        }
        finish(kind);
    }
    test_watchdog_stop();
    return done_testing();
}
