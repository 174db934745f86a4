/* SPDX-License-Identifier: MIT */
/* GenMC harness: one condvar taken by ticket across two queues, each with its own
 * fastsync_mutex_t (seed 003's shape). Two producers each push one item into their own queue
 * under its mutex, unlock, and signal; one consumer takes an item: it takes a ticket, looks
 * into both queues (each under its mutex), cancels the ticket if one held an item, else
 * awaits it and starts again. (Taking both items made GenMC run for more than ten minutes.) The queues' mutexes order the handshake: the ticket is taken
 * before the consumer locks a queue, the signal made after the producer unlocks it. No
 * spinning (a contended lock sleeps). A consumer left asleep with an item queued is a
 * liveness violation; at the end one item is left, no ticket is registered and no signal
 * pending. (A second consumer, re-waiting, is cond_rewait_genmc.c's.)
 * Planted mistake: plant_cond_signal_no_wake.patch (signal publishes its RMW but makes no
 * wake: the consumer sleeps on). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_mutex_t qm[2] = { FASTSYNC_MUTEX_INIT, FASTSYNC_MUTEX_INIT };
static int items[2]; /* plain: under qm[i] */

static bool take(int q)
{
    fastsync_mutex_lock(&qm[q]);
    bool got = items[q] > 0;
    if (got) items[q]--;
    fastsync_mutex_unlock(&qm[q]);
    return got;
}

static void *consumer(void *unused)
{
    (void)unused;
    int got = 0;
    while (got < 1) {
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
    fastsync_mutex_lock(&qm[q]);
    items[q]++;
    fastsync_mutex_unlock(&qm[q]);
    fastsync_cond_signal(&c);
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    model_wide_word = &c.state;
    pthread_create(&t[0], NULL, consumer, NULL);
    pthread_create(&t[1], NULL, producer, NULL);
    pthread_create(&t[2], NULL, producer, &c);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    assert(items[0] + items[1] == 1);
    uint64_t v = atomic_load_explicit(&c.state, memory_order_relaxed);
    assert(fastsync__cv_waiters(v) == 0 && fastsync__cv_pending(v) == 0);
    return 0;
}
