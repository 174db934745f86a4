/* SPDX-License-Identifier: MIT */
/* GenMC harness: rule 5(b)'s pass-on when its one wake reaches a ticket that cannot use it
 * (the "Wakes" forward). The futex model wakes the newest sleeper first. Before the threads
 * start, main makes cond_pass_on_genmc.c's state in one thread: it registers tickets A and
 * D, signals (A and D's group gets one), registers B's ticket (the next group) and signals
 * again (A and D's group is released by a signal: B's group is current and may take one
 * passed on). Then waiter B awaits its ticket; waiter E registers (the group after B's),
 * says so and awaits; X waits until E registered and cancels D: the first cancel of a group
 * a signal released, it passes one signal to B's group (releasing it) with one wake, which
 * may reach E, asleep newest: E has nothing to take and must pass the wake on (FWD, a wake
 * of all), or B sleeps for ever (a liveness violation). X then cancels A (dropped) and
 * signals once more, for E. Both waiters must return 0; at the end no ticket is registered,
 * no signal pending and no released ticket left. (With the two registrations and the two
 * signals in X, after B had registered in its own thread, GenMC ran more than 12 minutes
 * here without ending: main makes them, with no other thread to interleave.)
 * Planted mistakes: plant_cond_no_forward.patch (a wake taken and not used is not passed on:
 * E keeps the pass-on's wake); plant_cond_no_pass_on.patch (the cancel never passes its
 * signal on). Both leave B asleep. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WAKE_NEWEST
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_cond_ticket_t ta, td, tb; /* registered by main */
static atomic_int registered;             /* E's ticket taken */

static void *waiter_b(void *unused)
{
    (void)unused;
    assert(fastsync_cond_await(&c, &tb) == 0);
    return NULL;
}

static void *waiter_e(void *unused)
{
    (void)unused;
    cond_genmc_register_await(&c, &registered);
    return NULL;
}

static void *x(void *unused)
{
    (void)unused;
    while (!atomic_load_explicit(&registered, memory_order_acquire)) {}
    assert(fastsync_cond_cancel(&c, &td) == 0); /* passes one signal on to B's group */
    assert(fastsync_cond_cancel(&c, &ta) == 0); /* the second cancel: dropped */
    fastsync_cond_signal(&c);                   /* E's */
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    assert(fastsync_cond_register(&c, &ta) == 0);
    assert(fastsync_cond_register(&c, &td) == 0);
    fastsync_cond_signal(&c); /* A and D's group gets one */
    assert(fastsync_cond_register(&c, &tb) == 0);
    fastsync_cond_signal(&c); /* A and D's group released: B's is current */
    pthread_create(&t[0], NULL, x, NULL);
    pthread_create(&t[1], NULL, waiter_b, NULL);
    pthread_create(&t[2], NULL, waiter_e, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    cond_genmc_assert_idle(&c);
    return 0;
}
