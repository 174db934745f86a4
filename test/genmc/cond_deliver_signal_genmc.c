/* SPDX-License-Identifier: MIT */
/* GenMC harness: delivery rule 2 (a ticket registered after a signal never takes it), with a
 * cancel's pass-on in the mix (rule 5; issue 16's third reproducer). Tickets A and B are
 * registered (by main, before the threads start); waiters A and B each await theirs, A
 * cancellable at any moment (futex_model.h: pending as it goes to sleep, in its sleep, or
 * just after a wake picked it; its cleanup is the header's own, fastsync__cond_cancelled).
 * X signals twice (one signal for each of A and B), registers ticket C, cancels A, then
 * looks at C with a deadline already past ({-1, 0}: no clock read; ETIMEDOUT at once unless
 * a signal is owed): C was registered after both signals and must time out, whatever A's
 * cancel does. B must return 0 (left asleep: a liveness violation), and so must A when the
 * cancel comes too late to act. At the end no ticket is registered, no signal pending and no
 * released ticket left. (With A and B registering in their own threads and X waiting until
 * both had, GenMC ran more than 10 minutes here without ending; with B's ticket X's own,
 * looked at after C's, 3 980 executions.)
 * On ff4ee12's header (0.2's condvar, one sequence) it fails: A, cancelled holding a signal
 * while more tickets than signals are registered (B and C), passes it on by moving the
 * sequence, which calls C too: C takes a signal made before it registered.
 * Planted mistake: plant_cond_register_current.patch (a new ticket joins the current group,
 * not the next: C joins the group after A and B's, and A's cancel, the first of a group a
 * signal released, passes a signal on to C). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation: futex_model.h models it */
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_cond_ticket_t ta, tb; /* registered by main; A's cleanup handler deregisters ta */
static struct fastsync__cond_cleanup a_cleanup = { &c, &ta, NULL };

/* What POSIX cancellation does to A in its wait: run the condvar's cleanup handler (as
 * fastsync_cond_await's, with FASTSYNC_NO_CANCEL off, would), end the thread. */
static void a_cancelled(void)
{
    fastsync__cond_cancelled(&a_cleanup);
    pthread_exit(NULL);
}

static void *waiter_a(void *unused)
{
    (void)unused;
    model_cancel_target = true;
    assert(fastsync_cond_await(&c, &ta) == 0); /* returns only if not cancelled */
    return NULL;
}

static void *waiter_b(void *unused)
{
    (void)unused;
    assert(fastsync_cond_await(&c, &tb) == 0);
    return NULL;
}

static void *x(void *unused)
{
    (void)unused;
    const struct timespec past = { -1, 0 };
    fastsync_cond_ticket_t tc;
    fastsync_cond_signal(&c);
    fastsync_cond_signal(&c);
    assert(fastsync_cond_register(&c, &tc) == 0);
    model_cancel();
    assert(fastsync_cond_timedawait(&c, &tc, &past) == ETIMEDOUT); /* both signals were older */
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    model_on_cancelled = a_cancelled; /* before the threads: only A can be cancelled */
    assert(fastsync_cond_register(&c, &ta) == 0);
    assert(fastsync_cond_register(&c, &tb) == 0);
    pthread_create(&t[0], NULL, waiter_a, NULL);
    pthread_create(&t[1], NULL, waiter_b, NULL);
    pthread_create(&t[2], NULL, x, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    cond_genmc_assert_idle(&c);
    return 0;
}
