/* SPDX-License-Identifier: MIT */
/* GenMC harness: the OS/2 backend's wait table (fastsync_os2.h) never loses a wake. Two
 * events share the table's one bucket (FASTSYNC__OS2_BUCKETS 1); a waiter sleeps on each,
 * and a third thread sets one event and then the other. Each waiter must return (a waiter
 * left asleep is a liveness violation), in every interleaving and every weak-memory
 * outcome: the compare under the bucket's mutex semaphore, the queued slot, the post of the
 * slot's own HEV, the woken flag, and a wake for one address that must not be taken by the
 * other's waiter. The OS/2 calls are os2_hev_genmc.h's model; the table is attached in main;
 * sleeps have no one-second slice, so a wake that the table did not deliver would show.
 * Planted mistake (plant_os2_table_compare_unlocked.patch): the word compared before the
 * bucket is locked.
 * genmc-cflags: -O0
 * (At -O1, run.sh's default, the code has memory intrinsics that GenMC v0.11 tries to
 * promote, and it stops there on an LLVM assertion, exploring nothing.) */
#define FASTSYNC__OS2_BUCKETS 1u
#define FASTSYNC__OS2_SLICE_MS SEM_INDEFINITE_WAIT /* every wake delivered, not found later */
#define FASTSYNC__OS2_SLOTS 2u
#define OS2G_SLOTS 2
#include "harness_genmc.h"

#include "table_harness.h"

int main(void)
{
    assert(fastsync__os2_table() != NULL); /* attached before the threads */
    return table_harness_run();
}
