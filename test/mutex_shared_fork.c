/* SPDX-License-Identifier: MIT */
/* mutex_shared_fork: a FASTSYNC_SHARED mutex in MAP_SHARED | MAP_ANONYMOUS memory excludes
 * across fork.
 *   counter:   parent and child each take the mutex ROUNDS times (lock, or a far timedlock
 *              every other time) around a plain counter in the shared page; exact total;
 *              spread over the CPUs and pinned to one (where the two processes must sleep);
 *   sleeper:   the parent holds the mutex while the child blocks in lock (the word says
 *              CONTENDED); the parent's unlock wakes it, and the child exits holding
 *              nothing, the mutex unlocked.
 * Every child's exit status is checked; the watchdog kills a hung child. */
#include "harness.h"

#include <sys/mman.h>

#define ROUNDS 20000

struct shm {
    fastsync_mutex_t m;
    unsigned long counter;           /* plain: guarded by m */
    _Atomic(unsigned long) child_at; /* relaxed: the child's progress, for the dump */
    _Atomic(int) child_phase;
};

static struct shm *sh;

static void dump(void *unused)
{
    (void)unused;
    test_dump_mutex("mutex", &sh->m);
    diag("child at round %lu, phase %d", atomic_load_explicit(&sh->child_at, memory_order_relaxed),
         atomic_load_explicit(&sh->child_phase, memory_order_relaxed));
    test_kill_child();
}

/* The loop of both processes: 0, or a bit per kind of error. */
static int count_rounds(bool progress)
{
    int errors = 0;
    for (unsigned long i = 0; i < ROUNDS; i++) {
        int r;
        if (i % 2) {
            struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
            r = fastsync_mutex_timedlock(&sh->m, &far);
        } else {
            r = fastsync_mutex_lock(&sh->m);
        }
        if (r != 0) errors |= 1;
        unsigned long c = sh->counter;
        if (i % 64 == 0) sched_yield(); /* be preempted inside, now and then */
        sh->counter = c + 1;
        if (fastsync_mutex_unlock(&sh->m) != 0) errors |= 2;
        /* relaxed: progress for the dump. */
        if (progress) atomic_store_explicit(&sh->child_at, i + 1, memory_order_relaxed);
    }
    return errors;
}

static int child_count(void) { return count_rounds(true); }

static int child_sleeper(void)
{
    /* relaxed (both stores): progress for the parent. */
    atomic_store_explicit(&sh->child_phase, 1, memory_order_relaxed);
    int r = fastsync_mutex_lock(&sh->m);
    atomic_store_explicit(&sh->child_phase, 2, memory_order_relaxed);
    if (r != 0) return 1;
    if (fastsync_mutex_unlock(&sh->m) != 0) return 2;
    return 0;
}

static void counter(const char *name, bool pinned)
{
    test_pin_all(pinned); /* the child inherits the affinity */
    sh->counter = 0;
    pid_t pid = test_spawn(child_count);
    int errors = count_rounds(false);
    is_int(test_reap(pid), 0, "counter %s: the child exited with 0 (its locks and unlocks returned 0)", name);
    is_int(errors, 0, "counter %s: the parent's locks and unlocks returned 0", name);
    is_int(sh->counter, 2 * ROUNDS, "counter %s: plain counter == 2 x %d", name, ROUNDS);
    is_int(fastsync_mutex_destroy(&sh->m), 0, "counter %s: unlocked at the end", name);
}

int main(void)
{
    test_init();
    if (!FASTSYNC_HAS_SHARED) skip_all("the " FASTSYNC_BACKEND " backend has no FASTSYNC_SHARED objects");
    sh = (struct shm *)mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) bail("mmap: %s", strerror(errno));
    is_int(fastsync_mutex_init(&sh->m, FASTSYNC_SHARED), 0, "init, FASTSYNC_SHARED");
    test_watchdog_start(dump, NULL);

    counter("spread", false);
    counter("pinned", true);
    test_pin_all(false);

    fastsync_mutex_lock(&sh->m);
    pid_t pid = test_spawn(child_sleeper);
    uint64_t end = test_limit_end(5000);
    while (test_mutex_state(&sh->m) != 2 && test_box_open(end)) test_sleep_ns(100000);
    is_int(test_mutex_state(&sh->m), 2, "sleeper: the child waits, the word says CONTENDED");
    test_sleep_ns(50000000);
    /* relaxed: the child cannot pass phase 1 without the mutex */
    is_int(atomic_load_explicit(&sh->child_phase, memory_order_relaxed), 1, "sleeper: still waiting after 50 ms");
    is_int(fastsync_mutex_unlock(&sh->m), 0, "sleeper: unlock");
    is_int(test_reap(pid), 0, "sleeper: the child took the mutex, unlocked it and exited with 0");
    is_int(fastsync_mutex_destroy(&sh->m), 0, "sleeper: unlocked at the end");

    test_watchdog_stop();
    munmap(sh, sizeof *sh);
    return done_testing();
}
