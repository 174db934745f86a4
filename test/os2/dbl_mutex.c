/* SPDX-License-Identifier: MIT */
/* dbl_mutex: the OS/2 mutex-semaphore facts of README.md, each pinned on the double:
 * request counts up to 65535 then ERROR_TOO_MANY_SEM_REQUESTS, ERROR_NOT_OWNER, ERROR_TIMEOUT,
 * ownership handed FIFO to blocked requesters, ERROR_SEM_BUSY on close, ERROR_SEM_OWNER_DIED
 * after the owner thread ended, and ERROR_INTERRUPT from the knob never losing an ownership
 * already given (a lock counter with retry loops stays exact). */
#define INCL_DOSSEMAPHORES
#define INCL_DOSPROCESS
#define INCL_DOSERRORS
#include <os2.h>

#include <stdatomic.h>

#include "dbl_util.h"

#define NQ 4

static HMTX mtx;
static atomic_int progress;
static atomic_ulong rcs[NQ];          /* results of the helper threads; 9999 while running */
static ULONG tids[NQ];                /* each helper's own tid */
static int order[NQ], norder;         /* who got the mutex, in order (guarded by mtx); every
                                         test that counts on it starts it at 0 */
static ULONG req_ms[NQ];
static atomic_int release_now[NQ];    /* tells a helper to release and end */

static void step(int s)
{
    /* relaxed: a progress report */
    atomic_store_explicit(&progress, s, memory_order_relaxed);
}

static APIRET rc_of(int i)
{
    /* relaxed: read after DosWaitThread (which orders it), or polled only to stop polling */
    return atomic_load_explicit(&rcs[i], memory_order_relaxed);
}

static ULONG my_tid(void)
{
    PTIB tib = NULL;
    PPIB pib = NULL;
    if (DosGetInfoBlocks(&tib, &pib) != NO_ERROR || !tib) bail("DosGetInfoBlocks");
    return tib->tib_ptib2->tib2_ultid;
}

/* Request with req_ms[i] and report; on success note the order, hold until told to
 * release, release. */
static VOID APIENTRY requester(ULONG i)
{
    tids[i] = my_tid();
    APIRET rc = DosRequestMutexSem(mtx, req_ms[i]);
    /* relaxed: see rc_of() */
    atomic_store_explicit(&rcs[i], rc, memory_order_relaxed);
    if (rc == NO_ERROR || rc == ERROR_SEM_OWNER_DIED) {
        /* order[] keeps the first NQ owners; norder counts them all, so a surplus fails
         * the FIFO check instead of writing past the array */
        if (norder < NQ) order[norder] = (int)i;
        norder++;
        /* acquire: pairs with the release store in let_go() */
        while (!atomic_load_explicit(&release_now[i], memory_order_acquire)) dbl_sleep_ms(1);
        DosReleaseMutexSem(mtx);
    }
}

/* Takes the mutex, holds it until told, and ends without releasing it. */
static VOID APIENTRY dier(ULONG i)
{
    tids[i] = my_tid();
    /* relaxed: see rc_of() */
    atomic_store_explicit(&rcs[i], DosRequestMutexSem(mtx, SEM_INDEFINITE_WAIT), memory_order_relaxed);
    /* acquire: pairs with the release store in let_go() */
    while (!atomic_load_explicit(&release_now[i], memory_order_acquire)) dbl_sleep_ms(1);
}

static void start(TID *t, PFNTHREAD fn, int i, ULONG ms)
{
    req_ms[i] = ms;
    /* relaxed: before the thread starts (DosCreateThread orders it) */
    atomic_store_explicit(&rcs[i], 9999, memory_order_relaxed);
    atomic_store_explicit(&release_now[i], 0, memory_order_relaxed);
    if (DosCreateThread(t, fn, (ULONG)i, 0, 65536) != NO_ERROR) bail("DosCreateThread");
}

static void let_go(int i)
{
    /* release: pairs with the acquire load in requester() */
    atomic_store_explicit(&release_now[i], 1, memory_order_release);
}

static int until_done(int i)
{
    uint64_t end = dbl_now_ns() + 5000000000u;
    while (rc_of(i) == 9999) {
        if (dbl_now_ns() > end) return 0;
        dbl_sleep_ms(1);
    }
    return 1;
}

static void query(HMTX m, PID *pid, TID *tid, ULONG *count, APIRET *rc)
{
    *pid = 77;
    *tid = 77;
    *count = 77;
    *rc = DosQueryMutexSem(m, pid, tid, count);
}

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a progress report */
    diag("progress step %d; helpers' rc %lu %lu %lu %lu", atomic_load_explicit(&progress, memory_order_relaxed),
         rc_of(0), rc_of(1), rc_of(2), rc_of(3));
}

static void test_recursion(void)
{
    PID pid;
    TID tid, t;
    ULONG n;
    APIRET rc;
    unsigned long i, bad = 0;
    ULONG me = my_tid();
    step(1);
    norder = 0;
    is_int(DosCreateMutexSem(NULL, &mtx, 0, FALSE), NO_ERROR, "create an unowned mutex");
    query(mtx, &pid, &tid, &n, &rc);
    ok(rc == NO_ERROR && pid == 0 && tid == 0 && n == 0, "query an unowned mutex: pid 0, tid 0, count 0");
    is_int(DosRequestMutexSem(mtx, SEM_IMMEDIATE_RETURN), NO_ERROR, "request a free mutex: 0");
    query(mtx, &pid, &tid, &n, &rc);
    ok(rc == NO_ERROR && pid == (PID)getpid() && tid == me && n == 1, "query: owner is this process and thread (tid %lu), count 1", me);
    for (i = 1; i < 65535; i++)
        if (DosRequestMutexSem(mtx, SEM_INDEFINITE_WAIT) != NO_ERROR) bad++;
    is_int(bad, 0, "the owner requests it 65534 more times: 0 each (recursion)");
    query(mtx, &pid, &tid, &n, &rc);
    is_int(n, 65535, "... request count 65535");
    is_int(DosRequestMutexSem(mtx, SEM_INDEFINITE_WAIT), ERROR_TOO_MANY_SEM_REQUESTS,
           "request number 65536: ERROR_TOO_MANY_SEM_REQUESTS (103)");
    query(mtx, &pid, &tid, &n, &rc);
    is_int(n, 65535, "... count stays 65535");

    start(&t, requester, 0, SEM_IMMEDIATE_RETURN);
    dbl_join(t);
    is_int(rc_of(0), ERROR_TIMEOUT, "another thread, SEM_IMMEDIATE_RETURN on an owned mutex: ERROR_TIMEOUT (640)");
    unsigned long tick = os2dbl_tick_ms();
    uint64_t t0 = dbl_now_ns();
    start(&t, requester, 0, 40);
    dbl_join(t);
    uint64_t el = dbl_now_ns() - t0;
    is_int(rc_of(0), ERROR_TIMEOUT, "another thread, 40 ms on an owned mutex: ERROR_TIMEOUT");
    ok(el >= dbl_round_ms(40, tick) * 1000000u, "... after %.1f ms, never before 40 ms rounded up to the tick", el / 1e6);

    for (i = 0, bad = 0; i < 65534; i++)
        if (DosReleaseMutexSem(mtx) != NO_ERROR) bad++;
    is_int(bad, 0, "release 65534 times: 0 each");
    query(mtx, &pid, &tid, &n, &rc);
    ok(tid == me && n == 1, "... still owned, count 1");
    is_int(DosReleaseMutexSem(mtx), NO_ERROR, "the last release: 0");
    query(mtx, &pid, &tid, &n, &rc);
    ok(rc == NO_ERROR && tid == 0 && n == 0, "... now unowned");
    is_int(DosReleaseMutexSem(mtx), ERROR_NOT_OWNER, "release an unowned mutex: ERROR_NOT_OWNER (288)");

    /* a helper owns it: release by this thread is not the owner's */
    start(&t, requester, 1, SEM_INDEFINITE_WAIT);
    dbl_until_blocked(mtx, 0);
    while (1) {
        query(mtx, &pid, &tid, &n, &rc);
        if (tid != 0) break;
        dbl_sleep_ms(1);
    }
    is_int(tid, tids[1], "a helper thread owns it");
    is_int(DosReleaseMutexSem(mtx), ERROR_NOT_OWNER, "release by a thread that does not own it: ERROR_NOT_OWNER");
    is_int(DosCloseMutexSem(mtx), ERROR_SEM_BUSY, "final close while another thread owns it: ERROR_SEM_BUSY (301)");
    let_go(1);
    dbl_join(t);
    is_int(rc_of(1), NO_ERROR, "... the helper released it");

    is_int(DosRequestMutexSem(mtx, 0), NO_ERROR, "request it again");
    is_int(DosCloseMutexSem(mtx), ERROR_SEM_BUSY, "close a mutex the caller owns: ERROR_SEM_BUSY");
    DosReleaseMutexSem(mtx);
    is_int(DosCloseMutexSem(mtx), NO_ERROR, "close a free mutex: 0");
    is_int(DosRequestMutexSem(mtx, 0), ERROR_INVALID_HANDLE, "request a closed mutex: ERROR_INVALID_HANDLE (6)");
    is_int(DosReleaseMutexSem(mtx), ERROR_INVALID_HANDLE, "release a closed mutex: ERROR_INVALID_HANDLE");
    query(mtx, &pid, &tid, &n, &rc);
    is_int(rc, ERROR_INVALID_HANDLE, "query a closed mutex: ERROR_INVALID_HANDLE");
    HEV e = 0;
    DosCreateEventSem(NULL, &e, 0, FALSE);
    is_int(DosRequestMutexSem(e, 0), ERROR_INVALID_HANDLE, "request an event handle: ERROR_INVALID_HANDLE");
    DosCloseEventSem(e);

    is_int(DosCreateMutexSem(NULL, &mtx, 0, TRUE), NO_ERROR, "create owned (fState TRUE)");
    query(mtx, &pid, &tid, &n, &rc);
    ok(tid == me && n == 1, "... owned by the creator, count 1");
    is_int(DosCreateMutexSem(NULL, &t, DCMW_WAIT_ANY, FALSE), ERROR_INVALID_PARAMETER, "unknown attribute: ERROR_INVALID_PARAMETER");
    DosReleaseMutexSem(mtx);
    DosCloseMutexSem(mtx);
}

static void test_fifo(void)
{
    TID t[NQ] = { 0 };
    PID pid;
    TID tid;
    ULONG n;
    APIRET rc;
    int i, fifo = 1, queued = 1;
    step(2);
    DosCreateMutexSem(NULL, &mtx, 0, TRUE);
    norder = 0;
    for (i = 0; i < NQ; i++) {
        start(&t[i], requester, i, SEM_INDEFINITE_WAIT);
        if (!dbl_until_blocked(mtx, (unsigned long)i + 1)) queued = 0;   /* queue them in order 0..3 */
    }
    ok(queued, "%d threads block on an owned mutex, one after the other", NQ);
    is_int(DosCloseMutexSem(mtx), ERROR_SEM_BUSY, "final close while threads wait for it: ERROR_SEM_BUSY");
    is_int(DosReleaseMutexSem(mtx), NO_ERROR, "the owner releases it");
    query(mtx, &pid, &tid, &n, &rc);
    ok(tid == tids[0] && n == 1, "... ownership passes at once to the first blocked thread (tid %lu, count %lu)", tid, n);
    is_int(DosRequestMutexSem(mtx, SEM_IMMEDIATE_RETURN), ERROR_TIMEOUT,
           "... so the releaser cannot take it back: ERROR_TIMEOUT");
    for (i = 0; i < NQ; i++) {
        let_go(i);
        if (!until_done(i) || rc_of(i) != NO_ERROR) fifo = 0;
    }
    for (i = 0; i < NQ; i++) {
        dbl_join(t[i]);
        if (order[i] != i) fifo = 0;
    }
    ok(fifo && norder == NQ, "ownership handed FIFO: order %d %d %d %d", order[0], order[1], order[2], order[3]);
    is_int(DosCloseMutexSem(mtx), NO_ERROR, "close: 0");
}

static void test_owner_died(void)
{
    TID t = 0;
    PID pid;
    TID tid;
    ULONG n;
    APIRET rc;
    ULONG me = my_tid();
    step(3);
    norder = 0;
    DosCreateMutexSem(NULL, &mtx, 0, FALSE);
    start(&t, dier, 0, 0);
    let_go(0);
    dbl_join(t);
    is_int(rc_of(0), NO_ERROR, "a thread takes the mutex and ends without releasing it");
    query(mtx, &pid, &tid, &n, &rc);
    ok(rc == ERROR_SEM_OWNER_DIED && tid == tids[0] && n == 1,
       "query: ERROR_SEM_OWNER_DIED (105), naming the dead owner (tid %lu) and its count", tid);
    is_int(DosRequestMutexSem(mtx, SEM_IMMEDIATE_RETURN), ERROR_SEM_OWNER_DIED,
           "the next request: ERROR_SEM_OWNER_DIED ...");
    query(mtx, &pid, &tid, &n, &rc);
    ok(rc == NO_ERROR && tid == me && n == 1, "... with the ownership");
    DosReleaseMutexSem(mtx);
    is_int(DosRequestMutexSem(mtx, 0), NO_ERROR, "after that, requests give 0 again");
    DosReleaseMutexSem(mtx);

    /* a thread blocked on it gets it, with 105, when the owner ends */
    start(&t, dier, 0, 0);
    until_done(0);
    TID t1;
    start(&t1, requester, 1, SEM_INDEFINITE_WAIT);
    ok(dbl_until_blocked(mtx, 1), "a thread blocks on a mutex whose owner is about to end");
    let_go(0);
    dbl_join(t);
    until_done(1);
    is_int(rc_of(1), ERROR_SEM_OWNER_DIED, "the owner ends: the blocked thread gets it with ERROR_SEM_OWNER_DIED");
    query(mtx, &pid, &tid, &n, &rc);
    ok(rc == NO_ERROR && tid == tids[1] && n == 1, "... and owns it");
    let_go(1);
    dbl_join(t1);
    is_int(norder, 1, "... the one requester that got the mutex in this test");
    is_int(DosCloseMutexSem(mtx), NO_ERROR, "close: 0");
}

/* With ERROR_INTERRUPT at random, a retry loop still gets exclusive ownership every time. */
static long counter;   /* plain: guarded by mtx */
static atomic_int stop;
static atomic_ulong loops[NQ];

static VOID APIENTRY locker(ULONG i)
{
    unsigned long k = 0;
    /* relaxed: a stop flag; the counter is read after DosWaitThread */
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        APIRET rc;
        do rc = DosRequestMutexSem(mtx, 50);
        while (rc == ERROR_INTERRUPT || rc == ERROR_TIMEOUT);
        if (rc != NO_ERROR) break;
        long c = counter;
        if ((k & 15) == 0) DosSleep(0);
        counter = c + 1;
        if (DosReleaseMutexSem(mtx) != NO_ERROR) break;
        k++;
        /* relaxed: a progress report */
        atomic_store_explicit(&loops[i], k, memory_order_relaxed);
    }
}

static void test_interrupt(void)
{
    TID t[NQ] = { 0 };
    PID pid;
    TID tid;
    ULONG n;
    APIRET rc;
    int i;
    step(4);
    /* handed ownership is never lost to the knob: the long timeout puts the knob's
     * interrupt (at a random point of it) long after the release */
    os2dbl_set_interrupt_percent(100);
    int r, seen = 0, kept = 1;
    for (r = 0; r < 20; r++) {
        DosCreateMutexSem(NULL, &mtx, 0, TRUE);
        norder = 0;
        start(&t[0], requester, 0, 0xFFFFFFFEUL);
        uint64_t until = dbl_now_ns() + 2000000000u;
        while (!os2dbl_blocked(mtx) && rc_of(0) == 9999 && dbl_now_ns() < until) dbl_sleep_ms(1);
        if (os2dbl_blocked(mtx)) {
            seen++;
            DosReleaseMutexSem(mtx);
            query(mtx, &pid, &tid, &n, &rc);
            if (tid != tids[0]) kept = 0;
            let_go(0);
            dbl_join(t[0]);
            if (rc_of(0) != NO_ERROR) kept = 0;
        } else {
            dbl_join(t[0]);
            if (rc_of(0) != ERROR_INTERRUPT) kept = 0;
            DosReleaseMutexSem(mtx);
        }
        DosCloseMutexSem(mtx);
    }
    ok(seen > 0 && kept, "knob 100%%: %d blocked requesters handed the mutex return 0 and own it, never 95", seen);
    DosCreateMutexSem(NULL, &mtx, 0, TRUE);
    start(&t[0], requester, 0, 200);
    dbl_join(t[0]);
    is_int(rc_of(0), ERROR_INTERRUPT, "knob 100%%: a blocking request returns ERROR_INTERRUPT (95)");
    query(mtx, &pid, &tid, &n, &rc);
    ok(tid == my_tid() && n == 1, "... and the mutex is still the owner's");
    DosReleaseMutexSem(mtx);
    is_int(DosRequestMutexSem(mtx, 200), NO_ERROR, "knob 100%%: a request that need not block returns 0");
    DosReleaseMutexSem(mtx);

    /* lock counter */
    const char *env = getenv("OS2DBL_INTERRUPT");
    unsigned pct = env && *env ? (unsigned)atoi(env) : 30;
    if (pct == 100) pct = 99;   /* at 100% a request that blocks can never succeed */
    os2dbl_set_interrupt_percent(pct);
    unsigned long i0 = os2dbl_interrupts();
    counter = 0;
    atomic_store_explicit(&stop, 0, memory_order_relaxed);   /* relaxed: before the threads start */
    for (i = 0; i < NQ; i++) DosCreateThread(&t[i], locker, (ULONG)i, 0, 65536);
    dbl_sleep_ms(1000);
    /* and in any case until a round was made: a second may end before the lockers ran */
    uint64_t until = dbl_now_ns() + 30000000000u;
    for (;;) {
        unsigned long made = 0;
        for (i = 0; i < NQ; i++) made += atomic_load_explicit(&loops[i], memory_order_relaxed); /* relaxed: a poll */
        if (made > 0 || dbl_now_ns() >= until) break;
        dbl_sleep_ms(1);
    }
    atomic_store_explicit(&stop, 1, memory_order_relaxed);   /* relaxed: a stop flag */
    unsigned long total = 0;
    for (i = 0; i < NQ; i++) {
        dbl_join(t[i]);
        total += atomic_load_explicit(&loops[i], memory_order_relaxed);   /* relaxed: after join */
    }
    os2dbl_set_interrupt_percent(0);
    ok(total > 0 && counter == (long)total,
       "knob %u%%: %d threads, retry loops on ERROR_INTERRUPT: counter %ld == %lu lock rounds", pct, NQ, counter, total);
    ok(pct == 0 || os2dbl_interrupts() > i0, "... through %lu interrupts", os2dbl_interrupts() - i0);
    query(mtx, &pid, &tid, &n, &rc);
    ok(rc == NO_ERROR && tid == 0 && n == 0 && os2dbl_blocked(mtx) == 0, "... the mutex ends unowned, nobody queued");
    is_int(DosCloseMutexSem(mtx), NO_ERROR, "close: 0");
}

static void test_names(void)
{
    HMTX m = 0, o;
    PID pid;
    TID tid;
    ULONG n;
    APIRET rc;
    step(5);
    is_int(DosCreateMutexSem((PSZ)"\\SEM32\\DBL\\MTX", &m, 0, FALSE), NO_ERROR, "create a named mutex");
    HEV e;
    is_int(DosCreateEventSem((PSZ)"\\SEM32\\DBL\\MTX", &e, 0, FALSE), ERROR_DUPLICATE_NAME,
           "an event of the same name: ERROR_DUPLICATE_NAME");
    o = 0;
    is_int(DosOpenEventSem((PSZ)"\\SEM32\\DBL\\MTX", &o), ERROR_SEM_NOT_FOUND, "open that name as an event: ERROR_SEM_NOT_FOUND");
    o = 0;
    is_int(DosOpenMutexSem((PSZ)"\\SEM32\\DBL\\MTX", &o), NO_ERROR, "open it by name");
    is_int(o, m, "... same handle");
    o = m;
    is_int(DosOpenMutexSem(NULL, &o), NO_ERROR, "open it by handle");
    DosRequestMutexSem(m, 0);
    is_int(DosCloseMutexSem(m), ERROR_SEM_BUSY, "close (not the final one) while the caller owns it: ERROR_SEM_BUSY");
    DosReleaseMutexSem(m);
    is_int(DosCloseMutexSem(m), NO_ERROR, "close 1 of 3: 0");
    is_int(DosCloseMutexSem(m), NO_ERROR, "close 2 of 3: 0");
    query(m, &pid, &tid, &n, &rc);
    is_int(rc, NO_ERROR, "... still valid");
    is_int(DosCloseMutexSem(m), NO_ERROR, "close 3 of 3: 0");
    query(m, &pid, &tid, &n, &rc);
    is_int(rc, ERROR_INVALID_HANDLE, "... deleted");
}

int main(void)
{
    os2dbl_set_interrupt_percent(0);   /* exact semantics; the knob is tested below */
    dbl_watchdog_start(60, dump, NULL);
    test_recursion();
    test_fifo();
    test_owner_died();
    test_interrupt();
    test_names();
    is_int(os2dbl_handles_in_use(), 0, "no semaphore left open");
    dbl_watchdog_stop();
    return done_testing();
}
