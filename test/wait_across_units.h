/* SPDX-License-Identifier: MIT */
/* wait_across_units.h - what wait_across_units_peer.c offers the test. */
#ifndef WAIT_ACROSS_UNITS_H
#define WAIT_ACROSS_UNITS_H
int peer_sem_wait(fastsync_sem_t *s);
int peer_sem_post(fastsync_sem_t *s);
void peer_event_wait(fastsync_event_t *e);
void peer_event_set(fastsync_event_t *e);
const void *peer_table(void); /* the POSIX backend's wait table as the peer sees it, else NULL */
#endif
