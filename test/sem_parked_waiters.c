/* SPDX-License-Identifier: MIT */
/* sem_parked_waiters: no lost wakeup with parked waiters. Per round, N threads block in
 * wait on a semaphore at 0; once all N are registered (and, after a pause drawn by the
 * seed, mostly asleep), N tokens arrive back to back: N posts, one post_n(N), or post_n in
 * random chunks. All N waits must return (a lost wakeup hangs the round and the watchdog
 * reports it), the value ends at 0, no waiter stays registered, and the posts made exactly
 * one FUTEX_WAKE each (every one of them found a waiter registered). Repeated for the time
 * box; modes spread and pinned to one CPU, few threads and more threads than CPUs. */
#include "harness.h"

enum { POST_EACH, POST_N, POST_CHUNKS, POST_KINDS };
static const char *const kind_name[POST_KINDS] = { "N posts", "post_n(N)", "post_n chunks" };

struct waiter {
    unsigned id;
    uint64_t rng;
    _Atomic(int) state;            /* 0 idle, 1 about to wait, 2 returned this round */
    _Atomic(unsigned long) returns; /* waits returned so far */
    unsigned long bad;
    int bad_code;
};

static struct {
    fastsync_sem_t s;
    pthread_barrier_t start, done;
    bool quit;
    int n;
    struct waiter *w;
    _Atomic(unsigned long) rounds;
    _Atomic(int) main_phase; /* 0 set-up, 1 waiting for registration, 2 posting, 3 joining */
} R;

/* Waiters registered in the semaphore's word (a poll; the rounds' ordering comes from the
 * barriers and the semaphore). */
static int registered(void) { return (int)test_sem_waiters(&R.s); }

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem", &R.s);
    /* relaxed: progress read for the dump only. */
    diag("round %lu, main %s", atomic_load_explicit(&R.rounds, memory_order_relaxed),
         (const char *[]){ "setting up", "waiting for registrations", "posting",
                           "waiting for the waiters to return" }[atomic_load_explicit(&R.main_phase,
                                                                                     memory_order_relaxed)]);
    for (int i = 0; i < R.n; i++)
        diag("waiter %d: %lu returns, %s", i, atomic_load_explicit(&R.w[i].returns, memory_order_relaxed),
             (const char *[]){ "idle", "in wait", "returned" }[atomic_load_explicit(&R.w[i].state,
                                                                                  memory_order_relaxed)]);
}

static void barrier(pthread_barrier_t *b)
{
    int r = pthread_barrier_wait(b);
    if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD) bail("pthread_barrier_wait: %d", r);
}

static void *waiter_main(void *arg)
{
    struct waiter *w = (struct waiter *)arg;
    unsigned long returns = 0;
    for (;;) {
        barrier(&R.start);
        if (R.quit) break;
        /* relaxed (this and the stores below): progress for the dump and the poll. */
        atomic_store_explicit(&w->state, 1, memory_order_relaxed);
        int r;
        if (test_rand(&w->rng) % 4 == 0) {
            struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
            r = fastsync_sem_timedwait(&R.s, &far);
        } else {
            r = fastsync_sem_wait(&R.s);
        }
        if (r != 0) {
            w->bad++;
            w->bad_code = r;
        }
        atomic_store_explicit(&w->state, 2, memory_order_relaxed);
        atomic_store_explicit(&w->returns, ++returns, memory_order_relaxed);
        barrier(&R.done);
        atomic_store_explicit(&w->state, 0, memory_order_relaxed);
    }
    return NULL;
}

static void run(const char *name, bool pinned, int n, double ms)
{
    test_pin_all(pinned);
    R.n = n;
    R.quit = false;
    R.w = (struct waiter *)calloc((size_t)n, sizeof *R.w);
    pthread_t *t = (pthread_t *)calloc((size_t)n, sizeof *t);
    if (!R.w || !t) bail("out of memory");
    pthread_barrier_init(&R.start, NULL, (unsigned)n + 1);
    pthread_barrier_init(&R.done, NULL, (unsigned)n + 1);
    atomic_store_explicit(&R.rounds, 0, memory_order_relaxed); /* relaxed: before the threads start */
    uint64_t rng = test_stream(1000);
    unsigned long by_kind[POST_KINDS] = { 0 }, bad_value = 0, bad_destroy = 0, bad_wakes = 0, bad_post = 0;
    unsigned long waits0 = test_kernel_waits();

    test_watchdog_start(dump, NULL);
    for (int i = 0; i < n; i++) {
        R.w[i].id = (unsigned)i;
        R.w[i].rng = test_stream((unsigned)i);
        t[i] = test_thread_start(waiter_main, &R.w[i]);
    }
    uint64_t end = test_box_end(ms);
    unsigned long rounds = 0;
    while (test_box_more(end, rounds)) {
        /* relaxed (every store to main_phase and rounds): progress for the dump */
        atomic_store_explicit(&R.main_phase, 0, memory_order_relaxed);
        uint64_t x = test_rand(&rng);
        fastsync_sem_init(&R.s, 0, x % 4 == 0 ? TEST_SHARED : 0);
        barrier(&R.start); /* the waiters go */

        atomic_store_explicit(&R.main_phase, 1, memory_order_relaxed);
        for (unsigned spins = 0; registered() < n; spins++)
            if (spins > 64) test_sleep_ns(10000); /* let them run when pinned */
        /* All N are registered; a pause lets them fall asleep in the kernel (or, with no
         * pause, catches some between registering and sleeping). */
        uint64_t pause = (x >> 8) % 4 == 0 ? 0 : (x >> 16) % 400000u;
        if (pause) test_sleep_ns(pause);

        atomic_store_explicit(&R.main_phase, 2, memory_order_relaxed);
        int kind = (int)((x >> 40) % POST_KINDS);
        unsigned long wakes0 = test_kernel_wakes(), calls = 0;
        int r = 0;
        if (kind == POST_EACH) {
            for (int i = 0; i < n; i++, calls++) r |= fastsync_sem_post(&R.s);
        } else if (kind == POST_N) {
            r = fastsync_sem_post_n(&R.s, (unsigned)n);
            calls = 1;
        } else {
            for (int left = n; left > 0; calls++) {
                int k = 1 + (int)(test_rand(&rng) % (uint64_t)left);
                r |= fastsync_sem_post_n(&R.s, (unsigned)k);
                left -= k;
            }
        }
        /* Every call above found a waiter registered: before the i-th call at most i-1 of the
         * N registered waiters had taken a token. So each made exactly one FUTEX_WAKE. */
        unsigned long wakes = test_kernel_wakes() - wakes0;

        atomic_store_explicit(&R.main_phase, 3, memory_order_relaxed);
        barrier(&R.done); /* all N returned: else the watchdog fires */
        by_kind[kind]++;
        if (r != 0) bad_post++;
        if (fastsync_sem_getvalue(&R.s) != 0) bad_value++;
        if (fastsync_sem_destroy(&R.s) != 0) bad_destroy++;
        if (wakes != calls) {
            if (bad_wakes++ < 5)
                diag("round %lu (%s): %lu FUTEX_WAKE for %lu posting calls", rounds, kind_name[kind], wakes, calls);
        }
        atomic_store_explicit(&R.rounds, ++rounds, memory_order_relaxed);
    }
    R.quit = true;
    barrier(&R.start);
    for (int i = 0; i < n; i++) test_thread_join(t[i]);
    test_watchdog_stop();

    unsigned long returns = 0, bad = 0;
    int bad_code = 0;
    for (int i = 0; i < n; i++) {
        returns += atomic_load_explicit(&R.w[i].returns, memory_order_relaxed); /* relaxed: joined */
        bad += R.w[i].bad;
        if (R.w[i].bad) bad_code = R.w[i].bad_code;
    }
    diag("%s, %d waiters: %lu rounds (%s %lu, %s %lu, %s %lu), %lu futex waits", name, n, rounds,
         kind_name[0], by_kind[0], kind_name[1], by_kind[1], kind_name[2], by_kind[2],
         test_kernel_waits() - waits0);
    ok(rounds > 0, "%s, %d waiters: rounds ran", name, n);
    is_int(returns, rounds * (unsigned long)n, "%s, %d waiters: all %d waits returned in every round", name, n, n);
    if (!is_int(bad, 0, "%s, %d waiters: every wait returned 0", name, n)) diag("  last code %d", bad_code);
    is_int(bad_post, 0, "%s, %d waiters: every post returned 0", name, n);
    is_int(bad_value, 0, "%s, %d waiters: value 0 after every round", name, n);
    is_int(bad_destroy, 0, "%s, %d waiters: no waiter left registered after any round", name, n);
    is_int(bad_wakes, 0, "%s, %d waiters: one FUTEX_WAKE per posting call, every round", name, n);
    pthread_barrier_destroy(&R.start);
    pthread_barrier_destroy(&R.done);
    free(t);
    free(R.w);
    R.w = NULL;
    R.n = 0;
}

int main(void)
{
    test_init();
    int many = 2 * test_ncpu() > 8 ? 2 * test_ncpu() : 8;
    run("spread", false, 4, 400);
    run("pinned", true, 4, 400);
    run("spread", false, many, 400);
    run("pinned", true, many, 400);
    test_pin_all(false);
    return done_testing();
}
