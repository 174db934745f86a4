/* SPDX-License-Identifier: MIT */
/* producer_consumer.c - a bounded buffer with two fastsync semaphores.
 *
 *   slots  counts the free places in the ring (starts at RING_SIZE)
 *   items  counts the filled places (starts at 0)
 *
 * A producer takes a free slot (waits on `slots`), writes its item, and announces it
 * (posts `items`); a consumer does the mirror image. The semaphores only count; since
 * there are several producers and several consumers, a pthread mutex guards the ring's
 * indices. fastsync_sem_post makes no system call unless a thread is actually asleep, so a
 * buffer that rarely runs full or empty costs no more than the mutex.
 *
 * Build: cc -std=c11 -pthread -I. examples/producer_consumer.c -o producer_consumer */

/* fastsync.h first: under -std=c11 it makes the POSIX parts of the C library visible. */
#include "fastsync.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define RING_SIZE 16
#define PRODUCERS 2
#define CONSUMERS 2
#define ITEMS_PER_PRODUCER 100000 /* each producer sends 1, 2, ..., ITEMS_PER_PRODUCER */

static struct {
    unsigned long ring[RING_SIZE];
    unsigned head, tail;  /* next place to read, next place to write (under lock) */
    pthread_mutex_t lock; /* guards ring, head and tail */
    fastsync_sem_t slots; /* free places */
    fastsync_sem_t items; /* filled places */
} buf = { .lock = PTHREAD_MUTEX_INITIALIZER,
          .slots = FASTSYNC_SEM_INIT(RING_SIZE),
          .items = FASTSYNC_SEM_INIT(0) };

static void put(unsigned long item)
{
    fastsync_sem_wait(&buf.slots); /* sleeps while the ring is full */
    pthread_mutex_lock(&buf.lock);
    buf.ring[buf.tail] = item;
    buf.tail = (buf.tail + 1) % RING_SIZE;
    pthread_mutex_unlock(&buf.lock);
    fastsync_sem_post(&buf.items); /* wakes a consumer only if one sleeps */
}

static unsigned long get(void)
{
    fastsync_sem_wait(&buf.items); /* sleeps while the ring is empty */
    pthread_mutex_lock(&buf.lock);
    unsigned long item = buf.ring[buf.head];
    buf.head = (buf.head + 1) % RING_SIZE;
    pthread_mutex_unlock(&buf.lock);
    fastsync_sem_post(&buf.slots); /* wakes a producer only if one sleeps */
    return item;
}

static void *producer(void *arg)
{
    (void)arg;
    for (unsigned long i = 1; i <= ITEMS_PER_PRODUCER; i++) put(i);
    return NULL;
}

struct consumer {
    unsigned long count;    /* items taken, read by main after the join */
    unsigned long long sum; /* their sum (64 bits even where long has 32) */
};

static void *consumer(void *arg)
{
    struct consumer *c = arg;
    for (;;) {
        unsigned long item = get();
        if (item == 0) break; /* 0 is never produced: it tells the consumer to stop */
        c->count++;
        c->sum += item;
    }
    return NULL;
}

int main(void)
{
    pthread_t prod[PRODUCERS], cons[CONSUMERS];
    struct consumer result[CONSUMERS] = { { 0, 0 } };

    printf("producer_consumer: %d producers, %d consumers, a ring of %d slots\n", PRODUCERS, CONSUMERS,
           RING_SIZE);
    for (int i = 0; i < CONSUMERS; i++)
        if (pthread_create(&cons[i], NULL, consumer, &result[i]) != 0) return 1;
    for (int i = 0; i < PRODUCERS; i++)
        if (pthread_create(&prod[i], NULL, producer, NULL) != 0) return 1;

    for (int i = 0; i < PRODUCERS; i++) pthread_join(prod[i], NULL);
    for (int i = 0; i < CONSUMERS; i++) put(0); /* one stop item per consumer, after all data */
    for (int i = 0; i < CONSUMERS; i++) pthread_join(cons[i], NULL);

    unsigned long count = 0;
    unsigned long long sum = 0;
    for (int i = 0; i < CONSUMERS; i++) {
        printf("consumer %d took %lu items\n", i, result[i].count);
        count += result[i].count;
        sum += result[i].sum;
    }
    /* each producer sent 1 + 2 + ... + n = n(n+1)/2 */
    unsigned long long n = ITEMS_PER_PRODUCER, want_count = PRODUCERS * n, want_sum = PRODUCERS * (n * (n + 1) / 2);
    if (count != want_count || sum != want_sum) {
        printf("FAILED: %lu items with sum %llu, expected %llu items with sum %llu\n", count, sum, want_count,
               want_sum);
        return 1;
    }
    printf("all %lu items consumed, sum %llu as expected\n", count, sum);
    return 0;
}
