/* SPDX-License-Identifier: MIT */
/* posix_dlopen.h - what posix_dlopen's plugins give the host (each plugin's symbol
 * posix_dlopen_plugin). */
#ifndef POSIX_DLOPEN_H
#define POSIX_DLOPEN_H

struct plugin {
    const void *(*table)(void); /* the plugin's fastsync__posix_table_v2 */
    int (*sem_wait)(fastsync_sem_t *s);
    int (*sem_post)(fastsync_sem_t *s);
    int (*sem_wait_ms)(fastsync_sem_t *s, int ms); /* a clockwait of ms on CLOCK_MONOTONIC */
};

#endif
