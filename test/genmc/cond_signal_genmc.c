/* SPDX-License-Identifier: MIT */
/* GenMC harness: the condition variable's signal/wait handshake with no mutex (the ticket API,
 * the predicate a seq_cst flag). Two waiters each take a ticket, read the flag, and await the
 * ticket if the flag is clear (cancel it if set); the signaler writes a plain int, sets the
 * flag (seq_cst) and signals twice, once per waiter. A waiter whose await returned 0 reads the
 * int at once, without looking at the flag again: a signal must synchronize-with the wait it
 * wakes (no spurious wakeup, no race on the int). A signal skipped while a ticket is
 * registered, or a wake that reaches nobody, leaves a waiter asleep for ever: a liveness
 * violation. At the end no ticket is registered and no signal pending.
 * Planted mistakes: plant_cond_signal_relaxed.patch (signal's first load relaxed: the
 * Dekker handshake with the ticket's seq_cst RMW is gone, a ticket taken just before the
 * signal goes unseen and its waiter sleeps for ever); plant_cond_claim_relaxed.patch (the
 * claim of a signal relaxed instead of acquire: a race on the int). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static atomic_int flag;
static int data; /* plain: the signal must order it */

static void *waiter(void *unused)
{
    (void)unused;
    fastsync_cond_ticket_t t;
    assert(fastsync_cond_register(&c, &t) == 0);
    if (atomic_load_explicit(&flag, memory_order_seq_cst)) {
        assert(fastsync_cond_cancel(&c, &t) == 0);
        return NULL;
    }
    assert(fastsync_cond_await(&c, &t) == 0);
    assert(data == 1); /* no spurious return, and the signal's writes are visible */
    return NULL;
}

static void *signaler(void *unused)
{
    (void)unused;
    data = 1;
    atomic_store_explicit(&flag, 1, memory_order_seq_cst);
    fastsync_cond_signal(&c);
    fastsync_cond_signal(&c);
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    pthread_create(&t[0], NULL, waiter, NULL);
    pthread_create(&t[1], NULL, waiter, NULL);
    pthread_create(&t[2], NULL, signaler, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    cond_genmc_assert_idle(&c);
    return 0;
}
