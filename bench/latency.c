/* SPDX-License-Identifier: MIT */
/* bench/latency.c - latency under load (issue 33, part 4): how long a call waits for a mutex,
 * reader-writer lock, semaphore, latch, barrier or condition variable when there are more
 * threads than CPUs, how evenly the threads are served, how late a timed wait returns, and
 * what the waiting costs in CPU time; fastsync against the C library's, libstdc++'s and
 * Abseil's.
 *
 * One source, three builds (as bench/mutex.c and bench/rwlock.c). Built with gcc the peers are
 * glibc's pthread_mutex_t, pthread_rwlock_t (twice: the default kind, readers first, and
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), sem_t, pthread_barrier_t and pthread_cond_t
 * with a pthread_mutex_t; with musl-gcc -static musl's (it has no prefer-writer kind); as C++23
 * (g++ -x c++ -std=c++23) libstdc++'s std::mutex, std::shared_mutex, std::counting_semaphore<>,
 * std::latch, std::barrier<> and std::condition_variable with a std::mutex (in the timed waits
 * std::timed_mutex and std::shared_timed_mutex, the types that have them), and, built with
 * -DLATENCY_ABSL and linked with absl_synchronization (bench/run does where pkg-config finds
 * it: Debian's libabsl-dev), Abseil's absl::Mutex beside the mutexes. The C library has no
 * latch: its builds measure fastsync's alone. Only public APIs are called.
 *
 * Every measured thread is limited to CPUs 0 and 1 (as in bench/rwlock.c): T threads, T = 2,
 * 4 and 8 (1x, 2x and 4x those CPUs), each T alone ("busy 0") and beside --busy B threads
 * (default 4) that only burn CPU on the same two CPUs. Work (a hold, a think time) is a loop
 * of polls, calibrated at the start (CPU ns per poll, the fastest of 5 timings); each operation
 * draws its hold and think time uniformly from its regime's ranges:
 *   spin   hold 0.1-0.5 us, think 0.1-0.5 us: shorter than a sleep and a wake, a spin pays
 *   sleep  hold 20-200 us, think 2-20 us: longer than a futex round trip, waiters sleep
 * Timestamps are clock_gettime(CLOCK_MONOTONIC) (the vDSO); each thread writes its samples to
 * an array of its own, merged and sorted after the join: the measurement shares nothing.
 *
 * Parts (positional arguments; default all three; naming primitives limits the run to them):
 *   latency  each primitive, regime, T and load for a time box of --ms (150; --quick 20) ms:
 *            mutex    T threads: think, lock, hold, unlock. A sample: lock's call to return.
 *            rwlock   T/2 readers and T/2 writers (1 and 1 at T 2), the same loop with rdlock
 *                     or wrlock: rows "rwlock rd" and "rwlock wr", each of its own threads.
 *                     The writers keep a cache line consistent, the readers check it.
 *            sem      a semaphore of T/2 tokens, T threads: think, wait, hold, post.
 *            latch    T threads, round after round, each round a fresh latch of count T:
 *                     think, arrive_and_wait. A sample: a thread's return less the round's
 *                     last arrival (the clock read just before the last count_down's call),
 *                     i.e. how long the opening takes to reach each waiter.
 *            barrier  the same at one barrier of count T (its wait).
 *            cond     T/2 producers and T/2 consumers of a queue of T items under one mutex,
 *                     two condition variables (not empty, not full): a producer thinks a
 *                     hold's time, locks, waits while full, pushes its clock, unlocks and
 *                     signals; a consumer locks, waits while empty, pops, unlocks, signals
 *                     and works a think's time. A sample: the pop's clock less the push's.
 *            Printed per row: ops/s (lock+unlock, wait+post pairs, rounds, items per second,
 *            all the row's threads); p50, p99, p99.9 and max of the samples, us; slow/fast,
 *            the slowest thread's operations / the fastest's among the row's threads (1.0
 *            even, near 0 starved; "-" for the latch and barrier, where every thread makes
 *            every round); cpu us/op, the row's threads' CPU time (CLOCK_THREAD_CPUTIME_ID,
 *            user + system, from the start to the end of each thread's loop) less their
 *            work's calibrated CPU, per operation: what waiting cost in spins, yields and
 *            system calls (the work's cost varies by a few % with the load, and the
 *            difference can come out slightly negative where waiting costs nothing: compare
 *            rows of one table, not across runs).
 *   timed    T threads (T and the loads as above) make timed waits of --timeout-us (1000)
 *            us each, for the time box, on an object that stays unavailable: a mutex main
 *            holds, a reader-writer lock main write-holds (T/2 timed read locks, T/2 timed
 *            write locks), a semaphore at 0, a latch at 1, a condition variable nobody
 *            signals (each waiter locks the mutex, waits, unlocks). Overshoot: the clock at
 *            the return less the deadline: p50, p99, max (us) over the waits; early: returns
 *            before the deadline (there must be none; counted, with the earliest, and never
 *            in the percentiles); woke: returns other than a timeout (a condvar's spurious
 *            wakeup; a lock or token taken while held fails the run). Deadlines: fastsync and
 *            libstdc++ (std::chrono::steady_clock) on CLOCK_MONOTONIC, glibc's *_clock*
 *            calls too; musl has only CLOCK_REALTIME for its mutex, rwlock and semaphore,
 *            whose deadline is converted so that it lies no earlier than the monotonic one.
 *            Not measured: the barrier (no timed wait anywhere), std::latch (none),
 *            absl::Mutex (its LockWhenWithTimeout returns holding the mutex: no timed lock
 *            that gives up).
 *   starve   the reader-writer lock: a writer's wait under continuous overlapping readers,
 *            and a reader's under continuous writers; N = 4 and 8 continuous threads on the
 *            two CPUs, no busy threads. Each continuous thread takes the lock its way, holds
 *            it 50-200 us of work, releases and takes it again at once. The prober (the
 *            writer, or the reader) sleeps 1-3 ms, takes the lock the other way, writes (or
 *            checks) the line and releases it, up to --attempts (30; --quick 5) times within
 *            a budget of 2 caps (at least 3 attempts). A watchdog (main) stops the continuous
 *            threads from taking the lock again once the prober has waited --cap (1000;
 *            --quick 100) ms, so a lock that never lets it in ends that attempt ("over cap");
 *            after --stop-after (2) such attempts the run ends. Printed: attempts, over cap,
 *            the prober's median and longest wait, and the continuous threads' longest hold
 *            (issue 33's bound for a writers-first lock: the longest reader hold + 1 ms).
 * Implementations alternate within each configuration; --reps N (default 1) repeats every
 * run and prints medians (early and woke: totals). --csv FILE appends the rows
 * (bench,build,variant,metric,unit,median,min,max,reps: bench/bench.h's). --threads N runs
 * only T = N (2, 4 or 8; starve: N continuous threads where N is 4 or 8). --quick is a
 * reduced set: --threads 4 (2x the CPUs, alone and beside the busy threads; starve under 4),
 * --ms 20, --cap 100, --attempts 5.
 *
 *   latency [--quick] [--reps N] [--ms N] [--threads N] [--busy N] [--timeout-us N] [--cap MS]
 *           [--attempts N] [--stop-after N] [--csv FILE] [--build NAME] [PART...] [PRIM...]
 *           PART: latency timed starve; PRIM: mutex rwlock sem latch barrier cond
 */
#include "bench.h"

#include <limits.h>

struct when;
static int timed_out(int r, const char *what);

#if defined(__cplusplus)
/* ---- adapters: the peers, libstdc++'s (this file built as C++23), and Abseil's mutex ---- */
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <latch>
#include <mutex>
#include <new>
#include <semaphore>
#include <shared_mutex>
#if defined(LATENCY_ABSL)
#include <absl/synchronization/mutex.h>
#endif
#else
/* the C library's (glibc with gcc, musl with musl-gcc); glibc's *_clock* calls (2.30) take
 * CLOCK_MONOTONIC deadlines, musl's timed calls only CLOCK_REALTIME ones */
#if defined(__GLIBC__)
#define LIBC_ "glibc "
#define PEER_CLOCK (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 30)
#define HAVE_PW 1
#else
#define LIBC_ "musl "
#define PEER_CLOCK 0
#define HAVE_PW 0
#endif
#include <semaphore.h>
#endif

enum { CPUS = 2, MAXT = 8, MAXBUSY = 16, MAXIMPL = 4 };
/* a member that starts a cache line of its own (in memory from bench_alloc, 64-byte aligned) */
#if defined(__cplusplus)
#define LINE alignas(64)
#else
#define LINE _Alignas(64)
#endif
/* per thread: samples (uint32_t ns) or, for the latch and barrier, each round's arrival and
 * return (uint64_t ns) */
enum { BUFBYTES = 4 << 20 };
#define MAXS ((long)(BUFBYTES / sizeof(uint32_t)))
#define MAXROUNDS ((long)(BUFBYTES / (2 * sizeof(uint64_t))))

/* A deadline: when (CLOCK_MONOTONIC ns) and as timespecs on both clocks. */
struct when {
    uint64_t ns;
    struct timespec mono, real;
};

static struct timespec ts_of(uint64_t ns)
{
    struct timespec t;
    t.tv_sec = (time_t)(ns / 1000000000u);
    t.tv_nsec = (long)(ns % 1000000000u);
    return t;
}

/* now + ns; the CLOCK_REALTIME one is read after the monotonic one, so that its deadline
 * falls no earlier than ns (a wait that keeps it is never counted early). */
static struct when when_in(uint64_t ns)
{
    struct when w;
    struct timespec r;
    w.ns = bench_now_ns() + ns;
    w.mono = ts_of(w.ns);
    clock_gettime(CLOCK_REALTIME, &r);
    w.real = ts_of((uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec + ns);
    return w;
}

/* 1 when a timed call returned ETIMEDOUT; anything else on an object that stays unavailable
 * is a broken primitive. */
static int timed_out(int r, const char *what)
{
    if (r == ETIMEDOUT) return 1;
    fprintf(stderr, "%s on an unavailable object returned %d (%s)\n", what, r, r ? strerror(r) : "taken");
    bench_fail("a timed wait took what nobody released");
    return 0;
}

/* One implementation of a primitive. `obj` is what make returned: for the latch an array of
 * n latches (round i uses latch i), for the others one object; `timed` asks for the type
 * that has the timed calls (std::timed_mutex, std::shared_timed_mutex in C++; the same object
 * elsewhere). Calls a primitive has not are NULL. */
struct impl {
    const char *variant; /* CSV: fastsync, peer, peer_pw, absl */
    const char *name, *timed_name; /* timed_name NULL: no timed wait */
    void *(*make)(unsigned count, long n, int timed);
    void (*destroy)(void *obj, long n, int timed);
    void (*acquire)(void *obj, long i); /* lock, rdlock, sem wait, barrier wait, latch i's arrive_and_wait */
    void (*release)(void *obj);         /* unlock, rdunlock, post */
    void (*acquire_wr)(void *obj);      /* the reader-writer lock's wrlock */
    void (*release_wr)(void *obj);
    int (*timed)(void *obj, const struct when *w);    /* 1: timed out (else fails) */
    int (*timed_wr)(void *obj, const struct when *w); /* the timed wrlock */
    void (*hold)(void *obj);   /* makes it unavailable for the timed run (NULL: make(0) is) */
    void (*unhold)(void *obj);
};

/* A queue's mutex and two condition variables (0: not empty, 1: not full). */
struct cimpl {
    const char *variant, *name;
    void *(*make)(void);
    void (*destroy)(void *q);
    void (*lock)(void *q);
    void (*unlock)(void *q);
    void (*wait)(void *q, int k);
    void (*signal)(void *q, int k);
    void (*broadcast)(void *q, int k);
    int (*timedwait)(void *q, const struct when *w); /* on 0, mutex held: 1 timed out, 0 woke */
};

/* ---- adapters: fastsync ---- */
static void *fs_mutex_make(unsigned count, long n, int timed)
{
    (void)count;
    (void)n;
    (void)timed;
    fastsync_mutex_t *m = (fastsync_mutex_t *)bench_alloc(sizeof *m);
    if (fastsync_mutex_init(m, 0) != 0) bench_fail("fastsync_mutex_init");
    return m;
}
static void fs_mutex_destroy(void *p, long n, int timed)
{
    (void)n;
    (void)timed;
    if (fastsync_mutex_destroy((fastsync_mutex_t *)p) != 0) bench_fail("fastsync_mutex_destroy: still locked");
    free(p);
}
static void fs_mutex_lock(void *p, long i)
{
    (void)i;
    fastsync_mutex_lock((fastsync_mutex_t *)p);
}
static void fs_mutex_unlock(void *p) { fastsync_mutex_unlock((fastsync_mutex_t *)p); }
static void fs_mutex_hold(void *p) { fastsync_mutex_lock((fastsync_mutex_t *)p); }
static int fs_mutex_timed(void *p, const struct when *w)
{
    return timed_out(fastsync_mutex_timedlock((fastsync_mutex_t *)p, &w->mono), "fastsync_mutex_timedlock");
}

static void *fs_rw_make(unsigned count, long n, int timed)
{
    (void)count;
    (void)n;
    (void)timed;
    fastsync_rwlock_t *l = (fastsync_rwlock_t *)bench_alloc(sizeof *l);
    if (fastsync_rwlock_init(l, 0) != 0) bench_fail("fastsync_rwlock_init");
    return l;
}
static void fs_rw_destroy(void *p, long n, int timed)
{
    (void)n;
    (void)timed;
    if (fastsync_rwlock_destroy((fastsync_rwlock_t *)p) != 0) bench_fail("fastsync_rwlock_destroy: still held");
    free(p);
}
static void fs_rdlock(void *p, long i)
{
    (void)i;
    fastsync_rwlock_rdlock((fastsync_rwlock_t *)p);
}
static void fs_rdunlock(void *p) { fastsync_rwlock_rdunlock((fastsync_rwlock_t *)p); }
static void fs_wrlock(void *p) { fastsync_rwlock_wrlock((fastsync_rwlock_t *)p); }
static void fs_wrunlock(void *p) { fastsync_rwlock_wrunlock((fastsync_rwlock_t *)p); }
static int fs_rd_timed(void *p, const struct when *w)
{
    return timed_out(fastsync_rwlock_timedrdlock((fastsync_rwlock_t *)p, &w->mono), "fastsync_rwlock_timedrdlock");
}
static int fs_wr_timed(void *p, const struct when *w)
{
    return timed_out(fastsync_rwlock_timedwrlock((fastsync_rwlock_t *)p, &w->mono), "fastsync_rwlock_timedwrlock");
}

static void *fs_sem_make(unsigned count, long n, int timed)
{
    (void)n;
    (void)timed;
    fastsync_sem_t *s = (fastsync_sem_t *)bench_alloc(sizeof *s);
    if (fastsync_sem_init(s, count, 0) != 0) bench_fail("fastsync_sem_init");
    return s;
}
static void fs_sem_destroy(void *p, long n, int timed)
{
    (void)n;
    (void)timed;
    if (fastsync_sem_destroy((fastsync_sem_t *)p) != 0) bench_fail("fastsync_sem_destroy: a waiter left");
    free(p);
}
static void fs_sem_wait(void *p, long i)
{
    (void)i;
    fastsync_sem_wait((fastsync_sem_t *)p);
}
static void fs_sem_post(void *p)
{
    if (fastsync_sem_post((fastsync_sem_t *)p) != 0) bench_fail("fastsync_sem_post");
}
static int fs_sem_timed(void *p, const struct when *w)
{
    return timed_out(fastsync_sem_timedwait((fastsync_sem_t *)p, &w->mono), "fastsync_sem_timedwait");
}

static void *fs_latch_make(unsigned count, long n, int timed)
{
    (void)timed;
    fastsync_latch_t *l = (fastsync_latch_t *)bench_alloc((size_t)n * sizeof *l);
    for (long i = 0; i < n; i++)
        if (fastsync_latch_init(&l[i], count, 0) != 0) bench_fail("fastsync_latch_init");
    return l;
}
static void fs_latch_destroy(void *p, long n, int timed)
{
    (void)timed;
    for (long i = 0; i < n; i++)
        if (fastsync_latch_destroy(&((fastsync_latch_t *)p)[i]) != 0) bench_fail("fastsync_latch_destroy");
    free(p);
}
static void fs_latch_arrive(void *p, long i)
{
    if (fastsync_latch_arrive_and_wait(&((fastsync_latch_t *)p)[i], 1) != 0) bench_fail("fastsync_latch_arrive_and_wait");
}
static int fs_latch_timed(void *p, const struct when *w)
{
    return timed_out(fastsync_latch_timedwait((fastsync_latch_t *)p, &w->mono), "fastsync_latch_timedwait");
}
static void fs_latch_open(void *p) { (void)fastsync_latch_count_down((fastsync_latch_t *)p, 1); }

static void *fs_barrier_make(unsigned count, long n, int timed)
{
    (void)n;
    (void)timed;
    fastsync_barrier_t *b = (fastsync_barrier_t *)bench_alloc(sizeof *b);
    if (fastsync_barrier_init(b, count, 0) != 0) bench_fail("fastsync_barrier_init");
    return b;
}
static void fs_barrier_destroy(void *p, long n, int timed)
{
    (void)n;
    (void)timed;
    if (fastsync_barrier_destroy((fastsync_barrier_t *)p) != 0) bench_fail("fastsync_barrier_destroy");
    free(p);
}
static void fs_barrier_wait(void *p, long i)
{
    (void)i;
    (void)fastsync_barrier_wait((fastsync_barrier_t *)p);
}

struct fs_queue {
    fastsync_mutex_t m;
    fastsync_cond_t c[2];
};
static void *fs_q_make(void)
{
    struct fs_queue *q = (struct fs_queue *)bench_alloc(sizeof *q);
    if (fastsync_mutex_init(&q->m, 0) != 0 || fastsync_cond_init(&q->c[0], 0) != 0 ||
        fastsync_cond_init(&q->c[1], 0) != 0)
        bench_fail("fastsync_cond_init");
    return q;
}
static void fs_q_destroy(void *p)
{
    struct fs_queue *q = (struct fs_queue *)p;
    if (fastsync_cond_destroy(&q->c[0]) != 0 || fastsync_cond_destroy(&q->c[1]) != 0 ||
        fastsync_mutex_destroy(&q->m) != 0)
        bench_fail("fastsync_cond_destroy");
    free(q);
}
static void fs_q_lock(void *p) { fastsync_mutex_lock(&((struct fs_queue *)p)->m); }
static void fs_q_unlock(void *p) { fastsync_mutex_unlock(&((struct fs_queue *)p)->m); }
static void fs_q_wait(void *p, int k)
{
    struct fs_queue *q = (struct fs_queue *)p;
    if (fastsync_cond_wait(&q->c[k], &q->m) != 0) bench_fail("fastsync_cond_wait");
}
static void fs_q_signal(void *p, int k) { fastsync_cond_signal(&((struct fs_queue *)p)->c[k]); }
static void fs_q_broadcast(void *p, int k) { fastsync_cond_broadcast(&((struct fs_queue *)p)->c[k]); }
static int fs_q_timedwait(void *p, const struct when *w)
{
    struct fs_queue *q = (struct fs_queue *)p;
    int r = fastsync_cond_timedwait(&q->c[0], &q->m, &w->mono);
    return r == 0 ? 0 : timed_out(r, "fastsync_cond_timedwait");
}

static const struct impl fs_mutex = {
    "fastsync", "fastsync_mutex_t", "fastsync_mutex_timedlock",
    fs_mutex_make, fs_mutex_destroy, fs_mutex_lock, fs_mutex_unlock, NULL, NULL,
    fs_mutex_timed, NULL, fs_mutex_hold, fs_mutex_unlock };
static const struct impl fs_rwlock = {
    "fastsync", "fastsync_rwlock_t", "fastsync_rwlock_timed*lock",
    fs_rw_make, fs_rw_destroy, fs_rdlock, fs_rdunlock, fs_wrlock, fs_wrunlock,
    fs_rd_timed, fs_wr_timed, fs_wrlock, fs_wrunlock };
static const struct impl fs_sem = {
    "fastsync", "fastsync_sem_t", "fastsync_sem_timedwait",
    fs_sem_make, fs_sem_destroy, fs_sem_wait, fs_sem_post, NULL, NULL,
    fs_sem_timed, NULL, NULL, NULL };
static const struct impl fs_latch = {
    "fastsync", "fastsync_latch_t", "fastsync_latch_timedwait",
    fs_latch_make, fs_latch_destroy, fs_latch_arrive, NULL, NULL, NULL,
    fs_latch_timed, NULL, NULL, fs_latch_open };
static const struct impl fs_barrier = {
    "fastsync", "fastsync_barrier_t", NULL,
    fs_barrier_make, fs_barrier_destroy, fs_barrier_wait, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL };
static const struct cimpl fs_cond = {
    "fastsync", "fastsync_cond_t + fastsync_mutex_t",
    fs_q_make, fs_q_destroy, fs_q_lock, fs_q_unlock, fs_q_wait, fs_q_signal, fs_q_broadcast,
    fs_q_timedwait };

#if defined(__cplusplus)
/* ---- adapters: libstdc++ ---- */
typedef std::chrono::steady_clock steady; /* CLOCK_MONOTONIC in libstdc++ */
static steady::time_point tp_of(const struct when *w)
{
    return steady::time_point(std::chrono::duration_cast<steady::duration>(std::chrono::nanoseconds(w->ns)));
}
/* T in memory of its own (bench_alloc: a cache line of its own), and back. */
template <class T, class... A> static T *make_one(A... a) { return new (bench_alloc(sizeof(T))) T(a...); }
template <class T> static void free_one(void *p)
{
    static_cast<T *>(p)->~T();
    free(p);
}

/* The adapters' shapes, for any type that has the calls: a T, or a TT where the timed run asks
 * for the type with the timed calls (std::timed_mutex, std::shared_timed_mutex); one made
 * with the count (a semaphore's tokens, a barrier's threads); lock and unlock. */
template <class T, class TT = T> static void *std_make(unsigned count, long n, int timed)
{
    (void)count;
    (void)n;
    return timed ? (void *)make_one<TT>() : (void *)make_one<T>();
}
template <class T> static void *std_make_count(unsigned count, long n, int timed)
{
    (void)n;
    (void)timed;
    return make_one<T>((std::ptrdiff_t)count);
}
template <class T, class TT = T> static void std_destroy(void *p, long n, int timed)
{
    (void)n;
    if (timed) free_one<TT>(p);
    else free_one<T>(p);
}
template <class T> static void std_lock(void *p, long i)
{
    (void)i;
    static_cast<T *>(p)->lock();
}
template <class T> static void std_lock_wr(void *p) { static_cast<T *>(p)->lock(); }
template <class T> static void std_unlock(void *p) { static_cast<T *>(p)->unlock(); }
template <class T> static int std_timed_lock(void *p, const struct when *w)
{
    return timed_out(static_cast<T *>(p)->try_lock_until(tp_of(w)) ? 0 : ETIMEDOUT, "libstdc++'s try_lock_until");
}

static void std_rdlock(void *p, long i)
{
    (void)i;
    static_cast<std::shared_mutex *>(p)->lock_shared();
}
static void std_rdunlock(void *p) { static_cast<std::shared_mutex *>(p)->unlock_shared(); }
static int std_rd_timed(void *p, const struct when *w)
{
    return timed_out(static_cast<std::shared_timed_mutex *>(p)->try_lock_shared_until(tp_of(w)) ? 0 : ETIMEDOUT,
                     "std::shared_timed_mutex::try_lock_shared_until");
}

typedef std::counting_semaphore<> std_sem_t;
static void std_sem_wait(void *p, long i)
{
    (void)i;
    static_cast<std_sem_t *>(p)->acquire();
}
static void std_sem_post(void *p) { static_cast<std_sem_t *>(p)->release(); }
static int std_sem_timed(void *p, const struct when *w)
{
    return timed_out(static_cast<std_sem_t *>(p)->try_acquire_until(tp_of(w)) ? 0 : ETIMEDOUT,
                     "std::counting_semaphore::try_acquire_until");
}

static void *std_latch_make(unsigned count, long n, int timed)
{
    (void)timed;
    std::latch *l = static_cast<std::latch *>(bench_alloc((size_t)n * sizeof(std::latch)));
    for (long i = 0; i < n; i++) new (&l[i]) std::latch((std::ptrdiff_t)count);
    return l;
}
static void std_latch_destroy(void *p, long n, int timed)
{
    (void)timed;
    for (long i = 0; i < n; i++) static_cast<std::latch *>(p)[i].~latch();
    free(p);
}
static void std_latch_arrive(void *p, long i) { static_cast<std::latch *>(p)[i].arrive_and_wait(); }

typedef std::barrier<> std_barrier_t;
static void std_barrier_wait(void *p, long i)
{
    (void)i;
    static_cast<std_barrier_t *>(p)->arrive_and_wait();
}

struct std_queue {
    std::mutex m;
    std::condition_variable c[2];
};
static void *std_q_make(void) { return make_one<std_queue>(); }
static void std_q_destroy(void *p) { free_one<std_queue>(p); }
static void std_q_lock(void *p) { static_cast<std_queue *>(p)->m.lock(); }
static void std_q_unlock(void *p) { static_cast<std_queue *>(p)->m.unlock(); }
static void std_q_wait(void *p, int k)
{
    std_queue *q = static_cast<std_queue *>(p);
    std::unique_lock<std::mutex> held(q->m, std::adopt_lock); /* the caller's lock */
    q->c[k].wait(held);
    held.release(); /* still the caller's */
}
static void std_q_signal(void *p, int k) { static_cast<std_queue *>(p)->c[k].notify_one(); }
static void std_q_broadcast(void *p, int k) { static_cast<std_queue *>(p)->c[k].notify_all(); }
static int std_q_timedwait(void *p, const struct when *w)
{
    std_queue *q = static_cast<std_queue *>(p);
    std::unique_lock<std::mutex> held(q->m, std::adopt_lock);
    std::cv_status r = q->c[0].wait_until(held, tp_of(w));
    held.release();
    return r == std::cv_status::timeout;
}

static const struct impl peer_mutex = {
    "peer", "std::mutex", "std::timed_mutex",
    std_make<std::mutex, std::timed_mutex>, std_destroy<std::mutex, std::timed_mutex>, std_lock<std::mutex>,
    std_unlock<std::mutex>, NULL, NULL,
    std_timed_lock<std::timed_mutex>, NULL, std_lock_wr<std::timed_mutex>, std_unlock<std::timed_mutex> };
static const struct impl peer_rwlock = {
    "peer", "std::shared_mutex", "std::shared_timed_mutex",
    std_make<std::shared_mutex, std::shared_timed_mutex>, std_destroy<std::shared_mutex, std::shared_timed_mutex>,
    std_rdlock, std_rdunlock, std_lock_wr<std::shared_mutex>, std_unlock<std::shared_mutex>,
    std_rd_timed, std_timed_lock<std::shared_timed_mutex>, std_lock_wr<std::shared_timed_mutex>,
    std_unlock<std::shared_timed_mutex> };
static const struct impl peer_sem = {
    "peer", "std::counting_semaphore<>", "std::counting_semaphore<>",
    std_make_count<std_sem_t>, std_destroy<std_sem_t>, std_sem_wait, std_sem_post, NULL, NULL,
    std_sem_timed, NULL, NULL, NULL };
static const struct impl peer_latch = {
    "peer", "std::latch", NULL,
    std_latch_make, std_latch_destroy, std_latch_arrive, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL };
static const struct impl peer_barrier = {
    "peer", "std::barrier<>", NULL,
    std_make_count<std_barrier_t>, std_destroy<std_barrier_t>, std_barrier_wait, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL };
static const struct cimpl peer_cond = {
    "peer", "std::condition_variable + std::mutex",
    std_q_make, std_q_destroy, std_q_lock, std_q_unlock, std_q_wait, std_q_signal, std_q_broadcast,
    std_q_timedwait };

#if defined(LATENCY_ABSL)
/* ---- adapter: Abseil's absl::Mutex (mutex rows only; no timed lock that gives up) ---- */
static void absl_lock(void *p, long i)
{
    (void)i;
    static_cast<absl::Mutex *>(p)->Lock();
}
static void absl_unlock(void *p) { static_cast<absl::Mutex *>(p)->Unlock(); }
static const struct impl absl_mutex = {
    "absl", "absl::Mutex", NULL,
    std_make<absl::Mutex>, std_destroy<absl::Mutex>, absl_lock, absl_unlock, NULL, NULL,
    NULL, NULL, NULL, NULL };
#define ABSL_IMPL &absl_mutex,
#else
#define ABSL_IMPL
#endif
#define PW_IMPL

#else
/* ---- adapters: the C library ---- */
static void *c_mutex_make(unsigned count, long n, int timed)
{
    (void)count;
    (void)n;
    (void)timed;
    pthread_mutex_t *m = (pthread_mutex_t *)bench_alloc(sizeof *m);
    if (pthread_mutex_init(m, NULL) != 0) bench_fail("pthread_mutex_init");
    return m;
}
static void c_mutex_destroy(void *p, long n, int timed)
{
    (void)n;
    (void)timed;
    if (pthread_mutex_destroy((pthread_mutex_t *)p) != 0) bench_fail("pthread_mutex_destroy");
    free(p);
}
static void c_mutex_lock(void *p, long i)
{
    (void)i;
    pthread_mutex_lock((pthread_mutex_t *)p);
}
static void c_mutex_unlock(void *p) { pthread_mutex_unlock((pthread_mutex_t *)p); }
static void c_mutex_hold(void *p) { pthread_mutex_lock((pthread_mutex_t *)p); }
static int c_mutex_timed(void *p, const struct when *w)
{
#if PEER_CLOCK
    return timed_out(pthread_mutex_clocklock((pthread_mutex_t *)p, CLOCK_MONOTONIC, &w->mono), "pthread_mutex_clocklock");
#else
    return timed_out(pthread_mutex_timedlock((pthread_mutex_t *)p, &w->real), "pthread_mutex_timedlock");
#endif
}

static void *c_rw_make_kind(int prefer_writer)
{
    pthread_rwlock_t *l = (pthread_rwlock_t *)bench_alloc(sizeof *l);
    pthread_rwlockattr_t a;
    if (pthread_rwlockattr_init(&a) != 0) bench_fail("pthread_rwlockattr_init");
#if HAVE_PW
    if (prefer_writer && pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) != 0)
        bench_fail("pthread_rwlockattr_setkind_np");
#else
    (void)prefer_writer;
#endif
    if (pthread_rwlock_init(l, &a) != 0) bench_fail("pthread_rwlock_init");
    pthread_rwlockattr_destroy(&a);
    return l;
}
static void *c_rw_make(unsigned count, long n, int timed)
{
    (void)count;
    (void)n;
    (void)timed;
    return c_rw_make_kind(0);
}
static void c_rw_destroy(void *p, long n, int timed)
{
    (void)n;
    (void)timed;
    if (pthread_rwlock_destroy((pthread_rwlock_t *)p) != 0) bench_fail("pthread_rwlock_destroy");
    free(p);
}
static void c_rdlock(void *p, long i)
{
    (void)i;
    pthread_rwlock_rdlock((pthread_rwlock_t *)p);
}
static void c_rwunlock(void *p) { pthread_rwlock_unlock((pthread_rwlock_t *)p); }
static void c_wrlock(void *p) { pthread_rwlock_wrlock((pthread_rwlock_t *)p); }
static int c_rd_timed(void *p, const struct when *w)
{
#if PEER_CLOCK
    return timed_out(pthread_rwlock_clockrdlock((pthread_rwlock_t *)p, CLOCK_MONOTONIC, &w->mono), "pthread_rwlock_clockrdlock");
#else
    return timed_out(pthread_rwlock_timedrdlock((pthread_rwlock_t *)p, &w->real), "pthread_rwlock_timedrdlock");
#endif
}
static int c_wr_timed(void *p, const struct when *w)
{
#if PEER_CLOCK
    return timed_out(pthread_rwlock_clockwrlock((pthread_rwlock_t *)p, CLOCK_MONOTONIC, &w->mono), "pthread_rwlock_clockwrlock");
#else
    return timed_out(pthread_rwlock_timedwrlock((pthread_rwlock_t *)p, &w->real), "pthread_rwlock_timedwrlock");
#endif
}

static void *c_sem_make(unsigned count, long n, int timed)
{
    (void)n;
    (void)timed;
    sem_t *s = (sem_t *)bench_alloc(sizeof *s);
    if (sem_init(s, 0, count) != 0) bench_fail("sem_init");
    return s;
}
static void c_sem_destroy(void *p, long n, int timed)
{
    (void)n;
    (void)timed;
    sem_destroy((sem_t *)p);
    free(p);
}
static void c_sem_wait(void *p, long i)
{
    (void)i;
    while (sem_wait((sem_t *)p) != 0) {} /* EINTR */
}
static void c_sem_post(void *p) { sem_post((sem_t *)p); }
static int c_sem_timed(void *p, const struct when *w)
{
    int r;
#if PEER_CLOCK
    while ((r = sem_clockwait((sem_t *)p, CLOCK_MONOTONIC, &w->mono) != 0 ? errno : 0) == EINTR) {}
    return timed_out(r, "sem_clockwait");
#else
    while ((r = sem_timedwait((sem_t *)p, &w->real) != 0 ? errno : 0) == EINTR) {}
    return timed_out(r, "sem_timedwait");
#endif
}

static void *c_barrier_make(unsigned count, long n, int timed)
{
    (void)n;
    (void)timed;
    pthread_barrier_t *b = (pthread_barrier_t *)bench_alloc(sizeof *b);
    if (pthread_barrier_init(b, NULL, count) != 0) bench_fail("pthread_barrier_init");
    return b;
}
static void c_barrier_destroy(void *p, long n, int timed)
{
    (void)n;
    (void)timed;
    if (pthread_barrier_destroy((pthread_barrier_t *)p) != 0) bench_fail("pthread_barrier_destroy");
    free(p);
}
static void c_barrier_wait(void *p, long i)
{
    (void)i;
    (void)pthread_barrier_wait((pthread_barrier_t *)p);
}

struct c_queue {
    pthread_mutex_t m;
    pthread_cond_t c[2];
};
static void *c_q_make(void)
{
    struct c_queue *q = (struct c_queue *)bench_alloc(sizeof *q);
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0 || pthread_condattr_setclock(&a, CLOCK_MONOTONIC) != 0 ||
        pthread_mutex_init(&q->m, NULL) != 0 || pthread_cond_init(&q->c[0], &a) != 0 ||
        pthread_cond_init(&q->c[1], &a) != 0)
        bench_fail("pthread_cond_init");
    pthread_condattr_destroy(&a);
    return q;
}
static void c_q_destroy(void *p)
{
    struct c_queue *q = (struct c_queue *)p;
    if (pthread_cond_destroy(&q->c[0]) != 0 || pthread_cond_destroy(&q->c[1]) != 0 ||
        pthread_mutex_destroy(&q->m) != 0)
        bench_fail("pthread_cond_destroy");
    free(q);
}
static void c_q_lock(void *p) { pthread_mutex_lock(&((struct c_queue *)p)->m); }
static void c_q_unlock(void *p) { pthread_mutex_unlock(&((struct c_queue *)p)->m); }
static void c_q_wait(void *p, int k)
{
    struct c_queue *q = (struct c_queue *)p;
    pthread_cond_wait(&q->c[k], &q->m);
}
static void c_q_signal(void *p, int k) { pthread_cond_signal(&((struct c_queue *)p)->c[k]); }
static void c_q_broadcast(void *p, int k) { pthread_cond_broadcast(&((struct c_queue *)p)->c[k]); }
static int c_q_timedwait(void *p, const struct when *w)
{
    struct c_queue *q = (struct c_queue *)p;
    int r = pthread_cond_timedwait(&q->c[0], &q->m, &w->mono); /* the condattr's clock */
    return r == 0 ? 0 : timed_out(r, "pthread_cond_timedwait");
}

static const struct impl peer_mutex = {
    "peer", LIBC_ "pthread_mutex_t", LIBC_ "pthread_mutex_t",
    c_mutex_make, c_mutex_destroy, c_mutex_lock, c_mutex_unlock, NULL, NULL,
    c_mutex_timed, NULL, c_mutex_hold, c_mutex_unlock };
static const struct impl peer_rwlock = {
    "peer", LIBC_ "pthread_rwlock_t", LIBC_ "pthread_rwlock_t",
    c_rw_make, c_rw_destroy, c_rdlock, c_rwunlock, c_wrlock, c_rwunlock,
    c_rd_timed, c_wr_timed, c_wrlock, c_rwunlock };
static const struct impl peer_sem = {
    "peer", LIBC_ "sem_t", LIBC_ "sem_t",
    c_sem_make, c_sem_destroy, c_sem_wait, c_sem_post, NULL, NULL,
    c_sem_timed, NULL, NULL, NULL };
static const struct impl peer_barrier = {
    "peer", LIBC_ "pthread_barrier_t", NULL,
    c_barrier_make, c_barrier_destroy, c_barrier_wait, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL };
static const struct cimpl peer_cond = {
    "peer", LIBC_ "pthread_cond_t + pthread_mutex_t",
    c_q_make, c_q_destroy, c_q_lock, c_q_unlock, c_q_wait, c_q_signal, c_q_broadcast,
    c_q_timedwait };
#define ABSL_IMPL
#if HAVE_PW
static void *c_pw_make(unsigned count, long n, int timed)
{
    (void)count;
    (void)n;
    (void)timed;
    return c_rw_make_kind(1);
}
static const struct impl peer_pw = {
    "peer_pw", "glibc pthread_rwlock_t, PREFER_WRITER_NP", "glibc pthread_rwlock_t, PREFER_WRITER_NP",
    c_pw_make, c_rw_destroy, c_rdlock, c_rwunlock, c_wrlock, c_rwunlock,
    c_rd_timed, c_wr_timed, c_wrlock, c_rwunlock };
#define PW_IMPL &peer_pw,
#else
#define PW_IMPL
#endif
#endif

/* ---- the primitives, their rows and their implementations in this build ---- */
enum { P_MUTEX, P_RWLOCK, P_SEM, P_LATCH, P_BARRIER, P_COND, NPRIM };
static const char *const prim_name[NPRIM] = { "mutex", "rwlock", "sem", "latch", "barrier", "cond" };
/* rows: the reader-writer lock gives two, its readers' and its writers' */
enum { R_MUTEX, R_RD, R_WR, R_SEM, R_LATCH, R_BARRIER, R_COND, NROW };
static const char *const row_name[NROW] = { "mutex", "rwlock rd", "rwlock wr", "sem", "latch", "barrier", "cond" };
static const char *const row_key[NROW] = { "mutex", "rwlock_rd", "rwlock_wr", "sem", "latch", "barrier", "cond" };
static const int row_prim[NROW] = { P_MUTEX, P_RWLOCK, P_RWLOCK, P_SEM, P_LATCH, P_BARRIER, P_COND };

static const struct impl *const impls[NPRIM][MAXIMPL + 1] = {
    { &fs_mutex, &peer_mutex, ABSL_IMPL NULL },
    { &fs_rwlock, &peer_rwlock, PW_IMPL NULL },
    { &fs_sem, &peer_sem, NULL },
#if defined(__cplusplus)
    { &fs_latch, &peer_latch, NULL },
#else
    { &fs_latch, NULL },
#endif
    { &fs_barrier, &peer_barrier, NULL },
    { NULL }, /* the condvar: cimpls */
};
static const struct cimpl *const cimpls[MAXIMPL + 1] = { &fs_cond, &peer_cond, NULL };

static int nimpl(int prim)
{
    int n = 0;
    if (prim == P_COND)
        while (cimpls[n]) n++;
    else
        while (impls[prim][n]) n++;
    return n;
}
static const char *impl_variant(int prim, int i) { return prim == P_COND ? cimpls[i]->variant : impls[prim][i]->variant; }
static const char *impl_name(int prim, int i) { return prim == P_COND ? cimpls[i]->name : impls[prim][i]->name; }

/* ---- work, time, CPU ---- */
static BENCH_NOINLINE void work(uint32_t n) /* as bench/mutex.c's */
{
    volatile uint32_t i = 0; /* (C++20 deprecates ++ on a volatile) */
    while (i < n) i = i + 1;
}

/* The calling thread's CPU time (user + system), ns. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double ns_per_poll; /* work()'s, calibrated in main */

/* CPU time, not the clock: a timing that the scheduler interrupted (a loaded machine) counts
 * only what ran, and the fastest of 5 leaves out the rest of the noise */
static void calibrate(void)
{
    double best = 1e9;
    for (int k = 0; k < 5; k++) {
        uint64_t t0 = thread_cpu_ns();
        work(2000000);
        double ns = (double)(thread_cpu_ns() - t0) / 2e6;
        best = ns < best ? ns : best;
    }
    ns_per_poll = best;
}

static uint32_t polls_of(uint64_t ns) { return (uint32_t)((double)ns / ns_per_poll); }

static uint32_t xorshift(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* lo + a uniform draw below span */
static uint32_t draw(uint32_t *x, uint32_t lo, uint32_t span) { return lo + (span ? xorshift(x) % span : 0); }

static uint32_t sat32(uint64_t ns) { return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns; }

/* ---- busy threads ---- */
static atomic_int busy_stop;
static pthread_t busy_t[MAXBUSY];
static int busy_n;

static void *busy_worker(void *p)
{
    bench_limit_cpus(CPUS);
    /* relaxed: only ends the loop */
    while (!atomic_load_explicit(&busy_stop, memory_order_relaxed)) work(10000);
    return p;
}

static void busy_start(int n)
{
    atomic_store_explicit(&busy_stop, 0, memory_order_relaxed); /* before the threads exist */
    busy_n = n < MAXBUSY ? n : MAXBUSY;
    for (int i = 0; i < busy_n; i++) busy_t[i] = bench_thread_start(busy_worker, NULL);
}

static void busy_end(void)
{
    atomic_store_explicit(&busy_stop, 1, memory_order_relaxed);
    for (int i = 0; i < busy_n; i++) pthread_join(busy_t[i], NULL);
    busy_n = 0;
}

/* ---- one run ---- */
struct shared_data {
    unsigned long counter; /* writes (mutex: pairs) */
    unsigned long line[7]; /* each the sum 1 + 2 + ... + counter: checked by the readers */
};

struct run {
    /* what every thread reads in its loop: written before they start, or once (stop, last) */
    int prim, timed;
    const struct impl *im;
    const struct cimpl *ci;
    void *obj;
    unsigned count;                    /* sem: tokens; latch, barrier: threads */
    uint32_t hold_lo, hold_span, think_lo, think_span; /* polls */
    uint64_t timeout_ns, t0, end;      /* timed waits; the run's start; the box's end */
    atomic_int go, stop, torn;
    _Atomic(long) last;                /* latch, barrier: the last round */
    /* what the object guards, written under it: lines of their own, so that its writes
     * never evict the fields above from the other threads' caches */
    LINE struct shared_data data;
    atomic_int inside;                 /* sem: the threads holding a token */
    /* cond: the queue, under the queue's mutex */
    uint64_t ring[MAXT];
    unsigned head, len, cap;
    int done;
};

struct th { /* a thread's own line(s) */
    LINE pthread_t t;
    struct run *run;
    int index, role;       /* role 1: a writer, a producer */
    void *buf;             /* BUFBYTES of this thread's own */
    long n;                /* operations (samples; latch, barrier: rounds) */
    uint64_t polls, cpu_ns;
    long early, woke;      /* timed */
    int64_t earliest;      /* timed: the earliest return, ns before its deadline (< 0) */
};

static struct th ths[MAXT];
static uint32_t *merged, *merged_tmp; /* MAXT * MAXS each */

static void go_wait(struct run *r)
{
    bench_limit_cpus(CPUS);
    /* acquire: pairs with main's release store, after it set the run up */
    while (!atomic_load_explicit(&r->go, memory_order_acquire)) {}
}

/* relaxed: the stop flag only ends a loop; what the loop did is read after the join */
static int stopped(struct run *r) { return atomic_load_explicit(&r->stop, memory_order_relaxed); }

static void *lock_worker(void *p)
{
    struct th *me = (struct th *)p;
    struct run *r = me->run;
    struct shared_data *d = &r->data;
    const struct impl *im = r->im;
    uint32_t *lat = (uint32_t *)me->buf, x = 2463534242u + 7919u * (uint32_t)me->index;
    uint64_t polls = 0;
    long n = 0;
    int torn = 0;
    go_wait(r);
    uint64_t cpu0 = thread_cpu_ns(); /* (not the wait for the start) */
    while (!stopped(r) && n < MAXS) {
        uint32_t k = draw(&x, r->think_lo, r->think_span);
        work(k);
        polls += k;
        uint64_t t0 = bench_now_ns();
        if (me->role) im->acquire_wr(r->obj);
        else im->acquire(r->obj, 0);
        lat[n++] = sat32(bench_now_ns() - t0);
        if (r->prim == P_SEM) {
            /* relaxed: a count, not an order (the semaphore orders the data) */
            if (atomic_fetch_add_explicit(&r->inside, 1, memory_order_relaxed) >= (int)r->count) torn = 1;
        } else if (me->role || r->prim == P_MUTEX) {
            unsigned long c = ++d->counter;
            for (int i = 0; i < 7; i++) d->line[i] += c;
        } else {
            unsigned long c = d->counter, want = c * (c + 1) / 2; /* (mod 2^N, as the sums) */
            for (int i = 0; i < 7; i++) torn |= d->line[i] != want;
        }
        k = draw(&x, r->hold_lo, r->hold_span);
        work(k);
        polls += k;
        if (r->prim == P_SEM) atomic_fetch_sub_explicit(&r->inside, 1, memory_order_relaxed);
        if (me->role) im->release_wr(r->obj);
        else im->release(r->obj);
    }
    me->n = n;
    me->polls = polls;
    me->cpu_ns = thread_cpu_ns() - cpu0;
    if (torn) atomic_store_explicit(&r->torn, 1, memory_order_relaxed); /* read after the join */
    return NULL;
}

static void *meet_worker(void *p)
{
    struct th *me = (struct th *)p;
    struct run *r = me->run;
    uint64_t *arr = (uint64_t *)me->buf, *ret = arr + MAXROUNDS, polls = 0;
    uint32_t x = 2463534242u + 7919u * (uint32_t)me->index;
    go_wait(r);
    uint64_t cpu0 = thread_cpu_ns();
    for (long i = 0;; i++) {
        uint32_t k = draw(&x, r->think_lo, r->think_span);
        work(k);
        polls += k;
        arr[i] = bench_now_ns() - r->t0;
        r->im->acquire(r->obj, i);
        ret[i] = bench_now_ns() - r->t0;
        /* acquire: thread 0's store, made before its arrival in round i (if in round i - 1),
         * is ordered before this return by the primitive itself; the load pairs with it */
        long last = atomic_load_explicit(&r->last, memory_order_acquire);
        if (i >= last) {
            me->n = i + 1;
            break;
        }
        /* thread 0 ends the run: after round i, once the box is over, the last round is
         * i + 1, which every thread (thread 0 too) still makes */
        if (me->index == 0 && last == LONG_MAX && (bench_now_ns() >= r->end || i + 2 >= MAXROUNDS))
            atomic_store_explicit(&r->last, i + 1, memory_order_release);
    }
    me->polls = polls;
    me->cpu_ns = thread_cpu_ns() - cpu0;
    return NULL;
}

static void *cond_worker(void *p)
{
    struct th *me = (struct th *)p;
    struct run *r = me->run;
    const struct cimpl *ci = r->ci;
    uint32_t *lat = (uint32_t *)me->buf, x = 2463534242u + 7919u * (uint32_t)me->index, k;
    uint64_t polls = 0;
    long n = 0;
    go_wait(r);
    uint64_t cpu0 = thread_cpu_ns();
    if (me->role) { /* a producer: thinks a hold's time between items */
        while (!stopped(r)) {
            k = draw(&x, r->hold_lo, r->hold_span);
            work(k);
            polls += k;
            ci->lock(r->obj);
            while (r->len == r->cap) ci->wait(r->obj, 1);
            r->ring[(r->head + r->len++) % r->cap] = bench_now_ns();
            ci->unlock(r->obj);
            ci->signal(r->obj, 0);
            n++;
        }
    } else { /* a consumer: works a think's time on each item */
        for (;;) {
            ci->lock(r->obj);
            while (r->len == 0 && !r->done) ci->wait(r->obj, 0);
            if (r->len == 0) { /* done, and nothing left */
                ci->unlock(r->obj);
                break;
            }
            uint64_t pushed = r->ring[r->head], popped = bench_now_ns();
            r->head = (r->head + 1) % r->cap;
            r->len--;
            ci->unlock(r->obj);
            ci->signal(r->obj, 1);
            if (n < MAXS) lat[n++] = sat32(popped - pushed);
            k = draw(&x, r->think_lo, r->think_span);
            work(k);
            polls += k;
        }
    }
    me->n = n;
    me->polls = polls;
    me->cpu_ns = thread_cpu_ns() - cpu0;
    return NULL;
}

static void *timed_worker(void *p)
{
    struct th *me = (struct th *)p;
    struct run *r = me->run;
    uint32_t *lat = (uint32_t *)me->buf;
    long n = 0, early = 0, woke = 0;
    int64_t earliest = 0;
    go_wait(r);
    while (!stopped(r) && n < MAXS) {
        struct when w = when_in(r->timeout_ns);
        int out;
        if (r->prim == P_COND) {
            r->ci->lock(r->obj);
            out = r->ci->timedwait(r->obj, &w);
        } else {
            out = me->role ? r->im->timed_wr(r->obj, &w) : r->im->timed(r->obj, &w);
        }
        uint64_t t = bench_now_ns();
        if (r->prim == P_COND) r->ci->unlock(r->obj);
        if (!out) {
            woke++;
        } else if (t < w.ns) {
            early++;
            if ((int64_t)(t - w.ns) < earliest) earliest = (int64_t)(t - w.ns);
        } else {
            lat[n++] = sat32(t - w.ns);
        }
    }
    me->n = n;
    me->early = early;
    me->woke = woke;
    me->earliest = earliest;
    return NULL;
}

/* Sorts v[0..n) (tmp: as long), least significant byte first. */
static void sort_u32(uint32_t *v, uint32_t *tmp, size_t n)
{
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = { 0 };
        for (size_t i = 0; i < n; i++) count[((v[i] >> shift) & 255) + 1]++;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) tmp[count[(v[i] >> shift) & 255]++] = v[i];
        uint32_t *t = v;
        v = tmp;
        tmp = t;
    } /* four passes: back in v */
}

/* The per-mille quantile of sorted v (nearest rank), in us. */
static double quantile_us(const uint32_t *v, size_t n, unsigned permille)
{
    size_t k = (n * permille + 999) / 1000;
    return n ? (double)v[k ? k - 1 : 0] / 1e3 : 0;
}

enum { M_OPS, M_P50, M_P99, M_P999, M_MAX, M_SPREAD, M_CPU, NMET };
static const char *const met_key[NMET] = { "ops_s", "p50_us", "p99_us", "p999_us", "max_us", "spread", "cpu_us_op" };
static const char *const met_unit[NMET] = { "ops/s", "us", "us", "us", "us", "ratio", "us" };

/* The figures of the threads [from, to) of a run: the samples merged and sorted, ops per
 * second over secs, slowest / fastest, CPU less work per operation. */
static void figures(int from, int to, double secs, double *m)
{
    size_t n = 0;
    long lo = LONG_MAX, hi = 0;
    double cpu = 0;
    for (int i = from; i < to; i++) {
        memcpy(merged + n, ths[i].buf, (size_t)ths[i].n * sizeof(uint32_t));
        n += (size_t)ths[i].n;
        lo = ths[i].n < lo ? ths[i].n : lo;
        hi = ths[i].n > hi ? ths[i].n : hi;
        cpu += (double)ths[i].cpu_ns - (double)ths[i].polls * ns_per_poll;
    }
    sort_u32(merged, merged_tmp, n);
    m[M_OPS] = (double)n / secs;
    m[M_P50] = quantile_us(merged, n, 500);
    m[M_P99] = quantile_us(merged, n, 990);
    m[M_P999] = quantile_us(merged, n, 999);
    m[M_MAX] = quantile_us(merged, n, 1000);
    m[M_SPREAD] = hi ? (double)lo / (double)hi : 0;
    m[M_CPU] = n ? cpu / (double)n / 1e3 : 0;
}

static struct run *run_new(int prim, unsigned nt)
{
    struct run *r = (struct run *)bench_alloc(sizeof *r);
    r->prim = prim;
    /* relaxed: the threads that read them are created after these stores */
    atomic_store_explicit(&r->go, 0, memory_order_relaxed);
    atomic_store_explicit(&r->stop, 0, memory_order_relaxed);
    atomic_store_explicit(&r->torn, 0, memory_order_relaxed);
    atomic_store_explicit(&r->inside, 0, memory_order_relaxed);
    atomic_store_explicit(&r->last, LONG_MAX, memory_order_relaxed);
    r->cap = nt;
    return r;
}

static void threads_start(struct run *r, int nt, void *(*fn)(void *), int writers)
{
    for (int i = 0; i < nt; i++) {
        struct th *t = &ths[i];
        t->run = r;
        t->index = i;
        t->role = i >= nt - writers; /* the last `writers` threads */
        t->n = 0;
        t->polls = t->cpu_ns = 0;
        t->early = t->woke = 0;
        t->earliest = 0;
        t->t = bench_thread_start(fn, t);
    }
}

struct regime {
    const char *name;
    uint64_t hold_lo, hold_hi, think_lo, think_hi; /* ns */
};
enum { NREG = 2 };
static const struct regime regimes[NREG] = { { "spin", 100, 500, 100, 500 },
                                             { "sleep", 20000, 200000, 2000, 20000 } };
static const int threads[] = { 2, 4, 8 };
enum { NTHR = sizeof threads / sizeof threads[0], NLOAD = 2 * NTHR, NCONF = NREG * NLOAD };

/* One latency run: prim with implementation i, nt threads, busy others, for ms; fills m[row]
 * for the rows of prim (the reader-writer lock: rd and wr). */
static void latency_run(int prim, int i, const struct regime *g, int nt, int busy, unsigned ms, double m[NROW][NMET])
{
    struct run *r = run_new(prim, (unsigned)nt);
    r->hold_lo = polls_of(g->hold_lo);
    r->hold_span = polls_of(g->hold_hi) - r->hold_lo;
    r->think_lo = polls_of(g->think_lo);
    r->think_span = polls_of(g->think_hi) - r->think_lo;
    r->count = prim == P_SEM ? (unsigned)(nt / 2) : (unsigned)nt;
    long rounds = prim == P_LATCH ? MAXROUNDS : 1;
    busy_start(busy);
    if (prim == P_COND) {
        r->ci = cimpls[i];
        r->obj = r->ci->make();
    } else {
        r->im = impls[prim][i];
        r->obj = r->im->make(r->count, rounds, 0);
    }
    int writers = prim == P_RWLOCK || prim == P_COND ? nt / 2 : 0;
    void *(*fn)(void *) = prim == P_COND ? cond_worker : prim == P_LATCH || prim == P_BARRIER ? meet_worker : lock_worker;
    threads_start(r, nt, fn, writers);
    r->t0 = bench_now_ns();
    r->end = r->t0 + (uint64_t)ms * 1000000u;
    atomic_store_explicit(&r->go, 1, memory_order_release); /* pairs with go_wait's acquire */
    if (prim != P_LATCH && prim != P_BARRIER) { /* (those end themselves: meet_worker) */
        bench_sleep_ns((uint64_t)ms * 1000000u);
        atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
    }
    if (prim == P_COND) { /* the producers first; then the consumers empty the queue */
        for (int t = nt - writers; t < nt; t++) pthread_join(ths[t].t, NULL);
        r->ci->lock(r->obj);
        r->done = 1;
        r->ci->unlock(r->obj);
        r->ci->broadcast(r->obj, 0);
        for (int t = 0; t < nt - writers; t++) pthread_join(ths[t].t, NULL);
    } else {
        for (int t = 0; t < nt; t++) pthread_join(ths[t].t, NULL);
    }
    double secs = (double)(bench_now_ns() - r->t0) / 1e9;
    busy_end();
    if (atomic_load_explicit(&r->torn, memory_order_relaxed))
        bench_fail(prim == P_SEM ? "more holders than tokens" : "a reader saw a write half done");
    long ops = 0, wops = 0;
    for (int t = 0; t < nt; t++) {
        if (ths[t].role) wops += ths[t].n;
        else ops += ths[t].n;
    }
    if (prim == P_MUTEX && r->data.counter != (unsigned long)ops) bench_fail("the counter differs from the pairs: no mutual exclusion");
    if (prim == P_RWLOCK && r->data.counter != (unsigned long)wops) bench_fail("the counter differs from the writes: no mutual exclusion");
    if (prim == P_COND && ops != wops) bench_fail("the items popped differ from the items pushed");
    if (prim == P_RWLOCK) {
        figures(0, nt - writers, secs, m[R_RD]);
        figures(nt - writers, nt, secs, m[R_WR]);
    } else if (prim == P_COND) {
        figures(0, nt - writers, secs, m[R_COND]);
        double cpu = 0; /* every thread's CPU, per item */
        for (int t = 0; t < nt; t++) cpu += (double)ths[t].cpu_ns - (double)ths[t].polls * ns_per_poll;
        m[R_COND][M_CPU] = ops ? cpu / (double)ops / 1e3 : 0;
    } else if (prim == P_LATCH || prim == P_BARRIER) {
        long rounds_made = ths[0].n;
        size_t n = 0;
        double cpu = 0;
        for (int t = 0; t < nt; t++) {
            if (ths[t].n != rounds_made) bench_fail("the threads made different numbers of rounds");
            cpu += (double)ths[t].cpu_ns - (double)ths[t].polls * ns_per_poll;
        }
        for (long k = 0; k < rounds_made; k++) {
            uint64_t last = 0;
            for (int t = 0; t < nt; t++) {
                uint64_t a = ((uint64_t *)ths[t].buf)[k];
                last = a > last ? a : last;
            }
            for (int t = 0; t < nt; t++) {
                uint64_t back = ((uint64_t *)ths[t].buf)[MAXROUNDS + k];
                if (back < last) bench_fail("a wait returned before the round's last arrival");
                merged[n++] = sat32(back - last);
            }
        }
        sort_u32(merged, merged_tmp, n);
        double *v = m[prim == P_LATCH ? R_LATCH : R_BARRIER];
        v[M_OPS] = (double)rounds_made / secs;
        v[M_P50] = quantile_us(merged, n, 500);
        v[M_P99] = quantile_us(merged, n, 990);
        v[M_P999] = quantile_us(merged, n, 999);
        v[M_MAX] = quantile_us(merged, n, 1000);
        v[M_SPREAD] = -1; /* every thread makes every round */
        v[M_CPU] = rounds_made ? cpu / (double)rounds_made / 1e3 : 0;
    } else {
        figures(0, nt, secs, m[prim == P_MUTEX ? R_MUTEX : R_SEM]);
    }
    if (prim == P_COND) r->ci->destroy(r->obj);
    else r->im->destroy(r->obj, rounds, 0);
    free(r);
}

/* ---- timed waits ---- */
enum { T_WAITS, T_P50, T_P99, T_MAX, NTM };
static const char *const tmet_key[NTM] = { "waits", "p50_us", "p99_us", "max_us" };
static const char *const tmet_unit[NTM] = { "count", "us", "us", "us" };
/* the rows that have timed waits */
static int has_timed(int prim, int i)
{
    return prim == P_COND || (prim != P_BARRIER && impls[prim][i]->timed != NULL);
}

struct tcount {
    long early, woke;
    int64_t earliest;
};

static void timed_run(int prim, int i, int nt, int busy, unsigned ms, uint64_t timeout_ns, double m[NROW][NTM],
                      struct tcount c[NROW])
{
    struct run *r = run_new(prim, (unsigned)nt);
    r->timed = 1;
    r->timeout_ns = timeout_ns;
    busy_start(busy);
    if (prim == P_COND) {
        r->ci = cimpls[i];
        r->obj = r->ci->make();
    } else {
        r->im = impls[prim][i];
        r->obj = r->im->make(prim == P_LATCH ? 1 : 0, 1, 1);
        if (r->im->hold) r->im->hold(r->obj);
    }
    int writers = prim == P_RWLOCK ? nt / 2 : 0;
    threads_start(r, nt, timed_worker, writers);
    r->t0 = bench_now_ns();
    atomic_store_explicit(&r->go, 1, memory_order_release); /* pairs with go_wait's acquire */
    bench_sleep_ns((uint64_t)ms * 1000000u);
    atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
    for (int t = 0; t < nt; t++) pthread_join(ths[t].t, NULL);
    busy_end();
    if (prim != P_COND && r->im->unhold) r->im->unhold(r->obj);
    for (int part = 0; part < (writers ? 2 : 1); part++) {
        int from = part ? nt - writers : 0, to = part || !writers ? nt : nt - writers;
        int row = prim == P_RWLOCK ? (part ? R_WR : R_RD) : prim == P_MUTEX ? R_MUTEX : prim == P_SEM ? R_SEM
                  : prim == P_LATCH ? R_LATCH : R_COND;
        size_t n = 0;
        for (int t = from; t < to; t++) {
            memcpy(merged + n, ths[t].buf, (size_t)ths[t].n * sizeof(uint32_t));
            n += (size_t)ths[t].n;
            c[row].early += ths[t].early;
            c[row].woke += ths[t].woke;
            if (ths[t].earliest < c[row].earliest) c[row].earliest = ths[t].earliest;
        }
        sort_u32(merged, merged_tmp, n);
        m[row][T_WAITS] = (double)n;
        m[row][T_P50] = quantile_us(merged, n, 500);
        m[row][T_P99] = quantile_us(merged, n, 990);
        m[row][T_MAX] = quantile_us(merged, n, 1000);
    }
    if (prim == P_COND) r->ci->destroy(r->obj);
    else r->im->destroy(r->obj, 1, 1);
    free(r);
}

/* ---- the reader-writer lock: a writer under continuous readers, a reader under writers ---- */
enum { MAXA = 200, NSIDE = 2 };
static const int starve_n[] = { 4, 8 };
enum { NSN = sizeof starve_n / sizeof starve_n[0] };
enum { S_ATTEMPTS, S_OVER, S_MEDIAN, S_MAX, S_HOLD, NSM };
static const char *const smet_key[NSM] = { "attempts", "over_cap", "median_ms", "max_ms", "hold_max_ms" };
static const char *const smet_unit[NSM] = { "count", "count", "ms", "ms", "ms" };
static const char *const side_key[NSIDE] = { "writer_r", "reader_w" };

struct starve {
    const struct impl *im;
    void *obj;
    int side; /* 0: the prober writes, the continuous threads read; 1: the reverse */
    uint32_t hold_lo, hold_span;
    uint64_t cap_ns, budget_ns;
    int attempts, stop_after, made, over;
    atomic_int stop, done, torn;
    _Atomic(uint64_t) waiting_since; /* the prober's current attempt's start, or 0 */
    _Atomic(uint64_t) pause;         /* the watchdog's: the attempt (its start) it stops the others for */
    uint64_t hold_max[MAXT];
    double wait_ns[MAXA];
    LINE struct shared_data data;    /* under the lock: a line of its own (as in struct run) */
};

struct cont {
    pthread_t t;
    struct starve *s;
    int index;
};

static void starve_take(struct starve *s, int write)
{
    if (write) {
        s->im->acquire_wr(s->obj);
        unsigned long c = ++s->data.counter;
        for (int i = 0; i < 7; i++) s->data.line[i] += c;
    } else {
        s->im->acquire(s->obj, 0);
        unsigned long c = s->data.counter;
        if (s->data.line[0] != c * (c + 1) / 2) atomic_store_explicit(&s->torn, 1, memory_order_relaxed);
    }
}

static void starve_leave(struct starve *s, int write)
{
    if (write) s->im->release_wr(s->obj);
    else s->im->release(s->obj);
}

static void *continuous(void *p)
{
    struct cont *me = (struct cont *)p;
    struct starve *s = me->s;
    uint32_t x = 2463534242u + 7919u * (uint32_t)me->index;
    uint64_t hmax = 0;
    bench_limit_cpus(CPUS);
    /* relaxed flags: they only steer the loop; the data is read under the lock, the counts
     * after the join */
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        /* paused for the prober's attempt that is still waiting (not for one that ended) */
        uint64_t p = atomic_load_explicit(&s->pause, memory_order_relaxed);
        if (p && p == atomic_load_explicit(&s->waiting_since, memory_order_relaxed)) {
            bench_sleep_ns(100000);
            continue;
        }
        starve_take(s, s->side);
        uint64_t in = bench_now_ns();
        work(draw(&x, s->hold_lo, s->hold_span));
        uint64_t held = bench_now_ns() - in;
        starve_leave(s, s->side);
        hmax = held > hmax ? held : hmax;
    }
    s->hold_max[me->index] = hmax;
    return NULL;
}

static void *prober(void *p)
{
    struct starve *s = (struct starve *)p;
    uint32_t x = 88172645u;
    uint64_t start = bench_now_ns();
    bench_limit_cpus(CPUS);
    for (int a = 0; a < s->attempts && s->over < s->stop_after; a++) {
        if (a >= 3 && bench_now_ns() - start > s->budget_ns) break;
        bench_sleep_ns(1000000 + xorshift(&x) % 2000000u);
        uint64_t t0 = bench_now_ns();
        atomic_store(&s->waiting_since, t0);
        starve_take(s, !s->side);
        uint64_t w = bench_now_ns() - t0;
        atomic_store(&s->waiting_since, (uint64_t)0); /* (which ends the watchdog's pause) */
        starve_leave(s, !s->side);
        s->wait_ns[s->made++] = (double)w;
        if (w >= s->cap_ns) s->over++;
    }
    atomic_store(&s->done, 1);
    return NULL;
}

static void starve_run(int i, int side, int n, unsigned cap_ms, int attempts, int stop_after, double *m)
{
    struct starve *s = (struct starve *)bench_alloc(sizeof *s);
    struct cont c[MAXT];
    s->im = impls[P_RWLOCK][i];
    s->obj = s->im->make(0, 1, 0);
    s->side = side;
    s->hold_lo = polls_of(50000);
    s->hold_span = polls_of(200000) - s->hold_lo;
    s->cap_ns = (uint64_t)cap_ms * 1000000u;
    s->budget_ns = 2 * s->cap_ns;
    s->attempts = attempts < MAXA ? attempts : MAXA;
    s->stop_after = stop_after;
    /* relaxed: the threads that read them are created after these stores */
    atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
    atomic_store_explicit(&s->done, 0, memory_order_relaxed);
    atomic_store_explicit(&s->torn, 0, memory_order_relaxed);
    atomic_store_explicit(&s->waiting_since, (uint64_t)0, memory_order_relaxed);
    atomic_store_explicit(&s->pause, (uint64_t)0, memory_order_relaxed);
    for (int k = 0; k < n; k++) {
        c[k].s = s;
        c[k].index = k;
        c[k].t = bench_thread_start(continuous, &c[k]);
    }
    pthread_t w = bench_thread_start(prober, s);
    /* the watchdog: once the prober has waited the cap, the others stop taking the lock (the
     * prober lets them again after its release) */
    while (!atomic_load(&s->done)) {
        bench_sleep_ns(1000000);
        uint64_t since = atomic_load(&s->waiting_since);
        if (since && bench_now_ns() - since > s->cap_ns) atomic_store(&s->pause, since);
    }
    pthread_join(w, NULL);
    atomic_store(&s->stop, 1);
    for (int k = 0; k < n; k++) pthread_join(c[k].t, NULL);
    if (atomic_load(&s->torn)) bench_fail("starve: a reader saw a write half done");
    uint64_t hmax = 0;
    for (int k = 0; k < n; k++) hmax = s->hold_max[k] > hmax ? s->hold_max[k] : hmax;
    m[S_ATTEMPTS] = s->made;
    m[S_OVER] = s->over;
    m[S_MAX] = bench_max(s->wait_ns, s->made) / 1e6;
    m[S_MEDIAN] = bench_median(s->wait_ns, s->made) / 1e6;
    m[S_HOLD] = (double)hmax / 1e6;
    s->im->destroy(s->obj, 1, 0);
    free(s);
}

/* ---- main: the runs, then the tables and the CSV rows ---- */
static int R; /* repetitions */
static double *lat_v, *tim_v, *sta_v;
#define LAT(row, cf, i, m, r) lat_v[((((size_t)(row) * NCONF + (cf)) * MAXIMPL + (i)) * NMET + (m)) * R + (r)]
#define TIM(row, ld, i, m, r) tim_v[((((size_t)(row) * NLOAD + (ld)) * MAXIMPL + (i)) * NTM + (m)) * R + (r)]
#define STA(sd, k, i, m, r) sta_v[((((size_t)(sd) * NSN + (k)) * MAXIMPL + (i)) * NSM + (m)) * R + (r)]
static struct tcount tcounts[NROW][NLOAD][MAXIMPL];

/* the median of the reps of one figure (sorts them), and its CSV row */
static double figure(const struct bench_opts *o, const char *variant, const char *metric, const char *unit, double *v)
{
    return bench_csv_samples(o, "latency", variant, metric, unit, v, R);
}

static int load_threads(int ld) { return threads[ld / 2]; }
static int load_busy(int ld, int busy) { return ld % 2 ? busy : 0; }
static int only_t;      /* --threads N: that T (and starve's N) alone; 0: all */
static int nload_busy;  /* 2: each T alone and beside the busy threads; 1 (--busy 0): alone */
static bool t_on(int t) { return only_t == 0 || t == only_t; }
static bool load_on(int ld) { return ld % 2 < nload_busy && t_on(load_threads(ld)); }

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_second_thread();
    R = (int)bench_take_opt(&argc, argv, "--reps", 1);
    unsigned ms = (unsigned)bench_take_opt(&argc, argv, "--ms", 0);
    int busy = (int)bench_take_opt(&argc, argv, "--busy", 4);
    long timeout_us = bench_take_opt(&argc, argv, "--timeout-us", 1000);
    unsigned cap_ms = (unsigned)bench_take_opt(&argc, argv, "--cap", 0);
    int attempts = (int)bench_take_opt(&argc, argv, "--attempts", 0);
    int stop_after = (int)bench_take_opt(&argc, argv, "--stop-after", 2);
    only_t = (int)bench_take_opt(&argc, argv, "--threads", -1);
    int argn = bench_parse(argc, argv, &o);
    if (o.op) {
        fprintf(stderr, "latency: no --op (it measures no loop of one call)\n");
        return 2;
    }
    bool part[3] = { false, false, false }, prim_on[NPRIM] = { false };
    bool any_part = false, any_prim = false;
    static const char *const part_name[3] = { "latency", "timed", "starve" };
    for (int a = 1; a < argn; a++) {
        int k;
        for (k = 0; k < 3 && strcmp(argv[a], part_name[k]) != 0; k++) {}
        if (k < 3) {
            part[k] = any_part = true;
            continue;
        }
        for (k = 0; k < NPRIM && strcmp(argv[a], prim_name[k]) != 0; k++) {}
        if (k == NPRIM) {
            fprintf(stderr, "latency: unknown part or primitive %s\n", argv[a]);
            return 2;
        }
        prim_on[k] = any_prim = true;
    }
    for (int k = 0; k < 3; k++) part[k] = part[k] || !any_part;
    for (int k = 0; k < NPRIM; k++) prim_on[k] = prim_on[k] || !any_prim;
    if (R < 1) R = 1;
    if (ms == 0) ms = o.quick ? 20 : 150;
    if (cap_ms == 0) cap_ms = o.quick ? 100 : 1000;
    if (attempts <= 0) attempts = o.quick ? 5 : 30;
    if (busy < 0) busy = 0;
    if (timeout_us <= 0) timeout_us = 1000;
    nload_busy = busy ? 2 : 1;
    if (only_t < 0) only_t = o.quick ? 4 : 0;
    if (only_t != 0 && only_t != 2 && only_t != 4 && only_t != 8) {
        fprintf(stderr, "latency: --threads takes 2, 4 or 8\n");
        return 2;
    }

    calibrate();
    for (int t = 0; t < MAXT; t++) ths[t].buf = bench_alloc(BUFBYTES); /* (bench_alloc touches every page) */
    merged = (uint32_t *)bench_alloc((size_t)MAXT * BUFBYTES);
    merged_tmp = (uint32_t *)bench_alloc((size_t)MAXT * BUFBYTES);
    lat_v = (double *)calloc((size_t)NROW * NCONF * MAXIMPL * NMET * (size_t)R, sizeof(double));
    tim_v = (double *)calloc((size_t)NROW * NLOAD * MAXIMPL * NTM * (size_t)R, sizeof(double));
    sta_v = (double *)calloc((size_t)NSIDE * NSN * MAXIMPL * NSM * (size_t)R, sizeof(double));
    if (!lat_v || !tim_v || !sta_v) bench_fail("out of memory");
    uint64_t t_start = bench_now_ns();

    for (int r = 0; r < R; r++) {
        for (int cf = 0; part[0] && cf < NCONF; cf++) {
            int g = cf / NLOAD, ld = cf % NLOAD;
            if (!load_on(ld)) continue;
            for (int p = 0; p < NPRIM; p++)
                for (int i = 0; prim_on[p] && i < nimpl(p); i++) {
                    double m[NROW][NMET];
                    latency_run(p, i, &regimes[g], load_threads(ld), load_busy(ld, busy), ms, m);
                    for (int row = 0; row < NROW; row++)
                        if (row_prim[row] == p)
                            for (int k = 0; k < NMET; k++) LAT(row, cf, i, k, r) = m[row][k];
                }
        }
        for (int ld = 0; part[1] && ld < NLOAD; ld++) {
            if (!load_on(ld)) continue;
            for (int p = 0; p < NPRIM; p++)
                for (int i = 0; prim_on[p] && i < nimpl(p); i++) {
                    if (!has_timed(p, i)) continue;
                    double m[NROW][NTM];
                    struct tcount c[NROW];
                    memset(c, 0, sizeof c);
                    timed_run(p, i, load_threads(ld), load_busy(ld, busy), ms, (uint64_t)timeout_us * 1000u, m, c);
                    for (int row = 0; row < NROW; row++) {
                        if (row_prim[row] != p) continue;
                        for (int k = 0; k < NTM; k++) TIM(row, ld, i, k, r) = m[row][k];
                        struct tcount *t = &tcounts[row][ld][i];
                        t->early += c[row].early;
                        t->woke += c[row].woke;
                        t->earliest = c[row].earliest < t->earliest ? c[row].earliest : t->earliest;
                    }
                }
        }
        for (int sd = 0; part[2] && prim_on[P_RWLOCK] && sd < NSIDE; sd++)
            for (int k = 0; k < NSN; k++)
                for (int i = 0; t_on(starve_n[k]) && i < nimpl(P_RWLOCK); i++) {
                    double m[NSM];
                    starve_run(i, sd, starve_n[k], cap_ms, attempts, stop_after, m);
                    for (int x = 0; x < NSM; x++) STA(sd, k, i, x, r) = m[x];
                }
    }

    char metric[96], a[NMET][16];
    char tset[32];
    snprintf(tset, sizeof tset, only_t ? "%d only" : "2, 4, 8", only_t);
    printf("latency: %s build, fastsync FASTSYNC_SPIN=%d+%d; %ld CPUs, threads limited to %d; T %s; %u ms per run;"
           " %s of %d; work %.3f ns per poll; busy threads %d\n", o.build, FASTSYNC_SPIN, FASTSYNC_SPIN_YIELDS,
           bench_ncpu(), CPUS, tset, ms, R > 1 ? "medians" : "runs", R, ns_per_poll, busy);
    if (part[0]) {
        printf("%-10s %-6s %3s %4s  %-40s %10s %8s %8s %8s %8s %9s %9s\n", "latency", "regime", "thr", "busy",
               "implementation", "ops/s", "p50 us", "p99 us", "p99.9 us", "max us", "slow/fast", "cpu us/op");
        for (int row = 0; row < NROW; row++)
            for (int cf = 0; prim_on[row_prim[row]] && cf < NCONF; cf++) {
                int g = cf / NLOAD, ld = cf % NLOAD, p = row_prim[row];
                if (!load_on(ld)) continue;
                for (int i = 0; i < nimpl(p); i++) {
                    double med[NMET];
                    for (int k = 0; k < NMET; k++) {
                        if (k == M_SPREAD && (p == P_LATCH || p == P_BARRIER)) {
                            snprintf(a[k], sizeof a[k], "-");
                            continue;
                        }
                        snprintf(metric, sizeof metric, "%s_%s_t%d_b%d_%s", row_key[row], regimes[g].name,
                                 load_threads(ld), load_busy(ld, busy), met_key[k]);
                        med[k] = figure(&o, impl_variant(p, i), metric, met_unit[k], &LAT(row, cf, i, k, 0));
                        snprintf(a[k], sizeof a[k], k == M_OPS ? "%.0f" : k == M_SPREAD ? "%.2f" : "%.3g", med[k]);
                    }
                    printf("%-10s %-6s %3d %4d  %-40s %10s %8s %8s %8s %8s %9s %9s\n", row_name[row], regimes[g].name,
                           load_threads(ld), load_busy(ld, busy), impl_name(p, i), a[M_OPS], a[M_P50], a[M_P99],
                           a[M_P999], a[M_MAX], a[M_SPREAD], a[M_CPU]);
                }
            }
        printf("(ops/s: lock+unlock, wait+post pairs, rounds (latch, barrier), items (cond) per second, all the row's"
               " threads; p50 ... max: each call's wait, us (latch, barrier: from the round's last arrival; cond: from"
               " the push); slow/fast: slowest thread's operations / fastest's; cpu us/op: the threads' CPU time less"
               " their work's, per operation; regimes spin: hold and think 0.1-0.5 us, sleep: hold 20-200 us, think"
               " 2-20 us; rwlock: T/2 readers, T/2 writers; sem: T/2 tokens; cond: T/2 producers, T/2 consumers;"
               " bench/latency.c says the rest)\n");
    }
    if (part[1]) {
        printf("%-10s %3s %4s  %-40s %7s %8s %8s %8s %6s %11s %5s\n", "timed", "thr", "busy", "implementation",
               "waits", "p50 us", "p99 us", "max us", "early", "earliest us", "woke");
        for (int row = 0; row < NROW; row++)
            for (int ld = 0; prim_on[row_prim[row]] && ld < NLOAD; ld++) {
                int p = row_prim[row];
                if (!load_on(ld)) continue;
                for (int i = 0; i < nimpl(p); i++) {
                    if (!has_timed(p, i)) continue;
                    double med[NTM];
                    for (int k = 0; k < NTM; k++) {
                        snprintf(metric, sizeof metric, "timed_%s_t%d_b%d_%s", row_key[row], load_threads(ld),
                                 load_busy(ld, busy), tmet_key[k]);
                        med[k] = figure(&o, impl_variant(p, i), metric, tmet_unit[k], &TIM(row, ld, i, k, 0));
                        snprintf(a[k], sizeof a[k], k == T_WAITS ? "%.0f" : "%.3g", med[k]);
                    }
                    const struct tcount *t = &tcounts[row][ld][i];
                    static const char *const cnt_key[3] = { "early", "earliest_us", "woke" };
                    double cnt[3] = { (double)t->early, (double)t->earliest / 1e3, (double)t->woke };
                    for (int k = 0; k < 3; k++) {
                        snprintf(metric, sizeof metric, "timed_%s_t%d_b%d_%s", row_key[row], load_threads(ld),
                                 load_busy(ld, busy), cnt_key[k]);
                        bench_csv_row(&o, "latency", impl_variant(p, i), metric, k == 1 ? "us" : "count", cnt[k],
                                      cnt[k], cnt[k], R);
                    }
                    char earliest[16];
                    snprintf(earliest, sizeof earliest, t->early ? "%.3g" : "-", cnt[1]);
                    printf("%-10s %3d %4d  %-40s %7s %8s %8s %8s %6ld %11s %5ld\n", row_name[row], load_threads(ld),
                           load_busy(ld, busy), p == P_COND ? cimpls[i]->name : impls[p][i]->timed_name, a[T_WAITS],
                           a[T_P50], a[T_P99], a[T_MAX], t->early, earliest, t->woke);
                }
            }
        printf("(each wait %ld us on an unavailable object: a held mutex, a write-held rwlock (rd: timed read locks,"
               " wr: timed write locks), a semaphore at 0, a latch at 1, a condvar nobody signals; p50, p99, max: the"
               " return's clock less the deadline, us; early: returns before the deadline (and the earliest, us before"
               " it); woke: returns without a timeout; no timed wait: barriers, std::latch, absl::Mutex)\n", timeout_us);
    }
    if (part[2] && prim_on[P_RWLOCK]) {
        printf("%-33s %-40s %8s %8s %10s %10s %12s\n", "rwlock: prober under N others", "implementation",
               "attempts", "over cap", "median ms", "longest ms", "longest hold");
        for (int sd = 0; sd < NSIDE; sd++)
            for (int k = 0; k < NSN; k++)
                for (int i = 0; t_on(starve_n[k]) && i < nimpl(P_RWLOCK); i++) {
                    double med[NSM];
                    for (int x = 0; x < NSM; x++) {
                        snprintf(metric, sizeof metric, "%s%d_%s", side_key[sd], starve_n[k], smet_key[x]);
                        med[x] = figure(&o, impl_variant(P_RWLOCK, i), metric, smet_unit[x], &STA(sd, k, i, x, 0));
                    }
                    snprintf(metric, sizeof metric, "%s%d_cap_ms", side_key[sd], starve_n[k]);
                    bench_csv_row(&o, "latency", impl_variant(P_RWLOCK, i), metric, "ms", cap_ms, cap_ms, cap_ms, R);
                    char what[40], longest[16];
                    snprintf(what, sizeof what, "%s under %d %s", sd ? "reader" : "writer", starve_n[k],
                             sd ? "writers" : "readers");
                    if (med[S_OVER] > 0) snprintf(longest, sizeof longest, ">%u", cap_ms);
                    else snprintf(longest, sizeof longest, "%.3g", med[S_MAX]);
                    printf("%-33s %-40s %8.0f %8.0f %10.3g %10s %12.3g\n", what, impl_name(P_RWLOCK, i), med[S_ATTEMPTS],
                           med[S_OVER], med[S_MEDIAN], longest, med[S_HOLD]);
                }
        printf("(N continuous threads each take the lock (readers: read, writers: write), hold it 50-200 us of work"
               " and take it again at once; the prober sleeps 1-3 ms, takes it the other way, up to %d attempts in"
               " %u ms (at least 3); over cap: attempts not in within %u ms, after which the others stopped until it"
               " was; the run ends after %d; longest hold: the others' longest, ms)\n", attempts, 2 * cap_ms, cap_ms,
               stop_after);
    }
    printf("(run time %.1f s)\n", (double)(bench_now_ns() - t_start) / 1e9);
    return 0;
}
