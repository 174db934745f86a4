/* SPDX-License-Identifier: MIT */
/* os2_event_leave_genmc: fastsync_os2.h's event, the last owed waiter's settle against
 * destroy, in every interleaving and weak-memory outcome GenMC finds. Two waiters join a
 * reset event; main sets it and destroys it at once. destroy may say EBUSY (a waiter
 * still counted): then main joins the waiters and destroys again, which must say 0. Once
 * a destroy said 0, main creates an unrelated semaphore, posted: it gets the slot of the
 * closed HEV (the model gives the lowest free one), so a reset or post that a waiter still
 * made on the old handle would change its count. Checked: both waits return, every
 * execution ends (no waiter left asleep: --check-liveness), and the unrelated semaphore's
 * count is still 1 at the end. The planted mistake (plant_settle_after_leave.patch: the
 * old order, leave old and then settle) must fail the last check. */
#include "harness_genmc.h"

static fastsync_event_t ev;

static int destroy(void) { return fastsync_event_destroy(&ev); }

static void *waiter(void *unused)
{
    (void)unused;
    fastsync_event_wait(&ev);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    HEV hev, u = 0;
    int d;
    if (fastsync_event_init(&ev, false, 0) != 0) return 1;
    hev = fastsync__os2_hev_load(&ev.o);
    pthread_create(&t[0], NULL, waiter, NULL);
    pthread_create(&t[1], NULL, waiter, NULL);
    /* Both joined the round (a thread still on its way into wait is not "inside" yet:
     * destroying under it is the caller's mistake). GenMC turns this spin into an await. */
    while (fastsync__ev_cur(atomic_load_explicit(&ev.o.state, memory_order_relaxed)) != 2) {
    }
    fastsync_event_set(&ev);
    d = destroy();
    if (d == 0) DosCreateEventSem(NULL, &u, 0, TRUE);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    genmc_check_unrelated(d, destroy, &u, hev, TRUE);
    return 0;
}
