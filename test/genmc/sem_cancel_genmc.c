/* SPDX-License-Identifier: MIT */
/* GenMC harness: a semaphore waiter cancelled in its sleep passes on the wake it may have
 * absorbed (fastsync__sem_cancelled). Two waiters sleep on an empty semaphore, one post
 * comes, and one of the waiters (the target) is cancelled at any moment: before it sleeps,
 * while it sleeps, or after a wake picked it but before it ran on. In every execution where
 * the target ends cancelled, the other waiter must get the token (a lost wake is a liveness
 * violation). A target that is not cancelled in time takes the token and posts it back, so
 * that the other waiter gets it then too. Every execution ends with no token and no waiter.
 * Planted mistake (plant_cancel_no_forward.patch): the cleanup without its FUTEX_WAKE. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation: futex_model.h models it */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"

static fastsync_sem_t s;

/* What POSIX cancellation does to the target: run its cleanup handler, end the thread. */
static void target_cancelled(void)
{
    fastsync__sem_cancelled(&s);
    pthread_exit(NULL);
}

static void *plain_waiter(void *unused)
{
    (void)unused;
    fastsync_sem_wait(&s);
    return NULL;
}

static void *target_waiter(void *unused)
{
    (void)unused;
    model_cancel_target = true;
    fastsync_sem_wait(&s); /* returns only if not cancelled: give the token back */
    fastsync_sem_post(&s);
    return NULL;
}

static void *poster(void *unused)
{
    (void)unused;
    fastsync_sem_post(&s);
    return NULL;
}

static void *canceller(void *unused)
{
    (void)unused;
    model_cancel();
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    fastsync_sem_init(&s, 0, 0);
    model_on_cancelled = target_cancelled; /* before the threads: only the target can be cancelled */
    pthread_create(&t[0], NULL, plain_waiter, NULL);
    pthread_create(&t[1], NULL, target_waiter, NULL);
    pthread_create(&t[2], NULL, poster, NULL);
    pthread_create(&t[3], NULL, canceller, NULL);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    uint64_t v = atomic_load_explicit(&s.state, memory_order_relaxed);
    assert(fastsync__sem_tokens(v) == 0 && fastsync__sem_waiters(v) == 0);
    return 0;
}
