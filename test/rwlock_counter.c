/* SPDX-License-Identifier: MIT */
/* rwlock_counter: readers share and writers exclude. A plain, non-atomic record (8 counters
 * that differ by their index, and their sum) is changed by writers under the write lock, one
 * field at a time with a yield in the middle now and then, and checked by readers under read
 * locks; every field is written by every write section, so the first counter ends equal to
 * the number of write sections, exactly. Readers take the lock by rdlock, tryrdlock (again
 * after EBUSY), timedrdlock or clockrdlock with a short deadline (again after ETIMEDOUT);
 * writers by wrlock, trywrlock, timedwrlock and clockwrlock the same way, and one write
 * section in four ends in a downgrade, after which the writer, now a reader, finds the record
 * still as it left it. Checked: every read finds the record consistent; never a reader with a
 * writer inside, never two writers; two readers were inside at once (the box runs until
 * they have been, so that a lock that let one reader in at a time fails); every call says 0
 * or its retry code; the word ends with nobody holding or waiting, destroy 0. Spread over
 * the CPUs and pinned to one, 4 threads and more threads than CPUs; under ThreadSanitizer the
 * plain record checks the lock's release and acquire.
 * Fails with: a read lock that lets a reader in while a writer holds (inconsistent reads,
 * overlaps), a write lock that ignores readers or another writer (lost or torn writes), a
 * lock that never lets two readers share (the coverage check: the watchdog), a downgrade that
 * lets a writer in between (the downgraded reader finds another writer's record). */
#include "harness.h"

#define FIELDS 8

static fastsync_rwlock_t rw;
static struct {
    unsigned long v[FIELDS]; /* v[i] == v[0] + i */
    unsigned long sum;       /* the sum of v */
} rec;                       /* plain: guarded by rw */

static _Atomic(int) readers_in, writers_in;
static _Atomic(int) max_readers_in;
static uint64_t box_end;

struct worker {
    bool writer;
    uint64_t rng;
    _Atomic(unsigned long) done; /* relaxed: progress for the dump */
    _Atomic(int) where;          /* 0 outside, 1 taking the lock, 2 inside */
    unsigned long sections, by[4], downgrades, retries;
    unsigned long bad_read, bad_excl, bad_down, bad_ret;
    int bad_code;
};

static struct worker *workers;
static int nworkers;

static void dump(void *unused)
{
    (void)unused;
    test_dump_rwlock("rwlock", &rw);
    /* relaxed: a diagnostic snapshot. */
    diag("readers inside %d, writers inside %d", atomic_load_explicit(&readers_in, memory_order_relaxed),
         atomic_load_explicit(&writers_in, memory_order_relaxed));
    for (int i = 0; i < nworkers; i++)
        diag("%s %d: %lu sections, %s", workers[i].writer ? "writer" : "reader", i,
             atomic_load_explicit(&workers[i].done, memory_order_relaxed),
             (const char *[]){ "outside", "taking the lock", "inside" }[atomic_load_explicit(&workers[i].where,
                                                                                              memory_order_relaxed)]);
}

static void code(struct worker *w, int r, int allowed)
{
    if (r != 0 && r != allowed) {
        w->bad_ret++;
        w->bad_code = r;
    }
}

/* Takes the lock (the writer's or a reader's) one of four ways; returns which. */
static int take(struct worker *w)
{
    int how = (int)(test_rand(&w->rng) % 4), r;
    switch (how) {
    case 0:
        code(w, w->writer ? fastsync_rwlock_wrlock(&rw) : fastsync_rwlock_rdlock(&rw), 0);
        break;
    case 1:
        for (unsigned tries = 1; (r = w->writer ? fastsync_rwlock_trywrlock(&rw) : fastsync_rwlock_tryrdlock(&rw)) != 0;
             tries++) {
            code(w, r, EBUSY);
            w->retries++;
            if (tries % 8 == 0) sched_yield(); /* let the holder run when pinned */
        }
        break;
    default:
        for (;;) {
            clockid_t clock = how == 3 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
            struct timespec d = test_deadline_on(clock, test_rand(&w->rng) % 200000u);
            if (w->writer)
                r = how == 2 ? fastsync_rwlock_timedwrlock(&rw, &d) : fastsync_rwlock_clockwrlock(&rw, clock, &d);
            else
                r = how == 2 ? fastsync_rwlock_timedrdlock(&rw, &d) : fastsync_rwlock_clockrdlock(&rw, clock, &d);
            if (r == 0) break;
            code(w, r, ETIMEDOUT);
            w->retries++;
        }
        break;
    }
    return how;
}

static bool consistent(void)
{
    unsigned long sum = 0;
    bool ok = true;
    for (int i = 0; i < FIELDS; i++) {
        ok &= rec.v[i] == rec.v[0] + (unsigned long)i;
        sum += rec.v[i];
    }
    return ok && sum == rec.sum;
}

static void *worker_main(void *p)
{
    struct worker *w = (struct worker *)p;
    unsigned long n = 0;
    /* relaxed (every access to where, done and the inside counts): progress for the dump,
     * and counts that add no happens-before of their own (which could hide a missing one in
     * the lock from ThreadSanitizer: the plain record is the real check). */
    while (test_box_until(box_end, n, atomic_load_explicit(&max_readers_in, memory_order_relaxed) >= 2)) {
        atomic_store_explicit(&w->where, 1, memory_order_relaxed);
        w->by[take(w)]++;
        atomic_store_explicit(&w->where, 2, memory_order_relaxed);
        if (w->writer) {
            if (atomic_fetch_add_explicit(&writers_in, 1, memory_order_relaxed) != 0 ||
                atomic_load_explicit(&readers_in, memory_order_relaxed) != 0)
                w->bad_excl++;
            unsigned long sum = 0;
            for (int i = 0; i < FIELDS; i++) {
                rec.v[i]++;
                sum += rec.v[i];
                if (i == FIELDS / 2 && test_rand(&w->rng) % 16 == 0) sched_yield(); /* half written */
            }
            rec.sum = sum;
            unsigned long mine = rec.v[0];
            atomic_fetch_sub_explicit(&writers_in, 1, memory_order_relaxed);
            if (test_rand(&w->rng) % 4 == 0) {
                code(w, fastsync_rwlock_downgrade(&rw), 0);
                w->downgrades++;
                atomic_fetch_add_explicit(&readers_in, 1, memory_order_relaxed);
                if (test_rand(&w->rng) % 8 == 0) sched_yield();
                if (!consistent() || rec.v[0] != mine) w->bad_down++;
                atomic_fetch_sub_explicit(&readers_in, 1, memory_order_relaxed);
                code(w, fastsync_rwlock_rdunlock(&rw), 0);
            } else {
                code(w, fastsync_rwlock_wrunlock(&rw), 0);
            }
        } else {
            int in = atomic_fetch_add_explicit(&readers_in, 1, memory_order_relaxed) + 1;
            if (atomic_load_explicit(&writers_in, memory_order_relaxed) != 0) w->bad_excl++;
            for (int m = atomic_load_explicit(&max_readers_in, memory_order_relaxed); in > m;)
                if (atomic_compare_exchange_weak_explicit(&max_readers_in, &m, in, memory_order_relaxed,
                                                          memory_order_relaxed))
                    break;
            if (!consistent()) w->bad_read++;
            if (test_rand(&w->rng) % 8 == 0) sched_yield(); /* let another reader in beside it */
            if (!consistent()) w->bad_read++;
            atomic_fetch_sub_explicit(&readers_in, 1, memory_order_relaxed);
            code(w, fastsync_rwlock_rdunlock(&rw), 0);
            if (test_rand(&w->rng) % 4 == 0) sched_yield(); /* readers leave gaps, for trywrlock */
        }
        w->sections++;
        atomic_store_explicit(&w->done, ++n, memory_order_relaxed);
        atomic_store_explicit(&w->where, 0, memory_order_relaxed);
    }
    return NULL;
}

static void run(const char *name, bool pinned, int pairs, double ms)
{
    int nreaders = pairs, nwriters = pairs;
    test_pin_all(pinned);
    fastsync_rwlock_init(&rw, 0);
    memset(&rec, 0, sizeof rec);
    for (int i = 0; i < FIELDS; i++) rec.v[i] = (unsigned long)i;
    rec.sum = FIELDS * (FIELDS - 1) / 2;
    /* relaxed: before the threads start. */
    atomic_store_explicit(&max_readers_in, 0, memory_order_relaxed);
    int n = nreaders + nwriters;
    workers = (struct worker *)calloc((size_t)n, sizeof *workers);
    pthread_t *t = (pthread_t *)calloc((size_t)n, sizeof *t);
    if (!workers || !t) bail("out of memory");
    nworkers = n;
    unsigned long waits0 = test_kernel_waits(), wakes0 = test_kernel_wakes();
    box_end = test_box_end(ms);
    for (int i = 0; i < n; i++) {
        workers[i].writer = i % 2 == 1; /* readers and writers alternate */
        workers[i].rng = test_stream((unsigned)i);
    }
    for (int i = 0; i < n; i++) t[i] = test_thread_start(worker_main, &workers[i]);
    for (int i = 0; i < n; i++) test_thread_join(t[i]);
    unsigned long wsec = 0, rsec = 0, down = 0, retries = 0, bad_read = 0, bad_excl = 0, bad_down = 0, bad_ret = 0;
    unsigned long rby[4] = { 0 }, wby[4] = { 0 };
    int bad_code = 0;
    for (int i = 0; i < n; i++) {
        struct worker *w = &workers[i];
        *(w->writer ? &wsec : &rsec) += w->sections;
        for (int h = 0; h < 4; h++) (w->writer ? wby : rby)[h] += w->by[h];
        down += w->downgrades;
        retries += w->retries;
        bad_read += w->bad_read;
        bad_excl += w->bad_excl;
        bad_down += w->bad_down;
        bad_ret += w->bad_ret;
        if (w->bad_ret) bad_code = w->bad_code;
    }
    diag("%s, %d readers + %d writers: %lu read sections (rdlock %lu, try %lu, timed %lu, clock %lu), %lu write "
         "sections (wrlock %lu, try %lu, timed %lu, clock %lu; %lu downgraded), %lu retries, at most %d readers "
         "inside at once, %lu futex waits, %lu wakes",
         name, nreaders, nwriters, rsec, rby[0], rby[1], rby[2], rby[3], wsec, wby[0], wby[1], wby[2], wby[3], down,
         retries, atomic_load_explicit(&max_readers_in, memory_order_relaxed), test_kernel_waits() - waits0,
         test_kernel_wakes() - wakes0);
    ok(rsec > 0 && wsec > 0, "%s, %d+%d: readers and writers ran", name, nreaders, nwriters);
    is_int(rec.v[0], wsec, "%s, %d+%d: the record's count == write sections, exactly", name, nreaders, nwriters);
    ok(consistent(), "%s, %d+%d: the record consistent at the end", name, nreaders, nwriters);
    is_int(bad_read, 0, "%s, %d+%d: every read found it consistent", name, nreaders, nwriters);
    is_int(bad_excl, 0, "%s, %d+%d: never a reader with a writer, never two writers", name, nreaders, nwriters);
    is_int(bad_down, 0, "%s, %d+%d: every downgraded writer found its own record", name, nreaders, nwriters);
    ok(atomic_load_explicit(&max_readers_in, memory_order_relaxed) >= 2, "%s, %d+%d: readers shared the lock",
       name, nreaders, nwriters);
    if (!is_int(bad_ret, 0, "%s, %d+%d: only the expected return codes", name, nreaders, nwriters))
        diag("  last unexpected code: %d", bad_code);
    is_int(test_rwlock_word(&rw) & ~FASTSYNC__RW_WSEQS, 0, "%s, %d+%d: nobody holds or waits at the end", name,
           nreaders, nwriters);
    is_int(fastsync_rwlock_destroy(&rw), 0, "%s, %d+%d: destroy 0", name, nreaders, nwriters);
    free(t);
    free(workers);
    workers = NULL;
    nworkers = 0;
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    int many = test_ncpu() > 3 ? test_ncpu() : 3; /* with as many writers: more threads than CPUs */
    run("spread", false, 2, 250);
    run("pinned", true, 2, 250);
    run("spread", false, many, 250);
    run("pinned", true, many, 250);
    test_pin_all(false);
    test_watchdog_stop();
    return done_testing();
}
