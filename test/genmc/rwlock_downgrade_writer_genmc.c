/* SPDX-License-Identifier: MIT */
/* GenMC harness: downgrade is atomic, and a writer waiting at the downgrade gets in after
 * the downgraded reader (issue 20): rwlock_downgrade_genmc.c with
 * RWLOCK_DOWNGRADE_WRITER_ONLY (that file says what it checks): no reader; W2 starts at once
 * and may sleep on the high half before main downgrades (33 executions).
 * Planted mistake: plant_rwlock_downgrade_unlock_lock.patch (the downgrade a wrunlock and
 * then a rdlock: W2 takes the lock in between, and main's reads after its downgrade race
 * with W2's writes or find them). */
#define RWLOCK_DOWNGRADE_WRITER_ONLY 1
#include "rwlock_downgrade_genmc.c"
