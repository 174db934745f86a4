/* SPDX-License-Identifier: MIT */
/* rwlock_shared_fork: a FASTSYNC_SHARED reader-writer lock in MAP_SHARED | MAP_ANONYMOUS
 * memory works across fork.
 *   counter: parent and child each make ROUNDS sections on the lock: one in three a write
 *            (wrlock, or a far timedwrlock every other time) that adds 1 to two plain
 *            counters in the shared page, one at a time, and one write in four of those
 *            downgraded and checked; the rest reads (rdlock, or a far timedrdlock) that find
 *            the two counters equal. Exact total; spread over the CPUs and pinned to one
 *            (where the two processes must sleep);
 *   sleepers: the parent write-locks; the child blocks in rdlock (the word says rwait);
 *            the parent's wrunlock wakes it. The parent read-locks; the child blocks in
 *            wrlock (a writer registered); the parent's rdunlock wakes it. Each child exits
 *            having unlocked, the lock free.
 * Every child's exit status is checked; the watchdog kills a hung child. Where the backend
 * has no FASTSYNC_SHARED (init says EINVAL: rwlock_api) the test is skipped.
 * Fails with a process-private futex for a shared lock (the wake in one process misses the
 * sleeper in the other: the sleepers hang), or lost exclusion across processes (the totals,
 * the readers' check). */
#include "harness.h"

#include <sys/mman.h>

#define ROUNDS 15000

struct shm {
    fastsync_rwlock_t rw;
    unsigned long a, b, writes[2];    /* plain: guarded by rw (writes[0] parent, [1] child) */
    _Atomic(unsigned long) child_at;  /* relaxed: the child's progress, for the dump */
    _Atomic(int) child_phase;
};

static struct shm *sh;

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &sh->rw);
    /* relaxed: a diagnostic snapshot. */
    diag("child at round %lu, phase %d", atomic_load_explicit(&sh->child_at, memory_order_relaxed),
         atomic_load_explicit(&sh->child_phase, memory_order_relaxed));
    test_kill_child();
}

/* The loop of both processes (who: 0 parent, 1 child): 0, or a bit per kind of error. */
static int rounds(int who)
{
    int errors = 0;
    uint64_t rng = test_stream(10 + (unsigned)who);
    for (unsigned long i = 0; i < ROUNDS; i++) {
        uint64_t x = test_rand(&rng);
        struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
        if (x % 3 == 0) {
            if ((i % 2 ? fastsync_rwlock_timedwrlock(&sh->rw, &far) : fastsync_rwlock_wrlock(&sh->rw)) != 0)
                errors |= 1;
            unsigned long a = sh->a;
            if (i % 64 == 0) sched_yield(); /* be preempted inside, now and then */
            sh->a = a + 1;
            sh->b++;
            sh->writes[who]++;
            if ((x >> 8) % 4 == 0) {
                if (fastsync_rwlock_downgrade(&sh->rw) != 0) errors |= 2;
                if (sh->a != a + 1 || sh->b != sh->a) errors |= 4;
                if (fastsync_rwlock_rdunlock(&sh->rw) != 0) errors |= 2;
            } else if (fastsync_rwlock_wrunlock(&sh->rw) != 0) {
                errors |= 2;
            }
        } else {
            if ((i % 2 ? fastsync_rwlock_timedrdlock(&sh->rw, &far) : fastsync_rwlock_rdlock(&sh->rw)) != 0)
                errors |= 1;
            unsigned long a = sh->a;
            if (i % 64 == 1) sched_yield();
            if (sh->b != a) errors |= 8;
            if (fastsync_rwlock_rdunlock(&sh->rw) != 0) errors |= 2;
        }
        /* relaxed: progress for the dump. */
        if (who) atomic_store_explicit(&sh->child_at, i + 1, memory_order_relaxed);
    }
    return errors;
}

static int child_rounds(void) { return rounds(1); }

static int child_sleeper(bool writer)
{
    /* relaxed (both stores): progress for the parent. */
    atomic_store_explicit(&sh->child_phase, 1, memory_order_relaxed);
    int r = writer ? fastsync_rwlock_wrlock(&sh->rw) : fastsync_rwlock_rdlock(&sh->rw);
    atomic_store_explicit(&sh->child_phase, 2, memory_order_relaxed);
    if (r != 0) return 1;
    if ((writer ? fastsync_rwlock_wrunlock(&sh->rw) : fastsync_rwlock_rdunlock(&sh->rw)) != 0) return 2;
    return 0;
}

static int child_reader(void) { return child_sleeper(false); }
static int child_writer(void) { return child_sleeper(true); }

static void counter(const char *name, bool pinned)
{
    test_pin_all(pinned); /* the child inherits the affinity */
    sh->a = sh->b = sh->writes[0] = sh->writes[1] = 0;
    pid_t pid = test_spawn(child_rounds);
    int errors = rounds(0);
    is_int(test_reap(pid), 0, "counter %s: the child exited with 0 (its calls said 0, its reads were consistent)",
           name);
    is_int(errors, 0, "counter %s: the parent's calls said 0, its reads were consistent", name);
    diag("counter %s: %lu + %lu write sections", name, sh->writes[0], sh->writes[1]);
    ok(sh->writes[0] > 0 && sh->writes[1] > 0, "counter %s: both processes wrote", name);
    is_int(sh->a, sh->writes[0] + sh->writes[1], "counter %s: plain counter == write sections of both", name);
    is_int(sh->b, sh->a, "counter %s: ... and the second one too", name);
    is_int(fastsync_rwlock_destroy(&sh->rw), 0, "counter %s: free at the end", name);
}

static void sleeper(bool writer)
{
    const char *who = writer ? "writer" : "reader";
    atomic_store_explicit(&sh->child_phase, 0, memory_order_relaxed); /* relaxed: before the fork */
    writer ? fastsync_rwlock_rdlock(&sh->rw) : fastsync_rwlock_wrlock(&sh->rw);
    pid_t pid = test_spawn(writer ? child_writer : child_reader);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && (writer ? test_rwlock_writers(&sh->rw) != 1
                                         : (test_rwlock_word(&sh->rw) & FASTSYNC__RW_RWAIT) == 0))
        test_sleep_ns(100000);
    ok(writer ? test_rwlock_writers(&sh->rw) == 1 : (test_rwlock_word(&sh->rw) & FASTSYNC__RW_RWAIT) != 0,
       "sleeping %s: the child waits (%s)", who, writer ? "a writer registered" : "rwait set");
    test_sleep_ns(50000000);
    /* relaxed: the child cannot pass phase 1 without the lock */
    is_int(atomic_load_explicit(&sh->child_phase, memory_order_relaxed), 1, "sleeping %s: still waiting after 50 ms",
           who);
    is_int(writer ? fastsync_rwlock_rdunlock(&sh->rw) : fastsync_rwlock_wrunlock(&sh->rw), 0, "sleeping %s: %s",
           who, writer ? "rdunlock" : "wrunlock");
    is_int(test_reap(pid), 0, "sleeping %s: the child took the lock, unlocked it and exited with 0", who);
    is_int(test_rwlock_word(&sh->rw) & ~FASTSYNC__RW_WSEQS, FASTSYNC__RW_SHARED,
           "sleeping %s: the word free (shared bit only, wseq aside)", who);
    is_int(fastsync_rwlock_destroy(&sh->rw), 0, "sleeping %s: destroy 0", who);
}

int main(void)
{
    test_init();
    if (!FASTSYNC_HAS_SHARED) skip_all("the " FASTSYNC_BACKEND " backend has no FASTSYNC_SHARED objects");
    sh = (struct shm *)mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) bail("mmap: %s", strerror(errno));
    is_int(fastsync_rwlock_init(&sh->rw, FASTSYNC_SHARED), 0, "init, FASTSYNC_SHARED");
    test_watchdog_start(dump, NULL);
    counter("spread", false);
    counter("pinned", true);
    test_pin_all(false);
    sleeper(false);
    sleeper(true);
    test_watchdog_stop();
    munmap(sh, sizeof *sh);
    return done_testing();
}
