/* SPDX-License-Identifier: MIT */
/* countdown.c - a primitive of the program's own on fastsync's public wait on an address:
 * a one-word countdown (a latch), 4 bytes, that any number of threads wait on.
 *
 * The word is a fastsync_word32_t (C11 _Atomic(uint32_t)): the count in the low 31 bits and
 * a WAITING bit that a waiter sets before it sleeps, so that the count_down that reaches 0
 * makes a wake (a system call) only when someone may sleep. The wait is the usual loop:
 * load the word; while the count is not 0, sleep while the word still holds what was
 * loaded (fastsync_wait32 compares and blocks atomically with respect to the wake: a
 * count_down that changes the word before the sleep makes the wait return at once, one
 * after it finds the sleeper), and load again, since returns may be spurious.
 *
 * Memory orders (fastsync_wait32's compare orders nothing, so the caller's own do):
 *   - count_down: a release RMW. The waiter's acquire load that reads the count 0 reads the
 *     last RMW of the word's release sequences, so it synchronizes with every count_down:
 *     what each worker wrote before its count_down is visible after the wait returns.
 *   - the waiter's loads: acquire, for that reason; the one after each fastsync_wait32
 *     return is the one that counts.
 *   - the waiter's CAS that sets WAITING needs no order of its own (it is acquire only
 *     because its failure, which may read the count 0, is). What it must do is be an RMW,
 *     so that a count_down that comes after it in the word's modification order reads the
 *     bit and wakes, and one that comes before it makes the CAS fail (the word changed)
 *     and the waiter look again.
 *
 * Also shown: a timed wait (fastsync_timedwait32, a deadline on CLOCK_MONOTONIC) that gives
 * up with ETIMEDOUT, never before its deadline.
 *
 * Build: cc -std=c11 -pthread -I. examples/countdown.c -o countdown */

/* fastsync.h first: under -std=c11 it makes the POSIX parts of the C library visible. */
#include "fastsync.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define WAITING 0x80000000u
#define COUNT 0x7fffffffu

typedef struct {
    fastsync_word32_t word; /* the count, and WAITING */
} countdown_t;

static void countdown_init(countdown_t *c, uint32_t n) { atomic_init(&c->word, n & COUNT); }

/* One arrival; exactly as many as the count. */
static void countdown_count_down(countdown_t *c)
{
    /* release: what this thread did before happens before every wait that sees 0 */
    uint32_t old = atomic_fetch_sub_explicit(&c->word, 1, memory_order_release);
    if (old == (WAITING | 1u)) fastsync_wake32_all(&c->word, 0); /* 0 reached, someone may sleep */
}

/* Until the count is 0, or the deadline (NULL: none): 0 or ETIMEDOUT. */
static int countdown_wait(countdown_t *c, const struct timespec *deadline)
{
    /* acquire: pairs with the count_downs' release RMWs, once it reads 0 */
    uint32_t v = atomic_load_explicit(&c->word, memory_order_acquire);
    while ((v & COUNT) != 0) {
        if (!(v & WAITING)) {
            /* acquire on failure: the value read may be the count 0 (pairs with the
             * count_downs); on success only because C11 wants it no weaker than the
             * failure's: setting the bit itself needs no order (see the top) */
            if (!atomic_compare_exchange_weak_explicit(&c->word, &v, v | WAITING, memory_order_acquire,
                                                       memory_order_acquire))
                continue; /* v is the word now: look again */
            v |= WAITING;
        }
        /* sleeps while the word is still v: a count_down in between makes it return at once */
        int r = deadline ? fastsync_timedwait32(&c->word, v, 0, deadline) : fastsync_wait32(&c->word, v, 0);
        if (r == ETIMEDOUT) return ETIMEDOUT;
        v = atomic_load_explicit(&c->word, memory_order_acquire); /* as above */
    }
    return 0;
}

#define WORKERS 8
#define WAITERS 3

static countdown_t done;
static unsigned long result[WORKERS]; /* plain: each written by its worker before its count_down */
static unsigned long seen[WAITERS];   /* each waiter's sum, read after its join */

static void *worker(void *arg)
{
    unsigned long i = (unsigned long)(uintptr_t)arg;
    result[i] = (i + 1) * (i + 1);
    countdown_count_down(&done);
    return NULL;
}

static unsigned long sum(void)
{
    unsigned long s = 0;
    for (int i = 0; i < WORKERS; i++) s += result[i];
    return s;
}

static void *waiter(void *arg)
{
    countdown_wait(&done, NULL);
    seen[(uintptr_t)arg] = sum();
    return NULL;
}

int main(void)
{
    /* A timed wait on a countdown that nobody counts down: ETIMEDOUT after 20 ms. */
    countdown_t never;
    countdown_init(&never, 1);
    struct timespec deadline = fastsync_deadline_in(20 * 1000 * 1000);
    int r = countdown_wait(&never, &deadline);
    if (r != ETIMEDOUT) {
        printf("wrong: the timed wait returned %d, expected ETIMEDOUT\n", r);
        return 1;
    }
    printf("a timed wait on a countdown nobody counted down gave up after 20 ms with ETIMEDOUT\n");

    countdown_init(&done, WORKERS);
    pthread_t w[WAITERS], t[WORKERS];
    for (uintptr_t i = 0; i < WAITERS; i++) pthread_create(&w[i], NULL, waiter, (void *)i);
    for (uintptr_t i = 0; i < WORKERS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    countdown_wait(&done, NULL);
    unsigned long expect = (unsigned long)WORKERS * (WORKERS + 1) * (2 * WORKERS + 1) / 6, mine = sum();
    for (int i = 0; i < WORKERS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < WAITERS; i++) pthread_join(w[i], NULL);
    int right = mine == expect;
    for (int i = 0; i < WAITERS; i++) right &= seen[i] == expect;
    if (!right) {
        printf("wrong: main saw %lu, the waiters %lu %lu %lu, expected %lu\n", mine, seen[0], seen[1], seen[2], expect);
        return 1;
    }
    printf("%d waiters saw all %d workers' results after the countdown: sum %lu as expected\n", WAITERS + 1, WORKERS,
           expect);
    return 0;
}
