/* SPDX-License-Identifier: MIT */
/* GenMC harness: fastsync_once runs its function once and publishes it (issue 21). Main and
 * two threads call fastsync_once on one once, all free to come first; no spinning, so a
 * caller that finds an initialiser running marks the word WAITED and sleeps (futex_model.h)
 * until the commit's wake, at every moment of its way to sleep. The function adds 1 to a
 * plain int `runs` and writes a plain int `data`. Checked:
 *   - exactly one caller runs the function: two at once race on `runs`, which GenMC
 *     reports, one after the other leave runs == 2;
 *   - every caller that returns sees the function's writes (runs == 1, data == 42): plain
 *     reads, so a return not ordered after them by the commit's release CAS and an acquire
 *     load or CAS failure that read DONE is a race;
 *   - nobody is left asleep (--check-liveness);
 *   - the word holds DONE at the end.
 * (3 051 executions, 0.6 s.)
 * Planted mistake: plant_once_commit_relaxed.patch (commit's CAS relaxed instead of release:
 * a caller that reads DONE races with the function's writes). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_once_t once = FASTSYNC_ONCE_INIT;
static int runs, data; /* plain: the once must order every access */

static void init(void *arg)
{
    assert(arg == &once);
    runs++;
    data = 42;
}

static void call(void)
{
    assert(fastsync_once(&once, init, &once) == 0);
    assert(runs == 1 && data == 42 && "a caller returns after the function, seeing its writes");
}

static void *caller(void *unused)
{
    (void)unused;
    call();
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, caller, NULL);
    call();
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    /* relaxed: the joins order it */
    assert(atomic_load_explicit(&once.state, memory_order_relaxed) == FASTSYNC__ONCE_DONE);
    return 0;
}
