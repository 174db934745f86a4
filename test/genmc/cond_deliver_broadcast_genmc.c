/* SPDX-License-Identifier: MIT */
/* GenMC harness: delivery rule 1 (every ticket registered before a broadcast returns 0 from
 * its wait, whatever comes after), with later tickets, a signal and a cancel in the mix, and
 * rules 2 and 3 for those later tickets. Waiter A takes a ticket, sets a flag and awaits it:
 * it must return 0 (left asleep: a liveness violation). X waits for the flag, broadcasts,
 * registers tickets C, D and E, signals once, cancels E, then looks at C and D with a deadline
 * already past ({-1, 0}: no clock read; ETIMEDOUT at once unless a signal is owed): exactly
 * one of them takes the signal (rule 3: C, D and E were registered before it, E is cancelled
 * without one; rule 2: A, which the broadcast released, never takes it). At the end no
 * ticket is registered, no signal pending and no released ticket left.
 * On ff4ee12's header (0.2's condvar, one sequence) it fails: the broadcast makes A's signal
 * pending, the later signal and E's cancel move the sequence past C and D, and C and D take
 * the pending signals, A's among them: A sleeps for ever (or C and D both return 0).
 * Planted mistake: plant_cond_broadcast_current_only.patch (a broadcast releases the current
 * group only, not the next, A's: A's group becomes current, the signal goes to A, and C and
 * D both time out). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static atomic_int registered;

static void *waiter_a(void *unused)
{
    (void)unused;
    cond_genmc_register_await(&c, &registered);
    return NULL;
}

static void *x(void *unused)
{
    (void)unused;
    const struct timespec past = { -1, 0 };
    fastsync_cond_ticket_t tc, td, te;
    while (!atomic_load_explicit(&registered, memory_order_acquire)) {}
    fastsync_cond_broadcast(&c);
    assert(fastsync_cond_register(&c, &tc) == 0);
    assert(fastsync_cond_register(&c, &td) == 0);
    assert(fastsync_cond_register(&c, &te) == 0);
    fastsync_cond_signal(&c);
    assert(fastsync_cond_cancel(&c, &te) == 0);
    int rc = fastsync_cond_timedawait(&c, &tc, &past);
    int rd = fastsync_cond_timedawait(&c, &td, &past);
    assert((rc == 0 || rc == ETIMEDOUT) && (rd == 0 || rd == ETIMEDOUT));
    assert((rc == 0) + (rd == 0) == 1); /* the signal went to C or D, to exactly one */
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    pthread_create(&t[0], NULL, waiter_a, NULL);
    pthread_create(&t[1], NULL, x, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    cond_genmc_assert_idle(&c);
    return 0;
}
