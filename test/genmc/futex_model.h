/* SPDX-License-Identifier: MIT */
/* test/genmc/futex_model.h - Linux futex wait and wake as the GenMC model checker can run
 * them, with POSIX cancellation of a sleeper, for the harnesses in this folder.
 *
 * GenMC explores every execution of a small C program under the C11 memory model; it cannot
 * make system calls, so the harnesses route fastsync.h's futex layer here through
 * FASTSYNC_FUTEX_WAIT / FASTSYNC_FUTEX_WAKE / FASTSYNC_FUTEX_WAITV. What the kernel does is
 * kept:
 *   - wait(word, val): under one lock (the kernel's hash-bucket lock) compare the word with
 *     val and, if equal, queue; then sleep until a wake picks this sleeper. Full fences around
 *     both calls (the kernel's barriers). A sleeper nobody wakes spins for ever on its own
 *     flag: GenMC turns that into a blocked execution, which --check-liveness reports as a
 *     liveness violation (a lost wakeup).
 *   - wake(word, n): under the lock, wakes up to n sleepers queued on word, first queued first
 *     (FIFO, as Linux for threads of one priority), or with MODEL_WAKE_NEWEST the newest
 *     first (no order is promised: the condition variable must not need FIFO).
 *   - waitv(words, vals, n) (futex_waitv, FASTSYNC_FUTEX_WAITV): under the same lock compare
 *     every word with its value (one differs: return at once), else queue one sleeper on all
 *     n words and sleep until a wake of ANY of them picks it: a wake(word, k) counts such a
 *     sleeper as one sleeper of each of its words, and taking it off the queue takes it off
 *     all of them (the kernel's futex_waitv: one task, woken once); cancellation and
 *     deadlines as for wait. Up to MODEL_MAX_WORDS words (2 unless the harness defines more).
 *   - cancellation (model_cancel_target: the one thread that can be cancelled; model_cancel():
 *     the cancel arrives): a pending cancel acts as the target is about to sleep; a cancel
 *     during the sleep takes the sleeper off the queue under the lock (a wake either picked it
 *     before, or does not see it), as a signal interrupting a futex wait does; a sleeper woken
 *     before the cancel may still be cancelled before it runs on. The wait then returns
 *     MODEL_CANCELLED and the harness runs the cleanup handler and ends the thread.
 *   - timeouts (model_time_out(): the deadline of every wait that has one passes, at a moment
 *     GenMC chooses): a wait with a deadline that finds the word equal once the deadline has
 *     passed returns ETIMEDOUT at once, as the kernel does for a past deadline; one asleep
 *     when it passes is taken off the queue under the lock, and returns ETIMEDOUT unless a
 *     wake picked it first (then 0: the kernel reports the wake).
 * Not modelled: EINTR and spurious wakeups (the fault-injection suite tests those).
 *
 * GenMC v0.11 needs two workarounds: an effectful write after the sleeper's spin (here: else
 * a retry loop around the wait is taken for a side-effect-free spin and a woken execution is
 * cut), and a write on every failed compare-exchange (cas_progress.h). Define MODEL_WORD64
 * when the futex word is the low half of a 64-bit atomic (the semaphore's): GenMC forbids
 * mixed-size accesses, so the model reads the whole word; a harness with words of both sizes
 * names its 64-bit one in model_wide_word instead. A harness that waits on the high half of
 * a 64-bit word too (the reader-writer lock's writers) names that word in model_wide_word:
 * a wait on either half then reads the whole word and compares that half's 32 bits.
 * Little-endian targets only (the low half is at the word's address, the high half 4 bytes
 * after it). */
#ifndef FASTSYNC_TEST_GENMC_FUTEX_MODEL_H
#define FASTSYNC_TEST_GENMC_FUTEX_MODEL_H

#include <genmc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <assert.h>
#include <errno.h>
#include "cas_progress.h"

/* GenMC runs no clock_gettime: the hand-offs of the mutex and the reader-writer lock
 * (fastsync.h's FASTSYNC_MUTEX_HANDOFF_NS and FASTSYNC_RWLOCK_HANDOFF_NS, a time from a
 * sleeper's first sleep) are off, but where a harness asks for them with 0 (every sleeper
 * that wakes into a lock it may not take claims the next turn; mutex_handoff_genmc.c,
 * rwlock_handoff_genmc.c). */
#ifndef FASTSYNC_MUTEX_HANDOFF_NS
#define FASTSYNC_MUTEX_HANDOFF_NS -1
#endif
#ifndef FASTSYNC_RWLOCK_HANDOFF_NS
#define FASTSYNC_RWLOCK_HANDOFF_NS -1
#endif

/* GenMC's <unistd.h> has no syscall(); fastsync.h's own calls of it are never reached here. */
long syscall(long number, ...);

/* ---- the wait queue ---- */
#ifndef MODEL_MAX_SLEEPS
#define MODEL_MAX_SLEEPS 6 /* sleeps per execution */
#endif

enum { MODEL_WOKEN, MODEL_DIFFERED, MODEL_CANCELLED, MODEL_TIMEDOUT };

#ifndef MODEL_MAX_WORDS
#define MODEL_MAX_WORDS 2 /* words of one multi-wait */
#endif

static pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static void *model_addr[MODEL_MAX_SLEEPS][MODEL_MAX_WORDS]; /* under model_lock: the words */
static unsigned model_naddr[MODEL_MAX_SLEEPS];              /* under model_lock: how many */
static bool model_queued[MODEL_MAX_SLEEPS]; /* under model_lock: waiting for a wake */
static int model_sleeps;                    /* under model_lock */
/* 1 or'ed in: a wake picked the sleeper; 2: it ran on. Both RMWs: a sleeper that leaves on a
 * cancel or a deadline as a wake picks it would otherwise write it unordered with the wake,
 * which GenMC rejects. */
static atomic_int model_woken[MODEL_MAX_SLEEPS];
static atomic_int model_cancelled;          /* the cancel has arrived */
static __thread bool model_cancel_target;   /* this thread can be cancelled */
static atomic_int model_deadline_passed;    /* model_time_out() was called */

/* A harness whose futex words come in both sizes (a condition variable's 64-bit word and a
 * mutex's 32-bit one), or that waits on both halves of a 64-bit word (the reader-writer
 * lock), names the 64-bit one here, before its threads start. */
static void *model_wide_word;

static inline uint32_t model_word(void *word)
{
    if (model_wide_word != NULL && word == (char *)model_wide_word + 4) /* its high half */
        return (uint32_t)(atomic_load_explicit((_Atomic(uint64_t) *)model_wide_word,
                                               memory_order_relaxed) >> 32);
#ifdef MODEL_WORD64
    return (uint32_t)atomic_load_explicit((_Atomic(uint64_t) *)word, memory_order_relaxed);
#else
    if (word == model_wide_word)
        return (uint32_t)atomic_load_explicit((_Atomic(uint64_t) *)word, memory_order_relaxed);
    return atomic_load_explicit((_Atomic(uint32_t) *)word, memory_order_relaxed);
#endif
}

static inline bool model_cancel_seen(void)
{
    return model_cancel_target && atomic_load_explicit(&model_cancelled, memory_order_relaxed);
}

/* pthread_cancel of the target thread. */
static inline void model_cancel(void) { atomic_store_explicit(&model_cancelled, 1, memory_order_relaxed); }

/* The deadline of every timed wait passes. */
static inline void model_time_out(void)
{
    atomic_store_explicit(&model_deadline_passed, 1, memory_order_relaxed);
}

static inline bool model_deadline_seen(bool timed)
{
    return timed && atomic_load_explicit(&model_deadline_passed, memory_order_relaxed);
}

/* Under model_lock, the word(s) compared equal: a pending cancel acts as the thread goes to
 * sleep, a past deadline ends the wait at once (then unlocks and returns MODEL_CANCELLED or
 * MODEL_TIMEDOUT); else -1, the lock still held. */
static inline int model_no_sleep(bool timed)
{
    if (model_cancel_seen()) { /* pending: acts as the thread goes to sleep */
        pthread_mutex_unlock(&model_lock);
        return MODEL_CANCELLED;
    }
    if (model_deadline_seen(timed)) { /* a past deadline: no sleep */
        pthread_mutex_unlock(&model_lock);
        return MODEL_TIMEDOUT;
    }
    return -1;
}

/* Under model_lock: a new sleeper slot (its words still to be filled in). */
static inline int model_new_slot(void)
{
    int slot = model_sleeps++;
    assert(slot < MODEL_MAX_SLEEPS && "raise MODEL_MAX_SLEEPS");
    return slot;
}

/* Under model_lock, sleeper `slot` queued: unlock and sleep until a wake picks it, the
 * cancel or the deadline. */
static inline int model_sleep(int slot, bool timed)
{
    model_queued[slot] = true;
    pthread_mutex_unlock(&model_lock);
    while (!atomic_load_explicit(&model_woken[slot], memory_order_acquire) && !model_cancel_seen() &&
           !model_deadline_seen(timed)) {}
    atomic_fetch_or_explicit(&model_woken[slot], 2, memory_order_relaxed); /* the effectful write */
    pthread_mutex_lock(&model_lock);
    bool picked = !model_queued[slot]; /* a wake took it off the queue */
    model_queued[slot] = false;
    pthread_mutex_unlock(&model_lock);
    atomic_thread_fence(memory_order_seq_cst);
    if (model_cancel_seen()) return MODEL_CANCELLED; /* in the sleep, or just after */
    return picked ? MODEL_WOKEN : MODEL_TIMEDOUT;      /* not picked: the deadline ended it */
}

/* timed: the wait has a deadline. (No local whose address is taken, here or in
 * model_waitv: with such locals, GenMC v0.11 with its instruction caching reported accesses
 * to freed memory on them that the program does not make; sem_timed_genmc did.) */
static inline int model_wait(void *word, uint32_t val, bool timed)
{
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&model_lock);
    if (model_word(word) != val) {
        pthread_mutex_unlock(&model_lock);
        atomic_thread_fence(memory_order_seq_cst);
        return MODEL_DIFFERED;
    }
    int r = model_no_sleep(timed);
    if (r >= 0) return r;
    int slot = model_new_slot();
    model_addr[slot][0] = word;
    model_naddr[slot] = 1;
    return model_sleep(slot, timed);
}

/* The multi-wait: sleeps while each of the n words holds its value, until a wake of any of
 * them (or the cancel, or the deadline). Word j is at *MODEL_AT(word0, j), its value at
 * *MODEL_AT(val0, j), `stride` bytes apart: an array of struct fastsync__waitv, read where
 * it is (a copy in arrays on the stack met the caching trouble above). */
#define MODEL_AT(p, j) ((__typeof__(p))((const char *)(p) + (size_t)(j) * stride))
static inline int model_waitv(void *const *word0, const uint32_t *val0, size_t stride, unsigned n,
                              bool timed)
{
    assert(n >= 1 && n <= MODEL_MAX_WORDS && "raise MODEL_MAX_WORDS");
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&model_lock);
    for (unsigned j = 0; j < n; j++)
        if (model_word(*MODEL_AT(word0, j)) != *MODEL_AT(val0, j)) {
            pthread_mutex_unlock(&model_lock);
            atomic_thread_fence(memory_order_seq_cst);
            return MODEL_DIFFERED;
        }
    int r = model_no_sleep(timed);
    if (r >= 0) return r;
    int slot = model_new_slot();
    for (unsigned j = 0; j < n; j++) model_addr[slot][j] = *MODEL_AT(word0, j);
    model_naddr[slot] = n;
    return model_sleep(slot, timed); /* one sleeper: a wake of any of its words picks it */
}

/* Under model_lock: sleeper `slot` is queued on `word` (among its others). */
static inline bool model_queued_on(int slot, void *word)
{
    if (!model_queued[slot]) return false;
    for (unsigned j = 0; j < model_naddr[slot]; j++)
        if (model_addr[slot][j] == word) return true;
    return false;
}

static inline void model_wake(void *word, int n)
{
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&model_lock);
#ifdef MODEL_WAKE_NEWEST /* the newest sleeper first: an order the kernel does not use, and
                          * does not promise not to (WaitOnAddress says nothing of it) */
    for (int i = model_sleeps - 1, woken = 0; i >= 0 && woken < n; i--) {
#else
    for (int i = 0, woken = 0; i < model_sleeps && woken < n; i++) {
#endif
        if (model_queued_on(i, word)) {
            model_queued[i] = false; /* off the queue of every word it waits on */
            atomic_fetch_or_explicit(&model_woken[i], 1, memory_order_release);
            woken++;
        }
    }
    pthread_mutex_unlock(&model_lock);
    atomic_thread_fence(memory_order_seq_cst);
}


/* fastsync.h's seam over the model: a harness includes this file, then fastsync.h. A wait
 * that ends cancelled calls model_on_cancelled (the harness's cleanup; it does not return). */
#include <time.h>
static void (*model_on_cancelled)(void);

static inline int model_futex_wait(void *w, uint32_t v, int sh, clockid_t c, const struct timespec *t)
{
    (void)sh;
    (void)c;
    int r = model_wait(w, v, t != NULL);
    if (r == MODEL_CANCELLED && model_on_cancelled) model_on_cancelled();
    return r == MODEL_TIMEDOUT ? ETIMEDOUT : 0;
}

/* Called by the waking thread before each wake, when set (before the threads start): a
 * harness's window between a primitive's RMW and its wake. */
static void (*model_before_wake)(void);

static inline void model_futex_wake(void *w, int n, int sh)
{
    (void)sh;
    if (model_before_wake) model_before_wake();
    model_wake(w, n);
}
static inline int model_futex_waitv(void *const *word0, const uint32_t *val0, size_t stride,
                                    unsigned n, const struct timespec *t)
{
    int r = model_waitv(word0, val0, stride, n, t != NULL);
    if (r == MODEL_CANCELLED && model_on_cancelled) model_on_cancelled();
    return r == MODEL_TIMEDOUT ? ETIMEDOUT : 0;
}

#define FASTSYNC_FUTEX_WAIT model_futex_wait
#define FASTSYNC_FUTEX_WAKE model_futex_wake
/* fastsync_wait_any's multi-wait. A macro, not a function: struct fastsync__waitv is declared
 * in fastsync.h, after this file, and the macro expands inside fastsync.h (fastsync__waitv),
 * where it is complete. Never ENOSYS: the fallback (one word at a time, in time slices on
 * the clock) is not modelled. */
#define FASTSYNC_FUTEX_WAITV(v, n, clock, abstime)                                            \
    ((void)(clock), model_futex_waitv(&(v)[0].word, &(v)[0].expected, sizeof (v)[0], (n), (abstime)))
#define __builtin_ia32_pause() ((void)0)

#endif
