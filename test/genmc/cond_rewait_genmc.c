/* SPDX-License-Identifier: MIT */
/* GenMC harness: a thread that takes a ticket between a signal's RMW and its wake must not
 * keep the wake meant for an older ticket (Zig issue 12877's shape). Waiter A takes a ticket
 * and awaits it while flag a is clear; the signaler sets a (seq_cst) and signals, then sets b
 * and signals again. Waiter B takes its first ticket only once the first signal's RMW is done
 * (the futex model's hook before the wake, or the signal's return if it made none), so the
 * first signal is A's; B awaits while b is
 * clear. The futex model wakes the newest sleeper first, so the first wake may reach B, not
 * A: B, back from its sleep uncalled while a signal is pending, must pass the wake on, or A
 * sleeps for ever (a liveness violation; the second signal is B's). At the end no ticket is
 * registered and no signal pending.
 * Planted mistake: plant_cond_no_forward.patch (the uncalled waiter does not pass the wake
 * on). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WORD64
#define MODEL_WAKE_NEWEST
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static atomic_int flag[2];
static atomic_int rmw_done;

static __thread bool is_signaler, let_b_go; /* rmw_done is written once (GenMC's IPR) */

static void before_wake(void)
{
    if (is_signaler && !let_b_go) {
        let_b_go = true;
        atomic_store_explicit(&rmw_done, 1, memory_order_seq_cst);
    }
}

/* One ticket: an await returns 0 only for a signal (rule 4), and flag i is set before it. */
static void wait_for(int i)
{
    fastsync_cond_ticket_t t;
    assert(fastsync_cond_register(&c, &t) == 0);
    if (atomic_load_explicit(&flag[i], memory_order_seq_cst)) {
        fastsync_cond_cancel(&c, &t);
        return;
    }
    assert(fastsync_cond_await(&c, &t) == 0);
}

static void *waiter_a(void *unused)
{
    (void)unused;
    wait_for(0);
    return NULL;
}

static void *waiter_b(void *unused)
{
    (void)unused;
    while (!atomic_load_explicit(&rmw_done, memory_order_seq_cst)) {}
    wait_for(1);
    return NULL;
}

static void *signaler(void *unused)
{
    (void)unused;
    is_signaler = true;
    atomic_store_explicit(&flag[0], 1, memory_order_seq_cst);
    fastsync_cond_signal(&c);
    before_wake(); /* (a signal that found no ticket made no wake: let B go all the same) */
    atomic_store_explicit(&flag[1], 1, memory_order_seq_cst);
    fastsync_cond_signal(&c);
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    model_before_wake = before_wake;
    pthread_create(&t[0], NULL, waiter_a, NULL);
    pthread_create(&t[1], NULL, waiter_b, NULL);
    pthread_create(&t[2], NULL, signaler, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    cond_genmc_assert_idle(&c);
    return 0;
}
