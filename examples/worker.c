/* SPDX-License-Identifier: MIT */
/* worker.c - a worker thread that sleeps on three things at once with fastsync_wait_any: a
 * semaphore counting queued jobs, a shutdown event and a reload event.
 *
 * The worker's one wait:
 *
 *     fastsync_wait_entry_t list[3] = {
 *         fastsync_wait_sem(&jobs),             index 0: a job is queued (takes its token)
 *         fastsync_wait_event(&shutdown_ev),    index 1: stop
 *         fastsync_wait_event(&reload_ev),      index 2: read the configuration again
 *     };
 *     fastsync_wait_any(list, 3, &which);
 *
 * When several are ready at one look, the lowest index wins, and only the winner changes
 * state (a semaphore loses a token only when it wins; an event is reported and stays set).
 * The order is the worker's policy:
 *   - jobs first: while jobs are queued, each wait takes one, even with the shutdown set: a
 *     shutdown lets the queue drain instead of dropping it. (A reload waits until the queue is
 *     empty; a worker that must apply a reload at once under a steady stream of jobs would
 *     put it first instead.)
 *   - shutdown before reload: reading the configuration just before exiting is wasted work
 *     (and in a real program may block or fail), so once the shutdown is set a pending
 *     reload is dropped.
 * A look reads the entries one after the other, not all at one instant: a job posted just
 * before the shutdown can land after the look read the semaphore and before it read the
 * event. So after the shutdown wins the worker drains with trywait: every job posted
 * before fastsync_event_set(&shutdown_ev) is visible once the worker saw the event set.
 *
 * The reload event is reset by the worker before it reads the configuration: a reload asked
 * for after the reset sets the event again and is not lost; one asked for before it is
 * covered by the read that follows. The shutdown event is never reset.
 *
 * main queues 1000 jobs (the numbers 1..1000), changes the configuration (the factor the
 * worker multiplies each job by, 1 at the start, then 3), asks for a reload and waits until
 * the worker applied it, queues 1000 more (1001..2000) and asks for the shutdown at once.
 * The queue is FIFO, so if k jobs were done before the reload, the results add up to
 * (1 + ... + k) + 3 x ((k+1) + ... + 2000), exactly.
 *
 * Build: cc -std=c11 -pthread -I. examples/worker.c -o worker */

/* fastsync.h first: under -std=c11 it makes the POSIX parts of the C library visible. */
#include "fastsync.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#define BATCH 1000 /* jobs per batch; two batches */
#define JOBS (2 * BATCH)

enum { JOB, SHUTDOWN, RELOAD }; /* the indexes of the worker's wait list */

static struct {
    fastsync_mutex_t lock; /* guards item, head and count */
    unsigned item[JOBS];   /* room for every job: main never waits for space */
    unsigned head, count;
} queue = { FASTSYNC_MUTEX_INIT, { 0 }, 0, 0 };

static fastsync_sem_t jobs = FASTSYNC_SEM_INIT(0);          /* one token per queued job */
static fastsync_event_t shutdown_ev = FASTSYNC_EVENT_INIT(false);
static fastsync_event_t reload_ev = FASTSYNC_EVENT_INIT(false);
static fastsync_sem_t reloaded = FASTSYNC_SEM_INIT(0);      /* the worker applied a reload */

/* The configuration: written by main before it sets reload_ev, read by the worker after its
 * wait saw the event set (the set publishes it). The worker starts with factor 1. */
static unsigned config_factor;

/* What the worker did; main reads it after joining the worker. */
static struct {
    unsigned done, reloads;
    unsigned done_at_reload; /* jobs done when the reload was applied */
    unsigned long long sum;  /* of job x factor */
} stats;

static void push(unsigned job)
{
    fastsync_mutex_lock(&queue.lock);
    queue.item[(queue.head + queue.count++) % JOBS] = job;
    fastsync_mutex_unlock(&queue.lock);
    fastsync_sem_post(&jobs); /* after the push: a token always has its job */
}

static unsigned pop(void)
{
    fastsync_mutex_lock(&queue.lock);
    unsigned job = queue.item[queue.head];
    queue.head = (queue.head + 1) % JOBS;
    queue.count--;
    fastsync_mutex_unlock(&queue.lock);
    return job;
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned factor = 1; /* the configuration in use: the built-in one until a reload */
    fastsync_wait_entry_t list[3];
    list[JOB] = fastsync_wait_sem(&jobs);
    list[SHUTDOWN] = fastsync_wait_event(&shutdown_ev);
    list[RELOAD] = fastsync_wait_event(&reload_ev);
    for (;;) {
        unsigned which;
        int r = fastsync_wait_any(list, 3, &which);
        if (r != 0) {
            printf("wrong: fastsync_wait_any returned %d\n", r);
            return NULL;
        }
        if (which == JOB) { /* the token is taken: a job is ours */
            stats.sum += (unsigned long long)pop() * factor;
            stats.done++;
        } else if (which == SHUTDOWN) {
            while (fastsync_sem_trywait(&jobs) == 0) { /* what the last look missed */
                stats.sum += (unsigned long long)pop() * factor;
                stats.done++;
            }
            return NULL;
        } else { /* RELOAD: reset first, then read (see the top) */
            fastsync_event_reset(&reload_ev);
            factor = config_factor;
            stats.reloads++;
            stats.done_at_reload = stats.done;
            fastsync_sem_post(&reloaded);
        }
    }
}

static unsigned long long sum_to(unsigned long long n) { return n * (n + 1) / 2; }

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);

    for (unsigned j = 1; j <= BATCH; j++) push(j);
    config_factor = 3;           /* the new configuration, then the request */
    fastsync_event_set(&reload_ev);
    fastsync_sem_wait(&reloaded); /* applied: the jobs below see factor 3 */
    unsigned k = stats.done_at_reload; /* written before the post that the wait took */
    for (unsigned j = BATCH + 1; j <= JOBS; j++) push(j);
    fastsync_event_set(&shutdown_ev); /* at once: the worker drains the queue first */
    pthread_join(t, NULL);

    unsigned long long expect = sum_to(k) + 3 * (sum_to(JOBS) - sum_to(k));
    printf("the reload was applied after %u of the first %d jobs\n", k, BATCH);
    if (stats.done != JOBS || stats.reloads != 1 || stats.sum != expect || queue.count != 0 ||
        k > BATCH || fastsync_sem_getvalue(&jobs) != 0) {
        printf("wrong: %u jobs done, %u reloads, sum %llu (expected %d jobs, 1 reload, sum %llu),"
               " %u left in the queue\n", stats.done, stats.reloads, stats.sum, JOBS, expect, queue.count);
        return 1;
    }
    /* (no sum in this line: it depends on k, which depends on timing) */
    printf("the worker did all %d jobs, applied 1 reload and stopped on shutdown with the queue"
           " empty: sum as expected\n", JOBS);
    printf("sum %llu = (1 + ... + %u) + 3 x (%u + ... + %d)\n", expect, k, k + 1, JOBS);
    return 0;
}
