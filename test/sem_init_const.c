/* SPDX-License-Identifier: MIT */
/* sem_init_const: FASTSYNC_SEM_INIT(n) compiles for a constant n in 0..FASTSYNC_SEM_VALUE_MAX
 * and refuses anything else at compile time. Compile-only: test/meson.build builds it as C
 * and as C++, and test/os2/meson.build over fastsync_os2.h with atomics and without, each
 * with -DINIT_VALUE=...; the out-of-range values must fail to compile. */
#include "fastsync.h"

static fastsync_sem_t at_file_scope = FASTSYNC_SEM_INIT(INIT_VALUE);

unsigned sem_init_const_use(void);
unsigned sem_init_const_use(void)
{
    fastsync_sem_t in_block = FASTSYNC_SEM_INIT(INIT_VALUE);
    return fastsync_sem_getvalue(&at_file_scope) + fastsync_sem_getvalue(&in_block);
}
