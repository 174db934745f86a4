/* SPDX-License-Identifier: MIT */
/* GenMC harness: latch_wait_any_genmc.c with a poster (LATCH_WAIT_ANY_POST; that file says
 * what it checks, and why these options).
 * genmc-options: --disable-instruction-caching
 * genmc-cflags: -O0 */
#define LATCH_WAIT_ANY_POST
#include "latch_wait_any_genmc.c"
