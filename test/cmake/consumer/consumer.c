/* SPDX-License-Identifier: MIT */
/* The consumer of test/cmake: a thread posts, the main thread waits, and it prints the
 * version it was built with. */
#include "fastsync.h"
#include <pthread.h>
#include <stdio.h>

static fastsync_sem_t ready = FASTSYNC_SEM_INIT(0);
static int value;

static void *producer(void *unused)
{
    (void)unused;
    value = 42;
    fastsync_sem_post(&ready);
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, producer, NULL) != 0) return 1;
    fastsync_sem_wait(&ready);
    pthread_join(t, NULL);
    printf("fastsync %d.%d.%d: got %d\n", FASTSYNC_VERSION_MAJOR, FASTSYNC_VERSION_MINOR,
           FASTSYNC_VERSION_PATCH, value);
    return value == 42 ? 0 : 1;
}
