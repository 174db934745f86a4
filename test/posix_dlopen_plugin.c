/* SPDX-License-Identifier: MIT */
/* posix_dlopen_plugin.c - a plugin of posix_dlopen, built twice (posix_dlopen_a.so and
 * posix_dlopen_b.so, B with -fvisibility=hidden) and loaded with dlopen(RTLD_LOCAL): it
 * includes fastsync.h as a user's plugin would, with the POSIX backend (the wait table),
 * and waits or posts for the host. */
#define FASTSYNC_BACKEND_POSIX 1
#include "fastsync.h"

#include "posix_dlopen.h"

static const void *table(void) { return &fastsync__posix_table_v2; }

static int sem_wait(fastsync_sem_t *s) { return fastsync_sem_wait(s); }

static int sem_post(fastsync_sem_t *s) { return fastsync_sem_post(s); }

static int sem_wait_ms(fastsync_sem_t *s, int ms)
{
    struct timespec t = fastsync_deadline_in((uint64_t)ms * 1000000u);
    return fastsync_sem_clockwait(s, CLOCK_MONOTONIC, &t);
}

/* the one symbol the host looks up: exported even with -fvisibility=hidden (plugin B) */
__attribute__((visibility("default"))) const struct plugin posix_dlopen_plugin = {
    table, sem_wait, sem_post, sem_wait_ms
};
