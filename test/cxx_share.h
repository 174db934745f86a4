/* SPDX-License-Identifier: MIT */
/* test/cxx_share.h - the C side of cxx_api.cpp (cxx_share.c, compiled as C): it works on
 * C objects that a C++ file's fastsync.hpp objects hand it through native_handle(). */
#ifndef FASTSYNC_TEST_CXX_SHARE_H
#define FASTSYNC_TEST_CXX_SHARE_H
#include "fastsync.h"
#ifdef __cplusplus
extern "C" {
#endif
/* n times: lock m, ++*counter (a plain int), unlock m. */
void cxx_share_count(fastsync_mutex_t *m, long *counter, long n);
/* n posts of s, one at a time. */
void cxx_share_post(fastsync_sem_t *s, long n);
/* Lock m, set *flag, signal c, unlock (the C++ side waits with condition_variable). */
void cxx_share_notify(fastsync_cond_t *c, fastsync_mutex_t *m, int *flag);
#ifdef __cplusplus
}
#endif
#endif
