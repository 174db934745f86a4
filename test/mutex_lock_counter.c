/* SPDX-License-Identifier: MIT */
/* mutex_lock_counter: mutual exclusion of fastsync_mutex_t, as sem_lock_counter.c checks it
 * for a semaphore used as a lock: several threads around a plain, non-atomic counter, each
 * taking the mutex by lock, by trylock (retried after EBUSY) or by timedlock/clocklock with a
 * short deadline (retried after ETIMEDOUT); the counter equals the number of critical
 * sections exactly, no two threads are ever inside at once, and the mutex ends unlocked.
 * Spread and pinned to one CPU, with 4 threads and with more threads than CPUs. */
#define LOCK_MUTEX 1
#include "sem_lock_counter.c"
