/* SPDX-License-Identifier: MIT */
/* bench/twoqueue.c - seed 003: two suppliers, two queues, one consumer.
 *
 * Each supplier appends M ints (default 1 M, as in the seed) to its own preallocated queue
 * and notifies; the consumer takes whatever is in both queues, and sleeps when both are
 * empty. Variants (the queues and the loops are the same; only the notification differs):
 *   cond1     one pthread mutex guards both queues, one condvar
 *   twomutex  a mutex per queue, and a condvar that releases two mutexes while it waits
 *             (a sequence number closes the window between releasing them: the seed's idea)
 *   event     a mutex per queue, one fastsync_event: check both queues; when empty,
 *             the reset / check / wait loop
 *   fscond    a fastsync_mutex_t per queue, one fastsync_cond_t taken by ticket: check both
 *             queues; when empty, register a ticket, check again, then cancel or await it
 *             (suppliers push under their queue's mutex, unlock, signal)
 * Reported: total time, messages per wakeup (per call to the wait primitive), messages per
 * sleep (the consumer's voluntary context switches). The consumer checks the sum.
 *
 *   twoqueue [--quick] [--reps N] [--csv FILE] [--build NAME] [--iters M] [VARIANT...]
 */
#include "bench.h"

/* Every queue, every lock and every notification object on a cache line of its own (struct
 * run comes from bench_alloc, 64-byte aligned): the two suppliers share a line only where a
 * variant shares an object by design (cond1's one mutex, the one condvar or event). Packed
 * together, the two 4-byte fastsync mutexes and the condvar's word shared one line, and
 * each supplier's lock bounced the other's (fscond measured 0.53-0.59x cond1's time so; the
 * commit that aligned them has the figures after). */
#define LINE _Alignas(64)

struct queue {
    LINE pthread_mutex_t *m; /* guards tail (its own, or the shared one of cond1; fscond: unused) */
    long tail;               /* next free slot; written by the supplier under m */
    int *buf;                /* M slots: preallocated, never wraps */
};

/* A condvar that waits on two mutexes at once. The waiter holds both; it reads the sequence
 * number under the condvar's own lock, and keeps that lock while releasing the two mutexes,
 * so a supplier that appends after the consumer's check bumps the number after the read,
 * and the waiter does not sleep through it. */
struct twocond {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned long seq; /* notifications so far; guarded by lock */
};

static void twocond_wait(struct twocond *c, pthread_mutex_t *m1, pthread_mutex_t *m2)
{
    pthread_mutex_lock(&c->lock);
    unsigned long seq = c->seq;
    pthread_mutex_unlock(m2);
    pthread_mutex_unlock(m1);
    while (c->seq == seq) pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_lock(m1);
    pthread_mutex_lock(m2);
}

/* Called after the caller's append is published (its queue mutex released). */
static void twocond_signal(struct twocond *c)
{
    pthread_mutex_lock(&c->lock);
    c->seq++;
    pthread_mutex_unlock(&c->lock);
    pthread_cond_signal(&c->cond);
}

enum variant { V_COND1, V_TWOMUTEX, V_EVENT, V_FSCOND, V_COUNT };
static const char *const vname[V_COUNT] = { "cond1", "twomutex", "event", "fscond" };
static const char *const vtitle[V_COUNT] = { "pthread_cond", "twomutex_cond", "fastsync_event",
                                             "fastsync_cond by ticket" };

struct run {
    enum variant v;
    long m; /* messages per supplier */
    struct queue q[2];
    struct { LINE pthread_mutex_t m; } qm[2];
    LINE pthread_mutex_t one_m;
    LINE pthread_cond_t one_c;
    LINE struct twocond tc;
    LINE fastsync_event_t ev;
    struct { LINE fastsync_mutex_t m; } fm[2]; /* fscond: guards q[k].tail instead of q[k].m */
    LINE fastsync_cond_t fc;
    pthread_barrier_t start;
    long waits, sleeps; /* consumer's */
    uint64_t t_start, t_end; /* consumer's clock readings */
    unsigned long long sum;
};

struct supplier { struct run *r; int k; uint64_t t_start, t_end; };

/* The lock of queue k: fscond's fastsync_mutex_t, else the pthread mutex q[k].m. */
static void q_lock(struct run *r, int k)
{
    if (r->v == V_FSCOND) fastsync_mutex_lock(&r->fm[k].m);
    else pthread_mutex_lock(r->q[k].m);
}

static void q_unlock(struct run *r, int k)
{
    if (r->v == V_FSCOND) fastsync_mutex_unlock(&r->fm[k].m);
    else pthread_mutex_unlock(r->q[k].m);
}

static void *supply(void *p)
{
    struct supplier *s = (struct supplier *)p;
    struct run *r = s->r;
    struct queue *q = &r->q[s->k];
    pthread_barrier_wait(&r->start);
    s->t_start = bench_now_ns();
    for (long i = 0; i < r->m; i++) {
        q_lock(r, s->k);
        q->buf[q->tail++] = (int)i;
        q_unlock(r, s->k);
        switch (r->v) {
        case V_COND1: pthread_cond_signal(&r->one_c); break;
        case V_TWOMUTEX: twocond_signal(&r->tc); break;
        /* set: its seq_cst fence orders the append (released with q->m) before its load of
         * the event, against the consumer's reset fence and its check of the queues. */
        case V_EVENT: fastsync_event_set(&r->ev); break;
        /* after the unlock: a ticket registered before the consumer's look is woken, and an
         * append made before its look is seen by it (the queue's mutex orders them) */
        case V_FSCOND: fastsync_cond_signal(&r->fc); break;
        default: break;
        }
    }
    s->t_end = bench_now_ns();
    bench_futex_flush();
    return NULL;
}

static long rusage_thread_vcsw(void)
{
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_nvcsw;
}

/* Takes [head, tail) of both queues; the slots were written before the supplier released the
 * mutex under which the consumer read tail, so they are read safely outside it. */
static long take(struct run *r, long head[2], const long tail[2])
{
    long got = 0;
    for (int k = 0; k < 2; k++) {
        for (long i = head[k]; i < tail[k]; i++) r->sum += (unsigned)r->q[k].buf[i];
        got += tail[k] - head[k];
        head[k] = tail[k];
    }
    return got;
}

/* Reads both queues' tails, each under its own lock: 1 if either has something past head. */
static int look(struct run *r, const long head[2], long tail[2])
{
    for (int k = 0; k < 2; k++) {
        q_lock(r, k);
        tail[k] = r->q[k].tail;
        q_unlock(r, k);
    }
    return tail[0] != head[0] || tail[1] != head[1];
}

static void *consume(void *p)
{
    struct run *r = (struct run *)p;
    long head[2] = { 0, 0 }, tail[2];
    const long total = 2 * r->m;
    long done = 0, waits = 0;
    pthread_barrier_wait(&r->start);
    r->t_start = bench_now_ns();
    long s0 = rusage_thread_vcsw();
    while (done < total) {
        switch (r->v) {
        case V_COND1:
            pthread_mutex_lock(&r->one_m);
            while ((tail[0] = r->q[0].tail) == head[0] && (tail[1] = r->q[1].tail) == head[1]) {
                pthread_cond_wait(&r->one_c, &r->one_m);
                waits++;
            }
            tail[1] = r->q[1].tail;
            pthread_mutex_unlock(&r->one_m);
            break;
        case V_TWOMUTEX:
            pthread_mutex_lock(&r->qm[0].m);
            pthread_mutex_lock(&r->qm[1].m);
            while ((tail[0] = r->q[0].tail) == head[0] && (tail[1] = r->q[1].tail) == head[1]) {
                twocond_wait(&r->tc, &r->qm[0].m, &r->qm[1].m);
                waits++;
            }
            tail[1] = r->q[1].tail;
            pthread_mutex_unlock(&r->qm[1].m);
            pthread_mutex_unlock(&r->qm[0].m);
            break;
        case V_EVENT:
            /* Check first; reset only when both queues look empty, so that while messages
             * flow the event stays set and every set is a fence and a load (no RMW). */
            for (bool armed = false;; armed = true) {
                if (look(r, head, tail)) break;
                if (armed) {
                    fastsync_event_wait(&r->ev);
                    waits++;
                }
                /* reset ends with a seq_cst fence: pairs with the fence that starts each
                 * supplier's set, so an append made before a set that this reset hid is
                 * visible to the check that follows (the reset / check / wait loop). */
                fastsync_event_reset(&r->ev);
            }
            break;
        case V_FSCOND:
            /* Check first; take a ticket only when both queues look empty (while messages
             * flow, no RMW on the condvar), then check again and cancel or await it. */
            for (bool armed = false;; armed = true) {
                fastsync_cond_ticket_t t;
                if (armed) fastsync_cond_register(&r->fc, &t);
                if (look(r, head, tail)) {
                    if (armed) fastsync_cond_cancel(&r->fc, &t);
                    break;
                }
                if (armed) {
                    fastsync_cond_await(&r->fc, &t);
                    waits++;
                }
            }
            break;
        default: break;
        }
        done += take(r, head, tail);
    }
    r->t_end = bench_now_ns();
    r->sleeps = rusage_thread_vcsw() - s0;
    r->waits = waits;
    bench_futex_flush();
    return NULL;
}

struct result { double ms, per_wait, per_sleep; };

static struct result run_variant(enum variant v, long m)
{
    struct run *r = (struct run *)bench_alloc(sizeof *r);
    r->v = v;
    r->m = m;
    pthread_mutex_init(&r->qm[0].m, NULL);
    pthread_mutex_init(&r->qm[1].m, NULL);
    pthread_mutex_init(&r->one_m, NULL);
    pthread_cond_init(&r->one_c, NULL);
    pthread_mutex_init(&r->tc.lock, NULL);
    pthread_cond_init(&r->tc.cond, NULL);
    fastsync_event_init(&r->ev, false, 0);
    if (fastsync_mutex_init(&r->fm[0].m, 0) || fastsync_mutex_init(&r->fm[1].m, 0) ||
        fastsync_cond_init(&r->fc, 0))
        bench_fail("fastsync init");
    for (int k = 0; k < 2; k++) {
        r->q[k].m = v == V_COND1 ? &r->one_m : &r->qm[k].m;
        r->q[k].buf = (int *)bench_alloc((size_t)m * sizeof(int)); /* preallocated and touched */
    }
    pthread_barrier_init(&r->start, NULL, 4);
    struct supplier s[2];
    memset(s, 0, sizeof s);
    s[0].r = s[1].r = r;
    s[1].k = 1;
    pthread_t th[3];
    th[0] = bench_thread_start(consume, r);
    th[1] = bench_thread_start(supply, &s[0]);
    th[2] = bench_thread_start(supply, &s[1]);
    pthread_barrier_wait(&r->start);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    /* From the first thread's start to the last one's end (this thread may run late). */
    uint64_t t0 = r->t_start, t1 = r->t_end;
    for (int k = 0; k < 2; k++) {
        t0 = s[k].t_start < t0 ? s[k].t_start : t0;
        t1 = s[k].t_end > t1 ? s[k].t_end : t1;
    }
    unsigned long long want = (unsigned long long)m * (unsigned long long)(m - 1); /* 2 * sum 0..m-1 */
    if (r->sum != want) bench_fail("twoqueue: the consumer's sum is wrong");
    struct result res;
    res.ms = (double)(t1 - t0) / 1e6;
    res.per_wait = (double)(2 * m) / (double)(r->waits ? r->waits : 1);
    res.per_sleep = (double)(2 * m) / (double)(r->sleeps ? r->sleeps : 1);
    pthread_barrier_destroy(&r->start);
    pthread_cond_destroy(&r->one_c);
    pthread_cond_destroy(&r->tc.cond);
    if (fastsync_cond_destroy(&r->fc) || fastsync_mutex_destroy(&r->fm[0].m) ||
        fastsync_mutex_destroy(&r->fm[1].m))
        bench_fail("twoqueue: a fastsync object still in use at the end");
    free(r->q[0].buf);
    free(r->q[1].buf);
    free(r);
    return res;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int argn = bench_parse(argc, argv, &o);
    bool on[V_COUNT] = { argn == 1, argn == 1, argn == 1, argn == 1 };
    for (int i = 1; i < argn; i++) {
        int k = 0;
        while (k < V_COUNT && strcmp(argv[i], vname[k]) != 0) k++;
        if (k == V_COUNT) {
            fprintf(stderr, "twoqueue: unknown variant %s\n", argv[i]);
            return 2;
        }
        on[k] = true;
    }
    const long m = o.iters ? o.iters : o.quick ? 200000 : 1000000;
    const int R = o.reps;
    double *v = (double *)calloc((size_t)R * 3 * V_COUNT, sizeof(double));
    if (!v) bench_fail("out of memory");
    for (int r = 0; r < R; r++)
        for (int k = 0; k < V_COUNT; k++) {
            if (!on[k]) continue;
            struct result x = run_variant((enum variant)k, m);
            v[(k * 3 + 0) * R + r] = x.ms;
            v[(k * 3 + 1) * R + r] = x.per_wait;
            v[(k * 3 + 2) * R + r] = x.per_sleep;
        }

    printf("twoqueue: %s; 2 suppliers x %ld messages, one consumer; median of %d\n", o.build, m, R);
    printf("rate: messages per wakeup (per wait call of the consumer), per sleep (its context "
           "switches); time: total\n");
    printf("%-10s", "");
    for (int k = 0; k < V_COUNT; k++)
        if (on[k]) printf("| %-26s", vtitle[k]);
    printf("|\n%-10s", "library");
    for (int k = 0; k < V_COUNT; k++)
        if (on[k]) printf("| %6s %7s %10s ", "rate", "/sleep", "time");
    printf("|\n%-10s", o.build);
    for (int k = 0; k < V_COUNT; k++) {
        if (!on[k]) continue;
        double ms = bench_csv_samples(&o, "twoqueue", vname[k], "time_ms", "ms", &v[(k * 3) * R], R);
        double pw = bench_csv_samples(&o, "twoqueue", vname[k], "msgs_per_wait", "msgs", &v[(k * 3 + 1) * R], R);
        double ps = bench_csv_samples(&o, "twoqueue", vname[k], "msgs_per_sleep", "msgs", &v[(k * 3 + 2) * R], R);
        printf("| %6.1f %7.1f %7.3f s ", pw, ps, ms / 1e3);
    }
    printf("|\n");
    if (on[V_COND1] && on[V_EVENT])
        printf("fastsync_event time / pthread_cond time: %.2f\n",
               bench_median(&v[(V_EVENT * 3) * R], R) / bench_median(&v[(V_COND1 * 3) * R], R));
    if (on[V_COND1] && on[V_FSCOND])
        printf("fastsync_cond by ticket time / pthread_cond time: %.2f\n",
               bench_median(&v[(V_FSCOND * 3) * R], R) / bench_median(&v[(V_COND1 * 3) * R], R));
    free(v);
    return 0;
}
