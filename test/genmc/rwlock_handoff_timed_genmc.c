/* SPDX-License-Identifier: MIT */
/* GenMC harness: a claimant of the reader-writer lock's next turn whose deadline passes
 * (fastsync.h, the section's "Fairness": deadline) gives the claim back, or takes the lock
 * if it was handed first. FASTSYNC_RWLOCK_HANDOFF_NS 0 (every sleeper that wakes into a lock
 * it may not take claims); no spinning. main write-locks as it starts T, a timed locker (a
 * reader; with RWLOCK_HANDOFF_TIMED_WRITER, rwlock_handoff_timed_writer_genmc.c, a writer);
 * main unlocks, tries to take the write lock again at once (trywrlock: the barge that makes a
 * woken T claim), unlocks if it did, then write-locks and unlocks once more. The deadline of
 * T's wait passes at a moment GenMC chooses (futex_model.h's model_time_out, called by main
 * between its holds): before T sleeps, while it sleeps claimed or not, or as a hand-off wakes
 * it. T enters the slow path as the timed locks do once their try failed and their deadline
 * check passed (that check reads the clock, which GenMC does not run; the deadline here is
 * the model's: any non-NULL abstime).
 * Every path must end: T with 0 (it had the lock: a plain int incremented under it) or
 * ETIMEDOUT; main's last write lock must get in whatever T did. A claimant that left with
 * its claim still in the word (rstarve or wstarve) would keep every writer out (main asleep
 * for ever) or leave the claim behind (the last check). At the end the word holds nothing
 * but wseq, and the int counts every hold.
 * (Reader: 23 626 executions, 6 s; writer: 18 215, 5 s.)
 * Planted mistakes: plant_rwlock_reader_keeps_claim.patch (a timed-out reader returns with
 * rstarve set) here; plant_rwlock_giveup_keeps_claim.patch (a timed-out writer's give-up
 * leaves wstarve) in rwlock_handoff_timed_writer_genmc.c. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define FASTSYNC_RWLOCK_HANDOFF_NS 0
#include "futex_model.h"
#include "fastsync.h"

#ifdef RWLOCK_HANDOFF_TIMED_WRITER
#define T_WRITES 1
#else
#define T_WRITES 0
#endif

static fastsync_rwlock_t rw = FASTSYNC_RWLOCK_INIT;
static int count;          /* plain: the lock must order every access */
static atomic_int t_holds; /* T's holds, 0 or 1 (relaxed: read after the join) */

static void *timed_locker(void *unused)
{
    (void)unused;
    static const struct timespec deadline = { 1, 0 }; /* any: the model decides when it passes */
    int r = T_WRITES ? fastsync_rwlock_trywrlock(&rw) : fastsync_rwlock_tryrdlock(&rw);
    if (r != 0)
        r = T_WRITES ? fastsync__rw_wrlock_slow(&rw, CLOCK_MONOTONIC, &deadline)
                     : fastsync__rw_rdlock_slow(&rw, CLOCK_MONOTONIC, &deadline);
    assert(r == 0 || r == ETIMEDOUT);
    if (r == 0) {
        count++;
        atomic_store_explicit(&t_holds, 1, memory_order_relaxed);
        assert((T_WRITES ? fastsync_rwlock_wrunlock(&rw) : fastsync_rwlock_rdunlock(&rw)) == 0);
    }
    return NULL;
}

int main(void)
{
    int holds = 1;
    model_wide_word = &rw.state; /* both halves are futex words */
    assert(fastsync_rwlock_wrlock(&rw) == 0);
    pthread_t t;
    pthread_create(&t, NULL, timed_locker, NULL);
    count++;
    assert(fastsync_rwlock_wrunlock(&rw) == 0);
    if (fastsync_rwlock_trywrlock(&rw) == 0) { /* the barge */
        count++;
        holds++;
        assert(fastsync_rwlock_wrunlock(&rw) == 0);
    }
    model_time_out(); /* while T runs */
    assert(fastsync_rwlock_wrlock(&rw) == 0);
    count++;
    holds++;
    assert(fastsync_rwlock_wrunlock(&rw) == 0);
    pthread_join(t, NULL);
    assert(count == holds + atomic_load_explicit(&t_holds, memory_order_relaxed));
    uint64_t v = atomic_load_explicit(&rw.state, memory_order_relaxed);
    assert((v & ~FASTSYNC__RW_WSEQS) == 0 && "nothing held, waited, registered or claimed");
    return 0;
}
