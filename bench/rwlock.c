/* SPDX-License-Identifier: MIT */
/* bench/rwlock.c - fastsync_rwlock_t against the peers' reader-writer locks: uncontended,
 * contended mixes of reads and writes, and a writer under continuous readers (issue 20).
 *
 * One source, three builds (as bench/mutex.c): built with gcc the peers are glibc's
 * pthread_rwlock_t twice, the default kind (readers first) and
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP (pthread_rwlockattr_setkind_np); with
 * musl-gcc -static musl's pthread_rwlock_t; as C++23 (g++ -x c++ -std=c++23) libstdc++'s
 * std::shared_mutex, and fastsync.hpp's fastsync::shared_mutex beside fastsync's C calls.
 *   uncontended  one thread, n read pairs (rdlock + rdunlock), then n write pairs (wrlock +
 *                wrunlock): ns per pair, and fastsync's futex calls per pair (its replaceable
 *                futex layer); fastsync_mutex_t's lock + unlock beside them, the write pair's
 *                reference. Measured once the process has had a second thread (glibc leaves
 *                out the lock prefix of its atomics while a process has only ever had one;
 *                see bench/mutex.c).
 *   contended    T threads (2, 4, 8), each limited to CPUs 0 and 1, share one lock for a time
 *                box, with R% reads (100, 90, 50, 0; each pair a read with probability R%, a
 *                per-thread xorshift): a read takes the read lock, checks a cache line of
 *                shared data (8 words the writers keep consistent: a reader that sees them
 *                torn fails the run) and works ~20 polls inside; a write takes the write lock,
 *                updates the line and works as long; then ~20 polls outside. Pairs per second
 *                (all threads), the spread between threads (slowest thread's pairs /
 *                fastest's: 1.0 is even, near 0 is starvation), fastsync's futex calls per
 *                1000 pairs. Writes are counted and checked against the data's counter.
 *   starve       3 reader threads hold the read lock in turn for HOLD_MS each, staggered by a
 *                third of it on an absolute schedule (each one leaves at its own boundary and
 *                re-enters at once, so the read lock is never free while the readers have
 *                their way), and one writer: it sleeps 3 to 4 holds, takes the write lock
 *                (wrlock, untimed), writes, unlocks, up to --attempts times. A watchdog (main) stops
 *                the readers from re-entering once the writer has waited --cap ms, so a lock
 *                that never lets the writer in ends the attempt (counted as "did not get in
 *                within the cap"); after --stop-after such attempts the run ends. Printed:
 *                the writer's longest and median wait, attempts, those over the cap, and the
 *                readers' longest hold (the bound a writers-first lock should keep).
 * Implementations alternate within each repetition; medians of --reps (bench/run runs one
 * repetition per round, the builds taking turns, as for bench/mutex).
 *
 *   rwlock [--quick] [--reps N] [--ms N] [--attempts N] [--cap MS] [--stop-after N]
 *          [--csv FILE] [--build NAME] [REGIME...]
 *          REGIME: uncontended contended starve (default: all)
 *   rwlock --op OP --iters N     one loop only, no output (for callgrind, perf, strace):
 *          OP: rd-fs wr-fs rd-peer wr-peer rd-pw wr-pw rd-cxx wr-cxx (uncontended pairs; pw:
 *          glibc's prefer-writer kind, glibc build only; cxx: fastsync::shared_mutex, C++
 *          build only), lock-mx (fastsync_mutex_t lock + unlock), or r<R>t<T>-fs / -peer /
 *          -pw / -cxx (T threads, R% reads, N pairs in all)
 */
#include "bench.h"

#if defined(__cplusplus)
/* ---- adapter: the peer, libstdc++'s std::shared_mutex (this file built as C++23); and
 * fastsync.hpp's fastsync::shared_mutex (the C calls, inlined) ---- */
#include "fastsync.hpp"
#include <new>
#include <shared_mutex>
#define PEER_NAME "std::shared_mutex"
#define HAVE_PW 0
#define HAVE_FSCXX 1
typedef fastsync::shared_mutex fscxx_rwlock;
static inline void fscxx_rdlock(fscxx_rwlock *l) { l->lock_shared(); }
static inline void fscxx_rdunlock(fscxx_rwlock *l) { l->unlock_shared(); }
static inline void fscxx_wrlock(fscxx_rwlock *l) { l->lock(); }
static inline void fscxx_wrunlock(fscxx_rwlock *l) { l->unlock(); }
typedef std::shared_mutex peer_rwlock;
static peer_rwlock *peer_new(int prefer_writer)
{
    (void)prefer_writer;
    return new (bench_alloc(sizeof(peer_rwlock))) peer_rwlock();
}
static void peer_free(peer_rwlock *l)
{
    l->~peer_rwlock();
    free(l);
}
static inline void peer_rdlock(peer_rwlock *l) { l->lock_shared(); }
static inline void peer_rdunlock(peer_rwlock *l) { l->unlock_shared(); }
static inline void peer_wrlock(peer_rwlock *l) { l->lock(); }
static inline void peer_wrunlock(peer_rwlock *l) { l->unlock(); }
#else
/* ---- adapter: the peer, the C library's pthread_rwlock_t (glibc with gcc, musl with
 * musl-gcc); glibc's also of the kind PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP ---- */
#if defined(__GLIBC__)
#define PEER_NAME "glibc pthread_rwlock_t"
#define HAVE_PW 1
#else
#define PEER_NAME "pthread_rwlock_t"
#define HAVE_PW 0
#endif
#define HAVE_FSCXX 0
typedef pthread_rwlock_t peer_rwlock;
static peer_rwlock *peer_new(int prefer_writer)
{
    peer_rwlock *l = (peer_rwlock *)bench_alloc(sizeof *l);
    pthread_rwlockattr_t a;
    if (pthread_rwlockattr_init(&a) != 0) bench_fail("pthread_rwlockattr_init");
#if HAVE_PW
    if (prefer_writer &&
        pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) != 0)
        bench_fail("pthread_rwlockattr_setkind_np");
#else
    (void)prefer_writer;
#endif
    if (pthread_rwlock_init(l, &a) != 0) bench_fail("pthread_rwlock_init");
    pthread_rwlockattr_destroy(&a);
    return l;
}
static void peer_free(peer_rwlock *l)
{
    if (pthread_rwlock_destroy(l) != 0) bench_fail("pthread_rwlock_destroy");
    free(l);
}
static inline void peer_rdlock(peer_rwlock *l) { (void)pthread_rwlock_rdlock(l); }
static inline void peer_rdunlock(peer_rwlock *l) { (void)pthread_rwlock_unlock(l); }
static inline void peer_wrlock(peer_rwlock *l) { (void)pthread_rwlock_wrlock(l); }
static inline void peer_wrunlock(peer_rwlock *l) { (void)pthread_rwlock_unlock(l); }
#endif

/* ---- adapter: fastsync ---- */
static fastsync_rwlock_t *fs_new(void)
{
    fastsync_rwlock_t *l = (fastsync_rwlock_t *)bench_alloc(sizeof *l);
    if (fastsync_rwlock_init(l, 0) != 0) bench_fail("fastsync_rwlock_init");
    return l;
}
static void fs_free(fastsync_rwlock_t *l)
{
    if (fastsync_rwlock_destroy(l) != 0) bench_fail("fastsync_rwlock_destroy: still held");
    free(l);
}
static inline void fs_rdlock(fastsync_rwlock_t *l) { (void)fastsync_rwlock_rdlock(l); }
static inline void fs_rdunlock(fastsync_rwlock_t *l) { (void)fastsync_rwlock_rdunlock(l); }
static inline void fs_wrlock(fastsync_rwlock_t *l) { (void)fastsync_rwlock_wrlock(l); }
static inline void fs_wrunlock(fastsync_rwlock_t *l) { (void)fastsync_rwlock_wrunlock(l); }

/* Implementations: fastsync, the peer, (glibc build) the peer of the prefer-writer kind,
 * (C++ build) fastsync::shared_mutex. */
enum { IMPL_FS, IMPL_PEER, IMPL_PW, IMPL_FSCXX, NIMPL };
enum { MAXT = 8, CPUS = 2, NREADERS = 3 };
static const char *const impl_variant[NIMPL] = { "fastsync", "peer", "peer_pw", "fastsync_cxx" };
static const char *const impl_name[NIMPL] = { "fastsync_rwlock_t", PEER_NAME,
                                              PEER_NAME ", PREFER_WRITER_NP", "fastsync::shared_mutex" };
static int impl_there(int impl)
{
    return (impl != IMPL_PW || HAVE_PW) && (impl != IMPL_FSCXX || HAVE_FSCXX);
}

/* One lock of any implementation. */
struct lock {
    int impl;
    fastsync_rwlock_t *fs;
    peer_rwlock *peer;
#if HAVE_FSCXX
    fscxx_rwlock *cxx;
#endif
};
static struct lock lock_new(int impl)
{
    struct lock l;
    l.impl = impl;
    l.fs = impl == IMPL_FS ? fs_new() : NULL;
    l.peer = impl == IMPL_PEER || impl == IMPL_PW ? peer_new(impl == IMPL_PW) : NULL;
#if HAVE_FSCXX
    l.cxx = impl == IMPL_FSCXX ? new (bench_alloc(sizeof(fscxx_rwlock))) fscxx_rwlock() : NULL;
#endif
    return l;
}
static void lock_free(struct lock *l)
{
    if (l->fs) fs_free(l->fs);
    if (l->peer) peer_free(l->peer);
#if HAVE_FSCXX
    if (l->cxx) {
        if (fastsync_rwlock_destroy(l->cxx->native_handle()) != 0) bench_fail("fastsync::shared_mutex: still held");
        l->cxx->~fscxx_rwlock();
        free(l->cxx);
    }
#endif
}
#if HAVE_FSCXX
#define RW_CXX(op)                                                                            \
    else if (l->impl == IMPL_FSCXX) fscxx_##op(l->cxx);
#else
#define RW_CXX(op)
#endif
static inline void rd_lock(struct lock *l)
{
    if (l->impl == IMPL_FS) fs_rdlock(l->fs);
    RW_CXX(rdlock)
    else peer_rdlock(l->peer);
}
static inline void rd_unlock(struct lock *l)
{
    if (l->impl == IMPL_FS) fs_rdunlock(l->fs);
    RW_CXX(rdunlock)
    else peer_rdunlock(l->peer);
}
static inline void wr_lock(struct lock *l)
{
    if (l->impl == IMPL_FS) fs_wrlock(l->fs);
    RW_CXX(wrlock)
    else peer_wrlock(l->peer);
}
static inline void wr_unlock(struct lock *l)
{
    if (l->impl == IMPL_FS) fs_wrunlock(l->fs);
    RW_CXX(wrunlock)
    else peer_wrunlock(l->peer);
}

/* The loops that callgrind measures (bench/run: --toggle-collect=P_rd_loop etc.): n pairs. */
#define RW_LOOPS(P, type)                                                                     \
    BENCH_NOINLINE static void P##_rd_loop(type *l, long n)                                   \
    {                                                                                         \
        for (long i = 0; i < n; i++) {                                                        \
            P##_rdlock(l);                                                                    \
            P##_rdunlock(l);                                                                  \
        }                                                                                     \
    }                                                                                         \
    BENCH_NOINLINE static void P##_wr_loop(type *l, long n)                                   \
    {                                                                                         \
        for (long i = 0; i < n; i++) {                                                        \
            P##_wrlock(l);                                                                    \
            P##_wrunlock(l);                                                                  \
        }                                                                                     \
    }
RW_LOOPS(fs, fastsync_rwlock_t)
RW_LOOPS(peer, peer_rwlock)
#if HAVE_FSCXX
RW_LOOPS(fscxx, fscxx_rwlock)
#endif

/* The write pair's reference: fastsync_mutex_t's lock + unlock (bench/mutex's loop). */
BENCH_NOINLINE static void mx_lock_loop(fastsync_mutex_t *m, long n)
{
    for (long i = 0; i < n; i++) {
        fastsync_mutex_lock(m);
        fastsync_mutex_unlock(m);
    }
}

/* One thread, n pairs of impl (IMPL_*, or NIMPL: the mutex), reads or writes: ns per pair;
 * *futex gets fastsync's futex calls per pair. */
static double uncontended(int impl, int write, long n, double *futex)
{
    unsigned long f0 = bench_futex_calls();
    uint64_t t0, t1;
    if (impl == NIMPL) {
        fastsync_mutex_t *m = (fastsync_mutex_t *)bench_alloc(sizeof *m);
        if (fastsync_mutex_init(m, 0) != 0) bench_fail("fastsync_mutex_init");
        t0 = bench_now_ns();
        mx_lock_loop(m, n);
        t1 = bench_now_ns();
        if (fastsync_mutex_destroy(m) != 0) bench_fail("fastsync_mutex_destroy");
        free(m);
    } else {
        struct lock l = lock_new(impl);
        t0 = bench_now_ns();
        if (impl == IMPL_FS) {
            if (write) fs_wr_loop(l.fs, n);
            else fs_rd_loop(l.fs, n);
#if HAVE_FSCXX
        } else if (impl == IMPL_FSCXX) {
            if (write) fscxx_wr_loop(l.cxx, n);
            else fscxx_rd_loop(l.cxx, n);
#endif
        } else {
            if (write) peer_wr_loop(l.peer, n);
            else peer_rd_loop(l.peer, n);
        }
        t1 = bench_now_ns();
        lock_free(&l);
    }
    *futex = (double)(bench_futex_calls() - f0) / (double)n;
    return (double)(t1 - t0) / (double)n;
}

/* ---- the contended runs ---- */
static const int mixes[] = { 100, 90, 50, 0 }; /* % reads */
enum { NMIX = sizeof mixes / sizeof mixes[0] };
static const int threads[] = { 2, 4, 8 };
enum { NT = sizeof threads / sizeof threads[0] };
enum { WORK_INSIDE = 20, WORK_OUTSIDE = 20 }; /* polls of work(), as bench/mutex's contended */

struct shared_data {
    unsigned long counter;   /* writes */
    unsigned long line[7];   /* each the sum 1 + 2 + ... + counter: checked by the readers */
};

struct run {
    struct lock lock;
    int reads;           /* % */
    unsigned long limit; /* pairs per thread (0: until stop) */
    struct shared_data *data;
    atomic_int go, stop, torn;
};

struct th {
    pthread_t t;
    struct run *run;
    int index;
    unsigned long pairs, writes;
};

static BENCH_NOINLINE void work(unsigned n) /* as bench/mutex.c's */
{
    volatile unsigned i = 0; /* (C++20 deprecates ++ on a volatile) */
    while (i < n) i = i + 1;
}

static void *worker(void *p)
{
    struct th *me = (struct th *)p;
    struct run *r = me->run;
    struct shared_data *d = r->data;
    unsigned long n = 0, writes = 0, limit = r->limit ? r->limit : (unsigned long)-1;
    uint32_t x = 2463534242u + 7919u * (uint32_t)me->index; /* xorshift32, never 0 */
    int torn = 0;
    bench_limit_cpus(CPUS);
    /* acquire: the start flag, after main set up the run (pairs with main's release store);
     * relaxed stop flag: only ends the loop; the counts are read after the join. */
    while (!atomic_load_explicit(&r->go, memory_order_acquire)) {
    }
    while (n < limit && !atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if ((int)(x % 100u) < r->reads) {
            rd_lock(&r->lock);
            unsigned long c = d->counter, want = c * (c + 1) / 2; /* (mod 2^N, as the sums) */
            for (int i = 0; i < 7; i++) torn |= d->line[i] != want;
            work(WORK_INSIDE);
            rd_unlock(&r->lock);
        } else {
            wr_lock(&r->lock);
            unsigned long c = ++d->counter;
            for (int i = 0; i < 7; i++) d->line[i] += c;
            work(WORK_INSIDE);
            wr_unlock(&r->lock);
            writes++;
        }
        work(WORK_OUTSIDE);
        n++;
    }
    me->pairs = n;
    me->writes = writes;
    if (torn) atomic_store_explicit(&r->torn, 1, memory_order_relaxed); /* read after the join */
    bench_futex_flush();
    return NULL;
}

struct result {
    double rate;   /* pairs per second, all threads */
    double spread; /* slowest thread's pairs / fastest's */
    double futex;  /* fastsync's futex calls per 1000 pairs */
};

/* nt threads, reads% reads, for ms milliseconds (or `pairs` pairs in all, when not 0). */
static struct result contend(int impl, int reads, int nt, unsigned ms, unsigned long pairs)
{
    struct th t[MAXT];
    struct run r;
    struct result res;
    r.lock = lock_new(impl);
    r.reads = reads;
    r.limit = pairs / (unsigned long)nt;
    r.data = (struct shared_data *)bench_alloc(sizeof *r.data);
    /* relaxed: the threads that read them are created after these stores. */
    atomic_store_explicit(&r.go, 0, memory_order_relaxed);
    atomic_store_explicit(&r.stop, 0, memory_order_relaxed);
    atomic_store_explicit(&r.torn, 0, memory_order_relaxed);
    unsigned long f0 = bench_futex_calls();
    for (int i = 0; i < nt; i++) {
        t[i].run = &r;
        t[i].index = i;
        t[i].t = bench_thread_start(worker, &t[i]);
    }
    uint64_t t0 = bench_now_ns();
    atomic_store_explicit(&r.go, 1, memory_order_release); /* pairs with the workers' acquire */
    if (!pairs) {
        bench_sleep_ns((uint64_t)ms * 1000000u);
        atomic_store_explicit(&r.stop, 1, memory_order_relaxed);
    }
    unsigned long total = 0, writes = 0, lo = (unsigned long)-1, hi = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i].t, NULL);
        total += t[i].pairs;
        writes += t[i].writes;
        lo = t[i].pairs < lo ? t[i].pairs : lo;
        hi = t[i].pairs > hi ? t[i].pairs : hi;
    }
    double secs = (double)(bench_now_ns() - t0) / 1e9;
    if (writes != r.data->counter) bench_fail("the counter differs from the writes: no mutual exclusion");
    if (atomic_load_explicit(&r.torn, memory_order_relaxed))
        bench_fail("a reader saw a write half done: no exclusion between readers and writers");
    res.rate = (double)total / secs;
    res.spread = hi ? (double)lo / (double)hi : 0;
    res.futex = total ? 1000.0 * (double)(bench_futex_calls() - f0) / (double)total : 0;
    lock_free(&r.lock);
    free(r.data);
    return res;
}

/* ---- the writer under continuous readers ---- */
enum { HOLD_MS = 2 };                  /* each reader's hold */
enum { MAX_ATTEMPTS = 1000 };

struct starve {
    struct lock lock;
    uint64_t t0, hold_ns, cap_ns;
    int attempts, stop_after;
    atomic_int stop, pause, done;
    _Atomic(uint64_t) waiting_since; /* the writer's current attempt's start, or 0 */
    uint64_t hold_max[NREADERS];
    double wait_ns[MAX_ATTEMPTS];
    int made, over;
    struct shared_data data;
};

struct reader {
    pthread_t t;
    struct starve *s;
    int index;
};

static void sleep_until(uint64_t t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(t / 1000000000u);
    ts.tv_nsec = (long)(t % 1000000000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

static void *reader(void *p)
{
    struct reader *me = (struct reader *)p;
    struct starve *s = me->s;
    /* this reader leaves at phase + k holds: a third of a hold after the previous reader */
    uint64_t phase = s->t0 + s->hold_ns * (uint64_t)me->index / NREADERS, hmax = 0;
    bench_limit_cpus(CPUS);
    /* relaxed flags: they only steer the loop; the data is read under the lock, the counts
     * after the join. */
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        if (atomic_load_explicit(&s->pause, memory_order_relaxed)) {
            bench_sleep_ns(100000);
            continue;
        }
        rd_lock(&s->lock);
        uint64_t in = bench_now_ns();
        unsigned long c = s->data.counter;
        if (s->data.line[0] != c * (c + 1) / 2) bench_fail("starve: a reader saw a write half done");
        sleep_until(in < phase ? phase : phase + ((in - phase) / s->hold_ns + 1) * s->hold_ns);
        uint64_t held = bench_now_ns() - in;
        rd_unlock(&s->lock);
        hmax = held > hmax ? held : hmax;
    }
    s->hold_max[me->index] = hmax;
    return NULL;
}

static void *writer(void *p)
{
    struct starve *s = (struct starve *)p;
    bench_limit_cpus(CPUS);
    for (int a = 0; a < s->attempts && s->over < s->stop_after; a++) {
        /* 3 holds apart, plus a varying part of one, so that the attempts fall at every
         * point of the readers' schedule */
        bench_sleep_ns(3 * s->hold_ns + s->hold_ns * (uint64_t)((a * 37) % 100) / 100);
        uint64_t t0 = bench_now_ns();
        atomic_store(&s->waiting_since, t0);
        wr_lock(&s->lock);
        uint64_t w = bench_now_ns() - t0;
        atomic_store(&s->waiting_since, (uint64_t)0);
        unsigned long c = ++s->data.counter;
        for (int i = 0; i < 7; i++) s->data.line[i] += c;
        wr_unlock(&s->lock);
        atomic_store(&s->pause, 0); /* the watchdog's, if it stopped the readers */
        s->wait_ns[s->made++] = (double)w;
        if (w >= s->cap_ns) s->over++;
    }
    atomic_store(&s->done, 1);
    return NULL;
}

struct starve_result {
    double wait_max_ms, wait_median_ms, hold_max_ms;
    int attempts, over;
};

static struct starve_result starve(int impl, int attempts, unsigned cap_ms, int stop_after)
{
    struct starve *s = (struct starve *)bench_alloc(sizeof *s);
    struct reader rd[NREADERS];
    struct starve_result res;
    s->lock = lock_new(impl);
    s->hold_ns = (uint64_t)HOLD_MS * 1000000u;
    s->cap_ns = (uint64_t)cap_ms * 1000000u;
    s->attempts = attempts < MAX_ATTEMPTS ? attempts : MAX_ATTEMPTS;
    s->stop_after = stop_after;
    s->t0 = bench_now_ns();
    for (int i = 0; i < NREADERS; i++) {
        rd[i].s = s;
        rd[i].index = i;
        rd[i].t = bench_thread_start(reader, &rd[i]);
    }
    pthread_t w = bench_thread_start(writer, s);
    /* the watchdog: once the writer has waited the cap, the readers stop re-entering (the
     * writer lets them in again after its unlock) */
    while (!atomic_load(&s->done)) {
        bench_sleep_ns(1000000);
        uint64_t since = atomic_load(&s->waiting_since);
        if (since && bench_now_ns() - since > s->cap_ns) atomic_store(&s->pause, 1);
    }
    pthread_join(w, NULL);
    atomic_store(&s->stop, 1);
    atomic_store(&s->pause, 0);
    for (int i = 0; i < NREADERS; i++) pthread_join(rd[i].t, NULL);
    if (s->data.counter != (unsigned long)s->made) bench_fail("starve: the counter differs from the writes");
    uint64_t hmax = 0;
    for (int i = 0; i < NREADERS; i++) hmax = s->hold_max[i] > hmax ? s->hold_max[i] : hmax;
    res.attempts = s->made;
    res.over = s->over;
    res.wait_max_ms = bench_max(s->wait_ns, s->made) / 1e6;
    res.wait_median_ms = bench_median(s->wait_ns, s->made) / 1e6;
    res.hold_max_ms = (double)hmax / 1e6;
    lock_free(&s->lock);
    free(s);
    return res;
}

/* --op: one loop, no output. */
static int run_op(const char *op, long n)
{
    double unused;
    int impl = -1, reads = -1, nt = 0;
    if (n <= 0) n = 1;
    const char *dash = strrchr(op, '-');
    if (dash && strcmp(dash, "-fs") == 0) impl = IMPL_FS;
    else if (dash && strcmp(dash, "-peer") == 0) impl = IMPL_PEER;
    else if (dash && strcmp(dash, "-pw") == 0 && HAVE_PW) impl = IMPL_PW;
    else if (dash && strcmp(dash, "-cxx") == 0 && HAVE_FSCXX) impl = IMPL_FSCXX;
    if (strcmp(op, "lock-mx") == 0) (void)uncontended(NIMPL, 1, n, &unused);
    else if (impl >= 0 && strncmp(op, "rd-", 3) == 0) (void)uncontended(impl, 0, n, &unused);
    else if (impl >= 0 && strncmp(op, "wr-", 3) == 0) (void)uncontended(impl, 1, n, &unused);
    else if (impl >= 0 && sscanf(op, "r%dt%d-", &reads, &nt) == 2 && reads >= 0 && reads <= 100 &&
             nt >= 1 && nt <= MAXT)
        (void)contend(impl, reads, nt, 0, (unsigned long)n);
    else {
        fprintf(stderr, "rwlock: unknown --op %s\n", op);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    /* A second thread, before any measurement (see "uncontended" above). */
    bench_second_thread();
    unsigned ms = (unsigned)bench_take_opt(&argc, argv, "--ms", 0);
    int attempts = (int)bench_take_opt(&argc, argv, "--attempts", 0);
    unsigned cap_ms = (unsigned)bench_take_opt(&argc, argv, "--cap", 0);
    int stop_after = (int)bench_take_opt(&argc, argv, "--stop-after", 0);
    int argn = bench_parse(argc, argv, &o);
    if (o.op) return run_op(o.op, o.iters);
    bool t_unc = argn == 1, t_cont = argn == 1, t_starve = argn == 1;
    for (int i = 1; i < argn; i++) {
        if (strcmp(argv[i], "uncontended") == 0) t_unc = true;
        else if (strcmp(argv[i], "contended") == 0) t_cont = true;
        else if (strcmp(argv[i], "starve") == 0) t_starve = true;
        else {
            fprintf(stderr, "rwlock: unknown regime %s\n", argv[i]);
            return 2;
        }
    }
    if (ms == 0) ms = o.quick ? 100 : 500;
    if (attempts <= 0) attempts = o.quick ? 20 : 200;
    if (cap_ms == 0) cap_ms = o.quick ? 250 : 2000;
    if (stop_after <= 0) stop_after = o.quick ? 2 : 3;
    const long n_unc = o.iters ? o.iters : o.quick ? 500000 : 10000000;
    const int R = o.reps;
    /* samples: uncontended [impl + the mutex][read, write][ns, futex][rep];
     * contended [metric][mix][T][impl][rep] */
    enum { NUNC = NIMPL + 1 };
    double *v = (double *)calloc((size_t)R * (NUNC * 2 * 2 + 3 * NMIX * NT * NIMPL), sizeof(double));
    if (!v) bench_fail("out of memory");
    double *cont = v + NUNC * 2 * 2 * R;
#define UNC(i, w, m, r) v[((((i) * 2 + (w)) * 2 + (m)) * R) + (r)]
#define CONT(m, x, k, i, r) cont[((((m) * NMIX + (x)) * NT + (k)) * NIMPL + (i)) * R + (r)]

    for (int r = 0; r < R; r++) {
        for (int i = 0; t_unc && i < NUNC; i++)
            for (int w = 0; w < 2; w++)
                if ((i == NIMPL ? w == 1 : impl_there(i)))
                    UNC(i, w, 0, r) = uncontended(i, w, n_unc, &UNC(i, w, 1, r));
        for (int x = 0; t_cont && x < NMIX; x++)
            for (int k = 0; k < NT; k++)
                for (int i = 0; i < NIMPL; i++)
                    if (impl_there(i)) {
                        struct result res = contend(i, mixes[x], threads[k], ms, 0);
                        CONT(0, x, k, i, r) = res.rate;
                        CONT(1, x, k, i, r) = res.spread;
                        CONT(2, x, k, i, r) = res.futex;
                    }
    }

    printf("rwlock: %s, fastsync FASTSYNC_SPIN=%d+%d; median of %d; %ld CPUs, threads limited to %d\n",
           o.build, FASTSYNC_SPIN, FASTSYNC_SPIN_YIELDS, R, bench_ncpu(), CPUS);
    const char *B = "rwlock";
    char metric[64];
    if (t_unc) {
        printf("%-44s %10s %10s %11s %11s\n", "uncontended", "read ns", "write ns", "read futex",
               "write futex");
        for (int i = 0; i < NUNC; i++) {
            if (i < NIMPL && !impl_there(i)) continue;
            const char *var = i == NIMPL ? "mutex" : impl_variant[i];
            double med[2][2];
            for (int w = 0; w < 2; w++) {
                if (i == NIMPL && w == 0) continue;
                med[w][0] = bench_csv_samples(&o, B, var, w ? "wr_ns" : "rd_ns", "ns", &UNC(i, w, 0, 0), R);
                if (i == IMPL_FS || i == IMPL_FSCXX || i == NIMPL) /* futex: fastsync's own */
                    med[w][1] = bench_csv_samples(&o, B, var, w ? "wr_futex" : "rd_futex", "calls",
                                                  &UNC(i, w, 1, 0), R);
            }
            if (i == NIMPL)
                printf("%-44s %10s %10.2f %11s %11.3f\n", "fastsync_mutex_t (lock+unlock)", "-", med[1][0],
                       "-", med[1][1]);
            else if (i == IMPL_FS || i == IMPL_FSCXX)
                printf("%-44s %10.2f %10.2f %11.3f %11.3f\n", impl_name[i], med[0][0], med[1][0],
                       med[0][1], med[1][1]);
            else
                printf("%-44s %10.2f %10.2f %11s %11s\n", impl_name[i], med[0][0], med[1][0], "-", "-");
        }
    }
    static const char *const mname[3] = { "pairs_s", "spread", "futex_per_1000" };
    static const char *const munit[3] = { "pairs/s", "ratio", "calls" };
    for (int x = 0; t_cont && x < NMIX; x++) {
        printf("%3d%% reads %-33s %7s %14s %8s %11s\n", mixes[x], "", "threads", "pairs/s", "spread",
               "futex/1000");
        for (int k = 0; k < NT; k++)
            for (int i = 0; i < NIMPL; i++) {
                if (!impl_there(i)) continue;
                double med[3];
                int own = i == IMPL_FS || i == IMPL_FSCXX; /* futex: fastsync's own */
                for (int m = 0; m < (own ? 3 : 2); m++) {
                    snprintf(metric, sizeof metric, "r%dt%d_%s", mixes[x], threads[k], mname[m]);
                    med[m] = bench_csv_samples(&o, B, impl_variant[i], metric, munit[m], &CONT(m, x, k, i, 0), R);
                }
                if (own)
                    printf("%-44s %7d %14.0f %8.2f %11.2f\n", impl_name[i], threads[k], med[0], med[1], med[2]);
                else
                    printf("%-44s %7d %14.0f %8.2f %11s\n", impl_name[i], threads[k], med[0], med[1], "-");
            }
    }
    if (t_cont)
        printf("(pairs/s: lock+unlock pairs per second, all threads, %u ms per run; spread: slowest"
               " thread's pairs / fastest's;\n futex/1000: fastsync's own futex calls per 1000 pairs;"
               " %d polls inside the lock and %d outside)\n", ms, WORK_INSIDE, WORK_OUTSIDE);
    if (t_starve) {
        printf("%-44s %11s %11s %9s %9s %12s\n", "writer under 3 readers", "longest ms", "median ms",
               "attempts", "over cap", "reader hold");
        for (int i = 0; i < NIMPL; i++) {
            if (!impl_there(i)) continue;
            struct starve_result s = starve(i, attempts, cap_ms, stop_after);
            const char *var = impl_variant[i];
            bench_csv_row(&o, B, var, "starve_wait_max_ms", "ms", s.wait_max_ms, s.wait_max_ms, s.wait_max_ms, 1);
            bench_csv_row(&o, B, var, "starve_wait_median_ms", "ms", s.wait_median_ms, s.wait_median_ms,
                          s.wait_median_ms, 1);
            bench_csv_row(&o, B, var, "starve_attempts", "count", s.attempts, s.attempts, s.attempts, 1);
            bench_csv_row(&o, B, var, "starve_over_cap", "count", s.over, s.over, s.over, 1);
            bench_csv_row(&o, B, var, "starve_hold_max_ms", "ms", s.hold_max_ms, s.hold_max_ms, s.hold_max_ms, 1);
            bench_csv_row(&o, B, var, "starve_cap_ms", "ms", cap_ms, cap_ms, cap_ms, 1);
            char longest[32];
            if (s.over)
                snprintf(longest, sizeof longest, ">%u", cap_ms);
            else
                snprintf(longest, sizeof longest, "%.2f", s.wait_max_ms);
            printf("%-44s %11s %11.2f %9d %9d %12.2f\n", impl_name[i], longest, s.wait_median_ms,
                   s.attempts, s.over, s.hold_max_ms);
        }
        printf("(3 readers, each holding %d ms and re-entering at once, a third of a hold apart;"
               " one writer, up to %d attempts\n 3 to 4 holds apart, wrlock untimed; over cap: attempts"
               " that did not get in within %u ms, after which the readers\n stopped re-entering"
               " until it had; the run ends after %d of them; reader hold: the readers' longest)\n",
               HOLD_MS, attempts, cap_ms, stop_after);
    }
    free(v);
    return 0;
}
