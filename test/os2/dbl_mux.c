/* SPDX-License-Identifier: MIT */
/* dbl_mux: the OS/2 mux-wait facts of README.md, each pinned on the double: DCMW_WAIT_ANY
 * returns the ulUser of the first posted member in list order, or of the member whose post
 * released a blocked waiter (edge-triggered, like events); DCMW_WAIT_ALL needs all members
 * posted at once; over mutexes ANY takes one and ALL takes all; ERROR_EMPTY_MUXWAIT,
 * ERROR_WRONG_TYPE, ERROR_DUPLICATE_HANDLE, ERROR_TOO_MANY_SEMAPHORES, ERROR_SEM_BUSY,
 * ERROR_TIMEOUT and the ERROR_INTERRUPT knob. */
#define INCL_DOSSEMAPHORES
#define INCL_DOSPROCESS
#define INCL_DOSERRORS
#include <os2.h>

#include <stdatomic.h>

#include "dbl_util.h"

static HMUX mux;
static HMTX mtx[2];
static atomic_int progress;
static atomic_ulong rc_w, user_w;   /* the mux waiter thread's result; rc 9999 while it waits */
static ULONG wait_ms;
static atomic_int let_go;

static void step(int s)
{
    /* relaxed: a progress report */
    atomic_store_explicit(&progress, s, memory_order_relaxed);
}

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a progress report */
    diag("progress step %d", atomic_load_explicit(&progress, memory_order_relaxed));
}

static APIRET rc_of_waiter(void)
{
    /* relaxed: read after DosWaitThread, or polled only to stop polling */
    return atomic_load_explicit(&rc_w, memory_order_relaxed);
}

static VOID APIENTRY mux_waiter(ULONG unused)
{
    (void)unused;
    ULONG user = 0;
    APIRET rc = DosWaitMuxWaitSem(mux, wait_ms, &user);
    /* relaxed: see rc_of_waiter() */
    atomic_store_explicit(&user_w, user, memory_order_relaxed);
    atomic_store_explicit(&rc_w, rc, memory_order_relaxed);
}

/* Holds mtx[i] until let_go, then releases it. */
static VOID APIENTRY holder(ULONG i)
{
    DosRequestMutexSem(mtx[i], SEM_INDEFINITE_WAIT);
    /* acquire: pairs with the release store in main */
    while (!atomic_load_explicit(&let_go, memory_order_acquire)) dbl_sleep_ms(1);
    DosReleaseMutexSem(mtx[i]);
}

static void start_waiter(TID *t, ULONG ms)
{
    wait_ms = ms;
    /* relaxed: before the thread starts */
    atomic_store_explicit(&rc_w, 9999, memory_order_relaxed);
    if (DosCreateThread(t, mux_waiter, 0, 0, 65536) != NO_ERROR) bail("DosCreateThread");
}

static void test_events_any(void)
{
    HEV ev[3];
    SEMRECORD rec[3];
    ULONG user, c;
    TID t = 0;
    int i;
    step(1);
    for (i = 0; i < 3; i++) {
        DosCreateEventSem(NULL, &ev[i], 0, FALSE);
        rec[i].hsemCur = (HSEM)ev[i];
        rec[i].ulUser = 100 + (ULONG)i;
    }
    is_int(DosCreateMuxWaitSem(NULL, &mux, 3, rec, DCMW_WAIT_ANY), NO_ERROR, "create a DCMW_WAIT_ANY mux-wait of 3 events");
    is_int(DosWaitMuxWaitSem(mux, SEM_IMMEDIATE_RETURN, &user), ERROR_TIMEOUT, "none posted, SEM_IMMEDIATE_RETURN: ERROR_TIMEOUT");
    uint64_t t0 = dbl_now_ns();
    is_int(DosWaitMuxWaitSem(mux, 20, &user), ERROR_TIMEOUT, "none posted, 20 ms: ERROR_TIMEOUT");
    ok(dbl_now_ns() - t0 >= dbl_round_ms(20, os2dbl_tick_ms()) * 1000000u, "... never early (20 ms rounded up to the tick)");
    DosPostEventSem(ev[1]);
    user = 0;
    is_int(DosWaitMuxWaitSem(mux, SEM_IMMEDIATE_RETURN, &user), NO_ERROR, "member 2 posted: 0 at once");
    is_int(user, 101, "... with member 2's ulUser");
    DosPostEventSem(ev[2]);
    DosPostEventSem(ev[0]);
    is_int(DosWaitMuxWaitSem(mux, 1000, &user), NO_ERROR, "all posted: 0");
    is_int(user, 100, "... with the ulUser of the first posted in list order");
    DosQueryEventSem(ev[0], &c);
    is_int(c, 1, "the wait did not take the member's post count");
    for (i = 0; i < 3; i++) DosResetEventSem(ev[i], &c);

    start_waiter(&t, SEM_INDEFINITE_WAIT);
    ok(dbl_until_blocked(mux, 1), "a thread blocks on the mux-wait");
    is_int(os2dbl_blocked(ev[2]), 1, "... queued on each member");
    is_int(DosCloseMuxWaitSem(mux), ERROR_SEM_BUSY, "final close of the mux-wait while a thread waits: ERROR_SEM_BUSY");
    DosPostEventSem(ev[2]);
    DosResetEventSem(ev[2], &c);
    dbl_join(t);
    is_int(rc_of_waiter(), NO_ERROR, "member 3 posted then reset at once: the blocked thread returns 0 (edge-triggered)");
    /* relaxed: after DosWaitThread */
    is_int(atomic_load_explicit(&user_w, memory_order_relaxed), 102, "... with member 3's ulUser");
    is_int(os2dbl_blocked(ev[0]) + os2dbl_blocked(ev[1]) + os2dbl_blocked(ev[2]), 0, "... and is off every member's queue");

    is_int(DosCloseEventSem(ev[0]), ERROR_SEM_BUSY, "close an event that a live mux-wait lists: ERROR_SEM_BUSY");
    is_int(DosCloseMuxWaitSem(mux), NO_ERROR, "close the mux-wait: 0");
    is_int(DosWaitMuxWaitSem(mux, 0, &user), ERROR_INVALID_HANDLE, "wait on a closed mux-wait: ERROR_INVALID_HANDLE");
    for (i = 0; i < 3; i++) DosCloseEventSem(ev[i]);
}

static void test_events_all(void)
{
    HEV ev[3];
    SEMRECORD rec[3];
    ULONG user, c;
    TID t = 0;
    int i;
    step(2);
    for (i = 0; i < 3; i++) {
        DosCreateEventSem(NULL, &ev[i], 0, FALSE);
        rec[i].hsemCur = (HSEM)ev[i];
        rec[i].ulUser = 200 + (ULONG)i;
    }
    is_int(DosCreateMuxWaitSem(NULL, &mux, 3, rec, DCMW_WAIT_ALL), NO_ERROR, "create a DCMW_WAIT_ALL mux-wait of 3 events");
    DosPostEventSem(ev[0]);
    DosPostEventSem(ev[1]);
    is_int(DosWaitMuxWaitSem(mux, SEM_IMMEDIATE_RETURN, &user), ERROR_TIMEOUT, "2 of 3 posted: ERROR_TIMEOUT");
    DosPostEventSem(ev[2]);
    is_int(DosWaitMuxWaitSem(mux, SEM_IMMEDIATE_RETURN, &user), NO_ERROR, "3 of 3 posted: 0");
    for (i = 0; i < 3; i++) DosResetEventSem(ev[i], &c);

    start_waiter(&t, SEM_INDEFINITE_WAIT);
    dbl_until_blocked(mux, 1);
    DosPostEventSem(ev[0]);
    DosResetEventSem(ev[0], &c);
    DosPostEventSem(ev[1]);
    DosPostEventSem(ev[2]);
    dbl_sleep_ms(50);
    is_int(rc_of_waiter(), 9999, "all three posted, but member 1 was reset before the last post: still blocked");
    DosPostEventSem(ev[0]);
    dbl_join(t);
    is_int(rc_of_waiter(), NO_ERROR, "member 1 posts again: 0");
    /* relaxed: after DosWaitThread */
    is_int(atomic_load_explicit(&user_w, memory_order_relaxed), 200, "... with the ulUser of the last member to post");
    DosCloseMuxWaitSem(mux);
    for (i = 0; i < 3; i++) DosCloseEventSem(ev[i]);
}

static void test_mutexes(void)
{
    SEMRECORD rec[2];
    ULONG user, n;
    PID pid;
    TID t = 0, t1 = 0, tid = 0;
    PTIB tib = NULL;
    if (DosGetInfoBlocks(&tib, NULL) != NO_ERROR || !tib) bail("DosGetInfoBlocks");
    ULONG me = tib->tib_ptib2->tib2_ultid;
    int i;
    step(3);
    for (i = 0; i < 2; i++) {
        DosCreateMutexSem(NULL, &mtx[i], 0, FALSE);
        rec[i].hsemCur = (HSEM)mtx[i];
        rec[i].ulUser = 300 + (ULONG)i;
    }
    is_int(DosCreateMuxWaitSem(NULL, &mux, 2, rec, DCMW_WAIT_ANY), NO_ERROR, "create a DCMW_WAIT_ANY mux-wait of 2 mutexes");
    /* relaxed: before the thread starts */
    atomic_store_explicit(&let_go, 0, memory_order_relaxed);
    DosCreateThread(&t, holder, 0, 0, 65536);
    while (DosQueryMutexSem(mtx[0], &pid, &tid, &n), tid == 0) dbl_sleep_ms(1);
    is_int(DosWaitMuxWaitSem(mux, 0, &user), NO_ERROR, "mutex 1 owned by another thread, mutex 2 free: 0");
    is_int(user, 301, "... with mutex 2's ulUser");
    DosQueryMutexSem(mtx[1], &pid, &tid, &n);
    ok(tid == me && n == 1, "... and the caller owns mutex 2");
    DosReleaseMutexSem(mtx[1]);
    DosRequestMutexSem(mtx[1], 0);   /* both owned now: 1 by the holder, 2 by us */
    start_waiter(&t1, SEM_INDEFINITE_WAIT);
    ok(dbl_until_blocked(mux, 1), "both owned: a thread blocks on the mux-wait");
    /* release: pairs with the acquire load in holder() */
    atomic_store_explicit(&let_go, 1, memory_order_release);
    dbl_join(t);
    dbl_join(t1);
    ok(rc_of_waiter() == NO_ERROR && atomic_load_explicit(&user_w, memory_order_relaxed) == 300,
       "the holder releases mutex 1: the waiter gets 0 with mutex 1's ulUser");   /* relaxed: after join */
    ok(DosQueryMutexSem(mtx[0], &pid, &tid, &n) == ERROR_SEM_OWNER_DIED,
       "... its thread owned mutex 1 when it ended: owner died");
    is_int(DosRequestMutexSem(mtx[0], 0), ERROR_SEM_OWNER_DIED, "... the next request says so");
    DosReleaseMutexSem(mtx[0]);
    DosReleaseMutexSem(mtx[1]);
    DosCloseMuxWaitSem(mux);

    is_int(DosCreateMuxWaitSem(NULL, &mux, 2, rec, DCMW_WAIT_ALL), NO_ERROR, "create a DCMW_WAIT_ALL mux-wait of 2 mutexes");
    atomic_store_explicit(&let_go, 0, memory_order_relaxed);   /* relaxed: before the thread starts */
    DosCreateThread(&t, holder, 1, 0, 65536);
    while (DosQueryMutexSem(mtx[1], &pid, &tid, &n), tid == 0) dbl_sleep_ms(1);
    is_int(DosWaitMuxWaitSem(mux, 0, &user), ERROR_TIMEOUT, "mutex 1 free, mutex 2 owned elsewhere: ERROR_TIMEOUT");
    DosQueryMutexSem(mtx[0], &pid, &tid, &n);
    ok(tid == 0, "... and ALL took none of them");
    /* release: pairs with the acquire load in holder() */
    atomic_store_explicit(&let_go, 1, memory_order_release);
    is_int(DosWaitMuxWaitSem(mux, 5000, &user), NO_ERROR, "the holder releases mutex 2: 0");
    ULONG n0, n1;
    TID o0, o1;
    DosQueryMutexSem(mtx[0], &pid, &o0, &n0);
    DosQueryMutexSem(mtx[1], &pid, &o1, &n1);
    ok(o0 == me && o1 == me && n0 == 1 && n1 == 1, "... the caller owns both");
    dbl_join(t);
    DosReleaseMutexSem(mtx[0]);
    DosReleaseMutexSem(mtx[1]);
    DosCloseMuxWaitSem(mux);
    for (i = 0; i < 2; i++) DosCloseMutexSem(mtx[i]);
}

static void test_errors(void)
{
    SEMRECORD rec[65];
    HEV ev[65];
    HMTX m = 0;
    HMUX h = 0;
    ULONG user;
    int i;
    step(4);
    for (i = 0; i < 65; i++) {
        DosCreateEventSem(NULL, &ev[i], 0, FALSE);
        rec[i].hsemCur = (HSEM)ev[i];
        rec[i].ulUser = (ULONG)i;
    }
    is_int(DosCreateMuxWaitSem(NULL, &h, 64, rec, DCMW_WAIT_ANY), NO_ERROR, "64 records: 0");
    DosCloseMuxWaitSem(h);
    is_int(DosCreateMuxWaitSem(NULL, &h, 65, rec, DCMW_WAIT_ANY), ERROR_TOO_MANY_SEMAPHORES,
           "65 records: ERROR_TOO_MANY_SEMAPHORES (100)");
    is_int(DosCreateMuxWaitSem(NULL, &h, 0, NULL, DCMW_WAIT_ANY), NO_ERROR, "an empty mux-wait: 0");
    is_int(DosWaitMuxWaitSem(h, 0, &user), ERROR_EMPTY_MUXWAIT, "wait on it: ERROR_EMPTY_MUXWAIT (286)");
    DosCloseMuxWaitSem(h);
    DosCreateMutexSem(NULL, &m, 0, FALSE);
    rec[1].hsemCur = (HSEM)m;
    is_int(DosCreateMuxWaitSem(NULL, &h, 2, rec, DCMW_WAIT_ANY), ERROR_WRONG_TYPE, "an event and a mutex: ERROR_WRONG_TYPE (292)");
    rec[1].hsemCur = (HSEM)ev[0];
    is_int(DosCreateMuxWaitSem(NULL, &h, 2, rec, DCMW_WAIT_ANY), ERROR_DUPLICATE_HANDLE,
           "one event twice: ERROR_DUPLICATE_HANDLE (284)");
    rec[1].hsemCur = (HSEM)(ULONG)0;
    is_int(DosCreateMuxWaitSem(NULL, &h, 2, rec, DCMW_WAIT_ANY), ERROR_INVALID_HANDLE, "a handle 0: ERROR_INVALID_HANDLE");
    rec[1].hsemCur = (HSEM)ev[1];
    is_int(DosCreateMuxWaitSem(NULL, &h, 2, rec, DCMW_WAIT_ANY | DCMW_WAIT_ALL), ERROR_INVALID_PARAMETER,
           "both ANY and ALL: ERROR_INVALID_PARAMETER");
    is_int(DosCreateMuxWaitSem(NULL, &h, 2, rec, 0), ERROR_INVALID_PARAMETER, "neither ANY nor ALL: ERROR_INVALID_PARAMETER");
    DosCreateMuxWaitSem(NULL, &h, 2, rec, DCMW_WAIT_ANY);
    rec[0].hsemCur = (HSEM)h;
    is_int(DosCreateMuxWaitSem(NULL, &mux, 1, rec, DCMW_WAIT_ANY), ERROR_WRONG_TYPE, "a mux-wait in a mux-wait: ERROR_WRONG_TYPE");

    /* the knob */
    os2dbl_set_interrupt_percent(100);
    is_int(DosWaitMuxWaitSem(h, 200, &user), ERROR_INTERRUPT, "knob 100%%: a blocking mux-wait returns ERROR_INTERRUPT");
    DosPostEventSem(ev[1]);
    is_int(DosWaitMuxWaitSem(h, 200, &user), NO_ERROR, "knob 100%%: one that need not block returns 0");
    os2dbl_set_interrupt_percent(0);
    DosCloseMuxWaitSem(h);
    DosCloseMutexSem(m);
    for (i = 0; i < 65; i++) DosCloseEventSem(ev[i]);
}

int main(void)
{
    os2dbl_set_interrupt_percent(0);   /* exact semantics; the knob is tested below */
    dbl_watchdog_start(60, dump, NULL);
    test_events_any();
    test_events_all();
    test_mutexes();
    test_errors();
    is_int(os2dbl_handles_in_use(), 0, "no semaphore left open");
    dbl_watchdog_stop();
    return done_testing();
}
