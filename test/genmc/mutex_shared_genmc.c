/* SPDX-License-Identifier: MIT */
/* GenMC harness: mutex_genmc.c over a FASTSYNC_SHARED mutex. Its word always holds the shared
 * bit, so an uncontended lock's CAS from 0 fails and a second CAS, from "shared, unlocked",
 * takes it (issue 16 item 4); every interleaving of that second CAS with barging newcomers,
 * sleepers and unlocks is explored: no race on the int, nobody left asleep, the count exact
 * and the word shared and unlocked at the end.
 * Without cas_progress.h (its include guard defined here, so futex_model.h's #include of it
 * is empty): its counter, one relaxed RMW on one global for every failed CAS, is there for
 * loops that only retry a failed CAS, and the mutex with FASTSYNC_SPIN 0 has none (the slow
 * path's poll loop ends after its first round; trylock is not called). Every lock of a shared
 * mutex fails one CAS, and the orders of the three lockers' increments of that counter took
 * this harness past 10 minutes without an end.
 * Planted mistakes: plant_mutex_shared_cas_relaxed.patch (that second CAS relaxed instead of
 * acquire: a race on the int); plant_mutex_shared_cas_drops_bit.patch (it writes LOCKED
 * without the shared bit, which the unlock then clears for good: the final assert). */
#define FASTSYNC_GENMC_CAS_PROGRESS_H
#define MUTEX_GENMC_FLAGS FASTSYNC_SHARED
#include "mutex_genmc.c"
