/* SPDX-License-Identifier: MIT */
/* test/cxx_wait32_peer.h - the C side of cxx_wait32.cpp (cxx_wait32_peer.c, compiled as C). */
#ifndef FASTSYNC_TEST_CXX_WAIT32_PEER_H
#define FASTSYNC_TEST_CXX_WAIT32_PEER_H
#include "fastsync.h"
#ifdef __cplusplus
extern "C" {
#endif
/* rounds rounds of a ping-pong on *w, from 0: waits (fastsync_wait32) while *w is 2k,
 * expects 2k+1, stores 2k+2 and wakes one (fastsync_wake32). Returns the wrong values and
 * calls that did not return 0. */
unsigned long cxx_wait32_peer(fastsync_word32_t *w, unsigned long rounds);
#ifdef __cplusplus
}
#endif
#endif
