/* SPDX-License-Identifier: MIT */
/* GenMC harness: a reader whose deadline passes leaves rwait for the readers still asleep
 * (issue 20). Main takes the write lock before it starts a timed reader TR and a reader R,
 * lets the deadline of TR's wait pass (futex_model.h's model_time_out, at a moment GenMC
 * chooses: before TR sleeps, while it sleeps, or as a wake picks it), writes a plain int
 * and unlocks. No spinning: both readers sleep on the low half behind main's hold, and
 * whichever set rwait, the other compares a word that has it. TR says ETIMEDOUT (only while
 * main holds the lock: a reader takes a readable lock even past its deadline) leaving rwait
 * set, one needless wake at most, or takes the read lock; either way main's wrunlock must
 * let R in (rwait cleared, a wake of the low half), or R sleeps for ever, a liveness
 * violation. A reader that gets in sees main's write (no race on the int), and at the end
 * the word holds nothing but wseq (main's wrunlock cleared the rwait TR left).
 * TR's timed lock enters fastsync__rw_rdlock_slow as fastsync_rwlock_timedrdlock does once
 * its tryrdlock said EBUSY and its deadline check passed (that check reads the clock, which
 * GenMC does not run; the deadline here is the model's: any non-NULL abstime).
 * Planted mistake: plant_rwlock_reader_timeout_clears_rwait.patch (a timed-out reader
 * clears rwait as it leaves, as if it were its own: R, asleep on a word with rwait, is
 * then owed no wake by main's wrunlock and sleeps for ever). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_rwlock_t rw = FASTSYNC_RWLOCK_INIT;
static int data; /* plain: the lock must order every access */

static void *timed_reader(void *unused)
{
    (void)unused;
    static const struct timespec deadline = { 1, 0 }; /* any: the model decides when it passes */
    int r = fastsync_rwlock_tryrdlock(&rw);
    if (r == EBUSY) r = fastsync__rw_rdlock_slow(&rw, CLOCK_MONOTONIC, &deadline);
    assert(r == 0 || r == ETIMEDOUT);
    if (r == 0) {
        assert(data == 1 && "a reader sees the writer's write");
        assert(fastsync_rwlock_rdunlock(&rw) == 0);
    }
    return NULL;
}

static void *reader(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_rdlock(&rw) == 0);
    assert(data == 1 && "a reader sees the writer's write");
    assert(fastsync_rwlock_rdunlock(&rw) == 0);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    model_wide_word = &rw.state; /* both halves are futex words */
    assert(fastsync_rwlock_wrlock(&rw) == 0);
    pthread_create(&t[0], NULL, timed_reader, NULL);
    pthread_create(&t[1], NULL, reader, NULL);
    model_time_out(); /* while the others run */
    data = 1;
    assert(fastsync_rwlock_wrunlock(&rw) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    uint64_t v = atomic_load_explicit(&rw.state, memory_order_relaxed);
    assert((v & ~(FASTSYNC__RW_SHARED | FASTSYNC__RW_WSEQS)) == 0 && "nothing held, waited or registered");
    return 0;
}
