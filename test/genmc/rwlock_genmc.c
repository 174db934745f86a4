/* SPDX-License-Identifier: MIT */
/* GenMC harness: the reader-writer lock excludes, publishes and loses no wakeup (issue 20).
 * Main takes the write lock before it starts a writer W and a reader R, adds 1 to two plain
 * ints a and b, and unlocks; W takes the write lock and adds 1 to both; R takes the read
 * lock and reads both. No spinning: a lock that finds the lock taken registers and sleeps (W
 * on the word's high half, R on its low half with rwait), so while main holds the lock both
 * kinds may sleep, and main's wrunlock hands it to W (wseq + 1, one wake of the high half)
 * or lets R in (rwait cleared, a wake of the low half), at every moment of their way to
 * sleep. Checked:
 *   - exclusion: two writers, or a writer and the reader, inside at once race on a plain
 *     int, which GenMC reports; so does a lock whose acquire does not read the release of
 *     the unlock before it;
 *   - the reader sees all of the last writer's writes: a == b (1 or 2: main's, or W's too);
 *   - nobody is left asleep (--check-liveness);
 *   - at the end a == b == 2 and the word holds nothing but wseq.
 * (15 811 executions.) Three threads besides main were too many: W, W and R all started on
 * a free lock took 162 497 executions (30 s here), and two writers or two readers behind a
 * read lock of main's did not end in 2 minutes; each lock taken twice by one thread, 342 393
 * executions (84 s).
 * Both halves of the word are futex words: futex_model.h reads the whole word for either
 * (model_wide_word).
 * With RWLOCK_GENMC_MAIN_READS defined (rwlock_wake_genmc.c) main takes a read lock instead
 * and writes nothing: W registers and sleeps behind it, R sleeps behind W (writers first),
 * and main's last rdunlock must hand the lock to W, whose wrunlock lets R in; R sees W's
 * writes (a == b == 1) or none (0, R in before W).
 * Planted mistakes: plant_rwlock_unlock_relaxed.patch (the unlocks' CAS relaxed, not
 * release: a race on the ints), here; in rwlock_wake_genmc.c
 * plant_rwlock_handoff_no_wseq.patch (the hand-off to writers does not change wseq: a
 * writer about to sleep on the high half sleeps through it) and
 * plant_rwlock_no_writer_wake.patch (the hand-off's wake of a writer skipped). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_rwlock_t rw = FASTSYNC_RWLOCK_INIT;
static int a, b; /* plain: the lock must order every access */

#ifdef RWLOCK_GENMC_MAIN_READS
#define RWLOCK_GENMC_MAIN_WRITES 0
#else
#define RWLOCK_GENMC_MAIN_WRITES 1
#endif

static void *writer(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_wrlock(&rw) == 0);
    a++;
    b++;
    assert(fastsync_rwlock_wrunlock(&rw) == 0);
    return NULL;
}

static void *reader(void *unused)
{
    (void)unused;
    assert(fastsync_rwlock_rdlock(&rw) == 0);
    int x = a, y = b;
    /* main's writes, or W's too (without main's: none, or W's) */
    assert(x == y && x >= RWLOCK_GENMC_MAIN_WRITES && x <= RWLOCK_GENMC_MAIN_WRITES + 1 &&
           "a reader sees all of the last writer's writes");
    assert(fastsync_rwlock_rdunlock(&rw) == 0);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    model_wide_word = &rw.state; /* both halves are futex words */
#if RWLOCK_GENMC_MAIN_WRITES
    assert(fastsync_rwlock_wrlock(&rw) == 0);
#else
    assert(fastsync_rwlock_rdlock(&rw) == 0);
#endif
    pthread_create(&t[0], NULL, writer, NULL);
    pthread_create(&t[1], NULL, reader, NULL);
#if RWLOCK_GENMC_MAIN_WRITES
    a++;
    b++;
    assert(fastsync_rwlock_wrunlock(&rw) == 0);
#else
    assert(fastsync_rwlock_rdunlock(&rw) == 0);
#endif
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    assert(a == 1 + RWLOCK_GENMC_MAIN_WRITES && b == a);
    uint64_t v = atomic_load_explicit(&rw.state, memory_order_relaxed);
    assert((v & ~(FASTSYNC__RW_SHARED | FASTSYNC__RW_WSEQS)) == 0 && "nothing held, waited or registered");
    return 0;
}
