/* SPDX-License-Identifier: MIT */
/* cond_delivery_stress: the delivery rules (issue 16) under real concurrency, every round's
 * log checked by cond_spec.h. Waiters of two kinds on one condvar c and one fastsync_mutex_t
 * m: some in fastsync_cond_wait (or timedwait, an hour ahead) on m; some by ticket: each
 * registers under m, and either cancels it under m (after a random pause outside m, in which
 * signals may call it), or awaits it (or timedawaits, an hour ahead) outside m. One or two
 * signalers make random signals and broadcasts (1 in 8) under m. Every REG, SIG, BC, CANCEL
 * and RET is logged under m, in the same critical section as the call (a wait registers
 * before it unlocks m, and its RET is logged with m held again; an await's RET once it has
 * returned, which puts it no earlier than the return itself: a called ticket stays called),
 * so the log is in the condvar's order.
 * In rounds: before each, this thread picks the round's waiters, how many tickets each
 * ticket waiter cancels before the one it awaits (8 tickets a round at most), how many
 * signals and broadcasts the signalers may make, and the pauses; once every waiter of the
 * round has registered its last ticket it broadcasts (rule 1: every wait then returns 0),
 * and when all have returned it checks the round's log with cond_spec.h: some delivery of
 * the signals must explain every result. Exact: no round may fail (the first few failing
 * logs are printed); rounds, signals, broadcasts, cancels and returns are counted in diag
 * lines; the condvar ends with no ticket (destroy 0).
 * No timeouts: a timeout happens inside the wait, at no point that can be logged against
 * the signals and broadcasts under m (the one deadline, an hour ahead, is never reached:
 * an ETIMEDOUT would be logged and judged as a look there).
 * Spread over the CPUs (3 + 3 waiters, one signaler), pinned to one CPU, and with more
 * threads than CPUs (4 + 4 waiters, two signalers); 1 s each. */
#include "harness.h"
#include "cond_spec.h"

enum { TICKETS_ROUND = 8, WAITERS_MAX = 8, SIGNALERS_MAX = 2, LOG_MAX = 64, BUDGET_MAX = 12 };
enum { OPEN, CLOSED };

static fastsync_cond_t c = FASTSYNC_COND_INIT;
static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;

/* The round, under m (plain). */
static struct cs_event logv[LOG_MAX];
static int nlog, next_id, final_registered, returned, phase = CLOSED, budget;
static int participants;

/* Each waiter's part in the round: written and read under the gate's lock. */
struct plan {
    bool active;
    int cancels;  /* ticket waiters: tickets cancelled before the one awaited */
    int pause;    /* the pauses' scale: 0 none .. 3 long */
    bool timed;   /* timedwait / timedawait an hour ahead */
};
static struct plan plans[WAITERS_MAX];
static int sig_pause; /* the signalers' pause scale this round */

/* The gate: the round number and the stop flag (pthread primitives, not the code under test). */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_round;
static bool gate_stop;

static _Atomic(unsigned long) n_sig, n_bc, n_cancel, n_ret_wait, n_ret_ticket, bad_results;

static void dump(void *unused)
{
    (void)unused;
    test_dump_cond("condvar", &c);
    test_dump_mutex("mutex", &m);
    /* (a snapshot without m: the holder may be the one stuck) */
    diag("round %d: phase %s, %d of %d registered their last ticket, %d returned; the log so far:", gate_round,
         phase == OPEN ? "open" : "closed", final_registered, participants, returned);
    cs_print_log(logv, (size_t)(nlog < LOG_MAX ? nlog : LOG_MAX), -1);
}

static void log_event(int kind, int ticket, int result)
{
    if (nlog >= LOG_MAX) bail("the round's log is full (%d events)", LOG_MAX);
    logv[nlog].kind = kind;
    logv[nlog].ticket = ticket;
    logv[nlog].result = result;
    nlog++;
}

static void pause_for(uint64_t *rng, int scale)
{
    if (scale == 0) return;
    unsigned x = (unsigned)(test_rand(rng) % 16);
    if (x < 4) return;
    if (x < 10) {
        sched_yield();
    } else if (x < 14 || scale < 3) {
        for (volatile unsigned i = 0, n = (unsigned)(test_rand(rng) % (200u * (unsigned)scale)); i < n; i++) {}
    } else {
        test_sleep_ns(20000);
    }
}

/* Waits for a round after `last`; returns it (with waiter i's plan, i >= 0, and the
 * signalers' pause), or -1 to stop. */
static int gate_wait(int last, int i, struct plan *p, int *spause)
{
    pthread_mutex_lock(&gate_lock);
    while (!gate_stop && gate_round == last) pthread_cond_wait(&gate_cond, &gate_lock);
    int r = gate_stop ? -1 : gate_round;
    if (i >= 0) *p = plans[i];
    *spause = sig_pause;
    pthread_mutex_unlock(&gate_lock);
    return r;
}

/* This thread's poll: a yield, and a short sleep now and then (every thread may be on its CPU). */
static void poll_pause(unsigned *spins)
{
    if (++*spins % 16 == 0) test_sleep_ns(20000);
    else sched_yield();
}

static struct timespec far_deadline(void) { return fastsync_deadline_in(3600 * 1000000000ull); }

static void *mutex_waiter(void *arg)
{
    int i = (int)(intptr_t)arg;
    uint64_t rng = test_stream((unsigned)(100 + i));
    struct plan p = { 0 };
    int spause = 0;
    for (int r = 0; (r = gate_wait(r, i, &p, &spause)) >= 0;) {
        if (!p.active) continue;
        pause_for(&rng, p.pause);
        fastsync_mutex_lock(&m);
        int id = next_id++;
        log_event(CS_REG, id, 0);
        final_registered++;
        int ret;
        if (p.timed) {
            struct timespec d = far_deadline();
            ret = fastsync_cond_timedwait(&c, &m, &d);
        } else {
            ret = fastsync_cond_wait(&c, &m);
        }
        log_event(CS_RET, id, ret);
        returned++;
        fastsync_mutex_unlock(&m);
        /* relaxed (the counts): read after the joins */
        atomic_fetch_add_explicit(&n_ret_wait, 1, memory_order_relaxed);
        if (ret != 0) atomic_fetch_add_explicit(&bad_results, 1, memory_order_relaxed);
    }
    return NULL;
}

static void *ticket_waiter(void *arg)
{
    int i = (int)(intptr_t)arg;
    uint64_t rng = test_stream((unsigned)(200 + i));
    struct plan p = { 0 };
    int spause = 0;
    for (int r = 0; (r = gate_wait(r, i, &p, &spause)) >= 0;) {
        if (!p.active) continue;
        fastsync_cond_ticket_t t;
        int id;
        for (int k = 0; k < p.cancels; k++) {
            pause_for(&rng, p.pause);
            fastsync_mutex_lock(&m);
            fastsync_cond_register(&c, &t);
            id = next_id++;
            log_event(CS_REG, id, 0);
            fastsync_mutex_unlock(&m);
            pause_for(&rng, p.pause + 1); /* signals may call it meanwhile */
            pause_for(&rng, p.pause + 1);
            fastsync_mutex_lock(&m);
            int ret = fastsync_cond_cancel(&c, &t);
            log_event(CS_CANCEL, id, ret);
            fastsync_mutex_unlock(&m);
            atomic_fetch_add_explicit(&n_cancel, 1, memory_order_relaxed);
            if (ret != 0) atomic_fetch_add_explicit(&bad_results, 1, memory_order_relaxed);
        }
        pause_for(&rng, p.pause);
        fastsync_mutex_lock(&m);
        fastsync_cond_register(&c, &t);
        id = next_id++;
        log_event(CS_REG, id, 0);
        final_registered++;
        fastsync_mutex_unlock(&m);
        int ret;
        if (p.timed) {
            struct timespec d = far_deadline();
            ret = fastsync_cond_timedawait(&c, &t, &d);
        } else {
            ret = fastsync_cond_await(&c, &t);
        }
        fastsync_mutex_lock(&m);
        log_event(CS_RET, id, ret);
        returned++;
        fastsync_mutex_unlock(&m);
        atomic_fetch_add_explicit(&n_ret_ticket, 1, memory_order_relaxed);
        if (ret != 0) atomic_fetch_add_explicit(&bad_results, 1, memory_order_relaxed);
    }
    return NULL;
}

static void *signaler(void *arg)
{
    int i = (int)(intptr_t)arg;
    uint64_t rng = test_stream((unsigned)(300 + i));
    struct plan unused = { 0 };
    int scale = 0;
    for (int r = 0; (r = gate_wait(r, -1, &unused, &scale)) >= 0;) {
        for (;;) {
            pause_for(&rng, scale);
            fastsync_mutex_lock(&m);
            if (phase != OPEN || budget == 0) {
                fastsync_mutex_unlock(&m);
                break;
            }
            budget--;
            if (test_rand(&rng) % 8 == 0) {
                fastsync_cond_broadcast(&c);
                log_event(CS_BC, 0, 0);
                atomic_fetch_add_explicit(&n_bc, 1, memory_order_relaxed);
            } else {
                fastsync_cond_signal(&c);
                log_event(CS_SIG, 0, 0);
                atomic_fetch_add_explicit(&n_sig, 1, memory_order_relaxed);
            }
            fastsync_mutex_unlock(&m);
        }
    }
    return NULL;
}

static void run(const char *name, bool pinned, int mutex_waiters, int ticket_waiters, int signalers)
{
    test_pin_all(pinned);
    int waiters = mutex_waiters + ticket_waiters;
    atomic_store(&n_sig, 0);
    atomic_store(&n_bc, 0);
    atomic_store(&n_cancel, 0);
    atomic_store(&n_ret_wait, 0);
    atomic_store(&n_ret_ticket, 0);
    atomic_store(&bad_results, 0);
    pthread_mutex_lock(&gate_lock);
    gate_round = 0;
    gate_stop = false;
    pthread_mutex_unlock(&gate_lock);
    pthread_t th[WAITERS_MAX + SIGNALERS_MAX];
    for (int i = 0; i < waiters; i++)
        th[i] = test_thread_start(i < mutex_waiters ? mutex_waiter : ticket_waiter, (void *)(intptr_t)i);
    for (int k = 0; k < signalers; k++) th[waiters + k] = test_thread_start(signaler, (void *)(intptr_t)k);

    uint64_t rng = test_stream(400), box = test_box_end(1000);
    unsigned long rounds = 0, failed = 0, tickets = 0;
    while (test_box_more(box, rounds)) {
        /* the round's plan */
        struct plan next[WAITERS_MAX];
        int left = TICKETS_ROUND, active = 0;
        for (int i = 0; i < waiters; i++) {
            struct plan *p = &next[i];
            p->active = left > 0 && test_rand(&rng) % 4 != 0;
            p->cancels = 0;
            if (p->active) {
                left--;
                if (i >= mutex_waiters) {
                    int k = (int)(test_rand(&rng) % 3);
                    p->cancels = k < left ? k : left;
                    left -= p->cancels;
                }
                active++;
            }
            p->pause = (int)(test_rand(&rng) % 4);
            p->timed = test_rand(&rng) % 4 == 0;
        }
        if (active == 0) {
            next[0].active = true;
            next[0].cancels = 0;
            active = 1;
        }
        int next_sig_pause = (int)(test_rand(&rng) % 4);
        fastsync_mutex_lock(&m);
        nlog = next_id = final_registered = returned = 0;
        participants = active;
        budget = (int)(test_rand(&rng) % (BUDGET_MAX + 1));
        phase = OPEN;
        fastsync_mutex_unlock(&m);
        pthread_mutex_lock(&gate_lock);
        memcpy(plans, next, sizeof next);
        sig_pause = next_sig_pause;
        gate_round++;
        pthread_cond_broadcast(&gate_cond);
        pthread_mutex_unlock(&gate_lock);
        /* every waiter registered its last ticket: the round's broadcast */
        unsigned spins = 0;
        for (;;) {
            fastsync_mutex_lock(&m);
            if (final_registered == participants) {
                phase = CLOSED;
                fastsync_cond_broadcast(&c);
                log_event(CS_BC, 0, 0);
                fastsync_mutex_unlock(&m);
                break;
            }
            fastsync_mutex_unlock(&m);
            poll_pause(&spins);
        }
        atomic_fetch_add_explicit(&n_bc, 1, memory_order_relaxed);
        /* every wait returned (rule 1; a hang is the watchdog's) */
        for (;;) {
            fastsync_mutex_lock(&m);
            bool all = returned == participants;
            fastsync_mutex_unlock(&m);
            if (all) break;
            poll_pause(&spins);
        }
        /* m orders the waiters' writes to the log before this read */
        struct cs_report why;
        int v = cs_check(logv, (size_t)nlog, &why);
        tickets += (unsigned long)next_id;
        if (v != CS_EXPLAINED) {
            if (failed++ < 3) {
                diag("%s: round %lu not explained by the rules (seed %" PRIu64 "): %s", name, rounds + 1, test_seed(),
                     why.msg);
                cs_print_log(logv, (size_t)nlog, why.furthest);
            }
        }
        rounds++;
    }
    pthread_mutex_lock(&gate_lock);
    gate_stop = true;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    for (int i = 0; i < waiters + signalers; i++) test_thread_join(th[i]);
    diag("%s: %lu rounds, %lu tickets; %lu signals, %lu broadcasts (%lu of them the rounds' last), %lu cancels; "
         "%lu waits and %lu awaits returned",
         name, rounds, tickets, atomic_load(&n_sig), atomic_load(&n_bc), rounds, atomic_load(&n_cancel),
         atomic_load(&n_ret_wait), atomic_load(&n_ret_ticket));
    is_int(failed, 0, "%s: every round's log explained by the delivery rules (cond_spec.h)", name);
    is_int(atomic_load(&bad_results), 0, "%s: every wait, await and cancel returned 0", name);
    is_int(fastsync_cond_destroy(&c), 0, "%s: no ticket left (destroy 0)", name);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    run("spread", false, 3, 3, 1);
    run("pinned", true, 3, 3, 1);
    run("oversubscribed", false, 4, 4, SIGNALERS_MAX);
    test_watchdog_stop();
    return done_testing();
}
