/* SPDX-License-Identifier: MIT */
/* test/harness.h - what every fastsync test shares. Include it instead of fastsync.h.
 *
 * The primitive under test: fastsync.h, whose futex layer is replaced here by one that
 * counts calls (and, built with FASTSYNC_TEST_INJECT, returns spurious wakeups, EINTR and
 * EAGAIN at random before sleeping for real), on every backend. Built with -D__OS2__
 * -Itest/os2, the same include brings fastsync_os2.h over the OS/2 API double.
 *
 *   test_kernel_waits()/wakes()  sleeping and waking kernel calls made so far
 *   test_after_futex_wait        (Linux) a function the futex layer calls in the waiting
 *                                thread after each wait that reached the kernel
 *   test_after_futex_wake        (Linux) the same in the waking thread after each wake
 *   test_wait_override/_wake_override  (Linux) a test's own seam below the counting layer
 *   test_script_*                (Linux) such a seam as a script: each wait records its call
 *                                and returns only when the test releases it (below)
 *   test_waitv_fallback          wait_any's multi-wait answers ENOSYS: the waits take their
 *                                fallback (FASTSYNC_TEST_WAITV=fallback sets it in test_init)
 *   test_waitvs_made             multi-waits made (each also counts in test_kernel_waits)
 *   test_before_cas              (with TEST_CAS_HOOK defined first) a function called before
 *                                each compare-and-swap of fastsync.h, with the word's address
 *   test_scale()                 FASTSYNC_TEST_SCALE (default 1): multiplies time boxes
 *   test_box_end(ms)             the end of a time box of ms * scale milliseconds
 *   test_box_open(end)           whether that time box still runs
 *   test_box_more(end, done)     ... or the loop has done fewer than TEST_MIN_ROUNDS rounds
 *   test_box_until(end, done, reached)  ... or what the test counts on seeing has not
 *                                happened yet (`reached` false)
 *   test_limit_end(ms)           the end of a wait for a state that a sound run reaches at
 *                                once (a thread asleep, a child registered): ms * max(1,
 *                                scale), never shortened by a scale below 1
 *   test_init()                  first in main: reads and prints the seed and the scale
 *   test_seed(), test_stream(i)  the run's random seed (FASTSYNC_TEST_SEED to replay), and a
 *   test_rand(&state)            distinct generator state per thread i; next random number
 *   test_watchdog_start(dump, arg) / test_watchdog_stop()
 *                                a hang becomes a failure: after 20 s * max(1, scale) the
 *                                watchdog prints the test's state through dump(arg), then
 *                                "Bail out!" and exits 1
 *   test_pin_all(bool)           pin every thread started afterwards (and this one) to one
 *                                CPU: preemption lands inside the critical windows
 *   test_thread_start(fn, arg) / test_thread_join(t)
 *   test_ncpu(), test_now_ns(), test_sleep_ns(ns)
 *   test_tid(), test_thread_state(tid)  a thread's id, and the state /proc gives it ('S':
 *                                asleep in the kernel; -1: cannot say, as on Windows)
 *   test_until_asleep(tid, settle_ns)  until that thread reads asleep (a settle without /proc)
 *   test_ts_ns(t), test_ns_ts(ns)  a timespec in signed nanoseconds, and back
 *   test_clock_ns(clock)         `clock` read now, in nanoseconds
 *   test_deadline_on(clock, ns)  an absolute deadline ns from now on `clock`, normalized
 * White-box probes and watchdog dumps, reading the primitive's word (through fastsync.h's
 * atomics layer: under OS/2 without atomics, the table's lock):
 *   test_sem_waiters(s)          waiters registered in the semaphore's word
 *   test_sem_word(s), test_sem_force_word(s, v)
 *                                the semaphore's whole word, read, or overwritten (white-box
 *                                tests that need a state no sequence of calls can make)
 *   test_event_asleep(e, n, w0)  n waiters look asleep on the reset event e, w0 being
 *                                test_kernel_waits() before they started (each made its
 *                                first kernel wait)
 *   test_dump_sem(what, s), test_dump_event(what, e)   a diag line with the decoded word
 *   test_cond_waiters(c), test_cond_pending(c), test_cond_left(c), test_cond_word(c),
 *   test_dump_cond(what, c)      the condvar's tickets registered and not gone, of those the
 *                                ones owed a return of 0, what it still holds (0: nothing);
 *                                test_cond_released(c): released tickets not gone yet
 *   test_rwlock_word(rw), test_rwlock_force_word(rw, v)
 *                                the reader-writer lock's whole word, read, or overwritten
 *   test_rwlock_make(readers, rwait, wlocked, shared, writers, wseq)  a word from its fields
 *   test_rwlock_readers(rw), test_rwlock_writers(rw)  read locks held; writers registered
 *   test_dump_rwlock(what, rw)   a diag line with the decoded word
 *   test_once_word(o), test_once_state(o), test_once_force_word(o, v), test_dump_once(what, o)
 *                                the once's whole word, its state field (NEW 0, RUNNING 1,
 *                                WAITED 2, DONE 3), the word overwritten, a diag line
 *   test_barrier_full(b), test_barrier_word(b), test_barrier_arrived(b), test_barrier_count(b),
 *   test_barrier_leaving(b), test_dump_barrier(what, b)   the barrier's whole word, its low
 *                                half (the futex word), the arrivals in its round, the count
 *                                that ends one, the threads not yet out of its waits, a diag line
 *   test_latch_word(l), test_latch_low(l), test_latch_count(l), test_latch_waiters(l),
 *   test_latch_slept(l), test_latch_force_word(l, v), test_dump_latch(what, l)
 *                                the latch's whole word, its low half (the futex word), its
 *                                count, the threads inside its waits, its `slept` bit, the
 *                                word overwritten (relaxed), a diag line
 * A signal storm (struct test_storm: one thread sending SIGUSR1 to another in a loop; not on
 * Windows):
 *   test_storm_init(s, restart)  installs the counting SIGUSR1 handler (SA_RESTART or not),
 *                                none sent yet: before the threads that read s start
 *   test_storm_start(s, target) / test_storm_stop(s)  the sender thread, started and joined
 *   test_storm_sent(s), test_storm_caught()  signals sent by s, handled in any thread
 *   test_storm_dump(s)           a diag line "signals sent %lu, caught %lu"
 *   test_storm_action            a function the handler also calls, if set (signal-safe)
 * An object alone on its own page (the destroy-after tests; not on Windows):
 *   TEST_PAGE_MALLOC             1 under AddressSanitizer or ThreadSanitizer (TEST_ASAN,
 *                                TEST_TSAN): the objects are malloc'd blocks, a touch after
 *                                free is the sanitizer's report; else 0
 *   test_page_alloc(size, shared)  size bytes at the very end of a fresh mmap'd page
 *                                (MAP_SHARED if shared), so that a touch after the page is
 *                                unmapped is a SIGSEGV; or malloc'd. Bails on failure
 *   test_page_alloc_at(size, at, shared)  the same at offset `at` of the page
 *   test_page_free(p)            unmaps the page that holds p, or frees it
 *   test_page_size(), TEST_PAGE_WHERE  the page size; where the objects live, for a diag
 *   test_page_on_fault(fn)       fn (SA_SIGINFO) for SIGSEGV and SIGBUS
 * Event sleepers (struct test_sleeper: one thread, one wait on an event):
 *   test_sleeper_start(s, e, kind, ns)  TEST_SLEEP_WAIT, _TIMED (timedwait ns ahead) or
 *                                _REALTIME (clockwait on CLOCK_REALTIME ns ahead)
 *   test_sleepers_returned(s, n), test_sleepers_join(s, n) (how many returned 0),
 *   test_sleepers_dump(s, n)
 * Reader-writer lockers (struct test_rwlocker: one thread, one lock call; holding what it
 * took until released, or unlocking it at once):
 *   test_rwlocker_start(l, rw, kind, ns, hold)  TEST_RW_RDLOCK, _TIMEDRDLOCK (ns ahead on
 *                                CLOCK_MONOTONIC), _CLOCKRDLOCK (on CLOCK_REALTIME), and the
 *                                same three of the write lock
 *   test_rwlocker_state(l) (TEST_RWL_LOCKING: inside the call; _HOLDING; _DONE: returned and
 *   unlocked), test_rwlocker_until(l, state, ms), test_rwlocker_asleep(l, settle_ns),
 *   test_rwlocker_release(l), test_rwlocker_join(l) (the lock call's result),
 *   test_rwlockers_dump(l, n)
 *   test_rwlocker_hold(l) / _unhold(), with test_after_futex_wait = test_rwlocker_hold_window:
 *                                l stays in the hook after each of its futex waits until
 *                                unheld (a timed-out writer's give-up waits for the scene)
 * Cancellable waiters (struct test_cwaiter: one thread, one wait(kind), cancellation state):
 *   test_cwaiter_start(w, wait, kind, pending, disabled), test_cwaiter_cancel_pending(w),
 *   test_cwaiter_phase(w) (TEST_CW_WAITING: inside the wait; TEST_CW_RETURNED: after it),
 *   test_cwaiter_join_cancelled(w, what) (it ended cancelled inside its wait)
 *   test_claim_window, test_claim_arm(), test_claim_cancel(what): the thread back first from
 *                                a kernel wait is cancelled there, before it looks at its word
 *
 */
#ifndef FASTSYNC_TEST_HARNESS_H
#define FASTSYNC_TEST_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "tap.h"

#if defined(TEST_CAS_HOOK)
/* A test that defines TEST_CAS_HOOK (before including this file) gets test_before_cas: when
 * set, a function called with the address of the word before every compare-and-swap that
 * fastsync.h makes (its fastsync__cas_weak is <stdatomic.h>'s weak CAS, redefined here to the
 * hook and then a strong CAS, which a weak one may always be; redefining the C library's
 * macro is a test's liberty, which gcc's and clang's <stdatomic.h> allow). A window inside a
 * call, between its load and its CAS, that no other seam reaches (rwlock_reader_stale_guess.c).
 * Set it before the threads start. The hook may call fastsync.h itself: it is not called
 * again inside itself. Where the header's atomics are its own (OS/2 without atomics) it is
 * never called. */
static void (*test_before_cas)(const volatile void *word);
static _Thread_local bool test_in_cas_hook;
static inline void test_cas_hook(const volatile void *word)
{
    if (test_before_cas == NULL || test_in_cas_hook) return;
    test_in_cas_hook = true;
    test_before_cas(word);
    test_in_cas_hook = false;
}
#undef atomic_compare_exchange_weak_explicit
#define atomic_compare_exchange_weak_explicit(p, e, d, s, f)                                             \
    (test_cas_hook((const volatile void *)(p)), atomic_compare_exchange_strong_explicit(p, e, d, s, f))
#endif

static inline uint64_t test_seed(void);
static inline uint64_t test_rand(uint64_t *state);
static inline uint64_t test_stream(unsigned i);

static _Atomic(unsigned long) test_waits_made, test_wakes_made;
/* Called in the waiting thread after each futex wait that reached the kernel, when set (set
 * it before the threads start): a test's window inside a registered waiter's sleep. */
static void (*test_after_futex_wait)(void);
/* Called in the waking thread after each futex wake, when set (set it before the threads
 * start): a window after a wake, in which the woken thread may run and free the object. */
static void (*test_after_futex_wake)(void);
static inline int test_futex_wait(void *word, uint32_t expected, int shared, clockid_t clock,
                           const struct timespec *abstime);
static inline void test_futex_wake(void *word, int n, int shared);
struct fastsync__waitv;
static inline int test_futex_waitv(const struct fastsync__waitv *v, unsigned n, clockid_t clock,
                                   const struct timespec *abstime);
#define FASTSYNC_FUTEX_WAIT test_futex_wait
#define FASTSYNC_FUTEX_WAKE test_futex_wake
#define FASTSYNC_FUTEX_WAITV test_futex_waitv
#include "fastsync.h"
#if defined(_WIN32)
#undef far  /* <windows.h>'s 16-bit leftovers, and good names for deadlines */
#undef near
#endif
#if !defined(CLOCK_BOOTTIME) /* Linux's number; elsewhere simply another clock to refuse */
#define CLOCK_BOOTTIME ((clockid_t)7)
#endif

#ifdef FASTSYNC_TEST_INJECT
/* Per-thread generator for the injected faults, seeded from the run's seed. */
static _Thread_local uint64_t test_inject_state;
static _Atomic(uint64_t) test_inject_threads;
#endif

/* A test's own wait and wake in place of the backend's, when set (set them before the threads
 * start; both or neither): a seam with another wake order than the kernel's (cond_rewait.c).
 * They are still counted; FASTSYNC_TEST_INJECT's faults come before them. */
static int (*test_wait_override)(void *word, uint32_t expected, int shared, clockid_t clock,
                                 const struct timespec *abstime);
static void (*test_wake_override)(void *word, int n, int shared);

#ifdef FASTSYNC_TEST_INJECT
/* The fault a wait returns before it sleeps for real, 3 times in 8: 0 (a spurious wakeup),
 * EINTR (a signal), EAGAIN (the word changed: the raw kernel answer); else -1, none. */
static inline int test_inject_fault(void)
{
    if (test_inject_state == 0)
        test_inject_state = test_stream(1000 + (unsigned)atomic_fetch_add(&test_inject_threads, 1));
    switch (test_rand(&test_inject_state) % 8) {
    case 0: return 0;
    case 1: return EINTR;
    case 2: return EAGAIN;
    default: return -1;
    }
}
#endif

static inline int test_futex_wait(void *word, uint32_t expected, int shared, clockid_t clock,
                           const struct timespec *abstime)
{
    /* relaxed: a statistic, read after the threads are joined. */
    atomic_fetch_add_explicit(&test_waits_made, 1, memory_order_relaxed);
#ifdef FASTSYNC_TEST_INJECT
    int fault = test_inject_fault();
    if (fault >= 0) return fault;
#endif
    int r = test_wait_override ? test_wait_override(word, expected, shared, clock, abstime)
                               : fastsync__wait_sys(word, expected, shared, clock, abstime);
    if (test_after_futex_wait) test_after_futex_wait();
    return r;
}

static inline void test_futex_wake(void *word, int n, int shared)
{
    /* relaxed: a statistic, read after the threads are joined. */
    atomic_fetch_add_explicit(&test_wakes_made, 1, memory_order_relaxed);
    if (test_wake_override)
        test_wake_override(word, n, shared);
    else
        fastsync__wake_sys(word, n, shared);
    if (test_after_futex_wake) test_after_futex_wake();
}

/* The multi-wait of fastsync_wait_any, counted as a wait (and with the same injected faults).
 * test_waitv_fallback true (FASTSYNC_TEST_WAITV=fallback in the environment, read by
 * test_init, or set by the test before its threads start): it answers ENOSYS, as a kernel
 * before 5.16 would, and the waits take their fallback (one word at a time, in slices), even
 * where futex_waitv works; so every test of wait_any runs both ways on Linux. */
static bool test_waitv_fallback;
static _Atomic(unsigned long) test_waitvs_made;

static inline int test_futex_waitv(const struct fastsync__waitv *v, unsigned n, clockid_t clock,
                                   const struct timespec *abstime)
{
    if (test_waitv_fallback) return ENOSYS;
    /* relaxed: statistics, read after the threads are joined. */
    atomic_fetch_add_explicit(&test_waits_made, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&test_waitvs_made, 1, memory_order_relaxed);
#ifdef FASTSYNC_TEST_INJECT
    int fault = test_inject_fault();
    if (fault >= 0) return fault;
#endif
    int r = fastsync__waitv_sys(v, n, clock, abstime);
    if (test_after_futex_wait) test_after_futex_wait();
    return r;
}

static inline unsigned long test_kernel_waits(void) { return atomic_load(&test_waits_made); }
static inline unsigned long test_kernel_wakes(void) { return atomic_load(&test_wakes_made); }

/* FASTSYNC_SHARED where the backend has it, else 0: a test's shared rounds then run over
 * private objects (the backend's init refuses FASTSYNC_SHARED; sem_api and event_api check). */
#define TEST_SHARED (FASTSYNC_HAS_SHARED ? FASTSYNC_SHARED : 0)

/* ---- the primitive's word: probes and dumps ---- */

/* relaxed (every load of a word here): a snapshot; what a probe or a dump concludes is
 * ordered by the test's own synchronization. */
static inline uint32_t test_sem_waiters(const fastsync_sem_t *s)
{
    return fastsync__sem_waiters(fastsync__load(&s->state, memory_order_relaxed));
}

static inline uint64_t test_sem_word(const fastsync_sem_t *s)
{
    return fastsync__load(&s->state, memory_order_relaxed);
}

static inline void test_sem_force_word(fastsync_sem_t *s, uint64_t v)
{
    fastsync__store(&s->state, v, memory_order_relaxed);
}

static inline bool test_event_asleep(const fastsync_event_t *e, unsigned n, unsigned long waits0)
{
    /* Each sleeper makes exactly one futex wait until the event changes (without
     * FASTSYNC_TEST_INJECT), after it made the word BUSY. */
    uint32_t v = fastsync__load(&e->state, memory_order_relaxed);
    return fastsync__ev_state(v) == FASTSYNC__EV_BUSY && test_kernel_waits() - waits0 >= n;
}

#if defined(TEST_CLOCK_ADJUST)
/* For a test linked with -Wl,--wrap=clock_gettime that defines TEST_CLOCK_ADJUST (before
 * including this file) as its function bool (clockid_t, struct timespec *): every reading
 * of the process's clocks passes through it after the C library's; it returns whether it
 * changed the reading, which sets test_clock_wrapped (so a test can tell that the wrap took:
 * where the C library redirects clock_gettime, a 64-bit time_t on a 32-bit ABI, it does not). */
static _Atomic(int) test_clock_wrapped;
int __real_clock_gettime(clockid_t clock, struct timespec *t);
int __wrap_clock_gettime(clockid_t clock, struct timespec *t);
int __wrap_clock_gettime(clockid_t clock, struct timespec *t)
{
    int r = __real_clock_gettime(clock, t);
    /* relaxed: a flag the reading thread looks at after its wait */
    if (r == 0 && TEST_CLOCK_ADJUST(clock, t)) atomic_store_explicit(&test_clock_wrapped, 1, memory_order_relaxed);
    return r;
}
#endif

#if defined(FASTSYNC_BACKEND_POSIX)
/* The POSIX backend's wait table: the nodes queued in the bucket of `word`, counted under
 * the bucket's lock (at most 1000: a ring that never comes back is a broken table). */
static inline int test_table_queued(void *word)
{
    struct fastsync__bucket *b = fastsync__bucket_of(word);
    int n = 0;
    (void)pthread_mutex_lock(&b->lock);
    for (struct fastsync__node *x = b->head.next; x != &b->head && n < 1000; x = x->next) n++;
    (void)pthread_mutex_unlock(&b->lock);
    return n;
}
#endif

static inline void test_dump_sem(const char *what, const fastsync_sem_t *s)
{
    uint64_t v = fastsync__load(&s->state, memory_order_relaxed);
    diag("%s: state 0x%016" PRIx64 " (tokens %" PRIu32 ", waiters %" PRIu32 ", shared %d)", what, v,
         fastsync__sem_tokens(v), fastsync__sem_waiters(v), fastsync__sem_shared(v));
}

/* The mutex's state field: 0 unlocked, 1 locked, 2 locked with a possible sleeper. */
static inline uint32_t test_mutex_state(const fastsync_mutex_t *m)
{
    return fastsync__mx_state(fastsync__load(&m->state, memory_order_relaxed));
}

static inline void test_dump_mutex(const char *what, const fastsync_mutex_t *m)
{
    static const char *const state[4] = { "UNLOCKED", "LOCKED", "CONTENDED", "?" };
    uint32_t v = fastsync__load(&m->state, memory_order_relaxed);
    diag("%s: word 0x%08" PRIx32 " (%s, shared %d)", what, v, state[fastsync__mx_state(v)],
         (v & FASTSYNC__MX_SHARED) != 0);
}

/* The condition variable's tickets registered and not gone yet (a return or a cancel
 * deregisters them: the word's counts and the released ones), and how many of those are
 * owed a return of 0: a signal pending in the current group, or released by a signal or
 * broadcast and not returned yet. */
static inline uint32_t test_cond_released(const fastsync_cond_t *c)
{
    return fastsync__load(&c->released, memory_order_relaxed);
}

static inline uint32_t test_cond_waiters(const fastsync_cond_t *c)
{
    return fastsync__cv_waiters(fastsync__load(&c->state, memory_order_relaxed)) + test_cond_released(c);
}

static inline uint32_t test_cond_pending(const fastsync_cond_t *c)
{
    return fastsync__cv_pending(fastsync__load(&c->state, memory_order_relaxed)) + test_cond_released(c);
}

/* What the condvar still holds: tickets and signals (0 when every ticket has gone and no
 * signal is left). */
static inline uint32_t test_cond_left(const fastsync_cond_t *c) { return test_cond_waiters(c); }

static inline uint64_t test_cond_word(const fastsync_cond_t *c)
{
    return fastsync__load(&c->state, memory_order_relaxed);
}

static inline void test_dump_cond(const char *what, const fastsync_cond_t *c)
{
    uint64_t v = fastsync__load(&c->state, memory_order_relaxed);
    uint32_t released = test_cond_released(c);
    struct fastsync__cv s = fastsync__cv_get(v);
    diag("%s: word 0x%016" PRIx64 " (group %" PRIu32 ": %" PRIu32 " without a signal, %" PRIu32
         " pending; next group %" PRIu32 "; KP %" PRIu32 ", FWD %" PRIu32 "), released %" PRIu32 ", shared %d",
         what, v, s.g, s.u, s.p, s.n, s.kp, s.fwd, released, (c->flags & FASTSYNC_SHARED) != 0);
}

static inline void test_dump_event(const char *what, const fastsync_event_t *e)
{
    static const char *const state[4] = { "SET", "FREE", "?", "BUSY" };
    uint32_t v = fastsync__load(&e->state, memory_order_relaxed);
    diag("%s: word 0x%08" PRIx32 " (%s, shared %d, generation %" PRIu32 ")", what, v,
         state[fastsync__ev_state(v)], fastsync__ev_shared(v), (v & FASTSYNC__EV_GEN) / FASTSYNC__EV_GEN_ONE);
}

/* The reader-writer lock's word (fastsync.h, "Reader-writer lock": readers, rwait, wlocked,
 * shared, writers registered, wseq). make: a word from its fields (each masked to its width). */
static inline uint64_t test_rwlock_make(uint32_t readers, bool rwait, bool wlocked, bool shared,
                                        uint32_t writers, uint32_t wseq)
{
    return ((uint64_t)readers & FASTSYNC__RW_READERS) | (rwait ? FASTSYNC__RW_RWAIT : 0) |
           (wlocked ? FASTSYNC__RW_WLOCKED : 0) | (shared ? FASTSYNC__RW_SHARED : 0) |
           (((uint64_t)writers * FASTSYNC__RW_WRITER) & FASTSYNC__RW_WRITERS) |
           (((uint64_t)wseq * FASTSYNC__RW_WSEQ) & FASTSYNC__RW_WSEQS);
}
/* the largest wseq, before it wraps to 0 */
#define TEST_RW_WSEQ_MAX ((uint32_t)(FASTSYNC__RW_WSEQS / FASTSYNC__RW_WSEQ))

static inline uint64_t test_rwlock_word(const fastsync_rwlock_t *rw)
{
    return fastsync__load(&rw->state, memory_order_relaxed);
}

/* relaxed: the test orders the store with its own synchronization (before the threads that
 * use the lock start, or while they sleep). */
static inline void test_rwlock_force_word(fastsync_rwlock_t *rw, uint64_t v)
{
    fastsync__store(&rw->state, v, memory_order_relaxed);
}

static inline uint32_t test_rwlock_readers(const fastsync_rwlock_t *rw)
{
    return fastsync__rw_readers(test_rwlock_word(rw));
}

static inline uint32_t test_rwlock_writers(const fastsync_rwlock_t *rw)
{
    return (uint32_t)((test_rwlock_word(rw) & FASTSYNC__RW_WRITERS) / FASTSYNC__RW_WRITER);
}

static inline void test_dump_rwlock(const char *what, const fastsync_rwlock_t *rw)
{
    uint64_t v = test_rwlock_word(rw);
    diag("%s: word 0x%016" PRIx64 " (readers %" PRIu32 ", rwait %d, wlocked %d, shared %d, writers %" PRIu32
         ", wseq %" PRIu32 ")",
         what, v, fastsync__rw_readers(v), (v & FASTSYNC__RW_RWAIT) != 0, (v & FASTSYNC__RW_WLOCKED) != 0,
         fastsync__rw_shared(v), (uint32_t)((v & FASTSYNC__RW_WRITERS) / FASTSYNC__RW_WRITER),
         (uint32_t)(v / FASTSYNC__RW_WSEQ));
}

/* The one-time initialisation's word (fastsync.h, "One-time initialisation": state NEW,
 * RUNNING, WAITED or DONE in bits 0..1, shared in bit 2); force: overwritten (relaxed, as
 * test_rwlock_force_word), for a test that must get a stuck once going again. */
static inline uint32_t test_once_word(const fastsync_once_t *o) { return fastsync__load(&o->state, memory_order_relaxed); }
static inline uint32_t test_once_state(const fastsync_once_t *o) { return test_once_word(o) & FASTSYNC__ONCE_STATE; }
static inline void test_once_force_word(fastsync_once_t *o, uint32_t v) { fastsync__store(&o->state, v, memory_order_relaxed); }

static inline void test_dump_once(const char *what, const fastsync_once_t *o)
{
    static const char *const state[4] = { "NEW", "RUNNING", "WAITED", "DONE" };
    uint32_t v = test_once_word(o);
    diag("%s: word 0x%08" PRIx32 " (%s, shared %d)", what, v, state[v & FASTSYNC__ONCE_STATE],
         (v & FASTSYNC__ONCE_SHARED) != 0);
}

/* The latch's word (fastsync.h, "Latch": count in bits 0..29, slept 30, shared 31, waiters
 * inside a wait in the high half); test_latch_low: its low half, the futex word; force:
 * overwritten (relaxed, as test_rwlock_force_word), for a state no sequence of calls makes
 * deterministically. */
static inline uint64_t test_latch_word(const fastsync_latch_t *l) { return fastsync__load(&l->state, memory_order_relaxed); }
static inline uint32_t test_latch_low(const fastsync_latch_t *l) { return (uint32_t)test_latch_word(l); }
static inline uint32_t test_latch_count(const fastsync_latch_t *l) { return fastsync__latch_count(test_latch_word(l)); }
static inline uint32_t test_latch_waiters(const fastsync_latch_t *l) { return fastsync__latch_waiters(test_latch_word(l)); }
static inline bool test_latch_slept(const fastsync_latch_t *l) { return (test_latch_word(l) & FASTSYNC__LATCH_SLEPT) != 0; }
static inline void test_latch_force_word(fastsync_latch_t *l, uint64_t v) { fastsync__store(&l->state, v, memory_order_relaxed); }

static inline void test_dump_latch(const char *what, const fastsync_latch_t *l)
{
    uint64_t v = test_latch_word(l);
    diag("%s: word 0x%016" PRIx64 " (count %" PRIu32 ", slept %d, waiters %" PRIu32 ", shared %d)", what, v,
         fastsync__latch_count(v), (v & FASTSYNC__LATCH_SLEPT) != 0, fastsync__latch_waiters(v),
         fastsync__latch_shared(v));
}

/* The barrier's word (fastsync.h, "Barrier"): test_barrier_word is its low half, the futex
 * word (arrived in bits 0..15, slept 16, shared 17, round 18..31); count and leaving are
 * the high half's fields. */
static inline uint64_t test_barrier_full(const fastsync_barrier_t *b) { return fastsync__load(&b->state, memory_order_relaxed); }
static inline uint32_t test_barrier_word(const fastsync_barrier_t *b) { return (uint32_t)test_barrier_full(b); }
static inline uint32_t test_barrier_arrived(const fastsync_barrier_t *b) { return fastsync__bar_arrived(test_barrier_full(b)); }
static inline uint32_t test_barrier_count(const fastsync_barrier_t *b) { return fastsync__bar_count(test_barrier_full(b)); }
static inline uint32_t test_barrier_leaving(const fastsync_barrier_t *b) { return fastsync__bar_leaving(test_barrier_full(b)); }

static inline void test_dump_barrier(const char *what, const fastsync_barrier_t *b)
{
    uint64_t v = test_barrier_full(b);
    diag("%s: word 0x%016" PRIx64 " (arrived %" PRIu32 " of %" PRIu32 ", slept %d, round %" PRIu32 ", shared %d, leaving %" PRIu32 ")",
         what, v, fastsync__bar_arrived(v), fastsync__bar_count(v), (v & FASTSYNC__BAR_SLEPT) != 0,
         (uint32_t)((v & FASTSYNC__BAR_ROUND) / FASTSYNC__BAR_ROUND_ONE), fastsync__bar_shared(v), fastsync__bar_leaving(v));
}

/* ---- time ---- */

static inline uint64_t test_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void test_sleep_ns(uint64_t ns)
{
    struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

/* The calling thread's id for /proc (Linux), 0 elsewhere. */
static inline int test_tid(void)
{
#if defined(__linux__)
    return (int)syscall(SYS_gettid);
#else
    return 0;
#endif
}

/* The state letter /proc gives thread `tid` of this process ('S': asleep in the kernel, 'R':
 * running or preempted), or -1 where /proc cannot say (not Linux, no /proc). A thread that
 * has made its one wait call and reads 'S' is asleep in it, not preempted before the
 * kernel looked at the word. */
static inline int test_thread_state(int tid)
{
#if defined(__linux__)
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' ? p[2] : -1;
#else
    (void)tid;
    return -1;
#endif
}

static inline double test_scale(void)
{
    static double scale;
    if (scale == 0) {
        const char *s = getenv("FASTSYNC_TEST_SCALE");
        scale = s && atof(s) > 0 ? atof(s) : 1.0;
    }
    return scale;
}

/* A timespec in nanoseconds, signed: deadlines in the past may be negative. */
/* A timespec from its two fields (a deadline with a bad field, say). */
static inline struct timespec test_ts(time_t sec, long nsec)
{
    struct timespec t;
    t.tv_sec = sec;
    t.tv_nsec = nsec;
    return t;
}

static inline int64_t test_ts_ns(struct timespec t) { return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec; }

/* ns (not negative) as a timespec. */
static inline struct timespec test_ns_ts(int64_t ns)
{
    struct timespec t;
    t.tv_sec = (time_t)(ns / 1000000000);
    t.tv_nsec = (long)(ns % 1000000000);
    return t;
}

/* `clock` read now, in nanoseconds. */
static inline int64_t test_clock_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return test_ts_ns(t);
}

/* The absolute deadline ns from now on `clock` (for clockwait on any clock; timedwait has
 * fastsync_deadline_in for CLOCK_MONOTONIC), tv_nsec normalized. */
static inline struct timespec test_deadline_on(clockid_t clock, uint64_t ns)
{
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec += (long)(ns % 1000000000u);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* The scale, but at least 1: for the limits that only a failing run reaches (test_limit_end,
 * the watchdog), which a sanitizer's short boxes must not shorten. */
static inline double test_scale_up(void) { return test_scale() > 1 ? test_scale() : 1; }

static inline uint64_t test_box_end(double ms) { return test_now_ns() + (uint64_t)(ms * test_scale() * 1e6); }
static inline bool test_box_open(uint64_t end) { return test_now_ns() < end; }

/* A time box is how long a stress loop runs, shortened by a scale below 1. A limit is how
 * long a test waits for a state before it reports that the state never came: a sound run
 * gets there in microseconds, a slow one (sanitizers, qemu, a loaded machine) later, and only
 * a failing run reaches the limit; so it is never shortened. */
static inline uint64_t test_limit_end(double ms) { return test_now_ns() + (uint64_t)(ms * test_scale_up() * 1e6); }

/* Whether a time-boxed loop goes on: while its box is open, and in any case until it has
 * done `min` rounds, so that a starved thread (a sanitizer, every thread on one CPU) still
 * exercises the code it is there for. A hang is the watchdog's business. */
#define TEST_MIN_ROUNDS 8
static inline bool test_box_more(uint64_t end, unsigned long done)
{
    return done < TEST_MIN_ROUNDS || test_box_open(end);
}

/* test_box_more, and in any case until `reached`: what the test's coverage check counts on
 * (tokens taken by each kind of taker, say) has happened. A box can end before the threads
 * that make it happen have run (a loaded machine; a sanitizer's slow thread creation, the box
 * having started before it); a run that never gets there is the watchdog's failure. */
static inline bool test_box_until(uint64_t end, unsigned long done, bool reached)
{
    return !reached || test_box_more(end, done);
}

/* Waits, up to test_limit_end(5000), until thread `tid` (which has made its one wait call:
 * the caller saw it counted or registered) reads asleep in /proc; where /proc cannot say,
 * sleeps settle_ns instead. Returns false only if it never read asleep. */
static inline bool test_until_asleep(int tid, uint64_t settle_ns)
{
    uint64_t end = test_limit_end(5000);
    for (;;) {
        int st = test_thread_state(tid);
        if (st < 0) {
            test_sleep_ns(settle_ns);
            return true;
        }
        if (st == 'S') return true;
        if (!test_box_open(end)) return false;
        test_sleep_ns(100000);
    }
}

/* ---- randomness ---- */

static uint64_t test_seed_value;

/* The run's seed: FASTSYNC_TEST_SEED, else from the clock; set by test_init(). */
static inline uint64_t test_seed(void) { return test_seed_value; }

/* xorshift64*: small, fast, good enough to shuffle interleavings. */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x2545f4914f6cdd1du;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1du;
}

/* A distinct non-zero stream for thread i of this run. */
static inline uint64_t test_stream(unsigned i) { return (test_seed() + 1) * 0x9e3779b97f4a7c15u ^ (i + 1) * 0xbf58476d1ce4e5b9u; }

/* Call first in main: reads the seed and prints it, so any run can be replayed. */
static inline void test_init(void)
{
    const char *s = getenv("FASTSYNC_TEST_SEED");
    test_seed_value = s ? strtoull(s, NULL, 0) : test_now_ns() ^ ((uint64_t)getpid() << 32);
    diag("seed %" PRIu64 " (replay with FASTSYNC_TEST_SEED=%" PRIu64 "), scale %.2f", test_seed_value,
         test_seed_value, test_scale());
    s = getenv("FASTSYNC_TEST_WAITV");
    if (s != NULL && strcmp(s, "fallback") == 0) {
        test_waitv_fallback = true;
        diag("wait_any: the fallback (futex_waitv answers ENOSYS)");
    }
}

/* ---- threads and CPUs ---- */

static bool test_pinned;

#if defined(_WIN32)
static inline int test_ncpu(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? (int)si.dwNumberOfProcessors : 1;
}

/* Pins the calling thread to the first CPU it may run on. */
static inline void test_pin_self(void)
{
    DWORD_PTR proc = 0, sys = 0;
    if (!GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys) || proc == 0) return;
    (void)SetThreadAffinityMask(GetCurrentThread(), proc & (~proc + 1)); /* its lowest CPU */
}

/* Every thread started afterwards, and the caller, run on one CPU (true) or anywhere. */
static inline void test_pin_all(bool pinned)
{
    test_pinned = pinned;
    DWORD_PTR proc = 0, sys = 0;
    if (pinned) test_pin_self();
    else if (GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys) && proc != 0)
        (void)SetThreadAffinityMask(GetCurrentThread(), proc);
}
#else
static inline int test_ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Pins the calling thread to the first CPU it may run on. */
static inline void test_pin_self(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set)) {
            CPU_ZERO(&set);
            CPU_SET(c, &set);
            (void)sched_setaffinity(0, sizeof set, &set);
            return;
        }
    }
}

/* Every thread started afterwards, and the caller, run on one CPU (true) or anywhere. */
static inline void test_pin_all(bool pinned)
{
    test_pinned = pinned;
    if (pinned) {
        test_pin_self();
    } else {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int c = 0; c < test_ncpu() && c < CPU_SETSIZE; c++) CPU_SET(c, &set);
        (void)sched_setaffinity(0, sizeof set, &set);
    }
}
#endif

struct test_thread_arg { void *(*fn)(void *); void *arg; };

static inline void *test_thread_main(void *p)
{
    struct test_thread_arg a = *(struct test_thread_arg *)p;
    free(p);
    if (test_pinned) test_pin_self();
    return a.fn(a.arg);
}

static inline pthread_t test_thread_start(void *(*fn)(void *), void *arg)
{
    struct test_thread_arg *a = (struct test_thread_arg *)malloc(sizeof *a);
    if (!a) bail("out of memory");
    a->fn = fn;
    a->arg = arg;
    pthread_t t;
    int r = pthread_create(&t, NULL, test_thread_main, a);
    if (r != 0) bail("pthread_create: %s", strerror(r));
    return t;
}

static inline void *test_thread_join(pthread_t t)
{
    void *ret = NULL;
    int r = pthread_join(t, &ret);
    if (r != 0) bail("pthread_join: %s", strerror(r));
    return ret;
}

/* ---- event sleepers: threads blocked in one event wait each ---- */

enum { TEST_SLEEP_WAIT, TEST_SLEEP_TIMED, TEST_SLEEP_REALTIME, TEST_SLEEP_KINDS };
enum { TEST_SLEEPER_STARTING, TEST_SLEEPER_WAITING, TEST_SLEEPER_RETURNED };

static inline const char *test_sleep_kind_name(int kind)
{
    return kind == TEST_SLEEP_WAIT ? "wait" : kind == TEST_SLEEP_TIMED ? "timedwait" : "clockwait(REALTIME)";
}

struct test_sleeper {
    fastsync_event_t *e;
    int kind;          /* TEST_SLEEP_*: wait, timedwait, clockwait on CLOCK_REALTIME */
    uint64_t ns;       /* the timed kinds: the deadline this far from the call */
    _Atomic int state; /* TEST_SLEEPER_*: progress, for the checks and the dump */
    int ret;           /* written before state becomes TEST_SLEEPER_RETURNED */
    pthread_t thread;
};

static inline void *test_sleeper_main(void *p)
{
    struct test_sleeper *s = (struct test_sleeper *)p;
    struct timespec d;
    int r = 0;
    /* relaxed: progress for the dump; the result is published by the release store below. */
    atomic_store_explicit(&s->state, TEST_SLEEPER_WAITING, memory_order_relaxed);
    if (s->kind == TEST_SLEEP_WAIT) {
        fastsync_event_wait(s->e);
    } else if (s->kind == TEST_SLEEP_TIMED) {
        d = fastsync_deadline_in(s->ns);
        r = fastsync_event_timedwait(s->e, &d);
    } else {
        d = test_deadline_on(CLOCK_REALTIME, s->ns);
        r = fastsync_event_clockwait(s->e, CLOCK_REALTIME, &d);
    }
    s->ret = r;
    /* release: pairs with the acquire load in test_sleepers_returned (ret is read after it). */
    atomic_store_explicit(&s->state, TEST_SLEEPER_RETURNED, memory_order_release);
    return NULL;
}

/* Starts a thread that makes one wait of `kind` on e (deadline ns ahead for the timed kinds). */
static inline void test_sleeper_start(struct test_sleeper *s, fastsync_event_t *e, int kind, uint64_t ns)
{
    s->e = e;
    s->kind = kind;
    s->ns = ns;
    s->ret = -1;
    /* relaxed: the thread is not started yet; thread creation publishes it. */
    atomic_store_explicit(&s->state, TEST_SLEEPER_STARTING, memory_order_relaxed);
    s->thread = test_thread_start(test_sleeper_main, s);
}

/* How many of the n sleepers have returned from their wait. */
static inline int test_sleepers_returned(struct test_sleeper *s, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        /* acquire: pairs with the release store in test_sleeper_main. */
        k += atomic_load_explicit(&s[i].state, memory_order_acquire) == TEST_SLEEPER_RETURNED;
    return k;
}

/* Joins the n sleepers; how many of their waits returned 0. */
static inline int test_sleepers_join(struct test_sleeper *s, int n)
{
    int zero = 0;
    for (int i = 0; i < n; i++) {
        test_thread_join(s[i].thread);
        zero += s[i].ret == 0;
    }
    return zero;
}

/* For a watchdog dump: each sleeper's kind and progress. */
static inline void test_sleepers_dump(struct test_sleeper *s, int n)
{
    static const char *const state[] = { "starting", "inside the wait", "returned" };
    for (int i = 0; i < n; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("  sleeper %d (%s): %s", i, test_sleep_kind_name(s[i].kind),
             state[atomic_load_explicit(&s[i].state, memory_order_relaxed)]);
}

/* ---- reader-writer lockers: threads that take a reader-writer lock once ---- */

enum {
    TEST_RW_RDLOCK,      /* rdlock */
    TEST_RW_TIMEDRDLOCK, /* timedrdlock, the deadline ns ahead on CLOCK_MONOTONIC */
    TEST_RW_CLOCKRDLOCK, /* clockrdlock, the deadline ns ahead on CLOCK_REALTIME */
    TEST_RW_WRLOCK,      /* and the same three for the write lock */
    TEST_RW_TIMEDWRLOCK,
    TEST_RW_CLOCKWRLOCK,
    TEST_RW_KINDS
};
enum { TEST_RWL_STARTING, TEST_RWL_LOCKING, TEST_RWL_HOLDING, TEST_RWL_DONE };

static inline bool test_rw_kind_writes(int kind) { return kind >= TEST_RW_WRLOCK; }
static inline const char *test_rw_kind_name(int kind)
{
    static const char *const name[TEST_RW_KINDS] = { "rdlock", "timedrdlock", "clockrdlock(REALTIME)",
                                                     "wrlock", "timedwrlock", "clockwrlock(REALTIME)" };
    return name[kind];
}

struct test_rwlocker {
    fastsync_rwlock_t *rw;
    int kind;              /* TEST_RW_* */
    uint64_t ns;           /* the timed kinds: the deadline this far from the call */
    bool hold;             /* having the lock: hold it until test_rwlocker_release, else unlock */
    _Atomic int tid;       /* test_tid(), 0 before it runs */
    _Atomic int state;     /* TEST_RWL_*: progress, for the checks and the dump */
    _Atomic bool release;  /* set by test_rwlocker_release */
    int ret, unlock_ret;   /* written before state becomes HOLDING or DONE, and DONE */
    pthread_t thread;
};

/* The locker this thread runs, if it is one (for test_rwlocker_hold_window). */
static _Thread_local struct test_rwlocker *test_rwlocker_me;

static inline void *test_rwlocker_main(void *p)
{
    struct test_rwlocker *l = (struct test_rwlocker *)p;
    test_rwlocker_me = l;
    /* relaxed: an id, published by the release store of LOCKING after it (which pairs with
     * the acquire load in test_rwlocker_state). */
    atomic_store_explicit(&l->tid, test_tid(), memory_order_relaxed);
    atomic_store_explicit(&l->state, TEST_RWL_LOCKING, memory_order_release);
    struct timespec d;
    int r;
    switch (l->kind) {
    case TEST_RW_RDLOCK: r = fastsync_rwlock_rdlock(l->rw); break;
    case TEST_RW_WRLOCK: r = fastsync_rwlock_wrlock(l->rw); break;
    case TEST_RW_TIMEDRDLOCK:
    case TEST_RW_TIMEDWRLOCK:
        d = fastsync_deadline_in(l->ns);
        r = l->kind == TEST_RW_TIMEDRDLOCK ? fastsync_rwlock_timedrdlock(l->rw, &d)
                                           : fastsync_rwlock_timedwrlock(l->rw, &d);
        break;
    default:
        d = test_deadline_on(CLOCK_REALTIME, l->ns);
        r = l->kind == TEST_RW_CLOCKRDLOCK ? fastsync_rwlock_clockrdlock(l->rw, CLOCK_REALTIME, &d)
                                           : fastsync_rwlock_clockwrlock(l->rw, CLOCK_REALTIME, &d);
        break;
    }
    l->ret = r;
    if (r == 0 && l->hold) {
        /* release: pairs with the acquire load in test_rwlocker_state (ret is read after it). */
        atomic_store_explicit(&l->state, TEST_RWL_HOLDING, memory_order_release);
        /* acquire: pairs with the release store in test_rwlocker_release. (A sleep, not a
         * wait on a fastsync object: the futex calls the tests count are the lock's alone.) */
        while (!atomic_load_explicit(&l->release, memory_order_acquire)) test_sleep_ns(100000);
    }
    if (r == 0)
        l->unlock_ret = test_rw_kind_writes(l->kind) ? fastsync_rwlock_wrunlock(l->rw)
                                                     : fastsync_rwlock_rdunlock(l->rw);
    /* release: as above (ret and unlock_ret). */
    atomic_store_explicit(&l->state, TEST_RWL_DONE, memory_order_release);
    return NULL;
}

/* Starts a thread that takes rw once by `kind` (a deadline ns ahead for the timed kinds);
 * with `hold`, it keeps what it took until test_rwlocker_release, else unlocks at once. */
static inline void test_rwlocker_start(struct test_rwlocker *l, fastsync_rwlock_t *rw, int kind, uint64_t ns,
                                       bool hold)
{
    l->rw = rw;
    l->kind = kind;
    l->ns = ns;
    l->hold = hold;
    l->ret = l->unlock_ret = -1;
    /* relaxed: the thread is not started yet; thread creation publishes them. */
    atomic_store_explicit(&l->tid, 0, memory_order_relaxed);
    atomic_store_explicit(&l->state, TEST_RWL_STARTING, memory_order_relaxed);
    atomic_store_explicit(&l->release, false, memory_order_relaxed);
    l->thread = test_thread_start(test_rwlocker_main, l);
}

static inline int test_rwlocker_state(struct test_rwlocker *l)
{
    /* acquire: pairs with the release stores in test_rwlocker_main. */
    return atomic_load_explicit(&l->state, memory_order_acquire);
}

/* Waits up to test_limit_end(ms) until l has reached `state` (or gone past it). */
static inline bool test_rwlocker_until(struct test_rwlocker *l, int state, double ms)
{
    uint64_t end = test_limit_end(ms);
    while (test_rwlocker_state(l) < state && test_box_open(end)) test_sleep_ns(100000);
    return test_rwlocker_state(l) >= state;
}

/* Whether l, inside its lock call, reads asleep in the kernel (test_until_asleep; without
 * /proc, after a settle of settle_ns). */
static inline bool test_rwlocker_asleep(struct test_rwlocker *l, uint64_t settle_ns)
{
    uint64_t end = test_limit_end(5000);
    /* (state LOCKING comes after tid: test_tid() is 0 where there is no /proc) */
    while (test_rwlocker_state(l) < TEST_RWL_LOCKING && test_box_open(end)) test_sleep_ns(100000);
    /* relaxed: an id. */
    return test_rwlocker_state(l) == TEST_RWL_LOCKING &&
           test_until_asleep(atomic_load_explicit(&l->tid, memory_order_relaxed), settle_ns) &&
           test_rwlocker_state(l) == TEST_RWL_LOCKING;
}

static inline void test_rwlocker_release(struct test_rwlocker *l)
{
    /* release: pairs with the acquire load in test_rwlocker_main. */
    atomic_store_explicit(&l->release, true, memory_order_release);
}

/* Releases l (if it holds) and joins it; the lock call's result. */
static inline int test_rwlocker_join(struct test_rwlocker *l)
{
    test_rwlocker_release(l);
    test_thread_join(l->thread);
    return l->ret;
}

/* A locker held after its futex waits: with test_after_futex_wait = test_rwlocker_hold_window,
 * once test_rwlocker_hold(l) (before l starts, so that no wait of l's escapes it), each futex
 * wait of l that returns keeps l in the hook until test_rwlocker_unhold(): what l does next
 * (a timed-out writer's give-up, say) then waits until the test has set the scene. */
static _Atomic(struct test_rwlocker *) test_rwlocker_held;

static inline void test_rwlocker_hold_window(void)
{
    struct test_rwlocker *l = test_rwlocker_me;
    /* seq_cst (default), every access of test_rwlocker_held: a hook; nothing is published
     * through it. */
    while (l != NULL && atomic_load(&test_rwlocker_held) == l) test_sleep_ns(100000);
}

static inline void test_rwlocker_hold(struct test_rwlocker *l) { atomic_store(&test_rwlocker_held, l); }
static inline void test_rwlocker_unhold(void) { atomic_store(&test_rwlocker_held, NULL); }

static inline void test_rwlockers_dump(struct test_rwlocker *l, int n)
{
    static const char *const state[] = { "starting", "inside its lock call", "holding", "done" };
    for (int i = 0; i < n; i++) {
        /* relaxed: a diagnostic snapshot. */
        int tid = atomic_load_explicit(&l[i].tid, memory_order_relaxed), st = tid ? test_thread_state(tid) : -1;
        diag("  locker %d (%s, thread %d, %c): %s", i, test_rw_kind_name(l[i].kind), tid, st > 0 ? st : '?',
             state[atomic_load_explicit(&l[i].state, memory_order_relaxed)]);
    }
}

/* ---- cancellable waiters: one thread, one wait, with the cancellation state chosen ---- */

enum { TEST_CW_START, TEST_CW_PENDING, TEST_CW_WAITING, TEST_CW_RETURNED };

struct test_cwaiter {
    int (*wait)(int kind); /* the wait to make; its result is kept in ret */
    int kind;              /* passed to it */
    bool pending;          /* the cancel arrives before the wait (see test_cwaiter_cancel_pending) */
    bool disabled;         /* cancellation disabled during the wait, enabled and tested after */
    _Atomic(int) phase;    /* TEST_CW_* */
    int ret;
    pthread_t thread;
};

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(TEST_ASAN)
#include <sanitizer/asan_interface.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif

/* Under AddressSanitizer: the C library unwinds a cancelled thread without telling ASan, so
 * the redzones of the frames it drops stay poisoned, and the thread's exit trips over them
 * (google/sanitizers issue 1399: a false stack-buffer-underflow in sigaltstack). The
 * cancelled thread's outermost cleanup clears the shadow of its whole stack: every
 * instrumented frame on it is being dropped. */
static inline void test_cwaiter_unpoison(void *unused)
{
    (void)unused;
#if defined(TEST_ASAN)
    pthread_attr_t a;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    if (pthread_attr_getstack(&a, &lo, &size) == 0) __asan_unpoison_memory_region(lo, size);
    pthread_attr_destroy(&a);
#endif
}

static inline void *test_cwaiter_main(void *p)
{
    struct test_cwaiter *w = (struct test_cwaiter *)p;
    int old;
    pthread_cleanup_push(test_cwaiter_unpoison, NULL);
    if (w->pending || w->disabled) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    if (w->pending) {
        /* relaxed (phase, everywhere): a poll; what the tests conclude is ordered by
         * pthread_cancel / pthread_join and the primitive under test. */
        atomic_store_explicit(&w->phase, TEST_CW_PENDING, memory_order_relaxed);
        while (atomic_load_explicit(&w->phase, memory_order_relaxed) == TEST_CW_PENDING) test_sleep_ns(100000);
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old); /* not a cancellation point */
    }
    atomic_store_explicit(&w->phase, TEST_CW_WAITING, memory_order_relaxed);
    w->ret = w->wait(w->kind);
    atomic_store_explicit(&w->phase, TEST_CW_RETURNED, memory_order_relaxed);
    if (w->disabled) {
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
        pthread_testcancel();
    }
    pthread_cleanup_pop(0);
    return NULL;
}

/* Starts a thread that makes wait(kind): with cancellation disabled during it (disabled),
 * and/or with a cancel made pending before it (pending: the thread waits for
 * test_cwaiter_cancel_pending, then enables cancellation and waits). */
static inline void test_cwaiter_start(struct test_cwaiter *w, int (*wait)(int), int kind, bool pending,
                                      bool disabled)
{
    w->wait = wait;
    w->kind = kind;
    w->pending = pending;
    w->disabled = disabled;
    w->ret = -1;
    /* relaxed: the thread is not started yet; thread creation publishes it. */
    atomic_store_explicit(&w->phase, TEST_CW_START, memory_order_relaxed);
    w->thread = test_thread_start(test_cwaiter_main, w);
}

/* For a pending waiter: cancels it while its cancellation is disabled, then lets it wait. */
static inline int test_cwaiter_cancel_pending(struct test_cwaiter *w)
{
    while (atomic_load_explicit(&w->phase, memory_order_relaxed) != TEST_CW_PENDING) test_sleep_ns(100000);
    int r = pthread_cancel(w->thread);
    atomic_store_explicit(&w->phase, TEST_CW_START, memory_order_relaxed);
    return r;
}

static inline int test_cwaiter_phase(struct test_cwaiter *w)
{
    return atomic_load_explicit(&w->phase, memory_order_relaxed);
}

/* Joins w, which must have ended cancelled inside its wait (two test points). */
static inline void test_cwaiter_join_cancelled(struct test_cwaiter *w, const char *what)
{
    ok(test_thread_join(w->thread) == PTHREAD_CANCELED, "%s: the thread ended cancelled", what);
    is_int(test_cwaiter_phase(w), TEST_CW_WAITING, "%s: ... inside the wait", what);
}

/* The claim window: a cancel that acts inside a registered waiter after its kernel wait
 * returned, before it looks at its word (a wake it absorbed must then be passed on). Set
 * test_after_futex_wait = test_claim_window; test_claim_arm() before the wake; then
 * test_claim_cancel() waits for the first thread back from a kernel wait to claim the
 * window, cancels it and returns its thread. The claimer waits with sched_yield, not a sleep:
 * its pthread_testcancel is its only cancellation point (a cancel sent during a nanosleep
 * acts through a signal, which qemu-i386 has been seen to deliver after the sleep returned;
 * and ThreadSanitizer loses sight of a thread cancelled inside its nanosleep). */
static _Atomic(int) test_claim_armed;          /* 1: the next thread back claims */
static _Atomic(pthread_t *) test_claimed;      /* the claimer's thread */
static _Atomic(int) test_claimed_cancelled;    /* the cancel has been sent */

static inline void test_claim_window(void)
{
    int one = 1;
    /* acq_rel: pairs with test_claim_arm's release store and test_claim_cancel's load. */
    if (!atomic_compare_exchange_strong_explicit(&test_claim_armed, &one, 0, memory_order_acq_rel,
                                                 memory_order_relaxed))
        return;
    static pthread_t self;
    self = pthread_self();
    /* release: pairs with test_claim_cancel's acquire load; it reads `self` after it. */
    atomic_store_explicit(&test_claimed, &self, memory_order_release);
    while (!atomic_load_explicit(&test_claimed_cancelled, memory_order_acquire)) sched_yield();
    pthread_testcancel();
}

static inline void test_claim_arm(void)
{
    atomic_store_explicit(&test_claimed, NULL, memory_order_relaxed);
    atomic_store_explicit(&test_claimed_cancelled, 0, memory_order_relaxed);
    /* release: pairs with the claimer's acq_rel CAS. */
    atomic_store_explicit(&test_claim_armed, 1, memory_order_release);
}

static inline pthread_t test_claim_cancel(const char *what)
{
    pthread_t *t;
    /* acquire: pairs with the claimer's release store. */
    while ((t = atomic_load_explicit(&test_claimed, memory_order_acquire)) == NULL) test_sleep_ns(100000);
    pthread_t claimer = *t;
    is_int(pthread_cancel(claimer), 0, "%s: pthread_cancel", what);
    atomic_store_explicit(&test_claimed_cancelled, 1, memory_order_release);
    return claimer;
}

/* ---- watchdog: pthread primitives only, never the code under test ---- */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on TEST_WD_CLOCK, set up by test_watchdog_start */
    pthread_t thread;
    bool running, stop, cond_ready;
    void (*dump)(void *);
    void *arg;
} test_wd = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* winpthreads' condition variables wait on CLOCK_REALTIME only */
#if defined(_WIN32)
#define TEST_WD_CLOCK CLOCK_REALTIME
#else
#define TEST_WD_CLOCK CLOCK_MONOTONIC
#endif

static inline double test_watchdog_seconds(void) { return 20.0 * test_scale_up(); }

static inline void *test_watchdog_main(void *unused)
{
    (void)unused;
    struct timespec end;
    clock_gettime(TEST_WD_CLOCK, &end);
    double secs = test_watchdog_seconds();
    end.tv_sec += (time_t)secs;
    pthread_mutex_lock(&test_wd.lock);
    while (!test_wd.stop) {
        if (pthread_cond_timedwait(&test_wd.cond, &test_wd.lock, &end) == ETIMEDOUT && !test_wd.stop) {
            diag("watchdog: no end after %.0f s: a lost wakeup or a hang; state follows", secs);
            printf("not ok %d - watchdog expired\n", tap_next());
            fflush(stdout);
            /* A dump can block on what hangs (a lock the stuck thread holds): SIGALRM's
             * default action then ends the process, rather than the runner's timeout. */
#if !defined(_WIN32) /* (Windows has no alarm: there the dump is not bounded) */
            alarm(10);
#endif
            if (test_wd.dump) test_wd.dump(test_wd.arg);
            bail("watchdog expired (seed %" PRIu64 ")", test_seed());
        }
    }
    pthread_mutex_unlock(&test_wd.lock);
    return NULL;
}

static inline void test_watchdog_start(void (*dump)(void *), void *arg)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, TEST_WD_CLOCK);
    if (test_wd.cond_ready) pthread_cond_destroy(&test_wd.cond);
    test_wd.cond_ready = true;
    pthread_cond_init(&test_wd.cond, &ca);
    pthread_condattr_destroy(&ca);
    test_wd.dump = dump;
    test_wd.arg = arg;
    test_wd.stop = false;
    int r = pthread_create(&test_wd.thread, NULL, test_watchdog_main, NULL);
    if (r != 0) bail("watchdog: pthread_create: %s", strerror(r));
    test_wd.running = true;
}

static inline void test_watchdog_stop(void)
{
    if (!test_wd.running) return;
    pthread_mutex_lock(&test_wd.lock);
    test_wd.stop = true;
    pthread_cond_signal(&test_wd.cond);
    pthread_mutex_unlock(&test_wd.lock);
    pthread_join(test_wd.thread, NULL);
    test_wd.running = false;
}


/* ---- a child process (tests of FASTSYNC_SHARED objects across fork; not on Windows) ---- */
#if !defined(_WIN32)
#include <signal.h>
#include <sys/wait.h>

static pid_t test_child = -1; /* the child a dump should kill, -1: none */

/* Forks; the child runs fn and exits with its result (0 = all good). The child arms alarm()
 * so that it never outlives a hung parent for long. */
static inline pid_t test_spawn(int (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) bail("fork: %s", strerror(errno));
    if (pid == 0) {
        alarm((unsigned)test_watchdog_seconds() + 5); /* SIGALRM kills a child left hanging */
        _exit(fn());
    }
    test_child = pid;
    return pid;
}

/* Waits for the child; returns its exit code, or 100 + signal, or -1. */
static inline int test_reap(pid_t pid)
{
    int status;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
    test_child = -1;
    if (r != pid) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 100 + WTERMSIG(status);
    return -1;
}

/* For a dump: kills the child, if there is one. */
static inline void test_kill_child(void)
{
    if (test_child > 0) {
        diag("killing child %d", (int)test_child);
        kill(test_child, SIGKILL);
    }
}
#endif

/* ---- an object alone at the end of its own page (the destroy-after tests; not on Windows) ---- */
#if !defined(_WIN32)
#include <signal.h>
#include <sys/mman.h>

/* The object is put at the very end of its own mmap'd page, so that a touch after the page is
 * unmapped is a SIGSEGV (the byte after it most likely unmapped too). Under AddressSanitizer
 * or ThreadSanitizer it is a malloc'd block instead: a touch after free is their report (under
 * TSan the free is a write that an unordered touch races with, whichever came first). */
#if defined(TEST_ASAN) || defined(TEST_TSAN)
#define TEST_PAGE_MALLOC 1
#else
#define TEST_PAGE_MALLOC 0
#endif
/* Where the objects live, for a diag line. */
#if defined(TEST_ASAN)
#define TEST_PAGE_WHERE "malloc'd blocks (AddressSanitizer)"
#elif defined(TEST_TSAN)
#define TEST_PAGE_WHERE "malloc'd blocks (ThreadSanitizer)"
#else
#define TEST_PAGE_WHERE "their own mmap'd pages"
#endif

static inline size_t test_page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096;
}

/* size bytes at offset `at` of a fresh page of their own, mapped MAP_SHARED if `shared`, else
 * MAP_PRIVATE; under TEST_PAGE_MALLOC a malloc'd block (at and shared unused). Bails on
 * failure. `at` keeps the object's alignment when it is a multiple of that. */
static inline void *test_page_alloc_at(size_t size, size_t at, bool shared)
{
#if TEST_PAGE_MALLOC
    (void)at;
    (void)shared;
    void *p = malloc(size);
    if (!p) bail("malloc: out of memory");
    return p;
#else
    size_t page = test_page_size();
    if (size > page || at > page - size)
        bail("test_page_alloc: %zu bytes at %zu overrun a page of %zu", size, at, page);
    void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) bail("mmap: %s", strerror(errno));
    return (char *)p + at;
#endif
}

/* The same at the very end of the page. */
static inline void *test_page_alloc(size_t size, bool shared)
{
    return test_page_alloc_at(size, TEST_PAGE_MALLOC ? 0 : test_page_size() - size, shared);
}

/* Unmaps the page that holds p (from test_page_alloc or _at), or frees the block. */
static inline void test_page_free(void *p)
{
#if TEST_PAGE_MALLOC
    free(p);
#else
    size_t page = test_page_size();
    void *base = (void *)((uintptr_t)p & ~(uintptr_t)(page - 1));
    if (munmap(base, page) != 0) bail("munmap: %s", strerror(errno));
#endif
}

/* Installs fn (SA_SIGINFO) for SIGSEGV and SIGBUS: a test's report of a touch of an unmapped
 * object (fn then restores the default action and raises the signal again). */
static inline void test_page_on_fault(void (*fn)(int, siginfo_t *, void *))
{
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = fn;
    act.sa_flags = SA_SIGINFO;
    sigemptyset(&act.sa_mask);
    sigaction(SIGSEGV, &act, NULL);
    sigaction(SIGBUS, &act, NULL);
}
#endif

/* ---- a signal storm: SIGUSR1 sent to one thread in a loop (POSIX signals; not on Windows) ---- */
#if !defined(_WIN32)
#include <signal.h>

struct test_storm {
    pthread_t target;            /* the thread the signals are sent to */
    pthread_t thread;            /* the sender */
    _Atomic(bool) stop;
    _Atomic(unsigned long) sent; /* since test_storm_init */
};

static _Atomic(unsigned long) test_storm_caught_n; /* SIGUSR1 handled, in any thread */

/* A test's own work in the handler, after the count, when set (before test_storm_init): it
 * may call only async-signal-safe functions; errno is restored around it. */
static void (*test_storm_action)(void);

static inline void test_storm_on_usr1(int sig)
{
    (void)sig;
    /* relaxed: a count, read after the threads are joined. (Lock-free: signal-safe.) */
    atomic_fetch_add_explicit(&test_storm_caught_n, 1, memory_order_relaxed);
    if (test_storm_action) {
        int saved = errno;
        test_storm_action();
        errno = saved;
    }
}

/* Installs the SIGUSR1 handler that counts (with SA_RESTART or without) and resets s: nothing
 * sent, not stopped. Call it before the threads that read s start. */
static inline void test_storm_init(struct test_storm *s, bool restart)
{
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = test_storm_on_usr1;
    sigemptyset(&act.sa_mask);
    act.sa_flags = restart ? SA_RESTART : 0;
    if (sigaction(SIGUSR1, &act, NULL) != 0) bail("sigaction: %s", strerror(errno));
    /* relaxed: before the threads start */
    atomic_store_explicit(&s->stop, false, memory_order_relaxed);
    atomic_store_explicit(&s->sent, 0, memory_order_relaxed);
}

static inline void *test_storm_main(void *p)
{
    struct test_storm *s = (struct test_storm *)p;
    uint64_t rng = test_stream(77);
    unsigned long n = 0;
    /* relaxed: only ends the loop; test_storm_stop joins this thread before anything depends
     * on it. */
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        int r = pthread_kill(s->target, SIGUSR1);
        if (r != 0) bail("pthread_kill: %s", strerror(r));
        atomic_store_explicit(&s->sent, ++n, memory_order_relaxed);
        uint64_t x = test_rand(&rng) % 8;
        if (x == 0) test_sleep_ns(50000);
        else if (x < 4) sched_yield();
    }
    return NULL;
}

/* Starts the thread that sends SIGUSR1 to target until test_storm_stop, with a random yield
 * or a 50 us sleep between some of the signals. */
static inline void test_storm_start(struct test_storm *s, pthread_t target)
{
    s->target = target;
    s->thread = test_thread_start(test_storm_main, s);
}

/* Stops the sender and joins it: no signal is sent after this returns. */
static inline void test_storm_stop(struct test_storm *s)
{
    /* relaxed: only ends the sender's loop; the join orders the rest. */
    atomic_store_explicit(&s->stop, true, memory_order_relaxed);
    test_thread_join(s->thread);
}

/* relaxed (both): counts, polled, or read after the joins. */
static inline unsigned long test_storm_sent(struct test_storm *s)
{
    return atomic_load_explicit(&s->sent, memory_order_relaxed);
}

static inline unsigned long test_storm_caught(void)
{
    return atomic_load_explicit(&test_storm_caught_n, memory_order_relaxed);
}

/* For a dump: how many signals s has sent and how many were handled. */
static inline void test_storm_dump(struct test_storm *s)
{
    diag("signals sent %lu, caught %lu", test_storm_sent(s), test_storm_caught());
}
#endif

/* ---- a scripted futex seam ----
 * test_script_install() makes test_wait_override/_wake_override a script, for a test that
 * forces every step of a protocol (mutex_starving, rwlock_starving) with no kernel call: a
 * wait records its call (the word's address, the value, whether it had a deadline) and, if
 * the word holds the value, returns only once the test has released it with
 * test_script_release(i, answer) (0: woken; ETIMEDOUT), and no sooner than
 * test_script.min_ns after it began (so that a sleeper's clock has passed a bound by then);
 * if not, at once with 0 (as EAGAIN). Each wait is released on its own. A wake records its address and count. Waits and wakes
 * are numbered from 0 in the order they begin; the test's own bound, TEST_SCRIPT_MAX of each:
 * a wait past it returns EINVAL (the counts then tell). */
enum { TEST_SCRIPT_MAX = 8 };
static struct test_script {
    uint64_t min_ns;                           /* set before the threads start */
    _Atomic(int) begun;                        /* waits begun */
    _Atomic(int) waits;                        /* waits begun and recorded */
    _Atomic(int) released;                     /* waits released */
    _Atomic(bool) go[TEST_SCRIPT_MAX];         /* each may return */
    _Atomic(int) answer[TEST_SCRIPT_MAX];      /* what each returns */
    _Atomic(uint32_t) expected[TEST_SCRIPT_MAX];
    _Atomic(uintptr_t) word[TEST_SCRIPT_MAX];
    _Atomic(bool) timed[TEST_SCRIPT_MAX];      /* it had a deadline */
    _Atomic(int) wakes;                        /* wakes made */
    _Atomic(int) wake_n[TEST_SCRIPT_MAX];      /* the count each asked for */
    _Atomic(uintptr_t) wake_word[TEST_SCRIPT_MAX];
} test_script;
/* (Every atomic of the script is seq_cst, the default: flags of a test.) */

static inline int test_script_wait(void *w, uint32_t expected, int shared, clockid_t clock,
                                   const struct timespec *abstime)
{
    (void)shared, (void)clock;
    uint64_t t0 = test_now_ns();
    int i = atomic_fetch_add(&test_script.begun, 1);
    if (i >= TEST_SCRIPT_MAX) return EINVAL;
    atomic_store(&test_script.expected[i], expected);
    atomic_store(&test_script.word[i], (uintptr_t)w);
    atomic_store(&test_script.timed[i], abstime != NULL);
    atomic_fetch_add(&test_script.waits, 1);
    if (*(_Atomic(uint32_t) *)w != expected) return 0; /* the word moved: as EAGAIN */
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) &&
           (!atomic_load(&test_script.go[i]) || test_now_ns() - t0 < test_script.min_ns))
        test_sleep_ns(100000);
    return atomic_load(&test_script.answer[i]);
}

static inline void test_script_wake(void *w, int n, int shared)
{
    (void)shared;
    int i = atomic_fetch_add(&test_script.wakes, 1);
    if (i >= TEST_SCRIPT_MAX) return;
    atomic_store(&test_script.wake_word[i], (uintptr_t)w);
    atomic_store(&test_script.wake_n[i], n);
}

/* Wipes the record (before each case, with no thread inside the seam) and installs the
 * script; min_ns as above. */
static inline void test_script_install(uint64_t min_ns)
{
    memset((void *)&test_script, 0, sizeof test_script);
    test_script.min_ns = min_ns;
    test_wait_override = test_script_wait;
    test_wake_override = test_script_wake;
}

/* Lets wait i return `answer` (each wait is released on its own). */
static inline void test_script_release(int i, int answer)
{
    atomic_store(&test_script.answer[i], answer);
    atomic_store(&test_script.go[i], true);
    atomic_fetch_add(&test_script.released, 1);
}

/* Lets every wait begun and not yet released return 0. */
static inline void test_script_release_all(void)
{
    int n = atomic_load(&test_script.waits);
    for (int i = 0; i < n && i < TEST_SCRIPT_MAX; i++)
        if (!atomic_load(&test_script.go[i])) test_script_release(i, 0);
}

/* Until n waits have begun (the last one recorded); whether exactly n have. */
static inline bool test_script_until_waits(int n)
{
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && atomic_load(&test_script.waits) < n) test_sleep_ns(100000);
    return atomic_load(&test_script.waits) == n;
}

/* Whether exactly n wakes have been made, the last on `word` with count `count`. */
static inline bool test_script_woke(int n, const void *word, int count)
{
    return atomic_load(&test_script.wakes) == n &&
           atomic_load(&test_script.wake_word[n - 1]) == (uintptr_t)word &&
           atomic_load(&test_script.wake_n[n - 1]) == count;
}

static inline void test_script_dump(void)
{
    diag("script: %d waits begun, %d released, %d wakes", atomic_load(&test_script.waits),
         atomic_load(&test_script.released), atomic_load(&test_script.wakes));
}

#endif
