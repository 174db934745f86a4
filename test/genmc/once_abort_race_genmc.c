/* SPDX-License-Identifier: MIT */
/* GenMC harness: once_abort_genmc.c with both callers free to come first
 * (ONCE_ABORT_RACE; that file says what it checks): the second initialiser may have read
 * the initial NEW before the first began, and take the abort's NEW with its CAS, whose
 * acquire alone then orders the aborted initialiser's writes before it. (32 executions.)
 * Planted mistake: plant_once_begin_relaxed.patch (that CAS relaxed: a race on the
 * aborted initialiser's writes). */
#define ONCE_ABORT_RACE 1
#include "once_abort_genmc.c"
