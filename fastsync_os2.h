/* SPDX-License-Identifier: MIT */
/* fastsync_os2.h - the fastsync semaphore and manual-reset event on OS/2 semaphores.
 *
 * The OS/2 side of fastsync.h: the same API, the same semantics and error codes, so user
 * code is the same on both systems. Do not include it yourself: fastsync.h includes it
 * when __OS2__ is defined (GCC for OS/2 with kLIBC, OpenWatcom with -bt=os2). Copy both
 * headers into the project.
 *
 *   #include "fastsync.h"
 *   static fastsync_sem_t items = FASTSYNC_SEM_INIT(0);
 *   void produce(void) { push_item(); fastsync_sem_post(&items); }  // no kernel call unless
 *   void consume(void) { fastsync_sem_wait(&items); pop_item(); }   // a consumer sleeps
 *
 * Build: GCC for OS/2 (kLIBC):  gcc -std=c11 -Zmt app.c        C11 atomics fast path
 *        OpenWatcom:             wcl386 -bt=os2 -bm app.c         OS/2 semaphores only
 *
 * ---------------------------------------------------------------------------------------
 * API: as fastsync.h (its first screen is the reference). Differences on OS/2:
 *   - Every object owns an event semaphore (and, without atomics, a mutex semaphore):
 *     fastsync_*_init creates it and returns EAGAIN when OS/2 cannot (too many semaphores
 *     or handles, no memory); fastsync_*_destroy closes it. Pair every init with a destroy.
 *     FASTSYNC_SEM_INIT / FASTSYNC_EVENT_INIT objects create theirs at first need (with
 *     atomics: the first wait that sleeps; without: the first call), race-free; a static
 *     object that is never destroyed keeps its semaphores until the process ends. If OS/2
 *     has no semaphore to give then, a waiter polls the object every system tick instead
 *     of sleeping on one (with atomics), or the call retries every tick (without).
 *   - fastsync_event_destroy returns EBUSY while a thread is inside a wait on the event
 *     (OS/2 refuses to close a semaphore that threads wait on; fastsync.h cannot see them),
 *     as fastsync_sem_destroy does while a waiter is registered.
 *   - Posts in flight: a post_n or set that found sleepers posts the HEV after the RMW
 *     that publishes its token or sets the event. destroy waits for such posts to end
 *     (DosSleep(0), then a tick at a time), so that none reaches the handle once it is
 *     closed and perhaps given to another semaphore; so, as with fastsync.h, a waiter may
 *     destroy and free the object as soon as its wait returns. If a post is still in
 *     flight after one second (FASTSYNC__OS2_DRAIN_MS: its thread starved, or its process
 *     died mid-post on a shared object), destroy returns EBUSY and the object stays valid.
 *   - The 64-bit words (see the sections for each field): semaphore tokens 32 | waiters 16 |
 *     posting 15 | shared 1; event SET 1 | shared 1 | cur 12 | old 12 | posting 12 |
 *     round 26. OS/2 runs at most 4095 threads, so no count overflows; the event's round
 *     wraps after 2^26 round ends, which a waiter misreads only if they all happen while
 *     it is not scheduled (the event section gives the bound).
 *   - Waits are not POSIX cancellation points (DosWaitEventSem is none), and no call is
 *     async-signal-safe (without atomics every call takes a mutex semaphore).
 *   - A post releases every thread asleep on the semaphore (OS/2 event semaphores have no
 *     "wake one"); those that find no token go back to sleep. A waiter whose reset of the
 *     HEV swallowed a post, and that leaves tokens and waiters behind, posts once more
 *     (the baton, see the semaphore section); likewise the event (its settle).
 *   - FASTSYNC_SHARED: the semaphores are created with DC_SEM_SHARED. Another process that
 *     uses the object (in memory it shares with the creator: DosAllocSharedMem /
 *     DosGetSharedMem) must first open them:
 *       int fastsync_os2_sem_open(fastsync_sem_t *s);      int fastsync_os2_sem_close(fastsync_sem_t *s);
 *       int fastsync_os2_event_open(fastsync_event_t *e);  int fastsync_os2_event_close(fastsync_event_t *e);
 *     open calls DosOpenEventSem (and DosOpenMutexSem without atomics) on the handles
 *     stored in the object: 0, EINVAL (not a shared object, or not a handle of this
 *     system) or EAGAIN (too many opens). close undoes one open (EBUSY while a thread of
 *     this process waits). The creating process needs no open and calls destroy last.
 *   - Deadlines: both clocks are read with the C library's clock_gettime, as the caller
 *     reads them (kLIBC takes CLOCK_MONOTONIC from the high-resolution timer,
 *     DosTmrQueryTime). With FASTSYNC_OS2_TIMER_CLOCK (automatic with OpenWatcom, or where
 *     <time.h> has no CLOCK_MONOTONIC) CLOCK_MONOTONIC is DosTmrQueryTime / DosTmrQueryFreq
 *     read directly (counted from boot, resolution 0.84 us) and CLOCK_REALTIME
 *     gettimeofday() (OpenWatcom: time(), whole seconds); make monotonic deadlines with
 *     fastsync_deadline_in() then. A wait sleeps in DosWaitEventSem with the remaining time in
 *     milliseconds, rounded up (never early), recomputed after every wakeup and after
 *     ERROR_INTERRUPT; OS/2 rounds timeouts up to its ~31 ms tick. A change of the real-time
 *     clock is seen when the wait next wakes (at the latest after an hour).
 *   - Guarantees as fastsync.h with atomics: a post with no waiter registered, a wait that
 *     finds a token, set on a set event, wait on a set event and reset on a reset event
 *     make no kernel call. Without atomics every call takes the object's mutex semaphore
 *     (two kernel calls; on a static object DosEnterCritSec/DosExitCritSec as well):
 *     correct, not fast.
 *   - Sizes: 16 bytes each for fastsync_sem_t and fastsync_event_t with atomics (a 64-bit
 *     word, 8-aligned, and a HEV), on 32-bit OS/2 as on a 64-bit system; without atomics
 *     20 bytes on 32-bit OS/2 (the word, HEV, mutex and flags; 24 where 64-bit integers
 *     are 8-aligned).
 *
 * Configuration (define before the #include)
 *   FASTSYNC_OS2_NO_ATOMICS  use the path without <stdatomic.h> (automatic with OpenWatcom,
 *                            __WATCOMC__, and compilers that define __STDC_NO_ATOMICS__)
 *   FASTSYNC_OS2_TIMER_CLOCK read CLOCK_MONOTONIC from DosTmrQueryTime instead of the C
 *                            library's clock_gettime (for a kLIBC older than clock_gettime)
 *   FASTSYNC_OS2_POST(hev, by_waiter)  replace DosPostEventSem, DosWaitEventSem,
 *   FASTSYNC_OS2_WAIT(hev, ms)         DosResetEventSem (counting, fault injection); see
 *   FASTSYNC_OS2_RESET(hev, pcount)    their definitions
 *   FASTSYNC_SPIN            polls before sleeping, as in fastsync.h; default 20 with atomics
 *                            (not measured on OS/2), 0 without
 *   FASTSYNC_API             storage of every function. Default: static inline
 * If you include <os2.h> before fastsync.h, define INCL_DOSSEMAPHORES, INCL_DOSPROCESS,
 * INCL_DOSPROFILE and INCL_DOSERRORS first (or INCL_DOS and INCL_ERRORS).
 * ---------------------------------------------------------------------------------------
 */
#ifndef FASTSYNC_OS2_H
#define FASTSYNC_OS2_H

#if !defined(FASTSYNC_OS2_NO_ATOMICS) &&                                              \
    (defined(__WATCOMC__) || defined(__STDC_NO_ATOMICS__) || !defined(__STDC_VERSION__) || \
     __STDC_VERSION__ < 201112L)
#define FASTSYNC_OS2_NO_ATOMICS 1
#endif

#ifndef INCL_DOSSEMAPHORES
#define INCL_DOSSEMAPHORES
#endif
#ifndef INCL_DOSPROCESS
#define INCL_DOSPROCESS
#endif
#ifndef INCL_DOSPROFILE
#define INCL_DOSPROFILE
#endif
#ifndef INCL_DOSERRORS
#define INCL_DOSERRORS
#endif
#include <os2.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if !defined(__WATCOMC__)
#include <sys/time.h> /* gettimeofday, for FASTSYNC_OS2_TIMER_CLOCK */
#endif
#if !defined(FASTSYNC_OS2_NO_ATOMICS)
#include <stdatomic.h>
#endif

/* Which clock: the C library's clock_gettime where it has one (kLIBC reads
 * CLOCK_MONOTONIC from DosTmrQueryTime itself, so deadlines a user makes with it agree with
 * ours to the nanosecond), else the timer directly. OpenWatcom: the timer. */
#if !defined(FASTSYNC_OS2_TIMER_CLOCK) && (defined(__WATCOMC__) || !defined(CLOCK_MONOTONIC))
#define FASTSYNC_OS2_TIMER_CLOCK 1
#endif

/* kLIBC and the C library under the double define the POSIX clock names; a C library
 * without them gets these (the values only have to differ). [unverified on OpenWatcom] */
#if !defined(CLOCK_REALTIME)
typedef int clockid_t;
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#endif

#ifndef FASTSYNC_API
#if defined(__WATCOMC__)
#define FASTSYNC_API static __inline
#else
#define FASTSYNC_API static inline
#endif
#endif

#ifndef FASTSYNC_SPIN
#if defined(FASTSYNC_OS2_NO_ATOMICS)
#define FASTSYNC_SPIN 0
#else
#define FASTSYNC_SPIN 20 /* fastsync.h's value; not measured on OS/2 */
#endif
#endif

#define FASTSYNC_SHARED 1
#define FASTSYNC_SEM_VALUE_MAX INT_MAX
/* The backend, named as fastsync.h names its others. It is the only one on OS/2: a choice
 * of another (FASTSYNC_BACKEND_POSIX, ...), made for the other systems a project builds
 * on, is set aside here, so that one set of build flags serves them all. */
#undef FASTSYNC_BACKEND_POSIX
#undef FASTSYNC_BACKEND_LINUX
#define FASTSYNC_BACKEND_OS2 1
#define FASTSYNC_BACKEND "os2"
#define FASTSYNC_HAS_SHARED 1

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
 * The object and its word
 *
 * Both primitives are a 64-bit state word plus the OS/2 event semaphore (HEV) their
 * sleepers block on; without atomics, plus the mutex semaphore that guards the word.
 * Every change of the word is one read-modify-write: a C11 atomic RMW, or, without
 * atomics, a read and a write under the mutex semaphore (which orders them as a seq_cst
 * RMW would). The protocols below are written once over these operations:
 *   fastsync__os2_load / _cas / _add / _and    on the word (order given as with C11)
 *   fastsync__os2_fence                        seq_cst fence; nothing under the mutex, where
 *                                              every access already is a locked one
 * ====================================================================================== */

#if !defined(FASTSYNC_OS2_NO_ATOMICS)

/* Asked of the words really used (8-aligned 64-bit, and ULONG): clang says
 * ATOMIC_LLONG_LOCK_FREE 1 on i386, where the type's ABI alignment is 4, yet the 8-aligned
 * word is lock-free when the CPU has cmpxchg8b (__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8); i386 and
 * i486 are refused. */
#if ATOMIC_LONG_LOCK_FREE != 2 ||                                               \
    (ATOMIC_LLONG_LOCK_FREE != 2 &&                                              \
     !(defined(__clang__) && defined(__i386__) && defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8)))
#error "fastsync_os2.h needs lock-free 32- and 64-bit atomics (or define FASTSYNC_OS2_NO_ATOMICS)"
#endif

/* _Alignas(8): GCC before 11.1 (GCC for OS/2 is 9.x) aligns an _Atomic 64-bit field to 4
 * bytes on i386, and a 64-bit load that straddles a cache line is not atomic there. */
typedef struct fastsync__os2_obj {
    _Alignas(8) _Atomic(uint64_t) state; /* the word */
    _Atomic(ULONG) hev;                  /* the HEV; 0 until created (static initializer, or closed) */
} fastsync__os2_obj_t;

#define FASTSYNC__OS2_OBJ_INIT(word) { (uint64_t)(word), 0 }

typedef memory_order fastsync__os2_mo;
#define FASTSYNC__RELAXED memory_order_relaxed
#define FASTSYNC__ACQUIRE memory_order_acquire
#define FASTSYNC__RELEASE memory_order_release
#define FASTSYNC__ACQ_REL memory_order_acq_rel

/* ThreadSanitizer does not model fences (gcc refuses atomic_thread_fence under it): the
 * event's handshake then uses RMWs instead (see fastsync_event_set). */
#if defined(__SANITIZE_THREAD__)
#define FASTSYNC__OS2_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FASTSYNC__OS2_TSAN 1
#endif
#endif

/* Without atomics, an object's semaphores must exist before its word can be touched;
 * with atomics the word is always there. */
FASTSYNC_API void fastsync__os2_ready(const fastsync__os2_obj_t *o) { (void)o; }

FASTSYNC_API uint64_t fastsync__os2_load(const fastsync__os2_obj_t *o, fastsync__os2_mo mo)
{
    return atomic_load_explicit(&o->state, mo);
}

FASTSYNC_API bool fastsync__os2_cas(fastsync__os2_obj_t *o, uint64_t *expected, uint64_t desired,
                                    fastsync__os2_mo success, fastsync__os2_mo failure)
{
    return atomic_compare_exchange_weak_explicit(&o->state, expected, desired, success, failure);
}

FASTSYNC_API uint64_t fastsync__os2_add(fastsync__os2_obj_t *o, uint64_t delta, fastsync__os2_mo mo)
{
    return atomic_fetch_add_explicit(&o->state, delta, mo);
}

FASTSYNC_API uint64_t fastsync__os2_and(fastsync__os2_obj_t *o, uint64_t mask, fastsync__os2_mo mo)
{
    return atomic_fetch_and_explicit(&o->state, mask, mo);
}

FASTSYNC_API void fastsync__os2_fence(void)
{
#if !defined(FASTSYNC__OS2_TSAN)
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* The HEV as stored: 0 while a static object has none yet. acquire: pairs with the CAS
 * in fastsync__os2_hev_need, so the creator's DosCreateEventSem happens-before our use. */
FASTSYNC_API ULONG fastsync__os2_hev_load(const fastsync__os2_obj_t *o)
{
    return atomic_load_explicit(&o->hev, memory_order_acquire);
}

/* The HEV, created now if there is none (private, as static initializers make private
 * objects). 0 if OS/2 has no semaphore to give: the caller then polls. */
FASTSYNC_API ULONG fastsync__os2_hev_need(fastsync__os2_obj_t *o)
{
    ULONG h = fastsync__os2_hev_load(o), mine = 0;
    if (h != 0) return h;
    if (DosCreateEventSem(NULL, &mine, 0, FALSE) != NO_ERROR || mine == 0) return 0;
    /* acq_rel: the release publishes the new HEV to the acquire in fastsync__os2_hev_load;
     * on failure, acquire takes the winner's HEV with the same pairing. */
    if (atomic_compare_exchange_strong_explicit(&o->hev, &h, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    (void)DosCloseEventSem(mine);
    return h;
}

FASTSYNC_API void fastsync__os2_store_init(fastsync__os2_obj_t *o, uint64_t word, ULONG hev)
{
    /* relaxed: before init returns no other thread may use the object; the caller
     * publishes it with its own happens-before. */
    atomic_store_explicit(&o->state, word, memory_order_relaxed);
    atomic_store_explicit(&o->hev, hev, memory_order_relaxed);
}

/* Takes the HEV out for destroy (0: none). relaxed: destroy runs when no other thread
 * uses the object any more. */
FASTSYNC_API ULONG fastsync__os2_hev_take(fastsync__os2_obj_t *o)
{
    return atomic_exchange_explicit(&o->hev, 0, memory_order_relaxed);
}

FASTSYNC_API void fastsync__os2_hev_put_back(fastsync__os2_obj_t *o, ULONG hev)
{
    /* relaxed: as fastsync__os2_hev_take. */
    atomic_store_explicit(&o->hev, hev, memory_order_relaxed);
}

/* A hint to the CPU inside a spin loop. */
FASTSYNC_API void fastsync__cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__i386__) || defined(__x86_64__))
    __builtin_ia32_pause();
#else
    atomic_signal_fence(memory_order_seq_cst); /* compiler barrier only */
#endif
}

#else /* FASTSYNC_OS2_NO_ATOMICS */

/* The word under the mutex semaphore `hmtx`. FASTSYNC__OS2_LAZY marks a static initializer, whose
 * semaphores are created on first use inside DosEnterCritSec: the other threads of the
 * process are suspended meanwhile, so two first uses cannot both create them. Reading the
 * handles of such an object outside a critical section could race with that creation, so
 * every call on a static object reads them inside one (fastsync__os2_ready). `flags` is
 * written only by the initializers, before the object is shared. */
typedef struct fastsync__os2_obj {
    uint64_t state; /* the word, under hmtx */
    ULONG hev;      /* the HEV */
    ULONG hmtx;     /* the mutex semaphore guarding state */
    ULONG flags;    /* FASTSYNC__OS2_LAZY, FASTSYNC__OS2_SHARED_OBJ: set by init only */
} fastsync__os2_obj_t;

#define FASTSYNC__OS2_LAZY 1u       /* static initializer: create hev and hmtx on first use */
#define FASTSYNC__OS2_SHARED_OBJ 2u /* made with FASTSYNC_SHARED */
#define FASTSYNC__OS2_OBJ_INIT(word) { (uint64_t)(word), 0, 0, FASTSYNC__OS2_LAZY }

typedef int fastsync__os2_mo; /* no meaning here: every access is under the mutex */
#define FASTSYNC__RELAXED 0
#define FASTSYNC__ACQUIRE 0
#define FASTSYNC__RELEASE 0
#define FASTSYNC__ACQ_REL 0

/* Creates a static object's semaphores once, inside a critical section; the caller may
 * read the handles plainly afterwards (the creation happens-before: DosExitCritSec /
 * DosEnterCritSec order them). Retries every tick while OS/2 has none to give. */
FASTSYNC_API void fastsync__os2_ready(const fastsync__os2_obj_t *co)
{
    /* The object is written only here, once, inside the critical section; the public
     * functions that take a const pointer (getvalue, is_set) come through here too. */
    fastsync__os2_obj_t *o = (fastsync__os2_obj_t *)(uintptr_t)co;
    ULONG ok, hev, hmtx;
    if (!(o->flags & FASTSYNC__OS2_LAZY)) return;
    for (;;) {
        (void)DosEnterCritSec();
        if (o->hmtx == 0) {
            hev = 0;
            hmtx = 0;
            if (DosCreateEventSem(NULL, &hev, 0, FALSE) == NO_ERROR &&
                DosCreateMutexSem(NULL, &hmtx, 0, FALSE) == NO_ERROR) {
                o->hev = hev;
                o->hmtx = hmtx;
            } else if (hev != 0) {
                (void)DosCloseEventSem(hev);
            }
        }
        ok = o->hmtx;
        (void)DosExitCritSec();
        if (ok != 0) return;
        (void)DosSleep(1);
    }
}

FASTSYNC_API void fastsync__os2_lock(const fastsync__os2_obj_t *o)
{
    APIRET rc;
    /* ERROR_SEM_OWNER_DIED (a process died holding a shared one): ours now. The word it
     * guards is written by single stores after all checks, so it is whole unless the
     * process died inside such a store. */
    do rc = DosRequestMutexSem(o->hmtx, SEM_INDEFINITE_WAIT);
    while (rc == ERROR_INTERRUPT);
}

FASTSYNC_API void fastsync__os2_unlock(const fastsync__os2_obj_t *o) { (void)DosReleaseMutexSem(o->hmtx); }

FASTSYNC_API uint64_t fastsync__os2_load(const fastsync__os2_obj_t *o, fastsync__os2_mo mo)
{
    uint64_t v;
    (void)mo;
    fastsync__os2_lock(o);
    v = o->state;
    fastsync__os2_unlock(o);
    return v;
}

FASTSYNC_API bool fastsync__os2_cas(fastsync__os2_obj_t *o, uint64_t *expected, uint64_t desired,
                                    fastsync__os2_mo success, fastsync__os2_mo failure)
{
    bool ok;
    (void)success;
    (void)failure;
    fastsync__os2_lock(o);
    ok = o->state == *expected;
    if (ok) o->state = desired;
    else *expected = o->state;
    fastsync__os2_unlock(o);
    return ok;
}

FASTSYNC_API uint64_t fastsync__os2_add(fastsync__os2_obj_t *o, uint64_t delta, fastsync__os2_mo mo)
{
    uint64_t v;
    (void)mo;
    fastsync__os2_lock(o);
    v = o->state;
    o->state = v + delta;
    fastsync__os2_unlock(o);
    return v;
}

FASTSYNC_API uint64_t fastsync__os2_and(fastsync__os2_obj_t *o, uint64_t mask, fastsync__os2_mo mo)
{
    uint64_t v;
    (void)mo;
    fastsync__os2_lock(o);
    v = o->state;
    o->state = v & mask;
    fastsync__os2_unlock(o);
    return v;
}

/* Under the mutex every access is ordered by lock/unlock: the Dekker handshake of the
 * event (see there) holds because the two sides' locked sections are totally ordered. */
FASTSYNC_API void fastsync__os2_fence(void) {}

FASTSYNC_API ULONG fastsync__os2_hev_load(const fastsync__os2_obj_t *o) { return o->hev; }
FASTSYNC_API ULONG fastsync__os2_hev_need(fastsync__os2_obj_t *o) { return o->hev; }

FASTSYNC_API void fastsync__os2_store_init(fastsync__os2_obj_t *o, uint64_t word, ULONG hev)
{
    o->state = word;
    o->hev = hev;
}

FASTSYNC_API ULONG fastsync__os2_hev_take(fastsync__os2_obj_t *o)
{
    ULONG h = o->hev;
    o->hev = 0;
    return h;
}

FASTSYNC_API void fastsync__os2_hev_put_back(fastsync__os2_obj_t *o, ULONG hev) { o->hev = hev; }

FASTSYNC_API void fastsync__cpu_relax(void) {}

#endif /* FASTSYNC_OS2_NO_ATOMICS */

/* ======================================================================================
 * Kernel calls
 * ====================================================================================== */

/* Every DosPostEventSem of the header: `by_waiter` is 0 for the one post of a posting call
 * (sem_post, event_set), 1 for a waiter's post on behalf of other waiters (the baton of the
 * semaphore, the settle of the event). Define FASTSYNC_OS2_POST(hev, by_waiter) before the
 * #include to count or inject (the tests count posting calls' posts with it). */
#ifndef FASTSYNC_OS2_POST
#define FASTSYNC_OS2_POST(hev, by_waiter) ((void)(by_waiter), (void)DosPostEventSem(hev))
#endif

/* Every DosWaitEventSem and DosResetEventSem of the header, APIRET expressions. Define
 * them before the #include to inject delays or errors (the os2 test suite widens with them
 * the windows between a thread's last look at the word and its sleep or reset). */
#ifndef FASTSYNC_OS2_WAIT
#define FASTSYNC_OS2_WAIT(hev, ms) DosWaitEventSem(hev, ms)
#endif
#ifndef FASTSYNC_OS2_RESET
#define FASTSYNC_OS2_RESET(hev, pcount) DosResetEventSem(hev, pcount)
#endif

/* Creates an object's semaphores for init: 0 or EAGAIN (OS/2 has none to give). */
FASTSYNC_API int fastsync__os2_create(fastsync__os2_obj_t *o, uint64_t word, int flags)
{
    ULONG attr = (flags & FASTSYNC_SHARED) ? DC_SEM_SHARED : 0, hev = 0;
    if (DosCreateEventSem(NULL, &hev, attr, FALSE) != NO_ERROR || hev == 0) return EAGAIN;
#if defined(FASTSYNC_OS2_NO_ATOMICS)
    {
        ULONG hmtx = 0;
        if (DosCreateMutexSem(NULL, &hmtx, attr, FALSE) != NO_ERROR || hmtx == 0) {
            (void)DosCloseEventSem(hev);
            return EAGAIN;
        }
        o->hmtx = hmtx;
        o->flags = (flags & FASTSYNC_SHARED) ? FASTSYNC__OS2_SHARED_OBJ : 0;
    }
#endif
    fastsync__os2_store_init(o, word, hev);
    return 0;
}

/* Closes an object's semaphores for destroy, given that no waiter is registered: 0, or
 * EBUSY if OS/2 says a thread still waits (then nothing is closed). */
FASTSYNC_API int fastsync__os2_close_all(fastsync__os2_obj_t *o)
{
    ULONG hev;
#if defined(FASTSYNC_OS2_NO_ATOMICS)
    if (o->hmtx != 0) {
        if (DosCloseMutexSem(o->hmtx) == ERROR_SEM_BUSY) return EBUSY;
        o->hmtx = 0;
        o->flags = FASTSYNC__OS2_LAZY; /* a later use (undefined) would create them again */
    }
#endif
    hev = fastsync__os2_hev_take(o);
    if (hev != 0 && DosCloseEventSem(hev) == ERROR_SEM_BUSY) {
        fastsync__os2_hev_put_back(o, hev);
        return EBUSY;
    }
    return 0;
}

/* Resets the HEV; returns how many posts the reset wiped out (0: it was reset already). */
FASTSYNC_API ULONG fastsync__os2_reset(ULONG hev)
{
    ULONG count = 0;
    if (FASTSYNC_OS2_RESET(hev, &count) != NO_ERROR) return 0; /* ERROR_ALREADY_RESET */
    return count;
}

/* Results of one sleep. */
#define FASTSYNC__OS2_WOKEN 0  /* DosWaitEventSem returned 0: the HEV is posted */
#define FASTSYNC__OS2_AGAIN 1  /* a timeout, ERROR_INTERRUPT, or a poll: look again */
#define FASTSYNC__OS2_BROKEN 2 /* the handle is gone (closed under the waiter): poll */

/* One sleep of at most `ms` on `hev`; with no HEV (none could be created) a poll of one
 * tick. The caller looks at the word and at the clock again in every case. */
FASTSYNC_API int fastsync__os2_sleep(ULONG hev, ULONG ms)
{
    APIRET rc;
    if (hev == 0) {
        (void)DosSleep(1);
        return FASTSYNC__OS2_AGAIN;
    }
    rc = FASTSYNC_OS2_WAIT(hev, ms);
    if (rc == NO_ERROR) return FASTSYNC__OS2_WOKEN;
    /* ERROR_SEM_TIMEOUT is the old 16-bit code for a timeout. */
    if (rc == ERROR_TIMEOUT || rc == ERROR_SEM_TIMEOUT || rc == ERROR_INTERRUPT)
        return FASTSYNC__OS2_AGAIN;
    return FASTSYNC__OS2_BROKEN;
}

/* A waiter that has nothing to do but let others run: yield (DosSleep(0) yields only to
 * threads of equal or higher priority), then, if that did not help, sleep one tick so a
 * lower-priority thread can run too. */
FASTSYNC_API void fastsync__os2_yield(unsigned round)
{
    (void)DosSleep(round < 16 ? 0 : 1);
}

/* ======================================================================================
 * Deadlines
 * ====================================================================================== */

#define FASTSYNC__NSEC_PER_SEC 1000000000L
/* The longest single sleep (1 hour): a longer wait is several, so a change of the real-time
 * clock is seen within it, and no timeout comes near SEM_INDEFINITE_WAIT. */
#define FASTSYNC__OS2_MAX_MS 3600000UL

/* The largest time_t, signed (kLIBC, the double) or unsigned (OpenWatcom). */
#define FASTSYNC__OS2_TIME_MAX                                                           \
    ((time_t)-1 > 0 ? (time_t)-1                                                        \
                    : (time_t)((((uintmax_t)1 << (sizeof(time_t) * CHAR_BIT - 2)) - 1) * 2 + 1))

/* Reads `clock` (CLOCK_MONOTONIC or CLOCK_REALTIME). The conversions round down, so the
 * time read is never ahead of the true time, and a deadline it says has passed has. */
FASTSYNC_API void fastsync__os2_now(clockid_t clock, struct timespec *t)
{
#if !defined(FASTSYNC_OS2_TIMER_CLOCK)
    (void)clock_gettime(clock, t); /* cannot fail for these two clocks */
#else
    if (clock == CLOCK_REALTIME) {
#if defined(__WATCOMC__)
        t->tv_sec = time(NULL);
        t->tv_nsec = 0;
#else
        struct timeval tv;
        (void)gettimeofday(&tv, NULL);
        t->tv_sec = tv.tv_sec;
        t->tv_nsec = (long)tv.tv_usec * 1000L;
#endif
    } else {
        /* The timer's two 32-bit halves; ULONG is wider on a 64-bit double, hence the
         * masks. Neither call fails given valid pointers. */
        ULONG hz = 0;
        QWORD q;
        uint64_t ticks;
        q.ulLo = 0;
        q.ulHi = 0;
        (void)DosTmrQueryFreq(&hz);
        (void)DosTmrQueryTime(&q);
        if (hz == 0) hz = 1;
        ticks = ((uint64_t)(q.ulHi & 0xffffffffUL) << 32) | (uint64_t)(q.ulLo & 0xffffffffUL);
        t->tv_sec = (time_t)(ticks / hz);
        /* (ticks % hz) < hz < 2^32, so the product fits in 64 bits. */
        t->tv_nsec = (long)((ticks % hz) * (uint64_t)FASTSYNC__NSEC_PER_SEC / hz);
    }
#endif
}

FASTSYNC_API struct timespec fastsync_deadline_in(uint64_t ns)
{
    /* = { 0 }: a 64-bit time_t on a 32-bit ABI gives glibc's struct timespec an unnamed
     * padding field, which the timer clock does not write: zeroed, it is not returned
     * uninitialized. */
    struct timespec t = { 0 };
    uint64_t secs = ns / FASTSYNC__NSEC_PER_SEC;
    fastsync__os2_now(CLOCK_MONOTONIC, &t);
    t.tv_nsec += (long)(ns % FASTSYNC__NSEC_PER_SEC);
    if (t.tv_nsec >= FASTSYNC__NSEC_PER_SEC) {
        t.tv_nsec -= FASTSYNC__NSEC_PER_SEC;
        secs++;
    }
    if (secs > (uint64_t)(FASTSYNC__OS2_TIME_MAX - t.tv_sec)) {
        t.tv_sec = FASTSYNC__OS2_TIME_MAX;
        t.tv_nsec = FASTSYNC__NSEC_PER_SEC - 1;
    } else {
        t.tv_sec += (time_t)secs;
    }
    return t;
}

/* The arguments every clockwait checks before anything else: EINVAL or 0. */
FASTSYNC_API int fastsync__clock_args(clockid_t clock, const struct timespec *abstime)
{
    if (abstime == NULL) return EINVAL;
    return clock == CLOCK_MONOTONIC || clock == CLOCK_REALTIME ? 0 : EINVAL;
}

/* Called once a wait knows it would block: EINVAL for a malformed deadline, ETIMEDOUT for
 * one already past (no wait on a semaphore), else 0. */
FASTSYNC_API int fastsync__deadline_check(clockid_t clock, const struct timespec *abstime)
{
    struct timespec now;
    if (abstime->tv_nsec < 0 || abstime->tv_nsec >= FASTSYNC__NSEC_PER_SEC) return EINVAL;
    if (abstime->tv_sec < 0) return ETIMEDOUT;
    fastsync__os2_now(clock, &now);
    if (abstime->tv_sec < now.tv_sec ||
        (abstime->tv_sec == now.tv_sec && abstime->tv_nsec <= now.tv_nsec))
        return ETIMEDOUT;
    return 0;
}

/* The timeout for the next sleep: *ms = the time left until `abstime` (NULL: no deadline,
 * SEM_INDEFINITE_WAIT) in milliseconds, rounded up, at most FASTSYNC__OS2_MAX_MS.
 * ETIMEDOUT once the deadline has passed. */
FASTSYNC_API int fastsync__os2_timeout(clockid_t clock, const struct timespec *abstime, ULONG *ms)
{
    struct timespec now;
    time_t sec;
    long nsec;
    if (abstime == NULL) {
        *ms = SEM_INDEFINITE_WAIT;
        return 0;
    }
    fastsync__os2_now(clock, &now);
    if (abstime->tv_sec < now.tv_sec ||
        (abstime->tv_sec == now.tv_sec && abstime->tv_nsec <= now.tv_nsec))
        return ETIMEDOUT;
    sec = abstime->tv_sec - now.tv_sec;
    nsec = abstime->tv_nsec - now.tv_nsec;
    if (nsec < 0) {
        sec--;
        nsec += FASTSYNC__NSEC_PER_SEC;
    }
    if (sec >= (time_t)(FASTSYNC__OS2_MAX_MS / 1000)) *ms = FASTSYNC__OS2_MAX_MS;
    else *ms = (ULONG)sec * 1000UL + (ULONG)((nsec + 999999L) / 1000000L);
    return 0;
}

/* ======================================================================================
 * Posts in flight, and destroy
 *
 * A posting call (fastsync_sem_post_n, fastsync_event_set) that finds sleepers reads the
 * HEV, makes the RMW that publishes its token or sets the event, and then posts the HEV.
 * Once that RMW is done a waiter may return, destroy the object and free it, and OS/2 may
 * give the closed HEV's handle to the next semaphore the application creates (it reuses
 * slots): a DosPostEventSem still on its way would post that unrelated semaphore, and OS/2
 * keeps the post (a count that stays until reset). So each word has a count "posting":
 * the posting call's RMW raises it when the call will post, in the same RMW that
 * publishes; after DosPostEventSem one more RMW lowers it, the call's last access to the
 * object. destroy waits until posting is 0, yielding (fastsync__os2_yield: DosSleep(0),
 * then DosSleep(1), a tick each), for at most FASTSYNC__OS2_DRAIN_MS (one second) of
 * CLOCK_MONOTONIC; if a post is still in flight then it returns EBUSY and the object stays
 * valid (a later destroy may succeed). A poster that died between its two RMWs (a process
 * killed while posting to a shared object) leaves posting raised for good: destroy then
 * says EBUSY every time, and the semaphores stay until the processes end. The wait lasts
 * as long as a poster takes from its RMW to the end of its DosPostEventSem: usually
 * nothing, at worst its preemption.
 * Memory order: the lowering RMW is release, destroy's loads acquire, so the post happens-
 * before destroy closes the HEV, and the RMW before whatever the caller does with the
 * memory next. Waiters need no count: they reset and post only while counted in the word
 * (see the semaphore's baton and the event's settles), and destroy says EBUSY then.
 * ====================================================================================== */

/* At most this long (ms of CLOCK_MONOTONIC) destroy waits for posts in flight. */
#define FASTSYNC__OS2_DRAIN_MS 1000u

/* CLOCK_MONOTONIC in milliseconds. */
FASTSYNC_API uint64_t fastsync__os2_ms(void)
{
    struct timespec t;
    fastsync__os2_now(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* After a posting call's DosPostEventSem: posting - 1 (`one` is the field's unit), its last
 * access to the object. release: pairs with the acquire load in fastsync__os2_destroy. */
FASTSYNC_API void fastsync__os2_posted(fastsync__os2_obj_t *o, uint64_t one)
{
    (void)fastsync__os2_add(o, (uint64_t)0 - one, FASTSYNC__RELEASE);
}

/* destroy of either object: EBUSY while the word counts a waiter (`waiting`, a mask), or
 * while a post stays in flight (`posting`, a mask) for more than FASTSYNC__OS2_DRAIN_MS
 * (two readings rounded down to the ms differ by more only after that long); else the
 * object's semaphores are closed (EBUSY if OS/2 says a thread still waits on one). */
FASTSYNC_API int fastsync__os2_destroy(fastsync__os2_obj_t *o, uint64_t waiting, uint64_t posting)
{
    uint64_t v, t0 = 0;
    unsigned i;
#if defined(FASTSYNC_OS2_NO_ATOMICS)
    if (o->hmtx == 0) return fastsync__os2_close_all(o); /* a static object never used */
#endif
    for (i = 0;; i++) {
        /* acquire: pairs with the release RMW in fastsync__os2_posted (see above). A waiter
         * seen is a snapshot: destroying while others may still register is the caller's
         * bug, EBUSY a courtesy for what it can see. */
        v = fastsync__os2_load(o, FASTSYNC__ACQUIRE);
        if ((v & waiting) != 0) return EBUSY;
        if ((v & posting) == 0) break;
        /* A post in flight: the clock is read only now, not on every destroy. */
        if (i == 0) t0 = fastsync__os2_ms();
        else if (fastsync__os2_ms() - t0 > FASTSYNC__OS2_DRAIN_MS) return EBUSY; /* never less */
        fastsync__os2_yield(i);
    }
    return fastsync__os2_close_all(o);
}

/* ======================================================================================
 * Semaphore
 *
 * State: a 64-bit word, as in fastsync.h but with a posting count, plus the HEV.
 *   bits  0..31  tokens   the value, 0..FASTSYNC_SEM_VALUE_MAX
 *   bits 32..47  waiters  threads registered in the slow path (asleep or about to be)
 *   bits 48..62  posting  posts in flight (see "Posts in flight")
 *   bit  63      shared   FASTSYNC_SHARED given at init; never changes afterwards
 * OS/2 runs at most 4095 threads in the whole system, so neither count can overflow.
 * Transitions (each one RMW on the word), as in fastsync.h:
 *   post        tokens += n; if waiters > 0: posting + 1, then DosPostEventSem once, then
 *               posting - 1 (one more RMW: the post's last access)
 *   take        tokens -= 1       (fast path, trywait, spinning)
 *   register    waiters += 1
 *   take+leave  tokens -= 1, waiters -= 1
 *   leave       waiters -= 1      (timed out, and saw no token in the same RMW)
 * So token conservation and "post reads the waiters from the RMW that publishes its
 * token" hold as there. post reads the HEV before that RMW, which decides whether it posts
 * (not when the HEV is 0: a static semaphore whose waiters poll).
 *
 * Sleeping. OS/2 has no address-based wait; a registered waiter W sleeps on the HEV:
 *   loop:  reset the HEV ; read the word ; token? take+leave : DosWaitEventSem
 * (after a wakeup W reads the word first and resets only if it must sleep again).
 * OS/2 semaphore calls on one HEV are serialized by the kernel (each is a full barrier),
 * so a post that comes before a reset in the HEV's order happens-before everything the
 * resetter does after its reset.
 * The hazard of a manual-reset HEV: W has reset, read "no token" and is on its way into
 * DosWaitEventSem; a post P arrives (its token is for W) and posts the HEV; then another
 * waiter X resets the HEV before W starts waiting. W would sleep with a token there.
 * Why it cannot stay so (the baton):
 *   1. A token that arrives after W's read comes from a post P whose RMW is later than
 *      W's register, so P sees waiters > 0 and posts the HEV. P's post is later than W's
 *      reset in the HEV's order (else P's RMW would happen-before W's read, which would
 *      see the token). So W's own reset never wipes it.
 *   2. DosWaitEventSem returns 0 at once on a posted HEV, and is released by any post
 *      while it blocks (OS/2 release is edge-triggered). So W misses P only if another
 *      reset, by a waiter X, comes between P's post and the moment W blocks.
 *   3. X's reset returns the post count it wiped (> 0 here), and X reads the word after
 *      it, so X sees P's token (or that it is gone already). If X takes a token and the
 *      word its take+leave leaves still has tokens and waiters, X posts the HEV once more:
 *      the baton. X decides that from the value its take+leave RMW replaces and posts
 *      before that RMW, while still registered (the value is known before the RMW, and a
 *      post after X's reset covers what the reset wiped, whenever it comes). The same
 *      argument applies to that post; each reset that wipes a post is followed by a read
 *      that either finds the tokens gone or passes the baton. A reset that wiped nothing
 *      (ERROR_ALREADY_RESET) owes nothing; a waiter that did not reset since its last
 *      sleep wiped nothing either.
 * Hence every token left while waiters sleep is covered by a post after the last reset,
 * and at most one extra post per wiping reset is made. Every reset and post a waiter makes
 * comes while it is registered, so destroy (EBUSY while waiters > 0) never closes the HEV
 * under it: its take+leave or leave RMW is its last access to the semaphore.
 * ERROR_INTERRUPT and timeouts change nothing: W reads the word again after its reset, so
 * W still "reset, then read".
 * ====================================================================================== */

typedef struct fastsync_sem {
    fastsync__os2_obj_t o; /* private: use the functions */
} fastsync_sem_t;

/* FASTSYNC_SEM_INIT(n): n must be an integer constant expression in
 * 0..FASTSYNC_SEM_VALUE_MAX; anything else does not compile. C: a bit-field of negative
 * width, whose name says why (C89 and C11 alike; a bit-field width must be a constant).
 * C++, which has no types in sizeof: an array of negative size. The test is written so
 * that no value, signed or unsigned, draws a warning (no "unsigned >= 0"). A value from a
 * variable goes through fastsync_sem_init, which says EINVAL. */
#define FASTSYNC__SEM_INIT_OK(n) ((n) == 0 || ((n) > 0 && (n) <= FASTSYNC_SEM_VALUE_MAX))
#ifdef __cplusplus
#define FASTSYNC__SEM_INIT_CHECK(n) (0 * sizeof(char[FASTSYNC__SEM_INIT_OK(n) ? 1 : -1]))
#else
#define FASTSYNC__SEM_INIT_CHECK(n)                                                          \
    (0 * sizeof(struct {                                                                   \
         int fastsync_sem_init_value_out_of_range : FASTSYNC__SEM_INIT_OK(n) ? 1 : -1;      \
     }))
#endif
#define FASTSYNC_SEM_INIT(n) { FASTSYNC__OS2_OBJ_INIT((uint64_t)(n) + FASTSYNC__SEM_INIT_CHECK(n)) }

#define FASTSYNC__SEM_TOKENS 0xffffffffu                     /* mask of the token field */
#define FASTSYNC__SEM_WAITER ((uint64_t)1 << 32)             /* one registered waiter */
#define FASTSYNC__SEM_WAITERS ((uint64_t)0xffff << 32)       /* mask of the waiter field */
#define FASTSYNC__SEM_POSTING_ONE ((uint64_t)1 << 48)        /* one post in flight */
#define FASTSYNC__SEM_POSTING ((uint64_t)0x7fff << 48)       /* mask of the posting field */
#define FASTSYNC__SEM_SHARED ((uint64_t)1 << 63)             /* process-shared flag */

FASTSYNC_API uint32_t fastsync__sem_tokens(uint64_t v) { return (uint32_t)(v & FASTSYNC__SEM_TOKENS); }
FASTSYNC_API uint32_t fastsync__sem_waiters(uint64_t v) { return (uint32_t)((v & FASTSYNC__SEM_WAITERS) >> 32); }
FASTSYNC_API uint32_t fastsync__sem_posting(uint64_t v) { return (uint32_t)((v & FASTSYNC__SEM_POSTING) >> 48); }
FASTSYNC_API int fastsync__sem_shared(uint64_t v) { return (v & FASTSYNC__SEM_SHARED) != 0; }

FASTSYNC_API int fastsync_sem_init(fastsync_sem_t *s, unsigned value, int flags)
{
    uint64_t v = value;
    if (value > FASTSYNC_SEM_VALUE_MAX || (flags & ~FASTSYNC_SHARED) != 0) return EINVAL;
    if (flags & FASTSYNC_SHARED) v |= FASTSYNC__SEM_SHARED;
    return fastsync__os2_create(&s->o, v, flags);
}

FASTSYNC_API int fastsync_sem_destroy(fastsync_sem_t *s)
{
    return fastsync__os2_destroy(&s->o, FASTSYNC__SEM_WAITERS, FASTSYNC__SEM_POSTING);
}

FASTSYNC_API int fastsync_sem_post_n(fastsync_sem_t *s, unsigned n)
{
    fastsync__os2_obj_t *o = &s->o;
    uint64_t old, posting = 0;
    ULONG hev;
    bool reloaded = false;
    if (n == 0) return 0;
    fastsync__os2_ready(o);
    /* Read before the RMW, which decides from it whether we post. 0 for a static semaphore
     * whose first sleeper has not created it yet. */
    hev = fastsync__os2_hev_load(o);
    /* relaxed: only a guess for the CAS, which reads the word again atomically. */
    old = fastsync__os2_load(o, FASTSYNC__RELAXED);
    for (;;) {
        /* tokens + n > max, without a wrap for any n and any word (even one holding more
         * than the max, which no call makes); one compare when n is a constant. */
        if (n > (unsigned)FASTSYNC_SEM_VALUE_MAX ||
            fastsync__sem_tokens(old) > (unsigned)FASTSYNC_SEM_VALUE_MAX - n)
            return EOVERFLOW;
        if (fastsync__sem_waiters(old) != 0 && hev == 0 && !reloaded) {
            /* A waiter of a static semaphore created the HEV after our first look.
             * acquire: pairs with the release register RMW in fastsync__sem_wait_slow
             * (or a later RMW: all are), so that waiter's HEV is visible below. Still 0:
             * OS/2 gave none, the waiters poll the word. */
            old = fastsync__os2_load(o, FASTSYNC__ACQUIRE);
            hev = fastsync__os2_hev_load(o);
            reloaded = true;
            continue;
        }
        /* We post if a waiter is registered: then this RMW also raises posting. */
        posting = fastsync__sem_waiters(old) != 0 && hev != 0 ? FASTSYNC__SEM_POSTING_ONE : 0;
        /* release: pairs with the acquire CAS of the wait that takes one of these tokens
         * (fastsync__sem_take, fastsync__sem_wait_slow); failure relaxed: retried. */
        if (fastsync__os2_cas(o, &old, old + n + posting, FASTSYNC__RELEASE, FASTSYNC__RELAXED)) break;
    }
    if (posting != 0) {
        /* A waiter may have taken a token and called destroy by now: destroy waits for
         * our posting - 1, our last access. One post releases every sleeper; those that
         * find no token sleep again. */
        FASTSYNC_OS2_POST(hev, 0);
        fastsync__os2_posted(o, FASTSYNC__SEM_POSTING_ONE);
    }
    return 0;
}

FASTSYNC_API int fastsync_sem_post(fastsync_sem_t *s) { return fastsync_sem_post_n(s, 1); }

/* Takes a token if there is one, given `old` as a fresh guess of the word; retries only
 * while tokens are there, so it never fails spuriously. Returns 0 or EAGAIN. */
FASTSYNC_API int fastsync__sem_take(fastsync_sem_t *s, uint64_t old)
{
    while (fastsync__sem_tokens(old) != 0) {
        /* acquire: pairs with the release CAS in fastsync_sem_post_n that published the
         * token; failure relaxed: `old` is only the next guess. */
        if (fastsync__os2_cas(&s->o, &old, old - 1, FASTSYNC__ACQUIRE, FASTSYNC__RELAXED)) return 0;
    }
    return EAGAIN;
}

/* The spinner's take: as fastsync__sem_take, but gives up (EAGAIN) as soon as `old` shows
 * a registered waiter, or no token: a token posted while someone sleeps is that sleeper's,
 * and a spinner that took it would send the sleeper back to bed. The CAS succeeds only on
 * the very value it checked, so it never takes from a word with waiters. */
FASTSYNC_API int fastsync__sem_take_spin(fastsync_sem_t *s, uint64_t old)
{
    while (fastsync__sem_tokens(old) != 0 && fastsync__sem_waiters(old) == 0) {
        /* acquire: pairs with the release CAS in fastsync_sem_post_n that published the
         * token; failure relaxed: `old` is only the next guess, checked again above. */
        if (fastsync__os2_cas(&s->o, &old, old - 1, FASTSYNC__ACQUIRE, FASTSYNC__RELAXED)) return 0;
    }
    return EAGAIN;
}

FASTSYNC_API int fastsync_sem_trywait(fastsync_sem_t *s)
{
    fastsync__os2_ready(&s->o);
    /* relaxed: a guess for the CAS in fastsync__sem_take. */
    return fastsync__sem_take(s, fastsync__os2_load(&s->o, FASTSYNC__RELAXED));
}

/* The slow path of every wait, entered with no token seen: spin, register, sleep (see the
 * argument above). abstime NULL: no deadline. Returns 0 or ETIMEDOUT. */
FASTSYNC_API int fastsync__sem_wait_slow(fastsync_sem_t *s, clockid_t clock,
                                         const struct timespec *abstime)
{
    fastsync__os2_obj_t *o = &s->o;
    uint64_t old;
    ULONG hev, ms = 0;
    ULONG wiped = 0;  /* posts wiped by our reset since our last sleep */
    bool armed = false, timed_out = false;
    int i;

    /* Spin only while nobody is registered: with a sleeper, a post's token belongs to the
     * thread it wakes (fastsync__sem_take_spin gives up when it sees one). */
    for (i = 0; i < FASTSYNC_SPIN; i++) {
        /* relaxed: a poll; the take below has the acquire. */
        uint64_t v = fastsync__os2_load(o, FASTSYNC__RELAXED);
        if (fastsync__sem_waiters(v) != 0) break;
        if (fastsync__sem_take_spin(s, v) == 0) return 0;
        fastsync__cpu_relax();
    }

    hev = fastsync__os2_hev_need(o); /* 0: OS/2 gave none; poll */
    /* register. release: pairs with the acquire reload in fastsync_sem_post_n, which then
     * sees a HEV we just created. The count itself needs no order: posts read it from
     * their own RMW on this word, and RMWs on one word are totally ordered. */
    old = fastsync__os2_add(o, FASTSYNC__SEM_WAITER, FASTSYNC__RELEASE) + FASTSYNC__SEM_WAITER;
    for (;;) {
        if (fastsync__sem_tokens(old) != 0) {
            /* The baton, passed before the take+leave while we are still registered: our
             * reset wiped a post, and the value this take+leave would replace leaves tokens
             * and waiters behind (tokens > 1, waiters > 1 before it). Once: that post comes
             * after our reset, whatever the RMW then finds. */
            if (wiped != 0 && hev != 0 && fastsync__sem_tokens(old) > 1 &&
                fastsync__sem_waiters(old) > 1) {
                FASTSYNC_OS2_POST(hev, 1);
                wiped = 0;
            }
            /* take+leave: our last access to the semaphore. acquire: pairs with the release
             * CAS of the post that published the token. failure relaxed: loop with the
             * fresh value. */
            if (!fastsync__os2_cas(o, &old, old - FASTSYNC__SEM_WAITER - 1, FASTSYNC__ACQUIRE,
                                   FASTSYNC__RELAXED))
                continue;
            return 0;
        }
        if (timed_out) {
            /* leave, only if still no token (else take it above: never lose one that a post
             * meant for us). relaxed: no token changes hands. */
            if (fastsync__os2_cas(o, &old, old - FASTSYNC__SEM_WAITER, FASTSYNC__RELAXED,
                                  FASTSYNC__RELAXED))
                return ETIMEDOUT;
            continue;
        }
        if (!armed && hev != 0) {
            /* reset, then read: from here on a token that arrives is posted for us */
            wiped = fastsync__os2_reset(hev);
            armed = true;
            /* relaxed: a post ordered before the reset happens-before this load (the kernel
             * serializes the two calls), so coherence makes it see that post's token. */
            old = fastsync__os2_load(o, FASTSYNC__RELAXED);
            continue;
        }
        if (fastsync__os2_timeout(clock, abstime, &ms) == ETIMEDOUT) {
            timed_out = true;
            continue;
        }
        switch (fastsync__os2_sleep(hev, ms)) {
        case FASTSYNC__OS2_WOKEN: /* the HEV is posted: reset before sleeping again */
            armed = false;
            wiped = 0;
            break;
        case FASTSYNC__OS2_BROKEN: /* destroyed under us (the caller's bug): poll */
            hev = 0;
            wiped = 0;
            break;
        default: /* a timeout (look at the clock), ERROR_INTERRUPT, a poll: still armed */
            break;
        }
        /* relaxed: only decides what to try next; the token is taken with acquire. */
        old = fastsync__os2_load(o, FASTSYNC__RELAXED);
    }
}

FASTSYNC_API int fastsync_sem_wait(fastsync_sem_t *s)
{
    uint64_t old;
    fastsync__os2_ready(&s->o);
    /* relaxed: a guess for the CAS in fastsync__sem_take (one CAS when a token is there). */
    old = fastsync__os2_load(&s->o, FASTSYNC__RELAXED);
    if (fastsync__sem_take(s, old) == 0) return 0;
    return fastsync__sem_wait_slow(s, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_sem_clockwait(fastsync_sem_t *s, clockid_t clock,
                                        const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    if (fastsync_sem_trywait(s) == 0) return 0;
    r = fastsync__deadline_check(clock, abstime);
    if (r != 0) return r;
    return fastsync__sem_wait_slow(s, clock, abstime);
}

FASTSYNC_API int fastsync_sem_timedwait(fastsync_sem_t *s, const struct timespec *abs_monotonic)
{
    return fastsync_sem_clockwait(s, CLOCK_MONOTONIC, abs_monotonic);
}

FASTSYNC_API unsigned fastsync_sem_getvalue(const fastsync_sem_t *s)
{
    fastsync__os2_ready(&s->o);
    /* relaxed: a snapshot that orders nothing (as sem_getvalue). */
    return fastsync__sem_tokens(fastsync__os2_load(&s->o, FASTSYNC__RELAXED));
}

/* ======================================================================================
 * Manual-reset event
 *
 * State: one 64-bit word plus the HEV. The event's own set/reset state lives in the word;
 * the HEV only carries wakeups. Sleepers are counted by "round": a round ends with the
 * set that finds sleepers registered; that set moves them from cur to old.
 *   bit  0       SET      the event is set: waits return at once
 *   bit  1       shared   FASTSYNC_SHARED given at init; never changes afterwards
 *   bits 2..13   cur      waiters registered in the current round
 *   bits 14..25  old      waiters of ended rounds that have not left yet: each is owed a
 *                         wakeup and returns 0 once it runs
 *   bits 26..37  posting  posts in flight (see "Posts in flight")
 *   bits 38..63  round    rounds ended (mod 2^26)
 * OS/2 runs at most 4095 threads in the whole system, so no 12-bit count can overflow.
 * The round wraps: a waiter would misread its round only if exactly a multiple of 2^26
 * (67,108,864) rounds ended between two of its looks at the word. Each round end is a set
 * that found a waiter joined since the previous one and made a DosPostEventSem, so that
 * needs 2^26 join/set/post cycles of other threads while the waiter stays unscheduled:
 * over a minute even at one cycle per microsecond, far more than the kernel calls allow.
 *
 * Transitions (each one RMW):
 *   set     not SET -> SET; if cur > 0: old += cur, cur = 0, round + 1, posting + 1, then
 *           post the HEV, then posting - 1 (one more RMW: the post's last access)
 *   reset   SET -> not SET (fetch_and); no kernel call
 *   join    cur + 1, only while not SET (a waiter about to sleep; remembers the round)
 *   leave   old - 1 (its round ended: return 0) or cur - 1 (timed out in its round)
 * A waiter knows which count holds it: its round ended iff the round field changed.
 * set on a set event is a fence and a load; wait on a set event one load.
 *
 * Why the HEV never swallows a wakeup. Only two "settles" reset the HEV, each made by a
 * waiter that is still counted in the word:
 *   last settle:     by an owed waiter L that reads old = 1 (itself alone), before its
 *                    leave: reset the HEV ; then, before each leave RMW it tries, if the
 *                    value v that RMW would replace has old(v) > 1: post the HEV (once)
 *   current settle:  by a waiter of the current round whose sleep returned 0 with nothing
 *                    changed while old was 0 (the HEV was left posted: a stray post, or a
 *                    post for owed waiters that have all left): reset the HEV ; read the
 *                    word ; if old > 0: post the HEV
 * Claim: a waiter W owed a wakeup (in old) gets past DosWaitEventSem. The set S that ended
 * W's round moved W to old in its RMW and then posted. If W was blocked, the post released
 * it (edge-triggered). Else W is on its way into DosWaitEventSem and returns at once if the
 * HEV is still posted then. A reset R in between is part of a settle, and R comes after
 * S's post in the HEV's order, so S's RMW happens-before everything the settler does after
 * R (the kernel serializes the calls): every value of the word it reads after R shows W in
 * old, as W has not left. A current settle's read so sees old > 0 and posts after R. The
 * last settler L (not W: L read old = 1 before R, W not among them, so S's RMW came after
 * that read) tries its leave only on values read after R, which count L and W: old > 1,
 * so L posts after R and before it leaves. By the same argument for that post, at any
 * moment after S either the HEV is posted, or a settle that will post is between its
 * reset and its post, or W has been released. A waiter of the current round needs no post
 * but S's: S follows its join. A post after R that was not needed (the waiters in old(v)
 * beside L came after R) only makes waiters look at the word once more.
 * Why destroy never closes the HEV under a waiter: every reset and every post a waiter
 * makes happens while it is counted (cur or old), and destroy says EBUSY while cur or old
 * is not 0; a waiter's leave RMW is its last access to the event.
 * The cost: while owed waiters remain (old > 0), the HEV is left posted, so a waiter of
 * the new round cannot sleep on it yet; it yields (fastsync__os2_yield) until they have
 * run. This lasts as long as the released waiters take to be scheduled.
 *
 * Memory ordering as in fastsync.h: set's release CAS pairs with the acquire loads and
 * CASes of wait and is_set; every change of the word is an RMW, so a waiter that sees a
 * later value (the new round) also synchronizes with the set. The reset / check / wait
 * handshake: reset is an RMW then a seq_cst fence; set starts with a seq_cst fence, then
 * loads the word and stops if it reads SET. If that load read a SET older than the reset,
 * set's fence precedes reset's in the total order of seq_cst fences and the resetter's
 * check of its condition sees the setter's write; else set saw the reset and sets the
 * event itself. Without atomics the mutex orders the two locked sections the same way.
 * ====================================================================================== */

typedef struct fastsync_event {
    fastsync__os2_obj_t o; /* private: use the functions */
} fastsync_event_t;

#define FASTSYNC__EV_SET ((uint64_t)1)                     /* the event is set */
#define FASTSYNC__EV_SHARED ((uint64_t)2)                  /* process-shared flag */
#define FASTSYNC__EV_CUR_ONE ((uint64_t)1 << 2)            /* one waiter of this round */
#define FASTSYNC__EV_CUR ((uint64_t)0xfff << 2)            /* mask of cur */
#define FASTSYNC__EV_OLD_ONE ((uint64_t)1 << 14)           /* one owed waiter */
#define FASTSYNC__EV_OLD ((uint64_t)0xfff << 14)           /* mask of old */
#define FASTSYNC__EV_POSTING_ONE ((uint64_t)1 << 26)       /* one post in flight */
#define FASTSYNC__EV_POSTING ((uint64_t)0xfff << 26)       /* mask of posting */
#define FASTSYNC__EV_ROUND_ONE ((uint64_t)1 << 38)         /* one round */
#define FASTSYNC__EV_ROUND (~(((uint64_t)1 << 38) - 1))    /* mask of round */

#define FASTSYNC_EVENT_INIT(set) { FASTSYNC__OS2_OBJ_INIT((set) ? FASTSYNC__EV_SET : 0) }

FASTSYNC_API uint64_t fastsync__ev_cur(uint64_t v) { return (v & FASTSYNC__EV_CUR) >> 2; }
FASTSYNC_API uint64_t fastsync__ev_old(uint64_t v) { return (v & FASTSYNC__EV_OLD) >> 14; }
FASTSYNC_API uint64_t fastsync__ev_posting(uint64_t v) { return (v & FASTSYNC__EV_POSTING) >> 26; }

FASTSYNC_API int fastsync_event_init(fastsync_event_t *e, bool set, int flags)
{
    uint64_t v = set ? FASTSYNC__EV_SET : 0;
    if ((flags & ~FASTSYNC_SHARED) != 0) return EINVAL;
    if (flags & FASTSYNC_SHARED) v |= FASTSYNC__EV_SHARED;
    return fastsync__os2_create(&e->o, v, flags);
}

FASTSYNC_API int fastsync_event_destroy(fastsync_event_t *e)
{
    return fastsync__os2_destroy(&e->o, FASTSYNC__EV_CUR | FASTSYNC__EV_OLD, FASTSYNC__EV_POSTING);
}

FASTSYNC_API void fastsync_event_set(fastsync_event_t *e)
{
    fastsync__os2_obj_t *o = &e->o;
    uint64_t old, cur, nv, posting = 0;
    ULONG hev;
    bool reloaded = false;
    fastsync__os2_ready(o);
#if defined(FASTSYNC__OS2_TSAN)
    /* Under ThreadSanitizer, an RMW in place of fence + load. acq_rel: if it comes after
     * reset's RMW it sees the reset; if before, reset's acq_rel RMW reads from it (or a
     * later RMW) and the caller's writes before set are visible to the resetter. */
    old = fastsync__os2_add(o, 0, FASTSYNC__ACQ_REL);
#else
    /* seq_cst fence: the setter's half of the reset/check handshake; pairs with the fence
     * at the end of fastsync_event_reset (see above). */
    fastsync__os2_fence();
    /* relaxed: the fence above orders it; SET seen means nothing to do. */
    old = fastsync__os2_load(o, FASTSYNC__RELAXED);
#endif
    if (old & FASTSYNC__EV_SET) return;
    hev = fastsync__os2_hev_load(o); /* before the RMW, which decides from it whether we post */
    for (;;) {
        if (old & FASTSYNC__EV_SET) return;
        cur = fastsync__ev_cur(old);
        if (cur != 0 && hev == 0 && !reloaded) {
            /* A waiter of a static event created the HEV after our first look. acquire:
             * pairs with the release join in fastsync__event_wait_slow (or a later RMW).
             * Still 0: OS/2 gave none, the waiters poll the word. */
            old = fastsync__os2_load(o, FASTSYNC__ACQUIRE);
            hev = fastsync__os2_hev_load(o);
            reloaded = true;
            continue;
        }
        nv = old | FASTSYNC__EV_SET;
        if (cur != 0)
            nv = nv - cur * FASTSYNC__EV_CUR_ONE + cur * FASTSYNC__EV_OLD_ONE + FASTSYNC__EV_ROUND_ONE;
        /* We post if the round had waiters: then this RMW also raises posting. */
        posting = cur != 0 && hev != 0 ? FASTSYNC__EV_POSTING_ONE : 0;
        /* release: pairs with the acquire loads and CASes in wait and is_set that read this
         * value or a later one. failure relaxed: retried. */
        if (fastsync__os2_cas(o, &old, nv + posting, FASTSYNC__RELEASE, FASTSYNC__RELAXED)) break;
    }
    if (posting != 0) {
        /* A waiter may have returned and called destroy by now: destroy waits for our
         * posting - 1, our last access. */
        FASTSYNC_OS2_POST(hev, 0);
        fastsync__os2_posted(o, FASTSYNC__EV_POSTING_ONE);
    }
}

FASTSYNC_API void fastsync_event_reset(fastsync_event_t *e)
{
    fastsync__os2_ready(&e->o);
#if defined(FASTSYNC__OS2_TSAN)
    /* acq_rel: pairs with the acq_rel RMW that replaces set's fence under TSan. */
    (void)fastsync__os2_and(&e->o, ~FASTSYNC__EV_SET, FASTSYNC__ACQ_REL);
#else
    /* relaxed RMW: SET -> not SET, the rest unchanged; ordering comes from the fence. */
    (void)fastsync__os2_and(&e->o, ~FASTSYNC__EV_SET, FASTSYNC__RELAXED);
#endif
    /* seq_cst fence: orders the reset before the caller's next check of its condition;
     * pairs with the fence at the start of fastsync_event_set. */
    fastsync__os2_fence();
}

FASTSYNC_API bool fastsync_event_is_set(const fastsync_event_t *e)
{
    fastsync__os2_ready(&e->o);
    /* acquire: pairs with the release CAS in fastsync_event_set. */
    return (fastsync__os2_load(&e->o, FASTSYNC__ACQUIRE) & FASTSYNC__EV_SET) != 0;
}

/* The current settle (see above): resets the HEV, then posts it again if a waiter is owed a
 * wakeup. Made by a waiter of the current round, counted in cur. */
FASTSYNC_API void fastsync__event_settle(fastsync__os2_obj_t *o, ULONG hev)
{
    (void)fastsync__os2_reset(hev);
    /* relaxed: a set whose post the reset wiped happens-before this load (the kernel
     * serializes post and reset), so coherence makes it see that set's RMW or later. */
    if (fastsync__ev_old(fastsync__os2_load(o, FASTSYNC__RELAXED)) != 0) FASTSYNC_OS2_POST(hev, 1);
}

/* The slow path of every event wait, entered with the event seen not set. Returns 0 once
 * the event is seen set or the round it joined has ended; ETIMEDOUT. */
FASTSYNC_API int fastsync__event_wait_slow(fastsync_event_t *e, clockid_t clock,
                                           const struct timespec *abstime)
{
    fastsync__os2_obj_t *o = &e->o;
    uint64_t old, round;
    ULONG hev, ms = 0;
    bool timed_out = false, settled = false, reposted = false;
    unsigned futile = 0;
    int slept;

    hev = fastsync__os2_hev_need(o); /* 0: OS/2 gave none; poll */
    /* acquire: a SET read here is returned on; pairs with set's release CAS. */
    old = fastsync__os2_load(o, FASTSYNC__ACQUIRE);
    do {
        if (old & FASTSYNC__EV_SET) return 0;
        /* join. release: pairs with the acquire reload in fastsync_event_set, which then
         * sees a HEV we just created; acquire (of acq_rel, and on failure): a SET read here
         * is returned on, and pairs with set's release CAS. */
    } while (!fastsync__os2_cas(o, &old, old + FASTSYNC__EV_CUR_ONE, FASTSYNC__ACQ_REL,
                                FASTSYNC__ACQUIRE));
    round = old & FASTSYNC__EV_ROUND;
    old += FASTSYNC__EV_CUR_ONE;
    for (;;) {
        if ((old & FASTSYNC__EV_ROUND) != round) {
            /* Our round ended: we are owed (counted in old). The last one settles the HEV
             * before it leaves, while still counted (see above). */
            if (hev != 0 && !settled && fastsync__ev_old(old) == 1) {
                (void)fastsync__os2_reset(hev);
                settled = true;
                /* relaxed: a set whose post the reset wiped happens-before this load (the
                 * kernel serializes post and reset), so coherence makes it see that set's
                 * RMW or later; the leave below has the acquire. */
                old = fastsync__os2_load(o, FASTSYNC__RELAXED);
                continue;
            }
            if (settled && !reposted && fastsync__ev_old(old) > 1) {
                FASTSYNC_OS2_POST(hev, 1); /* owed waiters beside us: our reset may have wiped their post */
                reposted = true;
            }
            /* leave old: our last access to the event. acquire: pairs with the release CAS
             * of the set that ended our round (this RMW reads its value or a later one). */
            if (!fastsync__os2_cas(o, &old, old - FASTSYNC__EV_OLD_ONE, FASTSYNC__ACQUIRE,
                                   FASTSYNC__ACQUIRE))
                continue;
            return 0;
        }
        if (timed_out) {
            /* leave cur, only if the round has not ended (else return 0 above, after an
             * acquire CAS). relaxed: nothing is published or consumed. */
            if (fastsync__os2_cas(o, &old, old - FASTSYNC__EV_CUR_ONE, FASTSYNC__RELAXED,
                                  FASTSYNC__RELAXED))
                return ETIMEDOUT;
            continue;
        }
        if (fastsync__os2_timeout(clock, abstime, &ms) == ETIMEDOUT) {
            timed_out = true;
            continue;
        }
        slept = fastsync__os2_sleep(hev, ms);
        if (slept == FASTSYNC__OS2_BROKEN) hev = 0; /* destroyed under us: poll */
        /* acquire: pairs with set's release CAS. */
        old = fastsync__os2_load(o, FASTSYNC__ACQUIRE);
        if (slept == FASTSYNC__OS2_WOKEN && (old & FASTSYNC__EV_ROUND) == round) {
            /* Woken with nothing changed for us: the HEV is posted for owed waiters, or
             * left posted. Nobody owed: settle it so we can sleep; else let them run. */
            if (fastsync__ev_old(old) == 0) {
                fastsync__event_settle(o, hev);
                futile = 0;
            } else {
                fastsync__os2_yield(futile++);
            }
            /* acquire: pairs with set's release CAS. */
            old = fastsync__os2_load(o, FASTSYNC__ACQUIRE);
        }
    }
}

FASTSYNC_API void fastsync_event_wait(fastsync_event_t *e)
{
    fastsync__os2_ready(&e->o);
    /* acquire: pairs with the release CAS in fastsync_event_set. */
    if ((fastsync__os2_load(&e->o, FASTSYNC__ACQUIRE) & FASTSYNC__EV_SET) == 0)
        (void)fastsync__event_wait_slow(e, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_event_clockwait(fastsync_event_t *e, clockid_t clock,
                                          const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    fastsync__os2_ready(&e->o);
    /* acquire: pairs with the release CAS in fastsync_event_set. */
    if (fastsync__os2_load(&e->o, FASTSYNC__ACQUIRE) & FASTSYNC__EV_SET) return 0;
    r = fastsync__deadline_check(clock, abstime);
    if (r != 0) return r;
    return fastsync__event_wait_slow(e, clock, abstime);
}

FASTSYNC_API int fastsync_event_timedwait(fastsync_event_t *e, const struct timespec *abs_monotonic)
{
    return fastsync_event_clockwait(e, CLOCK_MONOTONIC, abs_monotonic);
}

/* ======================================================================================
 * Process-shared objects: what another process does before and after using one
 * ====================================================================================== */

/* Whether the object was made with FASTSYNC_SHARED; `bit` is where its word keeps that. */
FASTSYNC_API int fastsync__os2_is_shared(const fastsync__os2_obj_t *o, uint64_t bit)
{
#if defined(FASTSYNC_OS2_NO_ATOMICS)
    (void)bit;
    return (o->flags & FASTSYNC__OS2_SHARED_OBJ) != 0; /* set at init, never changed */
#else
    /* relaxed: the flag is set at init and never changes. */
    return (fastsync__os2_load(o, FASTSYNC__RELAXED) & bit) != 0;
#endif
}

/* ERROR_TOO_MANY_OPENS (not in every toolkit's bseerr.h). */
#define FASTSYNC__OS2_TOO_MANY_OPENS 291

/* Opens (open != 0) or closes, in this process, the semaphores of a shared object. */
FASTSYNC_API int fastsync__os2_attach(fastsync__os2_obj_t *o, uint64_t shared_bit, int open)
{
    ULONG hev = fastsync__os2_hev_load(o);
    APIRET rc;
#if defined(FASTSYNC_OS2_NO_ATOMICS)
    ULONG hmtx = o->hmtx;
    if (!fastsync__os2_is_shared(o, shared_bit) || hmtx == 0 || hev == 0) return EINVAL;
    if (open) {
        rc = DosOpenMutexSem(NULL, &hmtx);
        if (rc != NO_ERROR) return rc == FASTSYNC__OS2_TOO_MANY_OPENS ? EAGAIN : EINVAL;
    } else {
        rc = DosCloseMutexSem(hmtx);
        if (rc == ERROR_SEM_BUSY) return EBUSY;
        if (rc != NO_ERROR) return EINVAL;
    }
#else
    if (!fastsync__os2_is_shared(o, shared_bit) || hev == 0) return EINVAL;
#endif
    if (open) {
        rc = DosOpenEventSem(NULL, &hev);
        if (rc == NO_ERROR) return 0;
#if defined(FASTSYNC_OS2_NO_ATOMICS)
        (void)DosCloseMutexSem(hmtx);
#endif
        return rc == FASTSYNC__OS2_TOO_MANY_OPENS ? EAGAIN : EINVAL;
    }
    rc = DosCloseEventSem(hev);
    if (rc == ERROR_SEM_BUSY) return EBUSY;
    return rc == NO_ERROR ? 0 : EINVAL;
}

FASTSYNC_API int fastsync_os2_sem_open(fastsync_sem_t *s)
{
    return fastsync__os2_attach(&s->o, FASTSYNC__SEM_SHARED, 1);
}

FASTSYNC_API int fastsync_os2_sem_close(fastsync_sem_t *s)
{
    return fastsync__os2_attach(&s->o, FASTSYNC__SEM_SHARED, 0);
}

FASTSYNC_API int fastsync_os2_event_open(fastsync_event_t *e)
{
    return fastsync__os2_attach(&e->o, FASTSYNC__EV_SHARED, 1);
}

FASTSYNC_API int fastsync_os2_event_close(fastsync_event_t *e)
{
    return fastsync__os2_attach(&e->o, FASTSYNC__EV_SHARED, 0);
}

#ifdef __cplusplus
}
#endif

#endif /* FASTSYNC_OS2_H */
