/* SPDX-License-Identifier: MIT */
/* mutex_handoff: the lock passes through a queue of sleepers, none lost. This thread holds
 * the mutex while 8 lockers go to sleep in the kernel (one futex wait each); then it unlocks
 * once. Each unlock of a word that says CONTENDED wakes one sleeper, which takes the mutex
 * (as CONTENDED: it cannot know whether others still sleep), counts, and unlocks, waking the
 * next: every locker gets the mutex exactly once, with exactly one wake per unlock (9: this
 * thread's and each locker's, the last one finding nobody) and no locker sleeping twice.
 * Rounds with lock and with a far timedlock.
 * Asleep means: its futex wait made (counted) and, where /proc says, the thread asleep in the
 * kernel. A locker counted but preempted before the kernel read the word would find it
 * UNLOCKED after this thread's unlock, take the mutex ahead of the woken one and send that
 * one to sleep twice, as a barging mutex may (seen once under ASan on a loaded machine, over
 * the OS/2 double). Without /proc (Windows), a 40 ms settle after the count instead. */
#include "harness.h"

enum { LOCKERS = 8 };

static fastsync_mutex_t m;
static unsigned long counter; /* plain: guarded by m */
static _Atomic(int) done;
static struct locker {
    bool timed;
    _Atomic(int) tid; /* its thread id (test_tid), 0 before it runs */
} lockers[LOCKERS];

static void dump(void *unused)
{
    (void)unused;
    test_dump_mutex("mutex", &m);
    for (int i = 0; i < LOCKERS; i++) {
        int tid = atomic_load(&lockers[i].tid), st = tid != 0 ? test_thread_state(tid) : -1;
        diag("locker %d: thread %d, state %c", i, tid, st > 0 ? st : '?');
    }
    /* relaxed: a diagnostic snapshot. */
    diag("lockers done: %d of %d", atomic_load_explicit(&done, memory_order_relaxed), LOCKERS);
}

static void *locker(void *arg)
{
    struct locker *l = (struct locker *)arg;
    int r;
    atomic_store(&l->tid, test_tid());
    if (l->timed) {
        struct timespec far = fastsync_deadline_in(60000000000u);
        r = fastsync_mutex_timedlock(&m, &far);
    } else {
        r = fastsync_mutex_lock(&m);
    }
    if (r == 0) {
        counter++;
        r = fastsync_mutex_unlock(&m);
    }
    /* relaxed: a count read after the joins (and by the dump). */
    if (r == 0) atomic_fetch_add_explicit(&done, 1, memory_order_relaxed);
    return NULL;
}

static void round_of(bool timed)
{
    const char *how = timed ? "timedlock" : "lock";
    fastsync_mutex_init(&m, 0);
    counter = 0;
    atomic_store_explicit(&done, 0, memory_order_relaxed); /* relaxed: before the threads */
    fastsync_mutex_lock(&m);
    unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    pthread_t t[LOCKERS];
    for (int i = 0; i < LOCKERS; i++) {
        lockers[i].timed = timed;
        atomic_store(&lockers[i].tid, 0);
        t[i] = test_thread_start(locker, &lockers[i]);
    }
    uint64_t end = test_limit_end(10000);
    while (test_box_open(end) && test_kernel_waits() - w0 < LOCKERS) test_sleep_ns(1000000);
    int asleep = 0; /* see the top; without /proc, 8 settles of 5 ms */
    for (int i = 0; i < LOCKERS; i++) asleep += test_until_asleep(atomic_load(&lockers[i].tid), 5000000);
    is_int(asleep, LOCKERS, "%s: every locker asleep in its wait (where /proc says)", how);
    is_int(test_kernel_waits() - w0, LOCKERS, "%s: %d lockers asleep in the kernel, one futex wait each", how, LOCKERS);
    is_int(test_mutex_state(&m), 2, "%s: the word says CONTENDED", how);
    is_int(fastsync_mutex_unlock(&m), 0, "%s: one unlock", how);
    for (int i = 0; i < LOCKERS; i++) test_thread_join(t[i]);
    /* relaxed: the threads are joined. */
    is_int(atomic_load_explicit(&done, memory_order_relaxed), LOCKERS, "%s: every locker took the mutex", how);
    is_int(counter, LOCKERS, "%s: plain counter == %d", how, LOCKERS);
    is_int(test_kernel_wakes() - k0, LOCKERS + 1, "%s: one wake per unlock of a CONTENDED word", how);
    is_int(test_kernel_waits() - w0, LOCKERS, "%s: no locker slept twice", how);
    is_int(fastsync_mutex_destroy(&m), 0, "%s: unlocked at the end", how);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    round_of(false);
    round_of(true);
    test_watchdog_stop();
    return done_testing();
}
