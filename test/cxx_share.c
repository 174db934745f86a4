/* SPDX-License-Identifier: MIT */
/* test/cxx_share.c - C code on the C objects inside fastsync.hpp's (cxx_api.cpp). */
#include "cxx_share.h"

void cxx_share_count(fastsync_mutex_t *m, long *counter, long n)
{
    for (long i = 0; i < n; i++) {
        fastsync_mutex_lock(m);
        ++*counter;
        fastsync_mutex_unlock(m);
    }
}

void cxx_share_post(fastsync_sem_t *s, long n)
{
    for (long i = 0; i < n; i++) fastsync_sem_post(s);
}

void cxx_share_notify(fastsync_cond_t *c, fastsync_mutex_t *m, int *flag)
{
    fastsync_mutex_lock(m);
    *flag = 1;
    fastsync_cond_signal(c);
    fastsync_mutex_unlock(m);
}
