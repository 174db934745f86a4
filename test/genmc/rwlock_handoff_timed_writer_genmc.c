/* SPDX-License-Identifier: MIT */
/* GenMC harness: a timed writer that claimed the reader-writer lock's next turn:
 * rwlock_handoff_timed_genmc.c with a writer as T (see there). */
#define RWLOCK_HANDOFF_TIMED_WRITER
#include "rwlock_handoff_timed_genmc.c"
