/* SPDX-License-Identifier: MIT */
/* test/os2/os2.h - a double of the OS/2 Control Program API on pthreads, for Linux.
 *
 * No OS/2 compiler runs here, so fastsync_os2.h and the example are tested against this
 * header, used as `#include <os2.h>` with -I test/os2. It reproduces the OS/2 semantics
 * that README.md (beside it) lists, down to the return codes; if it did not, the tests built
 * over it would prove nothing. Header-only: each test program is one translation unit.
 * Build with -D_GNU_SOURCE (or include it first) and -pthread; Linux and glibc only.
 *
 * What it models (within one process):
 *   INCL_DOSERRORS (or INCL_ERRORS) error codes, INCL_DOSSEMAPHORES, INCL_DOSPROCESS,
 *   INCL_DOSPROFILE, INCL_DOSMEMMGR, INCL_DOS (= the four), INCL_BASE (= INCL_DOS): forget
 *   one and the names are missing, as on OS/2. ULONG is `unsigned long`, so 64 bits here.
 *   - Event semaphores: post count (reset -> posted count 1, returns 0; posted -> count+1
 *     and ERROR_ALREADY_POSTED; at 65535 ERROR_TOO_MANY_POSTS, count kept); reset stores
 *     the count, ERROR_ALREADY_RESET when already reset; waits never change the count;
 *     EDGE-TRIGGERED: a post releases every thread blocked at that moment, and each of them
 *     returns 0 even if the event is reset before it runs; a wait that starts after the
 *     reset blocks. Timeout ERROR_TIMEOUT; SEM_IMMEDIATE_RETURN on a reset event: 640.
 *   - Mutex semaphores: request count per owner thread up to 65535, then
 *     ERROR_TOO_MANY_SEM_REQUESTS; ERROR_NOT_OWNER on release by another thread; ownership
 *     handed FIFO to the blocked requesters (one priority here); a DosCreateThread thread
 *     that ends owning one leaves it "owner died": the next owner gets it with
 *     ERROR_SEM_OWNER_DIED, and DosQueryMutexSem says 105 and names the dead owner.
 *   - Mux-wait semaphores, DCMW_WAIT_ANY and DCMW_WAIT_ALL over events or mutexes (up to
 *     64, one kind, else ERROR_WRONG_TYPE; duplicates ERROR_DUPLICATE_HANDLE; empty
 *     ERROR_EMPTY_MUXWAIT). ANY returns the ulUser of the first posted/free member in list
 *     order, or of the member whose post/release released it; ALL holds when all members
 *     are posted at the moment the last one posts (a member reset meanwhile must post
 *     again), and returns the ulUser of that last member; for mutexes, ALL takes them all
 *     at once.
 *   - Handles: small integers (never 0) into one table. A closed handle's slot is reused, the
 *     last freed first (OS/2 reuses slots too, in an order not modelled here), so a handle
 *     kept after its close soon names another semaphore; until then a wrong, closed or
 *     wrong-type handle gives ERROR_INVALID_HANDLE. Usage count: create sets 1, DosOpen*Sem adds 1 (ERROR_TOO_MANY_
 *     OPENS past 65535), close takes 1 and deletes at 0. Only the final close says
 *     ERROR_SEM_BUSY while a thread waits on it (or, for a mutex, owns it or waits for it);
 *     closing a mutex one owns is 301 always. Named semaphores (\SEM32\..., case-blind;
 *     ERROR_INVALID_NAME, ERROR_DUPLICATE_NAME, ERROR_SEM_NOT_FOUND); open by name needs
 *     *ph == 0, open by handle needs a NULL name.
 *   - Timeouts in ms, rounded UP to the system tick (OS2DBL_TICK_MS, default 31): a wait
 *     returns at most one tick late, never early. SEM_INDEFINITE_WAIT waits for ever.
 *   - DosSleep(0) yields (sched_yield); DosSleep(n) sleeps n rounded up to the tick.
 *   - Threads: DosCreateThread (tid 2, 3, ... given round-robin up to 4095; the main thread
 *     is tid 1), DosWaitThread (a given tid or 0 = any; DCWW_WAIT/DCWW_NOWAIT; a thread
 *     that ended and was not waited for is returned at once, then its tid is free;
 *     ERROR_THREAD_NOT_TERMINATED, ERROR_INVALID_THREADID for self, tid 1 or an unknown
 *     tid), DosGetInfoBlocks (tib_ptib2->tib2_ultid, pib_ulpid).
 *   - DosEnterCritSec / DosExitCritSec: really suspend the other threads (the main thread
 *     and every DosCreateThread thread): each gets a signal whose handler blocks until the
 *     critical section ends, and DosEnterCritSec returns only when every one of them has
 *     stopped. A thread inside a Dos* call is left to finish it (kernel code is not
 *     suspended on OS/2 either) and stops when it returns. Nesting count up to 65535:
 *     ERROR_CRITSEC_OVERFLOW, ERROR_CRITSEC_UNDERFLOW. A thread that ends inside its
 *     critical section ends it. A second thread calling DosEnterCritSec waits for the
 *     first one's to end.
 *   - DosTmrQueryFreq: 1193182 Hz; DosTmrQueryTime: CLOCK_MONOTONIC at that rate, in a
 *     QWORD split into 32-bit halves (ulLo, ulHi) as on OS/2.
 *   - Named shared memory: DosAllocSharedMem(&p, "\SHAREMEM\...", size, flags) with
 *     PAG_COMMIT and read/write access (committed pages read 0; page-aligned;
 *     ERROR_ALREADY_EXISTS for a name in use, case-blind; ERROR_INVALID_NAME without the
 *     prefix; ERROR_INVALID_PARAMETER without PAG_READ|PAG_WRITE, or without PAG_COMMIT,
 *     which is not modelled), DosGetNamedSharedMem (the same address; ERROR_FILE_NOT_FOUND
 *     for an unknown name) and DosFreeMem (the object and its name go with the last access
 *     freed). Unnamed (giveable, gettable) shared memory and DosSetMem are not modelled.
 *
 * Where it differs from OS/2:
 *   - One process only. DC_SEM_SHARED and named semaphores are accepted and behave as
 *     shared ones would inside the creating process; no other process can open them, and
 *     "must DosOpen before use in another process" cannot be checked.
 *   - ULONG is 64-bit: a timeout above 0xFFFFFFFF (other than SEM_INDEFINITE_WAIT) could
 *     not be passed on OS/2, so the double prints a message and aborts; 0xFFFFFFFF is
 *     SEM_INDEFINITE_WAIT, as OS/2 would read it.
 *   - ERROR_INTERRUPT comes only from the knob below (DosWaitEventSem, DosRequestMutexSem,
 *     DosWaitMuxWaitSem, and only when the call would block); DosWaitThread, DosSleep never
 *     return it.
 *   - DCE_POSTONE / DCE_AUTORESET are rejected with ERROR_INVALID_PARAMETER, as a kernel
 *     older than Warp 4 / Warp 3 FP29 does (code must not depend on them).
 *   - Closing an event or mutex that is a member of a live mux-wait gives ERROR_SEM_BUSY
 *     (stricter than OS/2 may be); a NULL output pointer gives ERROR_INVALID_PARAMETER.
 *   - Critical sections: threads made with plain pthread_create are not suspended (they
 *     get a tid when they first call in, but the double cannot tell when their pthread_t
 *     stops being valid to signal); a thread blocking the signal is not suspended. The
 *     signal is OS2DBL_CRITSEC_SIGNAL (default SIGRTMIN+5); it interrupts blocking system
 *     calls of the suspended threads (SA_RESTART is set). OS/2's exception for signal
 *     processing on thread 1 is not modelled.
 *     As on OS/2, a stopped thread may hold a C library lock (malloc, stdio): the thread in
 *     the critical section must not need one.
 *   - No priorities (DosSetPriority absent): all threads are equal, FIFO among them.
 *   - fork(): the child gets a copy of every table; nothing is shared between the two.
 *   - C only (C11 atomics, _Thread_local).
 *   - DosCreateThread: CREATE_SUSPENDED is not modelled (the double aborts); cbStack is a
 *     minimum, the pthread default applies when larger.
 *   - Unmodelled calls do not exist: using one fails to compile.
 *
 * Knobs (environment, read at first use) and test hooks (not OS/2 API):
 *   OS2DBL_TICK_MS=n     system tick in ms, 1..1000 (default 31)
 *   OS2DBL_INTERRUPT=p   percent of blocking waits that return ERROR_INTERRUPT (default 0):
 *                        half of them at once, half after waiting a random part of the
 *                        timeout (of two ticks for SEM_INDEFINITE_WAIT), as a signal would.
 *                        A post or an ownership already given is never lost: such a call
 *                        returns 0.
 *   OS2DBL_SEED=n        seed of the knob's random numbers
 *   os2dbl_set_interrupt_percent(p)  the same knob at run time
 *   os2dbl_calls()       Dos* calls so far       os2dbl_sem_waits()  DosWaitEventSem calls
 *   os2dbl_sem_posts()   DosPostEventSem calls   os2dbl_interrupts() ERROR_INTERRUPTs given
 *   os2dbl_blocked(h)    threads blocked on semaphore h now (mux-wait: waiting on it)
 *   os2dbl_handles_in_use()  live semaphores     os2dbl_tick_ms()    the tick in use
 *   os2dbl_set_hook(fn)  fn(OS2DBL_HOOK_POST or OS2DBL_HOOK_RESET, h) runs in the calling
 *                        thread at the start of every DosPostEventSem / DosResetEventSem,
 *                        before the call does anything (NULL: none). A test stops a thread
 *                        there to hold it at a chosen point of the protocol under test.
 * All counters are atomic. Internals: one global mutex guards every object; each blocked
 * call queues a waiter (its own condition variable) on every semaphore it waits for, and a
 * post or release hands the result to the waiters queued at that moment, under the lock.
 * That queue is the post generation of each event: a waiter is released by any post that
 * comes after it queued, whatever the state when it runs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/* ---- INCL_ groups, as os2.h expands them ---- */
#if defined(INCL_BASE) && !defined(INCL_DOS)
#define INCL_DOS
#endif
#ifdef INCL_DOS
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
#endif
#if defined(INCL_ERRORS) && !defined(INCL_DOSERRORS)
#define INCL_DOSERRORS
#endif

#ifndef OS2DBL_CORE_H
#define OS2DBL_CORE_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if !defined(_GNU_SOURCE) || (defined(__GLIBC__) && !defined(__USE_GNU))
#error "test/os2/os2.h (the OS/2 double) needs _GNU_SOURCE: build with -D_GNU_SOURCE or include it first"
#endif

/* ---- base types (os2def.h: always there) ---- */
#define VOID void
#define APIENTRY
#define EXPENTRY
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
typedef unsigned long ULONG, *PULONG;
typedef long LONG, *PLONG;
typedef unsigned short USHORT, *PUSHORT;
typedef short SHORT, *PSHORT;
typedef unsigned char UCHAR, *PUCHAR;
typedef char CHAR, *PCHAR;
typedef char *PSZ;
typedef const char *PCSZ;
typedef void *PVOID;
typedef ULONG APIRET;
typedef ULONG BOOL, *PBOOL;
typedef ULONG BOOL32, *PBOOL32;
typedef ULONG TID, *PTID;
typedef ULONG PID, *PPID;
typedef struct _QWORD {
    ULONG ulLo;
    ULONG ulHi;
} QWORD, *PQWORD;

/* ---- return codes the double gives (public names only with INCL_DOSERRORS) ---- */
#define OS2DBL__OK 0UL
#define OS2DBL__E_FILE_NOT_FOUND 2UL
#define OS2DBL__E_INVALID_HANDLE 6UL
#define OS2DBL__E_NOT_ENOUGH_MEMORY 8UL
#define OS2DBL__E_INVALID_PARAMETER 87UL
#define OS2DBL__E_INTERRUPT 95UL
#define OS2DBL__E_TOO_MANY_SEMAPHORES 100UL
#define OS2DBL__E_TOO_MANY_SEM_REQUESTS 103UL
#define OS2DBL__E_SEM_OWNER_DIED 105UL
#define OS2DBL__E_INVALID_NAME 123UL
#define OS2DBL__E_MAX_THRDS_REACHED 164UL
#define OS2DBL__E_ALREADY_EXISTS 183UL
#define OS2DBL__E_SEM_NOT_FOUND 187UL
#define OS2DBL__E_DUPLICATE_HANDLE 284UL
#define OS2DBL__E_DUPLICATE_NAME 285UL
#define OS2DBL__E_EMPTY_MUXWAIT 286UL
#define OS2DBL__E_NOT_OWNER 288UL
#define OS2DBL__E_TOO_MANY_OPENS 291UL
#define OS2DBL__E_WRONG_TYPE 292UL
#define OS2DBL__E_THREAD_NOT_TERMINATED 294UL
#define OS2DBL__E_TOO_MANY_POSTS 298UL
#define OS2DBL__E_ALREADY_POSTED 299UL
#define OS2DBL__E_ALREADY_RESET 300UL
#define OS2DBL__E_SEM_BUSY 301UL
#define OS2DBL__E_INVALID_THREADID 309UL
#define OS2DBL__E_CRITSEC_OVERFLOW 484UL
#define OS2DBL__E_CRITSEC_UNDERFLOW 485UL
#define OS2DBL__E_TIMEOUT 640UL

/* ---- limits and constants ---- */
#define OS2DBL__MAX_HANDLES 65535UL  /* handles 1..65535 */
#define OS2DBL__MAX_THREADS 4095UL   /* tids 1..4095 */
#define OS2DBL__MAX_COUNT 65535UL    /* post count, request count, usage count, critsec count: a word */
#define OS2DBL__MAX_MUX 64UL         /* records in a mux-wait */
#define OS2DBL__TMR_HZ 1193182UL     /* the 8254 timer's rate */
#define OS2DBL__ULONG32_MAX 0xFFFFFFFFUL
#define OS2DBL__SHARED 0x01UL        /* DC_SEM_SHARED */
#define OS2DBL__MUX_ANY 0x02UL       /* DCMW_WAIT_ANY */
#define OS2DBL__MUX_ALL 0x04UL       /* DCMW_WAIT_ALL */
#define OS2DBL__STACK_COMMITTED 0x02UL
#define OS2DBL__CREATE_SUSPENDED 0x01UL
#define OS2DBL__FUTEX_WAIT_PRIVATE 128 /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG, Linux ABI */
#define OS2DBL__FUTEX_WAKE_PRIVATE 129 /* FUTEX_WAKE | FUTEX_PRIVATE_FLAG */
#ifndef OS2DBL_CRITSEC_SIGNAL
#define OS2DBL_CRITSEC_SIGNAL (SIGRTMIN + 5)
#endif

/* ---- thread information blocks (public names with INCL_DOSPROCESS) ---- */
struct os2dbl__tib2 {
    ULONG tib2_ultid;          /* thread id */
    ULONG tib2_ulpri;          /* priority: class << 8 | delta */
    ULONG tib2_version;
    USHORT tib2_usMCCount;
    USHORT tib2_fMCForceFlag;
};
struct os2dbl__tib {
    PVOID tib_pexchain;
    PVOID tib_pstack;
    PVOID tib_pstacklimit;
    struct os2dbl__tib2 *tib_ptib2;
    ULONG tib_version;
    ULONG tib_ordinal;
};
struct os2dbl__pib {
    ULONG pib_ulpid;
    ULONG pib_ulppid;
    ULONG pib_hmte;
    PCHAR pib_pchcmd;
    PCHAR pib_pchenv;
    ULONG pib_flstatus;
    ULONG pib_ultype;
};

/* ---- objects ---- */
enum { OS2DBL__EVENT = 1, OS2DBL__MUTEX = 2, OS2DBL__MUX = 3 };

struct os2dbl__obj;
struct os2dbl__waiter;

/* One semaphore a blocked call waits for: an entry in that semaphore's FIFO queue. */
struct os2dbl__link {
    struct os2dbl__link *prev, *next;
    struct os2dbl__waiter *w;
    struct os2dbl__obj *obj;    /* NULL once unlinked */
    unsigned long index;        /* position in the mux-wait list (0 for a plain wait) */
};

/* A blocked call. Lives on the caller's stack; everything in it is under the global lock. */
struct os2dbl__waiter {
    pthread_cond_t cv;          /* on CLOCK_MONOTONIC */
    int done;                   /* released by a post, or given ownership */
    APIRET rc;                  /* result when done: 0 or ERROR_SEM_OWNER_DIED */
    unsigned long index;        /* which link released it */
    unsigned long tid;          /* the caller (mutex ownership goes to it) */
    struct os2dbl__obj *mux;    /* the mux-wait, or NULL for a plain wait */
    struct os2dbl__link *links;
    unsigned long nlinks;
};

struct os2dbl__obj {
    int type;
    unsigned long handle;
    unsigned long usage;        /* opens minus closes, 1 at create */
    unsigned long in_mux;       /* mux-waits listing it */
    char *name;                 /* NULL, or the \SEM32\ name */
    unsigned long attr;
    struct os2dbl__link *head, *tail; /* threads blocked on it, FIFO */
    unsigned long nqueued;
    /* event */
    unsigned long count;        /* post count; 0 = reset */
    unsigned long posts;        /* post generation: successful reset->posted transitions */
    /* mutex */
    unsigned long owner;        /* tid, 0 = unowned */
    unsigned long depth;        /* request count of the owner */
    int died;                   /* last owner ended owning it; next owner gets 105 */
    unsigned long died_tid, died_depth;
    /* mux-wait */
    unsigned long nrec;
    unsigned long rec_h[OS2DBL__MAX_MUX];
    unsigned long rec_user[OS2DBL__MAX_MUX];
    int mux_kind;               /* OS2DBL__EVENT or OS2DBL__MUTEX */
    int mux_all;
    unsigned long nwaiting;     /* threads in DosWaitMuxWaitSem on it */
};

/* ---- threads ---- */
enum { OS2DBL__T_MAIN = 1, OS2DBL__T_CREATED = 2, OS2DBL__T_FOREIGN = 3 };
enum { OS2DBL__RUNNING = 1, OS2DBL__ENDED = 2 };

struct os2dbl__thread {
    unsigned long tid;
    unsigned long serial;       /* distinguishes the users of one tid over time */
    int kind;
    int state;                  /* under the global lock */
    pthread_t pt;
    void (*fn)(ULONG);
    ULONG arg;
    volatile sig_atomic_t in_double; /* inside a Dos* call: the critsec signal defers */
    atomic_int crit_pending;    /* a critical section waits for this thread to stop */
    struct os2dbl__tib tib;
    struct os2dbl__tib2 tib2;
};

/* ---- global state ---- */
static pthread_mutex_t os2dbl__g = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t os2dbl__once = PTHREAD_ONCE_INIT;
static struct os2dbl__obj *os2dbl__tab[OS2DBL__MAX_HANDLES + 1];
static unsigned long os2dbl__used_handles, os2dbl__live;  /* handles 1..used given so far */
static unsigned long os2dbl__free[OS2DBL__MAX_HANDLES];   /* closed handles, last freed on top */
static unsigned long os2dbl__nfree;
static struct os2dbl__thread *os2dbl__thr[OS2DBL__MAX_THREADS + 1];
static unsigned long os2dbl__next_tid = 1, os2dbl__thread_serial;
static pthread_cond_t os2dbl__thr_cv = PTHREAD_COND_INITIALIZER;   /* a thread ended */
static struct os2dbl__thread os2dbl__main_rec;
static struct os2dbl__pib os2dbl__pib;
static pthread_key_t os2dbl__key;
static _Thread_local struct os2dbl__thread *os2dbl__self;
static unsigned long os2dbl__tick = 31;   /* written once under os2dbl__once */
/* named shared memory: a list under the global lock */
struct os2dbl__mem {
    struct os2dbl__mem *next;
    char *name;
    void *base;
    unsigned long refs;   /* accesses given (alloc, each get) not yet freed */
};
static struct os2dbl__mem *os2dbl__mems;

/* critical section */
static atomic_int os2dbl__crit_owner;     /* tid in a critical section, 0 = none */
static atomic_int os2dbl__crit_gen;       /* +1 as each section starts and ends; futex word */
static unsigned long os2dbl__crit_depth;  /* under the global lock */
static atomic_int os2dbl__crit_acks;      /* targets stopped for the current section; futex word */
static pthread_cond_t os2dbl__crit_cv = PTHREAD_COND_INITIALIZER;  /* section ended */

/* the test hook (os2dbl_set_hook) */
enum { OS2DBL_HOOK_POST = 1, OS2DBL_HOOK_RESET = 2 };
typedef void (*os2dbl_hook_fn)(int call, ULONG h);
static _Atomic(os2dbl_hook_fn) os2dbl__hook;

/* counters: statistics only, nothing is ordered by them, so every access is relaxed */
static atomic_ulong os2dbl__n_calls, os2dbl__n_waits, os2dbl__n_posts, os2dbl__n_intr;
static atomic_uint os2dbl__intr_pct;
static atomic_ullong os2dbl__rng;

/* ---- small helpers ---- */
static inline void os2dbl__fatal(const char *fn, const char *what)
{
    fprintf(stderr, "os2dbl: %s: %s\n", fn, what);
    fflush(stderr);
    abort();
}

static inline void os2dbl__lock(void)
{
    int r = pthread_mutex_lock(&os2dbl__g);
    if (r != 0) os2dbl__fatal("lock", strerror(r));
}

static inline void os2dbl__unlock(void) { pthread_mutex_unlock(&os2dbl__g); }

static inline void os2dbl__futex_wait(atomic_int *word, int expected)
{
    syscall(SYS_futex, (int *)word, OS2DBL__FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static inline void os2dbl__futex_wake(atomic_int *word)
{
    syscall(SYS_futex, (int *)word, OS2DBL__FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* splitmix64 over an atomic counter: thread-safe, and replayable single-threaded. */
static inline uint64_t os2dbl__rand(void)
{
    /* relaxed: only uniqueness of the counter value matters, not its order */
    uint64_t z = atomic_fetch_add_explicit(&os2dbl__rng, 0x9E3779B97F4A7C15ULL, memory_order_relaxed)
                 + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline struct timespec os2dbl__now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

static inline struct timespec os2dbl__add_us(struct timespec t, uint64_t us)
{
    t.tv_sec += (time_t)(us / 1000000u);
    t.tv_nsec += (long)(us % 1000000u) * 1000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static inline int os2dbl__before(struct timespec a, struct timespec b)
{
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

/* OS/2 reads a timeout as 32 bits: 0xFFFFFFFF is SEM_INDEFINITE_WAIT there. */
static inline int os2dbl__indefinite(const char *fn, ULONG ms)
{
    if (ms == (ULONG)-1 || ms == OS2DBL__ULONG32_MAX) return 1;
    if (ms > OS2DBL__ULONG32_MAX)
        os2dbl__fatal(fn, "timeout above 0xFFFFFFFF: it does not fit OS/2's 32-bit ULONG");
    return 0;
}

/* A timeout of ms milliseconds lasts a whole number of ticks, rounded up. */
static inline uint64_t os2dbl__round_ms(ULONG ms)
{
    uint64_t t = os2dbl__tick;
    return ((uint64_t)ms + t - 1) / t * t;
}

/* ---- thread records ---- */
static inline void os2dbl__fill_tib(struct os2dbl__thread *t)
{
    t->tib.tib_ptib2 = &t->tib2;
    t->tib.tib_ordinal = t->tid;
    t->tib.tib_version = 20;
    t->tib2.tib2_ultid = t->tid;
    t->tib2.tib2_ulpri = 0x200;   /* PRTYC_REGULAR, delta 0 */
    t->tib2.tib2_version = 20;
}

/* Free tid: round-robin over 2..4095; a slot whose thread ended and was never waited for
 * is reused last-resort style (its record is dropped). Global lock held. */
static inline unsigned long os2dbl__alloc_tid(void)
{
    unsigned long i, t;
    for (i = 0; i < OS2DBL__MAX_THREADS - 1; i++) {
        t = (os2dbl__next_tid - 1) % (OS2DBL__MAX_THREADS - 1) + 2;  /* after the last: 2..4095 */
        os2dbl__next_tid = t;
        if (!os2dbl__thr[t]) return t;
    }
    for (t = 2; t <= OS2DBL__MAX_THREADS; t++) {
        if (os2dbl__thr[t]->state == OS2DBL__ENDED) {
            free(os2dbl__thr[t]);
            os2dbl__thr[t] = NULL;
            return t;
        }
    }
    return 0;
}

static void os2dbl__thread_gone(struct os2dbl__thread *me);

static inline void os2dbl__key_destructor(void *p)
{
    struct os2dbl__thread *me = (struct os2dbl__thread *)p;
    me->in_double = 1;          /* ending is the kernel's work: not suspended holding the lock */
    atomic_signal_fence(memory_order_seq_cst);
    os2dbl__lock();
    os2dbl__thread_gone(me);
    os2dbl__unlock();
}

/* The calling thread's record; a thread the double did not create gets one now.
 * Global lock held. NULL only when 4094 threads are alive. */
static inline struct os2dbl__thread *os2dbl__me_locked(void)
{
    struct os2dbl__thread *me = os2dbl__self;
    if (me) return me;
    unsigned long tid = os2dbl__alloc_tid();
    if (!tid) return NULL;
    me = (struct os2dbl__thread *)calloc(1, sizeof *me);
    if (!me) return NULL;
    me->tid = tid;
    me->serial = ++os2dbl__thread_serial;
    me->kind = OS2DBL__T_FOREIGN;
    me->state = OS2DBL__RUNNING;
    me->pt = pthread_self();
    os2dbl__fill_tib(me);
    os2dbl__thr[tid] = me;
    os2dbl__self = me;
    pthread_setspecific(os2dbl__key, me);
    return me;
}

/* ---- critical section: the suspension of the other threads ---- */

/* Tell DosEnterCritSec this thread has stopped (once per section it was asked for).
 * `owner` is the critsec owner this thread read, with acquire, before calling. */
static inline void os2dbl__crit_ack(struct os2dbl__thread *me, int owner)
{
    if (owner == 0 || (unsigned long)owner == me->tid) return;
    /* acq_rel: acquire pairs with the release store of crit_pending = 1 in
     * os2dbl__enter_critsec (so the reset of crit_acks before it is visible and our add
     * lands after it); release publishes this thread's stop to the exchange's reader. */
    if (atomic_exchange_explicit(&me->crit_pending, 0, memory_order_acq_rel) == 1) {
        /* release: pairs with the acquire load of crit_acks in os2dbl__enter_critsec */
        atomic_fetch_add_explicit(&os2dbl__crit_acks, 1, memory_order_release);
        os2dbl__futex_wake(&os2dbl__crit_acks);
    }
}

/* Stay here while another thread is in a critical section. Async-signal-safe. Called
 * with in_double 0 (from leave, or from the handler outside a call).
 * While it runs, in_double is 1, so a stop signal that arrives in it only acks (the loop
 * below does the parking): a handler that parked in here could interrupt the ack between its
 * exchange and its add, find crit_pending already taken, and sleep with the add not done,
 * the section's owner waiting for it forever. On the way out in_double is 0 again, and the
 * owner is read once more: a section whose signal came while it was 1 (and acked) parks
 * this thread before it returns; one whose signal comes later parks it in the handler. */
static inline void os2dbl__park(struct os2dbl__thread *me)
{
    me->in_double = 1;
    atomic_signal_fence(memory_order_seq_cst);  /* the handler sees in_double set from here */
    for (;;) {
        /* The futex word is the generation, not the owner: one thread's sections back to
         * back have the same owner, and a park that slept on the owner it read could sleep
         * through the end of that section into the next one, whose stop signal waits, blocked,
         * for this handler to return: no ack, forever.
         * acquire: pairs with the release increments of crit_gen in enter_critsec and
         * crit_end; read first, so a change after it makes the futex wait return. */
        int gen = atomic_load_explicit(&os2dbl__crit_gen, memory_order_acquire);
        /* acquire: pairs with the release stores of crit_owner in enter_critsec / crit_end;
         * seeing the new owner makes its crit_pending = 1 visible to crit_ack */
        int owner = atomic_load_explicit(&os2dbl__crit_owner, memory_order_acquire);
        if (owner == 0 || (unsigned long)owner == me->tid) {
            atomic_signal_fence(memory_order_seq_cst);
            me->in_double = 0;
            atomic_signal_fence(memory_order_seq_cst);  /* a signal from here on parks in the handler */
            /* acquire: as above */
            owner = atomic_load_explicit(&os2dbl__crit_owner, memory_order_acquire);
            if (owner == 0 || (unsigned long)owner == me->tid) return;
            me->in_double = 1;
            atomic_signal_fence(memory_order_seq_cst);
            continue;
        }
        os2dbl__crit_ack(me, owner);
        os2dbl__futex_wait(&os2dbl__crit_gen, gen);
    }
}

static inline void os2dbl__crit_handler(int sig)
{
    (void)sig;
    int saved = errno;
    struct os2dbl__thread *me = os2dbl__self;
    if (me && me->kind != OS2DBL__T_FOREIGN) {
        if (me->in_double) {
            /* inside a Dos* call: stop counts as done, the thread parks when it returns */
            /* acquire: pairs with the release store of crit_owner in enter_critsec */
            os2dbl__crit_ack(me, atomic_load_explicit(&os2dbl__crit_owner, memory_order_acquire));
        } else {
            os2dbl__park(me);
        }
    }
    errno = saved;
}

/* ---- entry and exit of every Dos* call ---- */
static void os2dbl__init(void);

static inline void os2dbl__enter(void)
{
    pthread_once(&os2dbl__once, os2dbl__init);
    /* relaxed: a statistic */
    atomic_fetch_add_explicit(&os2dbl__n_calls, 1, memory_order_relaxed);
    struct os2dbl__thread *me = os2dbl__self;
    if (me) me->in_double = 1;
    atomic_signal_fence(memory_order_seq_cst);  /* the handler sees in_double set from here */
}

static inline void os2dbl__leave(void)
{
    struct os2dbl__thread *me = os2dbl__self;
    if (!me || me->kind == OS2DBL__T_FOREIGN) return;
    atomic_signal_fence(memory_order_seq_cst);  /* the call's work is done before this */
    me->in_double = 0;
    atomic_signal_fence(memory_order_seq_cst);  /* a signal from here on parks in the handler */
    os2dbl__park(me);
}

/* The double's own queries (os2dbl_blocked, ...) take its lock outside any Dos* call: they
 * defer a critical section's stop as a call does, or a thread stopped while holding the lock
 * would stop the section's owner in DosExitCritSec forever. Not counted as a call; a query
 * from a hook, inside a call, leaves the call's state as it was. Returns what query_end needs. */
static inline int os2dbl__query_begin(void)
{
    struct os2dbl__thread *me = os2dbl__self;
    int was = me ? me->in_double : 1;
    if (me) me->in_double = 1;
    atomic_signal_fence(memory_order_seq_cst);  /* the handler sees in_double set from here */
    os2dbl__lock();
    return was;
}

static inline void os2dbl__query_end(int was)
{
    os2dbl__unlock();
    if (!was) os2dbl__leave();
}

/* ---- initialisation ---- */
static inline unsigned long os2dbl__env(const char *name, unsigned long lo, unsigned long hi,
                                        unsigned long dflt)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end;
    unsigned long v = strtoul(s, &end, 0);
    if (*end || v < lo || v > hi) {
        fprintf(stderr, "os2dbl: %s=%s out of range %lu..%lu, using %lu\n", name, s, lo, hi, dflt);
        return dflt;
    }
    return v;
}

static void os2dbl__init(void)
{
    os2dbl__tick = os2dbl__env("OS2DBL_TICK_MS", 1, 1000, 31);
    /* relaxed: pthread_once orders these before every other use */
    atomic_store_explicit(&os2dbl__intr_pct, (unsigned)os2dbl__env("OS2DBL_INTERRUPT", 0, 100, 0),
                          memory_order_relaxed);
    const char *seed = getenv("OS2DBL_SEED");
    atomic_store_explicit(&os2dbl__rng, seed ? strtoull(seed, NULL, 0) : 0x05D2DB1ULL,
                          memory_order_relaxed);
    os2dbl__pib.pib_ulpid = (ULONG)getpid();
    os2dbl__pib.pib_ulppid = (ULONG)getppid();
    os2dbl__pib.pib_ultype = 2;   /* VIO window, as a text-mode program */
    if (pthread_key_create(&os2dbl__key, os2dbl__key_destructor) != 0)
        os2dbl__fatal("init", "pthread_key_create");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = os2dbl__crit_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(OS2DBL_CRITSEC_SIGNAL, &sa, NULL) != 0) os2dbl__fatal("init", "sigaction");
    /* The main thread is tid 1 (the constructor below calls us on it). */
    if ((pid_t)syscall(SYS_gettid) == getpid()) {
        struct os2dbl__thread *m = &os2dbl__main_rec;
        m->tid = 1;
        m->serial = ++os2dbl__thread_serial;
        m->kind = OS2DBL__T_MAIN;
        m->state = OS2DBL__RUNNING;
        m->pt = pthread_self();
        os2dbl__fill_tib(m);
        os2dbl__thr[1] = m;
        os2dbl__self = m;
    }
}

__attribute__((constructor)) static void os2dbl__ctor(void)
{
    pthread_once(&os2dbl__once, os2dbl__init);
}

/* ---- handles ---- */
static inline struct os2dbl__obj *os2dbl__get(ULONG h, int type)
{
    if (h == 0 || h > OS2DBL__MAX_HANDLES) return NULL;
    struct os2dbl__obj *o = os2dbl__tab[h];
    return o && o->type == type ? o : NULL;
}

static inline int os2dbl__name_ok(const char *n)
{
    static const char prefix[] = "\\SEM32\\";
    size_t i, len = strlen(n);
    if (len <= sizeof prefix - 1 || len > 255) return 0;
    for (i = 0; i < sizeof prefix - 1; i++) {
        char c = n[i];
        if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
        if (c != prefix[i]) return 0;
    }
    return 1;
}

static inline int os2dbl__name_eq(const char *a, const char *b)
{
    for (;; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'a' && x <= 'z') x = (char)(x - 'a' + 'A');
        if (y >= 'a' && y <= 'z') y = (char)(y - 'a' + 'A');
        if (x == '/') x = '\\';
        if (y == '/') y = '\\';
        if (x != y) return 0;
        if (!x) return 1;
    }
}

static inline struct os2dbl__obj *os2dbl__find_name(const char *n)
{
    unsigned long h;
    for (h = 1; h <= OS2DBL__MAX_HANDLES; h++)
        if (os2dbl__tab[h] && os2dbl__tab[h]->name && os2dbl__name_eq(os2dbl__tab[h]->name, n))
            return os2dbl__tab[h];
    return NULL;
}

/* A new object in the table. Global lock held. */
static inline APIRET os2dbl__create(int type, PSZ name, ULONG attr, struct os2dbl__obj **out)
{
    if (name) {
        if (!os2dbl__name_ok(name)) return OS2DBL__E_INVALID_NAME;
        if (os2dbl__find_name(name)) return OS2DBL__E_DUPLICATE_NAME;
    }
    if (os2dbl__nfree == 0 && os2dbl__used_handles == OS2DBL__MAX_HANDLES)
        return OS2DBL__E_TOO_MANY_SEMAPHORES;
    struct os2dbl__obj *o = (struct os2dbl__obj *)calloc(1, sizeof *o);
    if (!o) return OS2DBL__E_NOT_ENOUGH_MEMORY;
    if (name) {
        o->name = strdup(name);
        if (!o->name) {
            free(o);
            return OS2DBL__E_NOT_ENOUGH_MEMORY;
        }
        attr |= OS2DBL__SHARED;   /* named semaphores are always shared */
    }
    /* the slot closed last, else one never used */
    unsigned long h = os2dbl__nfree ? os2dbl__free[--os2dbl__nfree] : ++os2dbl__used_handles;
    o->type = type;
    o->handle = h;
    o->usage = 1;
    o->attr = attr;
    os2dbl__tab[h] = o;
    os2dbl__live++;
    *out = o;
    return OS2DBL__OK;
}

static inline void os2dbl__delete(struct os2dbl__obj *o)
{
    os2dbl__tab[o->handle] = NULL;
    os2dbl__free[os2dbl__nfree++] = o->handle;   /* the next create reuses it */
    os2dbl__live--;
    free(o->name);
    free(o);
}

/* DosOpen*Sem: by name (then *ph must be 0) or by handle (then name must be NULL). */
static inline APIRET os2dbl__open(int type, PSZ name, PULONG ph)
{
    if (!ph) return OS2DBL__E_INVALID_PARAMETER;
    struct os2dbl__obj *o;
    if (name) {
        if (*ph != 0) return OS2DBL__E_INVALID_PARAMETER;
        if (!os2dbl__name_ok(name)) return OS2DBL__E_INVALID_NAME;
        o = os2dbl__find_name(name);
        if (!o || o->type != type) return OS2DBL__E_SEM_NOT_FOUND;
    } else {
        o = os2dbl__get(*ph, type);
        if (!o) return OS2DBL__E_INVALID_HANDLE;
    }
    if (o->usage >= OS2DBL__MAX_COUNT) return OS2DBL__E_TOO_MANY_OPENS;
    o->usage++;
    *ph = o->handle;
    return type == OS2DBL__MUTEX && o->died ? OS2DBL__E_SEM_OWNER_DIED : OS2DBL__OK;
}

/* ---- wait queues ---- */
static inline void os2dbl__enqueue(struct os2dbl__obj *o, struct os2dbl__link *l)
{
    l->obj = o;
    l->next = NULL;
    l->prev = o->tail;
    if (o->tail) o->tail->next = l;
    else o->head = l;
    o->tail = l;
    o->nqueued++;
}

static inline void os2dbl__unlink(struct os2dbl__link *l)
{
    struct os2dbl__obj *o = l->obj;
    if (!o) return;
    if (l->prev) l->prev->next = l->next;
    else o->head = l->next;
    if (l->next) l->next->prev = l->prev;
    else o->tail = l->prev;
    o->nqueued--;
    l->obj = NULL;
}

static inline void os2dbl__unlink_all(struct os2dbl__waiter *w)
{
    unsigned long i;
    for (i = 0; i < w->nlinks; i++) os2dbl__unlink(&w->links[i]);
}

/* Release a blocked call: it returns rc, released by link `index`. */
static inline void os2dbl__grant(struct os2dbl__waiter *w, unsigned long index, APIRET rc)
{
    w->done = 1;
    w->rc = rc;
    w->index = index;
    os2dbl__unlink_all(w);
    pthread_cond_signal(&w->cv);
}

/* Block the caller until released, timed out, or interrupted by the knob. The caller's
 * links are queued; global lock held throughout (released inside the condvar wait). */
static inline APIRET os2dbl__block(struct os2dbl__waiter *w, ULONG ms, int indefinite)
{
    struct timespec now = os2dbl__now(), deadline = now, intr_at = now, wake;
    if (!indefinite) deadline = os2dbl__add_us(now, os2dbl__round_ms(ms) * 1000u);
    /* relaxed: a knob, any recent value will do */
    unsigned pct = atomic_load_explicit(&os2dbl__intr_pct, memory_order_relaxed);
    int intr = pct && os2dbl__rand() % 100 < pct;
    if (intr) {
        uint64_t r = os2dbl__rand();
        uint64_t span_us = (indefinite ? 2 * os2dbl__tick : os2dbl__round_ms(ms)) * 1000u;
        /* half at once (a signal already pending), half after part of the timeout */
        intr_at = (r & 1) ? now : os2dbl__add_us(now, (r >> 1) % span_us);
    }
    for (;;) {
        if (w->done) return w->rc;
        if (intr && !os2dbl__before(now, intr_at)) {
            os2dbl__unlink_all(w);
            /* relaxed: a statistic */
            atomic_fetch_add_explicit(&os2dbl__n_intr, 1, memory_order_relaxed);
            return OS2DBL__E_INTERRUPT;
        }
        if (!indefinite && !os2dbl__before(now, deadline)) {
            os2dbl__unlink_all(w);
            return OS2DBL__E_TIMEOUT;
        }
        if (intr || !indefinite) {
            wake = indefinite ? intr_at
                 : (intr && os2dbl__before(intr_at, deadline)) ? intr_at : deadline;
            pthread_cond_timedwait(&w->cv, &os2dbl__g, &wake);
        } else {
            pthread_cond_wait(&w->cv, &os2dbl__g);
        }
        now = os2dbl__now();
    }
}

static inline void os2dbl__waiter_init(struct os2dbl__waiter *w, unsigned long tid,
                                       struct os2dbl__obj *mux, struct os2dbl__link *links,
                                       unsigned long nlinks)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    w->done = 0;
    w->rc = OS2DBL__OK;
    w->index = 0;
    w->tid = tid;
    w->mux = mux;
    w->links = links;
    w->nlinks = nlinks;
    unsigned long i;
    for (i = 0; i < nlinks; i++) {
        links[i].w = w;
        links[i].obj = NULL;
        links[i].index = i;
    }
}

/* ---- event semaphores ---- */

/* Every member of a DCMW_WAIT_ALL event mux-wait posted right now? */
static inline int os2dbl__all_posted(struct os2dbl__obj *mux)
{
    unsigned long i;
    for (i = 0; i < mux->nrec; i++)
        if (os2dbl__tab[mux->rec_h[i]]->count == 0) return 0;
    return 1;
}

/* A post: release every thread blocked on the event at this moment. */
static inline void os2dbl__event_release(struct os2dbl__obj *ev)
{
    struct os2dbl__link *l = ev->head, *next;
    for (; l; l = next) {
        next = l->next;   /* grant() unlinks only l's waiter, which has one link here */
        struct os2dbl__waiter *w = l->w;
        if (w->mux && w->mux->mux_all) {
            if (os2dbl__all_posted(w->mux)) os2dbl__grant(w, l->index, OS2DBL__OK);
        } else {
            os2dbl__grant(w, l->index, OS2DBL__OK);
        }
    }
}

static inline APIRET os2dbl__create_event(PSZ name, PULONG ph, ULONG attr, BOOL32 state)
{
    if (!ph) return OS2DBL__E_INVALID_PARAMETER;
    if (attr & ~OS2DBL__SHARED) return OS2DBL__E_INVALID_PARAMETER;  /* DCE_* too: see top */
    struct os2dbl__obj *o;
    os2dbl__lock();
    APIRET rc = os2dbl__create(OS2DBL__EVENT, name, attr, &o);
    if (rc == OS2DBL__OK) {
        o->count = state ? 1 : 0;
        *ph = o->handle;
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__close_event(ULONG h)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__EVENT);
    if (!o) rc = OS2DBL__E_INVALID_HANDLE;
    else if (o->usage == 1 && (o->nqueued || o->in_mux)) rc = OS2DBL__E_SEM_BUSY;
    else if (--o->usage == 0) os2dbl__delete(o);
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__post_event(ULONG h)
{
    APIRET rc;
    /* relaxed: a statistic */
    atomic_fetch_add_explicit(&os2dbl__n_posts, 1, memory_order_relaxed);
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__EVENT);
    if (!o) {
        rc = OS2DBL__E_INVALID_HANDLE;
    } else if (o->count >= OS2DBL__MAX_COUNT) {
        rc = OS2DBL__E_TOO_MANY_POSTS;
    } else {
        rc = o->count ? OS2DBL__E_ALREADY_POSTED : OS2DBL__OK;
        if (o->count++ == 0) o->posts++;
        os2dbl__event_release(o);
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__reset_event(ULONG h, PULONG pcount)
{
    APIRET rc;
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__EVENT);
    if (!o) {
        rc = OS2DBL__E_INVALID_HANDLE;
    } else if (!pcount) {
        rc = OS2DBL__E_INVALID_PARAMETER;
    } else {
        *pcount = o->count;
        rc = o->count ? OS2DBL__OK : OS2DBL__E_ALREADY_RESET;
        o->count = 0;
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__query_event(ULONG h, PULONG pcount)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__EVENT);
    if (!o) rc = OS2DBL__E_INVALID_HANDLE;
    else if (!pcount) rc = OS2DBL__E_INVALID_PARAMETER;
    else *pcount = o->count;
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__wait_event(ULONG h, ULONG ms)
{
    APIRET rc;
    /* relaxed: a statistic */
    atomic_fetch_add_explicit(&os2dbl__n_waits, 1, memory_order_relaxed);
    int indefinite = os2dbl__indefinite("DosWaitEventSem", ms);
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__EVENT);
    if (!o) {
        rc = OS2DBL__E_INVALID_HANDLE;
    } else if (o->count) {
        rc = OS2DBL__OK;
    } else if (ms == 0) {
        rc = OS2DBL__E_TIMEOUT;
    } else {
        struct os2dbl__waiter w;
        struct os2dbl__link l;
        os2dbl__waiter_init(&w, 0, NULL, &l, 1);
        os2dbl__enqueue(o, &l);
        rc = os2dbl__block(&w, ms, indefinite);
        pthread_cond_destroy(&w.cv);
    }
    os2dbl__unlock();
    return rc;
}

/* ---- mutex semaphores ---- */

/* Give a free mutex to tid; 105 if its last owner died. */
static inline APIRET os2dbl__take(struct os2dbl__obj *m, unsigned long tid)
{
    m->owner = tid;
    m->depth = 1;
    if (m->died) {
        m->died = 0;
        return OS2DBL__E_SEM_OWNER_DIED;
    }
    return OS2DBL__OK;
}

/* Every member of a DCMW_WAIT_ALL mutex mux-wait free or already tid's? */
static inline int os2dbl__all_free(struct os2dbl__obj *mux, unsigned long tid)
{
    unsigned long i;
    for (i = 0; i < mux->nrec; i++) {
        struct os2dbl__obj *m = os2dbl__tab[mux->rec_h[i]];
        if (m->owner != 0 && m->owner != tid) return 0;
        if (m->owner == tid && m->depth >= OS2DBL__MAX_COUNT) return 0;
    }
    return 1;
}

static inline APIRET os2dbl__take_all(struct os2dbl__obj *mux, unsigned long tid)
{
    APIRET rc = OS2DBL__OK;
    unsigned long i;
    for (i = 0; i < mux->nrec; i++) {
        struct os2dbl__obj *m = os2dbl__tab[mux->rec_h[i]];
        if (m->owner == tid) m->depth++;
        else if (os2dbl__take(m, tid) != OS2DBL__OK) rc = OS2DBL__E_SEM_OWNER_DIED;
    }
    return rc;
}

/* The mutex just became free: hand it to the first queued thread that can take it. */
static inline void os2dbl__handoff(struct os2dbl__obj *m)
{
    struct os2dbl__link *l;
    for (l = m->head; l; l = l->next) {
        struct os2dbl__waiter *w = l->w;
        if (w->mux && w->mux->mux_all) {
            if (os2dbl__all_free(w->mux, w->tid)) {
                os2dbl__grant(w, l->index, os2dbl__take_all(w->mux, w->tid));
                return;
            }
        } else {
            os2dbl__grant(w, l->index, os2dbl__take(m, w->tid));
            return;
        }
    }
}

static inline APIRET os2dbl__create_mutex(PSZ name, PULONG ph, ULONG attr, BOOL32 owned)
{
    if (!ph) return OS2DBL__E_INVALID_PARAMETER;
    if (attr & ~OS2DBL__SHARED) return OS2DBL__E_INVALID_PARAMETER;
    struct os2dbl__obj *o;
    os2dbl__lock();
    struct os2dbl__thread *me = os2dbl__me_locked();
    APIRET rc = me ? os2dbl__create(OS2DBL__MUTEX, name, attr, &o) : OS2DBL__E_MAX_THRDS_REACHED;
    if (rc == OS2DBL__OK) {
        if (owned) os2dbl__take(o, me->tid);
        *ph = o->handle;
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__close_mutex(ULONG h)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__MUTEX);
    struct os2dbl__thread *me = os2dbl__me_locked();
    if (!o) rc = OS2DBL__E_INVALID_HANDLE;
    else if (me && o->owner == me->tid) rc = OS2DBL__E_SEM_BUSY;
    else if (o->usage == 1 && (o->owner || o->nqueued || o->in_mux)) rc = OS2DBL__E_SEM_BUSY;
    else if (--o->usage == 0) os2dbl__delete(o);
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__request_mutex(ULONG h, ULONG ms)
{
    APIRET rc;
    int indefinite = os2dbl__indefinite("DosRequestMutexSem", ms);
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__MUTEX);
    struct os2dbl__thread *me = os2dbl__me_locked();
    if (!o) {
        rc = OS2DBL__E_INVALID_HANDLE;
    } else if (!me) {
        rc = OS2DBL__E_MAX_THRDS_REACHED;
    } else if (o->owner == me->tid) {
        if (o->depth >= OS2DBL__MAX_COUNT) {
            rc = OS2DBL__E_TOO_MANY_SEM_REQUESTS;
        } else {
            o->depth++;
            rc = OS2DBL__OK;
        }
    } else if (o->owner == 0) {
        rc = os2dbl__take(o, me->tid);
    } else if (ms == 0) {
        rc = OS2DBL__E_TIMEOUT;
    } else {
        struct os2dbl__waiter w;
        struct os2dbl__link l;
        os2dbl__waiter_init(&w, me->tid, NULL, &l, 1);
        os2dbl__enqueue(o, &l);
        rc = os2dbl__block(&w, ms, indefinite);
        pthread_cond_destroy(&w.cv);
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__release_mutex(ULONG h)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__MUTEX);
    struct os2dbl__thread *me = os2dbl__me_locked();
    if (!o) {
        rc = OS2DBL__E_INVALID_HANDLE;
    } else if (!me || o->owner != me->tid) {
        rc = OS2DBL__E_NOT_OWNER;
    } else if (--o->depth == 0) {
        o->owner = 0;
        os2dbl__handoff(o);
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__query_mutex(ULONG h, PPID ppid, PTID ptid, PULONG pcount)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__MUTEX);
    if (!o) {
        rc = OS2DBL__E_INVALID_HANDLE;
    } else if (!ppid || !ptid || !pcount) {
        rc = OS2DBL__E_INVALID_PARAMETER;
    } else if (o->died && o->owner == 0) {
        *ppid = os2dbl__pib.pib_ulpid;
        *ptid = o->died_tid;
        *pcount = o->died_depth;
        rc = OS2DBL__E_SEM_OWNER_DIED;
    } else {
        *ppid = o->owner ? os2dbl__pib.pib_ulpid : 0;
        *ptid = o->owner;
        *pcount = o->depth;
    }
    os2dbl__unlock();
    return rc;
}

/* ---- mux-wait semaphores ---- */
struct os2dbl__semrecord {
    void *hsemCur;
    ULONG ulUser;
};

static inline APIRET os2dbl__create_mux(PSZ name, PULONG ph, ULONG n,
                                        const struct os2dbl__semrecord *rec, ULONG attr)
{
    if (!ph) return OS2DBL__E_INVALID_PARAMETER;
    ULONG mode = attr & (OS2DBL__MUX_ANY | OS2DBL__MUX_ALL);
    if (attr & ~(OS2DBL__SHARED | OS2DBL__MUX_ANY | OS2DBL__MUX_ALL)) return OS2DBL__E_INVALID_PARAMETER;
    if (mode != OS2DBL__MUX_ANY && mode != OS2DBL__MUX_ALL) return OS2DBL__E_INVALID_PARAMETER;
    if (n > OS2DBL__MAX_MUX) return OS2DBL__E_TOO_MANY_SEMAPHORES;
    if (n && !rec) return OS2DBL__E_INVALID_PARAMETER;
    APIRET rc = OS2DBL__OK;
    int kind = 0;
    unsigned long i, j;
    os2dbl__lock();
    for (i = 0; i < n && rc == OS2DBL__OK; i++) {
        ULONG h = (ULONG)(uintptr_t)rec[i].hsemCur;
        struct os2dbl__obj *m = (h && h <= OS2DBL__MAX_HANDLES) ? os2dbl__tab[h] : NULL;
        if (!m) rc = OS2DBL__E_INVALID_HANDLE;
        else if (m->type == OS2DBL__MUX || (kind && m->type != kind)) rc = OS2DBL__E_WRONG_TYPE;
        kind = m ? m->type : kind;
        for (j = 0; j < i && rc == OS2DBL__OK; j++)
            if ((ULONG)(uintptr_t)rec[j].hsemCur == h) rc = OS2DBL__E_DUPLICATE_HANDLE;
    }
    struct os2dbl__obj *o;
    if (rc == OS2DBL__OK) rc = os2dbl__create(OS2DBL__MUX, name, attr, &o);
    if (rc == OS2DBL__OK) {
        o->nrec = n;
        o->mux_kind = kind;
        o->mux_all = mode == OS2DBL__MUX_ALL;
        for (i = 0; i < n; i++) {
            o->rec_h[i] = (ULONG)(uintptr_t)rec[i].hsemCur;
            o->rec_user[i] = rec[i].ulUser;
            os2dbl__tab[o->rec_h[i]]->in_mux++;
        }
        *ph = o->handle;
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__close_mux(ULONG h)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__MUX);
    if (!o) {
        rc = OS2DBL__E_INVALID_HANDLE;
    } else if (o->usage == 1 && o->nwaiting) {
        rc = OS2DBL__E_SEM_BUSY;
    } else if (--o->usage == 0) {
        unsigned long i;
        for (i = 0; i < o->nrec; i++) os2dbl__tab[o->rec_h[i]]->in_mux--;
        os2dbl__delete(o);
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__wait_mux(ULONG h, ULONG ms, PULONG puser)
{
    APIRET rc = OS2DBL__E_TIMEOUT;
    int indefinite = os2dbl__indefinite("DosWaitMuxWaitSem", ms);
    unsigned long i, got = 0;
    int ready = 0;
    os2dbl__lock();
    struct os2dbl__obj *o = os2dbl__get(h, OS2DBL__MUX);
    struct os2dbl__thread *me = os2dbl__me_locked();
    if (!o) {
        rc = OS2DBL__E_INVALID_HANDLE;
    } else if (!puser) {
        rc = OS2DBL__E_INVALID_PARAMETER;
    } else if (!me) {
        rc = OS2DBL__E_MAX_THRDS_REACHED;
    } else if (o->nrec == 0) {
        rc = OS2DBL__E_EMPTY_MUXWAIT;
    } else if (o->mux_kind == OS2DBL__EVENT && o->mux_all) {
        if (os2dbl__all_posted(o)) {
            ready = 1;
            got = o->nrec - 1;
            rc = OS2DBL__OK;
        }
    } else if (o->mux_kind == OS2DBL__EVENT) {
        for (i = 0; i < o->nrec && !ready; i++) {
            if (os2dbl__tab[o->rec_h[i]]->count) {
                ready = 1;
                got = i;
                rc = OS2DBL__OK;
            }
        }
    } else if (o->mux_all) {
        if (os2dbl__all_free(o, me->tid)) {
            ready = 1;
            got = o->nrec - 1;
            rc = os2dbl__take_all(o, me->tid);
        }
    } else {
        for (i = 0; i < o->nrec && !ready; i++) {
            struct os2dbl__obj *m = os2dbl__tab[o->rec_h[i]];
            if (m->owner == me->tid) {
                ready = 1;
                got = i;
                if (m->depth >= OS2DBL__MAX_COUNT) {
                    rc = OS2DBL__E_TOO_MANY_SEM_REQUESTS;
                } else {
                    m->depth++;
                    rc = OS2DBL__OK;
                }
            } else if (m->owner == 0) {
                ready = 1;
                got = i;
                rc = os2dbl__take(m, me->tid);
            }
        }
    }
    if (o && puser && me && o->nrec && !ready && ms != 0) {
        struct os2dbl__waiter w;
        struct os2dbl__link links[OS2DBL__MAX_MUX];
        os2dbl__waiter_init(&w, me->tid, o, links, o->nrec);
        for (i = 0; i < o->nrec; i++) os2dbl__enqueue(os2dbl__tab[o->rec_h[i]], &links[i]);
        o->nwaiting++;
        rc = os2dbl__block(&w, ms, indefinite);
        o->nwaiting--;
        pthread_cond_destroy(&w.cv);
        if (w.done) {
            ready = 1;
            got = w.index;
        }
    }
    if (ready && (rc == OS2DBL__OK || rc == OS2DBL__E_SEM_OWNER_DIED)) *puser = o->rec_user[got];
    os2dbl__unlock();
    return rc;
}

/* ---- threads ---- */

/* The critical section ends: the parked threads go on. Global lock held. */
static inline void os2dbl__crit_end(void)
{
    os2dbl__crit_depth = 0;
    /* release: pairs with the acquire loads of crit_owner in park and crit_handler; what the
     * owner did in its section is visible to the threads it resumes */
    atomic_store_explicit(&os2dbl__crit_owner, 0, memory_order_release);
    /* release: pairs with the acquire load of crit_gen in park */
    atomic_fetch_add_explicit(&os2dbl__crit_gen, 1, memory_order_release);
    os2dbl__futex_wake(&os2dbl__crit_gen);
    pthread_cond_broadcast(&os2dbl__crit_cv);
}

/* The thread ends (or, for a foreign one, its pthread ends). Global lock held. */
static void os2dbl__thread_gone(struct os2dbl__thread *me)
{
    unsigned long h;
    /* acquire: pairs with the release store of crit_owner in enter_critsec */
    int owner = atomic_load_explicit(&os2dbl__crit_owner, memory_order_acquire);
    os2dbl__crit_ack(me, owner);   /* a section waiting for this thread need not wait more */
    if ((unsigned long)owner == me->tid) os2dbl__crit_end();   /* it ends its own section */
    for (h = 1; h <= OS2DBL__MAX_HANDLES; h++) {
        struct os2dbl__obj *m = os2dbl__tab[h];
        if (m && m->type == OS2DBL__MUTEX && m->owner == me->tid) {
            m->died = 1;
            m->died_tid = me->tid;
            m->died_depth = m->depth;
            m->owner = 0;
            m->depth = 0;
            os2dbl__handoff(m);
        }
    }
    me->state = OS2DBL__ENDED;
    pthread_cond_broadcast(&os2dbl__thr_cv);
    os2dbl__self = NULL;
    atomic_signal_fence(memory_order_seq_cst);   /* a late handler sees no record */
}

static inline void *os2dbl__trampoline(void *p)
{
    struct os2dbl__thread *me = (struct os2dbl__thread *)p;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, OS2DBL_CRITSEC_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    os2dbl__self = me;
    os2dbl__leave();            /* a thread created during a critical section waits for its end */
    me->fn(me->arg);
    me->in_double = 1;          /* ending is the kernel's work: not suspended midway */
    atomic_signal_fence(memory_order_seq_cst);
    os2dbl__lock();
    os2dbl__thread_gone(me);
    os2dbl__unlock();
    return NULL;
}

static inline APIRET os2dbl__create_thread(PTID ptid, void (*fn)(ULONG), ULONG arg, ULONG flag,
                                           ULONG cb)
{
    if (!ptid || !fn) return OS2DBL__E_INVALID_PARAMETER;
    if (flag & OS2DBL__CREATE_SUSPENDED) os2dbl__fatal("DosCreateThread", "CREATE_SUSPENDED is not modelled");
    if (flag & ~OS2DBL__STACK_COMMITTED) return OS2DBL__E_INVALID_PARAMETER;
    APIRET rc = OS2DBL__OK;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    size_t def = 0;
    pthread_attr_getstacksize(&attr, &def);
    if (cb > def) pthread_attr_setstacksize(&attr, (cb + 65535u) & ~(size_t)65535u);
    os2dbl__lock();
    os2dbl__me_locked();   /* the creator has a tid before its child */
    unsigned long tid = os2dbl__alloc_tid();
    struct os2dbl__thread *t = tid ? (struct os2dbl__thread *)calloc(1, sizeof *t) : NULL;
    if (!tid) {
        rc = OS2DBL__E_MAX_THRDS_REACHED;
    } else if (!t) {
        rc = OS2DBL__E_NOT_ENOUGH_MEMORY;
    } else {
        t->tid = tid;
        t->serial = ++os2dbl__thread_serial;
        t->kind = OS2DBL__T_CREATED;
        t->state = OS2DBL__RUNNING;
        t->fn = fn;
        t->arg = arg;
        t->in_double = 1;
        os2dbl__fill_tib(t);
        if (pthread_create(&t->pt, &attr, os2dbl__trampoline, t) != 0) {
            free(t);
            rc = OS2DBL__E_NOT_ENOUGH_MEMORY;
        } else {
            os2dbl__thr[tid] = t;
            *ptid = tid;
        }
    }
    os2dbl__unlock();
    pthread_attr_destroy(&attr);
    return rc;
}

/* Take an ended thread's record out of the table. Global lock held. */
static inline void os2dbl__collect(unsigned long tid)
{
    free(os2dbl__thr[tid]);
    os2dbl__thr[tid] = NULL;
}

static inline APIRET os2dbl__wait_thread(PTID ptid, ULONG option)
{
    if (!ptid || option > 1) return OS2DBL__E_INVALID_PARAMETER;
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__thread *me = os2dbl__me_locked();
    unsigned long tid = *ptid;
    if (tid == 0) {
        for (;;) {
            unsigned long t, ended = 0, oldest = ULONG_MAX, alive = 0;
            for (t = 2; t <= OS2DBL__MAX_THREADS; t++) {
                struct os2dbl__thread *r = os2dbl__thr[t];
                if (!r || r == me) continue;
                if (r->state == OS2DBL__ENDED && r->serial < oldest) {
                    oldest = r->serial;
                    ended = t;
                } else if (r->state == OS2DBL__RUNNING) {
                    alive++;
                }
            }
            if (ended) {
                os2dbl__collect(ended);
                *ptid = ended;
                break;
            }
            if (!alive) {
                rc = OS2DBL__E_INVALID_THREADID;
                break;
            }
            if (option == 1) {
                rc = OS2DBL__E_THREAD_NOT_TERMINATED;
                break;
            }
            pthread_cond_wait(&os2dbl__thr_cv, &os2dbl__g);
        }
    } else if (tid == 1 || tid > OS2DBL__MAX_THREADS || !os2dbl__thr[tid] || os2dbl__thr[tid] == me) {
        rc = OS2DBL__E_INVALID_THREADID;
    } else {
        unsigned long serial = os2dbl__thr[tid]->serial;
        for (;;) {
            struct os2dbl__thread *r = os2dbl__thr[tid];
            if (!r || r->serial != serial) {   /* another waiter collected it */
                rc = OS2DBL__E_INVALID_THREADID;
                break;
            }
            if (r->state == OS2DBL__ENDED) {
                os2dbl__collect(tid);
                break;
            }
            if (option == 1) {
                rc = OS2DBL__E_THREAD_NOT_TERMINATED;
                break;
            }
            pthread_cond_wait(&os2dbl__thr_cv, &os2dbl__g);
        }
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__sleep(ULONG ms)
{
    if (ms == 0) {
        sched_yield();
        return OS2DBL__OK;
    }
    if (os2dbl__indefinite("DosSleep", ms)) ms = OS2DBL__ULONG32_MAX;   /* 49.7 days, as on OS/2 */
    struct timespec until = os2dbl__add_us(os2dbl__now(), os2dbl__round_ms(ms) * 1000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
    }
    return OS2DBL__OK;
}

static inline APIRET os2dbl__enter_critsec(void)
{
    APIRET rc = OS2DBL__OK;
    int targets = 0;
    os2dbl__lock();
    struct os2dbl__thread *me = os2dbl__me_locked();
    if (!me) {
        os2dbl__unlock();
        return OS2DBL__E_MAX_THRDS_REACHED;
    }
    /* relaxed: the owner field is only written under the lock we hold */
    while (atomic_load_explicit(&os2dbl__crit_owner, memory_order_relaxed) != 0 &&
           (unsigned long)atomic_load_explicit(&os2dbl__crit_owner, memory_order_relaxed) != me->tid)
        pthread_cond_wait(&os2dbl__crit_cv, &os2dbl__g);   /* suspended by the other section */
    if (os2dbl__crit_depth >= OS2DBL__MAX_COUNT) {
        rc = OS2DBL__E_CRITSEC_OVERFLOW;
    } else if (os2dbl__crit_depth++ == 0) {
        unsigned long t;
        /* relaxed: published by the release stores of crit_pending below */
        atomic_store_explicit(&os2dbl__crit_acks, 0, memory_order_relaxed);
        for (t = 1; t <= OS2DBL__MAX_THREADS; t++) {
            struct os2dbl__thread *r = os2dbl__thr[t];
            if (r && r != me && r->kind != OS2DBL__T_FOREIGN && r->state == OS2DBL__RUNNING) {
                /* release: pairs with the acq_rel exchange in crit_ack (orders the reset
                 * of crit_acks before that thread's add) */
                atomic_store_explicit(&r->crit_pending, 1, memory_order_release);
                targets++;
            }
        }
        /* release: pairs with the acquire loads in park / crit_handler / thread_gone; a
         * thread that sees this owner sees its crit_pending = 1 */
        atomic_store_explicit(&os2dbl__crit_owner, (int)me->tid, memory_order_release);
        /* release: pairs with the acquire load of crit_gen in park (a park that read the
         * generation before this sees its futex wait refused and looks again) */
        atomic_fetch_add_explicit(&os2dbl__crit_gen, 1, memory_order_release);
        for (t = 1; t <= OS2DBL__MAX_THREADS; t++) {
            struct os2dbl__thread *r = os2dbl__thr[t];
            if (r && r != me && r->kind != OS2DBL__T_FOREIGN && r->state == OS2DBL__RUNNING)
                pthread_kill(r->pt, OS2DBL_CRITSEC_SIGNAL);
        }
    }
    os2dbl__unlock();
    /* Return only when every other thread has stopped. acquire: pairs with the release
     * add in crit_ack, so what those threads did before stopping is visible here. */
    int a;
    while ((a = atomic_load_explicit(&os2dbl__crit_acks, memory_order_acquire)) < targets)
        os2dbl__futex_wait(&os2dbl__crit_acks, a);
    return rc;
}

static inline APIRET os2dbl__exit_critsec(void)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__thread *me = os2dbl__me_locked();
    /* relaxed: the owner field is only written under the lock we hold */
    int owner = atomic_load_explicit(&os2dbl__crit_owner, memory_order_relaxed);
    if (!me || os2dbl__crit_depth == 0 || (unsigned long)owner != me->tid) {
        rc = OS2DBL__E_CRITSEC_UNDERFLOW;
    } else if (--os2dbl__crit_depth == 0) {
        os2dbl__crit_end();
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__get_info_blocks(struct os2dbl__tib **pptib, struct os2dbl__pib **pppib)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__thread *me = os2dbl__me_locked();
    if (!me) rc = OS2DBL__E_MAX_THRDS_REACHED;
    else {
        if (pptib) *pptib = &me->tib;
        if (pppib) *pppib = &os2dbl__pib;
    }
    os2dbl__unlock();
    return rc;
}

/* ---- named shared memory ---- */
#define OS2DBL__PAG_ALL 0x1FUL        /* PAG_READ | PAG_WRITE | PAG_EXECUTE | PAG_GUARD | PAG_COMMIT */
#define OS2DBL__PAG_RW 0x03UL         /* PAG_READ | PAG_WRITE */
#define OS2DBL__PAG_COMMIT 0x10UL
#define OS2DBL__PAGE 4096UL

static inline int os2dbl__mem_name_ok(const char *n)
{
    static const char prefix[] = "\\SHAREMEM\\";
    size_t i, len = strlen(n);
    if (len <= sizeof prefix - 1 || len > 255) return 0;
    for (i = 0; i < sizeof prefix - 1; i++) {
        char c = n[i];
        if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
        if (c == '/') c = '\\';
        if (c != prefix[i]) return 0;
    }
    return 1;
}

static inline struct os2dbl__mem *os2dbl__mem_find(const char *name, void *base)
{
    struct os2dbl__mem *m;
    for (m = os2dbl__mems; m; m = m->next)
        if (name ? os2dbl__name_eq(m->name, name) : m->base == base) return m;
    return NULL;
}

static inline APIRET os2dbl__alloc_shared(void **pp, const char *name, ULONG size, ULONG flags)
{
    if (!pp || !name || size == 0 || (flags & ~OS2DBL__PAG_ALL) || !(flags & OS2DBL__PAG_RW))
        return OS2DBL__E_INVALID_PARAMETER;
    if (!(flags & OS2DBL__PAG_COMMIT)) return OS2DBL__E_INVALID_PARAMETER; /* not modelled */
    if (!os2dbl__mem_name_ok(name)) return OS2DBL__E_INVALID_NAME;
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__mem *m = NULL;
    if (os2dbl__mem_find(name, NULL)) {
        rc = OS2DBL__E_ALREADY_EXISTS;
    } else {
        size_t bytes = (size + OS2DBL__PAGE - 1) / OS2DBL__PAGE * OS2DBL__PAGE;
        m = (struct os2dbl__mem *)calloc(1, sizeof *m);
        if (m) m->name = strdup(name);
        if (m) m->base = aligned_alloc(OS2DBL__PAGE, bytes);
        if (!m || !m->name || !m->base) {
            if (m) free(m->name);
            free(m);
            rc = OS2DBL__E_NOT_ENOUGH_MEMORY;
        } else {
            memset(m->base, 0, bytes);   /* committed pages read 0 */
            m->refs = 1;
            m->next = os2dbl__mems;
            os2dbl__mems = m;
            *pp = m->base;
        }
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__get_named_shared(void **pp, const char *name, ULONG flags)
{
    if (!pp || !name || (flags & ~OS2DBL__PAG_ALL)) return OS2DBL__E_INVALID_PARAMETER;
    if (!os2dbl__mem_name_ok(name)) return OS2DBL__E_INVALID_NAME;
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__mem *m = os2dbl__mem_find(name, NULL);
    if (!m) {
        rc = OS2DBL__E_FILE_NOT_FOUND;
    } else {
        m->refs++;
        *pp = m->base;
    }
    os2dbl__unlock();
    return rc;
}

static inline APIRET os2dbl__free_mem(void *base)
{
    APIRET rc = OS2DBL__OK;
    os2dbl__lock();
    struct os2dbl__mem *m = os2dbl__mem_find(NULL, base), **pm;
    if (!m) {
        rc = OS2DBL__E_INVALID_PARAMETER;   /* OS/2: ERROR_INVALID_ADDRESS (487) */
    } else if (--m->refs == 0) {
        for (pm = &os2dbl__mems; *pm != m; pm = &(*pm)->next) {}
        *pm = m->next;
        free(m->base);
        free(m->name);
        free(m);
    }
    os2dbl__unlock();
    return rc;
}

/* ---- timer ---- */
static inline APIRET os2dbl__tmr_freq(PULONG hz)
{
    if (!hz) return OS2DBL__E_INVALID_PARAMETER;
    *hz = OS2DBL__TMR_HZ;
    return OS2DBL__OK;
}

static inline APIRET os2dbl__tmr_time(PQWORD q)
{
    if (!q) return OS2DBL__E_INVALID_PARAMETER;
    struct timespec t = os2dbl__now();
    uint64_t v = (uint64_t)t.tv_sec * OS2DBL__TMR_HZ
                 + (uint64_t)t.tv_nsec * OS2DBL__TMR_HZ / 1000000000u;
    q->ulLo = (ULONG)(v & OS2DBL__ULONG32_MAX);
    q->ulHi = (ULONG)(v >> 32);
    return OS2DBL__OK;
}

/* ---- test hooks (not OS/2 API) ---- */
/* relaxed loads: statistics, read after the threads that made them were joined */
static inline unsigned long os2dbl_calls(void)
{
    return atomic_load_explicit(&os2dbl__n_calls, memory_order_relaxed);
}
static inline unsigned long os2dbl_sem_waits(void)
{
    return atomic_load_explicit(&os2dbl__n_waits, memory_order_relaxed);
}
static inline unsigned long os2dbl_sem_posts(void)
{
    return atomic_load_explicit(&os2dbl__n_posts, memory_order_relaxed);
}
static inline unsigned long os2dbl_interrupts(void)
{
    return atomic_load_explicit(&os2dbl__n_intr, memory_order_relaxed);
}
static inline void os2dbl_set_interrupt_percent(unsigned p)
{
    pthread_once(&os2dbl__once, os2dbl__init);
    /* relaxed: a knob; block() reads whatever value is recent */
    atomic_store_explicit(&os2dbl__intr_pct, p > 100 ? 100u : p, memory_order_relaxed);
}
static inline unsigned long os2dbl_tick_ms(void)
{
    pthread_once(&os2dbl__once, os2dbl__init);
    return os2dbl__tick;
}
static inline unsigned long os2dbl_handles_in_use(void)
{
    int was = os2dbl__query_begin();
    unsigned long n = os2dbl__live;
    os2dbl__query_end(was);
    return n;
}
static inline void os2dbl_set_hook(os2dbl_hook_fn fn)
{
    /* release: pairs with the acquire load in os2dbl__run_hook; what the test set up for
     * its hook before installing it is visible to the hook. */
    atomic_store_explicit(&os2dbl__hook, fn, memory_order_release);
}
static inline void os2dbl__run_hook(int call, ULONG h)
{
    /* acquire: pairs with the release store in os2dbl_set_hook. */
    os2dbl_hook_fn fn = atomic_load_explicit(&os2dbl__hook, memory_order_acquire);
    if (fn) fn(call, h);
}
static inline unsigned long os2dbl_blocked(unsigned long h)
{
    unsigned long n = 0;
    int was = os2dbl__query_begin();
    if (h && h <= OS2DBL__MAX_HANDLES && os2dbl__tab[h])
        n = os2dbl__tab[h]->type == OS2DBL__MUX ? os2dbl__tab[h]->nwaiting : os2dbl__tab[h]->nqueued;
    os2dbl__query_end(was);
    return n;
}

#endif /* OS2DBL_CORE_H */

/* ---- public names, group by group (each group once, whatever the include order) ---- */

#if defined(INCL_DOSERRORS) && !defined(OS2DBL_ERRORS_H)
#define OS2DBL_ERRORS_H
#define NO_ERROR 0
#define ERROR_FILE_NOT_FOUND 2
#define ERROR_INVALID_HANDLE 6
#define ERROR_NOT_ENOUGH_MEMORY 8
#define ERROR_INVALID_PARAMETER 87
#define ERROR_INTERRUPT 95
#define ERROR_TOO_MANY_SEMAPHORES 100
#define ERROR_TOO_MANY_SEM_REQUESTS 103
#define ERROR_SEM_OWNER_DIED 105
#define ERROR_SEM_TIMEOUT 121
#define ERROR_INVALID_NAME 123
#define ERROR_MAX_THRDS_REACHED 164
#define ERROR_ALREADY_EXISTS 183
#define ERROR_SEM_NOT_FOUND 187
#define ERROR_DUPLICATE_HANDLE 284
#define ERROR_DUPLICATE_NAME 285
#define ERROR_EMPTY_MUXWAIT 286
#define ERROR_MUTEX_OWNED 287
#define ERROR_NOT_OWNER 288
#define ERROR_TOO_MANY_HANDLES 290
#define ERROR_TOO_MANY_OPENS 291
#define ERROR_WRONG_TYPE 292
#define ERROR_THREAD_NOT_TERMINATED 294
#define ERROR_TOO_MANY_POSTS 298
#define ERROR_ALREADY_POSTED 299
#define ERROR_ALREADY_RESET 300
#define ERROR_SEM_BUSY 301
#define ERROR_INVALID_THREADID 309
#define ERROR_CRITSEC_OVERFLOW 484
#define ERROR_CRITSEC_UNDERFLOW 485
#define ERROR_TIMEOUT 640
#endif

#if defined(INCL_DOSSEMAPHORES) && !defined(OS2DBL_SEMAPHORES_H)
#define OS2DBL_SEMAPHORES_H
typedef ULONG HEV, *PHEV;
typedef ULONG HMTX, *PHMTX;
typedef ULONG HMUX, *PHMUX;
typedef void *HSEM, **PHSEM;   /* as OpenWatcom and kLIBC: cast handles with (HSEM) */
typedef struct os2dbl__semrecord SEMRECORD, *PSEMRECORD;   /* { HSEM hsemCur; ULONG ulUser; } */
#define DC_SEM_SHARED 0x01
#define DCMW_WAIT_ANY 0x02
#define DCMW_WAIT_ALL 0x04
#define DCE_POSTONE 0x0800
#define DCE_AUTORESET 0x1000
#define SEM_IMMEDIATE_RETURN 0UL
#define SEM_INDEFINITE_WAIT ((ULONG)-1)

static inline APIRET APIENTRY DosCreateEventSem(PSZ pszName, PHEV phev, ULONG flAttr, BOOL32 fState)
{
    os2dbl__enter();
    APIRET rc = os2dbl__create_event(pszName, phev, flAttr, fState);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosOpenEventSem(PSZ pszName, PHEV phev)
{
    os2dbl__enter();
    os2dbl__lock();
    APIRET rc = os2dbl__open(OS2DBL__EVENT, pszName, phev);
    os2dbl__unlock();
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosCloseEventSem(HEV hev)
{
    os2dbl__enter();
    APIRET rc = os2dbl__close_event(hev);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosPostEventSem(HEV hev)
{
    os2dbl__run_hook(OS2DBL_HOOK_POST, hev);
    os2dbl__enter();
    APIRET rc = os2dbl__post_event(hev);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosResetEventSem(HEV hev, PULONG pulPostCt)
{
    os2dbl__run_hook(OS2DBL_HOOK_RESET, hev);
    os2dbl__enter();
    APIRET rc = os2dbl__reset_event(hev, pulPostCt);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosWaitEventSem(HEV hev, ULONG ulTimeout)
{
    os2dbl__enter();
    APIRET rc = os2dbl__wait_event(hev, ulTimeout);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosQueryEventSem(HEV hev, PULONG pulPostCt)
{
    os2dbl__enter();
    APIRET rc = os2dbl__query_event(hev, pulPostCt);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosCreateMutexSem(PSZ pszName, PHMTX phmtx, ULONG flAttr, BOOL32 fState)
{
    os2dbl__enter();
    APIRET rc = os2dbl__create_mutex(pszName, phmtx, flAttr, fState);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosOpenMutexSem(PSZ pszName, PHMTX phmtx)
{
    os2dbl__enter();
    os2dbl__lock();
    APIRET rc = os2dbl__open(OS2DBL__MUTEX, pszName, phmtx);
    os2dbl__unlock();
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosCloseMutexSem(HMTX hmtx)
{
    os2dbl__enter();
    APIRET rc = os2dbl__close_mutex(hmtx);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosRequestMutexSem(HMTX hmtx, ULONG ulTimeout)
{
    os2dbl__enter();
    APIRET rc = os2dbl__request_mutex(hmtx, ulTimeout);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosReleaseMutexSem(HMTX hmtx)
{
    os2dbl__enter();
    APIRET rc = os2dbl__release_mutex(hmtx);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosQueryMutexSem(HMTX hmtx, PPID ppid, PTID ptid, PULONG pulCount)
{
    os2dbl__enter();
    APIRET rc = os2dbl__query_mutex(hmtx, ppid, ptid, pulCount);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosCreateMuxWaitSem(PSZ pszName, PHMUX phmux, ULONG cSemRec,
                                                  PSEMRECORD pSemRec, ULONG flAttr)
{
    os2dbl__enter();
    APIRET rc = os2dbl__create_mux(pszName, phmux, cSemRec, pSemRec, flAttr);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosOpenMuxWaitSem(PSZ pszName, PHMUX phmux)
{
    os2dbl__enter();
    os2dbl__lock();
    APIRET rc = os2dbl__open(OS2DBL__MUX, pszName, phmux);
    os2dbl__unlock();
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosCloseMuxWaitSem(HMUX hmux)
{
    os2dbl__enter();
    APIRET rc = os2dbl__close_mux(hmux);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosWaitMuxWaitSem(HMUX hmux, ULONG ulTimeout, PULONG pulUser)
{
    os2dbl__enter();
    APIRET rc = os2dbl__wait_mux(hmux, ulTimeout, pulUser);
    os2dbl__leave();
    return rc;
}
#endif

#if defined(INCL_DOSPROCESS) && !defined(OS2DBL_PROCESS_H)
#define OS2DBL_PROCESS_H
typedef struct os2dbl__tib2 TIB2, *PTIB2;
typedef struct os2dbl__tib TIB, *PTIB;
typedef struct os2dbl__pib PIB, *PPIB;
typedef VOID (APIENTRY *PFNTHREAD)(ULONG);
#define DCWW_WAIT 0
#define DCWW_NOWAIT 1
#define CREATE_READY 0
#define CREATE_SUSPENDED 1
#define STACK_SPARSE 0
#define STACK_COMMITTED 2

static inline APIRET APIENTRY DosCreateThread(PTID ptid, PFNTHREAD pfn, ULONG param, ULONG flag,
                                              ULONG cbStack)
{
    os2dbl__enter();
    APIRET rc = os2dbl__create_thread(ptid, pfn, param, flag, cbStack);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosWaitThread(PTID ptid, ULONG option)
{
    os2dbl__enter();
    APIRET rc = os2dbl__wait_thread(ptid, option);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosSleep(ULONG msec)
{
    os2dbl__enter();
    APIRET rc = os2dbl__sleep(msec);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosEnterCritSec(VOID)
{
    os2dbl__enter();
    APIRET rc = os2dbl__enter_critsec();
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosExitCritSec(VOID)
{
    os2dbl__enter();
    APIRET rc = os2dbl__exit_critsec();
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosGetInfoBlocks(PTIB *pptib, PPIB *pppib)
{
    os2dbl__enter();
    APIRET rc = os2dbl__get_info_blocks(pptib, pppib);
    os2dbl__leave();
    return rc;
}
#endif

#if defined(INCL_DOSMEMMGR) && !defined(OS2DBL_MEMMGR_H)
#define OS2DBL_MEMMGR_H
typedef PVOID *PPVOID;
#define PAG_READ 0x0001
#define PAG_WRITE 0x0002
#define PAG_EXECUTE 0x0004
#define PAG_GUARD 0x0008
#define PAG_COMMIT 0x0010
static inline APIRET APIENTRY DosAllocSharedMem(PPVOID ppb, PSZ pszName, ULONG cb, ULONG flag)
{
    os2dbl__enter();
    APIRET rc = os2dbl__alloc_shared(ppb, pszName, cb, flag);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosGetNamedSharedMem(PPVOID ppb, PSZ pszName, ULONG flag)
{
    os2dbl__enter();
    APIRET rc = os2dbl__get_named_shared(ppb, pszName, flag);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosFreeMem(PVOID pb)
{
    os2dbl__enter();
    APIRET rc = os2dbl__free_mem(pb);
    os2dbl__leave();
    return rc;
}
#endif

#if defined(INCL_DOSPROFILE) && !defined(OS2DBL_PROFILE_H)
#define OS2DBL_PROFILE_H
static inline APIRET APIENTRY DosTmrQueryFreq(PULONG pulTmrFreq)
{
    os2dbl__enter();
    APIRET rc = os2dbl__tmr_freq(pulTmrFreq);
    os2dbl__leave();
    return rc;
}
static inline APIRET APIENTRY DosTmrQueryTime(PQWORD pqwTmrTime)
{
    os2dbl__enter();
    APIRET rc = os2dbl__tmr_time(pqwTmrTime);
    os2dbl__leave();
    return rc;
}
#endif
