/* SPDX-License-Identifier: MIT */
/* GenMC harness: the wide semaphore's take_E (fastsync__semw_take_excess), the way a
 * try_acquire and a timed acquire whose deadline passed take a token from E when T has none,
 * at the real M = INT_MAX. T and E start at 0. A releaser writes a plain int and releases
 * M + 1 (more than T holds: all of it into E, then its look moves M into T, one staying in
 * E). A trier calls fastsync__semw_trywait (try_acquire) and a timed waiter waits on T with
 * a deadline that passes at a moment GenMC chooses (futex_model.h's model_time_out) and
 * then calls fastsync__semw_waited (the timed acquires: the refill after a take, take_E
 * after the deadline). Each finds T at 0 before the move, or a token in T after it; an
 * acquire that got a token, from T or from E, reads the releaser's int (else a race). At
 * the end exact conservation (T + E + tokens got == M + 1), no token in E beside room in T
 * (E == 0 or T == M) and no waiter registered. 18 792 executions, 1.7 s.
 * The timed wait enters the C semaphore's slow path as fastsync_sem_clockwait does once its
 * trywait found no token and its deadline check passed (sem_timed_genmc.c says why).
 * Planted mistakes: plant_semw_take_excess_relaxed.patch (take_E's CAS relaxed, not
 * acquire) and plant_semw_add_relaxed.patch (the add relaxed, not release): a race on the
 * int, for a token taken from E. */
#include "semw_genmc.h"

static int data;     /* plain: written before the release, read after an acquire */
static atomic_int got; /* tokens the acquires got (relaxed: read after the joins) */

static void *releaser(void *unused)
{
    (void)unused;
    data = 1;
    (void)fastsync__semw_post_n(&w, M + 1);
    return NULL;
}

static void *trier(void *unused)
{
    (void)unused;
    if (fastsync__semw_trywait(&w) == 0) {
        assert(data == 1);
        atomic_fetch_add_explicit(&got, 1, memory_order_relaxed);
    }
    return NULL;
}

static void *timed_waiter(void *unused)
{
    (void)unused;
    static const struct timespec deadline = { 1, 0 }; /* any: the model decides when it passes */
    int r = fastsync_sem_trywait(&w.t);
    if (r != 0) r = fastsync__sem_wait_slow(&w.t, CLOCK_MONOTONIC, &deadline);
    r = fastsync__semw_waited(&w, r);
    assert(r == 0 || r == ETIMEDOUT);
    if (r == 0) {
        assert(data == 1);
        atomic_fetch_add_explicit(&got, 1, memory_order_relaxed);
    }
    return NULL;
}

int main(void)
{
    void *(*const role[3])(void *) = { releaser, trier, timed_waiter };
    pthread_t t[3];
    assert(fastsync__semw_init(&w, 0, 0) == 0);
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, role[i], NULL);
    model_time_out(); /* while the others run */
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    semw_check_end(0, M + 1, (uint64_t)atomic_load_explicit(&got, memory_order_relaxed));
    return 0;
}
