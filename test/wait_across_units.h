/* SPDX-License-Identifier: MIT */
/* wait_across_units.h - what wait_across_units_peer.c offers the test (built as C, and as
 * C++11 through wait_across_units_peer.cpp). */
#ifndef WAIT_ACROSS_UNITS_H
#define WAIT_ACROSS_UNITS_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
int peer_sem_wait(fastsync_sem_t *s);
int peer_sem_post(fastsync_sem_t *s);
void peer_event_wait(fastsync_event_t *e);
void peer_event_set(fastsync_event_t *e);
const char *peer_backend(void); /* FASTSYNC_BACKEND as the peer was built */
const void *peer_table(void); /* the POSIX backend's wait table as the peer sees it, else NULL */
/* the objects as the peer's language lays them out: sizeof and alignof of each */
void peer_layout(size_t out[4]);
/* objects the peer initialized statically: FASTSYNC_SEM_INIT(3), FASTSYNC_EVENT_INIT(true) */
fastsync_sem_t *peer_static_sem(void);
fastsync_event_t *peer_static_event(void);
#ifdef __cplusplus
}
#endif
#endif
