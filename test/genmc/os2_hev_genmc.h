/* SPDX-License-Identifier: MIT */
/* test/genmc/os2_hev_genmc.h - the part of the OS/2 API that fastsync_os2.h (with atomics)
 * calls, modelled for the GenMC model checker, which runs no system calls. Included as
 * <os2.h> through test/genmc/os2.h. What it models, as test/os2/README.md describes OS/2:
 *   - Mutex semaphores (HMTX, a pthread mutex each; not recursive, not named: the harnesses
 *     attach the wait table in main, before their threads, where DosEnterCritSec and the
 *     named mutex only have to succeed) and named shared memory (one object: the table).
 *   - Event semaphores in a table of OS2G_SLOTS handles (1..OS2G_SLOTS). Each has a post
 *     count and a post generation. DosPostEventSem adds one to both (ERROR_ALREADY_POSTED
 *     when it was posted); DosResetEventSem stores the count and clears it
 *     (ERROR_ALREADY_RESET when it was 0); DosWaitEventSem returns 0 at once on a posted
 *     semaphore, else blocks until a post comes after it started (edge-triggered: a
 *     reset in between does not matter). Every call on one handle is serialized (one
 *     lock, the kernel's) and is a full barrier (a seq_cst fence before and after).
 *   - Handles: a closed handle's slot is given to the next create (the lowest free slot):
 *     a call through a handle kept after its close reaches whatever semaphore holds the
 *     slot then, or gets ERROR_INVALID_HANDLE. DosCloseEventSem with a thread blocked on
 *     the semaphore: ERROR_SEM_BUSY.
 *   - DosSleep does nothing (a yield); the timer (DosTmrQueryTime) runs at 1000 Hz and
 *     moves 400 ticks at every read, so a loop bounded by time ends after a few reads.
 * Not modelled: timeouts other than SEM_IMMEDIATE_RETURN and SEM_INDEFINITE_WAIT (the
 * harnesses wait without a deadline), ERROR_INTERRUPT, mux-wait semaphores, critical
 * sections (no-ops), threads (the harnesses use pthreads), sharing between processes (one
 * process id). A waiter that no post releases blocks for ever: --check-liveness reports it.
 * os2g_count(h) (not OS/2 API) gives the post count without a barrier, for asserts. */
#ifndef OS2_HEV_GENMC_H
#define OS2_HEV_GENMC_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

typedef unsigned long ULONG, *PULONG;
typedef unsigned long APIRET, BOOL32, HEV, *PHEV, HMTX, *PHMTX, PID;
typedef char *PSZ;
typedef void *PVOID, **PPVOID;
typedef struct { ULONG tib_dummy; } TIB, *PTIB;
typedef struct { ULONG pib_ulpid; } PIB, *PPIB;
typedef struct { ULONG ulLo, ulHi; } QWORD, *PQWORD;
#define TRUE 1
#define FALSE 0

#define NO_ERROR 0
#define ERROR_FILE_NOT_FOUND 2
#define ERROR_INVALID_HANDLE 6
#define ERROR_INVALID_PARAMETER 87
#define ERROR_INTERRUPT 95
#define ERROR_TOO_MANY_SEMAPHORES 100
#define ERROR_SEM_TIMEOUT 121
#define ERROR_ALREADY_EXISTS 183
#define ERROR_SEM_NOT_FOUND 187
#define ERROR_DUPLICATE_NAME 285
#define ERROR_ALREADY_POSTED 299
#define ERROR_ALREADY_RESET 300
#define ERROR_SEM_BUSY 301
#define ERROR_TIMEOUT 640
#define DC_SEM_SHARED 0x01
#define SEM_IMMEDIATE_RETURN 0UL
#define SEM_INDEFINITE_WAIT ((ULONG)-1)
#define PAG_READ 0x01
#define PAG_WRITE 0x02
#define PAG_COMMIT 0x10

#ifndef OS2G_SLOTS
#define OS2G_SLOTS 3
#endif
#ifndef OS2G_MEM_BYTES
#define OS2G_MEM_BYTES 1024 /* the wait table of a harness (a bucket or two, a few slots) */
#endif

static struct os2g_sem {
    int used;         /* under os2g_lock */
    ULONG count;      /* post count, under os2g_lock */
    int blocked;      /* threads blocked in DosWaitEventSem, under os2g_lock */
    atomic_int gen;   /* posts so far; written under os2g_lock, read by blocked waiters */
} os2g_tab[OS2G_SLOTS];
static pthread_mutex_t os2g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int os2g_left;          /* written after a blocked wait ends (see there) */
static atomic_ulong os2g_ticks;       /* the timer */

/* Every call: a full barrier on entry and exit, the body under the kernel's lock. */
static inline void os2g_enter(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&os2g_lock);
}

static inline APIRET os2g_leave(APIRET rc)
{
    pthread_mutex_unlock(&os2g_lock);
    atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

static inline struct os2g_sem *os2g_get(ULONG h)
{
    return h >= 1 && h <= OS2G_SLOTS && os2g_tab[h - 1].used ? &os2g_tab[h - 1] : 0;
}

static inline APIRET DosCreateEventSem(PSZ name, PHEV ph, ULONG attr, BOOL32 posted)
{
    ULONG i;
    (void)name;
    (void)attr;
    os2g_enter();
    for (i = 0; i < OS2G_SLOTS && os2g_tab[i].used; i++) {
    }
    if (i == OS2G_SLOTS) return os2g_leave(ERROR_TOO_MANY_SEMAPHORES);
    os2g_tab[i].used = 1;
    os2g_tab[i].count = posted ? 1 : 0;
    os2g_tab[i].blocked = 0;
    *ph = i + 1;
    return os2g_leave(NO_ERROR);
}

static inline APIRET DosOpenEventSem(PSZ name, PHEV ph)
{
    (void)name;
    os2g_enter();
    return os2g_leave(os2g_get(*ph) ? NO_ERROR : ERROR_INVALID_HANDLE);
}

static inline APIRET DosCloseEventSem(HEV h)
{
    struct os2g_sem *s;
    os2g_enter();
    s = os2g_get(h);
    if (!s) return os2g_leave(ERROR_INVALID_HANDLE);
    if (s->blocked) return os2g_leave(ERROR_SEM_BUSY);
    s->used = 0;
    return os2g_leave(NO_ERROR);
}

static inline APIRET DosPostEventSem(HEV h)
{
    struct os2g_sem *s;
    APIRET rc;
    os2g_enter();
    s = os2g_get(h);
    if (!s) return os2g_leave(ERROR_INVALID_HANDLE);
    rc = s->count++ ? ERROR_ALREADY_POSTED : NO_ERROR;
    /* relaxed (both): under the lock; the release store publishes the post to waiters */
    atomic_store_explicit(&s->gen, atomic_load_explicit(&s->gen, memory_order_relaxed) + 1,
                          memory_order_release);
    return os2g_leave(rc);
}

static inline APIRET DosResetEventSem(HEV h, PULONG pcount)
{
    struct os2g_sem *s;
    os2g_enter();
    s = os2g_get(h);
    if (!s) return os2g_leave(ERROR_INVALID_HANDLE);
    *pcount = s->count;
    s->count = 0;
    return os2g_leave(*pcount ? NO_ERROR : ERROR_ALREADY_RESET);
}

static inline APIRET DosWaitEventSem(HEV h, ULONG ms)
{
    struct os2g_sem *s;
    int g0;
    os2g_enter();
    s = os2g_get(h);
    if (!s) return os2g_leave(ERROR_INVALID_HANDLE);
    if (s->count) return os2g_leave(NO_ERROR);
    if (ms == SEM_IMMEDIATE_RETURN) return os2g_leave(ERROR_TIMEOUT);
    assert(ms == SEM_INDEFINITE_WAIT && "the model has no timeouts");
    g0 = atomic_load_explicit(&s->gen, memory_order_relaxed); /* under the lock */
    s->blocked++;
    pthread_mutex_unlock(&os2g_lock);
    /* Blocked until a later post; GenMC turns this side-effect-free spin into a blocked
     * execution when no post comes. acquire: pairs with the release store in the post. */
    while (atomic_load_explicit(&s->gen, memory_order_acquire) == g0) {
    }
    /* GenMC v0.11: an effectful write after the spin, or it takes the caller's retry
     * loop for part of the spin and cuts executions in which the waiter was woken. */
    atomic_store_explicit(&os2g_left, 1, memory_order_relaxed);
    pthread_mutex_lock(&os2g_lock);
    s->blocked--;
    return os2g_leave(NO_ERROR);
}

static inline APIRET DosSleep(ULONG ms)
{
    (void)ms;
    atomic_thread_fence(memory_order_seq_cst);
    return NO_ERROR;
}

static inline APIRET DosTmrQueryFreq(PULONG hz)
{
    *hz = 1000;
    return NO_ERROR;
}

static inline APIRET DosTmrQueryTime(PQWORD q)
{
    /* relaxed: the time orders nothing */
    ULONG t = atomic_fetch_add_explicit(&os2g_ticks, 400, memory_order_relaxed) + 400;
    q->ulLo = t;
    q->ulHi = 0;
    return NO_ERROR;
}

/* ---- mutex semaphores: a pthread mutex each ---- */
#ifndef OS2G_MUTEXES
#define OS2G_MUTEXES 3
#endif
static pthread_mutex_t os2g_mtx[OS2G_MUTEXES];
static int os2g_mtx_used; /* created so far (main only) */

static inline APIRET DosCreateMutexSem(PSZ name, PHMTX ph, ULONG attr, BOOL32 owned)
{
    (void)name;
    (void)attr;
    if (os2g_mtx_used == OS2G_MUTEXES) return ERROR_TOO_MANY_SEMAPHORES;
    pthread_mutex_init(&os2g_mtx[os2g_mtx_used], NULL);
    if (owned) pthread_mutex_lock(&os2g_mtx[os2g_mtx_used]);
    *ph = (ULONG)++os2g_mtx_used;
    return NO_ERROR;
}
static inline APIRET DosOpenMutexSem(PSZ name, PHMTX ph)
{
    (void)name;
    (void)ph;
    return NO_ERROR;
}
static inline APIRET DosCloseMutexSem(HMTX h)
{
    (void)h;
    return NO_ERROR;
}
static inline APIRET DosRequestMutexSem(HMTX h, ULONG ms)
{
    (void)ms;
    pthread_mutex_lock(&os2g_mtx[h - 1]);
    return NO_ERROR;
}
static inline APIRET DosReleaseMutexSem(HMTX h)
{
    pthread_mutex_unlock(&os2g_mtx[h - 1]);
    return NO_ERROR;
}

/* ---- named shared memory: one object; critical sections; the process ---- */
static unsigned char os2g_mem[OS2G_MEM_BYTES] __attribute__((aligned(64)));
static int os2g_mem_made;
static inline APIRET DosAllocSharedMem(PPVOID pp, PSZ name, ULONG size, ULONG flags)
{
    (void)name;
    (void)flags;
    assert(size <= sizeof os2g_mem && !os2g_mem_made);
    os2g_mem_made = 1;
    *pp = os2g_mem;
    return NO_ERROR;
}
static inline APIRET DosGetNamedSharedMem(PPVOID pp, PSZ name, ULONG flags)
{
    (void)name;
    (void)flags;
    if (!os2g_mem_made) return ERROR_FILE_NOT_FOUND;
    *pp = os2g_mem;
    return NO_ERROR;
}
static inline APIRET DosFreeMem(PVOID p)
{
    (void)p;
    return NO_ERROR;
}
static inline APIRET DosEnterCritSec(void) { return NO_ERROR; }
static inline APIRET DosExitCritSec(void) { return NO_ERROR; }
static PIB os2g_pib = { 1 };
static inline APIRET DosGetInfoBlocks(PTIB *pt, PPIB *pp)
{
    *pt = 0;
    *pp = &os2g_pib;
    return NO_ERROR;
}

/* The post count of handle h (0 if closed), for a harness's asserts after its joins. */
static inline ULONG os2g_count(HEV h)
{
    struct os2g_sem *s;
    ULONG c;
    pthread_mutex_lock(&os2g_lock);
    s = os2g_get(h);
    c = s ? s->count : 0;
    pthread_mutex_unlock(&os2g_lock);
    return c;
}

#endif
