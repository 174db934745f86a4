/* SPDX-License-Identifier: MIT */
/* GenMC harness: a semaphore waiter whose deadline passes neither keeps nor loses a token,
 * nor the wake a post meant for it. Two waiters on an empty semaphore, one with a deadline
 * that passes at a moment GenMC chooses (futex_model.h's model_time_out, called by main while
 * the others run: before the timed waiter sleeps, while it sleeps, or as a post's wake picks
 * it), and one post; no spinning. The timed waiter either says ETIMEDOUT, having taken no
 * token, or takes the token and posts it back. Either way the plain waiter must get the
 * token (a wake absorbed by a waiter that leaves is a liveness violation), and at the end no
 * token is left and no waiter registered.
 * The timed wait enters fastsync__sem_wait_slow as fastsync_sem_timedwait does once its
 * trywait found no token and its deadline check passed (that check reads the clock, which
 * GenMC does not run; the deadline here is the model's: any non-NULL abstime).
 * Planted mistake: plant_sem_post_no_wake.patch (post skips the wake its waiters are owed). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"

static fastsync_sem_t s;

static void *plain_waiter(void *unused)
{
    (void)unused;
    assert(fastsync_sem_wait(&s) == 0);
    return NULL;
}

static void *timed_waiter(void *unused)
{
    (void)unused;
    static const struct timespec deadline = { 1, 0 }; /* any: the model decides when it passes */
    int r = fastsync_sem_trywait(&s);
    if (r != 0) r = fastsync__sem_wait_slow(&s, CLOCK_MONOTONIC, &deadline);
    assert(r == 0 || r == ETIMEDOUT);
    if (r == 0) assert(fastsync_sem_post(&s) == 0); /* give the token back */
    return NULL;
}

static void *poster(void *unused)
{
    (void)unused;
    assert(fastsync_sem_post(&s) == 0);
    return NULL;
}

int main(void)
{
    void *(*const role[3])(void *) = { plain_waiter, timed_waiter, poster };
    pthread_t t[3];
    fastsync_sem_init(&s, 0, 0);
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, role[i], NULL);
    model_time_out(); /* while the others run */
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    uint64_t v = atomic_load_explicit(&s.state, memory_order_relaxed);
    assert(fastsync__sem_tokens(v) == 0 && fastsync__sem_waiters(v) == 0 && "no token or waiter left");
    return 0;
}
