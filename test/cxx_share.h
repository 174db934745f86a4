/* SPDX-License-Identifier: MIT */
/* test/cxx_share.h - the C side of cxx_api.cpp (cxx_share.c, compiled as C): it works on
 * C objects that a C++ file's fastsync.hpp objects hand it through native_handle(). */
#ifndef FASTSYNC_TEST_CXX_SHARE_H
#define FASTSYNC_TEST_CXX_SHARE_H
#include "fastsync.h"
#ifdef __cplusplus
extern "C" {
#endif
/* n times: lock m, ++*counter (a plain int), unlock m. */
void cxx_share_count(fastsync_mutex_t *m, long *counter, long n);
/* n posts of s, one at a time. */
void cxx_share_post(fastsync_sem_t *s, long n);
/* Lock m, set *flag, signal c, unlock (the C++ side waits with condition_variable). */
void cxx_share_notify(fastsync_cond_t *c, fastsync_mutex_t *m, int *flag);
/* n rounds on rw, each a write (wrlock, ++*a and ++*b, wrunlock) and a read (rdlock, a look
 * at whether *a == *b, rdunlock). Returns the reads that found them different. */
long cxx_share_rw(fastsync_rwlock_t *rw, long *a, long *b, long n);
/* White-box: the number of read locks rw's word says are held, and a free, process-private
 * rw with no waiter set to n read locks held. */
unsigned long cxx_share_rw_readers(fastsync_rwlock_t *rw);
void cxx_share_rw_force_readers(fastsync_rwlock_t *rw, unsigned long n);
/* fastsync_once on o with an initialiser that adds 1 to *runs; returns what it returns. */
int cxx_share_once(fastsync_once_t *o, int *runs);
/* White-box: o's state field (0 never initialised, 1 an initialiser runs, 2 one runs and a
 * caller may sleep, 3 done). */
unsigned cxx_share_once_state(fastsync_once_t *o);
/* fastsync_latch_count_down and fastsync_latch_wait, called from C; white-box: the number
 * of waiters registered on l. */
int cxx_share_latch_count_down(fastsync_latch_t *l, unsigned n);
int cxx_share_latch_wait(fastsync_latch_t *l);
unsigned cxx_share_latch_waiters(fastsync_latch_t *l);
/* n rounds of a 3-thread barrier phase, as participant `me` (0..2): it writes
 * slots[r % 2][me] = r, waits (fastsync_barrier_wait), and reads the three slots of round r
 * (a slot is written again two rounds later, after every reader of it has arrived in the
 * round between). Returns the reads that did not find r. */
long cxx_share_barrier(fastsync_barrier_t *b, long (*slots)[3], int me, long n);
#ifdef __cplusplus
}
#endif
#endif
