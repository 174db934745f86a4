/* SPDX-License-Identifier: MIT */
/* GenMC harness: an aborted initialisation hands the once on (issue 21). Main begins first
 * (so it initialises), starts two callers of fastsync_once_begin, writes a plain int `left`
 * and aborts (as C++ call_once does when the function throws; main does not call again).
 * No spinning: a caller that finds main running marks the word WAITED and sleeps
 * (futex_model.h); the abort (at any moment of their way to sleep) wakes them and they look
 * again: one of them initialises and the other sleeps again, or a caller that comes after
 * the abort initialises. The second initialiser asserts it sees `left`, writes a plain int
 * `data` and commits. Checked:
 *   - exactly one initialiser after the abort: each initialiser adds 1 to a plain int
 *     `attempts` (two at once race; one after the commit fails its assert), and the one
 *     caller that is neither returns 0;
 *   - the second initialiser sees what the aborted one wrote (the abort's release CAS, read
 *     by an acquire load or by the acquire CAS that takes NEW);
 *   - every caller that returns 0 sees the commit's write (data == 42);
 *   - nobody is left asleep (--check-liveness); the word holds DONE at the end, with the
 *     shared bit (the once is FASTSYNC_SHARED; the model ignores it).
 * (9 960 executions, 1.5 s.)
 * With ONCE_ABORT_RACE (once_abort_race_genmc.c) main and one thread both call begin, free
 * to come first: the first initialiser aborts, the other commits (32 executions). There the
 * second initialiser's first look may read the initial NEW, before the first one began, and
 * its CAS then take the NEW of the abort (the value came back): only that CAS's acquire
 * orders the aborted initialiser's writes before it. Where main begins before the others
 * start, as above, every look that can lead to the CAS reads the abort's NEW with an
 * acquire load, so the CAS's order is not seen.
 * Planted mistakes: plant_once_abort_no_wake.patch here (abort skips the wake WAITED is
 * owed: the sleepers sleep for ever); plant_once_begin_relaxed.patch in
 * once_abort_race_genmc.c (the CAS that takes NEW relaxed instead of acquire, its failure
 * still followed by an acquire fence: the second initialiser races with the first one's
 * writes). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_once_t once; /* FASTSYNC_SHARED: the shared bit must survive each CAS */
static int attempts, left, data, returned; /* plain: the once must order every access */

/* The first initialiser (attempt 0) aborts, the second commits. */
static void initialise(void)
{
    int attempt = attempts++;
    if (attempt == 0) {
        left = 1;
        assert(fastsync_once_abort(&once) == 0);
        return;
    }
    assert(attempt == 1 && "no initialiser after the commit");
    assert(left == 1 && "the second initialiser sees what the aborted one wrote");
    data = 42;
    assert(fastsync_once_commit(&once) == 0);
}

static void *caller(void *unused)
{
    (void)unused;
    if (fastsync_once_begin(&once) == 1) {
        initialise();
    } else {
        assert(data == 42 && "a caller returns after the commit, seeing its writes");
        returned++;
    }
    return NULL;
}

int main(void)
{
    assert(fastsync_once_init(&once, FASTSYNC_SHARED) == 0);
#ifndef ONCE_ABORT_RACE
    pthread_t t[2];
    assert(fastsync_once_begin(&once) == 1);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, caller, NULL);
    initialise(); /* attempt 0: aborts */
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    assert(attempts == 2 && returned == 1);
#else
    pthread_t t;
    pthread_create(&t, NULL, caller, NULL);
    caller(NULL);
    pthread_join(t, NULL);
    assert(attempts == 2 && returned == 0);
#endif
    /* relaxed: the joins order it */
    assert(atomic_load_explicit(&once.state, memory_order_relaxed) ==
           (FASTSYNC__ONCE_SHARED | FASTSYNC__ONCE_DONE));
    return 0;
}
