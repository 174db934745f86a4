/* SPDX-License-Identifier: MIT */
/* worker_pool.c - a pool of worker threads woken by one fastsync manual-reset event.
 *
 * The work queue is a plain array under a pthread mutex. The event `work_ready` only says
 * "something may have changed: look again". Each worker runs the loop the event is made
 * for:
 *
 *     for (;;) {
 *         fastsync_event_reset(&work_ready);   1. forget old news
 *         if (there is a job or we must stop)  2. look at the condition
 *             break;
 *         fastsync_event_wait(&work_ready);    3. sleep until the next set
 *     }
 *
 * The order matters: a job handed out after step 1 sets the event again, so the wait in
 * step 3 returns at once; a job handed out before step 1 is seen in step 2. No wakeup is
 * lost, and set costs no system call when every worker is already busy.
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

/* Takes a job if one is waiting: its number, or -1 if none (and *stop says whether more
 * may come). */
static int take_job(bool *stop)
{
    int job = -1;
    pthread_mutex_lock(&pool.lock);
    if (pool.next < pool.published) job = (int)pool.next++;
    *stop = pool.stop;
    pthread_mutex_unlock(&pool.lock);
    return job;
}

static void *worker(void *arg)
{
    unsigned long *jobs_done = arg;
    for (;;) {
        bool stop;
        int job;
        for (;;) { /* the reset / check / wait loop */
            fastsync_event_reset(&pool.work_ready);
            job = take_job(&stop);
            if (job >= 0 || stop) break;
            fastsync_event_wait(&pool.work_ready);
        }
        if (job < 0) break; /* stop, and the queue is empty */
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
