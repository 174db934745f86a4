/* SPDX-License-Identifier: MIT */
/* What the condition variable's GenMC harnesses check at the end, once every thread has
 * joined: no ticket registered, no signal pending, and no released ticket that has still to
 * take itself off (R). Included after fastsync.h. It compiles on ff4ee12's header too (0.2's
 * condvar, which has no R), so that a harness can be shown to fail there. */
#ifdef FASTSYNC__CV_KP
#define COND_GENMC_RELEASED(c) atomic_load_explicit(&(c)->released, memory_order_relaxed)
#else
#define COND_GENMC_RELEASED(c) 0u
#endif

static void cond_genmc_assert_idle(fastsync_cond_t *c)
{
    /* relaxed: every thread that touched c has joined */
    uint64_t v = atomic_load_explicit(&c->state, memory_order_relaxed);
    assert(fastsync__cv_waiters(v) == 0 && fastsync__cv_pending(v) == 0);
    assert(COND_GENMC_RELEASED(c) == 0);
}

/* A waiter's whole part: takes a ticket on c, adds 1 to *registered (release: a thread that
 * reads it sees the ticket registered) and awaits the ticket, which must return 0 (left
 * asleep: a liveness violation). */
static void cond_genmc_register_await(fastsync_cond_t *c, atomic_int *registered)
{
    fastsync_cond_ticket_t t;
    assert(fastsync_cond_register(c, &t) == 0);
    atomic_fetch_add_explicit(registered, 1, memory_order_release);
    assert(fastsync_cond_await(c, &t) == 0);
}
