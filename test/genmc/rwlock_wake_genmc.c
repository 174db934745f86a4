/* SPDX-License-Identifier: MIT */
/* GenMC harness: rwlock_genmc.c with main holding a read lock (RWLOCK_GENMC_MAIN_READS; that
 * file says what it checks): W registers and sleeps on the high half behind main's read
 * lock; R comes in beside main first, or (once W is registered) sleeps on the low half
 * behind W (writers first); main's last rdunlock must hand the lock to W (wseq + 1, one
 * wake of the high half), whose wrunlock then lets R in (rwait cleared, a wake of the low
 * half), each at every moment of the sleeper's way to sleep: nobody is left asleep, R sees
 * W's writes or none, and W never overlaps R.
 * (8 052 executions.)
 * Planted mistakes: plant_rwlock_handoff_no_wseq.patch (the hand-off to writers leaves wseq:
 * the high half unchanged, W compares equal after the unlock and its wake, and sleeps for
 * ever); plant_rwlock_no_writer_wake.patch (the hand-off changes wseq but skips its wake:
 * W, asleep before the unlock, sleeps for ever). */
#define RWLOCK_GENMC_MAIN_READS 1
#include "rwlock_genmc.c"
