/* SPDX-License-Identifier: MIT */
/* GenMC harness: latch_genmc.c with an add while counting (its comment says what is checked). */
#define LATCH_ADD
#include "latch_genmc.c"
