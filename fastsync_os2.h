/* SPDX-License-Identifier: MIT */
/* fastsync_os2.h - the OS/2 backend of fastsync.h: its seam (wait on a word while it holds
 * a value, wake its waiters) on OS/2 semaphores, and its atomics where the compiler has none.
 *
 * Include fastsync.h, not this file: fastsync.h includes it (twice: its configuration,
 * then its code) when __OS2__ is defined (GCC for OS/2 with kLIBC, OpenWatcom with
 * -bt=os2). Copy both headers into the project. The API, its guarantees and its error codes
 * are fastsync.h's (its manual is the reference); the semaphore, the event, the mutex and the
 * condition variable are the same code on every backend. What OS/2 changes:
 *
 * Build: GCC for OS/2 (kLIBC):  gcc -std=c11 -Zmt app.c       C11 atomics
 *        OpenWatcom:             wcl386 -bt=os2 -za99 -bm app.c  no atomics (below)
 *
 *   - Sleeping: OS/2 has no wait on an address, so a waiter queues itself in a wait table
 *     keyed by the word's address and sleeps on an event semaphore (HEV) of its own, made
 *     for the sleep (DosCreateEventSem) and closed after it; a wake unqueues up to n waiters
 *     of that address and posts each one's HEV. A sleep costs a table lock, two extra kernel
 *     calls for the HEV, and the wait; a wake a table lock and one post per waiter. A sleep
 *     lasts a second at most, then the waiter looks at its word and sleeps again (below:
 *     what a wake cannot reach costs a second, never the wakeup). The fast
 *     paths (a post with no waiter, a wait that finds a token, a lock that finds the mutex
 *     unlocked...) make no kernel call, as on every backend.
 *   - The table is one for the whole system, in named shared memory
 *     (\SHAREMEM\FASTSYNC\TABLE.V1, made by the first process that needs it; 64 buckets of
 *     a mutex semaphore and a list, and 4096 waiter slots: OS/2 runs at most 4095 threads).
 *     So one copy of the header, or several, in any number of files and processes, meet
 *     in it: nothing to define, link or open.
 *   - FASTSYNC_SHARED: yes. A shared object must lie in memory that OS/2 maps at the same
 *     address in every process using it (DosAllocSharedMem, DosGetSharedMem,
 *     DosGetNamedSharedMem: the shared arena), since the table knows it by its address.
 *     A private object's waiters are also keyed by their process, so two processes'
 *     private objects at the same address never wake each other.
 *   - Without atomics (OpenWatcom, or FASTSYNC_OS2_NO_ATOMICS): every atomic operation of
 *     fastsync.h runs under the table's mutex semaphore for the word's address (recursive,
 *     shared by all processes, so shared objects work too): two kernel calls per operation.
 *     Correct, not fast; spinning is off by default (FASTSYNC_SPIN 0, FASTSYNC_SPIN_YIELDS 0).
 *   - When OS/2 cannot give what a sleep needs (the table's memory or semaphores, a waiter
 *     slot, an HEV), the waiter polls its word every system tick instead, keeping its
 *     deadline; without atomics an operation that finds no table retries every tick.
 *   - Deadlines: both clocks are read with the C library's clock_gettime, as the caller
 *     reads them (kLIBC takes CLOCK_MONOTONIC from the high-resolution timer,
 *     DosTmrQueryTime). With FASTSYNC_OS2_TIMER_CLOCK (automatic with OpenWatcom, or where
 *     <time.h> has no CLOCK_MONOTONIC) CLOCK_MONOTONIC is DosTmrQueryTime / DosTmrQueryFreq
 *     read directly (counted from boot, resolution 0.84 us) and CLOCK_REALTIME
 *     gettimeofday() (OpenWatcom: time(), whole seconds); make monotonic deadlines with
 *     fastsync_deadline_in() then. A sleep waits in DosWaitEventSem with the time left in
 *     milliseconds, rounded up (never early), at most a second at a time (then the waiter
 *     looks at its word and the clock again: so a change of the real-time clock is seen
 *     within a second, and a wake that could not reach it costs a second, not the wakeup);
 *     OS/2 rounds timeouts up to its ~31 ms tick. ERROR_INTERRUPT only makes it look again.
 *   - Waits are not cancellation points (DosWaitEventSem is none), and no call is
 *     async-signal-safe (a wake locks the table).
 *   - A process that dies asleep leaves its waiter slot queued for good (a wake passes over
 *     it: it cannot open the dead process's HEV); 4096 such deaths would leave sleepers
 *     polling. A later process that gets the dead one's process id and waits or wakes at
 *     the same address of a private object matches such a slot as its own: its wake posts
 *     the dead process's HEV handle in its own handle space. Where that is no handle
 *     (ERROR_INVALID_HANDLE) the wake passes over the slot and goes on to a live waiter
 *     (test/os2/os2_table.c); where this process happens to have an event semaphore of
 *     that number, that semaphore gets a spurious post (a fastsync waiter's looks at its
 *     word again; a semaphore of the program's own sees one post too many) and the wake is
 *     spent, its live waiter looking again within its second. Not seen (the double is one
 *     process; no OS/2 machine here).
 *
 * Configuration (define before including fastsync.h)
 *   FASTSYNC_OS2_NO_ATOMICS  the path without <stdatomic.h> (automatic with OpenWatcom,
 *                            __WATCOMC__, and compilers that define __STDC_NO_ATOMICS__)
 *   FASTSYNC_OS2_TIMER_CLOCK read CLOCK_MONOTONIC from DosTmrQueryTime instead of the C
 *                            library's clock_gettime (for a kLIBC older than clock_gettime)
 *   FASTSYNC_OS2_WAIT(hev, ms)  replaces DosWaitEventSem (an APIRET expression; the tests
 *                            widen the window before the sleep with it)
 * If you include <os2.h> before fastsync.h, define INCL_DOSSEMAPHORES, INCL_DOSPROCESS,
 * INCL_DOSPROFILE, INCL_DOSMEMMGR and INCL_DOSERRORS first (or INCL_BASE and INCL_ERRORS).
 */
#if !defined(FASTSYNC_H)
#include "fastsync.h" /* included on its own: fastsync.h includes it where it belongs */
#elif !defined(FASTSYNC__OS2_CONFIG)
#define FASTSYNC__OS2_CONFIG 1
/* ======================================================================================
 * Part 1 (fastsync.h includes it with its headers): OS/2's headers, clocks, atomics
 * ====================================================================================== */

#if !defined(FASTSYNC_OS2_NO_ATOMICS) && !defined(__cplusplus) &&                           \
    (defined(__WATCOMC__) || defined(__STDC_NO_ATOMICS__) || !defined(__STDC_VERSION__) || \
     __STDC_VERSION__ < 201112L)
#define FASTSYNC_OS2_NO_ATOMICS 1
#endif
#if defined(FASTSYNC_OS2_NO_ATOMICS)
#define FASTSYNC__LOCKED_ATOMICS 1 /* fastsync.h: the atomics are ours (part 2) */
#ifndef FASTSYNC_SPIN
#define FASTSYNC_SPIN 0 /* every poll would take the table's lock: two kernel calls */
#endif
#ifndef FASTSYNC_SPIN_YIELDS
#define FASTSYNC_SPIN_YIELDS 0
#endif
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
#ifndef INCL_DOSMEMMGR
#define INCL_DOSMEMMGR
#endif
#ifndef INCL_DOSERRORS
#define INCL_DOSERRORS
#endif
#include <os2.h>
#include <stddef.h>
#if !defined(__WATCOMC__)
#include <sys/time.h> /* gettimeofday, for FASTSYNC_OS2_TIMER_CLOCK */
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

#elif !defined(FASTSYNC__OS2_BACKEND)
#define FASTSYNC__OS2_BACKEND 1
/* ======================================================================================
 * Part 2 (fastsync.h includes it as its backend): clocks, the wait table, the seam
 * ====================================================================================== */

/* Reads `clock` (CLOCK_MONOTONIC or CLOCK_REALTIME). The conversions round down, so the
 * time read is never ahead of the true time, and a deadline it says has passed has. */
FASTSYNC_API void fastsync__clock_now(clockid_t clock, struct timespec *t)
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
        q.ulLo = 0;
        q.ulHi = 0;
        (void)DosTmrQueryFreq(&hz);
        (void)DosTmrQueryTime(&q);
        if (hz == 0) hz = 1;
        uint64_t ticks = ((uint64_t)(q.ulHi & 0xffffffffUL) << 32) | (uint64_t)(q.ulLo & 0xffffffffUL);
        t->tv_sec = (time_t)(ticks / hz);
        /* (ticks % hz) < hz < 2^32, so the product fits in 64 bits. */
        t->tv_nsec = (long)((ticks % hz) * (uint64_t)FASTSYNC__NSEC_PER_SEC / hz);
    }
#endif
}

/* ======================================================================================
 * The wait table
 *
 * One for the whole system, in named shared memory: 64 buckets, each a mutex semaphore
 * (DC_SEM_SHARED) and a ring of waiter slots, and a pool of 4096 slots under a mutex
 * semaphore of its own. A slot names the word's address, the waiter's process, whether the
 * object is shared, and the waiter's HEV; slots are linked by index (the memory is at the
 * same address in every process, but indices say so without relying on it).
 *
 * wait: take a slot and make an HEV; lock the bucket; compare the word; if it still holds
 *   the expected value, queue the slot and unlock, then sleep on the HEV; lock again, and
 *   unqueue the slot unless a wake did (a timeout and a wake can cross: then the waiter was
 *   woken and says so); unlock; close the HEV, free the slot.
 * wake: lock the bucket; for up to n queued slots of the same address (and, for a private
 *   object, the same process; for a shared one, any process) unqueue, mark woken and post
 *   the slot's HEV (from another process: open it, post, close); unlock.
 * The pairing: the waker changes the word before it locks the bucket, the waiter compares
 * after it locks it. If the waker locks first, its unlock happens-before the waiter's lock
 * and the compare sees the new word; if the waiter locks first, it is queued before it
 * unlocks, and the wake finds it and posts. A post is made under the bucket's lock and the
 * waiter closes its HEV only after it has locked the bucket again, so a post never reaches
 * a closed (or reused) handle. (The POSIX backend's table, with OS/2 semaphores.)
 *
 * Attaching: each file that includes the header finds the table the first time it needs
 * it: holding the named mutex \SEM32\FASTSYNC\TABLE.V1 (so that no two threads, of one
 * process or two, build it at once), it gets the named memory, or allocates and builds it,
 * and opens the table's semaphores for its process.
 * A file that cannot attach (OS/2 out of semaphores or memory at its first use) polls in
 * its waits and reaches no sleeper with its wakes; so that such a wake is late, never lost,
 * every sleep lasts at most FASTSYNC__OS2_SLICE_MS (a second), after which the waiter looks
 * at its word again. The same bound covers a wake that cannot open another process's HEV.
 * ====================================================================================== */

#ifndef FASTSYNC__OS2_BUCKETS
#define FASTSYNC__OS2_BUCKETS 64u /* a power of two (a GenMC harness sets 1) */
#endif
#ifndef FASTSYNC__OS2_SLOTS
#define FASTSYNC__OS2_SLOTS 4096u /* OS/2 runs at most 4095 threads in all */
#endif
#define FASTSYNC__OS2_TABLE_NAME "\\SHAREMEM\\FASTSYNC\\TABLE.V1"
#define FASTSYNC__OS2_INIT_NAME "\\SEM32\\FASTSYNC\\TABLE.V1"

struct fastsync__os2_slot {
    uintptr_t word; /* the address waited on */
    ULONG pid;      /* the waiter's process */
    ULONG shared;   /* the object is FASTSYNC_SHARED: any process's wake matches */
    ULONG hev;      /* the waiter's HEV (DC_SEM_SHARED) */
    ULONG woken;    /* set by the wake that unqueued it, under the bucket's lock */
    ULONG next, prev; /* ring of the bucket (slots 0..63 are the heads); free list: next */
};

struct fastsync__os2_table {
    ULONG lock[FASTSYNC__OS2_BUCKETS]; /* HMTX of each bucket */
    ULONG pool_lock;                   /* HMTX of the free list */
    ULONG free;                        /* first free slot; 0: none (slot 0 is a head) */
    struct fastsync__os2_slot slot[FASTSYNC__OS2_BUCKETS + FASTSYNC__OS2_SLOTS];
};

/* Takes a mutex semaphore of the table. ERROR_INTERRUPT: again. ERROR_SEM_OWNER_DIED (a
 * process died holding it): it is ours now; the list it guards is changed by a few stores
 * that a death leaves half-done only if it struck inside them. */
FASTSYNC_API void fastsync__os2_lock(ULONG hmtx)
{
    APIRET rc;
    do rc = DosRequestMutexSem(hmtx, SEM_INDEFINITE_WAIT);
    while (rc == ERROR_INTERRUPT);
}

FASTSYNC_API void fastsync__os2_unlock(ULONG hmtx) { (void)DosReleaseMutexSem(hmtx); }

FASTSYNC_API ULONG fastsync__os2_pid(void)
{
    PTIB tib = NULL;
    PPIB pib = NULL;
    (void)DosGetInfoBlocks(&tib, &pib);
    return pib != NULL ? pib->pib_ulpid : 0;
}

FASTSYNC_API void fastsync__os2_unqueue(struct fastsync__os2_table *t, ULONG i)
{
    struct fastsync__os2_slot *s = &t->slot[i];
    t->slot[s->prev].next = s->next;
    t->slot[s->next].prev = s->prev;
}

FASTSYNC_API void fastsync__os2_free_slot(struct fastsync__os2_table *t, ULONG i)
{
    fastsync__os2_lock(t->pool_lock);
    t->slot[i].next = t->free;
    t->free = i;
    fastsync__os2_unlock(t->pool_lock);
}

/* Builds the table in fresh memory: its semaphores, the rings, the free list. 0 or an
 * APIRET (then every semaphore made is closed again). */
FASTSYNC__COLD APIRET fastsync__os2_build(struct fastsync__os2_table *t)
{
    APIRET rc = DosCreateMutexSem(NULL, &t->pool_lock, DC_SEM_SHARED, FALSE);
    ULONG i, made = 0;
    for (; rc == NO_ERROR && made < FASTSYNC__OS2_BUCKETS; made++)
        rc = DosCreateMutexSem(NULL, &t->lock[made], DC_SEM_SHARED, FALSE);
    if (rc != NO_ERROR) {
        while (made-- > 1) (void)DosCloseMutexSem(t->lock[made - 1]);
        if (t->pool_lock != 0) (void)DosCloseMutexSem(t->pool_lock);
        return rc;
    }
    for (i = 0; i < FASTSYNC__OS2_BUCKETS; i++) t->slot[i].next = t->slot[i].prev = i;
    for (i = FASTSYNC__OS2_BUCKETS; i + 1 < FASTSYNC__OS2_BUCKETS + FASTSYNC__OS2_SLOTS; i++)
        t->slot[i].next = i + 1;
    t->slot[i].next = 0;
    t->free = FASTSYNC__OS2_BUCKETS;
    return NO_ERROR;
}

/* Opens the table's semaphores for this process (another process built it). */
FASTSYNC__COLD APIRET fastsync__os2_open(struct fastsync__os2_table *t)
{
    ULONG h = t->pool_lock, i;
    APIRET rc = DosOpenMutexSem(NULL, &h);
    for (i = 0; rc == NO_ERROR && i < FASTSYNC__OS2_BUCKETS; i++) {
        h = t->lock[i];
        rc = DosOpenMutexSem(NULL, &h);
    }
    return rc;
}

/* Finds or builds the table and opens it for this process: its address, or NULL when OS/2
 * has no memory or semaphores to give now (a later call tries again). */
FASTSYNC__COLD struct fastsync__os2_table *fastsync__os2_attach(void)
{
    static struct fastsync__os2_table *attached; /* this file's; under the named mutex */
    struct fastsync__os2_table *t;
    PVOID mem = NULL;
    ULONG init, tries;
    APIRET rc;
    /* The named mutex, made owned, or opened and requested: one thread of one process at a
     * time finds or builds the table. (Opened: its maker may close it meanwhile, and then
     * the name is gone: make it again. ERROR_SEM_OWNER_DIED: a builder died; the memory
     * tells what it left.) */
    for (tries = 0;; tries++) {
        init = 0;
        rc = DosCreateMutexSem((PSZ)FASTSYNC__OS2_INIT_NAME, &init, 0, TRUE);
        if (rc != ERROR_DUPLICATE_NAME) break;
        init = 0;
        rc = DosOpenMutexSem((PSZ)FASTSYNC__OS2_INIT_NAME, &init);
        if (rc == NO_ERROR) fastsync__os2_lock(init);
        if (rc != ERROR_SEM_NOT_FOUND || tries == 100) break;
    }
    if (rc != NO_ERROR) return NULL;
    t = attached;
    if (t == NULL) {
        rc = DosGetNamedSharedMem(&mem, (PSZ)FASTSYNC__OS2_TABLE_NAME, PAG_READ | PAG_WRITE);
        if (rc == NO_ERROR) {
            t = (struct fastsync__os2_table *)mem;
            if (t->pool_lock == 0 || fastsync__os2_open(t) != NO_ERROR) t = NULL;
        } else if (DosAllocSharedMem(&mem, (PSZ)FASTSYNC__OS2_TABLE_NAME,
                                     sizeof(struct fastsync__os2_table),
                                     PAG_COMMIT | PAG_READ | PAG_WRITE) == NO_ERROR) {
            t = (struct fastsync__os2_table *)mem; /* committed memory reads 0 */
            if (fastsync__os2_build(t) != NO_ERROR) {
                (void)DosFreeMem(mem);
                t = NULL;
            }
        }
        attached = t;
    }
    fastsync__os2_unlock(init);
    (void)DosCloseMutexSem(init);
    return t;
}

/* This file's table, attached at its first use; NULL if OS/2 has none to give now. Read
 * without the named mutex once attached: the pointer is stored once it is known (with gcc
 * an atomic store; without, an aligned pointer store, which x86 makes whole). */
FASTSYNC_API struct fastsync__os2_table *fastsync__os2_table(void)
{
    static struct fastsync__os2_table *volatile known;
    struct fastsync__os2_table *t;
#if defined(__GNUC__)
    /* acquire: pairs with the release store below, so the table's contents as attach left
     * them are seen. */
    t = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
#else
    t = known;
#endif
    if (t != NULL) return t;
    t = fastsync__os2_attach();
#if defined(__GNUC__)
    __atomic_store_n(&known, t, __ATOMIC_RELEASE);
#else
    known = t;
#endif
    return t;
}

/* The bucket of an address (fastsync__addr_hash: both halves of the semaphore's 64-bit
 * word share one, which the locked atomics need). */
FASTSYNC_API ULONG fastsync__os2_bucket(const volatile void *word)
{
    return (ULONG)fastsync__addr_hash((uintptr_t)word, FASTSYNC__OS2_BUCKETS);
}

#if defined(FASTSYNC__LOCKED_ATOMICS)
/* ======================================================================================
 * Atomics without <stdatomic.h>: fastsync.h's layer (fastsync__load, fastsync__cas_weak,
 * ...) as operations under the table's mutex semaphore for the word's address. The table's
 * semaphores are recursive (a wait compares its word with the bucket's lock held) and
 * shared by every process, so shared objects are atomic across processes too. Every
 * operation is as strong as a seq_cst one (a kernel call each side), so the orders named
 * are not needed, and a fence is nothing: the event's handshake holds because the locked
 * sections of its two sides are totally ordered.
 * ====================================================================================== */

enum { FASTSYNC__LK_LOAD, FASTSYNC__LK_STORE, FASTSYNC__LK_XCHG, FASTSYNC__LK_ADD,
       FASTSYNC__LK_SUB, FASTSYNC__LK_OR };

/* The table's lock for the word at address `a`, taken; retried every tick while OS/2 has
 * no table to give. (The address as an integer: the word is not read here.) */
FASTSYNC_API ULONG fastsync__lk_lock(uintptr_t a)
{
    struct fastsync__os2_table *t;
    ULONG lock;
    while ((t = fastsync__os2_table()) == NULL) (void)DosSleep(1);
    lock = t->lock[fastsync__addr_hash(a, FASTSYNC__OS2_BUCKETS)];
    fastsync__os2_lock(lock);
    return lock;
}

/* One operation on a 4- or 8-byte word; returns the old value. */
FASTSYNC_API uint64_t fastsync__lk_op(void *p, size_t size, int op, uint64_t v)
{
    ULONG lock = fastsync__lk_lock((uintptr_t)p);
    uint64_t old = size == 8 ? *(uint64_t *)p : *(uint32_t *)p, now = old;
    switch (op) {
    case FASTSYNC__LK_STORE:
    case FASTSYNC__LK_XCHG: now = v; break;
    case FASTSYNC__LK_ADD: now = old + v; break;
    case FASTSYNC__LK_SUB: now = old - v; break;
    case FASTSYNC__LK_OR: now = old | v; break;
    default: break;
    }
    if (op != FASTSYNC__LK_LOAD) {
        if (size == 8) *(uint64_t *)p = now;
        else *(uint32_t *)p = (uint32_t)now;
    }
    fastsync__os2_unlock(lock);
    return old;
}

/* compare-and-exchange; never fails spuriously. */
FASTSYNC_API int fastsync__lk_cas(void *p, void *expected, uint64_t desired, size_t size)
{
    ULONG lock = fastsync__lk_lock((uintptr_t)p);
    int ok;
    if (size == 8) {
        ok = *(uint64_t *)p == *(uint64_t *)expected;
        if (ok) *(uint64_t *)p = desired;
        else *(uint64_t *)expected = *(uint64_t *)p;
    } else {
        ok = *(uint32_t *)p == *(uint32_t *)expected;
        if (ok) *(uint32_t *)p = (uint32_t)desired;
        else *(uint32_t *)expected = *(uint32_t *)p;
    }
    fastsync__os2_unlock(lock);
    return ok;
}

/* The value's type: the word's where the compiler can say it (gcc: the double), else
 * uint64_t (OpenWatcom converts on assignment). */
#if defined(__GNUC__)
#define FASTSYNC__LK_T(p) __typeof__(+*(p))
#else
#define FASTSYNC__LK_T(p) uint64_t
#endif
#define FASTSYNC__LK(p, op, v) \
    ((FASTSYNC__LK_T(p))fastsync__lk_op((void *)(uintptr_t)(p), sizeof *(p), op, (uint64_t)(v)))
#define fastsync__load(p, mo) FASTSYNC__LK(p, FASTSYNC__LK_LOAD, 0)
#define fastsync__store(p, v, mo) ((void)FASTSYNC__LK(p, FASTSYNC__LK_STORE, v))
#define fastsync__exchange(p, v, mo) FASTSYNC__LK(p, FASTSYNC__LK_XCHG, v)
#define fastsync__fetch_add(p, v, mo) FASTSYNC__LK(p, FASTSYNC__LK_ADD, v)
#define fastsync__fetch_sub(p, v, mo) FASTSYNC__LK(p, FASTSYNC__LK_SUB, v)
#define fastsync__fetch_or(p, v, mo) FASTSYNC__LK(p, FASTSYNC__LK_OR, v)
#define fastsync__cas_weak(p, e, d, s, f) \
    fastsync__lk_cas((void *)(uintptr_t)(p), (void *)(e), (uint64_t)(d), sizeof *(p))
#define fastsync__cas_strong(p, e, d, s, f) fastsync__cas_weak(p, e, d, s, f)
#define fastsync__fence(mo) ((void)0)
#endif /* FASTSYNC__LOCKED_ATOMICS */

/* ======================================================================================
 * The seam on the table
 * ====================================================================================== */

/* Every DosWaitEventSem of the backend, an APIRET expression. Define it before the #include
 * to inject delays or errors (the os2 test suite widens with it the window between a
 * waiter's compare and its sleep). */
#ifndef FASTSYNC_OS2_WAIT
#define FASTSYNC_OS2_WAIT(hev, ms) DosWaitEventSem(hev, ms)
#endif

/* The longest sleep (see "Attaching"; the GenMC harness sets SEM_INDEFINITE_WAIT: no wake
 * may need the slice to arrive). */
#ifndef FASTSYNC__OS2_SLICE_MS
#define FASTSYNC__OS2_SLICE_MS 1000UL
#endif

/* The timeout for the next sleep: the time left until `abstime` (NULL: no deadline) in
 * milliseconds, rounded up, at most FASTSYNC__OS2_SLICE_MS; 0 once the deadline has passed. */
FASTSYNC_API ULONG fastsync__os2_ms_left(clockid_t clock, const struct timespec *abstime)
{
    if (abstime == NULL) return FASTSYNC__OS2_SLICE_MS;
    ULONG ms = fastsync__ms_left(clock, abstime);
    return ms < FASTSYNC__OS2_SLICE_MS ? ms : FASTSYNC__OS2_SLICE_MS;
}

/* No slot, no HEV, no table: a poll of one tick instead of a sleep. */
FASTSYNC__COLD int fastsync__os2_poll(clockid_t clock, const struct timespec *abstime)
{
    if (abstime != NULL && fastsync__until(clock, abstime) <= 0) return ETIMEDOUT;
    (void)DosSleep(1);
    return 0;
}

FASTSYNC__COLD int fastsync__wait_sys(void *word, uint32_t expected, int shared,
                                     clockid_t clock, const struct timespec *abstime)
{
    struct fastsync__os2_table *t = fastsync__os2_table();
    struct fastsync__os2_slot *s;
    ULONG i, b, hev = 0, ms;
    int err = 0;
    if (t == NULL) return fastsync__os2_poll(clock, abstime);
    fastsync__os2_lock(t->pool_lock);
    i = t->free;
    if (i != 0) t->free = t->slot[i].next;
    fastsync__os2_unlock(t->pool_lock);
    if (i == 0) return fastsync__os2_poll(clock, abstime); /* 4096 sleepers */
    if (DosCreateEventSem(NULL, &hev, DC_SEM_SHARED, FALSE) != NO_ERROR || hev == 0) {
        fastsync__os2_free_slot(t, i);
        return fastsync__os2_poll(clock, abstime);
    }
    s = &t->slot[i];
    b = fastsync__os2_bucket(word);
    fastsync__os2_lock(t->lock[b]);
    /* relaxed: the bucket's lock orders it (see above); the caller re-reads the word with
     * the order it needs. */
    if (fastsync__load((FASTSYNC__ATOMIC(uint32_t) *)word, memory_order_relaxed) != expected) {
        err = EAGAIN; /* no wake taken */
    } else {
        s->word = (uintptr_t)word;
        s->pid = fastsync__os2_pid();
        s->shared = shared != 0;
        s->hev = hev;
        s->woken = 0;
        s->prev = t->slot[b].prev;
        s->next = b;
        t->slot[s->prev].next = i;
        t->slot[b].prev = i;
        fastsync__os2_unlock(t->lock[b]);
        /* One sleep, then the caller looks at its word again: a second at most (see
         * "Attaching"), so that a wake that could not reach this waiter costs it a second,
         * not its wakeup. */
        ms = fastsync__os2_ms_left(clock, abstime);
        if (ms == 0) err = ETIMEDOUT;
        else if (FASTSYNC_OS2_WAIT(hev, ms) != NO_ERROR) /* ERROR_TIMEOUT, _INTERRUPT, ... */
            err = fastsync__os2_ms_left(clock, abstime) == 0 ? ETIMEDOUT : 0;
        fastsync__os2_lock(t->lock[b]);
        if (s->woken) err = 0; /* a wake and the deadline crossed: woken */
        else fastsync__os2_unqueue(t, i);
    }
    fastsync__os2_unlock(t->lock[b]);
    (void)DosCloseEventSem(hev);
    fastsync__os2_free_slot(t, i);
    return err;
}

/* Posts a waiter's HEV, opening it first when another process made it: 0, or -1 when it
 * cannot be opened (OS/2 out of handles, or its process died) or is no handle here (a slot
 * of ours whose HEV this process does not have: left by a dead process that had our
 * process id): the waiter is then left queued (a live one looks at its word within
 * FASTSYNC__OS2_SLICE_MS), and the wake goes on to the next. */
FASTSYNC__COLD int fastsync__os2_post(const struct fastsync__os2_slot *s, ULONG pid)
{
    ULONG h = s->hev;
    if (s->pid == pid) return DosPostEventSem(h) == ERROR_INVALID_HANDLE ? -1 : 0;
    if (DosOpenEventSem(NULL, &h) != NO_ERROR) return -1;
    (void)DosPostEventSem(h);
    (void)DosCloseEventSem(h);
    return 0;
}

FASTSYNC__COLD void fastsync__wake_sys(void *word, int n, int shared)
{
    struct fastsync__os2_table *t = fastsync__os2_table();
    ULONG b, i, next, pid;
    if (t == NULL) return; /* the waiters are polling */
    pid = fastsync__os2_pid();
    b = fastsync__os2_bucket(word);
    fastsync__os2_lock(t->lock[b]);
    for (i = t->slot[b].next; i != b && n > 0; i = next) {
        struct fastsync__os2_slot *s = &t->slot[i];
        next = s->next;
        if (s->word != (uintptr_t)word || s->shared != (ULONG)(shared != 0) ||
            (!shared && s->pid != pid))
            continue;
        /* under the lock: the waiter closes its HEV only after it has locked the bucket */
        if (fastsync__os2_post(s, pid) != 0) continue;
        fastsync__os2_unqueue(t, i);
        s->woken = 1;
        n--;
    }
    fastsync__os2_unlock(t->lock[b]);
}

/* DosSleep(0) yields only to threads of equal or higher priority. */
FASTSYNC__COLD void fastsync__yield(void) { (void)DosSleep(0); }

#endif /* parts */
