/* SPDX-License-Identifier: MIT */
/* GenMC harness: latch_destroy_wait_genmc.c with arrive_and_wait on both sides (LATCH_ARRIVE;
 * that file says what it checks). */
#define LATCH_ARRIVE
#include "latch_destroy_wait_genmc.c"
