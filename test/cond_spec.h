/* SPDX-License-Identifier: MIT */
/* test/cond_spec.h - does some delivery of the signals explain a condition variable's log?
 *
 * The rules (the delivery rules 1-5 of fastsync.h's manual (Guarantees)):
 *   - a ticket is "called" by a signal chosen for it, or by a broadcast made while it was
 *     uncalled; it returns 0 (from a wait, an await or a look) only when called, and a look
 *     says ETIMEDOUT only of an uncalled ticket (so a called ticket never times out);
 *   - a signal is chosen for exactly one ticket that is registered before it and uncalled, if
 *     there is one (then it must be); if there is none it has no effect at all;
 *   - a broadcast calls every ticket registered and uncalled at it;
 *   - a cancel always returns 0; a cancelled called ticket either drops the signal it holds
 *     or passes it on to a ticket registered before that signal and still uncalled (that
 *     ticket is then called by the same signal, and may in turn pass it on); a ticket called
 *     by a broadcast has nothing to pass on.
 * The contract says which of drop and pass ours does (its rule 5(b)); this checker allows
 * either, as the issue does: it checks the rules, not one implementation's choices.
 *
 * The log: every event in the condvar's order (in a test with threads, logged under the
 * mutex that every call is made under, so that the log order is the condvar's):
 *   CS_REG(t)        ticket t registered (0 returned)
 *   CS_SIG, CS_BC    a signal, a broadcast
 *   CS_CANCEL(t, r)  t cancelled, the cancel returned r (must be 0); t deregistered
 *   CS_LOOK(t, r)    a timedawait of t with a deadline already past returned r (0 or
 *                    ETIMEDOUT); t deregistered
 *   CS_RET(t, r)     a wait or await of t returned r (0, or ETIMEDOUT for a timed-out one:
 *                    the same as a look at the point of the log where it is; a log of
 *                    threads cannot place a timeout exactly, so a test with threads uses no
 *                    timeouts); t deregistered
 * A ticket's id (0..255) is the log's name for it; an id may be registered again once it
 * is deregistered. At most CS_TICKETS_MAX (16) tickets are registered at once.
 *
 * The algorithm: a depth-first search over what the log leaves open, memoized.
 *   The state after a prefix of the log: the set of registered tickets that are uncalled
 *   (a bitmask over at most 16 slots: a ticket takes the lowest free slot at its CS_REG), and
 *   for each registered called ticket the tickets its signal could still be passed to if it
 *   is cancelled: those uncalled now and registered before that signal (a mask; empty for a
 *   ticket called by a broadcast). That mask is all that is needed of "which signal it
 *   holds": a pass can go only to a ticket uncalled now, a called ticket never becomes
 *   uncalled, and a ticket registered later is never in it. (When a signal is chosen for u,
 *   u's mask is every other ticket uncalled then, all registered before the signal; when a
 *   ticket becomes called by any event it leaves every mask; when t passes to u, u gets
 *   t's mask less itself.)
 *   Each event maps a state to its successors: REG adds an uncalled ticket; BC calls every
 *   uncalled ticket; SIG branches over the uncalled tickets (none uncalled: no change);
 *   CANCEL of a called ticket branches over drop and each ticket of its mask; LOOK and RET
 *   keep the state only if the result fits (0: called; ETIMEDOUT: uncalled), then
 *   deregister. Two prunings, neither of which drops a path that could succeed: a ticket
 *   whose registration ends in ETIMEDOUT is never a branch's choice (it would fail there);
 *   and with no broadcast left in the log, a state in which more uncalled tickets must
 *   still return 0 than there are signals to come plus called tickets that will be
 *   cancelled (each may give its one signal away) is a dead end. The log is explained iff
 *   some path reaches its end. The states found to lead nowhere (at the branching events)
 *   are remembered in a hash set keyed by (position, uncalled, masks), so none is explored
 *   twice: the slots are assigned by the log alone, so the registered set at a position is
 *   the same on every path. With at most 8 tickets registered (the tests)
 *   a log is checked in microseconds; the set is bounded (CS_STATES_MAX: then the answer is
 *   CS_TOO_HARD, never a guess).
 * On a log it cannot explain, the report names the furthest event any choice got to and why
 * the last choice that got there failed at it.
 *
 *   int cs_check(const struct cs_event *log, size_t n, struct cs_report *why);
 *       CS_EXPLAINED (1), CS_UNEXPLAINED (0), CS_BAD_LOG (-1: a ticket used while not
 *       registered, registered twice, or more than 16 at once; why->msg says), CS_TOO_HARD
 *       (-2). why may be NULL.
 *   const char *cs_event_str(const struct cs_event *e, char *buf, size_t size);
 *   void cs_print_log(const struct cs_event *log, size_t n, long mark);  diag lines, the
 *       event at index mark (or none: -1) marked with "<--"
 */
#ifndef FASTSYNC_TEST_COND_SPEC_H
#define FASTSYNC_TEST_COND_SPEC_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

enum { CS_REG, CS_SIG, CS_BC, CS_CANCEL, CS_LOOK, CS_RET };
enum { CS_TICKETS_MAX = 16, CS_IDS = 256 };
enum { CS_EXPLAINED = 1, CS_UNEXPLAINED = 0, CS_BAD_LOG = -1, CS_TOO_HARD = -2 };
#define CS_STATES_MAX (1u << 20)

struct cs_event {
    int kind;   /* CS_* */
    int ticket; /* 0..255: CS_REG, CS_CANCEL, CS_LOOK, CS_RET */
    int result; /* CS_CANCEL, CS_LOOK, CS_RET */
};

struct cs_report {
    long furthest; /* index of the furthest event some choice reached, -1: none */
    char msg[200]; /* why the search failed there (or why the log is bad) */
};

static inline const char *cs_result_str(int r)
{
    return r == 0 ? "0" : r == ETIMEDOUT ? "ETIMEDOUT" : r == EAGAIN ? "EAGAIN" : r == EINVAL ? "EINVAL" : "?";
}

static inline const char *cs_event_str(const struct cs_event *e, char *buf, size_t size)
{
    static const char *const name[] = { "REG", "SIG", "BC", "CANCEL", "LOOK", "RET" };
    const char *k = e->kind >= CS_REG && e->kind <= CS_RET ? name[e->kind] : "?";
    if (e->kind == CS_SIG || e->kind == CS_BC) snprintf(buf, size, "%s", k);
    else if (e->kind == CS_REG) snprintf(buf, size, "%s(t%d)", k, e->ticket);
    else if (e->result == 0 || e->result == ETIMEDOUT)
        snprintf(buf, size, "%s(t%d)=%s", k, e->ticket, cs_result_str(e->result));
    else snprintf(buf, size, "%s(t%d)=%d", k, e->ticket, e->result);
    return buf;
}

/* The log in diag lines, 8 events a line, the event at `mark` (-1: none) marked. */
static inline void cs_print_log(const struct cs_event *log, size_t n, long mark)
{
    char line[512], ev[48];
    size_t len = 0;
    line[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        cs_event_str(&log[i], ev, sizeof ev);
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%3zu:%s%s", len ? "  " : "", i, ev,
                                (long)i == mark ? "<--" : "");
        if (i % 8 == 7 || i + 1 == n) {
            diag("  %s", line);
            len = 0;
            line[0] = '\0';
        }
    }
}

/* ---- the search ---- */

struct cs_state {
    uint16_t uncalled;
    uint16_t mask[CS_TICKETS_MAX]; /* per called slot: where its signal could still go */
};

struct cs_key {
    uint32_t pos;
    struct cs_state s;
};

struct cs_ctx {
    const struct cs_event *log;
    size_t n;
    int *slot_at;      /* per event: the slot of its ticket (-1: none) */
    uint16_t *live_at; /* per position: the registered slots before that event */
    uint16_t *doomed_at; /* per position: the registered slots that end in ETIMEDOUT */
    uint16_t *zero_at;   /* ... that end in 0 (a look or a return) */
    uint16_t *giver_at;  /* ... that end in a cancel */
    uint32_t *sig_left;  /* per position: the signals from there on */
    uint32_t *bc_left;   /* ... the broadcasts */
    struct cs_key *set; /* open addressing; pos == UINT32_MAX: empty */
    size_t cap, used;
    int too_hard;
    long furthest;
    char msg[200];
};

static inline uint64_t cs_hash(const struct cs_key *k)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ k->pos;
    h = (h ^ k->s.uncalled) * 0xbf58476d1ce4e5b9u;
    for (int i = 0; i < CS_TICKETS_MAX; i++) h = (h ^ k->s.mask[i]) * 0x94d049bb133111ebu;
    return h ^ (h >> 31);
}

static inline int cs_key_eq(const struct cs_key *a, const struct cs_key *b)
{
    return a->pos == b->pos && memcmp(&a->s, &b->s, sizeof a->s) == 0;
}

/* 1: k was in the set already; 0: added; -1: the set is full (too hard). */
static inline int cs_set_add(struct cs_ctx *x, const struct cs_key *k)
{
    if (x->used * 2 >= x->cap) {
        if (x->cap >= CS_STATES_MAX) return -1;
        size_t ncap = x->cap ? x->cap * 2 : 1024;
        struct cs_key *ns = (struct cs_key *)malloc(ncap * sizeof *ns);
        if (ns == NULL) return -1;
        for (size_t i = 0; i < ncap; i++) ns[i].pos = UINT32_MAX;
        for (size_t i = 0; i < x->cap; i++) {
            if (x->set[i].pos == UINT32_MAX) continue;
            size_t j = (size_t)cs_hash(&x->set[i]) & (ncap - 1);
            while (ns[j].pos != UINT32_MAX) j = (j + 1) & (ncap - 1);
            ns[j] = x->set[i];
        }
        free(x->set);
        x->set = ns;
        x->cap = ncap;
    }
    size_t j = (size_t)cs_hash(k) & (x->cap - 1);
    while (x->set[j].pos != UINT32_MAX) {
        if (cs_key_eq(&x->set[j], k)) return 1;
        j = (j + 1) & (x->cap - 1);
    }
    x->set[j] = *k;
    x->used++;
    return 0;
}

/* Slot u becomes called: it leaves every mask (its own is set by the caller). */
static inline void cs_call(struct cs_state *s, int u)
{
    s->uncalled = (uint16_t)(s->uncalled & ~(1u << u));
    for (int i = 0; i < CS_TICKETS_MAX; i++) s->mask[i] = (uint16_t)(s->mask[i] & ~(1u << u));
}

static inline void cs_fail(struct cs_ctx *x, size_t pos, const char *why)
{
    if ((long)pos >= x->furthest) {
        char ev[48];
        x->furthest = (long)pos;
        snprintf(x->msg, sizeof x->msg, "event %zu, %s: %s", pos, cs_event_str(&x->log[pos], ev, sizeof ev), why);
    }
}

/* Whether the log from pos on is explained from state s. */
static int cs_search(struct cs_ctx *x, size_t pos, struct cs_state s)
{
    for (;;) {
        if (pos == x->n) return 1;
        if (x->too_hard) return 0;
        const struct cs_event *e = &x->log[pos];
        int slot = x->slot_at[pos];
        uint16_t bit = slot >= 0 ? (uint16_t)(1u << slot) : 0;
        uint16_t live = x->live_at[pos];
        uint16_t doomed = x->doomed_at[pos];
        switch (e->kind) {
        case CS_REG:
            s.uncalled |= bit;
            s.mask[slot] = 0;
            pos++;
            continue;
        case CS_BC:
            for (int i = 0; i < CS_TICKETS_MAX; i++) {
                if (s.uncalled & (1u << i)) s.mask[i] = 0; /* called by the broadcast: nothing to pass */
            }
            for (int i = 0; i < CS_TICKETS_MAX; i++) s.mask[i] = (uint16_t)(s.mask[i] & ~s.uncalled);
            s.uncalled = 0;
            pos++;
            continue;
        case CS_LOOK:
        case CS_RET: {
            int called = (live & bit) && !(s.uncalled & bit);
            if (e->result == 0 && !called) {
                cs_fail(x, pos, "it returns 0, but no choice of the signals before it called it");
                return 0;
            }
            if (e->result == ETIMEDOUT && called) {
                cs_fail(x, pos, "it says ETIMEDOUT, but under these choices it was called (a signal kept)");
                return 0;
            }
            if (e->result != 0 && e->result != ETIMEDOUT) {
                cs_fail(x, pos, "a result other than 0 and ETIMEDOUT");
                return 0;
            }
            s.uncalled = (uint16_t)(s.uncalled & ~bit);
            for (int i = 0; i < CS_TICKETS_MAX; i++) s.mask[i] = (uint16_t)(s.mask[i] & ~bit);
            s.mask[slot] = 0;
            pos++;
            continue;
        }
        default:
            break;
        }
        /* SIG and CANCEL branch. A bound first: with no broadcast to come, each ticket that
         * must still return 0 and is uncalled needs a signal to come, or one that a called
         * ticket gives away when it is cancelled (each signal is held by one ticket). */
        if (x->bc_left[pos] == 0) {
            unsigned need = 0, give = x->sig_left[pos];
            for (int i = 0; i < CS_TICKETS_MAX; i++) {
                need += (s.uncalled & x->zero_at[pos]) >> i & 1u;
                give += !(s.uncalled >> i & 1u) && (x->giver_at[pos] >> i & 1u) && s.mask[i] != 0;
            }
            if (need > give) {
                cs_fail(x, pos, "more uncalled tickets must return 0 than the signals left can call");
                return 0;
            }
        }
        /* memoize the state here */
        struct cs_key k;
        memset(&k, 0, sizeof k);
        k.pos = (uint32_t)pos;
        k.s = s;
        int seen = cs_set_add(x, &k);
        if (seen < 0) {
            x->too_hard = 1;
            return 0;
        }
        if (seen) return 0; /* explored already, and it led nowhere */
        if (e->kind == CS_SIG) {
            if (s.uncalled == 0) { /* no ticket to take it: no effect */
                pos++;
                continue;
            }
            if ((s.uncalled & ~doomed) == 0) {
                cs_fail(x, pos, "it must call an uncalled ticket, and each of them says ETIMEDOUT later");
                return 0;
            }
            for (int u = 0; u < CS_TICKETS_MAX; u++) {
                if (!(s.uncalled & ~doomed & (1u << u))) continue;
                struct cs_state t = s;
                uint16_t others = (uint16_t)(s.uncalled & ~(1u << u));
                cs_call(&t, u);
                t.mask[u] = others;
                if (cs_search(x, pos + 1, t)) return 1;
            }
            return 0;
        }
        /* CS_CANCEL */
        if (e->result != 0) {
            cs_fail(x, pos, "a cancel returns 0");
            return 0;
        }
        uint16_t to = (s.uncalled & bit) ? 0 : (uint16_t)(s.mask[slot] & ~doomed);
        struct cs_state t = s; /* drop (or an uncalled ticket simply leaves) */
        t.uncalled = (uint16_t)(t.uncalled & ~bit);
        for (int i = 0; i < CS_TICKETS_MAX; i++) t.mask[i] = (uint16_t)(t.mask[i] & ~bit);
        t.mask[slot] = 0;
        if (cs_search(x, pos + 1, t)) return 1;
        for (int u = 0; u < CS_TICKETS_MAX; u++) {
            if (!(to & (1u << u))) continue;
            struct cs_state p = t;
            cs_call(&p, u);
            p.mask[u] = (uint16_t)(to & ~(1u << u) & p.uncalled);
            if (cs_search(x, pos + 1, p)) return 1;
        }
        return 0;
    }
}

static inline int cs_check(const struct cs_event *log, size_t n, struct cs_report *why)
{
    struct cs_ctx x;
    memset(&x, 0, sizeof x);
    x.log = log;
    x.n = n;
    x.furthest = -1;
    int r = CS_BAD_LOG;
    x.slot_at = (int *)malloc((n + 1) * sizeof *x.slot_at);
    x.live_at = (uint16_t *)malloc((n + 1) * sizeof *x.live_at);
    x.doomed_at = (uint16_t *)calloc(n + 1, sizeof *x.doomed_at);
    x.zero_at = (uint16_t *)calloc(n + 1, sizeof *x.zero_at);
    x.giver_at = (uint16_t *)calloc(n + 1, sizeof *x.giver_at);
    x.sig_left = (uint32_t *)calloc(n + 1, sizeof *x.sig_left);
    x.bc_left = (uint32_t *)calloc(n + 1, sizeof *x.bc_left);
    if (x.slot_at == NULL || x.live_at == NULL || x.doomed_at == NULL || x.zero_at == NULL ||
        x.giver_at == NULL || x.sig_left == NULL || x.bc_left == NULL) {
        snprintf(x.msg, sizeof x.msg, "out of memory");
        goto out;
    }
    /* the slots: a pass over the log alone */
    int slot_of[CS_IDS];
    size_t reg_at[CS_IDS];
    for (int i = 0; i < CS_IDS; i++) slot_of[i] = -1;
    uint16_t live = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cs_event *e = &log[i];
        x.live_at[i] = live;
        x.slot_at[i] = -1;
        if (e->kind == CS_SIG || e->kind == CS_BC) continue;
        if (e->kind < CS_REG || e->kind > CS_RET || e->ticket < 0 || e->ticket >= CS_IDS) {
            snprintf(x.msg, sizeof x.msg, "event %zu: unknown kind %d or ticket %d", i, e->kind, e->ticket);
            x.furthest = (long)i;
            goto out;
        }
        if (e->kind == CS_REG) {
            if (slot_of[e->ticket] >= 0) {
                snprintf(x.msg, sizeof x.msg, "event %zu: t%d registered while it is registered", i, e->ticket);
                x.furthest = (long)i;
                goto out;
            }
            int s = 0;
            while (s < CS_TICKETS_MAX && (live & (1u << s))) s++;
            if (s == CS_TICKETS_MAX) {
                snprintf(x.msg, sizeof x.msg, "event %zu: more than %d tickets registered at once", i, CS_TICKETS_MAX);
                x.furthest = (long)i;
                goto out;
            }
            slot_of[e->ticket] = s;
            reg_at[e->ticket] = i;
            x.slot_at[i] = s;
            live = (uint16_t)(live | (1u << s));
        } else {
            int s = slot_of[e->ticket];
            if (s < 0) {
                snprintf(x.msg, sizeof x.msg, "event %zu: t%d is not registered", i, e->ticket);
                x.furthest = (long)i;
                goto out;
            }
            x.slot_at[i] = s;
            live = (uint16_t)(live & ~(1u << s));
            slot_of[e->ticket] = -1;
            uint16_t *end = e->kind == CS_CANCEL ? x.giver_at : e->result == 0 ? x.zero_at : x.doomed_at;
            for (size_t j = reg_at[e->ticket]; j <= i; j++) end[j] = (uint16_t)(end[j] | (1u << s));
        }
    }
    x.live_at[n] = live;
    for (size_t i = n; i-- > 0;) {
        x.sig_left[i] = x.sig_left[i + 1] + (log[i].kind == CS_SIG);
        x.bc_left[i] = x.bc_left[i + 1] + (log[i].kind == CS_BC);
    }
    struct cs_state s0;
    memset(&s0, 0, sizeof s0);
    r = cs_search(&x, 0, s0) ? CS_EXPLAINED : x.too_hard ? CS_TOO_HARD : CS_UNEXPLAINED;
    if (r == CS_TOO_HARD) snprintf(x.msg, sizeof x.msg, "more than %u states: not decided", CS_STATES_MAX);
out:
    if (why != NULL) {
        why->furthest = r == CS_EXPLAINED ? -1 : x.furthest;
        snprintf(why->msg, sizeof why->msg, "%s", r == CS_EXPLAINED ? "explained" : x.msg);
    }
    free(x.slot_at);
    free(x.live_at);
    free(x.doomed_at);
    free(x.zero_at);
    free(x.giver_at);
    free(x.sig_left);
    free(x.bc_left);
    free(x.set);
    return r;
}

#endif
