/* SPDX-License-Identifier: MIT */
/* test/genmc/harness_genmc.h - what every GenMC harness of fastsync_os2.h includes first:
 * fastsync_os2.h (through fastsync.h, as a program on OS/2 includes it) over the OS/2 model
 * in os2_hev_genmc.h, with atomics, without spinning (GenMC must see the sleeping path),
 * with the timer clock (the model has DosTmrQueryTime; GenMC runs no clock_gettime), and
 * with every failed CAS made an effect (cas_progress.h). */
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

/* The end of a harness, after its joins. d: what its destroy said while the other threads
 * ran. If EBUSY, redo() destroys again, which must say 0, and the unrelated semaphore *u
 * (created posted or not) is made only now. Then *u must hold the closed HEV's slot, with
 * its post count as created: no late reset or post through the old handle reached it. */
static inline void genmc_check_unrelated(int d, int (*redo)(void), HEV *u, HEV hev, BOOL32 posted)
{
    if (d != 0) {
        assert(d == EBUSY);
        assert(redo() == 0 && "destroy once the other threads returned");
        DosCreateEventSem(NULL, u, 0, posted);
    }
    assert(*u == hev && "the unrelated semaphore reuses the closed HEV's slot");
    assert(os2g_count(*u) == (posted ? 1u : 0u) && "no late call on the closed HEV reached the unrelated semaphore");
}
#endif
