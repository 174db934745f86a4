/* SPDX-License-Identifier: MIT */
/* futex_fallback_sys.c - part of the futex_fallback test: the syscall() that fastsync.h's
 * futex layer calls in that test. The test is linked with -Wl,--wrap=syscall, so its own
 * calls of syscall() come here and __real_syscall is the C library's (static links too).
 * It counts the futex calls made on one address range and, when told to, refuses them with
 * an error, as a seccomp filter would: the way to refuse them where no filter can be
 * installed (qemu-user refuses PR_SET_SECCOMP). Every other call goes to the C library. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

void fallback_refuse(long nr_a, long nr_b, int err, uintptr_t lo, uintptr_t hi);
unsigned long fallback_calls(long nr);
long __real_syscall(long nr, ...);
long __wrap_syscall(long nr, ...);

static struct {
    long nr_a, nr_b;     /* the calls refused (0: none) */
    int err;             /* with this error */
    uintptr_t lo, hi;    /* when their first argument lies in [lo, hi] */
    _Atomic(unsigned long) futex, futex_time64; /* calls seen on [lo, hi] */
} fb;

/* From now on, calls nr_a and nr_b on [lo, hi] fail with err (err 0: only count them).
 * Called before the threads that make them start (thread creation publishes it). */
void fallback_refuse(long nr_a, long nr_b, int err, uintptr_t lo, uintptr_t hi)
{
    fb.nr_a = nr_a;
    fb.nr_b = nr_b;
    fb.err = err;
    fb.lo = lo;
    fb.hi = hi;
}

/* How many calls of nr (SYS_futex or SYS_futex_time64) were made on [lo, hi]. */
unsigned long fallback_calls(long nr)
{
#if defined(SYS_futex)
    if (nr == SYS_futex) return atomic_load(&fb.futex);
#endif
#if defined(SYS_futex_time64)
    if (nr == SYS_futex_time64) return atomic_load(&fb.futex_time64);
#endif
    return 0;
}

long __wrap_syscall(long nr, ...)
{
    va_list ap;
    long a[6];
    va_start(ap, nr);
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    uintptr_t addr = (uintptr_t)a[0];
    if (addr >= fb.lo && addr <= fb.hi && fb.hi != 0) {
        /* relaxed: statistics, read after the threads are joined. */
#if defined(SYS_futex)
        if (nr == SYS_futex) atomic_fetch_add_explicit(&fb.futex, 1, memory_order_relaxed);
#endif
#if defined(SYS_futex_time64)
        if (nr == SYS_futex_time64) atomic_fetch_add_explicit(&fb.futex_time64, 1, memory_order_relaxed);
#endif
        if (fb.err != 0 && (nr == fb.nr_a || nr == fb.nr_b)) {
            errno = fb.err;
            return -1;
        }
    }
    return __real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
