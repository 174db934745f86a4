/* SPDX-License-Identifier: MIT */
/* wait_any_forward: a wait_any thread that absorbs the one wake of a post (or a signal) and
 * then wins another entry passes the wake on (fastsync__wa_leave), so the plain waiter the
 * token (or signal) is for does not sleep on beside it.
 *
 * Each round: W, in fastsync_wait_any (or timedwait_any, clockwait_any with far deadlines)
 * over [event E, semaphore S] (or [E, W's ticket on condvar C]), falls asleep first; then
 * the plain waiter P blocks in fastsync_sem_timedwait(S) (or fastsync_cond_timedwait(C, M)),
 * its deadline far off (4 s). Then, back to back, E is set and S posted once (C signalled
 * once), in either order. The post's one wake may reach W, which sees E (index 0, the lowest
 * ready) and wins it, leaving the token (the signal) it was woken for: its leave must wake
 * P, which must return 0 before its deadline (a timed-out P that finds the token there
 * takes it and returns 0 too: so "in time" is checked, not only 0). When W wins S itself
 * (post first, and W looked before E was set), one more token (signal) is sent for P.
 * In the condvar rounds W, after P has returned, looks at its ticket once more (a timedawait
 * with a past deadline): ETIMEDOUT, the one signal being P's. Exact counts every round:
 * W's index, P's result, the semaphore's value 0 and no waiter, the condvar with no ticket
 * and no signal left. A P that never wakes is the watchdog's failure.
 *
 * Which sleeper a post wakes is the kernel's choice; two ways make it W:
 *  - futex_waitv (Linux >= 5.16 and not FASTSYNC_TEST_WAITV=fallback): Linux queues the
 *    sleepers of a futex in order and wakes the oldest; W is asleep (/proc says 'S') before
 *    P registers. After the post returns, P still asleep (and not returned) means the wake
 *    went to W ("absorbed" below; counted, not asserted: a woken W may have left S's queue
 *    before the post).
 *  - the fallback (FASTSYNC_TEST_WAITV=fallback, and every backend or CPU without
 *    futex_waitv): every wait goes through this test's own wait table (test_wait_override),
 *    whose wake takes W's sleep first (no order is promised; this is a legal one). W, asleep
 *    on S's (C's) word in its fallback slice, stays there past the slice's end in the rounds
 *    the test arms (a futex wait may return late), and P sleeps on the same word, so the
 *    post's wake reaches W in every round: asserted.
 * On the Windows backend a signal wakes every sleeper (FASTSYNC__CV_WAKE_ONE): the condvar
 * rounds cannot trap W there, and that point is skipped, saying so.
 * It fails: with the semaphore wake left out of fastsync__wa_leave (or the ticket's), P
 * sleeps to its deadline in the first round that W absorbs the wake (see the commit). */
#include "harness.h"

enum { V_SEM, V_COND, V_KINDS };
static const char *const variant_name[V_KINDS] = { "semaphore", "condvar" };
enum { ROLE_NONE, ROLE_W, ROLE_P };
enum { SET_FIRST, POST_FIRST };

#define P_DEADLINE_NS (4000000000ull * (uint64_t)test_scale_up())

static fastsync_sem_t S;
static fastsync_event_t E;
static fastsync_cond_t C;
static fastsync_mutex_t M;

static _Thread_local int role; /* ROLE_*: the thread's part, for the table and the hook */
static _Thread_local bool in_wait_any;
static pthread_t main_thread;
static bool use_table; /* decided in main: the fallback runs, through the table */

static struct {
    int variant;
    _Atomic(int) quit;
    _Atomic(int) go_w, go_p, go_w2;       /* the round each may start (its part of) */
    _Atomic(int) w_in, w_done, w_done2;   /* the round W has entered / finished / epilogued */
    _Atomic(int) p_in, p_done;
    _Atomic(int) w_tid, p_tid;            /* Linux thread ids, for /proc */
    int w_ret, w_idx, w_epi;              /* published by w_done, w_done2 (release) */
    int p_ret;
    bool p_late;                          /* published by p_done */
    _Atomic(unsigned long) forwards;      /* wakes W made inside wait_any (its leaves) */
    _Atomic(int) armed;                   /* table: W's next sleep on the target word stays */
    _Atomic(int) watch;                   /* table: the round whose post/signal is watched */
    _Atomic(int) absorbed;                /* table: the last round whose wake reached W */
    _Atomic(int) round;
    void *target;                         /* S's or C's futex word */
} R;

/* ---- the test's wait table (the fallback runs): W's sleep is woken first ---- */

struct tnode {
    struct tnode *next;
    void *word;
    int role;
    bool parked; /* W's first sleep on the target word in an armed round: no deadline */
    bool woken;
    pthread_cond_t cond;
};
static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static struct tnode *thead; /* oldest first */
static int tsleepers;

static void tunlink(struct tnode *n)
{
    for (struct tnode **p = &thead; *p != NULL; p = &(*p)->next)
        if (*p == n) {
            *p = n->next;
            tsleepers--;
            return;
        }
}

static int table_wait(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    (void)shared;
    int r = 0;
    pthread_mutex_lock(&tlock);
    /* relaxed: the table's lock orders it against the wake, as the POSIX backend's (the
     * waker changes the word before it takes the lock). Through fastsync.h's atomics layer:
     * over OS/2 without atomics the word is read under its lock. */
    if (fastsync__load((FASTSYNC__ATOMIC(uint32_t) *)word, memory_order_relaxed) == expected) {
        struct tnode n;
        n.word = word;
        n.role = role;
        /* W's first sleep on the target word in an armed round is parked, and only that one:
         * the exchange takes the round's arm. A W woken from it that sleeps again in the same
         * round (on the Windows backend a signal wakes P too, and P may claim the signal
         * first) sleeps an ordinary slice, and sees E when it is set; parked again, it would
         * sleep on C's word for ever with E set. Relaxed: armed was stored before the round's
         * go_w, which W read with acquire, and only W's exchange and main's stores touch it. */
        n.parked = role == ROLE_W && word == R.target &&
                   atomic_exchange_explicit(&R.armed, 0, memory_order_relaxed) != 0;
        n.woken = false;
        if (abstime != NULL && !n.parked && test_clock_ns(clock) >= test_ts_ns(*abstime)) {
            pthread_mutex_unlock(&tlock);
            return ETIMEDOUT;
        }
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, TEST_WD_CLOCK);
        pthread_cond_init(&n.cond, &ca);
        pthread_condattr_destroy(&ca);
        n.next = NULL;
        struct tnode **p = &thead;
        while (*p != NULL) p = &(*p)->next;
        *p = &n;
        tsleepers++;
        while (!n.woken) {
            if (abstime == NULL || n.parked) {
                pthread_cond_wait(&n.cond, &tlock);
                continue;
            }
            int64_t left = test_ts_ns(*abstime) - test_clock_ns(clock);
            if (left <= 0) {
                tunlink(&n);
                r = ETIMEDOUT;
                break;
            }
            struct timespec d = test_ns_ts(test_clock_ns(TEST_WD_CLOCK) + left);
            pthread_cond_timedwait(&n.cond, &tlock, &d);
        }
        pthread_cond_destroy(&n.cond);
    }
    pthread_mutex_unlock(&tlock);
    return r;
}

static void table_wake(void *word, int n, int shared)
{
    (void)shared;
    bool woke_w = false;
    pthread_mutex_lock(&tlock);
    for (int pass = 0; pass < 2; pass++) /* W's sleep first, then the others oldest first */
        for (struct tnode **p = &thead; *p != NULL && n > 0;) {
            struct tnode *x = *p;
            if (x->word != word || (pass == 0) != (x->role == ROLE_W)) {
                p = &x->next;
                continue;
            }
            *p = x->next;
            tsleepers--;
            x->woken = true;
            woke_w |= x->role == ROLE_W;
            pthread_cond_signal(&x->cond);
            n--;
        }
    int watch = atomic_load(&R.watch);
    if (watch != 0 && word == R.target && pthread_equal(pthread_self(), main_thread)) {
        /* the round's post or signal: did it reach W while P slept on the same word? */
        bool p_left = false;
        for (struct tnode *x = thead; x != NULL; x = x->next) p_left |= x->word == word && x->role == ROLE_P;
        if (woke_w && p_left) atomic_store(&R.absorbed, watch);
        atomic_store(&R.watch, 0);
    }
    pthread_mutex_unlock(&tlock);
}

/* A sleeper of `who` on `word` in the table (W: parked). */
static bool table_has(void *word, int who)
{
    bool found = false;
    pthread_mutex_lock(&tlock);
    for (struct tnode *x = thead; x != NULL; x = x->next)
        found |= x->word == word && x->role == who && (who != ROLE_W || x->parked);
    pthread_mutex_unlock(&tlock);
    return found;
}

/* ---- the kernel's order (futex_waitv): /proc tells who sleeps ---- */

/* Whether futex_waitv is there (else the waits take their fallback). */
static bool kernel_waitv(void)
{
    static uint32_t word = 1;
    struct fastsync__waitv v;
    v.word = &word;
    v.expected = 0; /* differs: returns at once */
    v.shared = 0;
    return fastsync__waitv_sys(&v, 1, CLOCK_MONOTONIC, NULL) != ENOSYS;
}

/* ---- the threads ---- */

static void count_forward(void)
{
    /* relaxed: a statistic, read after the threads are joined */
    if (in_wait_any) atomic_fetch_add_explicit(&R.forwards, 1, memory_order_relaxed);
}

static int wait_for(_Atomic(int) *go, int last)
{
    int r;
    while ((r = atomic_load(go)) == last && !atomic_load(&R.quit)) test_sleep_ns(20000);
    return atomic_load(&R.quit) ? 0 : r;
}

static void *w_main(void *unused)
{
    (void)unused;
    role = ROLE_W;
    atomic_store(&R.w_tid, test_tid());
    uint64_t rng = test_stream(1);
    for (int last = 0;;) {
        int r = wait_for(&R.go_w, last);
        if (r == 0) break;
        last = r;
        fastsync_cond_ticket_t t;
        fastsync_wait_entry_t list[2];
        list[0] = fastsync_wait_event(&E);
        if (R.variant == V_SEM) {
            list[1] = fastsync_wait_sem(&S);
        } else {
            fastsync_cond_register(&C, &t);
            list[1] = fastsync_wait_ticket(&C, &t);
        }
        unsigned idx = 99;
        int ret;
        uint64_t x = test_rand(&rng);
        struct timespec d;
        atomic_store(&R.w_in, r);
        in_wait_any = true;
        if (x % 4 == 0) {
            d = fastsync_deadline_in(3600 * 1000000000ull);
            ret = fastsync_timedwait_any(list, 2, &idx, &d);
        } else if (x % 4 == 1) {
            d = test_deadline_on(CLOCK_REALTIME, 3600 * 1000000000ull);
            ret = fastsync_clockwait_any(list, 2, &idx, CLOCK_REALTIME, &d);
        } else {
            ret = fastsync_wait_any(list, 2, &idx);
        }
        in_wait_any = false;
        R.w_ret = ret;
        R.w_idx = (int)idx;
        atomic_store(&R.w_done, r); /* seq_cst (release): publishes the two above */
        if (R.variant == V_COND && ret == 0 && idx == 0) {
            /* E won: the ticket is still registered. Once P has returned, look once more (a
             * past deadline: claims a pending signal, else leaves); at quit, only leave. */
            while (atomic_load(&R.go_w2) != r && !atomic_load(&R.quit)) test_sleep_ns(20000);
            struct timespec past = test_ts(0, 0);
            R.w_epi = fastsync_cond_timedawait(&C, &t, &past);
            atomic_store(&R.w_done2, r);
        }
    }
    return NULL;
}

static void *p_main(void *unused)
{
    (void)unused;
    role = ROLE_P;
    atomic_store(&R.p_tid, test_tid());
    for (int last = 0;;) {
        int r = wait_for(&R.go_p, last);
        if (r == 0) break;
        last = r;
        int64_t deadline = test_clock_ns(CLOCK_MONOTONIC) + (int64_t)P_DEADLINE_NS;
        struct timespec d = test_ns_ts(deadline);
        int ret;
        atomic_store(&R.p_in, r);
        if (R.variant == V_SEM) {
            ret = fastsync_sem_timedwait(&S, &d);
        } else {
            fastsync_mutex_lock(&M);
            ret = fastsync_cond_timedwait(&C, &M, &d);
            fastsync_mutex_unlock(&M);
        }
        R.p_late = test_clock_ns(CLOCK_MONOTONIC) >= deadline;
        R.p_ret = ret;
        atomic_store(&R.p_done, r); /* seq_cst (release): publishes the two above */
    }
    return NULL;
}

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("S", &S);
    test_dump_event("E", &E);
    test_dump_cond("C", &C);
    diag("%s rounds, round %d: W in %d, done %d, epilogue %d; P in %d, done %d; table sleepers %d "
         "(relaxed snapshots)", variant_name[R.variant], atomic_load(&R.round), atomic_load(&R.w_in),
         atomic_load(&R.w_done), atomic_load(&R.w_done2), atomic_load(&R.p_in), atomic_load(&R.p_done),
         tsleepers);
}

/* Polls until pred() (a hang is the watchdog's). */
#define UNTIL(pred)                                                                             \
    do {                                                                                        \
        while (!(pred)) test_sleep_ns(20000);                                                   \
    } while (0)

/* W asleep in its wait (the kernel: in futex_waitv after `waitvs0` multi-waits). */
static void until_w_asleep(int r, unsigned long waitvs0)
{
    if (use_table) {
        UNTIL(table_has(R.target, ROLE_W));
        return;
    }
    UNTIL(atomic_load(&R.w_in) == r && atomic_load(&test_waitvs_made) > waitvs0);
    UNTIL(test_until_asleep(atomic_load(&R.w_tid), 2000000)); /* without /proc: 2 ms */
}

/* P registered with the object and asleep. */
static void until_p_asleep(int r)
{
    UNTIL(atomic_load(&R.p_in) == r &&
          (R.variant == V_SEM ? test_sem_waiters(&S) : test_cond_waiters(&C)) == 2);
    if (use_table) {
        UNTIL(table_has(R.target, ROLE_P));
        return;
    }
    UNTIL(test_until_asleep(atomic_load(&R.p_tid), 2000000));
}

static void send_one(void)
{
    if (R.variant == V_SEM)
        fastsync_sem_post(&S);
    else
        fastsync_cond_signal(&C);
}

static void run(const char *name, bool pinned, int variant, double ms)
{
    test_pin_all(pinned);
    R.variant = variant;
    fastsync_sem_init(&S, 0, 0);
    fastsync_event_init(&E, false, 0);
    fastsync_cond_init(&C, 0);
    fastsync_mutex_init(&M, 0);
    R.target = variant == V_SEM ? fastsync__sem_futex(&S) : fastsync__cv_futex(&C);
    atomic_store(&R.quit, 0);
    atomic_store(&R.go_w, 0);
    atomic_store(&R.go_p, 0);
    atomic_store(&R.go_w2, 0);
    atomic_store(&R.w_in, 0);
    atomic_store(&R.w_done, 0);
    atomic_store(&R.w_done2, 0);
    atomic_store(&R.p_in, 0);
    atomic_store(&R.p_done, 0);
    atomic_store(&R.forwards, 0);
    atomic_store(&R.absorbed, 0);
    atomic_store(&R.round, 0);
    uint64_t rng = test_stream(2);
    unsigned long waitvs0 = atomic_load(&test_waitvs_made);
    unsigned long by_order[2] = { 0 }, won[2] = { 0 }, absorbed = 0, trapped = 0, unknown = 0, sent = 0,
                  bad_w = 0, bad_p = 0, bad_epi = 0, early = 0;

    test_watchdog_start(dump, NULL);
    pthread_t w = test_thread_start(w_main, NULL), p = test_thread_start(p_main, NULL);
    uint64_t end = test_box_end(ms);
    int r = 0;
    while (test_box_more(end, (unsigned long)r)) {
        r++;
        atomic_store(&R.round, r);
        fastsync_event_reset(&E);
        unsigned long v0 = atomic_load(&test_waitvs_made);
        atomic_store(&R.armed, r);
        atomic_store(&R.go_w, r);
        until_w_asleep(r, v0);
        atomic_store(&R.go_p, r);
        until_p_asleep(r);

        int order = test_rand(&rng) % 2 == 0 ? SET_FIRST : POST_FIRST;
        by_order[order]++;
        int probe = -1; /* the kernel: P still asleep after the post (1), woken (0), unknown */
        atomic_store(&R.watch, r);
        if (order == SET_FIRST) fastsync_event_set(&E);
        send_one();
        sent++;
        if (!use_table) {
            int st = atomic_load(&R.p_done) == r ? 0 : test_thread_state(atomic_load(&R.p_tid));
            probe = st < 0 ? -1 : st == 'S' && atomic_load(&R.p_done) != r;
        }
        if (order == POST_FIRST) fastsync_event_set(&E);
        atomic_store(&R.watch, 0);
        atomic_store(&R.armed, 0);

        UNTIL(atomic_load(&R.w_done) == r);
        int idx = R.w_idx;
        if (R.w_ret != 0 || idx < 0 || idx > 1 || (order == SET_FIRST && idx != 0)) {
            if (bad_w++ < 5)
                diag("%s, %s round %d: W's wait returned %d, index %d (%s)", name, variant_name[variant], r,
                     R.w_ret, idx, order == SET_FIRST ? "E set first" : "posted first");
            break;
        }
        won[idx]++;
        bool hit = use_table ? atomic_load(&R.absorbed) == r : probe == 1;
        absorbed += hit;
        trapped += hit && idx == 0;
        unknown += !use_table && probe < 0;
        if (idx == 1) {
            /* W took the token (claimed the signal): P is owed another, and has not returned */
            if (atomic_load(&R.p_done) == r) early++;
            send_one();
            sent++;
        }
        UNTIL(atomic_load(&R.p_done) == r); /* within P's deadline, or the watchdog's */
        if (R.p_ret != 0 || R.p_late) {
            if (bad_p++ < 5)
                diag("%s, %s round %d: P returned %d%s; W won index %d (%s), its wake %s", name,
                     variant_name[variant], r, R.p_ret, R.p_late ? " at its deadline" : "", idx,
                     order == SET_FIRST ? "E set first" : "posted first",
                     hit ? "absorbed by W" : "not seen absorbed");
            break; /* each further round would cost P's deadline again */
        }
        if (variant == V_COND && idx == 0) {
            atomic_store(&R.go_w2, r);
            UNTIL(atomic_load(&R.w_done2) == r);
            if (R.w_epi != ETIMEDOUT && bad_epi++ < 5)
                diag("%s, condvar round %d: W's ticket, looked at again, gave %d", name, r, R.w_epi);
        }
    }
    atomic_store(&R.quit, 1);
    test_thread_join(w);
    test_thread_join(p);
    test_watchdog_stop();

    diag("%s, %s: %d rounds (E set first %lu, posted first %lu); W won E %lu, %s %lu; the post's wake "
         "reached W %lu times (%s), %lu of them with W winning E (the trap)%s; W passed on %lu wakes; "
         "%lu multi-waits", name, variant_name[variant], r, by_order[SET_FIRST], by_order[POST_FIRST],
         won[0], variant == V_SEM ? "S" : "its ticket", won[1], absorbed,
         use_table ? "the table's count" : "P seen asleep after it", trapped,
         unknown ? " (some rounds unknown: /proc unreadable)" : "",
         atomic_load(&R.forwards), atomic_load(&test_waitvs_made) - waitvs0);
    ok(r > 0, "%s, %s: rounds ran", name, variant_name[variant]);
    is_int(bad_w, 0, "%s, %s: W's wait returned 0 every round, with index 0 whenever E was set first", name,
           variant_name[variant]);
    is_int(bad_p, 0, "%s, %s: P returned 0 before its deadline every round", name, variant_name[variant]);
    is_int(early, 0, "%s, %s: P never returned while W held the round's token or signal", name,
           variant_name[variant]);
    is_int(won[0] + won[1], r, "%s, %s: W won exactly one entry per round", name, variant_name[variant]);
    if (variant == V_SEM) {
        is_int(fastsync_sem_getvalue(&S), 0, "%s, semaphore: each of the %lu tokens was taken once", name, sent);
        is_int(test_sem_waiters(&S), 0, "%s, semaphore: no waiter left registered", name);
    } else {
        is_int(bad_epi, 0, "%s, condvar: W's ticket, after E won and P returned, had no signal left", name);
        is_int(test_cond_waiters(&C), 0, "%s, condvar: no ticket left registered", name);
        is_int(test_cond_pending(&C), 0, "%s, condvar: each of the %lu signals was claimed once", name, sent);
    }
    if (use_table && variant == V_COND && FASTSYNC__CV_WAKE_ONE != 1)
        /* the Windows backend: a signal wakes every sleeper, W and P alike (fastsync.h,
         * FASTSYNC__CV_WAKE_ONE), so no wake of one can reach W alone */
        skip("a signal wakes every sleeper on this backend: no wake of one for W to absorb",
             "%s, condvar: every round, the post's wake reached W while P slept (the table)", name);
    else if (use_table)
        is_int(absorbed, r, "%s, %s: every round, the post's wake reached W while P slept (the table)", name,
               variant_name[variant]);
}

int main(void)
{
    test_init();
    main_thread = pthread_self();
    use_table = !kernel_waitv() || test_waitv_fallback;
    diag("%s", use_table ? "the fallback, through the test's wait table (W's sleep woken first)"
                         : "futex_waitv, the kernel's order (the oldest sleeper first)");
    if (use_table) {
        test_wait_override = table_wait;
        test_wake_override = table_wake;
    }
    test_after_futex_wake = count_forward;
    run("spread", false, V_SEM, 150);
    run("pinned", true, V_SEM, 150);
    run("spread", false, V_COND, 150);
    run("pinned", true, V_COND, 150);
    test_pin_all(false);
    return done_testing();
}
