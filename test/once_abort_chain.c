/* SPDX-License-Identifier: MIT */
/* once_abort_chain: C++ call_once's rule for an initialiser that throws, through begin and
 * abort. Each round, 8 threads call begin on one fresh once; whoever gets 1 initialises, and
 * the first K initialisations of the round (K from 0 to 7, drawn per round) abort, the next
 * one commits: a thread whose initialisation aborted calls begin again (and may sleep). The
 * chain's state is plain (the attempts so far, the record): only an initialiser touches it,
 * so each initialiser must see what the aborted ones left (abort's release, begin's acquire)
 * and none may overlap another. An initialiser dawdles sometimes (a yield, or 50 us, so
 * that the others sleep and the abort must wake them). Every caller returns only once the
 * commit is made, and reads the record written before it. Private and shared onces, until
 * the time box ends, spread over the CPUs, then with every thread pinned to one CPU; also
 * under the fault injection (suite 'inject').
 * Checked per round: exactly K aborts and 1 commit (begin said 1 exactly K + 1 times); every
 * begin that said 0 came after the commit and read the record; the futex wakes on the once's
 * word (the harness's wake override) at most one per abort or commit; no thread left asleep
 * (the watchdog).
 * Fails with: an abort that leaves the once done (fewer begins said 1), running (the watchdog)
 * or that wakes no sleeper (the watchdog); two initialisers at once (an attempt counted twice
 * or lost: the counts, and ThreadSanitizer); abort without release or the taking begin
 * without acquire (ThreadSanitizer: a race on the attempts); a begin that says 0 before the
 * commit. */
#include "harness.h"

#define NT 8

static struct {
    /* the round's once; relaxed: set while the callers wait at the start semaphore, which
     * orders it for them; the wake override only compares it with a word's address */
    _Atomic(fastsync_once_t *) once;
    int k;                       /* aborts wanted this round: read by the initialisers */
    int attempts, commits;       /* plain: written by the initialisers only */
    int committed, rec[4];       /* plain: the record, written before the commit */
    int round;
    _Atomic(int) ones;           /* begins that said 1; relaxed: a count, read after the round */
    _Atomic(unsigned long) wakes; /* on the once's word; relaxed: (the same) */
    _Atomic(bool) stop;          /* relaxed: read after the start semaphore, which orders it */
    _Atomic(int) phase[NT];      /* relaxed: for the dump: 0 idle, 1 in begin, 2 initialising */
    fastsync_sem_t start, finished;
    unsigned long early[NT];     /* begins that said 0 before the commit, or with a bad record */
    uint64_t rng[NT];
} g;

static fastsync_once_t onces[2];

static void dump(void *unused)
{
    (void)unused;
    diag("round %d: K %d, attempts %d, commits %d", g.round, g.k, g.attempts, g.commits);
    fastsync_once_t *o = atomic_load_explicit(&g.once, memory_order_relaxed);
    if (o) test_dump_once("this round's once", o);
    for (int i = 0; i < NT; i++)
        diag("thread %d: %s", i, (const char *[]){ "idle", "in begin", "initialising" }[atomic_load_explicit(&g.phase[i], memory_order_relaxed)]);
}

static void wake_counted(void *word, int n, int shared)
{
    if (word == (void *)atomic_load_explicit(&g.once, memory_order_relaxed))
        atomic_fetch_add_explicit(&g.wakes, 1, memory_order_relaxed);
    fastsync__wake_sys(word, n, shared);
}

static int wait_plain(void *word, uint32_t expected, int shared, clockid_t clock, const struct timespec *abstime)
{
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void dawdle(uint64_t *rng)
{
    unsigned r = (unsigned)(test_rand(rng) % 4);
    if (r == 0) sched_yield();
    else if (r == 1) test_sleep_ns(50000);
}

static void *caller(void *p)
{
    int me = (int)(intptr_t)p;
    for (;;) {
        fastsync_sem_wait(&g.start);
        if (atomic_load_explicit(&g.stop, memory_order_relaxed)) return NULL;
        fastsync_once_t *o = atomic_load_explicit(&g.once, memory_order_relaxed);
        for (;;) {
            atomic_store_explicit(&g.phase[me], 1, memory_order_relaxed);
            if (fastsync_once_begin(o) == 0) {
                if (g.committed != g.round || g.rec[0] != g.round || g.rec[3] != g.round + 3) g.early[me]++;
                break;
            }
            atomic_store_explicit(&g.phase[me], 2, memory_order_relaxed);
            atomic_fetch_add_explicit(&g.ones, 1, memory_order_relaxed);
            dawdle(&g.rng[me]);
            if (g.attempts < g.k) {
                g.attempts++;
                fastsync_once_abort(o); /* and try again, as a caller whose fn threw may */
                continue;
            }
            g.commits++;
            for (int i = 0; i < 4; i++) g.rec[i] = g.round + i;
            g.committed = g.round;
            fastsync_once_commit(o);
            break;
        }
        atomic_store_explicit(&g.phase[me], 0, memory_order_relaxed);
        fastsync_sem_post(&g.finished);
    }
}

static void run(const char *name, bool pinned, double ms)
{
    test_pin_all(pinned);
    atomic_store_explicit(&g.stop, false, memory_order_relaxed); /* relaxed: before the threads */
    memset(g.early, 0, sizeof g.early);
    uint64_t rng = test_stream(NT + (pinned ? 1 : 0));
    pthread_t t[NT];
    for (int i = 0; i < NT; i++) t[i] = test_thread_start(caller, (void *)(intptr_t)i);
    unsigned long rounds = 0, wrong_aborts = 0, wrong_commits = 0, wrong_ones = 0, too_many_wakes = 0;
    unsigned long aborts = 0, wakes = 0, shared_rounds = 0, by_k[NT] = { 0 };
    uint64_t end = test_box_end(ms);
    while (test_box_until(end, rounds, by_k[NT - 1] > 0)) {
        bool shared = rounds % 2 && FASTSYNC_HAS_SHARED;
        fastsync_once_init(&onces[rounds % 2], shared ? TEST_SHARED : 0);
        atomic_store_explicit(&g.once, &onces[rounds % 2], memory_order_relaxed);
        shared_rounds += shared;
        g.round = (int)rounds + 1;
        g.k = (int)(test_rand(&rng) % NT);
        g.attempts = g.commits = g.committed = 0;
        atomic_store_explicit(&g.ones, 0, memory_order_relaxed);
        atomic_store_explicit(&g.wakes, 0, memory_order_relaxed);
        fastsync_sem_post_n(&g.start, NT);
        for (int i = 0; i < NT; i++) fastsync_sem_wait(&g.finished);
        rounds++;
        by_k[g.k]++;
        wrong_aborts += g.attempts != g.k;
        wrong_commits += g.commits != 1;
        wrong_ones += atomic_load_explicit(&g.ones, memory_order_relaxed) != g.k + 1;
        unsigned long w = atomic_load_explicit(&g.wakes, memory_order_relaxed);
        too_many_wakes += w > (unsigned long)g.k + 1;
        aborts += (unsigned long)g.k;
        wakes += w;
    }
    atomic_store_explicit(&g.stop, true, memory_order_relaxed);
    fastsync_sem_post_n(&g.start, NT);
    for (int i = 0; i < NT; i++) test_thread_join(t[i]);
    unsigned long early = 0;
    for (int i = 0; i < NT; i++) early += g.early[i];
    diag("%s: %lu rounds (%lu shared), %lu aborts, %lu wakes on the onces; rounds by K 0..7: %lu %lu %lu %lu %lu %lu %lu %lu",
         name, rounds, shared_rounds, aborts, wakes, by_k[0], by_k[1], by_k[2], by_k[3], by_k[4], by_k[5], by_k[6],
         by_k[7]);
    is_int(wrong_aborts, 0, "%s: exactly K aborts each round", name);
    is_int(wrong_commits, 0, "%s: exactly 1 commit each round", name);
    is_int(wrong_ones, 0, "%s: begin said 1 exactly K + 1 times each round", name);
    is_int(early, 0, "%s: every begin that said 0 came after the commit and read its record", name);
    is_int(too_many_wakes, 0, "%s: at most one wake for each abort and the commit", name);
}

int main(void)
{
    test_init();
    test_wait_override = wait_plain;
    test_wake_override = wake_counted;
    fastsync_sem_init(&g.start, 0, 0);
    fastsync_sem_init(&g.finished, 0, 0);
    for (int i = 0; i < NT; i++) g.rng[i] = test_stream((unsigned)i);
    test_watchdog_start(dump, NULL);
    run("spread", false, 150);
    run("pinned", true, 150);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
