/* SPDX-License-Identifier: MIT */
/* mutex_counter.c - threads incrementing one plain counter under a fastsync_mutex_t.
 *
 * The counter is an ordinary unsigned long, not an atomic: the mutex alone makes the
 * increments exclusive, so the total is exact. A fastsync_mutex_t is 4 bytes, needs no
 * destroy when statically initialized, and an uncontended lock + unlock makes no system call.
 * It does not record its owner: it cannot tell a recursive lock (that deadlocks) or an unlock
 * by another thread; see the mutex section of fastsync.h for what to use instead.
 *
 * A timed lock is shown once: a thread that cannot get the mutex within 20 ms gets
 * ETIMEDOUT (deadlines are absolute, on CLOCK_MONOTONIC).
 *
 * Build: cc -std=c11 -pthread -I. examples/mutex_counter.c -o mutex_counter */

/* fastsync.h first: under -std=c11 it makes the POSIX parts of the C library visible. */
#include "fastsync.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define INCREMENTS 250000 /* per thread */

static fastsync_mutex_t lock = FASTSYNC_MUTEX_INIT;
static unsigned long counter; /* guarded by lock */

static void *add(void *arg)
{
    (void)arg;
    for (int i = 0; i < INCREMENTS; i++) {
        fastsync_mutex_lock(&lock);
        counter++;
        fastsync_mutex_unlock(&lock);
    }
    return NULL;
}

/* Tries for 20 ms to get the mutex that main holds. */
static void *impatient(void *arg)
{
    struct timespec deadline = fastsync_deadline_in(20 * 1000 * 1000);
    int r = fastsync_mutex_timedlock(&lock, &deadline);
    if (r == 0) fastsync_mutex_unlock(&lock);
    *(int *)arg = r;
    return NULL;
}

int main(void)
{
    /* The timed lock, once: main holds the mutex for the whole of the other thread's try. */
    int timed = -1;
    pthread_t t;
    fastsync_mutex_lock(&lock);
    pthread_create(&t, NULL, impatient, &timed);
    pthread_join(t, NULL);
    fastsync_mutex_unlock(&lock);
    if (timed != ETIMEDOUT) {
        printf("wrong: the timed lock returned %d, expected ETIMEDOUT\n", timed);
        return 1;
    }
    printf("a timed lock on a held mutex gave up after 20 ms with ETIMEDOUT\n");

    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, add, NULL);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);

    unsigned long expect = (unsigned long)THREADS * INCREMENTS;
    if (counter != expect) {
        printf("wrong: counter %lu, expected %lu\n", counter, expect);
        return 1;
    }
    printf("%d threads added %d each: counter %lu as expected\n", THREADS, INCREMENTS, counter);
    return 0;
}
