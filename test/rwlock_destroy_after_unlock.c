/* SPDX-License-Identifier: MIT */
/* rwlock_destroy_after_unlock: fastsync.h promises that an unlock (and a writer's give-up)
 * touches the lock only up to its RMW, then at most makes a wake on its address, so the next
 * owner may destroy and free the lock at once. Each round's lock lives at the very end of its
 * own mmap'd page; the freer F of a group of three threads takes it after the others, then
 * unlocks, destroys it (0) and munmaps the page at once, while the others may still be
 * inside their last call: any later access by them is a SIGSEGV. Three kinds of round:
 *   rdunlock: the holder H read-locks, F write-locks meanwhile (spinning or asleep,
 *             registered), and H's rdunlock, the last reader's, hands the lock to F;
 *   wrunlock: H write-locks, F read-locks meanwhile (asleep, rwait set), and H's wrunlock
 *             wakes F;
 *   give-up:  H read-locks and keeps it; the third thread G makes a timedwrlock with a
 *             deadline 0 to 500 us ahead and registers; F, once it has seen G registered,
 *             read-locks behind G, and G's give-up (ETIMEDOUT) lets F in; then H unlocks,
 *             and F frees the lock while G may still be inside its give-up's wake.
 * The waker gives up the CPU after each wake (the harness's test_after_futex_wake), so that
 * the thread it woke runs and frees the page before the rest of its call runs. Under
 * AddressSanitizer or ThreadSanitizer the lock is a malloc'd block, freed at once (a later
 * access is a heap-use-after-free report, or under TSan a race with the free; the harness's
 * test_page_alloc). Private and shared locks; spread over the CPUs, with more groups than
 * CPUs, and pinned to one CPU. destroy says 0 every time.
 * Fails with an unlock or give-up that reads or writes the word after its wake (a fresh load
 * of the word, say): a SIGSEGV, or the sanitizer's report; under ThreadSanitizer also with a
 * give-up whose CAS is not a release: the reader it lets in then does not happen-after it
 * (nor after the writer's registration), and its free races with them. */
#include "harness.h"

#define MAXGROUPS 16

enum { ROUND_RDUNLOCK, ROUND_WRUNLOCK, ROUND_GIVEUP, ROUND_KINDS };

struct group {
    fastsync_sem_t go_h, go_g, held, in, left, g_done;
    _Atomic(fastsync_rwlock_t *) slot; /* NULL: stop */
    _Atomic(int) kind;
    _Atomic(bool) g_returned;          /* G's timedwrlock returned */
    _Atomic(unsigned long) rounds;     /* relaxed: progress for the dump */
    unsigned long by[ROUND_KINDS], shared_rounds, bad; /* read after the join */
    int bad_code;
    uint64_t h_rng, g_rng, f_rng;
};

static struct {
    int ngroups;
    uint64_t end;
    struct group groups[MAXGROUPS];
} g;

static void dump(void *unused)
{
    (void)unused;
    for (int i = 0; i < g.ngroups; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("group %d: %lu rounds, kind %d", i, atomic_load_explicit(&g.groups[i].rounds, memory_order_relaxed),
             atomic_load_explicit(&g.groups[i].kind, memory_order_relaxed));
}

static void after_wake(void)
{
    sched_yield();        /* pinned: the woken thread runs now */
    test_sleep_ns(20000); /* spread: it has 20 us to free */
}

/* A random delay: a short spin, a yield, or (one time in four) 200 us, after which a
 * waiter has given up spinning and sleeps, so that the unlock must wake it. */
static void delay(uint64_t *rng)
{
    unsigned r = (unsigned)(test_rand(rng) % 8);
    if (r < 2) test_sleep_ns(200000);
    else if (r == 2) sched_yield();
    else for (volatile unsigned i = 0; i < r * 50; i++) {
    }
}

static void check(struct group *q, int r, int want)
{
    if (r != want) {
        q->bad++;
        q->bad_code = r;
    }
}

static void *holder(void *p)
{
    struct group *q = (struct group *)p;
    for (;;) {
        fastsync_sem_wait(&q->go_h);
        /* acquire: pairs with F's release store of the slot (the lock's init). */
        fastsync_rwlock_t *rw = atomic_load_explicit(&q->slot, memory_order_acquire);
        if (!rw) return NULL;
        /* relaxed: published with the slot, read after it. */
        int kind = atomic_load_explicit(&q->kind, memory_order_relaxed);
        if (kind == ROUND_WRUNLOCK) {
            check(q, fastsync_rwlock_wrlock(rw), 0);
            fastsync_sem_post(&q->held);
            delay(&q->h_rng);
            check(q, fastsync_rwlock_wrunlock(rw), 0); /* F may free it from here on */
        } else if (kind == ROUND_RDUNLOCK) {
            check(q, fastsync_rwlock_rdlock(rw), 0);
            fastsync_sem_post(&q->held);
            delay(&q->h_rng);
            check(q, fastsync_rwlock_rdunlock(rw), 0); /* (the same) */
        } else {
            check(q, fastsync_rwlock_rdlock(rw), 0);
            fastsync_sem_post(&q->held);
            fastsync_sem_post(&q->go_g);
            fastsync_sem_wait(&q->in); /* F is in: G has given up */
            check(q, fastsync_rwlock_rdunlock(rw), 0);
            fastsync_sem_post(&q->left);
        }
    }
}

static void *giver(void *p)
{
    struct group *q = (struct group *)p;
    for (;;) {
        fastsync_sem_wait(&q->go_g);
        /* acquire: as in holder. */
        fastsync_rwlock_t *rw = atomic_load_explicit(&q->slot, memory_order_acquire);
        if (!rw) return NULL;
        struct timespec d = fastsync_deadline_in(test_rand(&q->g_rng) % 500000u);
        check(q, fastsync_rwlock_timedwrlock(rw, &d), ETIMEDOUT); /* F may free it once in */
        /* release: pairs with F's acquire load (F then knows G is out of the lock). */
        atomic_store_explicit(&q->g_returned, true, memory_order_release);
        fastsync_sem_post(&q->g_done);
    }
}

static void *freer(void *p)
{
    struct group *q = (struct group *)p;
    unsigned long n = 0;
    while (test_box_more(g.end, n)) {
        fastsync_rwlock_t *rw = (fastsync_rwlock_t *)test_page_alloc(sizeof(fastsync_rwlock_t), false);
        bool shared = test_rand(&q->f_rng) % 2 && FASTSYNC_HAS_SHARED;
        fastsync_rwlock_init(rw, shared ? TEST_SHARED : 0);
        q->shared_rounds += shared;
        int kind = (int)(test_rand(&q->f_rng) % ROUND_KINDS);
        /* relaxed: published by the release store of the slot. */
        atomic_store_explicit(&q->kind, kind, memory_order_relaxed);
        atomic_store_explicit(&q->g_returned, false, memory_order_relaxed);
        /* release: pairs with the acquire loads of the slot in holder and giver. */
        atomic_store_explicit(&q->slot, rw, memory_order_release);
        fastsync_sem_post(&q->go_h);
        fastsync_sem_wait(&q->held);
        if (kind == ROUND_GIVEUP) {
            /* read-lock behind G once it has registered (or once it has returned, if its
             * deadline came first): either way F's read lock comes after G's last RMW */
            uint64_t end = test_limit_end(5000);
            /* acquire: pairs with G's release store. */
            while (test_rwlock_writers(rw) == 0 && !atomic_load_explicit(&q->g_returned, memory_order_acquire) &&
                   test_box_open(end))
                sched_yield();
            check(q, fastsync_rwlock_rdlock(rw), 0);
            fastsync_sem_post(&q->in);
            fastsync_sem_wait(&q->left);
            check(q, fastsync_rwlock_rdunlock(rw), 0);
        } else {
            delay(&q->f_rng);
            if (kind == ROUND_RDUNLOCK) {
                check(q, fastsync_rwlock_wrlock(rw), 0);
                check(q, fastsync_rwlock_wrunlock(rw), 0);
            } else {
                check(q, fastsync_rwlock_rdlock(rw), 0);
                check(q, fastsync_rwlock_rdunlock(rw), 0);
            }
        }
        check(q, fastsync_rwlock_destroy(rw), 0);
        test_page_free(rw); /* H (or G) may still be inside its last call */
        if (kind == ROUND_GIVEUP) fastsync_sem_wait(&q->g_done); /* before the next round's go */
        q->by[kind]++;
        /* relaxed: progress for the dump. */
        atomic_store_explicit(&q->rounds, ++n, memory_order_relaxed);
    }
    atomic_store_explicit(&q->slot, NULL, memory_order_release); /* release: as above */
    fastsync_sem_post(&q->go_h);
    fastsync_sem_post(&q->go_g);
    return NULL;
}

static void run(const char *name, bool pinned, int ngroups, double ms)
{
    test_pin_all(pinned);
    memset(&g.groups, 0, sizeof g.groups);
    g.ngroups = ngroups;
    pthread_t t[3 * MAXGROUPS];
    for (int i = 0; i < ngroups; i++) {
        struct group *q = &g.groups[i];
        fastsync_sem_init(&q->go_h, 0, 0);
        fastsync_sem_init(&q->go_g, 0, 0);
        fastsync_sem_init(&q->held, 0, 0);
        fastsync_sem_init(&q->in, 0, 0);
        fastsync_sem_init(&q->left, 0, 0);
        fastsync_sem_init(&q->g_done, 0, 0);
        q->h_rng = test_stream(3 * (unsigned)i);
        q->g_rng = test_stream(3 * (unsigned)i + 1);
        q->f_rng = test_stream(3 * (unsigned)i + 2);
    }
    unsigned long wakes0 = test_kernel_wakes();
    g.end = test_box_end(ms);
    for (int i = 0; i < ngroups; i++) {
        t[3 * i] = test_thread_start(holder, &g.groups[i]);
        t[3 * i + 1] = test_thread_start(giver, &g.groups[i]);
        t[3 * i + 2] = test_thread_start(freer, &g.groups[i]);
    }
    for (int i = 0; i < 3 * ngroups; i++) test_thread_join(t[i]);
    unsigned long rounds = 0, by[ROUND_KINDS] = { 0 }, bad = 0, shared = 0, wakes = test_kernel_wakes() - wakes0;
    int bad_code = 0;
    for (int i = 0; i < ngroups; i++) {
        struct group *q = &g.groups[i];
        rounds += atomic_load_explicit(&q->rounds, memory_order_relaxed); /* relaxed: joined */
        for (int k = 0; k < ROUND_KINDS; k++) by[k] += q->by[k];
        bad += q->bad;
        shared += q->shared_rounds;
        if (q->bad) bad_code = q->bad_code;
    }
    ok(rounds >= (unsigned long)ngroups,
       "%s, %d groups: %lu rounds (rdunlock %lu, wrunlock %lu, give-up %lu; %lu shared; %lu wakes), each lock "
       "freed by its last owner at once",
       name, ngroups, rounds, by[0], by[1], by[2], shared, wakes);
    if (!is_int(bad, 0, "%s, %d groups: every call said what it should (G: ETIMEDOUT; destroy: 0)", name, ngroups))
        diag("  last unexpected code: %d", bad_code);
}

int main(void)
{
    test_init();
    diag("locks live in %s", TEST_PAGE_WHERE);
    test_watchdog_start(dump, NULL);
    test_after_futex_wake = after_wake;
    int over = test_ncpu() + 1;
    if (over > MAXGROUPS) over = MAXGROUPS;
    run("spread", false, 1, 250);
    run("spread", false, over, 250);
    run("pinned", true, 2, 250);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
