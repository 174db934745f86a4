/* SPDX-License-Identifier: MIT */
/* GenMC harness: one condvar taken by ticket across two queues, each with its own mutex
 * (seed 003's shape). Two producers each push one item into their own queue under its
 * mutex, unlock, and signal; one consumer takes both items: it takes a ticket, looks into
 * both queues (each under its mutex), cancels the ticket if one held an item, else awaits
 * it, and starts again until it has both. The queues' mutexes order the handshake: the
 * ticket is taken before the consumer locks a queue, the signal made after the producer
 * unlocks it. A consumer left asleep with an item queued is a liveness violation; at the end
 * no item is left, no ticket is registered, no signal pending and no released ticket left.
 * (A second consumer, re-waiting, is cond_rewait_genmc.c's.)
 * The queues' mutexes are GenMC's pthread mutexes: with fastsync_mutex_t (no spinning, a
 * contended lock asleep in the futex model beside the condvar's sleepers) and the consumer
 * taking one item, GenMC explored 557 804 executions on 0.2's condvar and ran more than 20
 * minutes on this one, nearly all of them the mutexes' own sleeps and wakes (mutex_genmc.c
 * checks those; the condvar sees only the happens-before a lock gives, the same with
 * either). With them it takes both items, so that both signals must reach it.
 * Planted mistake: plant_cond_signal_no_wake.patch (signal publishes its RMW but makes no
 * wake: the consumer sleeps on). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static pthread_mutex_t qm[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static int items[2]; /* plain: under qm[i] */

static bool take(int q)
{
    pthread_mutex_lock(&qm[q]);
    bool got = items[q] > 0;
    if (got) items[q]--;
    pthread_mutex_unlock(&qm[q]);
    return got;
}

static void *consumer(void *unused)
{
    (void)unused;
    int got = 0;
    while (got < 2) {
        fastsync_cond_ticket_t t;
        assert(fastsync_cond_register(&c, &t) == 0);
        int now = take(0) || take(1);
        if (now > 0) {
            fastsync_cond_cancel(&c, &t);
            got += now;
        } else {
            assert(fastsync_cond_await(&c, &t) == 0);
        }
    }
    return NULL;
}

static void *producer(void *arg)
{
    int q = arg != NULL;
    pthread_mutex_lock(&qm[q]);
    items[q]++;
    pthread_mutex_unlock(&qm[q]);
    fastsync_cond_signal(&c);
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    pthread_create(&t[0], NULL, consumer, NULL);
    pthread_create(&t[1], NULL, producer, NULL);
    pthread_create(&t[2], NULL, producer, &c);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    assert(items[0] + items[1] == 0);
    cond_genmc_assert_idle(&c);
    return 0;
}
