/* SPDX-License-Identifier: MIT */
/* GenMC harness: delivery rule 5(b), a released ticket cancelled passes one signal to the
 * next group. X registers tickets A and D and signals (A and D's group, current then, gets
 * one signal); waiter B, started by that, registers (the next group), says so and awaits; X
 * signals again (A and D's group has a signal for each ticket: released by a signal, so B's
 * group is current and may take one passed on: KP), then cancels D before it ever looked:
 * the first cancel of a group a signal released, it passes one signal to B's group, and B
 * must return 0 with no further signal (left asleep: a liveness violation). X then cancels A
 * too (a second cancel in that group: dropped, cancel returns 0). Signal 2's wake, and the
 * pass-on's, may reach B before it can use it: B passes it on (FWD) and sleeps again. At the
 * end no ticket is registered, no signal pending and no released ticket left.
 * (On ff4ee12's header it passes: there the second signal calls B itself.) The pass-on's
 * wake taken by a sleeper that cannot use it is cond_pass_on_newest_genmc.c's.
 * Planted mistake: plant_cond_no_pass_on.patch (a released ticket's cancel never passes its
 * signal on: B sleeps for ever). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static atomic_int signalled, registered; /* X's first signal made; B registered */

static void *waiter_b(void *unused)
{
    (void)unused;
    fastsync_cond_ticket_t t;
    while (!atomic_load_explicit(&signalled, memory_order_acquire)) {}
    assert(fastsync_cond_register(&c, &t) == 0);
    atomic_store_explicit(&registered, 1, memory_order_release);
    assert(fastsync_cond_await(&c, &t) == 0);
    return NULL;
}

static void *x(void *unused)
{
    (void)unused;
    fastsync_cond_ticket_t ta, td;
    assert(fastsync_cond_register(&c, &ta) == 0);
    assert(fastsync_cond_register(&c, &td) == 0);
    fastsync_cond_signal(&c); /* A and D's group gets one */
    atomic_store_explicit(&signalled, 1, memory_order_release);
    while (!atomic_load_explicit(&registered, memory_order_acquire)) {}
    fastsync_cond_signal(&c); /* A and D's group released: B's is current */
    assert(fastsync_cond_cancel(&c, &td) == 0); /* passes one signal on to B's group */
    assert(fastsync_cond_cancel(&c, &ta) == 0); /* the second cancel: dropped */
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    pthread_create(&t[0], NULL, x, NULL);
    pthread_create(&t[1], NULL, waiter_b, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    cond_genmc_assert_idle(&c);
    return 0;
}
