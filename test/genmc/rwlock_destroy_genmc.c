/* SPDX-License-Identifier: MIT */
/* GenMC harness: an unlock touches the reader-writer lock only up to its RMW: the thread it
 * lets in may destroy and free the lock at once (issue 20). The lock is malloc'ed. Main
 * takes the write lock before it starts a reader R and a writer W, then unlocks (its last
 * access to the lock). R and W each take the lock once (R a read lock, W the write lock:
 * they exclude each other), count themselves in under it and unlock; the second to come in
 * came in after the first one's unlock (and main's), so it is the last user: it unlocks,
 * destroys (which must return 0) and frees the memory at once (15 811 executions). No
 * spinning: R and W may sleep behind main and behind each other, so the unlocks before the
 * free hand off and wake: main's wrunlock to W (wseq + 1, a wake of the high half) or R
 * (rwait cleared, a wake of the low half), W's wrunlock to R, R's rdunlock to W. The lock
 * orders before the free what an unlocker did up to its release RMW, nothing after it: an
 * access to the lock there (a load of the word, a futex wait's compare) is an access to
 * freed memory, which GenMC reports; a wake, which only compares the address
 * (futex_model.h), is none.
 * With RWLOCK_DESTROY_GIVEUP (rwlock_destroy_giveup_genmc.c) the last user is a reader let
 * in by a writer's give-up: main holds a read lock while it starts a timed writer T and a
 * reader R, and lets T's deadline pass; R starts its read lock once T is registered (or has
 * returned), so that it comes in only after T's give-up; main unlocks once R is in and says
 * so (release: main's unlock is not what is checked here); R unlocks, waits for that, and
 * destroys and frees. T's registration, its futex wait's compare and its give-up must
 * happen before the free: only T's release give-up, read by R's acquire read lock (or an
 * RMW after it, in its release sequence), orders them (2 256 executions).
 * Planted mistakes: plant_rwlock_load_after_unlock.patch here (an unlock reads the shared
 * bit for its wake from the word after its RMW, not from the value the RMW read);
 * plant_rwlock_giveup_relaxed.patch in rwlock_destroy_giveup_genmc.c (the give-up's CAS
 * relaxed, as it was before fastsync.h's b52fda0: T's accesses race with the free, as
 * ThreadSanitizer found in rwlock_destroy_after_unlock). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"
#include <stdlib.h>

static fastsync_rwlock_t *rw;

static void last_out(void)
{
    assert(fastsync_rwlock_destroy(rw) == 0 && "free after the last unlock");
    free(rw); /* no unlocker touches it any more */
}

#ifndef RWLOCK_DESTROY_GIVEUP
static atomic_int entered; /* relaxed: counted under the lock, which orders it */

static void *reader(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_rdlock(rw) == 0);
    int second = atomic_fetch_add_explicit(&entered, 1, memory_order_relaxed) == 1;
    assert(fastsync_rwlock_rdunlock(rw) == 0);
    if (second) last_out();
    return NULL;
}

static void *writer(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_wrlock(rw) == 0);
    int second = atomic_fetch_add_explicit(&entered, 1, memory_order_relaxed) == 1;
    assert(fastsync_rwlock_wrunlock(rw) == 0);
    if (second) last_out();
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    rw = malloc(sizeof *rw);
    assert(rw != NULL && fastsync_rwlock_init(rw, 0) == 0);
    model_wide_word = &rw->state; /* both halves are futex words */
    assert(fastsync_rwlock_wrlock(rw) == 0);
    pthread_create(&t[0], NULL, reader, NULL);
    pthread_create(&t[1], NULL, writer, NULL);
    assert(fastsync_rwlock_wrunlock(rw) == 0); /* main's last access to the lock */
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 0;
}
#else
static atomic_int r_in;      /* R holds its read lock */
static atomic_int t_done;    /* T has returned (release: its accesses come before) */
static atomic_int main_done; /* main has unlocked (release: its accesses come before) */

static void *timed_writer(void *unused)
{
    (void)unused;
    static const struct timespec deadline = { 1, 0 }; /* any: the model decides when it passes */
    int r = fastsync_rwlock_trywrlock(rw);
    if (r != 0) r = fastsync__rw_wrlock_slow(rw, CLOCK_MONOTONIC, &deadline);
    assert(r == ETIMEDOUT && "main's read lock, held until R is in, keeps T out");
    atomic_store_explicit(&t_done, 1, memory_order_release);
    return NULL;
}

static void *reader(void *unused)
{
    (void)unused;
    /* until T is registered (relaxed: R's read lock then comes after it on the word, and
     * can come in only after T's give-up) or has returned (acquire: T's accesses before) */
    while ((atomic_load_explicit(&rw->state, memory_order_relaxed) & FASTSYNC__RW_WRITERS) == 0 &&
           !atomic_load_explicit(&t_done, memory_order_acquire)) {}
    assert(fastsync_rwlock_rdlock(rw) == 0);
    atomic_store_explicit(&r_in, 1, memory_order_relaxed);
    assert(fastsync_rwlock_rdunlock(rw) == 0);
    while (!atomic_load_explicit(&main_done, memory_order_acquire)) {}
    last_out();
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    rw = malloc(sizeof *rw);
    assert(rw != NULL && fastsync_rwlock_init(rw, 0) == 0);
    model_wide_word = &rw->state; /* both halves are futex words */
    assert(fastsync_rwlock_rdlock(rw) == 0);
    pthread_create(&t[0], NULL, timed_writer, NULL);
    pthread_create(&t[1], NULL, reader, NULL);
    model_time_out(); /* while the others run */
    while (!atomic_load_explicit(&r_in, memory_order_relaxed)) {} /* R gets in beside main */
    assert(fastsync_rwlock_rdunlock(rw) == 0);
    atomic_store_explicit(&main_done, 1, memory_order_release);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 0;
}
#endif
