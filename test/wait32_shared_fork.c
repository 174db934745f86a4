/* SPDX-License-Identifier: MIT */
/* wait32_shared_fork: fastsync_wait32 and fastsync_wake32 with FASTSYNC_SHARED, on a word
 * in MAP_SHARED | MAP_ANONYMOUS memory, across fork (the manual's "Waiting on an address").
 *   ping-pong: parent and child pass the word back and forth ROUNDS times (the parent
 *     stores 2k+1 and wakes one, the child 2k+2), each waiting with FASTSYNC_SHARED while
 *     the word holds the value it saw (wait32, timedwait32, clockwait32 on CLOCK_REALTIME
 *     by turns, far deadlines), and a plain payload in the page, written before each
 *     release store, read after the other's acquire load; spread over the CPUs, then both
 *     processes pinned to one CPU (each must sleep for the other to run). Exact: the
 *     child's exit status says every value, payload and wait was right in its ROUNDS, the
 *     parent checks its own.
 * Where the backend has no shared waits (FASTSYNC_HAS_SHARED 0: POSIX, Windows) every call
 * with FASTSYNC_SHARED says EINVAL, and nothing forks. The watchdog kills a hung child. */
#include "harness.h"

#if FASTSYNC_HAS_SHARED
#include <sys/mman.h>

#define ROUNDS 2000
#define STOP 0xffffffffu

struct shm {
    fastsync_word32_t w;
    unsigned long to_child, to_parent; /* plain: ordered by the word's release/acquire */
    _Atomic(unsigned long) child_at;   /* relaxed: the child's progress, for the dump */
};

static struct shm *sh;

static void dump(void *unused)
{
    (void)unused;
    diag("word %u, child at round %lu", (unsigned)atomic_load(&sh->w),
         atomic_load_explicit(&sh->child_at, memory_order_relaxed));
    test_kill_child();
}

/* Waits (kind k % 3, FASTSYNC_SHARED) while the word holds `old`; the new value. *bad
 * counts waits that returned other than 0. acquire: pairs with the release store of the
 * value read. */
static uint32_t await_change(uint32_t old, unsigned long k, int *bad)
{
    uint32_t v;
    while ((v = atomic_load_explicit(&sh->w, memory_order_acquire)) == old) {
        struct timespec d;
        int r;
        switch (k % 3) {
        case 1:
            d = fastsync_deadline_in(3600 * 1000000000ull);
            r = fastsync_timedwait32(&sh->w, old, FASTSYNC_SHARED, &d);
            break;
        case 2:
            d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
            r = fastsync_clockwait32(&sh->w, old, FASTSYNC_SHARED, CLOCK_REALTIME, &d);
            break;
        default:
            r = fastsync_wait32(&sh->w, old, FASTSYNC_SHARED);
            break;
        }
        *bad += r != 0;
    }
    return v;
}

/* The child: 0, or a bit per kind of error. */
static int child(void)
{
    int errors = 0, bad = 0;
    uint32_t seen = 0;
    for (unsigned long k = 0;; k++) {
        uint32_t v = await_change(seen, k + 1, &bad);
        if (v == STOP) {
            if (k != ROUNDS) errors |= 1;
            break;
        }
        if (v != 2 * k + 1 || sh->to_child != k) errors |= 2;
        sh->to_parent = k;
        /* release: pairs with the parent's acquire load (to_parent before it) */
        atomic_store_explicit(&sh->w, (uint32_t)(2 * k + 2), memory_order_release);
        if (fastsync_wake32(&sh->w, 1, FASTSYNC_SHARED) != 0) errors |= 4;
        seen = (uint32_t)(2 * k + 2);
        atomic_store_explicit(&sh->child_at, k + 1, memory_order_relaxed);
    }
    if (bad) errors |= 8;
    return errors;
}

static void ping_pong(bool pinned)
{
    test_pin_all(pinned); /* the child inherits the mask */
    atomic_store_explicit(&sh->w, 0, memory_order_relaxed); /* relaxed: before the fork */
    atomic_store_explicit(&sh->child_at, 0, memory_order_relaxed);
    sh->to_child = sh->to_parent = 0;
    pid_t pid = test_spawn(child);
    int wrong = 0, bad = 0;
    for (unsigned long k = 0; k < ROUNDS; k++) {
        sh->to_child = k;
        /* release: pairs with the child's acquire load (to_child before it) */
        atomic_store_explicit(&sh->w, (uint32_t)(2 * k + 1), memory_order_release);
        fastsync_wake32(&sh->w, 1, FASTSYNC_SHARED);
        uint32_t v = await_change((uint32_t)(2 * k + 1), k, &bad);
        if (v != 2 * k + 2 || sh->to_parent != k) wrong++;
    }
    atomic_store_explicit(&sh->w, STOP, memory_order_release); /* pairs with the child's acquire */
    fastsync_wake32(&sh->w, 1, FASTSYNC_SHARED);
    int status = test_reap(pid);
    test_pin_all(false);
    ok(status == 0 && wrong == 0 && bad == 0,
       "shared ping-pong across fork%s: %d rounds; child exit %d (0: all right), parent: %d wrong, %d waits not 0",
       pinned ? ", both pinned to one CPU" : "", ROUNDS, status, wrong, bad);
}

int main(void)
{
    test_init();
    sh = (struct shm *)mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) bail("mmap: %s", strerror(errno));
    test_watchdog_start(dump, NULL);
    ping_pong(false);
    ping_pong(true);
    test_watchdog_stop();
    munmap(sh, sizeof *sh);
    return done_testing();
}

#else /* no shared waits */

static fastsync_word32_t w;

int main(void)
{
    test_init();
    struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
    unsigned long w0 = test_kernel_waits(), k0 = test_kernel_wakes();
    int r1 = fastsync_wait32(&w, 0, FASTSYNC_SHARED), r2 = fastsync_timedwait32(&w, 0, FASTSYNC_SHARED, &far),
        r3 = fastsync_clockwait32(&w, 0, FASTSYNC_SHARED, CLOCK_REALTIME, &far),
        r4 = fastsync_wake32(&w, 1, FASTSYNC_SHARED), r5 = fastsync_wake32_all(&w, FASTSYNC_SHARED);
    ok(r1 == EINVAL && r2 == EINVAL && r3 == EINVAL && r4 == EINVAL && r5 == EINVAL &&
           test_kernel_waits() == w0 && test_kernel_wakes() == k0,
       "backend %s has no shared waits: FASTSYNC_SHARED is EINVAL from each call (%d %d %d %d %d), no kernel call",
       FASTSYNC_BACKEND, r1, r2, r3, r4, r5);
    return done_testing();
}
#endif
