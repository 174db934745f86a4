/* SPDX-License-Identifier: MIT */
/* GenMC harness: barrier_destroy_genmc.c with the first thread back from its wait, serial or
 * not, destroying and freeing the barrier (BARRIER_DESTROY_FIRST; that file says what it
 * checks). */
#define BARRIER_DESTROY_FIRST
#include "barrier_destroy_genmc.c"
