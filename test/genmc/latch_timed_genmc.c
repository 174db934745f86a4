/* SPDX-License-Identifier: MIT */
/* GenMC harness: latch_genmc.c with a timed waiter (its comment says what is checked). */
#define LATCH_TIMED
#include "latch_genmc.c"
