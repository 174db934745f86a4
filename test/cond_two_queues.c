/* SPDX-License-Identifier: MIT */
/* cond_two_queues: one consumer, two queues each under its own fastsync_mutex_t, one condvar
 * taken by ticket (seed 003's shape, which POSIX condvars, bound to one mutex, cannot serve).
 * Two producers per queue push numbered items for a time box, each under its queue's mutex,
 * and signal after the unlock; the consumer takes a ticket, looks into both queues (each
 * under its mutex), cancels the ticket if it found an item, else awaits it (a far
 * timedawait every other time). A stop item per queue ends it. Exact totals: items taken ==
 * items pushed, per queue, and their sums; the condvar ends with no ticket and no signal
 * pending. Spread over the CPUs and pinned to one. */
#include "harness.h"

enum { CAP = 64, PRODUCERS = 4 };
#define STOP UINT64_MAX

struct queue {
    fastsync_mutex_t m;
    uint64_t item[CAP]; /* plain, as the rest: under m */
    unsigned head, count;
};

static struct queue q[2];
static fastsync_cond_t c = FASTSYNC_COND_INIT;
static uint64_t box_end;
static _Atomic(unsigned long) pushed[2];
static _Atomic(uint64_t) sum_pushed[2];
static unsigned long taken[2];  /* the consumer's, read after the join */
static uint64_t sum_taken[2];
static _Atomic(unsigned long) awaits, wait_errors;

static void dump(void *unused)
{
    (void)unused;
    test_dump_cond("condvar", &c);
    for (int i = 0; i < 2; i++) test_dump_mutex(i ? "queue 1" : "queue 0", &q[i].m);
    diag("pushed %lu + %lu (relaxed snapshot)", atomic_load(&pushed[0]), atomic_load(&pushed[1]));
}

/* false when the queue is full (the producer yields and tries again) */
static bool push(int i, uint64_t x)
{
    fastsync_mutex_lock(&q[i].m);
    bool room = q[i].count < CAP;
    if (room) q[i].item[(q[i].head + q[i].count++) % CAP] = x;
    fastsync_mutex_unlock(&q[i].m);
    if (room) fastsync_cond_signal(&c);
    return room;
}

static bool take(int i, uint64_t *x)
{
    fastsync_mutex_lock(&q[i].m);
    bool got = q[i].count > 0;
    if (got) {
        *x = q[i].item[q[i].head];
        q[i].head = (q[i].head + 1) % CAP;
        q[i].count--;
    }
    fastsync_mutex_unlock(&q[i].m);
    return got;
}

static void *producer(void *arg)
{
    int id = (int)(uintptr_t)arg, i = id % 2;
    uint64_t n = 0, sum = 0;
    while (test_box_more(box_end, (unsigned long)n)) {
        uint64_t x = (uint64_t)id << 40 | n;
        if (!push(i, x)) {
            sched_yield();
            continue;
        }
        sum += x;
        n++;
    }
    /* relaxed (the totals): read after the joins. */
    atomic_fetch_add_explicit(&pushed[i], (unsigned long)n, memory_order_relaxed);
    atomic_fetch_add_explicit(&sum_pushed[i], sum, memory_order_relaxed);
    return NULL;
}

static void *consumer(void *unused)
{
    (void)unused;
    int stops = 0;
    unsigned long rounds = 0;
    while (stops < 2) {
        fastsync_cond_ticket_t t;
        fastsync_cond_register(&c, &t);
        uint64_t x;
        int found = 0;
        for (int i = 0; i < 2; i++) {
            while (take(i, &x)) {
                found++;
                if (x == STOP) {
                    stops++;
                    continue;
                }
                taken[i]++;
                sum_taken[i] += x;
            }
        }
        if (found) {
            fastsync_cond_cancel(&c, &t);
            continue;
        }
        int r;
        if (rounds++ % 2) {
            struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
            r = fastsync_cond_timedawait(&c, &t, &far);
        } else {
            r = fastsync_cond_await(&c, &t);
        }
        atomic_fetch_add(&awaits, 1);
        if (r != 0) atomic_fetch_add(&wait_errors, 1);
    }
    return NULL;
}

static void run(const char *name, bool pinned)
{
    test_pin_all(pinned);
    for (int i = 0; i < 2; i++) {
        atomic_store(&pushed[i], 0);
        atomic_store(&sum_pushed[i], 0);
        taken[i] = 0;
        sum_taken[i] = 0;
    }
    atomic_store(&awaits, 0);
    atomic_store(&wait_errors, 0);
    box_end = test_box_end(1000);
    pthread_t cons = test_thread_start(consumer, NULL), p[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) p[i] = test_thread_start(producer, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < PRODUCERS; i++) test_thread_join(p[i]);
    for (int i = 0; i < 2; i++)
        while (!push(i, STOP)) sched_yield();
    test_thread_join(cons);
    diag("%s: %lu + %lu items, %lu awaits", name, atomic_load(&pushed[0]), atomic_load(&pushed[1]),
         atomic_load(&awaits));
    for (int i = 0; i < 2; i++) {
        is_int(taken[i], atomic_load(&pushed[i]), "%s: queue %d: items taken == items pushed", name, i);
        ok(sum_taken[i] == atomic_load(&sum_pushed[i]), "%s: queue %d: ... and their sums", name, i);
    }
    is_int(atomic_load(&wait_errors), 0, "%s: every await returned 0", name);
    is_int(test_cond_left(&c), 0, "%s: no ticket, no signal left", name);
}

int main(void)
{
    test_init();
    fastsync_mutex_init(&q[0].m, 0);
    fastsync_mutex_init(&q[1].m, 0);
    test_watchdog_start(dump, NULL);
    run("spread", false);
    run("pinned", true);
    test_watchdog_stop();
    return done_testing();
}
