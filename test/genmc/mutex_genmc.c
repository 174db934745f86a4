/* SPDX-License-Identifier: MIT */
/* GenMC harness: the mutex (fastsync_mutex_lock / _unlock) gives mutual exclusion and loses
 * no wakeup. Three threads lock, increment a plain int, and unlock:
 * with no spinning every contended lock goes to sleep, so every interleaving of newcomers
 * taking the lock as LOCKED (barging) with sleepers woken for CONTENDED is explored. A race
 * on the int (a missing acquire or release) is an error GenMC reports; a lost wakeup leaves
 * a thread asleep for ever, a liveness violation. At the end the count is exact and the
 * mutex unlocked.
 * Planted mistake (plant_mutex_unlock_no_wake.patch): unlock forgets the wake it owes a
 * CONTENDED word.
 * mutex_shared_genmc.c includes this file with MUTEX_GENMC_FLAGS FASTSYNC_SHARED: the same
 * over a shared mutex, whose lock takes an unlocked word by a second CAS (the first, from 0,
 * fails on its shared bit); the end checks the whole word, the shared bit too. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

#ifndef MUTEX_GENMC_FLAGS
#define MUTEX_GENMC_FLAGS 0
static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
#else
static fastsync_mutex_t m; /* fastsync_mutex_init'ed by main before the threads start */
#endif
#define MUTEX_GENMC_WORD0 ((MUTEX_GENMC_FLAGS) ? FASTSYNC__MX_SHARED : 0u) /* the word unlocked */
static int count; /* plain: the mutex must order every access */

static void *locker(void *unused)
{
    (void)unused;
    fastsync_mutex_lock(&m);
    count++;
    assert(fastsync_mutex_unlock(&m) == 0);
    return NULL;
}

int main(void)
{
    pthread_t t[3];
#if MUTEX_GENMC_FLAGS
    assert(fastsync_mutex_init(&m, MUTEX_GENMC_FLAGS) == 0);
#endif
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, locker, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    assert(count == 3);
    assert(atomic_load_explicit(&m.state, memory_order_relaxed) == MUTEX_GENMC_WORD0);
    return 0;
}
