/* SPDX-License-Identifier: MIT */
/* wait_across_units_peer.c - the other translation unit of wait_across_units: it includes
 * fastsync.h as a user's file would (no test harness), and waits or wakes for the test. */
#include "fastsync.h"

#include "wait_across_units.h"

int peer_sem_wait(fastsync_sem_t *s) { return fastsync_sem_wait(s); }

int peer_sem_post(fastsync_sem_t *s) { return fastsync_sem_post(s); }

void peer_event_wait(fastsync_event_t *e) { fastsync_event_wait(e); }

void peer_event_set(fastsync_event_t *e) { fastsync_event_set(e); }

const void *peer_table(void)
{
#if defined(FASTSYNC_BACKEND_POSIX)
    return &fastsync__posix_table_v1;
#else
    return NULL;
#endif
}
