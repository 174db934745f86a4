/* SPDX-License-Identifier: MIT */
/* GenMC harness: a writer whose deadline passes lets in the readers it held back (the class
 * of glibc bug 23844) (issue 20). Main holds a read lock while it starts a timed writer T
 * and a reader R, and releases it only once R is in; the deadline of T's wait passes at a
 * moment GenMC chooses (futex_model.h's model_time_out, called by main while the others
 * run: before T sleeps, while it sleeps, or as a wake picks it). No spinning.
 *   - T registers and sleeps on the high half behind main's read lock; R, once T is
 *     registered, sleeps on the low half behind it (writers first, rwait). T can only give
 *     up (main holds the lock until R is in), and then it is the last writer registered
 *     while a read lock is held: its give-up must let R in (rwait cleared, a wake of the low
 *     half), or R and main wait for ever, a liveness violation.
 *   - where R comes in before T registers, T sleeps behind both read locks, and the last
 *     rdunlock hands the lock to it (wseq + 1, one wake) as its deadline passes: T says
 *     ETIMEDOUT, or takes the lock (a woken writer takes a writable lock even past its
 *     deadline) and writes a plain int, which R (it came first) must not see, nor race with.
 *   - at the end the int counts the writers that got in, and the word holds nothing but
 *     wseq (no registration or rwait left).
 * T's timed lock enters fastsync__rw_wrlock_slow as fastsync_rwlock_timedwrlock does once
 * its trywrlock failed and its deadline check passed (that check reads the clock, which
 * GenMC does not run; the deadline here is the model's: any non-NULL abstime).
 * With RWLOCK_TIMED_WRITER2 (rwlock_timed_writer_genmc.c) a second, untimed writer W2 takes
 * R's place: it starts once T is registered (or has returned), so that both writers sleep
 * on the high half behind main's read lock, T first, and main's rdunlock hands the lock on
 * with one wake (wseq + 1) as T's deadline passes at any moment: the wake reaches T, which
 * then takes the lock and hands it on to W2 in its wrunlock, or T left the queue first (its
 * deadline) and the wake reaches W2, or T gave up before the unlock; W2 must get in every
 * time, and the two writers' increments of the int must not race. A bigger harness, T, R
 * and W2 together (W2 started once R was in), did not end in 5 minutes here; W2 started
 * with no gate took 168 916 executions (36 s), gated 29 908.
 * Planted mistakes: plant_rwlock_giveup_no_handoff.patch here (a writer's give-up only
 * leaves the count: rwait stays set and no wake goes out, R sleeps for ever behind a writer
 * that left); plant_rwlock_handoff_no_wseq.patch in rwlock_timed_writer_genmc.c (the
 * unlock's hand-off to writers leaves wseq: a writer on its way to sleep sleeps through it,
 * and a timed one's deadline would end it, but W2 has none). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_rwlock_t rw = FASTSYNC_RWLOCK_INIT;
#ifndef RWLOCK_TIMED_WRITER2
static atomic_int r_in;   /* R holds its read lock */
#endif
static atomic_int t_done; /* T has returned (W2's gate) */
static atomic_int writes; /* relaxed: how many writers got in */
static int data;          /* plain: the lock must order every access */

static void *timed_writer(void *unused)
{
    (void)unused;
    static const struct timespec deadline = { 1, 0 }; /* any: the model decides when it passes */
    int r = fastsync_rwlock_trywrlock(&rw);
    if (r != 0) r = fastsync__rw_wrlock_slow(&rw, CLOCK_MONOTONIC, &deadline);
    assert(r == 0 || r == ETIMEDOUT);
    if (r == 0) {
        data++;
        atomic_fetch_add_explicit(&writes, 1, memory_order_relaxed);
        assert(fastsync_rwlock_wrunlock(&rw) == 0);
    }
    atomic_store_explicit(&t_done, 1, memory_order_relaxed);
    return NULL;
}

#ifndef RWLOCK_TIMED_WRITER2
static void *reader(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_rdlock(&rw) == 0);
    atomic_store_explicit(&r_in, 1, memory_order_release);
    assert(data == 0 && "T is never in before R");
    assert(fastsync_rwlock_rdunlock(&rw) == 0);
    return NULL;
}
#else
static void *writer(void *unused)
{
    (void)unused;
    /* relaxed: a gate, nothing to order; T registered (so W2 queues behind it), or gone */
    while ((atomic_load_explicit(&rw.state, memory_order_relaxed) & FASTSYNC__RW_WRITERS) == 0 &&
           !atomic_load_explicit(&t_done, memory_order_relaxed)) {}
    assert(fastsync_rwlock_wrlock(&rw) == 0);
    data++;
    atomic_fetch_add_explicit(&writes, 1, memory_order_relaxed);
    assert(fastsync_rwlock_wrunlock(&rw) == 0);
    return NULL;
}
#endif

int main(void)
{
    pthread_t t[2];
    model_wide_word = &rw.state; /* both halves are futex words */
    assert(fastsync_rwlock_rdlock(&rw) == 0);
    pthread_create(&t[0], NULL, timed_writer, NULL);
#ifndef RWLOCK_TIMED_WRITER2
    pthread_create(&t[1], NULL, reader, NULL);
#else
    pthread_create(&t[1], NULL, writer, NULL);
#endif
    model_time_out(); /* while the others run */
#ifndef RWLOCK_TIMED_WRITER2
    while (!atomic_load_explicit(&r_in, memory_order_acquire)) {} /* R gets in beside main */
#endif
    assert(fastsync_rwlock_rdunlock(&rw) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    assert(data == atomic_load_explicit(&writes, memory_order_relaxed));
#ifdef RWLOCK_TIMED_WRITER2
    assert(data >= 1 && "W2 got in");
#endif
    uint64_t v = atomic_load_explicit(&rw.state, memory_order_relaxed);
    assert((v & ~(FASTSYNC__RW_SHARED | FASTSYNC__RW_WSEQS)) == 0 && "nothing held, waited or registered");
    return 0;
}
