/* SPDX-License-Identifier: MIT */
/* worker_pool.c - a pool of worker threads woken by one fastsync manual-reset event.
 *
 * The work queue is a plain array under a pthread mutex. The event `work_ready` only says
 * "something may have changed: look again". Each worker runs the event's loop, with the
 * reset inside the critical section that found nothing to do:
 *
 *     for (;;) {
 *         lock(&pool.lock);
 *         if (there is a job or we must stop)   1. look at the condition
 *             break (unlocking);
 *         fastsync_event_reset(&work_ready);    2. nothing to do: forget old news
 *         unlock(&pool.lock);
 *         fastsync_event_wait(&work_ready);     3. sleep until the next set
 *     }
 *
 * and whoever hands out work publishes it under the lock, then sets the event.
 *
 * Why the reset sits under the lock: with several workers, a worker's reset must never undo
 * a set that another worker has not seen yet. In the single-waiter loop (reset; look; wait)
 * it could: worker A resets and finds nothing; jobs or the stop flag arrive and the event is
 * set; worker B, which saw the news, resets; A's wait then sleeps on a reset event with work
 * waiting (the last stop is lost for good). Here a worker resets only while the lock shows
 * nothing to do, so every reset comes before the next publication in the lock's order, and
 * that publication's set comes after it: a worker whose wait reads the reset sleeps only
 * while there is really nothing to do, and the set that follows new work wakes it. Set costs
 * no system call when every worker is already busy.
 *
 * Build: cc -std=c11 -pthread -I. examples/worker_pool.c -o worker_pool */

/* fastsync.h first: under -std=c11 it makes the POSIX parts of the C library visible. */
#include "fastsync.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORKERS 4
#define JOBS 1000

static struct {
    pthread_mutex_t lock;         /* guards everything below but the event */
    unsigned published;           /* jobs 0 .. published-1 have been handed out */
    unsigned next;                /* the next job to take */
    bool stop;                    /* no more jobs will come */
    unsigned done_count[JOBS];    /* how many times each job ran (must end as 1) */
    unsigned long result[JOBS];   /* what each job computed */
    fastsync_event_t work_ready;  /* set when jobs or the stop flag were published */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .work_ready = FASTSYNC_EVENT_INIT(false) };

/* The work itself: the sum of the squares of 1..job+1. */
static unsigned long run_job(unsigned job)
{
    unsigned long sum = 0;
    for (unsigned long k = 1; k <= job + 1; k++) sum += k * k;
    return sum;
}

/* Returns the next job, sleeping while there is none, or -1 once the queue is empty and no
 * more jobs will come. */
static int next_job(void)
{
    for (;;) {
        pthread_mutex_lock(&pool.lock);
        if (pool.next < pool.published) {
            int job = (int)pool.next++;
            pthread_mutex_unlock(&pool.lock);
            return job;
        }
        if (pool.stop) {
            pthread_mutex_unlock(&pool.lock);
            return -1;
        }
        fastsync_event_reset(&pool.work_ready); /* nothing to do, and the lock says so */
        pthread_mutex_unlock(&pool.lock);
        fastsync_event_wait(&pool.work_ready);
    }
}

static void *worker(void *arg)
{
    unsigned long *jobs_done = arg;
    for (int job; (job = next_job()) >= 0;) {
        unsigned long r = run_job((unsigned)job);
        pthread_mutex_lock(&pool.lock);
        pool.result[job] = r;
        pool.done_count[job]++;
        pthread_mutex_unlock(&pool.lock);
        ++*jobs_done;
    }
    return NULL;
}

/* Publishes jobs up to `upto` and wakes the workers. */
static void hand_out(unsigned upto)
{
    pthread_mutex_lock(&pool.lock);
    pool.published = upto;
    pthread_mutex_unlock(&pool.lock);
    fastsync_event_set(&pool.work_ready);
}

int main(void)
{
    pthread_t t[WORKERS];
    unsigned long jobs_done[WORKERS] = { 0 };

    printf("worker_pool: %d workers, %d jobs handed out in batches\n", WORKERS, JOBS);
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&t[i], NULL, worker, &jobs_done[i]) != 0) return 1;

    /* batches of 1 to 40 jobs, with a short pause now and then so that workers go to sleep */
    unsigned published = 0, seed = 12345;
    while (published < JOBS) {
        seed = seed * 1103515245u + 12345u;
        unsigned batch = 1 + (seed >> 16) % 40;
        published = published + batch < JOBS ? published + batch : JOBS;
        hand_out(published);
        if ((seed >> 8) % 4 == 0) {
            struct timespec pause = { 0, 200000 }; /* 0.2 ms */
            nanosleep(&pause, NULL);
        }
    }
    pthread_mutex_lock(&pool.lock);
    pool.stop = true;
    pthread_mutex_unlock(&pool.lock);
    fastsync_event_set(&pool.work_ready);
    for (int i = 0; i < WORKERS; i++) pthread_join(t[i], NULL);

    unsigned long total = 0;
    for (int i = 0; i < WORKERS; i++) {
        printf("worker %d did %lu jobs\n", i, jobs_done[i]);
        total += jobs_done[i];
    }
    int bad = 0;
    for (unsigned j = 0; j < JOBS; j++)
        if (pool.done_count[j] != 1 || pool.result[j] != run_job(j)) bad++;
    if (bad != 0 || total != JOBS) {
        printf("FAILED: %lu jobs done, %d wrong or not done exactly once\n", total, bad);
        return 1;
    }
    printf("all %d jobs done exactly once\n", JOBS);
    return 0;
}
