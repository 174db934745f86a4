/* SPDX-License-Identifier: MIT */
/* barrier_shared_fork: a FASTSYNC_SHARED barrier in MAP_SHARED | MAP_ANONYMOUS memory works
 * across fork.
 *   rounds: 2 threads in the parent and the child's one (a child of a process with threads
 *           starts none: ThreadSanitizer does not support it) meet at one barrier of 3 for
 *           ROUNDS rounds (spread over the CPUs, then pinned to one, where the threads must
 *           sleep and be woken across processes). Before each wait a thread writes the round into
 *           its own plain slot in the shared page (slots of even and odd rounds apart, as in
 *           barrier_rounds); after it, it finds the round in all three; the thread that gets
 *           FASTSYNC_BARRIER_SERIAL adds 1 to the round's counter in the shared page. At the
 *           end: every round's counter exactly 1 across both processes, each thread's
 *           returns exact;
 *   sleeper: of a barrier of 2, the child arrives and sleeps (the word says `slept`); the
 *           parent's arrival ends the round and wakes it; the child exits with 0.
 * Every child's exit status is checked; the watchdog kills a hung child. Where the backend
 * has no FASTSYNC_SHARED (init says EINVAL: barrier_api) the test is skipped.
 * Fails with a process-private futex for a shared barrier (the wake in one process misses
 * the sleeper in the other: the sleeper hangs, the watchdog's failure), or rounds that do not
 * hold across processes (the counters, the slots). */
#include "harness.h"

#include <sys/mman.h>

#define ROUNDS 1500
#define NT 3 /* threads 0 and 1 in the parent, 2 (its main thread) in the child */

struct shm {
    fastsync_barrier_t bar;
    unsigned long slot[2][NT];         /* plain: slot[r % 2][i] */
    _Atomic(unsigned char) serials[ROUNDS]; /* relaxed: counts, read after the child exited */
    unsigned long back[NT], bad[NT]; /* plain: per thread, read after its join/exit */
    _Atomic(unsigned long) at[NT];     /* relaxed: progress for the dump */
    _Atomic(int) child_phase;
};

static struct shm *sh;

static void dump(void *unused)
{
    (void)unused;
    test_dump_barrier("barrier", &sh->bar);
    /* relaxed: a diagnostic snapshot. */
    for (int i = 0; i < NT; i++) diag("thread %d at round %lu", i, atomic_load_explicit(&sh->at[i], memory_order_relaxed));
    diag("child phase %d", atomic_load_explicit(&sh->child_phase, memory_order_relaxed));
    test_kill_child();
}

static void *runner(void *p)
{
    int me = (int)(intptr_t)p;
    for (unsigned long r = 0; r < ROUNDS; r++) {
        sh->slot[r % 2][me] = r;
        int ret = fastsync_barrier_wait(&sh->bar);
        if (ret == FASTSYNC_BARRIER_SERIAL) atomic_fetch_add_explicit(&sh->serials[r], 1, memory_order_relaxed);
        else if (ret != 0) sh->bad[me]++;
        sh->back[me]++;
        for (int i = 0; i < NT; i++)
            if (sh->slot[r % 2][i] != r) {
                sh->bad[me]++;
                break;
            }
        atomic_store_explicit(&sh->at[me], r + 1, memory_order_relaxed);
    }
    return NULL;
}

static int child_rounds(void)
{
    runner((void *)(intptr_t)2);
    return 0;
}

static void rounds(const char *name, bool pinned)
{
    test_pin_all(pinned); /* the child inherits the affinity */
    memset(sh->slot, 0xff, sizeof sh->slot);
    memset(sh->back, 0, sizeof sh->back);
    memset(sh->bad, 0, sizeof sh->bad);
    for (int r = 0; r < ROUNDS; r++) atomic_store_explicit(&sh->serials[r], 0, memory_order_relaxed); /* before the fork */
    for (int i = 0; i < NT; i++) atomic_store_explicit(&sh->at[i], 0, memory_order_relaxed);
    is_int(fastsync_barrier_init(&sh->bar, NT, FASTSYNC_SHARED), 0, "rounds %s: init(%d, FASTSYNC_SHARED)", name, NT);
    unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    pid_t pid = test_spawn(child_rounds);
    pthread_t t = test_thread_start(runner, (void *)(intptr_t)1);
    runner((void *)(intptr_t)0);
    test_thread_join(t);
    is_int(test_reap(pid), 0, "rounds %s: the child's threads made their %d rounds and it exited with 0", name, ROUNDS);
    unsigned long back = 0, bad = 0, not_one = 0;
    for (int i = 0; i < NT; i++) {
        back += sh->back[i];
        bad += sh->bad[i];
    }
    for (int r = 0; r < ROUNDS; r++) not_one += atomic_load_explicit(&sh->serials[r], memory_order_relaxed) != 1;
    diag("rounds %s: the parent made %lu futex waits, %lu wakes", name, test_kernel_waits() - w0,
         test_kernel_wakes() - k0);
    is_int(back, (unsigned long)ROUNDS * NT, "rounds %s: every thread of both returned from every round", name);
    is_int(not_one, 0, "rounds %s: exactly one SERIAL in each round, across both processes", name);
    is_int(bad, 0, "rounds %s: after each wait every slot said the round (each return SERIAL or 0)", name);
    is_int(fastsync_barrier_destroy(&sh->bar), 0, "rounds %s: destroy 0", name);
}

static int child_sleeper(void)
{
    /* relaxed (both stores): progress for the dump. */
    atomic_store_explicit(&sh->child_phase, 1, memory_order_relaxed);
    int r = fastsync_barrier_wait(&sh->bar);
    atomic_store_explicit(&sh->child_phase, 2, memory_order_relaxed);
    return r == 0 || r == FASTSYNC_BARRIER_SERIAL ? 0 : 1;
}

static void sleeper(void)
{
    atomic_store_explicit(&sh->child_phase, 0, memory_order_relaxed); /* relaxed: before the fork */
    fastsync_barrier_init(&sh->bar, 2, FASTSYNC_SHARED);
    pid_t pid = test_spawn(child_sleeper);
    uint64_t end = test_limit_end(5000);
    while (!(test_barrier_word(&sh->bar) & FASTSYNC__BAR_SLEPT) && test_box_open(end)) test_sleep_ns(100000);
    ok(test_barrier_word(&sh->bar) & FASTSYNC__BAR_SLEPT, "sleeper: the child arrived and sleeps (slept set)");
    test_sleep_ns(20000000); /* into its futex wait */
    is_int(atomic_load_explicit(&sh->child_phase, memory_order_relaxed), 1, "sleeper: still waiting 20 ms later");
    is_int(fastsync_barrier_wait(&sh->bar), FASTSYNC_BARRIER_SERIAL, "sleeper: the parent ends the round: SERIAL");
    is_int(test_reap(pid), 0, "sleeper: the child was woken, returned 0 and exited with 0");
    is_int(test_barrier_word(&sh->bar) & ~FASTSYNC__BAR_ROUND, FASTSYNC__BAR_SHARED,
           "sleeper: the word as init left it (round aside)");
    is_int(fastsync_barrier_destroy(&sh->bar), 0, "sleeper: destroy 0");
}

int main(void)
{
    test_init();
    if (!FASTSYNC_HAS_SHARED) skip_all("the " FASTSYNC_BACKEND " backend has no FASTSYNC_SHARED objects");
    sh = (struct shm *)mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) bail("mmap: %s", strerror(errno));
    test_watchdog_start(dump, NULL);
    rounds("spread", false);
    rounds("pinned", true);
    test_pin_all(false);
    sleeper();
    test_watchdog_stop();
    munmap(sh, sizeof *sh);
    return done_testing();
}
