/* SPDX-License-Identifier: MIT */
/* test/genmc/os2.h - <os2.h> for fastsync_os2.h under GenMC: the model in os2_hev_genmc.h. */
#include "os2_hev_genmc.h"
