/* SPDX-License-Identifier: MIT */
/* cond_producer_consumer: a bounded queue (4 slots) under one fastsync_mutex_t with two
 * condvars, not_empty and not_full, and signal only, never broadcast (the shape of glibc bug
 * 25847, where a signal-only producer/consumer hung after a group switch). 3 producers push
 * numbered items for a time box, each signalling not_empty (after the unlock, or under the
 * mutex, in turns); 3 consumers pop and signal not_full; then one stop item per consumer.
 * Exact totals: items popped == items pushed, and the sum of their numbers too; both condvars
 * end with no ticket and no signal pending; every wait returned 0. Spread over the CPUs,
 * pinned to one, and with more threads than CPUs (6 producers, 6 consumers). */
#include "harness.h"

enum { SLOTS = 4, MAX_THREADS = 6 };
#define STOP UINT64_MAX

static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
static fastsync_cond_t not_empty = FASTSYNC_COND_INIT, not_full = FASTSYNC_COND_INIT;
static uint64_t slot[SLOTS]; /* plain, as the rest: under m */
static unsigned head, count;
static uint64_t box_end;
static _Atomic(unsigned long) pushed, popped, errors;
static _Atomic(uint64_t) sum_pushed, sum_popped;

static void dump(void *unused)
{
    (void)unused;
    test_dump_mutex("mutex", &m);
    test_dump_cond("not_empty", &not_empty);
    test_dump_cond("not_full", &not_full);
    diag("pushed %lu, popped %lu (relaxed snapshot)", atomic_load(&pushed), atomic_load(&popped));
}

static void push(uint64_t x, bool signal_locked)
{
    fastsync_mutex_lock(&m);
    while (count == SLOTS)
        if (fastsync_cond_wait(&not_full, &m) != 0) atomic_fetch_add(&errors, 1);
    slot[(head + count++) % SLOTS] = x;
    if (signal_locked) fastsync_cond_signal(&not_empty);
    fastsync_mutex_unlock(&m);
    if (!signal_locked) fastsync_cond_signal(&not_empty);
}

static void *producer(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg, n = 0, sum = 0;
    while (test_box_more(box_end, (unsigned long)n)) {
        uint64_t x = id << 40 | n;
        push(x, n % 2);
        sum += x;
        n++;
    }
    /* relaxed (all the totals): read after the joins. */
    atomic_fetch_add_explicit(&pushed, (unsigned long)n, memory_order_relaxed);
    atomic_fetch_add_explicit(&sum_pushed, sum, memory_order_relaxed);
    return NULL;
}

static void *consumer(void *unused)
{
    (void)unused;
    uint64_t n = 0, sum = 0;
    for (;;) {
        fastsync_mutex_lock(&m);
        while (count == 0)
            if (fastsync_cond_wait(&not_empty, &m) != 0) atomic_fetch_add(&errors, 1);
        uint64_t x = slot[head];
        head = (head + 1) % SLOTS;
        count--;
        fastsync_mutex_unlock(&m);
        fastsync_cond_signal(&not_full);
        if (x == STOP) break;
        sum += x;
        n++;
    }
    atomic_fetch_add_explicit(&popped, (unsigned long)n, memory_order_relaxed);
    atomic_fetch_add_explicit(&sum_popped, sum, memory_order_relaxed);
    return NULL;
}

static void run(const char *name, bool pinned, int threads)
{
    test_pin_all(pinned);
    atomic_store(&pushed, 0);
    atomic_store(&popped, 0);
    atomic_store(&sum_pushed, 0);
    atomic_store(&sum_popped, 0);
    atomic_store(&errors, 0);
    box_end = test_box_end(1000);
    pthread_t p[MAX_THREADS], q[MAX_THREADS];
    for (int i = 0; i < threads; i++) {
        q[i] = test_thread_start(consumer, NULL);
        p[i] = test_thread_start(producer, (void *)(uintptr_t)(i + 1));
    }
    for (int i = 0; i < threads; i++) test_thread_join(p[i]);
    for (int i = 0; i < threads; i++) push(STOP, false);
    for (int i = 0; i < threads; i++) test_thread_join(q[i]);
    unsigned long n = atomic_load(&pushed);
    diag("%s: %lu items through %d slots", name, n, SLOTS);
    is_int(atomic_load(&popped), n, "%s: items popped == items pushed", name);
    ok(atomic_load(&sum_popped) == atomic_load(&sum_pushed), "%s: ... and their sums", name);
    is_int(atomic_load(&errors), 0, "%s: every wait returned 0", name);
    is_int(count, 0, "%s: the queue is empty", name);
    is_int(test_cond_left(&not_empty), 0, "%s: not_empty: no ticket, no signal left", name);
    is_int(test_cond_left(&not_full), 0, "%s: not_full: no ticket, no signal left", name);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    run("spread", false, 3);
    run("pinned", true, 3);
    run("oversubscribed", false, MAX_THREADS);
    test_watchdog_stop();
    return done_testing();
}
