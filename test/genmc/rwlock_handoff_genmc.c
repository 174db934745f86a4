/* SPDX-License-Identifier: MIT */
/* GenMC harness: the reader-writer lock's hand-offs to a waiter that claimed the next turn
 * (fastsync.h, the section's "Fairness") keep exclusion, lose no wakeup, and let the last
 * owner destroy and free the lock as soon as it unlocks. FASTSYNC_RWLOCK_HANDOFF_NS 0: every
 * sleeper that wakes into a lock it may not take claims (no clock is read), so that every
 * interleaving of a claim, the barge that provokes it and the hand-off is explored. No
 * spinning. The lock is malloc'ed.
 *   main write-locks as it starts a reader R; it unlocks and at once tries to take the write
 *   lock again (trywrlock: the barge, which fails on a turn claimed). R may sleep behind
 *   main, be woken by main's wrunlock, find main's barge inside and claim the readers' turn
 *   (rstarve, with rwait); main's second wrunlock must then give R its read lock (readers
 *   1, rstarve cleared) and wake it, and R find it held. Or R comes late, or main's
 *   trywrlock finds R inside.
 * With RWLOCK_HANDOFF_WRITER (rwlock_handoff_writer_genmc.c) the thread is a writer W in
 * place of R: W woken into main's barge claims wstarve, and main's second wrunlock must hand
 * the lock to W (wseq + 1, every writer woken), which W takes clearing wstarve.
 * A third thread (a writer registered while a reader's claim is pending) made GenMC run for
 * over 15 minutes; the unit test rwlock_starving forces that case (the claimant let in past
 * a registered writer, which goes next). With the bound 0 a reader's sleeps are untimed (no
 * slices: GenMC runs no clock), so the slice after which a reader behind writers looks again
 * and claims is not explored here either: rwlock_starving forces it too.
 * Each section adds 1 to a plain int under its lock (the reader too: it is the only reader,
 * so only the writers' sections exclude it): exclusion, or a lock that does not order the
 * sections, is a race GenMC reports. The reader also checks it saw every section before it.
 * The section that makes the last count (3 with main's barge, else 2) destroys the lock (0:
 * nothing held, registered or claimed) and frees it at once, while the others may still be
 * in their unlocks; without the barge main frees it after the joins, the word then holding
 * nothing but wseq. (rwlock_handoff_genmc: 231 executions; _writer: 203.)
 * Planted mistakes: plant_rwlock_rstarve_no_wake.patch (the hand-off to the claimant reader
 * wakes nobody: R asleep for ever) and plant_rwlock_handoff_uncounted.patch (the hand-off
 * clears rstarve without counting R's read lock: R's rdunlock says EPERM), here;
 * (the claimant's acquire load, made relaxed, is not caught: futex_model.h's fences around
 * every wait, the kernel's barriers, order it too; fastsync.h keeps it acquire, as C11
 * needs without them); plant_rwlock_wstarve_kept.patch (the writer's
 * take leaves wstarve) and plant_rwlock_wstarve_wake_none.patch (the hand-off to the
 * claimant wakes nobody: W asleep for ever) in rwlock_handoff_writer_genmc.c. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define FASTSYNC_RWLOCK_HANDOFF_NS 0
#include "futex_model.h"
#include "fastsync.h"
#include <stdlib.h>

static fastsync_rwlock_t *rw;
static int sections; /* plain: the lock must order every access */
static atomic_bool barged; /* main's trywrlock took the lock (relaxed: written before main's
                            * wrunlock, read under the lock or after the joins) */

/* The count under the lock just taken; the last section destroys and frees after its unlock. */
static void count_and_unlock(int writes)
{
    int s = ++sections;
    int last = atomic_load_explicit(&barged, memory_order_relaxed) ? 3 : 0;
    assert((writes ? fastsync_rwlock_wrunlock(rw) : fastsync_rwlock_rdunlock(rw)) == 0);
    if (s == last) {
        assert(fastsync_rwlock_destroy(rw) == 0 && "nothing held, registered or claimed");
        free(rw);
    }
}

#ifdef RWLOCK_HANDOFF_WRITER
static void *second(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_wrlock(rw) == 0);
    count_and_unlock(1);
    return NULL;
}

#else
static void *second(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_rdlock(rw) == 0);
    count_and_unlock(0);
    return NULL;
}
#endif

int main(void)
{
    rw = malloc(sizeof *rw);
    assert(rw != NULL && fastsync_rwlock_init(rw, 0) == 0);
    model_wide_word = &rw->state; /* both halves are futex words */
    assert(fastsync_rwlock_wrlock(rw) == 0);
    pthread_t t;
    pthread_create(&t, NULL, second, NULL);
    ++sections;
    assert(fastsync_rwlock_wrunlock(rw) == 0);
    if (fastsync_rwlock_trywrlock(rw) == 0) { /* the barge */
        atomic_store_explicit(&barged, 1, memory_order_relaxed);
        count_and_unlock(1);
    }
    pthread_join(t, NULL);
    if (!atomic_load_explicit(&barged, memory_order_relaxed)) {
        assert(sections == 2);
        uint64_t v = atomic_load_explicit(&rw->state, memory_order_relaxed);
        assert((v & ~FASTSYNC__RW_WSEQS) == 0 && "nothing held, waited, registered or claimed");
        free(rw);
    }
    return 0;
}
