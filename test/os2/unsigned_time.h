/* SPDX-License-Identifier: MIT */
/* unsigned_time.h - forced first into a build over the double (-include): time_t unsigned,
 * as OpenWatcom's (typedef unsigned long time_t), so that the OS/2 backend's every use of
 * time_t runs unsigned (issue 17, item 6). It replaces the C library's time_t and struct
 * timespec with types of the same size and layout (glibc on a 64-bit CPU: 8-byte seconds),
 * so the C library's clock_gettime and pthread_cond_timedwait still read and write them;
 * only the signedness differs, which is the point: a past deadline's second difference
 * wraps. On a 64-bit CPU it is 8 bytes wide; on i386 with glibc's 32-bit time_t it is
 * OpenWatcom's exactly, an unsigned 32-bit long. */
#ifndef OS2DBL_UNSIGNED_TIME_H
#define OS2DBL_UNSIGNED_TIME_H
#if defined(__LP64__) || (defined(__i386__) && !(defined(_TIME_BITS) && _TIME_BITS == 64))
#define __time_t_defined 1
typedef unsigned long time_t;
#define _STRUCT_TIMESPEC 1
struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
#define OS2DBL_UNSIGNED_TIME 1
#endif
#endif
