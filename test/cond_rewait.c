/* SPDX-License-Identifier: MIT */
/* cond_rewait: a thread that takes a ticket between a signal's RMW and its wake must not keep
 * the wake meant for an older waiter (Zig issue 12877's shape). The seam here is the test's
 * own wait table whose wake reaches the newest sleeper first (no order is promised by
 * WaitOnAddress; Linux and the POSIX table wake the oldest, which would hide the loss).
 * Each round: A sleeps in fastsync_cond_wait until its turn comes (a plain int under the
 * mutex); this thread gives A its turn under the mutex, unlocks, and signals. In the window
 * between the signal's RMW and its wake (the test's wake, in this thread), B takes a ticket
 * (by fastsync_cond_register, or by fastsync_cond_wait on the same mutex, in turns), finds its
 * own predicate false and goes to sleep; the wake then reaches B. A must still return: B,
 * back from its sleep uncalled with a signal pending, passes the wake on. Then B gets its
 * turn by a broadcast (A has registered again for its next turn: a signal could be A's).
 * 200 rounds, each side's turns counted exactly; a lost wake is the watchdog's failure. */
#include "harness.h"

enum { ROUNDS = 200 };

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
static int turn_a, turn_b;          /* plain: under m */
static _Atomic(int) done_a, done_b; /* the last round each has finished */
static _Atomic(int) go_b;           /* the round B may take its ticket in */
static _Atomic(int) window_round;   /* the round whose first wake opens the window, 0: none */
static pthread_t driver;

/* ---- the newest-first wait table ---- */
struct lifo_node {
    struct lifo_node *next;
    void *word;
    bool woken;
    pthread_cond_t cond;
};
static pthread_mutex_t lifo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lifo_node *lifo_head; /* newest first */
static int lifo_sleepers;           /* under lifo_lock */

static int lifo_wait(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    (void)shared;
    (void)clock;
    (void)abstime; /* this test's waits have no deadlines */
    struct lifo_node n;
    pthread_mutex_lock(&lifo_lock);
    /* relaxed: the table's lock orders it, as the POSIX backend's (fastsync.h). Through
     * fastsync.h's atomics layer: over OS/2 without atomics the word is read under its lock. */
    if (fastsync__load((FASTSYNC__ATOMIC(uint32_t) *)word, memory_order_relaxed) == expected) {
        n.word = word;
        n.woken = false;
        pthread_cond_init(&n.cond, NULL);
        n.next = lifo_head;
        lifo_head = &n;
        lifo_sleepers++;
        while (!n.woken) pthread_cond_wait(&n.cond, &lifo_lock);
        pthread_cond_destroy(&n.cond);
    }
    pthread_mutex_unlock(&lifo_lock);
    return 0;
}

static int lifo_count(void)
{
    pthread_mutex_lock(&lifo_lock);
    int k = lifo_sleepers;
    pthread_mutex_unlock(&lifo_lock);
    return k;
}

static void lifo_wake(void *word, int n, int shared)
{
    (void)shared;
    int r = atomic_load(&window_round);
    if (r != 0 && pthread_equal(pthread_self(), driver)) {
        /* the window: B takes its ticket and sleeps before this wake is made */
        atomic_store(&window_round, 0);
        atomic_store(&go_b, r);
        uint64_t end = test_limit_end(5000);
        while (test_box_open(end) && lifo_count() < 2) test_sleep_ns(100000);
    }
    pthread_mutex_lock(&lifo_lock);
    for (struct lifo_node **p = &lifo_head; *p != NULL && n > 0;) {
        struct lifo_node *x = *p;
        if (x->word != word) {
            p = &x->next;
            continue;
        }
        *p = x->next;
        lifo_sleepers--;
        x->woken = true;
        pthread_cond_signal(&x->cond);
        n--;
    }
    pthread_mutex_unlock(&lifo_lock);
}

static void dump(void *unused)
{
    (void)unused;
    test_dump_cond("condvar", &c);
    test_dump_mutex("mutex", &m);
    diag("rounds done: A %d, B %d; table sleepers %d (relaxed snapshot)", atomic_load(&done_a),
         atomic_load(&done_b), lifo_sleepers);
}

static void *waiter_a(void *unused)
{
    (void)unused;
    for (int r = 1; r <= ROUNDS; r++) {
        fastsync_mutex_lock(&m);
        while (turn_a != r) fastsync_cond_wait(&c, &m);
        fastsync_mutex_unlock(&m);
        atomic_store(&done_a, r);
    }
    return NULL;
}

static void *waiter_b(void *unused)
{
    (void)unused;
    for (int r = 1; r <= ROUNDS; r++) {
        while (atomic_load(&go_b) != r) test_sleep_ns(50000);
        if (r % 2) {
            for (;;) { /* the ticket API: register, look under the lock, await */
                fastsync_cond_ticket_t t;
                fastsync_cond_register(&c, &t);
                fastsync_mutex_lock(&m);
                bool mine = turn_b == r;
                fastsync_mutex_unlock(&m);
                if (mine) {
                    fastsync_cond_cancel(&c, &t);
                    break;
                }
                fastsync_cond_await(&c, &t);
            }
        } else {
            fastsync_mutex_lock(&m);
            while (turn_b != r) fastsync_cond_wait(&c, &m);
            fastsync_mutex_unlock(&m);
        }
        atomic_store(&done_b, r);
    }
    return NULL;
}

int main(void)
{
    test_init();
    driver = pthread_self();
    test_wait_override = lifo_wait;
    test_wake_override = lifo_wake;
    test_watchdog_start(dump, NULL);
    pthread_t a = test_thread_start(waiter_a, NULL), b = test_thread_start(waiter_b, NULL);
    int absorbed = 0;
    for (int r = 1; r <= ROUNDS; r++) {
        while (lifo_count() < 1) test_sleep_ns(50000); /* A asleep */
        fastsync_mutex_lock(&m);
        turn_a = r;
        fastsync_mutex_unlock(&m);
        atomic_store(&window_round, r);
        fastsync_cond_signal(&c);
        while (atomic_load(&done_a) != r) test_sleep_ns(50000); /* the watchdog ends a hang */
        absorbed += atomic_load(&window_round) == 0;
        fastsync_mutex_lock(&m);
        turn_b = r;
        fastsync_mutex_unlock(&m);
        fastsync_cond_broadcast(&c); /* (A is registered again for its next turn) */
        while (atomic_load(&done_b) != r) test_sleep_ns(50000);
    }
    test_thread_join(a);
    test_thread_join(b);
    is_int(atomic_load(&done_a), ROUNDS, "A had its %d turns", ROUNDS);
    is_int(atomic_load(&done_b), ROUNDS, "B had its %d turns", ROUNDS);
    is_int(absorbed, ROUNDS, "in every round B slept before the wake meant for A, and the wake reached B first");
    is_int(test_cond_left(&c), 0, "no ticket, no signal left");
    test_watchdog_stop();
    return done_testing();
}
