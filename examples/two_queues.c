/* SPDX-License-Identifier: MIT */
/* two_queues.c - one consumer, two queues, each with its own mutex, and one condition
 * variable taken by ticket.
 *
 * A pthread condition variable belongs to one mutex at a time, so a consumer that serves two
 * queues, each guarded by its own mutex, cannot sleep until "either queue has an item" with
 * it. fastsync_cond_t can, in two halves: take a ticket first, then look into each queue
 * under its own mutex; if one had an item, cancel the ticket, else await it. A producer
 * pushes under its queue's mutex, unlocks, and signals: a signal made after the ticket was
 * taken wakes the await, and a push made before it is seen by the look (the queue's mutex
 * orders them). A signal with nobody waiting costs one load.
 *
 * Build: cc -std=c11 -pthread -I. examples/two_queues.c -o two_queues */

/* fastsync.h first: under -std=c11 it makes the POSIX parts of the C library visible. */
#include "fastsync.h"

#include <pthread.h>
#include <stdio.h>

#define CAP 256
#define ITEMS 100000 /* per queue: 1, 2, ..., ITEMS */

struct queue {
    fastsync_mutex_t lock; /* guards the rest */
    unsigned long item[CAP];
    unsigned head, count;
};

static struct queue queues[2] = { { FASTSYNC_MUTEX_INIT, { 0 }, 0, 0 },
                                  { FASTSYNC_MUTEX_INIT, { 0 }, 0, 0 } };
static fastsync_cond_t changed = FASTSYNC_COND_INIT; /* an item was pushed, or a slot freed */

/* Takes an item from q into *x: 1, or 0 when q is empty. */
static int take(struct queue *q, unsigned long *x)
{
    int got = 0;
    fastsync_mutex_lock(&q->lock);
    if (q->count > 0) {
        *x = q->item[q->head];
        q->head = (q->head + 1) % CAP;
        q->count--;
        got = 1;
    }
    fastsync_mutex_unlock(&q->lock);
    return got;
}

static void *producer(void *arg)
{
    struct queue *q = (struct queue *)arg;
    for (unsigned long n = 1; n <= ITEMS;) {
        fastsync_cond_ticket_t t;
        fastsync_cond_register(&changed, &t); /* before the look: a freed slot wakes us */
        fastsync_mutex_lock(&q->lock);
        int room = q->count < CAP;
        if (room) q->item[(q->head + q->count++) % CAP] = n++;
        fastsync_mutex_unlock(&q->lock);
        if (room) {
            fastsync_cond_cancel(&changed, &t);
            fastsync_cond_broadcast(&changed); /* the consumer, among producers waiting for room */
        } else {
            fastsync_cond_await(&changed, &t); /* full: until the consumer takes one */
        }
    }
    return NULL;
}

int main(void)
{
    pthread_t p[2];
    for (int i = 0; i < 2; i++) pthread_create(&p[i], NULL, producer, &queues[i]);

    unsigned long got[2] = { 0, 0 };
    unsigned long long sum[2] = { 0, 0 }; /* 5000050000: more than 32 bits (Windows' long) */
    while (got[0] + got[1] < 2ul * ITEMS) {
        fastsync_cond_ticket_t t;
        fastsync_cond_register(&changed, &t);
        int found = 0;
        unsigned long x;
        for (int i = 0; i < 2; i++) {
            while (take(&queues[i], &x)) {
                got[i]++;
                sum[i] += x;
                found = 1;
            }
        }
        if (found) {
            fastsync_cond_cancel(&changed, &t);
            fastsync_cond_broadcast(&changed); /* slots freed: a producer may wait for one */
        } else {
            fastsync_cond_await(&changed, &t);
        }
    }
    for (int i = 0; i < 2; i++) pthread_join(p[i], NULL);

    unsigned long long expect = (unsigned long long)ITEMS * (ITEMS + 1) / 2;
    if (got[0] != ITEMS || got[1] != ITEMS || sum[0] != expect || sum[1] != expect) {
        printf("wrong: %lu + %lu items, sums %llu and %llu (expected %d each, sum %llu)\n", got[0], got[1],
               sum[0], sum[1], ITEMS, expect);
        return 1;
    }
    printf("all %d items from each of 2 queues consumed, sums %llu as expected\n", ITEMS, expect);
    return 0;
}
