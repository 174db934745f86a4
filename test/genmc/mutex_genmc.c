/* SPDX-License-Identifier: MIT */
/* GenMC harness: the mutex (fastsync_mutex_lock / _unlock) gives mutual exclusion and loses
 * no wakeup. Three threads lock, increment a plain int, and unlock:
 * with no spinning every contended lock goes to sleep, so every interleaving of newcomers
 * taking the lock as LOCKED (barging) with sleepers woken for CONTENDED is explored. A race
 * on the int (a missing acquire or release) is an error GenMC reports; a lost wakeup leaves
 * a thread asleep for ever, a liveness violation. At the end the count is exact and the
 * mutex unlocked.
 * Planted mistake (plant_mutex_unlock_no_wake.patch): unlock forgets the wake it owes a
 * CONTENDED word. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
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
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, locker, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    assert(count == 3);
    assert(fastsync__mx_state(atomic_load_explicit(&m.state, memory_order_relaxed)) ==
           FASTSYNC__MX_UNLOCKED);
    return 0;
}
