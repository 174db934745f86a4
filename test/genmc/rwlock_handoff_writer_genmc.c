/* SPDX-License-Identifier: MIT */
/* GenMC harness: the reader-writer lock's hand-off to a writer that claimed the next turn:
 * rwlock_handoff_genmc.c with a writer in place of the reader (see there). */
#define RWLOCK_HANDOFF_WRITER
#include "rwlock_handoff_genmc.c"
