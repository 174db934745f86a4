/* SPDX-License-Identifier: MIT */
/* cond_destroy_after_broadcast: the last user of a condition variable may wake everyone and
 * destroy it at once (issue 16, item 5; POSIX allows destroying a condvar as soon as no thread
 * is blocked on it). destroy right after a broadcast, or after signals that called every
 * registered ticket, returns 0; it may wait, briefly, for the waiters it released to finish
 * with the object, and after it returns no waiter touches it. destroy says EBUSY only while a
 * ticket that nothing has called is registered.
 * Each round's condvar lives at the very end of its own mmap'd page (a malloc'd block under
 * AddressSanitizer or ThreadSanitizer); the mutex of the mutex-form waits lives elsewhere, in
 * static memory. k sleepers (k from 1 to 4, each a fastsync_cond_wait or a far timedwait on
 * the mutex, or a ticket: await, a far timedawait, a far clockawait on CLOCK_REALTIME) are
 * registered; then one of three endings:
 *   broadcast  broadcast, destroy at once (must be 0), unmap at once;
 *   signals    k signals (each calls one more ticket), destroy at once (0), unmap at once;
 *   short      k - 1 signals, destroy (must be EBUSY: one ticket is uncalled), one more
 *              signal, destroy (0), unmap at once.
 * Every sleeper's wait must return 0, and none before the round's first signal or broadcast.
 * A touch of the condvar after destroy returned 0 is a SIGSEGV (reported with each sleeper's
 * phase) or a sanitizer's use-after-free / data race report. To make the released waiters
 * slow to leave (so that destroy has something to wait for), a sleeper sometimes yields or
 * sleeps up to 100 us right after each of its futex waits (the harness's
 * test_after_futex_wait), and a ticket sleeper sometimes pauses between its register and its
 * await (its ticket may be released before it awaits). The wake is made with the mutex held in
 * some rounds (unlocked before destroy) and without in others; in some rounds every sleeper
 * is asleep in the kernel first (/proc). Where destroy refuses (the old header's EBUSY), the
 * round waits for its sleepers to return, destroys again and only then frees, so that the
 * run goes on and counts. A touch within nanoseconds of a waiter's last RMW is left to
 * preemption in the plain build (shown in a scratch copy: a load of the word right after the
 * claim was not caught in 5 runs); under ThreadSanitizer the free is a write that such a touch
 * is not ordered with, reported in every run: so destroy must acquire what each released
 * waiter's last RMW released. Spread over the CPUs and pinned to one. Not on Windows (mmap). */
#include "harness.h"

#include <signal.h>

#define MAXK 4

enum { K_WAIT, K_TIMEDWAIT, K_AWAIT, K_TIMEDAWAIT, K_CLOCKAWAIT_RT, KINDS };
static const char *const kind_name[KINDS] = { "wait", "timedwait", "await", "timedawait", "clockawait REALTIME" };

enum { E_BROADCAST, E_SIGNALS, E_SHORT, ENDINGS };
static const char *const ending_name[ENDINGS] = { "broadcast", "k signals", "k-1 signals" };

/* A sleeper's phase in its round (relaxed: progress for the dump and the SIGSEGV report). */
enum { P_IDLE, P_STARTED, P_REGISTERED, P_AWAITING, P_RETURNED, PHASES };
static const char *const phase_name[PHASES] = { "idle", "started", "registered", "in its wait", "returned" };

/* The main thread's phase: where in the round it is. */
enum { M_SETUP, M_REGISTERING, M_WAKING, M_DESTROYING, M_FREED, M_JOINING, MPHASES };
static const char *const mphase_name[MPHASES] = { "setting up", "waiting for registrations", "waking",
                                                  "destroying", "freed the condvar", "waiting for the sleepers" };

struct sleeper {
    fastsync_sem_t go;      /* main -> sleeper: the round is set up */
    int kind;               /* K_*: set by main before go */
    int ret;                /* the wait's result: read by main after `done` */
    bool early;             /* returned 0 before the round's first signal or broadcast */
    _Atomic(int) tid;       /* for /proc (test_until_asleep); 0 until the thread runs */
    uint64_t rng;
    _Atomic(int) phase;     /* P_* */
    pthread_t thread;
};

static struct {
    fastsync_mutex_t m;     /* the mutex of the mutex-form waits: not on the condvar's page */
    fastsync_cond_t *c;     /* this round's condvar; set before the sleepers' go */
    int k;                  /* this round's sleepers */
    int registered;         /* under m: sleepers registered this round */
    _Atomic(unsigned) calls; /* signals and broadcasts made this round (before each call) */
    fastsync_sem_t done;    /* sleeper -> main: its wait returned */
    bool quit;
    _Atomic(int) mphase;
    _Atomic(int) ending, round_k;
    _Atomic(unsigned long) rounds;
    struct sleeper s[MAXK];
} g;

static _Thread_local bool in_sleeper; /* this thread is a sleeper (for the window after its waits) */
static _Thread_local uint64_t window_rng;

static void dump(void *unused)
{
    (void)unused;
    /* relaxed: a diagnostic snapshot. */
    int mp = atomic_load_explicit(&g.mphase, memory_order_relaxed);
    diag("round %lu: %s with %d sleeper(s), main %s, %u calls made",
         atomic_load_explicit(&g.rounds, memory_order_relaxed),
         ending_name[atomic_load_explicit(&g.ending, memory_order_relaxed)],
         atomic_load_explicit(&g.round_k, memory_order_relaxed), mphase_name[mp],
         atomic_load_explicit(&g.calls, memory_order_relaxed));
    for (int i = 0; i < MAXK; i++)
        diag("  sleeper %d (%s): %s", i, kind_name[g.s[i].kind],
             phase_name[atomic_load_explicit(&g.s[i].phase, memory_order_relaxed)]);
    if (mp < M_FREED && g.c != NULL) test_dump_cond("  condvar", g.c);
    test_dump_mutex("  mutex", &g.m);
}

#if !TEST_PAGE_MALLOC
static size_t put_str(char *b, size_t n, size_t cap, const char *s)
{
    while (*s && n < cap) b[n++] = *s++;
    return n;
}

/* A touch of the unmapped condvar: say so on the TAP stream, with each sleeper's phase, then
 * die. (Only write(): a signal handler.) */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char msg[512];
    size_t n = put_str(msg, 0, sizeof msg, "Bail out! SIGSEGV at 0x");
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int shift = (int)sizeof a * 8 - 4; shift >= 0 && n < sizeof msg; shift -= 4)
        msg[n++] = "0123456789abcdef"[(a >> shift) & 15];
    n = put_str(msg, n, sizeof msg, ": the condvar touched after destroy returned and it was unmapped? main ");
    n = put_str(msg, n, sizeof msg, mphase_name[atomic_load_explicit(&g.mphase, memory_order_relaxed)]);
    n = put_str(msg, n, sizeof msg, ", ending ");
    n = put_str(msg, n, sizeof msg, ending_name[atomic_load_explicit(&g.ending, memory_order_relaxed)]);
    for (int i = 0; i < atomic_load_explicit(&g.round_k, memory_order_relaxed); i++) {
        n = put_str(msg, n, sizeof msg, "; sleeper ");
        if (n < sizeof msg) msg[n++] = (char)('0' + i);
        n = put_str(msg, n, sizeof msg, " (");
        n = put_str(msg, n, sizeof msg, kind_name[g.s[i].kind]);
        n = put_str(msg, n, sizeof msg, ") ");
        n = put_str(msg, n, sizeof msg, phase_name[atomic_load_explicit(&g.s[i].phase, memory_order_relaxed)]);
    }
    n = put_str(msg, n, sizeof msg - 1, "");
    msg[n++] = '\n';
    ssize_t w = write(1, msg, n);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

/* A sleeper's window right after each of its futex waits and wakes: sometimes it yields or
 * sleeps a little, so that a waiter the wake released is still inside its wait when destroy
 * runs (and a waiter that passes a wake on still has the rest of its wait to run). */
static void sleeper_window(void)
{
    if (!in_sleeper) return;
    unsigned r = (unsigned)(test_rand(&window_rng) % 8);
    if (r < 2) sched_yield();
    else if (r == 2) test_sleep_ns(20000 + test_rand(&window_rng) % 80000);
}

static void pause_a_little(uint64_t *rng)
{
    unsigned r = (unsigned)(test_rand(rng) % 4);
    if (r == 1) sched_yield();
    else if (r == 2) test_sleep_ns(50000);
}

static void *sleeper_main(void *p)
{
    struct sleeper *s = (struct sleeper *)p;
    in_sleeper = true;
    window_rng = s->rng ^ 0x5bd1e995u;
    atomic_store(&s->tid, test_tid());
    for (;;) {
        fastsync_sem_wait(&s->go);
        if (g.quit) return NULL;
        fastsync_cond_t *c = g.c;
        /* relaxed (phase, everywhere): progress for the dump and the SIGSEGV report. */
        atomic_store_explicit(&s->phase, P_STARTED, memory_order_relaxed);
        struct timespec far;
        int r;
        if (s->kind == K_WAIT || s->kind == K_TIMEDWAIT) {
            fastsync_mutex_lock(&g.m);
            g.registered++; /* the wait registers before it unlocks m */
            atomic_store_explicit(&s->phase, P_AWAITING, memory_order_relaxed);
            if (s->kind == K_WAIT) {
                r = fastsync_cond_wait(c, &g.m);
            } else {
                far = fastsync_deadline_in(3600 * 1000000000ull);
                r = fastsync_cond_timedwait(c, &g.m, &far);
            }
            fastsync_mutex_unlock(&g.m);
        } else {
            fastsync_cond_ticket_t t;
            r = fastsync_cond_register(c, &t);
            if (r != 0) bail("register: %d", r);
            fastsync_mutex_lock(&g.m);
            g.registered++;
            fastsync_mutex_unlock(&g.m);
            atomic_store_explicit(&s->phase, P_REGISTERED, memory_order_relaxed);
            pause_a_little(&s->rng); /* its ticket may be released, and destroy called, now */
            atomic_store_explicit(&s->phase, P_AWAITING, memory_order_relaxed);
            if (s->kind == K_AWAIT) {
                r = fastsync_cond_await(c, &t);
            } else if (s->kind == K_TIMEDAWAIT) {
                far = fastsync_deadline_in(3600 * 1000000000ull);
                r = fastsync_cond_timedawait(c, &t, &far);
            } else {
                far = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
                r = fastsync_cond_clockawait(c, &t, CLOCK_REALTIME, &far);
            }
        }
        /* `c` may be unmapped from here on: never touch it again. */
        /* acquire: the calls count is incremented before each signal or broadcast, which
         * synchronizes-with the wait it ends: a wait that returned 0 for one sees it. */
        s->early = r == 0 && atomic_load_explicit(&g.calls, memory_order_acquire) == 0;
        s->ret = r;
        atomic_store_explicit(&s->phase, P_RETURNED, memory_order_relaxed);
        fastsync_sem_post(&g.done);
    }
}

struct stats {
    unsigned long rounds, by_ending[ENDINGS], by_k[MAXK + 1], by_kind[KINDS];
    unsigned long inside_at_free; /* rounds freed while a sleeper was still inside its wait */
    unsigned long by_ending_k[ENDINGS][MAXK + 1];
    unsigned long bad_destroy[ENDINGS][MAXK + 1]; /* a destroy that should have said 0 did not */
    unsigned long busy_missed;         /* short: the destroy before the last signal said 0 */
    unsigned long bad_late;            /* destroy once every sleeper returned: not 0 */
    unsigned long bad_wait, early, asleep_rounds;
    int last_code[ENDINGS], wait_code;
    uint64_t destroy_max_ns;
};

static void wake(int how)
{
    /* seq_cst: before the call it counts (the sleepers' acquire load checks "none early"). */
    atomic_fetch_add(&g.calls, 1);
    if (how) fastsync_cond_broadcast(g.c);
    else fastsync_cond_signal(g.c);
}

static void one_round(struct stats *st, uint64_t *rng)
{
    uint64_t x = test_rand(rng);
    int k = 1 + (int)(x % MAXK);
    int ending = (int)((x >> 8) % ENDINGS);
    bool shared = (x >> 12) % 2 && FASTSYNC_HAS_SHARED;
    bool under_m = (x >> 13) % 2;
    bool until_asleep = (x >> 14) % 4 == 0;
    /* relaxed (mphase, ending, round_k): progress for the dump. */
    atomic_store_explicit(&g.mphase, M_SETUP, memory_order_relaxed);
    atomic_store_explicit(&g.ending, ending, memory_order_relaxed);
    atomic_store_explicit(&g.round_k, k, memory_order_relaxed);
    g.c = (fastsync_cond_t *)test_page_alloc(sizeof(fastsync_cond_t), shared);
    if (fastsync_cond_init(g.c, shared ? TEST_SHARED : 0) != 0) bail("cond_init");
    g.k = k;
    g.registered = 0;
    atomic_store(&g.calls, 0);
    for (int i = 0; i < k; i++) {
        struct sleeper *s = &g.s[i];
        s->kind = (int)(test_rand(rng) % KINDS);
        st->by_kind[s->kind]++;
        atomic_store_explicit(&s->phase, P_IDLE, memory_order_relaxed);
        fastsync_sem_post(&s->go); /* publishes g.c, the kind */
    }
    atomic_store_explicit(&g.mphase, M_REGISTERING, memory_order_relaxed);
    /* Every sleeper registered: a mutex-form sleeper counts itself under m and registers
     * before its wait unlocks m; a ticket sleeper counts itself after its register. */
    uint64_t end = test_limit_end(10000);
    for (;;) {
        fastsync_mutex_lock(&g.m);
        int n = g.registered;
        fastsync_mutex_unlock(&g.m);
        if (n == k) break;
        if (!test_box_open(end)) bail("round %lu: %d of %d sleepers registered after 10 s", st->rounds, n, k);
        sched_yield();
    }
    if (until_asleep) {
        st->asleep_rounds++;
        for (int i = 0; i < k; i++) (void)test_until_asleep(atomic_load(&g.s[i].tid), 1000000);
    }

    atomic_store_explicit(&g.mphase, M_WAKING, memory_order_relaxed);
    fastsync_cond_t *c = g.c;
    int d = 0;
    bool keep = false; /* the object must outlive the joins (a destroy said 0 too early) */
    if (under_m) fastsync_mutex_lock(&g.m);
    if (ending == E_BROADCAST) {
        wake(1);
    } else {
        for (int i = 0; i < k - 1; i++) wake(0);
        if (ending == E_SHORT) {
            if (under_m) fastsync_mutex_unlock(&g.m);
            atomic_store_explicit(&g.mphase, M_DESTROYING, memory_order_relaxed);
            d = fastsync_cond_destroy(c); /* one ticket is uncalled */
            if (d != EBUSY) st->busy_missed++;
            /* a 0 here was wrong: its last ticket is still registered and is woken below, so
             * the object is freed only after the joins */
            if (d == 0) keep = true;
            atomic_store_explicit(&g.mphase, M_WAKING, memory_order_relaxed);
            if (under_m) fastsync_mutex_lock(&g.m);
        }
        wake(0);
    }
    if (under_m) fastsync_mutex_unlock(&g.m);
    atomic_store_explicit(&g.mphase, M_DESTROYING, memory_order_relaxed);
    uint64_t t0 = test_now_ns();
    d = fastsync_cond_destroy(c);
    uint64_t took = test_now_ns() - t0;
    if (d == 0 && !keep) {
        int inside = 0;
        for (int i = 0; i < k; i++)
            inside += atomic_load_explicit(&g.s[i].phase, memory_order_relaxed) != P_RETURNED;
        test_page_free(c); /* at once: a released sleeper may be slow to leave its wait */
        g.c = NULL;
        atomic_store_explicit(&g.mphase, M_FREED, memory_order_relaxed);
        st->inside_at_free += inside > 0;
        if (took > st->destroy_max_ns) st->destroy_max_ns = took;
    } else if (d != 0) {
        st->bad_destroy[ending][k]++;
        st->last_code[ending] = d;
    }
    atomic_store_explicit(&g.mphase, M_JOINING, memory_order_relaxed);
    for (int i = 0; i < k; i++) fastsync_sem_wait(&g.done);
    if (g.c != NULL) {
        /* destroy refused (or the short round's first destroy did not): every sleeper has
         * returned now, so nothing is registered */
        d = fastsync_cond_destroy(c);
        if (d != 0) st->bad_late++;
        test_page_free(c);
        g.c = NULL;
    }
    for (int i = 0; i < k; i++) {
        struct sleeper *s = &g.s[i];
        if (s->ret != 0) {
            st->bad_wait++;
            st->wait_code = s->ret;
        }
        st->early += s->early;
        atomic_store_explicit(&s->phase, P_IDLE, memory_order_relaxed);
    }
    st->rounds++;
    st->by_ending[ending]++;
    st->by_ending_k[ending][k]++;
    st->by_k[k]++;
    atomic_store_explicit(&g.rounds, st->rounds, memory_order_relaxed);
}

static const char *code_name(int r)
{
    return r == 0 ? "0" : r == EBUSY ? "EBUSY" : r == EINVAL ? "EINVAL" : r == ETIMEDOUT ? "ETIMEDOUT" : "?";
}

static void run(const char *name, bool pinned, double ms)
{
    test_pin_all(pinned);
    struct stats st;
    memset(&st, 0, sizeof st);
    g.quit = false;
    uint64_t rng = test_stream(pinned ? 100 : 200);
    for (int i = 0; i < MAXK; i++) {
        fastsync_sem_init(&g.s[i].go, 0, 0);
        g.s[i].rng = test_stream((unsigned)i + (pinned ? 10 : 20));
        g.s[i].kind = 0;
        atomic_store_explicit(&g.s[i].phase, P_IDLE, memory_order_relaxed);
        g.s[i].thread = test_thread_start(sleeper_main, &g.s[i]);
    }
    /* each sleeper's tid before the first round that looks for it asleep */
    for (int i = 0; i < MAXK; i++) {
        uint64_t end = test_limit_end(5000);
        while (test_box_open(end) && test_tid() != 0 && atomic_load(&g.s[i].tid) == 0) test_sleep_ns(100000);
    }
    uint64_t end = test_box_end(ms);
    while (test_box_until(end, st.rounds, st.by_ending[E_BROADCAST] && st.by_ending[E_SIGNALS] &&
                                              st.by_ending[E_SHORT]))
        one_round(&st, &rng);
    g.quit = true;
    for (int i = 0; i < MAXK; i++) fastsync_sem_post(&g.s[i].go);
    for (int i = 0; i < MAXK; i++) test_thread_join(g.s[i].thread);

    diag("%s: %lu rounds: %lu broadcast, %lu k signals, %lu k-1 signals; k = 1..4: %lu %lu %lu %lu; "
         "waits %lu wait, %lu timedwait, %lu await, %lu timedawait, %lu clockawait; %lu rounds with every "
         "sleeper asleep first", name, st.rounds, st.by_ending[0], st.by_ending[1], st.by_ending[2], st.by_k[1],
         st.by_k[2], st.by_k[3], st.by_k[4], st.by_kind[0], st.by_kind[1], st.by_kind[2], st.by_kind[3],
         st.by_kind[4], st.asleep_rounds);
    diag("%s: %lu condvars %s while a sleeper was still inside its wait; longest destroy %.1f us", name,
         st.inside_at_free, TEST_PAGE_MALLOC ? "freed" : "unmapped", (double)st.destroy_max_ns / 1000.0);
    ok(st.rounds >= TEST_MIN_ROUNDS, "%s: %lu rounds ran", name, st.rounds);
    for (int e = 0; e < ENDINGS; e++) {
        unsigned long bad = 0;
        for (int k = 1; k <= MAXK; k++) bad += st.bad_destroy[e][k];
        if (!is_int(bad, 0, "%s: destroy right after %s%s: 0 (%lu rounds)", name, ending_name[e],
                    e == E_SHORT ? " and the last one" : "", st.by_ending[e]))
            diag("  %s in %lu of %lu rounds (k = 1: %lu of %lu, 2: %lu of %lu, 3: %lu of %lu, 4: %lu of %lu)",
                 code_name(st.last_code[e]), bad, st.by_ending[e], st.bad_destroy[e][1], st.by_ending_k[e][1],
                 st.bad_destroy[e][2], st.by_ending_k[e][2], st.bad_destroy[e][3], st.by_ending_k[e][3],
                 st.bad_destroy[e][4], st.by_ending_k[e][4]);
    }
    is_int(st.busy_missed, 0, "%s: destroy after k-1 signals (a ticket uncalled): EBUSY", name);
    is_int(st.bad_late, 0, "%s: destroy once every sleeper returned: 0", name);
    if (!is_int(st.bad_wait, 0, "%s: every sleeper's wait returned 0", name))
        diag("  last code %s (%d)", code_name(st.wait_code), st.wait_code);
    is_int(st.early, 0, "%s: no wait returned before the round's first signal or broadcast", name);
}

int main(void)
{
    test_init();
    fastsync_mutex_init(&g.m, 0);
    fastsync_sem_init(&g.done, 0, 0);
#if !TEST_PAGE_MALLOC
    test_page_on_fault(on_segv);
#endif
    diag("condvars live at the end of %s", TEST_PAGE_WHERE);
    test_after_futex_wait = sleeper_window;
    test_after_futex_wake = sleeper_window;
    test_watchdog_start(dump, NULL);
    run("spread", false, 400);
    run("pinned", true, 400);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
