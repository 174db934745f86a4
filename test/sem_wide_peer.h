/* SPDX-License-Identifier: MIT */
/* test/sem_wide_peer.h - the C++ side of sem_wide_boundary.c (sem_wide_peer.cpp): the wide
 * kind of fastsync.hpp's counting_semaphore (counting_semaphore<PTRDIFF_MAX>) behind C calls,
 * its futex calls through the C test's harness (sem_wide_futex_wait and _wake, which the test
 * defines: the harness's counting and, in the inject build, its faults). */
#ifndef FASTSYNC_TEST_SEM_WIDE_PEER_H
#define FASTSYNC_TEST_SEM_WIDE_PEER_H
#include <stdint.h>
#include <time.h>
#ifdef __cplusplus
extern "C" {
#endif
/* defined by the test: the harness's futex layer */
int sem_wide_futex_wait(void *word, uint32_t expected, int shared, clockid_t clock,
                        const struct timespec *abstime);
void sem_wide_futex_wake(void *word, int n, int shared);

/* 1 where the wide kind exists (ptrdiff_t wider than 32 bits), else 0 (and nothing below
 * may be called) */
int sem_wide_exists(void);
struct sem_wide;
/* a new counting_semaphore<PTRDIFF_MAX>(desired), and its end */
struct sem_wide *sem_wide_new(int64_t desired);
void sem_wide_delete(struct sem_wide *s);
void sem_wide_release(struct sem_wide *s, int64_t update);
void sem_wide_acquire(struct sem_wide *s);
int sem_wide_try_acquire(struct sem_wide *s);
/* try_acquire_for(ns nanoseconds); try_acquire_until(system_clock::now() + ns) */
int sem_wide_try_acquire_for(struct sem_wide *s, int64_t ns);
int sem_wide_try_acquire_until_system(struct sem_wide *s, int64_t ns);
/* white-box (sem_wide_probe.hpp): T, the C semaphore's tokens; E, the excess; the waiters
 * registered in the C semaphore */
uint64_t sem_wide_tokens(const struct sem_wide *s);
uint64_t sem_wide_excess(const struct sem_wide *s);
unsigned sem_wide_waiters(const struct sem_wide *s);
#ifdef __cplusplus
}
#endif
#endif
