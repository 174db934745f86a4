/* SPDX-License-Identifier: MIT */
/* test/cxx_share.c - C code on the C objects inside fastsync.hpp's (cxx_api.cpp). */
#include "cxx_share.h"

void cxx_share_count(fastsync_mutex_t *m, long *counter, long n)
{
    for (long i = 0; i < n; i++) {
        fastsync_mutex_lock(m);
        ++*counter;
        fastsync_mutex_unlock(m);
    }
}

void cxx_share_post(fastsync_sem_t *s, long n)
{
    for (long i = 0; i < n; i++) fastsync_sem_post(s);
}

void cxx_share_notify(fastsync_cond_t *c, fastsync_mutex_t *m, int *flag)
{
    fastsync_mutex_lock(m);
    *flag = 1;
    fastsync_cond_signal(c);
    fastsync_mutex_unlock(m);
}

long cxx_share_rw(fastsync_rwlock_t *rw, long *a, long *b, long n)
{
    long differ = 0;
    for (long i = 0; i < n; i++) {
        fastsync_rwlock_wrlock(rw);
        ++*a;
        ++*b;
        fastsync_rwlock_wrunlock(rw);
        fastsync_rwlock_rdlock(rw);
        differ += *a != *b;
        fastsync_rwlock_rdunlock(rw);
    }
    return differ;
}

unsigned long cxx_share_rw_readers(fastsync_rwlock_t *rw)
{
    /* relaxed: the caller reads it where nothing else changes it, or only to poll */
    return fastsync__rw_readers(fastsync__load(&rw->state, memory_order_relaxed));
}

void cxx_share_rw_force_readers(fastsync_rwlock_t *rw, unsigned long n)
{
    /* relaxed: the threads that use rw next are started after it (their happens-before) */
    fastsync__store(&rw->state, (uint64_t)n, memory_order_relaxed);
}

static void cxx_share_once_run(void *runs)
{
    ++*(int *)runs;
}

int cxx_share_once(fastsync_once_t *o, int *runs)
{
    return fastsync_once(o, cxx_share_once_run, runs);
}

unsigned cxx_share_once_state(fastsync_once_t *o)
{
    /* relaxed: a poll, or a look where nothing else changes it; what the caller reads after
     * it is ordered by the once's own acquire and release */
    return fastsync__load(&o->state, memory_order_relaxed) & FASTSYNC__ONCE_STATE;
}

int cxx_share_latch_count_down(fastsync_latch_t *l, unsigned n)
{
    return fastsync_latch_count_down(l, n);
}

int cxx_share_latch_wait(fastsync_latch_t *l)
{
    return fastsync_latch_wait(l);
}

unsigned cxx_share_latch_waiters(fastsync_latch_t *l)
{
    /* relaxed: a poll; what the caller reads after it is ordered by the latch's own acquire
     * and release */
    return fastsync__latch_waiters(fastsync__load(&l->state, memory_order_relaxed));
}

long cxx_share_barrier(fastsync_barrier_t *b, long (*slots)[3], int me, long n)
{
    long bad = 0;
    for (long r = 0; r < n; r++) {
        slots[r % 2][me] = r;
        (void)fastsync_barrier_wait(b);
        for (int i = 0; i < 3; i++) bad += slots[r % 2][i] != r;
    }
    return bad;
}
