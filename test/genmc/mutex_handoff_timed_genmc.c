/* SPDX-License-Identifier: MIT */
/* GenMC harness: a claimant of the mutex's hand-off whose deadline passes (its section's
 * "Fairness": deadline) gives the claim back, or takes the mutex if it was handed first.
 * FASTSYNC_MUTEX_HANDOFF_NS 0 (every sleeper that wakes into a held mutex claims the next
 * unlock); no spinning. main holds the mutex as it starts T, a timed locker; main unlocks,
 * tries to take it again at once (trylock: the barge that makes a woken T claim), unlocks
 * if it did, then locks and unlocks it once more. The deadline of T's wait passes at a
 * moment GenMC chooses (futex_model.h's model_time_out, called by main between its two
 * holds): before T sleeps, while it sleeps claimed or not, or as a hand-off wakes it. T's
 * timed lock enters fastsync__mutex_lock_slow as fastsync_mutex_timedlock does once its
 * trylock failed and its deadline check passed (that check reads the clock, which GenMC does
 * not run; the deadline here is the model's: any non-NULL abstime).
 * Every path must end: T with 0 (it had the mutex: a plain int incremented under it) or
 * ETIMEDOUT; main's last lock must get the mutex whatever T did. A claimant that left with
 * its claim (STARVING) still in the word would have every later unlock hand the mutex to
 * nobody: main asleep for ever. At the end the word is 0 and the int counts every hold.
 * Planted mistake: plant_mutex_handoff_keep_claim.patch (a timed-out claimant returns
 * without clearing STARVING). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define FASTSYNC_MUTEX_HANDOFF_NS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
static int count;          /* plain: the mutex must order every access */
static atomic_int t_holds; /* T's holds, 0 or 1 (relaxed: read after the join) */

static void *timed_locker(void *unused)
{
    (void)unused;
    static const struct timespec deadline = { 1, 0 }; /* any: the model decides when it passes */
    int r = fastsync_mutex_trylock(&m);
    if (r != 0) r = fastsync__mutex_lock_slow(&m, CLOCK_MONOTONIC, &deadline);
    assert(r == 0 || r == ETIMEDOUT);
    if (r == 0) {
        count++;
        atomic_store_explicit(&t_holds, 1, memory_order_relaxed);
        assert(fastsync_mutex_unlock(&m) == 0);
    }
    return NULL;
}

int main(void)
{
    int holds = 1;
    assert(fastsync_mutex_lock(&m) == 0);
    pthread_t t;
    pthread_create(&t, NULL, timed_locker, NULL);
    count++;
    assert(fastsync_mutex_unlock(&m) == 0);
    if (fastsync_mutex_trylock(&m) == 0) { /* the barge */
        count++;
        holds++;
        assert(fastsync_mutex_unlock(&m) == 0);
    }
    model_time_out(); /* while T runs */
    assert(fastsync_mutex_lock(&m) == 0);
    count++;
    holds++;
    assert(fastsync_mutex_unlock(&m) == 0);
    pthread_join(t, NULL);
    assert(count == holds + atomic_load_explicit(&t_holds, memory_order_relaxed));
    assert(atomic_load_explicit(&m.state, memory_order_relaxed) == 0);
    return 0;
}
