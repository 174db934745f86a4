/* SPDX-License-Identifier: MIT */
/* GenMC harness: no caller of a once sleeps through the commit (issue 21). Main begins first
 * (so it initialises), then starts two callers of fastsync_once_begin, writes a plain int and
 * commits. No spinning: each caller finds RUNNING or WAITED, the first of them (or both,
 * their CASes racing) moves RUNNING to WAITED, and each goes to sleep on WAITED
 * (futex_model.h); main's commit at any moment of their way to sleep: before one's CAS (it
 * reads DONE), between its CAS and its futex compare (the compare differs), or once it
 * sleeps (the commit's CAS read WAITED, its wake of all must reach it). Checked: nobody is
 * left asleep (--check-liveness); both callers get 0 and see main's write (a plain int); the
 * word holds DONE at the end, with the shared bit (the once is FASTSYNC_SHARED; the model
 * ignores it). (189 executions.)
 * Planted mistakes: plant_once_commit_no_wake.patch (commit skips the wake WAITED is owed);
 * plant_once_sleep_on_running.patch (a caller sleeps on RUNNING without making it WAITED:
 * the commit reads RUNNING and wakes nobody); both leave a caller asleep. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_once_t once; /* FASTSYNC_SHARED: the shared bit must survive each CAS */
static int data; /* plain: the once must order it */

static void *caller(void *unused)
{
    (void)unused;
    assert(fastsync_once_begin(&once) == 0 && "main initialises");
    assert(data == 42 && "a caller returns after the commit, seeing main's writes");
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    assert(fastsync_once_init(&once, FASTSYNC_SHARED) == 0);
    assert(fastsync_once_begin(&once) == 1);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, caller, NULL);
    data = 42;
    assert(fastsync_once_commit(&once) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    /* relaxed: the joins order it */
    assert(atomic_load_explicit(&once.state, memory_order_relaxed) ==
           (FASTSYNC__ONCE_SHARED | FASTSYNC__ONCE_DONE));
    return 0;
}
