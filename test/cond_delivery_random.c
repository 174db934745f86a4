/* SPDX-License-Identifier: MIT */
/* cond_delivery_random: random one-thread sequences of register, signal, broadcast, cancel
 * and look (a timedawait whose deadline has passed) over at most 8 live tickets of one
 * condvar, each run against the header and
 *   (a) checked by cond_spec.h: some delivery of the signals explains every result (the
 *       issue's rules 1-5);
 *   (b) compared, call by call, with a reference model of the contract's group semantics,
 *       which in one thread predicts every result:
 *         tickets are in groups by registration; a new ticket joins the NEXT group; the
 *         CURRENT group has S tickets and holds P signals (U = S - P have none);
 *         signal: if U == 0 the next group first becomes current; then (if U > 0) P += 1,
 *           and if now U == 0 the group is released by the signal (each of its tickets
 *           returns 0) and the next group becomes current;
 *         broadcast: both groups released (with no uncalled ticket: no effect);
 *         look: a next-group ticket ETIMEDOUT; a current-group ticket 0 if P > 0 (it claims:
 *           P -= 1, S -= 1), else ETIMEDOUT (S -= 1); a released ticket 0;
 *         cancel (0): a next-group ticket leaves; a current-group ticket leaves the group's
 *           signals to the others (rule 5(a): S -= 1, P kept while U > 0); a ticket of a group
 *           released by a signal: the first such cancel of its group passes one signal to
 *           the group after it if that group is still current and has a ticket without one
 *           (rule 5(b): P += 1 there, which may release it), any other drops it; a ticket
 *           released by a broadcast, or by anything but a signal, passes nothing (5c).
 *       The contract leaves open the moment the next group becomes current when the current
 *       group loses its last ticket without a signal otherwise than by a signal: by looks
 *       and cancels that empty it, by a cancel that leaves every ticket in it with a signal,
 *       by a pass-on that completes it. At once ("eager") or at the next signal ("lazy"):
 *       that decides which group a ticket registered in between joins, so the model runs
 *       all 8 readings side by side; a sequence passes (b) if some reading predicts every
 *       result of it, and the manual's reading (a group filled by a cancel or a pass-on is
 *       released at once, an emptied one waits for the next signal: READING_MANUAL) must
 *       predict every sequence.
 *       (A group completed by a cancel or a pass-on is not "released by a signal" for 5b:
 *       its pass-on could reach a ticket registered after every signal it holds, which rule
 *       2 forbids.)
 * Each reading's own predictions are also run through cond_spec.h (the model must obey the
 * rules it models), and every sequence must leave the condvar with no ticket (destroy 0).
 * A sequence is 8 to 64 calls in a mix of its own (register 15-40%, signal 15-40%, broadcast
 * 0-8%, cancel 5-30%, the rest looks), then a look of every ticket left. Sequences run for a
 * time box (1 s, at least TEST_MIN_ROUNDS: several thousand); sequence i of a run comes from
 * test_stream(i). On a failure (the first 3 printed): the seed, the sequence's number, the
 * log with the header's results, and each reading's first disagreement.
 * First, cond_spec.h's own test (hand-written logs it must explain or reject), and the
 * model on the contract's own cases (R1, R3, 5a, 5b, 5c), every reading. */
#include "harness.h"
#include "cond_spec.h"

enum { LIVE_MAX = 8, OPS_MAX = 64, LOG_MAX = OPS_MAX + LIVE_MAX + 8, IDS_MAX = LOG_MAX, REC_MAX = LOG_MAX };
enum { RD_EAGER_EMPTY = 1, RD_EAGER_FILLED = 2, RD_EAGER_PASS = 4, READINGS = 8,
       READING_MANUAL = RD_EAGER_FILLED | RD_EAGER_PASS };

/* ---- the reference model ---- */

enum { M_FREE, M_NEXT, M_CUR, M_REL };
enum { REL_SIGNAL, REL_BROADCAST, REL_FILLED, REL_PASSED };

struct model {
    int reading;                   /* RD_* */
    unsigned char st[IDS_MAX];     /* M_* per ticket id */
    unsigned char rec_of[IDS_MAX]; /* M_REL: the release that released it */
    struct {
        unsigned char kind; /* REL_* */
        unsigned char pass; /* REL_SIGNAL: its first cancel has not come yet */
        unsigned succ;      /* the group that became current at the release */
    } rec[REC_MAX];
    int nrec;
    unsigned cur; /* the current group's number */
    int S, P;     /* the current group's tickets, and the signals it holds */
};

static const char *reading_name(int r)
{
    static char buf[READINGS][64];
    snprintf(buf[r], sizeof buf[r], "emptied:%s filled-by-cancel:%s filled-by-pass:%s",
             r & RD_EAGER_EMPTY ? "eager" : "lazy", r & RD_EAGER_FILLED ? "eager" : "lazy",
             r & RD_EAGER_PASS ? "eager" : "lazy");
    return buf[r];
}

static void m_init(struct model *m, int reading)
{
    memset(m, 0, sizeof *m);
    m->reading = reading;
}

/* The next group becomes current. */
static void m_promote(struct model *m)
{
    m->cur++;
    m->S = m->P = 0;
    for (int i = 0; i < IDS_MAX; i++) {
        if (m->st[i] == M_NEXT) {
            m->st[i] = M_CUR;
            m->S++;
        }
    }
}

/* The current group is released (kind REL_*), the next becomes current. */
static void m_release(struct model *m, int kind)
{
    int r = m->nrec++;
    m->rec[r].kind = (unsigned char)kind;
    m->rec[r].pass = kind == REL_SIGNAL;
    m->rec[r].succ = m->cur + 1;
    for (int i = 0; i < IDS_MAX; i++) {
        if (m->st[i] == M_CUR) {
            m->st[i] = M_REL;
            m->rec_of[i] = (unsigned char)r;
        }
    }
    m_promote(m);
}

/* The current group has just lost a ticket without a signal, by a cancel or a look. */
static void m_uncovered_left(struct model *m)
{
    if (m->S != m->P) return;
    if (m->S == 0) {
        if (m->reading & RD_EAGER_EMPTY) m_promote(m);
    } else if (m->reading & RD_EAGER_FILLED) {
        m_release(m, REL_FILLED);
    }
}

static int m_register(struct model *m, int id)
{
    m->st[id] = M_NEXT;
    return 0;
}

static int m_signal(struct model *m)
{
    if (m->S == m->P) { /* no ticket without a signal here: the next group first */
        if (m->S > 0) m_release(m, REL_FILLED);
        else m_promote(m);
    }
    if (m->S == m->P) return 0; /* no uncalled ticket: no effect */
    m->P++;
    if (m->S == m->P) m_release(m, REL_SIGNAL);
    return 0;
}

static int m_broadcast(struct model *m)
{
    int uncalled = m->S - m->P;
    for (int i = 0; i < IDS_MAX; i++) uncalled += m->st[i] == M_NEXT;
    if (uncalled == 0) return 0;
    int r = m->nrec++;
    m->rec[r].kind = REL_BROADCAST;
    m->rec[r].pass = 0;
    m->rec[r].succ = 0;
    for (int i = 0; i < IDS_MAX; i++) {
        if (m->st[i] == M_CUR || m->st[i] == M_NEXT) {
            m->st[i] = M_REL;
            m->rec_of[i] = (unsigned char)r;
        }
    }
    m->cur++; /* a new current group, empty, and an empty next one */
    m->S = m->P = 0;
    return 0;
}

static int m_cancel(struct model *m, int id)
{
    int st = m->st[id];
    m->st[id] = M_FREE;
    if (st == M_CUR) {
        if (m->S > m->P) { /* 5a: the group's signals stay with the others */
            m->S--;
            m_uncovered_left(m);
        } else { /* every other ticket has its own signal already: this one's is dropped */
            m->S--;
            m->P--;
        }
    } else if (st == M_REL) {
        int r = m->rec_of[id];
        if (m->rec[r].kind == REL_SIGNAL && m->rec[r].pass) { /* 5b */
            m->rec[r].pass = 0;
            if (m->cur == m->rec[r].succ && m->S > m->P) {
                m->P++;
                if (m->S == m->P && (m->reading & RD_EAGER_PASS)) m_release(m, REL_PASSED);
            }
        }
    }
    return 0;
}

static int m_look(struct model *m, int id)
{
    int st = m->st[id];
    m->st[id] = M_FREE;
    if (st == M_REL) return 0;
    if (st != M_CUR) return ETIMEDOUT;
    if (m->P > 0) { /* claims */
        m->P--;
        m->S--;
        return 0;
    }
    m->S--;
    m_uncovered_left(m);
    return ETIMEDOUT;
}

static int m_apply(struct model *m, const struct cs_event *e)
{
    switch (e->kind) {
    case CS_REG: return m_register(m, e->ticket);
    case CS_SIG: return m_signal(m);
    case CS_BC: return m_broadcast(m);
    case CS_CANCEL: return m_cancel(m, e->ticket);
    default: return m_look(m, e->ticket);
    }
}

/* ---- cond_spec.h's own test ---- */

#define REG(t) { CS_REG, t, 0 }
#define SIG { CS_SIG, 0, 0 }
#define BC { CS_BC, 0, 0 }
#define CANCEL(t) { CS_CANCEL, t, 0 }
#define LOOK0(t) { CS_LOOK, t, 0 }
#define LOOKT(t) { CS_LOOK, t, ETIMEDOUT }
#define RET0(t) { CS_RET, t, 0 }
#define RETT(t) { CS_RET, t, ETIMEDOUT }
enum { A, B, C, D, E, F };

static void spec_case(const char *name, const struct cs_event *log, size_t n, int want)
{
    struct cs_report why;
    int r = cs_check(log, n, &why);
    const char *w = want == CS_EXPLAINED ? "explained" : want == CS_UNEXPLAINED ? "rejected" : "a bad log";
    if (!is_int(r, want, "cond_spec.h: %s: %s", name, w)) {
        diag("  %s", why.msg);
        cs_print_log(log, n, why.furthest);
    }
}
#define SPEC_CASE(name, want, ...)                                                      \
    do {                                                                                 \
        static const struct cs_event log_[] = { __VA_ARGS__ };                           \
        spec_case(name, log_, sizeof log_ / sizeof log_[0], want);                       \
    } while (0)

static void spec_self_test(void)
{
    SPEC_CASE("R1, the new header's outcome (A 0, B 0, C 0, D ETIMEDOUT)", CS_EXPLAINED,
              REG(A), REG(B), BC, REG(C), REG(D), SIG, LOOK0(C), LOOKT(D), LOOK0(A), LOOK0(B));
    SPEC_CASE("R1, the old header's outcome (C 0, D 0, A 0, B ETIMEDOUT)", CS_UNEXPLAINED,
              REG(A), REG(B), BC, REG(C), REG(D), SIG, LOOK0(C), LOOK0(D), LOOK0(A), LOOKT(B));
    SPEC_CASE("R3, the new header's outcome (C, D ETIMEDOUT, B 0)", CS_EXPLAINED,
              REG(A), REG(B), SIG, SIG, REG(C), REG(D), CANCEL(A), LOOKT(C), LOOKT(D), LOOK0(B));
    SPEC_CASE("R3, the old header's outcome (C 0, D 0, B ETIMEDOUT)", CS_UNEXPLAINED,
              REG(A), REG(B), SIG, SIG, REG(C), REG(D), CANCEL(A), LOOK0(C), LOOK0(D), LOOKT(B));
    SPEC_CASE("R2 in log form, the old header's outcome (B ETIMEDOUT, C 0, D 0)", CS_UNEXPLAINED,
              REG(A), REG(B), BC, RET0(A), REG(C), REG(D), SIG, RET0(C), RET0(D), RETT(B));
    SPEC_CASE("a ticket registered after a signal does not take it", CS_UNEXPLAINED,
              REG(A), SIG, REG(B), LOOK0(B), LOOKT(A));
    SPEC_CASE("... it looks ETIMEDOUT, the older one 0", CS_EXPLAINED, REG(A), SIG, REG(B), LOOKT(B), LOOK0(A));
    SPEC_CASE("a signal with no ticket has no effect", CS_UNEXPLAINED, SIG, REG(A), LOOK0(A));
    SPEC_CASE("a signal with every ticket called has no effect", CS_UNEXPLAINED,
              REG(A), BC, SIG, REG(B), LOOK0(B), LOOK0(A));
    SPEC_CASE("no spurious return", CS_UNEXPLAINED, REG(A), RET0(A));
    SPEC_CASE("no lost signal (a called ticket does not time out)", CS_UNEXPLAINED, REG(A), SIG, RETT(A));
    SPEC_CASE("one signal, one ticket", CS_UNEXPLAINED, REG(A), REG(B), SIG, LOOK0(A), LOOK0(B));
    SPEC_CASE("one signal, either ticket", CS_EXPLAINED, REG(A), REG(B), SIG, LOOKT(A), LOOK0(B));
    SPEC_CASE("a broadcast calls every registered ticket", CS_EXPLAINED,
              REG(A), REG(B), SIG, REG(C), BC, REG(D), LOOKT(D), RET0(C), RET0(A), RET0(B));
    SPEC_CASE("a cancel may pass a signal to a ticket registered before it", CS_EXPLAINED,
              REG(A), REG(B), SIG, CANCEL(A), LOOK0(B));
    SPEC_CASE("... or drop it", CS_EXPLAINED, REG(A), REG(B), SIG, CANCEL(A), LOOKT(B));
    SPEC_CASE("... but never to a ticket registered after it", CS_UNEXPLAINED,
              REG(A), SIG, REG(B), CANCEL(A), LOOK0(B));
    SPEC_CASE("... which may pass it on again, to a ticket registered before the signal", CS_EXPLAINED,
              REG(A), REG(B), REG(C), SIG, CANCEL(A), CANCEL(B), LOOK0(C));
    SPEC_CASE("a passed signal is still one signal", CS_UNEXPLAINED,
              REG(A), REG(B), REG(C), SIG, CANCEL(A), LOOK0(B), LOOK0(C));
    SPEC_CASE("a ticket called by a broadcast has nothing to pass on", CS_UNEXPLAINED,
              REG(A), BC, REG(B), CANCEL(A), LOOK0(B));
    SPEC_CASE("... but one called by a signal before the broadcast may", CS_EXPLAINED,
              REG(A), REG(B), SIG, BC, CANCEL(A), LOOK0(B));
    SPEC_CASE("a cancel returns 0", CS_UNEXPLAINED, REG(A), { CS_CANCEL, A, ETIMEDOUT });
    SPEC_CASE("5b: the first cancel passes on to the next group", CS_EXPLAINED,
              REG(A), REG(B), SIG, REG(C), SIG, CANCEL(A), LOOK0(C), LOOK0(B));
    SPEC_CASE("5b: two cancels, two passes (not ours, but the issue allows it: signals 2, 3 to D, E)", CS_EXPLAINED,
              REG(A), REG(B), REG(C), SIG, REG(D), REG(E), SIG, SIG, CANCEL(A), CANCEL(B),
              LOOK0(D), LOOK0(E), LOOK0(C));
    SPEC_CASE("no pass to tickets registered after every signal", CS_UNEXPLAINED,
              REG(A), REG(B), SIG, SIG, REG(C), CANCEL(A), CANCEL(B), LOOK0(C));
    SPEC_CASE("a ticket used before its REG", CS_BAD_LOG, REG(A), LOOK0(B));
    SPEC_CASE("a ticket registered twice", CS_BAD_LOG, REG(A), REG(A));
    /* 16 tickets alive at once, 8 signals, 5 passes: a wide search */
    static struct cs_event wide[64];
    size_t n = 0;
    for (int t = 0; t < 16; t++) wide[n++] = (struct cs_event)REG(t);
    for (int k = 0; k < 8; k++) wide[n++] = (struct cs_event)SIG;
    for (int t = 0; t < 5; t++) wide[n++] = (struct cs_event)CANCEL(t);
    for (int t = 5; t < 16; t++) wide[n++] = (struct cs_event){ CS_LOOK, t, t < 13 ? 0 : ETIMEDOUT };
    spec_case("16 tickets, 8 signals, 5 cancels, 8 looks 0 and 3 ETIMEDOUT", wide, n, CS_EXPLAINED);
    wide[n - 3].result = 0; /* a ninth 0: only 8 signals */
    spec_case("... and with a ninth 0", wide, n, CS_UNEXPLAINED);
    wide[n++] = (struct cs_event)BC; /* (no counting bound before a broadcast: the whole search) */
    uint64_t t0 = test_now_ns();
    spec_case("... and a broadcast after it", wide, n, CS_UNEXPLAINED);
    diag("cond_spec.h: that log in %.1f ms", (double)(test_now_ns() - t0) / 1e6);
    n = 0;
    for (int t = 0; t < 17; t++) wide[n++] = (struct cs_event)REG(t);
    spec_case("17 tickets alive at once", wide, n, CS_BAD_LOG);
}

/* ---- the random sequences ---- */

static fastsync_cond_t c;
static fastsync_cond_ticket_t tk[IDS_MAX];

static int look(fastsync_cond_ticket_t *t)
{
    struct timespec past = test_ts(0, 0);
    return fastsync_cond_timedawait(&c, t, &past);
}

static int header_apply(const struct cs_event *e)
{
    switch (e->kind) {
    case CS_REG: return fastsync_cond_register(&c, &tk[e->ticket]);
    case CS_SIG: return fastsync_cond_signal(&c);
    case CS_BC: return fastsync_cond_broadcast(&c);
    case CS_CANCEL: return fastsync_cond_cancel(&c, &tk[e->ticket]);
    default: return look(&tk[e->ticket]);
    }
}

struct seq_result {
    struct cs_event log[LOG_MAX]; /* the header's results */
    int want[READINGS][LOG_MAX];  /* each reading's */
    size_t n;
    int first_miss[READINGS];     /* -1: none */
    int spec;                     /* cs_check of the header's log */
    struct cs_report why;
    int model_spec_bad;           /* a reading whose own log cond_spec.h rejects, -1: none */
    struct cs_report model_why;
    int destroy;
};

static void run_sequence(uint64_t rng, struct seq_result *s)
{
    struct model m[READINGS];
    int live[LIVE_MAX], nlive = 0, next_id = 0;
    for (int r = 0; r < READINGS; r++) {
        m_init(&m[r], r);
        s->first_miss[r] = -1;
    }
    fastsync_cond_init(&c, 0);
    s->n = 0;
    int ops = 8 + (int)(test_rand(&rng) % (OPS_MAX - 8 + 1));
    /* the sequence's own mix of calls (percent): register, signal, broadcast, cancel; the
     * rest looks */
    unsigned w_reg = 15 + (unsigned)(test_rand(&rng) % 26), w_sig = 15 + (unsigned)(test_rand(&rng) % 26);
    unsigned w_bc = (unsigned)(test_rand(&rng) % 9), w_cancel = 5 + (unsigned)(test_rand(&rng) % 26);
    for (int i = 0; i < ops + LIVE_MAX; i++) {
        struct cs_event e = { CS_SIG, 0, 0 };
        if (i >= ops) { /* the end: every ticket left looks, in a random order */
            if (nlive == 0) break;
            e.kind = CS_LOOK;
        } else {
            unsigned x = (unsigned)(test_rand(&rng) % 100);
            if (nlive == 0) e.kind = x < 70 ? CS_REG : x < 95 ? CS_SIG : CS_BC;
            else if (x < w_reg) e.kind = nlive < LIVE_MAX ? CS_REG : CS_SIG;
            else if (x < w_reg + w_sig) e.kind = CS_SIG;
            else if (x < w_reg + w_sig + w_bc) e.kind = CS_BC;
            else if (x < w_reg + w_sig + w_bc + w_cancel) e.kind = CS_CANCEL;
            else e.kind = CS_LOOK;
        }
        if (e.kind == CS_REG) {
            e.ticket = next_id++;
            live[nlive++] = e.ticket;
        } else if (e.kind == CS_CANCEL || e.kind == CS_LOOK) {
            int k = (int)(test_rand(&rng) % (unsigned)nlive);
            e.ticket = live[k];
            live[k] = live[--nlive];
        }
        e.result = header_apply(&e);
        for (int r = 0; r < READINGS; r++) {
            int w = m_apply(&m[r], &e);
            s->want[r][s->n] = w;
            if (w != e.result && s->first_miss[r] < 0) s->first_miss[r] = (int)s->n;
        }
        s->log[s->n++] = e;
    }
    s->destroy = fastsync_cond_destroy(&c);
    s->spec = cs_check(s->log, s->n, &s->why);
    s->model_spec_bad = -1;
    for (int r = 0; r < READINGS && s->model_spec_bad < 0; r++) {
        struct cs_event mlog[LOG_MAX];
        for (size_t i = 0; i < s->n; i++) {
            mlog[i] = s->log[i];
            mlog[i].result = s->want[r][i];
        }
        if (cs_check(mlog, s->n, &s->model_why) != CS_EXPLAINED) s->model_spec_bad = r;
    }
}

static void print_sequence(unsigned long i, const struct seq_result *s)
{
    diag("sequence %lu of seed %" PRIu64 " (replay: FASTSYNC_TEST_SEED=%" PRIu64 "); cond_spec.h: %s", i,
         test_seed(), test_seed(), s->spec == CS_EXPLAINED ? "explained" : s->why.msg);
    diag("  the header's results%s:", s->spec == CS_EXPLAINED ? "" : " (<--: the furthest any delivery explains)");
    cs_print_log(s->log, s->n, s->spec == CS_EXPLAINED ? -1 : s->why.furthest);
    for (int r = 0; r < READINGS; r++) { /* each reading's first disagreement, like ones together */
        int k = s->first_miss[r], same = 0;
        for (int q = 0; q < r; q++) same |= s->first_miss[q] == k && (k < 0 || s->want[q][k] == s->want[r][k]);
        if (same) continue;
        char who[256] = "", ev[48];
        size_t len = 0;
        for (int q = r; q < READINGS; q++)
            if (s->first_miss[q] == k && (k < 0 || s->want[q][k] == s->want[r][k]))
                len += (size_t)snprintf(who + len, sizeof who - len, "%s%d", len ? "," : "", q);
        if (k < 0) diag("  model readings %s: agree", who);
        else
            diag("  model readings %s: first disagree at %d, %s: they say %s", who, k,
                 cs_event_str(&s->log[k], ev, sizeof ev), cs_result_str(s->want[r][k]));
    }
}

/* The model on the contract's own cases, every reading. */
static void model_cases(void)
{
    static const struct {
        const char *name;
        struct cs_event log[14];
        int n;
    } cases[] = {
        { "R1 (A 0, B 0, C 0, D ETIMEDOUT)",
          { REG(A), REG(B), BC, REG(C), REG(D), SIG, LOOK0(C), LOOKT(D), LOOK0(A), LOOK0(B) }, 10 },
        { "R3 (C, D ETIMEDOUT, B 0)",
          { REG(A), REG(B), SIG, SIG, REG(C), REG(D), CANCEL(A), LOOKT(C), LOOKT(D), LOOK0(B) }, 10 },
        { "5a (C registered after the signal: ETIMEDOUT; B 0)",
          { REG(A), REG(B), SIG, REG(C), CANCEL(A), LOOKT(C), LOOK0(B) }, 7 },
        { "5b passed (C 0, B 0)", { REG(A), REG(B), SIG, REG(C), SIG, CANCEL(A), LOOK0(C), LOOK0(B) }, 8 },
        { "5b dropped, second cancel (D 0, E ETIMEDOUT, C 0)",
          { REG(A), REG(B), REG(C), SIG, REG(D), REG(E), SIG, SIG, CANCEL(A), CANCEL(B), LOOK0(D), LOOKT(E),
            LOOK0(C) }, 13 },
        { "5c (B ETIMEDOUT)", { REG(A), BC, REG(B), CANCEL(A), LOOKT(B) }, 5 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int bad = 0;
        for (int r = 0; r < READINGS; r++) {
            struct model m;
            m_init(&m, r);
            for (int i = 0; i < cases[k].n; i++) {
                int w = m_apply(&m, &cases[k].log[i]);
                if (w != cases[k].log[i].result && !bad++)
                    diag("  reading %d (%s), event %d: the model says %s", r, reading_name(r), i, cs_result_str(w));
            }
        }
        is_int(bad, 0, "model: %s, every reading", cases[k].name);
    }
}

int main(void)
{
    test_init();
    spec_self_test();
    model_cases();
    for (int r = 0; r < READINGS; r++) diag("model reading %d: %s", r, reading_name(r));

    static struct seq_result s;
    unsigned long n = 0, spec_bad = 0, model_bad = 0, model_spec_bad = 0, destroy_bad = 0, events = 0;
    unsigned long agree[READINGS] = { 0 };
    int printed = 0;
    uint64_t end = test_box_end(1000);
    while (test_box_more(end, n)) {
        run_sequence(test_stream((unsigned)n), &s);
        events += s.n;
        int any = 0;
        for (int r = 0; r < READINGS; r++) {
            agree[r] += s.first_miss[r] < 0;
            any |= s.first_miss[r] < 0;
        }
        spec_bad += s.spec != CS_EXPLAINED;
        model_bad += !any;
        if ((s.spec != CS_EXPLAINED || !any) && printed++ < 3) print_sequence(n, &s);
        if (s.model_spec_bad >= 0 && model_spec_bad++ == 0)
            diag("the model (%s) breaks the rules in sequence %lu: %s", reading_name(s.model_spec_bad), n,
                 s.model_why.msg);
        destroy_bad += s.destroy != 0;
        n++;
    }
    diag("%lu sequences, %lu calls", n, events);
    int best = 0;
    for (int r = 0; r < READINGS; r++) {
        diag("  model reading %d: agrees with %lu", r, agree[r]);
        if (agree[r] > agree[best]) best = r;
    }
    is_int(spec_bad, 0, "every sequence explained by cond_spec.h (the manual's delivery rules 1-5)");
    is_int(model_bad, 0, "every sequence predicted call by call by some reading of the group model");
    diag("  the reading that predicts most: %d (%s)", best, reading_name(best));
    /* The manual's: a group is released at once when every ticket of it has a signal, be it
     * by a signal, a cancel or a pass-on; a group that loses its tickets otherwise stays the
     * current one, empty, until a signal makes the next group current. */
    is_int(agree[READING_MANUAL], n, "the manual's reading predicts every sequence (%s)",
           reading_name(READING_MANUAL));
    is_int(model_spec_bad, 0, "every reading's own predictions obey the rules (cond_spec.h)");
    is_int(destroy_bad, 0, "every sequence left no ticket registered (destroy 0)");
    return done_testing();
}
