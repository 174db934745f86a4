/* SPDX-License-Identifier: MIT */
/* GenMC harness: latch_destroy_wait_genmc.c with W in wait_any (LATCH_WAIT_ANY; that file says
 * what it checks). Without instruction caching, as wait_any_genmc.c (which says why), but at
 * -O1: at -O0 destroy's wait for the waiters (fastsync__drain, its calls through function
 * pointers) is no loop GenMC can close, and the exploration does not end.
 * genmc-options: --disable-instruction-caching */
#define LATCH_WAIT_ANY
#include "latch_destroy_wait_genmc.c"
