/* SPDX-License-Identifier: MIT */
/* test/genmc/harness_genmc.h - what every GenMC harness of the OS/2 backend includes first:
 * fastsync.h with fastsync_os2.h (as a program on OS/2 includes them) over the OS/2 model in
 * os2_hev_genmc.h, with atomics, without spinning (GenMC must see the sleeping path), with
 * the timer clock (the model has DosTmrQueryTime; GenMC runs no clock_gettime), and with
 * every failed CAS made an effect (cas_progress.h). */
#ifndef FASTSYNC_HARNESS_GENMC_H
#define FASTSYNC_HARNESS_GENMC_H
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include "cas_progress.h"

#define __builtin_ia32_pause() ((void)0)
#define FASTSYNC_SPIN 0
#define FASTSYNC_OS2_TIMER_CLOCK 1
#ifndef __OS2__
#define __OS2__ 1
#endif
#include "fastsync.h"

#endif
