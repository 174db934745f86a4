/* SPDX-License-Identifier: MIT */
/* GenMC harness: barrier_arrive_genmc.c with thread A dropping out (BARRIER_DROP; that file
 * says what it checks). */
#define BARRIER_DROP
#include "barrier_arrive_genmc.c"
