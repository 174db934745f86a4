/* SPDX-License-Identifier: MIT */
/* GenMC harness: the POSIX backend's wait table (fastsync.h, FASTSYNC_BACKEND_POSIX) never
 * loses a wake. Two events share the table's one bucket (FASTSYNC__TABLE_SIZE 1); a waiter
 * sleeps on each, and a third thread sets one event and then the other. Each waiter must
 * return (a waiter left asleep is a liveness violation), in every interleaving and every
 * weak-memory outcome: the compare under the bucket lock, the queue, the per-node wake, and
 * a wake for one address that must not be taken by the other's waiter.
 * The C library's condition variable is modelled (GenMC has none): a sequence number read
 * under the bucket lock, bumped by a signal made under it, and awaited after the unlock,
 * which is what pthread_cond_wait's atomic unlock-and-sleep promises.
 * Planted mistake (plant_table_compare_unlocked.patch): the word compared before the bucket
 * is locked. */
#define FASTSYNC_BACKEND_POSIX
#define FASTSYNC_NO_CANCEL
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define FASTSYNC__TABLE_SIZE 1
#include <genmc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <assert.h>
#include "cas_progress.h"

/* ---- the pthread calls GenMC does not have ---- */
typedef struct {
    atomic_int seq;
} model_cond_t;
static atomic_int model_spun; /* the effectful write GenMC v0.11 needs after a spin */

static inline int model_cond_init(model_cond_t *c) { atomic_init(&c->seq, 0); return 0; }
static inline int model_cond_wait(model_cond_t *c, pthread_mutex_t *m)
{
    int seq = atomic_load_explicit(&c->seq, memory_order_relaxed); /* under m */
    pthread_mutex_unlock(m);
    /* acquire: pairs with the release increment in model_cond_signal */
    while (atomic_load_explicit(&c->seq, memory_order_acquire) == seq) {}
    atomic_store_explicit(&model_spun, 1, memory_order_relaxed);
    pthread_mutex_lock(m);
    return 0;
}
static inline int model_cond_signal(model_cond_t *c)
{
    /* release: pairs with the acquire load in model_cond_wait */
    atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
    return 0;
}
static bool model_once_done; /* the table is set up in main, before the threads */
static inline int model_once(void (*f)(void))
{
    if (!model_once_done) {
        model_once_done = true;
        f();
    }
    return 0;
}
#define pthread_cond_t model_cond_t
#define pthread_cond_init(c, a) model_cond_init(c)
#define pthread_cond_destroy(c) 0
#define pthread_condattr_t int /* the slices' clock: no deadlines here */
#define pthread_condattr_init(a) 0
#define pthread_condattr_setclock(a, k) 0
#define pthread_condattr_destroy(a) 0
#define pthread_cond_wait(c, m) model_cond_wait(c, m)
#define pthread_cond_timedwait(c, m, t) model_cond_wait(c, m) /* no deadlines here */
#define pthread_cond_signal(c) model_cond_signal(c)
#define pthread_once_t int
#define PTHREAD_ONCE_INIT 0
#define pthread_once(o, f) model_once(f)
#define pthread_atfork(a, b, c) 0
#define pthread_setcancelstate(a, b) 0
#define __builtin_ia32_pause() ((void)0)
#include "fastsync.h"

#include "table_harness.h"

int main(void)
{
    (void)fastsync__bucket_of(&e[0]); /* the table set up, before the threads */
    return table_harness_run();
}
