/* SPDX-License-Identifier: MIT */
/* GenMC harness: commit touches the once only up to its CAS: a caller that reads DONE may
 * free it at once (issue 21). The once is malloc'ed; main begins (so it initialises), starts
 * two callers of fastsync_once_begin, writes a plain int and commits. No spinning: a caller
 * reads DONE at its first look, or marks the word WAITED (or finds it so) and reads DONE at
 * its futex compare or after the commit's wake, at every moment of its way to sleep. Each
 * checks main's write once its begin returns 0, and the second to get there frees the once
 * at once, perhaps before the commit's wake (it read WAITED) has run: a wake only compares
 * the address (futex_model.h), but any access to the once after the commit's CAS (a load of
 * the word) is an access to freed memory, which GenMC reports. The callers' own accesses
 * (their CAS to WAITED, their futex compares) come before the free through the count of
 * callers out (an acq_rel RMW; relaxed, GenMC reports the first caller's accesses as
 * accesses to freed memory). Checked also: nobody is left asleep (--check-liveness).
 * (378 executions.)
 * Planted mistake: plant_once_load_after_commit.patch (the wake's shared bit read from the
 * word after the CAS, not from the value the CAS read). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"
#include <stdlib.h>

static fastsync_once_t *once;
static int data;         /* plain: the once must order it */
static atomic_int out;   /* callers whose begin has returned */

static void *caller(void *unused)
{
    (void)unused;
    assert(fastsync_once_begin(once) == 0 && "main initialises");
    assert(data == 42 && "a caller returns after the commit, seeing main's writes");
    /* acq_rel: the first caller out releases its accesses to the once (its CAS, its futex
     * compare), the second acquires them before its free */
    if (atomic_fetch_add_explicit(&out, 1, memory_order_acq_rel) == 1)
        free(once); /* the last user: the committer no longer touches it */
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    once = malloc(sizeof *once);
    assert(once != NULL && fastsync_once_init(once, 0) == 0);
    assert(fastsync_once_begin(once) == 1);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, caller, NULL);
    data = 42;
    assert(fastsync_once_commit(once) == 0); /* main's last access to the once */
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 0;
}
