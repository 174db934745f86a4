/* SPDX-License-Identifier: MIT */
/* GenMC harness: destroy right after a broadcast returns 0 and is safe (issue 16, item 5).
 * The condvar is malloc'ed. Waiters W1 and W2 each take a ticket, say so, and await it (both
 * must return 0); X waits until both registered, broadcasts, calls destroy, which must
 * return 0, and frees the memory at once: a waiter that touches the condvar after that (its
 * look at the word, its R -= 1, a futex wait's compare) is an access to freed memory, which
 * GenMC reports. Destroy waits for the released tickets with a plain spin on R
 * (FASTSYNC__DESTROY_NS 0: no clock, no yield), a loop GenMC can close.
 * On ff4ee12's header (0.2's condvar) GenMC reports an access to freed memory, with either
 * ending and in cond_destroy_poll_genmc.c too: its destroy returned 0, and a thread touched
 * the condvar after the free.
 * Planted mistake: plant_cond_destroy_no_wait.patch (destroy returns 0 once no ticket is
 * uncalled, without waiting for the released ones: X frees the memory under a waiter that
 * has not looked yet). A releasing signal or broadcast that counts its tickets in R after
 * its RMW, not before, is cond_destroy_poll_genmc.c's (here X's own destroy, after its own
 * broadcast, always sees them counted).
 * With COND_DESTROY_SIGNAL defined (cond_destroy_signal_genmc.c): one waiter, and X, once it
 * registered, registers a ticket of its own, signals once and cancels its own ticket (every
 * ticket called or gone), then destroys and frees. The waiter may claim the signal (its last
 * access, a CAS of `state`, with no R -= 1 after it) before the cancel; that claim must
 * happen before the destroy that returns 0. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC__DESTROY_NS 0 /* destroy spins on R, no clock */
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"
#include <stdlib.h>

#ifdef COND_DESTROY_SIGNAL
#define NWAITERS 1
#else
#define NWAITERS 2
#endif

static fastsync_cond_t *c;
static atomic_int registered;

static void *waiter(void *unused)
{
    (void)unused;
    cond_genmc_register_await(c, &registered);
    return NULL;
}

static void *x(void *unused)
{
    (void)unused;
    while (atomic_load_explicit(&registered, memory_order_acquire) < NWAITERS) {}
#ifdef COND_DESTROY_SIGNAL
    fastsync_cond_ticket_t own;
    assert(fastsync_cond_register(c, &own) == 0);
    fastsync_cond_signal(c);                        /* for the waiter's ticket or X's own */
    assert(fastsync_cond_cancel(c, &own) == 0);     /* every ticket called or gone */
#else
    fastsync_cond_broadcast(c);
#endif
    assert(fastsync_cond_destroy(c) == 0); /* at once */
    free(c);                               /* no waiter touches it any more */
    return NULL;
}

int main(void)
{
    pthread_t t[NWAITERS + 1];
    c = malloc(sizeof *c);
    assert(c != NULL && fastsync_cond_init(c, 0) == 0);
    for (int i = 0; i < NWAITERS; i++) pthread_create(&t[i], NULL, waiter, NULL);
    pthread_create(&t[NWAITERS], NULL, x, NULL);
    for (int i = 0; i <= NWAITERS; i++) pthread_join(t[i], NULL);
    return 0;
}
