/* SPDX-License-Identifier: MIT */
/* os2_sem_init_const: over fastsync_os2.h, FASTSYNC_SEM_INIT(n) compiles for a constant n in
 * 0..FASTSYNC_SEM_VALUE_MAX and refuses anything else at compile time. Compile-only:
 * test/os2/meson.build compiles it with -DINIT_VALUE=..., with atomics and without; the
 * out-of-range values must fail to compile. */
#include "fastsync.h"

static fastsync_sem_t at_file_scope = FASTSYNC_SEM_INIT(INIT_VALUE);

unsigned os2_sem_init_const_use(void);
unsigned os2_sem_init_const_use(void)
{
    fastsync_sem_t in_block = FASTSYNC_SEM_INIT(INIT_VALUE);
    return fastsync_sem_getvalue(&at_file_scope) + fastsync_sem_getvalue(&in_block);
}
