/* SPDX-License-Identifier: MIT */
/* wait_any_conservation: fastsync_wait_any takes exactly one token, from the semaphore whose
 * index it returns, and from no other; and a wait_any sleeper that leaves a semaphore
 * without its token neither keeps it nor strands a plain waiter.
 * Three semaphores (random initial values) and an event END, set only at the end. Posters
 * post and post_n(1..3) to random semaphores for a time box, each semaphore's tokens counted.
 * wait_any threads take with fastsync_wait_any over END plus all three semaphores or a
 * subset, in a random order each call (the index returned is mapped back to the object;
 * tokens counted per semaphore and per winning index), with timedwait_any and
 * clockwait_any(CLOCK_REALTIME) over any subset with deadlines 0-100 us ahead (so timed-out
 * leaves race with posts), and with trywait_any. Plain threads take with fastsync_sem_wait,
 * sem_timedwait (short deadlines) and sem_trywait on random semaphores. The posters stop once
 * the time box is up and both kinds of takers have taken a token (so the check that tokens
 * went to both fails only where a kind can get none, a hang and the watchdog's failure, not
 * where the box ended before the takers ran). Then END is set (every wait_any must return:
 * untimed ones always list END), the plain threads are told to stop, and each semaphore with
 * a registered waiter gets one more token (counted) until all plain threads are out. Then,
 * per semaphore, exactly:
 *   tokens taken by wait_any + taken by plain waits + final value == initial + posted
 * no waiter is left registered, END won only after it was set, only the expected codes;
 * a hang is the watchdog's failure. A token taken from a loser, twice, or counted against
 * the wrong index shows in the totals (a wrong index reported after a sleep: every run off);
 * a registered take that does not leave, in the waiter count. (A wake not passed on is
 * mostly hidden here, later posts waking the stranded waiter: wait_any_forward makes it
 * fail.) Modes: spread and pinned to one CPU, few threads and more threads than CPUs.
 * FASTSYNC_TEST_WAITV=fallback runs it through the fallback (wait_any_conservation_fallback). */
#include "harness.h"

enum { NS = 3, END = NS, NOBJ = NS + 1 };
enum { BY_WAIT, BY_TIMED, BY_CLOCK_RT, BY_TRY, BY_KINDS };
static const char *const by_name[BY_KINDS] = { "wait_any", "timedwait_any", "clockwait_any(REALTIME)",
                                               "trywait_any" };
enum { PL_WAIT, PL_TIMED, PL_TRY, PL_KINDS };
static const char *const pl_name[PL_KINDS] = { "sem_wait", "sem_timedwait", "sem_trywait" };

struct poster {
    uint64_t rng;
    unsigned long posted[NS];
    _Atomic(unsigned long) progress; /* tokens posted, for the dump */
    unsigned long bad;
    int bad_code;
};

struct any_taker {
    uint64_t rng;
    unsigned long taken[NS];         /* tokens, per semaphore */
    unsigned long by_index[NOBJ];    /* wins, per index in the list */
    unsigned long by[BY_KINDS];      /* successful calls, per kind */
    unsigned long timeouts, eagain, bad, early_end;
    int bad_code;
    bool ended;                      /* won END, or saw it set */
    _Atomic(int) in;                 /* BY_* it is in, or -1 */
    _Atomic(unsigned long) progress; /* calls made, for the dump */
};

struct plain_taker {
    uint64_t rng;
    unsigned long taken[NS];
    unsigned long by[PL_KINDS];
    unsigned long timeouts, eagain, bad;
    int bad_code;
    _Atomic(int) in; /* the semaphore it waits on (+ 10 * PL_*), or -1 */
    _Atomic(unsigned long) progress;
};

static struct {
    fastsync_sem_t s[NS];
    fastsync_event_t end;
    unsigned initial[NS];
    uint64_t box_end;
    _Atomic(bool) end_set;  /* stored (seq_cst) before END is set */
    _Atomic(bool) stop;     /* plain takers: leave */
    _Atomic(bool) any_took, plain_took; /* a wait_any, a plain wait has taken a token */
    _Atomic(int) plain_alive;
    int np, na, nw;
    struct poster *p;
    struct any_taker *a;
    struct plain_taker *w;
} R;

static void dump(void *unused)
{
    (void)unused;
    char what[16];
    for (int k = 0; k < NS; k++) {
        snprintf(what, sizeof what, "sem %d", k);
        test_dump_sem(what, &R.s[k]);
    }
    test_dump_event("END", &R.end);
    /* relaxed: progress read for the dump only. */
    diag("end set %d, stop %d, plain takers alive %d, a token taken by wait_any %d, by a plain wait %d",
         (int)atomic_load_explicit(&R.end_set, memory_order_relaxed),
         (int)atomic_load_explicit(&R.stop, memory_order_relaxed),
         atomic_load_explicit(&R.plain_alive, memory_order_relaxed),
         (int)atomic_load_explicit(&R.any_took, memory_order_relaxed),
         (int)atomic_load_explicit(&R.plain_took, memory_order_relaxed));
    for (int i = 0; i < R.np; i++)
        diag("poster %d: %lu tokens posted", i, atomic_load_explicit(&R.p[i].progress, memory_order_relaxed));
    for (int i = 0; i < R.na; i++) {
        int in = atomic_load_explicit(&R.a[i].in, memory_order_relaxed);
        diag("wait_any taker %d: %lu calls, now %s", i, atomic_load_explicit(&R.a[i].progress, memory_order_relaxed),
             in < 0 ? "between calls" : by_name[in]);
    }
    for (int i = 0; i < R.nw; i++) {
        int in = atomic_load_explicit(&R.w[i].in, memory_order_relaxed);
        if (in < 0)
            diag("plain taker %d: %lu calls, now between calls", i,
                 atomic_load_explicit(&R.w[i].progress, memory_order_relaxed));
        else
            diag("plain taker %d: %lu calls, now in %s on sem %d", i,
                 atomic_load_explicit(&R.w[i].progress, memory_order_relaxed), pl_name[in / 10], in % 10);
    }
}

/* Both kinds of takers have taken a token. relaxed: it only keeps the posters going; the
 * counts are read after the joins. */
static bool took_both(void)
{
    return atomic_load_explicit(&R.any_took, memory_order_relaxed) &&
           atomic_load_explicit(&R.plain_took, memory_order_relaxed);
}

static void *poster_main(void *arg)
{
    struct poster *p = (struct poster *)arg;
    unsigned long total = 0;
    while (test_box_until(R.box_end, total, took_both())) {
        uint64_t x = test_rand(&p->rng);
        int k = (int)(x % NS);
        if (fastsync_sem_getvalue(&R.s[k]) > 16) { /* keep the values small: takers must run dry */
            sched_yield();
            continue;
        }
        unsigned n = (x >> 8) % 4 == 0 ? 1 + (unsigned)(x >> 16) % 3 : 1;
        int r = n == 1 && (x >> 24) % 2 ? fastsync_sem_post(&R.s[k]) : fastsync_sem_post_n(&R.s[k], n);
        if (r == 0) {
            p->posted[k] += n;
            total += n;
            /* relaxed: progress for the dump; the counts are read after the join. */
            atomic_store_explicit(&p->progress, total, memory_order_relaxed);
        } else {
            p->bad++;
            p->bad_code = r;
        }
        if ((x >> 32) % 16 == 0) sched_yield();
    }
    return NULL;
}

static void *any_main(void *arg)
{
    struct any_taker *a = (struct any_taker *)arg;
    unsigned long calls = 0;
    while (!a->ended) {
        uint64_t x = test_rand(&a->rng);
        int by = (int)(x % BY_KINDS);
        /* the objects: all, or a subset of the semaphores (END only sometimes for the calls
         * that end by themselves; always for the untimed wait), in a random order */
        int obj[NOBJ], n = 0;
        unsigned mask = (x >> 4) % 2 ? 7u : 1u + (unsigned)((x >> 8) % 7);
        for (int k = 0; k < NS; k++)
            if (mask & (1u << k)) obj[n++] = k;
        if (by == BY_WAIT || (x >> 12) % 4 != 0) obj[n++] = END;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(test_rand(&a->rng) % (uint64_t)(i + 1)), t = obj[i];
            obj[i] = obj[j];
            obj[j] = t;
        }
        fastsync_wait_entry_t list[NOBJ];
        for (int i = 0; i < n; i++)
            list[i] = obj[i] == END ? fastsync_wait_event(&R.end) : fastsync_wait_sem(&R.s[obj[i]]);

        unsigned idx = NOBJ;
        int r, expect;
        struct timespec d;
        uint64_t ahead = (x >> 16) % 8 == 0 ? 0 : (x >> 20) % 100000u; /* 0-100 us, some past */
        /* relaxed (in, progress): for the dump. */
        atomic_store_explicit(&a->in, by, memory_order_relaxed);
        switch (by) {
        case BY_WAIT:
            r = fastsync_wait_any(list, (unsigned)n, &idx);
            expect = 0;
            break;
        case BY_TIMED:
            d = fastsync_deadline_in(ahead);
            r = fastsync_timedwait_any(list, (unsigned)n, &idx, &d);
            expect = ETIMEDOUT;
            break;
        case BY_CLOCK_RT:
            d = test_deadline_on(CLOCK_REALTIME, ahead);
            r = fastsync_clockwait_any(list, (unsigned)n, &idx, CLOCK_REALTIME, &d);
            expect = ETIMEDOUT;
            break;
        default:
            r = fastsync_trywait_any(list, (unsigned)n, &idx);
            expect = EAGAIN;
            break;
        }
        atomic_store_explicit(&a->in, -1, memory_order_relaxed);
        atomic_store_explicit(&a->progress, ++calls, memory_order_relaxed);
        if (r == 0 && idx < (unsigned)n) {
            a->by[by]++;
            a->by_index[idx]++;
            if (obj[idx] == END) {
                /* seq_cst: stored before END was set; this win read END set (acquire) */
                if (!atomic_load(&R.end_set)) a->early_end++;
                a->ended = true;
            } else {
                a->taken[obj[idx]]++;
                atomic_store_explicit(&R.any_took, true, memory_order_relaxed); /* see took_both */
            }
        } else if (r != 0 && r == expect) {
            if (r == EAGAIN) a->eagain++;
            else a->timeouts++;
            if (fastsync_event_is_set(&R.end)) a->ended = true;
        } else {
            a->bad++;
            a->bad_code = r != 0 ? r : -1; /* -1: 0 with an index out of the list */
        }
    }
    return NULL;
}

static void *plain_main(void *arg)
{
    struct plain_taker *w = (struct plain_taker *)arg;
    unsigned long calls = 0;
    /* relaxed: the flag only ends the loop; that every plain waiter gets out rests on the
     * tokens posted while one is registered (see run). */
    while (!atomic_load_explicit(&R.stop, memory_order_relaxed)) {
        uint64_t x = test_rand(&w->rng);
        int k = (int)(x % NS), by = (int)((x >> 8) % PL_KINDS), r, expect;
        struct timespec d;
        atomic_store_explicit(&w->in, by * 10 + k, memory_order_relaxed); /* relaxed: the dump's */
        if (by == PL_WAIT) {
            r = fastsync_sem_wait(&R.s[k]);
            expect = 0;
        } else if (by == PL_TIMED) {
            d = fastsync_deadline_in((x >> 16) % 50000u);
            r = fastsync_sem_timedwait(&R.s[k], &d);
            expect = ETIMEDOUT;
        } else {
            r = fastsync_sem_trywait(&R.s[k]);
            expect = EAGAIN;
        }
        atomic_store_explicit(&w->in, -1, memory_order_relaxed);
        atomic_store_explicit(&w->progress, ++calls, memory_order_relaxed);
        if (r == 0) {
            w->taken[k]++;
            w->by[by]++;
            atomic_store_explicit(&R.plain_took, true, memory_order_relaxed); /* see took_both */
        } else if (r == expect) {
            if (r == EAGAIN) w->eagain++;
            else w->timeouts++;
        } else {
            w->bad++;
            w->bad_code = r;
        }
    }
    atomic_fetch_sub(&R.plain_alive, 1);
    return NULL;
}

static void run(const char *name, bool pinned, int np, int na, int nw, double ms)
{
    test_pin_all(pinned);
    uint64_t rng = test_stream(999);
    for (int k = 0; k < NS; k++) {
        R.initial[k] = (unsigned)(test_rand(&rng) % 3);
        fastsync_sem_init(&R.s[k], R.initial[k], test_rand(&rng) % 4 == 0 ? TEST_SHARED : 0);
    }
    fastsync_event_init(&R.end, false, 0);
    /* relaxed: before the threads start */
    atomic_store_explicit(&R.end_set, false, memory_order_relaxed);
    atomic_store_explicit(&R.stop, false, memory_order_relaxed);
    atomic_store_explicit(&R.any_took, false, memory_order_relaxed);
    atomic_store_explicit(&R.plain_took, false, memory_order_relaxed);
    atomic_store_explicit(&R.plain_alive, nw, memory_order_relaxed);
    R.np = np;
    R.na = na;
    R.nw = nw;
    R.p = (struct poster *)calloc((size_t)np, sizeof *R.p);
    R.a = (struct any_taker *)calloc((size_t)na, sizeof *R.a);
    R.w = (struct plain_taker *)calloc((size_t)nw, sizeof *R.w);
    pthread_t *t = (pthread_t *)calloc((size_t)(np + na + nw), sizeof *t);
    if (!R.p || !R.a || !R.w || !t) bail("out of memory");
    unsigned long waits0 = test_kernel_waits(), wakes0 = test_kernel_wakes(),
                  waitvs0 = atomic_load(&test_waitvs_made);

    test_watchdog_start(dump, NULL);
    R.box_end = test_box_end(ms);
    for (int i = 0; i < na; i++) {
        R.a[i].rng = test_stream((unsigned)(100 + i));
        atomic_store_explicit(&R.a[i].in, -1, memory_order_relaxed); /* relaxed: before its thread starts */
        t[np + i] = test_thread_start(any_main, &R.a[i]);
    }
    for (int i = 0; i < nw; i++) {
        R.w[i].rng = test_stream((unsigned)(200 + i));
        atomic_store_explicit(&R.w[i].in, -1, memory_order_relaxed);
        t[np + na + i] = test_thread_start(plain_main, &R.w[i]);
    }
    for (int i = 0; i < np; i++) {
        R.p[i].rng = test_stream((unsigned)i);
        t[i] = test_thread_start(poster_main, &R.p[i]);
    }
    for (int i = 0; i < np; i++) test_thread_join(t[i]);
    /* The posters are done: END for the wait_any takers (every untimed one lists it). */
    atomic_store(&R.end_set, true);
    fastsync_event_set(&R.end);
    for (int i = 0; i < na; i++) test_thread_join(t[np + i]);
    /* Then the plain takers: stop, and a token for each semaphore with a registered waiter
     * and none left, until all are out. A taker that takes one of these synchronizes with its
     * post, so it sees `stop`; one in a timed wait or trywait sees it soon. (A token beside a
     * registered waiter is that waiter's, its wake made: a lost one is not covered up here
     * but left to the watchdog.) */
    /* relaxed: sequenced before the posts below, whose release carries it (see above). */
    atomic_store_explicit(&R.stop, true, memory_order_relaxed);
    unsigned long final_posts[NS] = { 0 }, final_total = 0;
    int final_bad = 0;
    while (atomic_load(&R.plain_alive) > 0) {
        for (int k = 0; k < NS; k++)
            if (test_sem_waiters(&R.s[k]) > 0 && fastsync_sem_getvalue(&R.s[k]) == 0) {
                final_bad |= fastsync_sem_post(&R.s[k]);
                final_posts[k]++;
                final_total++;
            }
        test_sleep_ns(50000);
    }
    for (int i = 0; i < nw; i++) test_thread_join(t[np + na + i]);
    test_watchdog_stop();

    unsigned long posted[NS] = { 0 }, taken_any[NS] = { 0 }, taken_plain[NS] = { 0 }, by[BY_KINDS] = { 0 },
                  pl_by[PL_KINDS] = { 0 }, by_index[NOBJ] = { 0 }, timeouts = 0, eagain = 0, bad = 0,
                  early_end = 0, ended = 0, any_total = 0, plain_total = 0, posted_total = 0;
    int bad_code = 0;
    for (int i = 0; i < np; i++) {
        for (int k = 0; k < NS; k++) posted[k] += R.p[i].posted[k];
        bad += R.p[i].bad;
        if (R.p[i].bad) bad_code = R.p[i].bad_code;
    }
    for (int i = 0; i < na; i++) {
        struct any_taker *a = &R.a[i];
        for (int k = 0; k < NS; k++) taken_any[k] += a->taken[k];
        for (int b = 0; b < BY_KINDS; b++) by[b] += a->by[b];
        for (int j = 0; j < NOBJ; j++) by_index[j] += a->by_index[j];
        timeouts += a->timeouts;
        eagain += a->eagain;
        early_end += a->early_end;
        ended += a->ended;
        bad += a->bad;
        if (a->bad) bad_code = a->bad_code;
    }
    for (int i = 0; i < nw; i++) {
        struct plain_taker *w = &R.w[i];
        for (int k = 0; k < NS; k++) taken_plain[k] += w->taken[k];
        for (int b = 0; b < PL_KINDS; b++) pl_by[b] += w->by[b];
        timeouts += w->timeouts;
        eagain += w->eagain;
        bad += w->bad;
        if (w->bad) bad_code = w->bad_code;
    }
    for (int k = 0; k < NS; k++) {
        posted_total += posted[k];
        any_total += taken_any[k];
        plain_total += taken_plain[k];
    }
    diag("%s, %dp/%da/%dw: %lu tokens posted (+%lu at the end); wait_any took %lu (%s %lu, %s %lu, %s %lu, "
         "%s %lu; by index %lu/%lu/%lu/%lu, END included), plain waits %lu (%s %lu, %s %lu, %s %lu); %lu "
         "ETIMEDOUT, %lu EAGAIN; %lu multi-waits, %lu futex waits, %lu wakes",
         name, np, na, nw, posted_total, final_total, any_total, by_name[0], by[0], by_name[1], by[1], by_name[2],
         by[2], by_name[3], by[3], by_index[0], by_index[1], by_index[2], by_index[3], plain_total, pl_name[0],
         pl_by[0], pl_name[1], pl_by[1], pl_name[2], pl_by[2], timeouts, eagain,
         atomic_load(&test_waitvs_made) - waitvs0, test_kernel_waits() - waits0, test_kernel_wakes() - wakes0);
    ok(any_total > 0 && plain_total > 0, "%s, %dp/%da/%dw: tokens went to wait_any and to plain waits", name, np,
       na, nw);
    for (int k = 0; k < NS; k++) {
        unsigned value = fastsync_sem_getvalue(&R.s[k]);
        if (!is_int(taken_any[k] + taken_plain[k] + value, R.initial[k] + posted[k] + final_posts[k],
                    "%s, %dp/%da/%dw: sem %d: wait_any + plain takes + final value == initial + posted", name,
                    np, na, nw, k))
            diag("  sem %d: initial %u, posted %lu + %lu, wait_any took %lu, plain %lu, value %u", k,
                 R.initial[k], posted[k], final_posts[k], taken_any[k], taken_plain[k], value);
        is_int(fastsync_sem_destroy(&R.s[k]), 0, "%s, %dp/%da/%dw: sem %d: no waiter left registered", name, np,
               na, nw, k);
    }
    is_int(ended, na, "%s, %dp/%da/%dw: every wait_any taker saw END", name, np, na, nw);
    is_int(early_end, 0, "%s, %dp/%da/%dw: END never won before it was set", name, np, na, nw);
    is_int(final_bad, 0, "%s, %dp/%da/%dw: the final posts returned 0", name, np, na, nw);
    if (!is_int(bad, 0, "%s, %dp/%da/%dw: only the expected return codes", name, np, na, nw))
        diag("  last unexpected code: %d", bad_code);
    free(t);
    free(R.p);
    free(R.a);
    free(R.w);
    R.p = NULL;
    R.a = NULL;
    R.w = NULL;
    R.np = R.na = R.nw = 0;
}

int main(void)
{
    test_init();
    int n = test_ncpu();
    run("spread", false, 2, 2, 2, 150);
    run("pinned", true, 2, 3, 2, 150);
    run("spread", false, n, 2 * n > 4 ? 2 * n : 4, n > 2 ? n : 2, 150); /* more threads than CPUs */
    run("pinned", true, 2, 4, 4, 150);
    test_pin_all(false);
    return done_testing();
}
