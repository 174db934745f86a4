/* SPDX-License-Identifier: MIT */
/* signal_handler_calls: the calls the manual's async-signal-safety table allows, made from a
 * SIGUSR1 handler, per backend as the table says: on Linux every call of the table, with
 * threads asleep on the objects; on the POSIX backend only the calls it says are always safe,
 * and those it says are safe when they make no wake, with that condition met.
 *   0. The table in fastsync.h's manual (the path is the test's argument) and this test's
 *      list, `rows` below, agree call for call and verdict for verdict: a call added to one
 *      and not the other, or a verdict changed in one, fails here.
 *   1. (Linux) The handler interrupts a thread asleep in a wait and ends that very wait: post
 *      (sem_wait), event_set (event_wait), cond_signal (cond_await on a ticket),
 *      latch_count_down (latch_wait), wake32 (wait32), with and without SA_RESTART. The wait
 *      returns 0, the token is taken once, nothing is left registered.
 *   2. A storm of signals at a thread that uses the same objects in a loop, its handler
 *      making every call the backend's column allows between any two of its instructions:
 *      on Linux while five threads sleep on those objects (a consumer that takes K tokens;
 *      an event, a ticket and a word waiter that each wait until the handler has set,
 *      signalled or woken K times; a latch waiter that adds 1 and waits for the handler's
 *      opening until the handler has run K times); on the POSIX backend with no waiter on
 *      them (the condition), while the thread the signals land in also sleeps and wakes in
 *      the table's bucket of every one of them. Exact total: the semaphore's final value is
 *      every token posted minus every token taken; each call returned what it should and
 *      kept errno; none blocked (else the watchdog fails it).
 *   3. (POSIX backend) The handler runs while its thread holds the table's lock of the
 *      bucket of every object it touches: raised from inside that thread's timed wait on a
 *      word of that bucket, through the table's sleep hook (FASTSYNC__POSIX_TIMEDWAIT; the
 *      hook's trylock of the lock says EBUSY). Each object is at the edge of its condition:
 *      a semaphore and a latch nobody waits on (the latch opened by the handler's
 *      count_down), a reset event nobody marked (the handler's set changes it), a
 *      condition variable with a registered ticket that has had its signal. Every call
 *      returns; a call that woke would lock the bucket again and never return (the handler
 *      not back after 5 s bails: issue 32, item 3, where count_down's wake deadlocked so).
 *   Each call of the table was made by the handlers at least once where the backend's
 *   column allows it, and never where it does not.
 * Windows (no signals) and OS/2 (none claimed) do not build it (meson.build, os2/meson.build);
 * it is built for the POSIX backend on every Linux build too (signal_handler_calls_posix). */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#if defined(FASTSYNC_BACKEND_POSIX)
/* part 3's window: the table's timed sleep, entered with the bucket's lock held */
static int in_lock_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
#define FASTSYNC__POSIX_TIMEDWAIT in_lock_timedwait
#define TEST_IN_LOCK 1
#endif
#include "harness.h"

/* ---- the manual's table, as this test knows it ---- */
enum { NEVER, ALWAYS, WHEN }; /* a backend's verdict: never, always, or when it makes no wake */
enum {
    R_SEM_INIT, R_SEM_DESTROY, R_SEM_TRYWAIT, R_SEM_GETVALUE, R_SEM_POST, R_SEM_POST_N,
    R_EVENT_INIT, R_EVENT_DESTROY, R_EVENT_RESET, R_EVENT_IS_SET, R_EVENT_SET,
    R_COND_INIT, R_COND_DESTROY, R_COND_SIGNAL, R_COND_BROADCAST,
    R_LATCH_INIT, R_LATCH_DESTROY, R_LATCH_ADD, R_LATCH_TRYWAIT, R_LATCH_COUNT_DOWN,
    R_DEADLINE_IN, R_WAKE32, R_WAKE32_ALL, NROWS
};
static const struct row {
    const char *name; /* without the prefix fastsync_ */
    int on_linux, on_posix;
} rows[NROWS] = {
    { "sem_init", ALWAYS, ALWAYS },         { "sem_destroy", ALWAYS, ALWAYS },
    { "sem_trywait", ALWAYS, ALWAYS },      { "sem_getvalue", ALWAYS, ALWAYS },
    { "sem_post", ALWAYS, WHEN },           { "sem_post_n", ALWAYS, WHEN },
    { "event_init", ALWAYS, ALWAYS },       { "event_destroy", ALWAYS, ALWAYS },
    { "event_reset", ALWAYS, ALWAYS },      { "event_is_set", ALWAYS, ALWAYS },
    { "event_set", ALWAYS, WHEN },          { "cond_init", ALWAYS, ALWAYS },
    { "cond_destroy", ALWAYS, WHEN },       { "cond_signal", ALWAYS, WHEN },
    { "cond_broadcast", ALWAYS, WHEN },     { "latch_init", ALWAYS, ALWAYS },
    { "latch_destroy", ALWAYS, WHEN },      { "latch_add", ALWAYS, ALWAYS },
    { "latch_trywait", ALWAYS, ALWAYS },    { "latch_count_down", ALWAYS, WHEN },
    { "deadline_in", ALWAYS, ALWAYS },      { "wake32", ALWAYS, NEVER },
    { "wake32_all", ALWAYS, NEVER },
};

/* This backend's verdict for row r (every call NEVER where the manual claims none). */
static int verdict(int r)
{
#if defined(FASTSYNC_BACKEND_LINUX)
    return rows[r].on_linux;
#elif defined(FASTSYNC_BACKEND_POSIX)
    return rows[r].on_posix;
#else
    (void)r;
    return NEVER;
#endif
}

/* relaxed: counts read after the threads are joined */
static _Atomic(unsigned long) row_calls[NROWS];

/* Whether the handler may make the call of row r here, counting it if so (the scenes meet
 * every WHEN row's condition: on the POSIX backend nobody waits on the handler's objects). */
static bool use(int r)
{
    if (verdict(r) == NEVER) return false;
    atomic_fetch_add_explicit(&row_calls[r], 1, memory_order_relaxed);
    return true;
}

/* A verdict as the manual writes it: linux "yes"/"no"; posix "always", "never" or the
 * condition under which the call is safe. */
static int parse_verdict(const char *s, bool linux_column)
{
    if (linux_column) return strncmp(s, "yes", 3) == 0 ? ALWAYS : strncmp(s, "no", 2) == 0 ? NEVER : -1;
    if (strncmp(s, "always", 6) == 0) return ALWAYS;
    if (strncmp(s, "never", 5) == 0) return NEVER;
    return WHEN;
}

/* Splits a table line (after " * ") at runs of two or more spaces: up to 3 fields. */
static int split_fields(char *line, char *field[3])
{
    int n = 0;
    char *p = line;
    while (*p == ' ') p++;
    while (*p && *p != '\n' && n < 3) {
        field[n++] = p;
        char *end = strstr(p, "  ");
        char *nl = strchr(p, '\n');
        if (nl != NULL && (end == NULL || nl < end)) end = nl;
        if (end == NULL) break;
        *end = '\0';
        p = end + 1;
        while (*p == ' ') p++;
    }
    return n;
}

/* Part 0: the manual's table (in the header at `path`) against `rows`. */
static void table_agrees(const char *path)
{
    FILE *f = path != NULL ? fopen(path, "r") : NULL;
    if (f == NULL) {
        skip("no path to fastsync.h given, or not readable", "the manual's table and this test's list agree");
        return;
    }
    char line[256];
    bool in_table = false, seen[NROWS] = { false };
    int linux_v = -1, posix_v = -1, named = 0, mismatches = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (!in_table) {
            in_table = strstr(line, " * Async-signal-safety:") == line;
            continue;
        }
        if (strstr(line, "call (prefix fastsync_)") != NULL) continue; /* the heading */
        if (strncmp(line, " *     ", 7) != 0) {
            if (named > 0) break; /* the row lines are over */
            continue;             /* the paragraph before the table */
        }
        const char *body = line + 3; /* after " * " */
        size_t indent = strspn(body, " ");
        char *field[3] = { NULL, NULL, NULL };
        if (indent > 8) continue; /* a condition's second line */
        int n = split_fields(line + 3, field);
        if (indent == 4) { /* a row: names, linux, posix */
            if (n != 3) {
                diag("  manual: a row without three columns: %s", line);
                mismatches++;
                continue;
            }
            linux_v = parse_verdict(field[1], true);
            posix_v = parse_verdict(field[2], false);
        }
        /* the names of this row (its first line, or a line of more names) */
        for (char *name = strtok(field[0], ", "); name != NULL; name = strtok(NULL, ", ")) {
            int r = 0;
            while (r < NROWS && strcmp(rows[r].name, name) != 0) r++;
            named++;
            if (r == NROWS) {
                diag("  manual names %s, which this test's list has not", name);
                mismatches++;
            } else if (rows[r].on_linux != linux_v || rows[r].on_posix != posix_v) {
                diag("  %s: the manual says linux %d, posix %d; this test's list %d, %d (0 never, 1 always, 2 when)",
                     name, linux_v, posix_v, rows[r].on_linux, rows[r].on_posix);
                mismatches++;
            } else {
                seen[r] = true;
            }
        }
    }
    fclose(f);
    for (int r = 0; r < NROWS; r++)
        if (!seen[r]) {
            diag("  this test's list has %s, which the manual's table has not (as listed)", rows[r].name);
            mismatches++;
        }
    ok(named > 0 && mismatches == 0,
       "the manual's async-signal-safety table and this test's list agree (%d calls, %d mismatches)", named,
       mismatches);
}

static struct test_storm storm;
static int verdict_k; /* part 2 on Linux: what each waiter waits for; elsewhere the handler's runs */

/* ---- the handler's objects: on the POSIX backend all in one bucket of the table, with a
 * word of that bucket for the table's traffic (parts 2 and 3) ---- */
static fastsync_sem_t sem_pool[128];
static fastsync_event_t event_pool[256];
static fastsync_cond_t cond_pool[128];
static fastsync_latch_t latch_pool[256];
static fastsync_word32_t word_pool[256];
static fastsync_sem_t *s;
static fastsync_event_t *e;
static fastsync_cond_t *c;
static fastsync_latch_t *L;
static fastsync_word32_t *wt; /* the table's traffic (POSIX) */
static fastsync_word32_t wh;  /* the handler's word (Linux: a waiter sleeps on it) */

/* The table's bucket of the words of the object at p (the hash ignores the address's low 3
 * bits: every word in the 8-aligned 8 bytes at p shares it). */
static unsigned long bucket(const void *p)
{
#if defined(FASTSYNC_BACKEND_POSIX)
    return (unsigned long)fastsync__addr_hash((uintptr_t)p, FASTSYNC__TABLE_SIZE);
#else
    (void)p;
    return 0;
#endif
}

/* The first of n objects of `size` bytes at base whose bucket is b. */
static void *in_bucket(void *base, size_t size, int n, unsigned long b)
{
    for (int i = 0; i < n; i++)
        if (bucket((char *)base + (size_t)i * size) == b) return (char *)base + (size_t)i * size;
    bail("no object of %zu bytes in bucket %lu among %d", size, b, n);
    return NULL;
}

static void pick_objects(void)
{
    s = &sem_pool[0];
    unsigned long b = bucket(s);
    e = (fastsync_event_t *)in_bucket(event_pool, sizeof event_pool[0], 256, b);
    c = (fastsync_cond_t *)in_bucket(cond_pool, sizeof cond_pool[0], 128, b);
    L = (fastsync_latch_t *)in_bucket(latch_pool, sizeof latch_pool[0], 256, b);
    wt = (fastsync_word32_t *)in_bucket(word_pool, sizeof word_pool[0], 256, b);
}

#if defined(FASTSYNC_BACKEND_LINUX)
/* ---- 1. the handler ends the wait it interrupts (Linux) ---- */
enum { ONE_SEM, ONE_EVENT, ONE_COND, ONE_LATCH, ONE_WORD, ONE_KINDS };
static const char *const one_name[] = { "post ends sem_wait", "event_set ends event_wait",
                                        "cond_signal ends cond_await", "latch_count_down ends latch_wait",
                                        "wake32 ends wait32" };
static int one_kind;
static fastsync_sem_t s1;
static fastsync_event_t e1;
static fastsync_cond_t c1;
static fastsync_cond_ticket_t t1;
static fastsync_latch_t l1;
static fastsync_word32_t w1;
static _Atomic(int) one_ret;        /* what the handler's call returned */
static _Atomic(bool) one_returned;  /* the waiter's wait has returned */
static _Atomic(int) one_tid;        /* the waiter's thread, for /proc */

static void one_action(void)
{
    int r = 0;
    if (one_kind == ONE_SEM) r = fastsync_sem_post(&s1);
    else if (one_kind == ONE_EVENT) fastsync_event_set(&e1);
    else if (one_kind == ONE_COND) r = fastsync_cond_signal(&c1);
    else if (one_kind == ONE_LATCH) r = fastsync_latch_count_down(&l1, 1);
    else {
        /* relaxed: the wake after it (the seam's contract: a store then a wake is never lost) */
        fastsync__store(&w1, 1u, memory_order_relaxed);
        r = fastsync_wake32(&w1, 1, 0);
    }
    /* relaxed: read after the waiter is joined */
    atomic_store_explicit(&one_ret, r, memory_order_relaxed);
}

static void *one_waiter(void *arg)
{
    int *result = (int *)arg;
    *result = 0;
    /* relaxed: an id main polls for; the join orders the rest */
    atomic_store_explicit(&one_tid, test_tid(), memory_order_relaxed);
    if (one_kind == ONE_SEM) *result = fastsync_sem_wait(&s1);
    else if (one_kind == ONE_EVENT) fastsync_event_wait(&e1);
    else if (one_kind == ONE_COND) *result = fastsync_cond_await(&c1, &t1);
    else if (one_kind == ONE_LATCH) *result = fastsync_latch_wait(&l1);
    else /* relaxed: the load only decides whether to wait again (a loop, as the contract's) */
        while (fastsync__load(&w1, memory_order_relaxed) == 0) *result |= fastsync_wait32(&w1, 0, 0);
    /* relaxed: a flag main polls; the join orders the result */
    atomic_store_explicit(&one_returned, true, memory_order_relaxed);
    return NULL;
}

static void one_dump(void *unused)
{
    (void)unused;
    test_dump_sem("s1", &s1);
    test_dump_event("e1", &e1);
    test_dump_cond("c1", &c1);
    test_dump_latch("l1", &l1);
    diag("signals caught %lu, handler's call returned %d", test_storm_caught(),
         atomic_load_explicit(&one_ret, memory_order_relaxed)); /* relaxed: a dump */
}

static void one_case(int kind, bool restart)
{
    const char *what = one_name[kind], *sa = restart ? "SA_RESTART" : "no SA_RESTART";
    one_kind = kind;
    fastsync_sem_init(&s1, 0, 0);
    fastsync_event_init(&e1, false, 0);
    fastsync_cond_init(&c1, 0);
    fastsync_latch_init(&l1, 1, 0);
    fastsync__store(&w1, 0u, memory_order_relaxed); /* relaxed: before the threads start */
    if (kind == ONE_COND) fastsync_cond_register(&c1, &t1);
    /* relaxed: before the threads start */
    atomic_store_explicit(&one_ret, -1, memory_order_relaxed);
    atomic_store_explicit(&one_returned, false, memory_order_relaxed);
    atomic_store_explicit(&one_tid, 0, memory_order_relaxed);
    test_storm_action = one_action;
    test_storm_init(&storm, restart);
    unsigned long caught0 = test_storm_caught(), waits0 = test_kernel_waits();

    test_watchdog_start(one_dump, NULL);
    int result = -1;
    pthread_t w = test_thread_start(one_waiter, &result);
    /* until it has made its first kernel wait and reads asleep in /proc (where there is no
     * /proc: after a settle of 20 ms) */
    uint64_t end = test_limit_end(5000);
    while (test_kernel_waits() == waits0 && test_box_open(end)) test_sleep_ns(100000);
    bool asleep = test_until_asleep(atomic_load_explicit(&one_tid, memory_order_relaxed), 20000000);
    /* relaxed: a poll */
    bool early = atomic_load_explicit(&one_returned, memory_order_relaxed);
    int kr = pthread_kill(w, SIGUSR1);
    test_thread_join(w);
    test_watchdog_stop();

    ok(test_kernel_waits() > waits0 && asleep && !early, "%s, %s: the waiter slept until the signal", what, sa);
    is_int(kr, 0, "%s, %s: pthread_kill", what, sa);
    ok(test_storm_caught() - caught0 == 1, "%s, %s: the handler ran once in the waiter (%lu)", what, sa,
       test_storm_caught() - caught0);
    is_int(atomic_load_explicit(&one_ret, memory_order_relaxed), 0, "%s, %s: the handler's call returned 0", what, sa);
    is_int(result, 0, "%s, %s: the interrupted wait returned 0", what, sa);
    if (kind == ONE_SEM) is_int((int)fastsync_sem_getvalue(&s1), 0, "%s, %s: the token taken once", what, sa);
    if (kind == ONE_EVENT) ok(fastsync_event_is_set(&e1), "%s, %s: the event is set", what, sa);
    ok(fastsync_sem_destroy(&s1) == 0 && fastsync_event_destroy(&e1) == 0 && fastsync_cond_destroy(&c1) == 0 &&
           fastsync_latch_destroy(&l1) == 0,
       "%s, %s: nothing left registered", what, sa);
    test_storm_action = NULL;
}
#endif

/* ---- 2. a storm at a thread that uses the same objects; 3. the handler inside the lock ---- */
/* relaxed (all): counts and flags, polled, or read after the threads are joined (the joins
 * order them); the objects' own calls order what the waiters conclude. */
static _Atomic(unsigned long) h_runs, h_done, h_posted, h_taken, h_sets, h_signals, h_opened, h_woke;
static _Atomic(unsigned long) h_bad_errno, h_bad_ret;
static _Atomic(unsigned long) w_posted, w_taken, w_rounds, w_added;
static _Atomic(bool) stop_worker;
static _Atomic(int) waiters_done;

static void count(_Atomic(unsigned long) *n, unsigned long v) { atomic_fetch_add_explicit(n, v, memory_order_relaxed); }
static unsigned long get(_Atomic(unsigned long) *n) { return atomic_load_explicit(n, memory_order_relaxed); }

/* Each call the handler makes, by the bit it sets in h_bad_ret when it returns what it
 * should not. */
enum { BAD_POST, BAD_POST_N, BAD_GETVALUE, BAD_SIGNAL, BAD_DEADLINE, BAD_OWN_INIT, BAD_OWN_TRYWAIT,
       BAD_OWN_DESTROY, BAD_OWN_EVENT, BAD_OWN_COND, BAD_LATCH, BAD_OWN_LATCH, BAD_WAKE };

/* The handler: every call the backend's column allows, on the shared objects and on objects
 * of its own (those rows' calls need no other thread). */
static void storm_action(void)
{
    errno = EILSEQ; /* no call may change it */
    unsigned long r = atomic_fetch_add_explicit(&h_runs, 1, memory_order_relaxed);
    unsigned long bad = 0;
    if (use(R_SEM_POST)) {
        if (fastsync_sem_post(s) != 0) bad |= 1u << BAD_POST;
        count(&h_posted, 1);
    }
    if (use(R_SEM_POST_N)) {
        if (fastsync_sem_post_n(s, 2) != 0) bad |= 1u << BAD_POST_N;
        count(&h_posted, 2);
    }
    if (r % 5 == 0 && use(R_SEM_TRYWAIT) && fastsync_sem_trywait(s) == 0) count(&h_taken, 1);
    if (use(R_SEM_GETVALUE) && fastsync_sem_getvalue(s) > FASTSYNC_SEM_VALUE_MAX) bad |= 1u << BAD_GETVALUE;
    if (use(R_EVENT_SET)) {
        count(&h_sets, 1); /* counted before the set: the event waiter reads it after its reset */
        fastsync_event_set(e);
    }
    if (use(R_EVENT_IS_SET)) (void)fastsync_event_is_set(e); /* (either answer: the event waiter resets it) */
    if (use(R_COND_SIGNAL)) {
        count(&h_signals, 1); /* counted before the signal: the ticket waiter reads it registered */
        if (fastsync_cond_signal(c) != 0) bad |= 1u << BAD_SIGNAL;
    }
    if (use(R_COND_BROADCAST)) {
        count(&h_signals, 1);
        if (fastsync_cond_broadcast(c) != 0) bad |= 1u << BAD_SIGNAL;
    }
    if (use(R_LATCH_COUNT_DOWN)) { /* EINVAL: the latch open already (nothing changed) */
        int x = fastsync_latch_count_down(L, 1);
        if (x == 0) count(&h_opened, 1);
        else if (x != EINVAL) bad |= 1u << BAD_LATCH;
    }
    if (use(R_LATCH_TRYWAIT)) {
        int x = fastsync_latch_trywait(L);
        if (x != 0 && x != EAGAIN) bad |= 1u << BAD_LATCH;
    }
    if (use(R_WAKE32)) {
        /* relaxed: the wake after it carries it (a store then a wake is never lost) */
        (void)fastsync__fetch_add(&wh, 1u, memory_order_relaxed);
        count(&h_woke, 1);
        if (fastsync_wake32(&wh, 1, 0) != 0) bad |= 1u << BAD_WAKE;
    }
    if (use(R_WAKE32_ALL)) {
        (void)fastsync__fetch_add(&wh, 1u, memory_order_relaxed); /* relaxed: as above */
        count(&h_woke, 1);
        if (fastsync_wake32_all(&wh, 0) != 0) bad |= 1u << BAD_WAKE;
    }
    if (use(R_DEADLINE_IN)) {
        struct timespec d = fastsync_deadline_in(1000000);
        if (d.tv_nsec < 0 || d.tv_nsec >= 1000000000) bad |= 1u << BAD_DEADLINE;
    }
    fastsync_sem_t own;
    if (use(R_SEM_INIT) && fastsync_sem_init(&own, 1, 0) != 0) bad |= 1u << BAD_OWN_INIT;
    if (use(R_SEM_TRYWAIT) && fastsync_sem_trywait(&own) != 0) bad |= 1u << BAD_OWN_TRYWAIT;
    if (use(R_SEM_DESTROY) && fastsync_sem_destroy(&own) != 0) bad |= 1u << BAD_OWN_DESTROY;
    fastsync_event_t own_e; /* reset: on an event of its own (on e it would hide a set from the waiter) */
    if (use(R_EVENT_INIT) && fastsync_event_init(&own_e, true, 0) != 0) bad |= 1u << BAD_OWN_EVENT;
    if (use(R_EVENT_RESET)) fastsync_event_reset(&own_e);
    if (use(R_EVENT_IS_SET) && fastsync_event_is_set(&own_e)) bad |= 1u << BAD_OWN_EVENT;
    if (use(R_EVENT_DESTROY) && fastsync_event_destroy(&own_e) != 0) bad |= 1u << BAD_OWN_EVENT;
    fastsync_cond_t own_c; /* nothing registered: destroy says 0 at once */
    if (use(R_COND_INIT) && fastsync_cond_init(&own_c, 0) != 0) bad |= 1u << BAD_OWN_COND;
    if (use(R_COND_SIGNAL) && fastsync_cond_signal(&own_c) != 0) bad |= 1u << BAD_OWN_COND;
    if (use(R_COND_DESTROY) && fastsync_cond_destroy(&own_c) != 0) bad |= 1u << BAD_OWN_COND;
    fastsync_latch_t own_l; /* nobody waits: the count_down that opens it makes no wake */
    if (use(R_LATCH_INIT) && fastsync_latch_init(&own_l, 2, 0) != 0) bad |= 1u << BAD_OWN_LATCH;
    if (use(R_LATCH_ADD) && fastsync_latch_add(&own_l, 1) != 0) bad |= 1u << BAD_OWN_LATCH;
    if (use(R_LATCH_TRYWAIT) && fastsync_latch_trywait(&own_l) != EAGAIN) bad |= 1u << BAD_OWN_LATCH;
    if (use(R_LATCH_COUNT_DOWN) && fastsync_latch_count_down(&own_l, 3) != 0) bad |= 1u << BAD_OWN_LATCH;
    if (use(R_LATCH_TRYWAIT) && fastsync_latch_trywait(&own_l) != 0) bad |= 1u << BAD_OWN_LATCH;
    if (use(R_LATCH_DESTROY) && fastsync_latch_destroy(&own_l) != 0) bad |= 1u << BAD_OWN_LATCH;
    if (bad) atomic_fetch_or_explicit(&h_bad_ret, bad, memory_order_relaxed);
    if (errno != EILSEQ) count(&h_bad_errno, 1);
    count(&h_done, 1);
}

/* The thread the signals land in: the same objects, from outside a handler; on the POSIX
 * backend also a sleep and a wake in their bucket of the table each round, so that signals
 * land while it holds that bucket's lock (and inside the C library's lock and sleep). */
static void *worker(void *unused)
{
    (void)unused;
    unsigned long n = 0;
    while (!atomic_load_explicit(&stop_worker, memory_order_relaxed)) {
        if (fastsync_sem_post(s) == 0) count(&w_posted, 1);
        if (fastsync_sem_trywait(s) == 0) count(&w_taken, 1);
        (void)fastsync_latch_trywait(L);
#if defined(FASTSYNC_BACKEND_POSIX)
        /* nobody waits on L here: the worker opens it again for the handler's count_down */
        if (fastsync_latch_trywait(L) == 0 && fastsync_latch_add(L, 1) == 0) count(&w_added, 1);
        struct timespec d = fastsync_deadline_in(20000);
        (void)fastsync_timedwait32(wt, 0, 0, &d);
        (void)fastsync_wake32(wt, 1, 0);
#endif
        if (n % 16 == 0) {
            fastsync_event_set(e);
            fastsync_cond_signal(c);
        }
        /* now and then an intercepted call: ThreadSanitizer runs a handler only at one */
        if (++n % 64 == 0) test_sleep_ns(1000);
        atomic_store_explicit(&w_rounds, n, memory_order_relaxed);
    }
    return NULL;
}

static void *consumer(void *unused)
{
    (void)unused;
    for (int i = 0; i < verdict_k; i++)
        if (fastsync_sem_wait(s) != 0) bail("sem_wait failed");
    atomic_fetch_add_explicit(&waiters_done, 1, memory_order_relaxed);
    return NULL;
}

static void *event_waiter(void *unused)
{
    (void)unused;
    for (;;) {
        fastsync_event_reset(e);
        if (get(&h_sets) >= (unsigned long)verdict_k) break;
        fastsync_event_wait(e);
    }
    atomic_fetch_add_explicit(&waiters_done, 1, memory_order_relaxed);
    return NULL;
}

static void *ticket_waiter(void *unused)
{
    (void)unused;
    fastsync_cond_ticket_t t;
    for (;;) {
        fastsync_cond_register(c, &t);
        if (get(&h_signals) >= (unsigned long)verdict_k) {
            fastsync_cond_cancel(c, &t);
            break;
        }
        if (fastsync_cond_await(c, &t) != 0) bail("cond_await failed");
    }
    atomic_fetch_add_explicit(&waiters_done, 1, memory_order_relaxed);
    return NULL;
}

/* A wait group of one: adds 1 and waits until the handler's count_down opens it, until the
 * handler has run K times (as the event waiter: its openings need the waiter's own adds, so
 * K of them could need many more runs on a starved machine). */
static void *latch_waiter(void *unused)
{
    (void)unused;
    while (get(&h_runs) < (unsigned long)verdict_k) {
        if (fastsync_latch_add(L, 1) != 0) bail("latch_add failed");
        count(&w_added, 1);
        if (fastsync_latch_wait(L) != 0) bail("latch_wait failed");
    }
    atomic_fetch_add_explicit(&waiters_done, 1, memory_order_relaxed);
    return NULL;
}

/* Waits on the handler's word until it has counted to K (a loop, as the contract's). */
static void *word_waiter(void *unused)
{
    (void)unused;
    uint32_t v;
    /* relaxed: nothing is published through the word; the loads only decide whether to wait */
    while ((v = fastsync__load(&wh, memory_order_relaxed)) < (uint32_t)verdict_k) (void)fastsync_wait32(&wh, v, 0);
    atomic_fetch_add_explicit(&waiters_done, 1, memory_order_relaxed);
    return NULL;
}

static void storm_dump(void *unused)
{
    (void)unused;
    test_dump_sem("s", s);
    test_dump_event("e", e);
    test_dump_cond("c", c);
    test_dump_latch("L", L);
    test_storm_dump(&storm);
    diag("handler: %lu runs, %lu done, %lu posted, %lu taken, %lu sets, %lu signals, %lu opened, %lu woke; "
         "worker: %lu rounds, %lu posted, %lu taken; adds %lu; waiters done %d",
         get(&h_runs), get(&h_done), get(&h_posted), get(&h_taken), get(&h_sets), get(&h_signals), get(&h_opened),
         get(&h_woke), get(&w_rounds), get(&w_posted), get(&w_taken), get(&w_added),
         atomic_load_explicit(&waiters_done, memory_order_relaxed));
}

/* The objects and counts as a storm or part 3 starts them. */
static void reset_scene(unsigned latch_count)
{
    fastsync_sem_init(s, 0, 0);
    fastsync_event_init(e, false, 0);
    fastsync_cond_init(c, 0);
    fastsync_latch_init(L, latch_count, 0);
    /* relaxed: before the threads start */
    fastsync__store(&wh, 0u, memory_order_relaxed);
    fastsync__store(wt, 0u, memory_order_relaxed);
    _Atomic(unsigned long) *all[] = { &h_runs, &h_done, &h_posted, &h_taken, &h_sets, &h_signals, &h_opened,
                                      &h_woke, &h_bad_errno, &h_bad_ret, &w_posted, &w_taken, &w_rounds,
                                      &w_added };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) atomic_store_explicit(all[i], 0, memory_order_relaxed);
    atomic_store_explicit(&stop_worker, false, memory_order_relaxed);
    atomic_store_explicit(&waiters_done, 0, memory_order_relaxed);
}

static void storm_case(bool restart)
{
    const char *sa = restart ? "SA_RESTART" : "no SA_RESTART";
    reset_scene(0);
    test_storm_action = storm_action;
    test_storm_init(&storm, restart);

    test_watchdog_start(storm_dump, NULL);
    pthread_t w = test_thread_start(worker, NULL);
#if defined(FASTSYNC_BACKEND_LINUX)
    enum { NWAITERS = 5 };
    pthread_t waiters[NWAITERS] = { test_thread_start(consumer, NULL), test_thread_start(event_waiter, NULL),
                                    test_thread_start(ticket_waiter, NULL), test_thread_start(latch_waiter, NULL),
                                    test_thread_start(word_waiter, NULL) };
    test_storm_start(&storm, w);
    while (atomic_load_explicit(&waiters_done, memory_order_relaxed) < NWAITERS) test_sleep_ns(1000000);
#else
    enum { NWAITERS = 0 };
    pthread_t *waiters = NULL;
    (void)consumer, (void)event_waiter, (void)ticket_waiter, (void)latch_waiter, (void)word_waiter;
    test_storm_start(&storm, w);
    /* no waiter on the handler's objects (the POSIX column's condition): K runs of the handler */
    while (get(&h_done) < (unsigned long)verdict_k) test_sleep_ns(1000000);
#endif
    test_storm_stop(&storm);
    atomic_store_explicit(&stop_worker, true, memory_order_relaxed);
    test_thread_join(w);
    for (int i = 0; i < NWAITERS; i++) test_thread_join(waiters[i]);
    test_watchdog_stop();
    test_storm_action = NULL;

    diag("storm, %s: %lu signals sent, handler ran %lu times (posted %lu, took %lu, opened %lu, woke %lu); "
         "worker %lu rounds (posted %lu, took %lu)",
         sa, test_storm_sent(&storm), get(&h_runs), get(&h_posted), get(&h_taken), get(&h_opened), get(&h_woke),
         get(&w_rounds), get(&w_posted), get(&w_taken));
    ok(get(&h_done) >= (unsigned long)verdict_k && get(&h_done) == get(&h_runs),
       "storm, %s: the handler ran at least %d times, and returned every time", sa, verdict_k);
    long consumed = NWAITERS > 0 ? verdict_k : 0;
    long expect = (long)(get(&w_posted) + get(&h_posted)) - (long)(get(&w_taken) + get(&h_taken)) - consumed;
    is_int((int)fastsync_sem_getvalue(s), (int)expect, "storm, %s: value = posted - taken, to the token", sa);
    ok(get(&h_bad_ret) == 0, "storm, %s: every call in the handler returned what it should (failed: mask %#lx)", sa,
       get(&h_bad_ret));
    is_int((int)get(&h_bad_errno), 0, "storm, %s: no call in the handler changed errno", sa);
    ok(fastsync_sem_destroy(s) == 0 && fastsync_event_destroy(e) == 0 && fastsync_cond_destroy(c) == 0 &&
           fastsync_latch_destroy(L) == 0,
       "storm, %s: nothing left registered", sa);
}

#if defined(TEST_IN_LOCK)
/* ---- 3. the handler inside the lock of its objects' bucket (POSIX backend) ---- */
static _Thread_local bool in_lock_armed;   /* this thread raises at its next timed sleep */
static pthread_mutex_t *in_lock_mutex;     /* the lock held there (read after the join) */
static int in_lock_trylock = -1;           /* its trylock there: EBUSY, held by the thread */

static int in_lock_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *t)
{
    if (in_lock_armed) {
        in_lock_armed = false;
        in_lock_mutex = m;
        in_lock_trylock = pthread_mutex_trylock(m);
        if (in_lock_trylock == 0) pthread_mutex_unlock(m); /* (never: this thread holds it) */
        raise(SIGUSR1); /* the handler runs before raise returns, the lock held */
    }
    return pthread_cond_timedwait(cv, m, t);
}

static _Atomic(int) in_lock_ret = -1;

static void *in_lock_thread(void *unused)
{
    (void)unused;
    in_lock_armed = true;
    struct timespec d = fastsync_deadline_in(30000000000u); /* woken by main long before */
    /* relaxed: read after the join */
    atomic_store_explicit(&in_lock_ret, fastsync_timedwait32(wt, 0, 0, &d), memory_order_relaxed);
    return NULL;
}

static void in_lock_case(void)
{
    const char *what = "inside the bucket's lock";
    reset_scene(1); /* the latch at 1: the handler's count_down opens it, nobody waiting */
    fastsync_cond_ticket_t t;
    fastsync_cond_register(c, &t);
    fastsync_cond_signal(c); /* the one registered ticket has had its signal */
    test_storm_action = storm_action;
    test_storm_init(&storm, true);
    unsigned long caught0 = test_storm_caught();
    unsigned long calls0[NROWS];
    for (int r = 0; r < NROWS; r++) calls0[r] = atomic_load_explicit(&row_calls[r], memory_order_relaxed);

    test_watchdog_start(storm_dump, NULL);
    pthread_t th = test_thread_start(in_lock_thread, NULL);
    uint64_t end = test_limit_end(5000);
    while (get(&h_done) == 0 && test_box_open(end)) test_sleep_ns(100000);
    if (get(&h_done) == 0) {
        storm_dump(NULL);
        bail("%s: the handler is not back after 5 s (%lu started): a call locked the bucket its thread holds",
             what, get(&h_runs));
    }
    /* relaxed: the wake after it carries it */
    fastsync__store(wt, 1u, memory_order_relaxed);
    fastsync_wake32(wt, 1, 0);
    test_thread_join(th);
    test_watchdog_stop();
    test_storm_action = NULL;

    unsigned long b = bucket(s);
    ok(test_storm_caught() - caught0 == 1 && get(&h_done) == 1, "%s: the handler ran once, and returned", what);
    ok(in_lock_trylock == EBUSY && in_lock_mutex == &fastsync__bucket_of(wt)->lock,
       "%s: ... raised in the table's sleep of its thread, which held the lock of the word's bucket (trylock %d)",
       what, in_lock_trylock);
    ok(bucket(e) == b && bucket(c) == b && bucket(L) == b && bucket(wt) == b,
       "%s: ... the bucket of every object the handler used (%lu)", what, b);
    is_int(atomic_load_explicit(&in_lock_ret, memory_order_relaxed), 0, "%s: the interrupted wait returned 0, woken", what);
    ok(get(&h_bad_ret) == 0, "%s: every call in the handler returned what it should (failed: mask %#lx)", what,
       get(&h_bad_ret));
    is_int((int)get(&h_bad_errno), 0, "%s: no call in the handler changed errno", what);
    is_int((int)fastsync_sem_getvalue(s), (int)(get(&h_posted) - get(&h_taken)), "%s: the semaphore's value: its posts", what);
    ok(fastsync_event_is_set(e) && get(&h_opened) == 1 && fastsync_latch_trywait(L) == 0,
       "%s: the event set, the latch opened by the handler", what);
    is_int(fastsync_cond_await(c, &t), 0, "%s: the ticket returns its signal", what);
    int missing = 0;
    for (int r = 0; r < NROWS; r++)
        if (verdict(r) != NEVER && atomic_load_explicit(&row_calls[r], memory_order_relaxed) == calls0[r]) {
            diag("  %s: not called", rows[r].name);
            missing++;
        }
    is_int(missing, 0, "%s: every call the POSIX column allows was made", what);
    ok(fastsync_sem_destroy(s) == 0 && fastsync_event_destroy(e) == 0 && fastsync_cond_destroy(c) == 0 &&
           fastsync_latch_destroy(L) == 0,
       "%s: nothing left registered", what);
}
#endif

int main(int argc, char **argv)
{
    test_init();
    table_agrees(argc > 1 ? argv[1] : NULL);
#if !defined(FASTSYNC_BACKEND_LINUX) && !defined(FASTSYNC_BACKEND_POSIX)
    diag("the " FASTSYNC_BACKEND " backend: the manual claims no call async-signal-safe");
    return done_testing();
#endif
    pick_objects();
    verdict_k = (int)(2000 * test_scale());
    if (verdict_k < 100) verdict_k = 100;
#if defined(FASTSYNC_BACKEND_LINUX)
    for (int restart = 0; restart < 2; restart++)
        for (int kind = ONE_SEM; kind < ONE_KINDS; kind++) {
#if FASTSYNC__TSAN
            /* ThreadSanitizer defers a handler until the thread next enters a call it
             * intercepts; a thread asleep in a raw futex call (restarted by the kernel under
             * SA_RESTART) may never do so, and sleeps on: the case would hang on the tool. */
            skip("ThreadSanitizer defers signal handlers past a raw futex sleep", "%s", one_name[kind]);
            continue;
#endif
            one_case(kind, restart != 0);
        }
#else
    skip("the POSIX backend: a post, set, signal, count_down or wake that ends a wait makes a wake, which "
         "locks the table (the manual's column)", "the handler ends the wait it interrupts");
#endif
    for (int restart = 0; restart < 2; restart++) storm_case(restart != 0);
#if defined(TEST_IN_LOCK)
    in_lock_case();
#elif defined(FASTSYNC_BACKEND_POSIX)
    skip("the POSIX backend by default, not chosen before the include: no hook in its sleep", "inside the bucket's lock");
#endif
    /* every call the backend's column allows was made by the handlers, and no other */
    int missing = 0, forbidden = 0;
    for (int r = 0; r < NROWS; r++) {
        unsigned long n = atomic_load_explicit(&row_calls[r], memory_order_relaxed);
        if (verdict(r) != NEVER && n == 0) {
            diag("  %s: allowed here, never called", rows[r].name);
            missing++;
        }
        if (verdict(r) == NEVER && n != 0) forbidden++;
    }
    ok(missing == 0 && forbidden == 0,
       "the handlers made every call the " FASTSYNC_BACKEND " column allows (%d missing) and no other (%d)",
       missing, forbidden);
    signal(SIGUSR1, SIG_DFL);
    return done_testing();
}
