/* SPDX-License-Identifier: MIT */
/* os2_post_inflight_genmc: fastsync_os2.h's semaphore, a post still in flight (between the
 * RMW that publishes its token and its DosPostEventSem) against the destroy of the waiter
 * that took the token, in every interleaving and weak-memory outcome GenMC finds. main
 * waits, takes the poster's token, destroys the semaphore at once and, if destroy said 0,
 * creates an unrelated event semaphore, which gets the slot of the closed HEV; destroy may
 * say EBUSY (the post stayed in flight through its bounded wait: the model's timer moves
 * fast), and then, after the poster is joined, must say 0. Checked: every execution ends,
 * and the unrelated semaphore is not posted. The planted mistake
 * (plant_post_uncounted.patch: post without the posting count, as before) must fail. */
#include "harness_genmc.h"

static fastsync_sem_t sem;

static int destroy(void) { return fastsync_sem_destroy(&sem); }

static void *poster(void *unused)
{
    (void)unused;
    assert(fastsync_sem_post(&sem) == 0);
    return NULL;
}

int main(void)
{
    pthread_t t;
    HEV hev, u = 0;
    int d;
    if (fastsync_sem_init(&sem, 0, 0) != 0) return 1;
    hev = fastsync__os2_hev_load(&sem.o);
    pthread_create(&t, NULL, poster, NULL);
    assert(fastsync_sem_wait(&sem) == 0);
    d = destroy();
    if (d == 0) DosCreateEventSem(NULL, &u, 0, FALSE);
    pthread_join(t, NULL);
    genmc_check_unrelated(d, destroy, &u, hev, FALSE);
    return 0;
}
