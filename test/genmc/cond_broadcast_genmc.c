/* SPDX-License-Identifier: MIT */
/* GenMC harness: one broadcast wakes every waiter, of both kinds. One waiter waits in
 * fastsync_cond_wait with a fastsync_mutex_t while a plain flag is clear (the broadcaster
 * sets it under the mutex: the wait takes its ticket before it unlocks, so the mutex orders
 * the handshake); the other takes tickets and awaits them while a seq_cst flag is clear (the
 * condvar's own handshake). The broadcaster sets both flags, then broadcasts once. (Two
 * waiters in fastsync_cond_wait, on one mutex or on two, took GenMC 5 to more than 10
 * minutes.) No spinning: a contended lock sleeps. A waiter left asleep is a liveness
 * violation; at the end the mutex is unlocked, no ticket is registered and no signal pending.
 * Planted mistake: plant_cond_broadcast_wake_one.patch (broadcast wakes one sleeper instead of
 * all: the other sleeps for ever). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
static int flag; /* plain: under m */
static atomic_int ticket_flag;

static void *waiter(void *unused)
{
    (void)unused;
    fastsync_mutex_lock(&m);
    while (!flag) assert(fastsync_cond_wait(&c, &m) == 0);
    assert(fastsync_mutex_unlock(&m) == 0);
    return NULL;
}

static void *ticket_waiter(void *unused)
{
    (void)unused;
    for (;;) {
        fastsync_cond_ticket_t t;
        assert(fastsync_cond_register(&c, &t) == 0);
        if (atomic_load_explicit(&ticket_flag, memory_order_seq_cst)) {
            fastsync_cond_cancel(&c, &t);
            return NULL;
        }
        assert(fastsync_cond_await(&c, &t) == 0);
    }
}

static void *broadcaster(void *unused)
{
    (void)unused;
    fastsync_mutex_lock(&m);
    flag = 1;
    fastsync_mutex_unlock(&m);
    atomic_store_explicit(&ticket_flag, 1, memory_order_seq_cst);
    fastsync_cond_broadcast(&c);
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    model_wide_word = &c.state;
    pthread_create(&t[0], NULL, waiter, NULL);
    pthread_create(&t[1], NULL, ticket_waiter, NULL);
    pthread_create(&t[2], NULL, broadcaster, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    cond_genmc_assert_idle(&c);
    assert(fastsync_mutex_destroy(&m) == 0);
    return 0;
}
