/* SPDX-License-Identifier: MIT */
/* GenMC harness: a writer's give-up touches the reader-writer lock only up to its RMW, and
 * everything it did to the lock happens before that RMW is read: the reader it lets in may
 * destroy and free the lock at once (issue 20). rwlock_destroy_genmc.c with
 * RWLOCK_DESTROY_GIVEUP (that file says what it checks).
 * Planted mistake: plant_rwlock_giveup_relaxed.patch (the give-up's CAS relaxed: nothing
 * orders T's registration and futex compare before R's free, an access to freed memory for
 * GenMC). */
#define RWLOCK_DESTROY_GIVEUP 1
#include "rwlock_destroy_genmc.c"
