/* SPDX-License-Identifier: MIT */
/* sem_shared_fork: FASTSYNC_SHARED semaphores in MAP_SHARED | MAP_ANONYMOUS memory work
 * across fork.
 *   ping-pong: parent and child hand a plain counter back and forth N times through two
 *              semaphores; each side checks the count it finds; exact totals at the end;
 *   late post: the child blocks in wait, the parent sees it registered and posts after a
 *              delay; the child returns with the token;
 *   the other way: the parent waits, the child posts after a delay;
 *   timeout:   the child's timedwait on a shared semaphore times out; no waiter is left
 *              registered in the shared word.
 * Every child's exit status is checked. The watchdog kills the child when it fires; a
 * child also arms alarm() so that it never outlives a hung parent for long. */
#include "harness.h"

#include <sys/mman.h>

#define ROUNDS 10000

struct shm {
    fastsync_sem_t ping, pong, late, back, timed;
    unsigned long counter;            /* plain: handed over by ping/pong */
    _Atomic(unsigned long) child_at;  /* child's progress (for the dump) */
    _Atomic(int) child_phase;
};

static struct shm *m;
static _Atomic(unsigned long) parent_at;

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("ping", &m->ping);
    test_dump_sem("pong", &m->pong);
    test_dump_sem("late", &m->late);
    test_dump_sem("back", &m->back);
    test_dump_sem("timed", &m->timed);
    /* relaxed: progress read for the dump only. */
    diag("parent at round %lu, child at round %lu, child phase %d",
         atomic_load_explicit(&parent_at, memory_order_relaxed),
         atomic_load_explicit(&m->child_at, memory_order_relaxed),
         atomic_load_explicit(&m->child_phase, memory_order_relaxed));
    test_kill_child();
}

/* ---- children: only fastsync calls, no stdio; the exit code tells what went wrong ---- */

static int child_pingpong(void)
{
    int errors = 0;
    for (unsigned long i = 0; i < ROUNDS; i++) {
        int r;
        if (i % 2) {
            struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
            r = fastsync_sem_timedwait(&m->ping, &far);
        } else {
            r = fastsync_sem_wait(&m->ping);
        }
        if (r != 0) errors |= 1;
        if (m->counter != 2 * i + 1) errors |= 2; /* the parent's increment must be visible */
        m->counter++;
        /* relaxed: progress for the parent's dump. */
        atomic_store_explicit(&m->child_at, i + 1, memory_order_relaxed);
        if (fastsync_sem_post(&m->pong) != 0) errors |= 4;
    }
    return errors;
}

static int child_late(void)
{
    /* relaxed (both stores): progress for the parent's dump. */
    atomic_store_explicit(&m->child_phase, 1, memory_order_relaxed);
    int r = fastsync_sem_wait(&m->late);
    atomic_store_explicit(&m->child_phase, 2, memory_order_relaxed);
    if (r != 0) return 1;
    if (fastsync_sem_getvalue(&m->late) != 0) return 2;
    return 0;
}

static int child_post_back(void)
{
    test_sleep_ns(50000000);
    return fastsync_sem_post(&m->back) != 0 ? 1 : 0;
}

static int child_timeout(void)
{
    struct timespec d = fastsync_deadline_in(30000000);
    int r = fastsync_sem_timedwait(&m->timed, &d);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (r != ETIMEDOUT) return 1;
    if (now.tv_sec < d.tv_sec || (now.tv_sec == d.tv_sec && now.tv_nsec < d.tv_nsec)) return 2; /* early */
    if (fastsync_sem_destroy(&m->timed) != 0) return 3;
    return 0;
}

static void pingpong(const char *name, bool pinned)
{
    test_pin_all(pinned); /* the child inherits the affinity */
    m->counter = 0;
    /* relaxed: progress counters, reset before the child exists */
    atomic_store_explicit(&parent_at, 0, memory_order_relaxed);
    atomic_store_explicit(&m->child_at, 0, memory_order_relaxed);
    unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    pid_t pid = test_spawn(child_pingpong);
    int errors = 0;
    for (unsigned long i = 0; i < ROUNDS; i++) {
        if (m->counter != 2 * i) errors |= 2; /* the child's increment must be visible */
        m->counter++;
        if (fastsync_sem_post(&m->ping) != 0) errors |= 4;
        if (fastsync_sem_wait(&m->pong) != 0) errors |= 1;
        /* relaxed: progress for the dump. */
        atomic_store_explicit(&parent_at, i + 1, memory_order_relaxed);
    }
    is_int(test_reap(pid), 0, "ping-pong %s: the child exited with 0 (its waits, posts and counts were right)", name);
    is_int(errors, 0, "ping-pong %s: the parent's waits, posts and counts were right", name);
    is_int(m->counter, 2 * ROUNDS, "ping-pong %s: counter == 2 x %d", name, ROUNDS);
    is_int(fastsync_sem_getvalue(&m->ping) + fastsync_sem_getvalue(&m->pong), 0, "ping-pong %s: both values 0", name);
    is_int(fastsync_sem_destroy(&m->ping) + fastsync_sem_destroy(&m->pong), 0,
           "ping-pong %s: no waiter left registered", name);
    diag("ping-pong %s: %d rounds, the parent made %lu futex waits and %lu wakes", name, ROUNDS,
         test_kernel_waits() - w0, test_kernel_wakes() - k0);
}

int main(void)
{
    test_init();
    if (!FASTSYNC_HAS_SHARED) skip_all("the " FASTSYNC_BACKEND " backend has no FASTSYNC_SHARED objects");
    m = (struct shm *)mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) bail("mmap: %s", strerror(errno));
    is_int(fastsync_sem_init(&m->ping, 0, FASTSYNC_SHARED), 0, "init ping, FASTSYNC_SHARED");
    is_int(fastsync_sem_init(&m->pong, 0, FASTSYNC_SHARED), 0, "init pong, FASTSYNC_SHARED");
    fastsync_sem_init(&m->late, 0, FASTSYNC_SHARED);
    fastsync_sem_init(&m->back, 0, FASTSYNC_SHARED);
    fastsync_sem_init(&m->timed, 0, FASTSYNC_SHARED);
    test_watchdog_start(dump, NULL);

    pingpong("spread", false);
    pingpong("pinned", true); /* both processes on one CPU: spinning cannot help, they sleep */
    test_pin_all(false);

    /* the child blocks, the parent posts late */
    pid_t pid = test_spawn(child_late);
    uint64_t end = test_limit_end(5000);
    while (fastsync_sem_destroy(&m->late) != EBUSY && test_box_open(end)) test_sleep_ns(100000);
    is_int(fastsync_sem_destroy(&m->late), EBUSY, "late post: the child is registered as a waiter (EBUSY)");
    test_sleep_ns(50000000);
    /* relaxed: the child cannot have passed phase 1 without a token */
    is_int(atomic_load_explicit(&m->child_phase, memory_order_relaxed), 1,
           "late post: the child is still waiting after 50 ms");
    is_int(fastsync_sem_post(&m->late), 0, "late post: post");
    is_int(test_reap(pid), 0, "late post: the child returned with the token and exited with 0");
    is_int(fastsync_sem_getvalue(&m->late), 0, "late post: value 0");
    is_int(fastsync_sem_destroy(&m->late), 0, "late post: no waiter left registered");

    /* the other way: the parent waits for the child's post */
    pid = test_spawn(child_post_back);
    struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
    is_int(fastsync_sem_timedwait(&m->back, &far), 0, "the other way: the parent's timedwait got the child's post");
    is_int(test_reap(pid), 0, "the other way: the child exited with 0");
    is_int(fastsync_sem_getvalue(&m->back), 0, "the other way: value 0");
    is_int(fastsync_sem_destroy(&m->back), 0, "the other way: no waiter left registered");

    /* timeout in the child */
    pid = test_spawn(child_timeout);
    is_int(test_reap(pid), 0, "timeout: the child's 30 ms timedwait gave ETIMEDOUT, not early, and left no waiter");
    is_int(fastsync_sem_getvalue(&m->timed), 0, "timeout: value 0");
    is_int(fastsync_sem_destroy(&m->timed), 0, "timeout: no waiter left registered, seen by the parent");

    test_watchdog_stop();
    munmap(m, sizeof *m);
    return done_testing();
}
