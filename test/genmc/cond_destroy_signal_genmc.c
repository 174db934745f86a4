/* SPDX-License-Identifier: MIT */
/* GenMC harness: destroy right after the last ticket was called or left returns 0 and is
 * safe, when a waiter's last access is its claim (issue 16, item 5): cond_destroy_genmc.c
 * with COND_DESTROY_SIGNAL (that file says what it checks): one waiter; X registers a
 * ticket of its own, signals once and cancels its own ticket, then destroys and frees. The
 * claim's release half (an acq_rel CAS of `state`, read by destroy's acquire load through
 * its release sequence) orders it before the free.
 * Planted mistake: plant_cond_claim_acquire_only.patch (the claim an acquire CAS, not
 * acq_rel: nothing orders it before X's free, an access to freed memory for GenMC;
 * ThreadSanitizer reported the same in cond_destroy_after_broadcast on the first header of
 * the groups). */
#define COND_DESTROY_SIGNAL 1
#include "cond_destroy_genmc.c"
