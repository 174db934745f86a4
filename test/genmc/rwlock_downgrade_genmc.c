/* SPDX-License-Identifier: MIT */
/* GenMC harness: downgrade turns the write lock into a read lock atomically, lets the
 * waiting readers in, and publishes the writer's writes (issue 20). Main takes the write
 * lock before it starts a reader R and a writer W2, sets two plain ints a and b to 1,
 * downgrades, and keeps its read lock until R is in; W2 starts once R is in. No spinning.
 *   - R finds the lock write-locked (main holds it from before R starts) and sleeps on the
 *     low half with rwait, or is still on its way to sleep, when main downgrades: the
 *     downgrade must let it in beside main's read lock (rwait cleared, a wake of the low
 *     half), or R, main and W2 wait for ever, a liveness violation;
 *   - the downgraded reader (main) and R see the writes made under the write lock: a == b
 *     == 1 (main's downgrade is a release, R's read lock an acquire that reads it or an RMW
 *     after it in its release sequence);
 *   - W2 comes while main and R hold read locks, or after: it registers and sleeps on the
 *     high half, and gets in once both have unlocked (the last rdunlock's hand-off), after
 *     them: it finds a == 1 and its writes (a = b = 2) race with no read (GenMC reports a
 *     race on a plain int otherwise);
 *   - at the end a == b == 2 and the word holds nothing but wseq.
 * (1 826 executions.) Two readers let in by the downgrade did not end in 5 minutes here.
 * With RWLOCK_DOWNGRADE_WRITER_ONLY (rwlock_downgrade_writer_genmc.c) there is no R, and
 * W2 starts at once: it may register and sleep before the downgrade, which must then leave
 * it asleep (a read lock is held) and keep it out until main's rdunlock hands the lock on;
 * main, reading a and b after its downgrade, must find its own writes (a writer in between
 * races with main's reads or fails that assert).
 * Planted mistakes: plant_rwlock_downgrade_no_wake.patch here (the downgrade's hand-off
 * clears rwait but skips its wake: R sleeps for ever beside a read lock);
 * plant_rwlock_downgrade_unlock_lock.patch in rwlock_downgrade_writer_genmc.c (the
 * downgrade a wrunlock and then a rdlock: W2 comes in between). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_rwlock_t rw = FASTSYNC_RWLOCK_INIT;
static atomic_int r_in; /* R holds its read lock */
static int a, b;        /* plain: the lock must order every access */

#ifndef RWLOCK_DOWNGRADE_WRITER_ONLY
static void *reader(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_rdlock(&rw) == 0);
    atomic_store_explicit(&r_in, 1, memory_order_release);
    assert(a == 1 && b == 1 && "the readers a downgrade lets in see the writer's writes");
    assert(fastsync_rwlock_rdunlock(&rw) == 0);
    return NULL;
}
#endif

static void *writer(void *unused)
{
    (void)unused;
#ifndef RWLOCK_DOWNGRADE_WRITER_ONLY
    while (!atomic_load_explicit(&r_in, memory_order_acquire)) {}
#endif
    assert(fastsync_rwlock_wrlock(&rw) == 0);
    assert(a == 1 && b == 1 && "a writer comes in after the downgraded reader");
    a = b = 2;
    assert(fastsync_rwlock_wrunlock(&rw) == 0);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    int n = 0;
    model_wide_word = &rw.state; /* both halves are futex words */
    assert(fastsync_rwlock_wrlock(&rw) == 0);
#ifndef RWLOCK_DOWNGRADE_WRITER_ONLY
    pthread_create(&t[n++], NULL, reader, NULL);
#endif
    pthread_create(&t[n++], NULL, writer, NULL);
    a = b = 1;
    assert(fastsync_rwlock_downgrade(&rw) == 0);
    assert(a == 1 && b == 1 && "the downgraded reader sees its writes, no writer in between");
#ifndef RWLOCK_DOWNGRADE_WRITER_ONLY
    while (!atomic_load_explicit(&r_in, memory_order_acquire)) {} /* R gets in beside main */
#endif
    assert(fastsync_rwlock_rdunlock(&rw) == 0);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    assert(a == 2 && b == 2);
    uint64_t v = atomic_load_explicit(&rw.state, memory_order_relaxed);
    assert((v & ~(FASTSYNC__RW_SHARED | FASTSYNC__RW_WSEQS)) == 0 && "nothing held, waited or registered");
    return 0;
}
