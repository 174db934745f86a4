/* SPDX-License-Identifier: MIT */
/* GenMC harness: a second writer does not lose the hand-off to a writer whose deadline
 * passes (issue 20): rwlock_timed_genmc.c with RWLOCK_TIMED_WRITER2 (that file says what it
 * checks): main holds a read lock, the timed writer T registers, the untimed writer W2
 * registers after it, and main's rdunlock hands the lock on with one wake as T's deadline
 * passes at any moment; W2 must get in every time.
 * Planted mistake: plant_rwlock_handoff_no_wseq.patch (the hand-off to writers leaves wseq:
 * W2, on its way to sleep, compares the high half equal after the unlock and its wake and
 * sleeps for ever). */
#define RWLOCK_TIMED_WRITER2 1
#include "rwlock_timed_genmc.c"
