/* SPDX-License-Identifier: MIT */
/* dbl_event: the OS/2 event-semaphore facts of README.md, each pinned on the double:
 * post count, ERROR_ALREADY_POSTED / ERROR_TOO_MANY_POSTS / ERROR_ALREADY_RESET, waits
 * that never take the count, edge-triggered release of blocked waiters, timeouts rounded
 * up to the tick, ERROR_SEM_BUSY on the final close, usage counts and names, the
 * ERROR_INTERRUPT knob, and the reuse of a closed handle's slot (last freed first); also
 * the test hook os2dbl_set_hook. */
#define INCL_DOSSEMAPHORES
#define INCL_DOSPROCESS
#define INCL_DOSERRORS
#include <os2.h>

#include <stdatomic.h>

#include "dbl_util.h"

#define NWAITERS 4
#define ROUNDS 50

static HEV ev;
static atomic_int progress;       /* last step reached, for the watchdog */
static atomic_ulong rcs[NWAITERS]; /* the waiters' results; 9999 while they wait */
static ULONG wait_ms[NWAITERS];

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a progress report */
    diag("progress step %d", atomic_load_explicit(&progress, memory_order_relaxed));
}

static void step(int s)
{
    /* relaxed: a progress report */
    atomic_store_explicit(&progress, s, memory_order_relaxed);
}

static VOID APIENTRY waiter(ULONG i)
{
    /* relaxed: read after DosWaitThread, or polled only to stop polling */
    atomic_store_explicit(&rcs[i], DosWaitEventSem(ev, wait_ms[i]), memory_order_relaxed);
}

static APIRET rc_of(int i)
{
    /* relaxed: read after DosWaitThread (which orders it), or polled only to stop polling */
    return atomic_load_explicit(&rcs[i], memory_order_relaxed);
}

static ULONG count_of(HEV h)
{
    ULONG c = 12345;
    DosQueryEventSem(h, &c);
    return c;
}

static void start(TID *tid, ULONG i, ULONG ms)
{
    wait_ms[i] = ms;
    atomic_store_explicit(&rcs[i], 9999, memory_order_relaxed);   /* relaxed: before the thread starts */
    if (DosCreateThread(tid, waiter, i, 0, 65536) != NO_ERROR) bail("DosCreateThread");
}

static void test_counts(void)
{
    ULONG c = 777;
    HEV h = 0, h2 = 0;
    step(1);
    is_int(DosCreateEventSem(NULL, &h, 0, FALSE), NO_ERROR, "create a reset event");
    ok(h != 0, "the handle is not 0 (0 can mean 'not created')");
    is_int(count_of(h), 0, "a reset event: count 0");
    is_int(DosPostEventSem(h), NO_ERROR, "post on a reset event: 0");
    is_int(count_of(h), 1, "... count 1");
    is_int(DosPostEventSem(h), ERROR_ALREADY_POSTED, "post on a posted event: ERROR_ALREADY_POSTED (299)");
    is_int(count_of(h), 2, "... count 2");
    is_int(DosWaitEventSem(h, SEM_IMMEDIATE_RETURN), NO_ERROR, "wait on a posted event, SEM_IMMEDIATE_RETURN: 0");
    is_int(DosWaitEventSem(h, 1000), NO_ERROR, "wait on a posted event with a timeout: 0 at once");
    is_int(DosWaitEventSem(h, SEM_INDEFINITE_WAIT), NO_ERROR, "wait on a posted event, SEM_INDEFINITE_WAIT: 0");
    is_int(count_of(h), 2, "waits never decrement the count: still 2");
    is_int(DosResetEventSem(h, &c), NO_ERROR, "reset a posted event: 0");
    is_int(c, 2, "... and it stores the post count 2");
    is_int(count_of(h), 0, "... count now 0");
    c = 777;
    is_int(DosResetEventSem(h, &c), ERROR_ALREADY_RESET, "reset a reset event: ERROR_ALREADY_RESET (300)");
    is_int(c, 0, "... and it stores count 0");
    is_int(DosWaitEventSem(h, SEM_IMMEDIATE_RETURN), ERROR_TIMEOUT, "SEM_IMMEDIATE_RETURN on a reset event: ERROR_TIMEOUT (640)");
    is_int(DosResetEventSem(h, NULL), ERROR_INVALID_PARAMETER, "reset with a NULL count pointer: ERROR_INVALID_PARAMETER");

    /* the cap of the post count */
    unsigned long i, zero = 0, already = 0, other = 0;
    for (i = 0; i < 65535; i++) {
        APIRET rc = DosPostEventSem(h);
        if (rc == NO_ERROR) zero++;
        else if (rc == ERROR_ALREADY_POSTED) already++;
        else other++;
    }
    ok(zero == 1 && already == 65534 && other == 0,
       "65535 posts from reset: one 0, then 65534 x ERROR_ALREADY_POSTED (%lu, %lu, %lu)", zero, already, other);
    is_int(count_of(h), 65535, "... count 65535");
    is_int(DosPostEventSem(h), ERROR_TOO_MANY_POSTS, "post at count 65535: ERROR_TOO_MANY_POSTS (298)");
    is_int(count_of(h), 65535, "... count stays 65535");
    is_int(DosResetEventSem(h, &c), NO_ERROR, "reset after the cap: 0");
    is_int(c, 65535, "... stores 65535");

    is_int(DosCreateEventSem(NULL, &h2, 0, TRUE), NO_ERROR, "create posted (fState TRUE)");
    is_int(count_of(h2), 1, "... count 1");
    is_int(DosCloseEventSem(h2), NO_ERROR, "close it");
    is_int(DosQueryEventSem(h2, &c), ERROR_INVALID_HANDLE, "query a closed event: ERROR_INVALID_HANDLE (6)");
    is_int(DosPostEventSem(h2), ERROR_INVALID_HANDLE, "post a closed event: ERROR_INVALID_HANDLE");
    is_int(DosWaitEventSem(h2, 0), ERROR_INVALID_HANDLE, "wait on a closed event: ERROR_INVALID_HANDLE");
    is_int(DosCloseEventSem(h2), ERROR_INVALID_HANDLE, "close it twice: ERROR_INVALID_HANDLE");
    is_int(DosPostEventSem(0), ERROR_INVALID_HANDLE, "post handle 0: ERROR_INVALID_HANDLE");
    HMTX m = 0;
    DosCreateMutexSem(NULL, &m, 0, FALSE);
    is_int(DosPostEventSem(m), ERROR_INVALID_HANDLE, "post a mutex handle: ERROR_INVALID_HANDLE");
    DosCloseMutexSem(m);
    is_int(DosCreateEventSem(NULL, &h2, DCE_POSTONE, FALSE), ERROR_INVALID_PARAMETER,
           "DCE_POSTONE: ERROR_INVALID_PARAMETER (modelled as a kernel without it)");
    is_int(DosCreateEventSem(NULL, &h2, DCE_AUTORESET, FALSE), ERROR_INVALID_PARAMETER,
           "DCE_AUTORESET: ERROR_INVALID_PARAMETER");
    is_int(DosCreateEventSem(NULL, &h2, 0x100, FALSE), ERROR_INVALID_PARAMETER, "unknown attribute: ERROR_INVALID_PARAMETER");
    is_int(DosCreateEventSem(NULL, &h2, DC_SEM_SHARED, FALSE), NO_ERROR, "DC_SEM_SHARED: 0");
    DosCloseEventSem(h2);
    is_int(DosCloseEventSem(h), NO_ERROR, "close an idle event: 0");
}

static void test_timeouts(void)
{
    static const ULONG ms[] = { 1, 20, 31, 32, 50 };
    unsigned long tick = os2dbl_tick_ms();
    HEV h = 0;
    size_t i;
    step(2);
    DosCreateEventSem(NULL, &h, 0, FALSE);
    for (i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        uint64_t t0 = dbl_now_ns();
        APIRET rc = DosWaitEventSem(h, ms[i]);
        uint64_t el = dbl_now_ns() - t0, want = dbl_round_ms(ms[i], tick) * 1000000u;
        is_int(rc, ERROR_TIMEOUT, "wait %lu ms on a reset event: ERROR_TIMEOUT", ms[i]);
        ok(el >= want && el < want + 1000000000u,
           "... after %.1f ms: %lu ms rounded up to the %lu ms tick = %llu ms, never early",
           el / 1e6, ms[i], tick, (unsigned long long)(want / 1000000u));
    }
    DosCloseEventSem(h);
}

static void test_edge(void)
{
    TID tid[NWAITERS];
    int r, i, all_blocked = 1, all_zero = 1, all_reset = 1;
    step(3);
    DosCreateEventSem(NULL, &ev, 0, FALSE);
    /* a 3 s timeout, so that a level-triggered double fails here (640) instead of hanging */
    for (r = 0; r < ROUNDS && all_zero; r++) {
        for (i = 0; i < NWAITERS; i++) start(&tid[i], (ULONG)i, 3000);
        if (!dbl_until_blocked(ev, NWAITERS)) all_blocked = 0;
        ULONG c;
        DosPostEventSem(ev);
        if (DosResetEventSem(ev, &c) != NO_ERROR || c != 1) all_reset = 0;
        for (i = 0; i < NWAITERS; i++) {
            dbl_join(tid[i]);
            if (rc_of(i) != NO_ERROR) {
                if (all_zero) diag("round %d waiter %d: rc %lu", r, i, rc_of(i));
                all_zero = 0;
            }
        }
    }
    ok(all_blocked, "%d rounds: %d threads blocked on a reset event", ROUNDS, NWAITERS);
    ok(all_reset, "... each round a post (count 1) then at once a reset (stores 1)");
    ok(all_zero, "edge-triggered: every thread blocked at the post returns 0, though the event was reset before it ran");
    is_int(os2dbl_blocked(ev), 0, "... no waiter left queued");
    uint64_t t0 = dbl_now_ns();
    is_int(DosWaitEventSem(ev, 40), ERROR_TIMEOUT, "a wait that starts after the reset blocks: ERROR_TIMEOUT");
    ok(dbl_now_ns() - t0 >= 40000000u, "... after blocking its 40 ms");

    /* close while a thread waits */
    step(4);
    start(&tid[0], 0, SEM_INDEFINITE_WAIT);
    ok(dbl_until_blocked(ev, 1), "a thread blocks on the event");
    is_int(DosCloseEventSem(ev), ERROR_SEM_BUSY, "final close while a thread waits: ERROR_SEM_BUSY (301)");
    is_int(DosPostEventSem(ev), NO_ERROR, "post: the handle is still valid");
    dbl_join(tid[0]);
    is_int(rc_of(0), NO_ERROR, "... the waiter returns 0");
    is_int(DosCloseEventSem(ev), NO_ERROR, "close when nobody waits: 0");
}

static void test_usage(void)
{
    HEV h = 0, o = 0, n = 0;
    ULONG c;
    TID t = 0;
    unsigned long i, bad = 0;
    step(5);
    DosCreateEventSem(NULL, &h, 0, FALSE);
    o = h;
    is_int(DosOpenEventSem(NULL, &o), NO_ERROR, "open by handle (name NULL): 0");
    is_int(o, h, "... the same handle");
    ev = h;
    start(&t, 0, SEM_INDEFINITE_WAIT);
    dbl_until_blocked(h, 1);
    is_int(DosCloseEventSem(h), NO_ERROR, "a close that is not the final one, while a thread waits: 0");
    is_int(DosQueryEventSem(h, &c), NO_ERROR, "... the handle is still valid (usage count 1)");
    is_int(DosCloseEventSem(h), ERROR_SEM_BUSY, "... the final close while it waits: ERROR_SEM_BUSY");
    DosPostEventSem(h);
    dbl_join(t);
    is_int(DosCloseEventSem(h), NO_ERROR, "final close: 0");
    is_int(DosQueryEventSem(h, &c), ERROR_INVALID_HANDLE, "... then the handle is invalid");
    o = h;
    is_int(DosOpenEventSem(NULL, &o), ERROR_INVALID_HANDLE, "open a deleted event by handle: ERROR_INVALID_HANDLE");

    DosCreateEventSem(NULL, &h, 0, FALSE);
    for (i = 1; i < 65535; i++) {
        o = h;
        if (DosOpenEventSem(NULL, &o) != NO_ERROR) bad++;
    }
    is_int(bad, 0, "open 65534 times: usage count 65535");
    o = h;
    is_int(DosOpenEventSem(NULL, &o), ERROR_TOO_MANY_OPENS, "one more open: ERROR_TOO_MANY_OPENS (291)");
    for (i = 0, bad = 0; i < 65534; i++)
        if (DosCloseEventSem(h) != NO_ERROR) bad++;
    is_int(bad, 0, "close 65534 times: 0 each");
    is_int(DosQueryEventSem(h, &c), NO_ERROR, "... still valid");
    is_int(DosCloseEventSem(h), NO_ERROR, "the final close: 0");
    is_int(DosCloseEventSem(h), ERROR_INVALID_HANDLE, "... once more: ERROR_INVALID_HANDLE");

    /* names */
    is_int(DosCreateEventSem((PSZ)"\\SEM32\\DBL\\EV1", &h, 0, TRUE), NO_ERROR, "create \\SEM32\\DBL\\EV1");
    is_int(DosCreateEventSem((PSZ)"\\sem32\\dbl\\ev1", &n, 0, FALSE), ERROR_DUPLICATE_NAME,
           "the same name in lower case: ERROR_DUPLICATE_NAME (285)");
    is_int(DosCreateEventSem((PSZ)"DBL\\EV2", &n, 0, FALSE), ERROR_INVALID_NAME, "a name without \\SEM32\\: ERROR_INVALID_NAME (123)");
    n = 0;
    is_int(DosOpenEventSem((PSZ)"\\SEM32\\DBL\\EV1", &n), NO_ERROR, "open by name with *phev = 0: 0");
    is_int(n, h, "... gives the creator's handle");
    is_int(count_of(n), 1, "... same semaphore (created posted)");
    n = h;
    is_int(DosOpenEventSem((PSZ)"\\SEM32\\DBL\\EV1", &n), ERROR_INVALID_PARAMETER,
           "open by name with *phev != 0: ERROR_INVALID_PARAMETER");
    n = 0;
    is_int(DosOpenEventSem((PSZ)"\\SEM32\\DBL\\NONE", &n), ERROR_SEM_NOT_FOUND, "open an unknown name: ERROR_SEM_NOT_FOUND (187)");
    DosCloseEventSem(h);
    is_int(DosCloseEventSem(h), NO_ERROR, "two closes after create + open: 0");
    n = 0;
    is_int(DosOpenEventSem((PSZ)"\\SEM32\\DBL\\EV1", &n), ERROR_SEM_NOT_FOUND, "... the name is gone");
}

static int hook_calls[3];
static ULONG hook_last;

static void count_hook(int call, ULONG h)
{
    hook_calls[call]++;
    hook_last = h;
}

static void test_reuse_and_hook(void)
{
    HEV a = 0, b = 0, c = 0, d = 0;
    ULONG n;
    step(7);
    DosCreateEventSem(NULL, &a, 0, FALSE);
    DosCreateEventSem(NULL, &b, 0, FALSE);
    DosCloseEventSem(a);
    is_int(DosQueryEventSem(a, &n), ERROR_INVALID_HANDLE, "a closed handle is invalid ...");
    is_int(DosCreateEventSem(NULL, &c, 0, FALSE), NO_ERROR, "... until the next create");
    is_int(c, a, "... which reuses its slot: the same handle value");
    is_int(DosPostEventSem(a), NO_ERROR, "a post through the kept old value succeeds ...");
    is_int(count_of(c), 1, "... and posts the new semaphore");
    DosCloseEventSem(b);
    DosCloseEventSem(c);
    is_int(DosCreateEventSem(NULL, &d, 0, FALSE), NO_ERROR, "after two closes a create gets ...");
    is_int(d, c, "... the slot freed last");
    HMTX m = 0;
    is_int(DosCreateMutexSem(NULL, &m, 0, FALSE), NO_ERROR, "a mutex created next ...");
    is_int(m, b, "... gets the slot freed before it (one table for every kind)");
    is_int(DosPostEventSem(m), ERROR_INVALID_HANDLE, "an event call on it: ERROR_INVALID_HANDLE");
    DosCloseMutexSem(m);

    os2dbl_set_hook(count_hook);
    DosPostEventSem(d);
    is_int(hook_calls[OS2DBL_HOOK_POST], 1, "os2dbl_set_hook: the hook runs at DosPostEventSem ...");
    is_int(hook_last, d, "... with its handle");
    DosResetEventSem(d, &n);
    is_int(hook_calls[OS2DBL_HOOK_RESET], 1, "... and at DosResetEventSem");
    DosWaitEventSem(d, SEM_IMMEDIATE_RETURN);
    DosQueryEventSem(d, &n);
    is_int(hook_calls[OS2DBL_HOOK_POST] + hook_calls[OS2DBL_HOOK_RESET], 2, "... at no other call");
    os2dbl_set_hook(NULL);
    DosPostEventSem(d);
    is_int(hook_calls[OS2DBL_HOOK_POST], 1, "os2dbl_set_hook(NULL): no hook any more");
    DosCloseEventSem(d);
}

static void test_interrupt(void)
{
    HEV h = 0;
    TID t = 0;
    int i, early = 0, late = 0, all95 = 1;
    step(6);
    DosCreateEventSem(NULL, &h, 0, FALSE);
    os2dbl_set_interrupt_percent(100);
    unsigned long i0 = os2dbl_interrupts();
    for (i = 0; i < 20; i++) {
        uint64_t t0 = dbl_now_ns();
        APIRET rc = DosWaitEventSem(h, 200);
        uint64_t el = dbl_now_ns() - t0;
        if (rc != ERROR_INTERRUPT) all95 = 0;
        if (el < 10000000u) early++;   /* at once; a later one falls below 10 ms 5% of the time */
        else late++;
    }
    ok(all95, "knob 100%%: a blocking wait returns ERROR_INTERRUPT (95)");
    is_int(os2dbl_interrupts() - i0, 20, "... os2dbl_interrupts counts the 20");
    ok(early > 0 && late > 0, "... sometimes at once (%d), sometimes after waiting part of the timeout (%d)", early, late);
    DosPostEventSem(h);
    is_int(DosWaitEventSem(h, 200), NO_ERROR, "knob 100%%: a wait that need not block returns 0, never 95");

    /* A retry loop with the remaining time gets the post, however often it is interrupted. */
    ULONG c;
    DosResetEventSem(h, &c);
    ev = h;
    unsigned long waits0 = os2dbl_sem_waits();
    i0 = os2dbl_interrupts();
    uint64_t t0 = dbl_now_ns(), end = t0 + 5000000000u;
    APIRET rc;
    int posted = 0;
    for (;;) {
        uint64_t now = dbl_now_ns();
        if (!posted && now - t0 > 100000000u) {   /* post after 100 ms, from this thread */
            DosPostEventSem(h);
            posted = 1;
        }
        ULONG left = now < end ? (ULONG)((end - now) / 1000000u) : 0;
        rc = DosWaitEventSem(h, posted ? left : 20);
        if (rc == NO_ERROR || (rc != ERROR_INTERRUPT && rc != ERROR_TIMEOUT)) break;
        if (now > end) break;
    }
    is_int(rc, NO_ERROR, "knob 100%%: a retry loop on ERROR_INTERRUPT gets the post");
    ok(os2dbl_interrupts() > i0, "... after %lu interrupts", os2dbl_interrupts() - i0);
    ok(os2dbl_sem_waits() - waits0 >= 2, "os2dbl_sem_waits counts every DosWaitEventSem call (%lu)",
       os2dbl_sem_waits() - waits0);

    /* A thread released by a post is never turned into ERROR_INTERRUPT, even when the
     * event is reset at once. The long timeout makes the knob's interrupt fall (at a
     * random point of it) long after the post. */
    int r, seen = 0, zero = 1;
    for (r = 0; r < 20; r++) {
        DosResetEventSem(h, &c);
        start(&t, 0, 0xFFFFFFFEUL);
        /* half the waits are interrupted at once: those never show as blocked */
        uint64_t until = dbl_now_ns() + 2000000000u;
        while (os2dbl_blocked(h) == 0 && rc_of(0) == 9999 && dbl_now_ns() < until) dbl_sleep_ms(1);
        if (os2dbl_blocked(h) == 1) {
            seen++;
            DosPostEventSem(h);
            DosResetEventSem(h, &c);
            dbl_join(t);
            if (rc_of(0) != NO_ERROR) zero = 0;
        } else {
            dbl_join(t);
        }
    }
    ok(seen > 0 && zero, "knob 100%%: %d waiters blocked at a post then reset all return 0, not 95", seen);
    os2dbl_set_interrupt_percent(0);
    DosCloseEventSem(h);
}

int main(void)
{
    os2dbl_set_interrupt_percent(0);   /* exact semantics; the knob is tested below */
    dbl_watchdog_start(60, dump, NULL);
    unsigned long calls0 = os2dbl_calls(), posts0 = os2dbl_sem_posts();
    test_counts();
    ok(os2dbl_sem_posts() - posts0 == 65535 + 6, "os2dbl_sem_posts counts every DosPostEventSem call (%lu)",
       os2dbl_sem_posts() - posts0);
    ok(os2dbl_calls() > calls0 + 65535, "os2dbl_calls counts every Dos* call");
    test_timeouts();
    test_edge();
    test_usage();
    test_interrupt();
    test_reuse_and_hook();
    is_int(os2dbl_handles_in_use(), 0, "no semaphore left open");
    dbl_watchdog_stop();
    return done_testing();
}
