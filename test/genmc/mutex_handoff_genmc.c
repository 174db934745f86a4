/* SPDX-License-Identifier: MIT */
/* GenMC harness: the mutex's hand-off to a starving sleeper (its section's "Fairness") keeps
 * mutual exclusion, loses no wakeup, and lets the last owner destroy and free the mutex as
 * soon as it unlocks. FASTSYNC_MUTEX_HANDOFF_NS 0: every sleeper that wakes into a held mutex
 * claims the next unlock (the clock is not read), so that every interleaving of a claim, the
 * barge that provokes it and the hand-off is explored. No spinning.
 *   main holds the mutex as it starts T, which locks it; main unlocks and at once tries to
 *   take it again (trylock: the barge, which fails on a handed mutex). Each increments a
 *   plain int under the lock. The hand-off: T sleeps, main's unlock wakes it, main's trylock
 *   barges in, T wakes into the held mutex and claims it (CONTENDED | STARVING) and sleeps;
 *   main's unlock hands the mutex to T (the word STARVING alone) and must wake it; T takes it
 *   as CONTENDED. Or T comes late, or main's trylock finds the mutex held or handed.
 *   Whoever makes the third increment destroys the mutex (0: nothing held or handed) and
 *   frees it at once, while the other may still be in its unlock: an unlock that reads the
 *   mutex after its RMW reads freed memory. If main's trylock failed (two increments), main
 *   frees it after the join, the word then exactly 0.
 * With a third thread locking (two sleepers at the hand-off, which wakes them all) this did
 * not end in 10 minutes; the unit test mutex_starving checks that wake's count, and the
 * claims of a second sleeper.
 * Planted mistakes: plant_mutex_handoff_no_wake.patch (the hand-off wakes nobody: T asleep
 * for ever), plant_mutex_handoff_take_relaxed.patch (the claimant's CAS relaxed: a race on
 * the int), plant_mutex_handoff_read_after.patch (the unlock reads the word again after its
 * RMW: freed memory). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define FASTSYNC_MUTEX_HANDOFF_NS 0
#include "futex_model.h"
#include "fastsync.h"
#include <stdlib.h>

static fastsync_mutex_t *m;
static int count; /* plain: the mutex must order every access */

/* The increment, under the lock just taken; the third destroys and frees the mutex after its
 * unlock. */
static void add_and_unlock(void)
{
    int c = ++count;
    assert(fastsync_mutex_unlock(m) == 0);
    if (c == 3) {
        assert(fastsync_mutex_destroy(m) == 0);
        free(m);
    }
}

static void *locker(void *unused)
{
    (void)unused;
    assert(fastsync_mutex_lock(m) == 0);
    add_and_unlock();
    return NULL;
}

int main(void)
{
    m = malloc(sizeof *m);
    assert(m != NULL && fastsync_mutex_init(m, 0) == 0);
    assert(fastsync_mutex_lock(m) == 0);
    pthread_t t;
    pthread_create(&t, NULL, locker, NULL);
    count++;
    assert(fastsync_mutex_unlock(m) == 0);
    int barged = fastsync_mutex_trylock(m) == 0;
    if (barged) add_and_unlock();
    pthread_join(t, NULL);
    if (!barged) {
        assert(count == 2);
        assert(atomic_load_explicit(&m->state, memory_order_relaxed) == 0);
        free(m);
    }
    return 0;
}
