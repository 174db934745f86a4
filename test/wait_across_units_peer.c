/* SPDX-License-Identifier: MIT */
/* wait_across_units_peer.c - the other translation unit of wait_across_units: it includes
 * fastsync.h as a user's file would (no test harness), and waits, wakes or reports for the
 * test. wait_across_units_peer.cpp compiles this same file as C++11. */
#include "fastsync.h"

#include <stdbool.h>

#include "wait_across_units.h"

int peer_sem_wait(fastsync_sem_t *s) { return fastsync_sem_wait(s); }

int peer_sem_post(fastsync_sem_t *s) { return fastsync_sem_post(s); }

void peer_event_wait(fastsync_event_t *e) { fastsync_event_wait(e); }

void peer_event_set(fastsync_event_t *e) { fastsync_event_set(e); }

const char *peer_backend(void) { return FASTSYNC_BACKEND; }

const void *peer_table(void)
{
#if defined(FASTSYNC_BACKEND_POSIX)
    return &fastsync__posix_table_v2;
#else
    return NULL;
#endif
}

#ifdef __cplusplus
#define PEER_ALIGNOF(t) alignof(t)
#else
#define PEER_ALIGNOF(t) _Alignof(t)
#endif

void peer_layout(size_t out[4])
{
    out[0] = sizeof(fastsync_sem_t);
    out[1] = PEER_ALIGNOF(fastsync_sem_t);
    out[2] = sizeof(fastsync_event_t);
    out[3] = PEER_ALIGNOF(fastsync_event_t);
}

static fastsync_sem_t static_sem = FASTSYNC_SEM_INIT(3);
static fastsync_event_t static_event = FASTSYNC_EVENT_INIT(true);

fastsync_sem_t *peer_static_sem(void) { return &static_sem; }

fastsync_event_t *peer_static_event(void) { return &static_event; }
