/* SPDX-License-Identifier: MIT */
/* GenMC harness: the semaphore (fastsync_sem_post / _wait) conserves its tokens, loses no
 * wakeup, and hands over what was written before a post. Two waiters and two posters on an
 * empty semaphore, with no spinning, so that every wait that finds no token registers and
 * sleeps; each poster adds to a relaxed counter (sent), then posts once:
 *   - both waiters must return (a token that reaches no sleeper leaves one asleep for ever, a
 *     liveness violation);
 *   - a waiter that got a token sees at least one poster's write before its post (the post's
 *     release pairs with the take's acquire);
 *   - at the end no token is left and no waiter registered.
 * The two waiters, and the two posters, run the same code: GenMC explores each pair as
 * symmetric (__VERIFIER_spawn_symmetric), once per distinct execution. A timed wait that
 * times out is sem_timed_genmc.c's (the two together, a timed waiter among two waiters and
 * two posters, ran 13 minutes here without ending).
 * Planted mistakes: plant_sem_post_relaxed.patch (post's CAS relaxed: a waiter can see no
 * poster's write); plant_sem_post_no_wake.patch (post skips the wake its waiters are owed: a
 * waiter sleeps for ever). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"

static fastsync_sem_t s;
static atomic_int sent; /* relaxed: the post's release must carry it (an RMW: GenMC wants
                           the two posters' writes ordered) */

static void *waiter(void *unused)
{
    (void)unused;
    assert(fastsync_sem_wait(&s) == 0);
    assert(atomic_load_explicit(&sent, memory_order_relaxed) != 0 &&
           "the token's post happens before its take");
    return NULL;
}

static void *poster(void *unused)
{
    (void)unused;
    atomic_fetch_add_explicit(&sent, 1, memory_order_relaxed);
    assert(fastsync_sem_post(&s) == 0);
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    fastsync_sem_init(&s, 0, 0);
    pthread_create(&t[0], NULL, waiter, NULL);
    t[1] = __VERIFIER_spawn_symmetric(waiter, NULL, t[0]);
    pthread_create(&t[2], NULL, poster, NULL);
    t[3] = __VERIFIER_spawn_symmetric(poster, NULL, t[2]);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    uint64_t v = atomic_load_explicit(&s.state, memory_order_relaxed);
    assert(fastsync__sem_tokens(v) == 0 && fastsync__sem_waiters(v) == 0);
    return 0;
}
