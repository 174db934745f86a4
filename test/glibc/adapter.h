/* SPDX-License-Identifier: MIT */
/* test/glibc/adapter.h: runs glibc's own nptl tests over fastsync. Force-included (-include)
 * into each glibc test and into glibc's test driver (support/), built by test/glibc/meson.build.
 * Test-only: no program should use it.
 *
 * What it maps, and how. After <pthread.h> and <semaphore.h> (so that their own declarations
 * keep glibc's types), the names below are macros onto wrappers over fastsync; everything
 * else of pthreads (threads, attributes, barriers, rwlocks, cancellation) stays glibc's.
 *   sem_t             { fastsync_sem_t }. sem_init: pshared -> FASTSYNC_SHARED. sem_wait,
 *                     sem_trywait, sem_post, sem_destroy, sem_getvalue; sem_timedwait ->
 *                     fastsync_sem_clockwait(CLOCK_REALTIME); sem_clockwait -> the same on
 *                     the clock given. -1 and errno from fastsync's return value. Named
 *                     semaphores (sem_open) are not mapped: such a test is not run.
 *   pthread_mutex_t   { fastsync_mutex_t }, PTHREAD_MUTEX_INITIALIZER = FASTSYNC_MUTEX_INIT.
 *                     pthread_mutex_init honours the attribute's pshared; a type other than
 *                     normal (default, adaptive: the same semantics), a protocol other than
 *                     PTHREAD_PRIO_NONE or a robust attribute is ENOTSUP: fastsync records
 *                     no owner, so it has no recursive, error-checking, robust or priority
 *                     mutex, and the adapter adds none. lock, trylock, unlock, destroy;
 *                     timedlock -> fastsync_mutex_clocklock(CLOCK_REALTIME); clocklock.
 *   pthread_cond_t    { fastsync_cond_t, the clock of its condattr }, PTHREAD_COND_INITIALIZER
 *                     = FASTSYNC_COND_INIT on CLOCK_REALTIME (POSIX's default).
 *                     pthread_cond_init honours the attribute's clock and pshared. wait;
 *                     timedwait -> fastsync_cond_clockwait on the condvar's clock;
 *                     clockwait on the clock given; signal, broadcast, destroy.
 * Nothing is added: fastsync's own return values pass through (EPERM from an unlock of an
 * unlocked mutex or a wait with it unlocked, EBUSY from a destroy in use), and fastsync's
 * documented differences stay (waits never return EINTR). test/glibc/run.sh checks
 * that an adapted program imports no C-library sem_*, pthread_mutex_* or pthread_cond_*
 * function but the attribute ones, so that no test passes by falling through to glibc. */
#ifndef FASTSYNC_GLIBC_ADAPTER_H
#define FASTSYNC_GLIBC_ADAPTER_H

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "fastsync.h"

typedef struct { fastsync_sem_t s; } fsg_sem_t;
typedef struct { fastsync_mutex_t m; } fsg_mutex_t;
typedef struct { fastsync_cond_t c; clockid_t clock; } fsg_cond_t;

/* sem_*: 0, or -1 with errno */
static inline int fsg_sem_result(int r) { if (r == 0) return 0; errno = r; return -1; }

static inline int fsg_sem_init(fsg_sem_t *s, int pshared, unsigned value)
{
    return fsg_sem_result(fastsync_sem_init(&s->s, value, pshared ? FASTSYNC_SHARED : 0));
}
static inline int fsg_sem_destroy(fsg_sem_t *s) { return fsg_sem_result(fastsync_sem_destroy(&s->s)); }
static inline int fsg_sem_post(fsg_sem_t *s) { return fsg_sem_result(fastsync_sem_post(&s->s)); }
static inline int fsg_sem_wait(fsg_sem_t *s) { return fsg_sem_result(fastsync_sem_wait(&s->s)); }
static inline int fsg_sem_trywait(fsg_sem_t *s) { return fsg_sem_result(fastsync_sem_trywait(&s->s)); }
static inline int fsg_sem_timedwait(fsg_sem_t *s, const struct timespec *abs)
{
    return fsg_sem_result(fastsync_sem_clockwait(&s->s, CLOCK_REALTIME, abs));
}
static inline int fsg_sem_clockwait(fsg_sem_t *s, clockid_t clock, const struct timespec *abs)
{
    return fsg_sem_result(fastsync_sem_clockwait(&s->s, clock, abs));
}
static inline int fsg_sem_getvalue(fsg_sem_t *s, int *value)
{
    *value = (int)fastsync_sem_getvalue(&s->s);
    return 0;
}

static inline int fsg_mutex_init(fsg_mutex_t *m, const pthread_mutexattr_t *attr)
{
    int type = PTHREAD_MUTEX_DEFAULT, pshared = PTHREAD_PROCESS_PRIVATE;
    int protocol = PTHREAD_PRIO_NONE, robust = PTHREAD_MUTEX_STALLED;
    if (attr != NULL) {
        pthread_mutexattr_gettype(attr, &type);
        pthread_mutexattr_getpshared(attr, &pshared);
        pthread_mutexattr_getprotocol(attr, &protocol);
        pthread_mutexattr_getrobust(attr, &robust);
    }
    if ((type != PTHREAD_MUTEX_NORMAL && type != PTHREAD_MUTEX_DEFAULT
#ifdef __USE_GNU
         && type != PTHREAD_MUTEX_ADAPTIVE_NP
#endif
         ) || protocol != PTHREAD_PRIO_NONE || robust != PTHREAD_MUTEX_STALLED)
        return ENOTSUP;
    return fastsync_mutex_init(&m->m, pshared == PTHREAD_PROCESS_SHARED ? FASTSYNC_SHARED : 0);
}
static inline int fsg_mutex_destroy(fsg_mutex_t *m) { return fastsync_mutex_destroy(&m->m); }
static inline int fsg_mutex_lock(fsg_mutex_t *m) { return fastsync_mutex_lock(&m->m); }
static inline int fsg_mutex_trylock(fsg_mutex_t *m) { return fastsync_mutex_trylock(&m->m); }
static inline int fsg_mutex_unlock(fsg_mutex_t *m) { return fastsync_mutex_unlock(&m->m); }
static inline int fsg_mutex_timedlock(fsg_mutex_t *m, const struct timespec *abs)
{
    return fastsync_mutex_clocklock(&m->m, CLOCK_REALTIME, abs);
}
static inline int fsg_mutex_clocklock(fsg_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
    return fastsync_mutex_clocklock(&m->m, clock, abs);
}

static inline int fsg_cond_init(fsg_cond_t *c, const pthread_condattr_t *attr)
{
    clockid_t clock = CLOCK_REALTIME;
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (attr != NULL) {
        pthread_condattr_getclock(attr, &clock);
        pthread_condattr_getpshared(attr, &pshared);
    }
    c->clock = clock;
    return fastsync_cond_init(&c->c, pshared == PTHREAD_PROCESS_SHARED ? FASTSYNC_SHARED : 0);
}
static inline int fsg_cond_destroy(fsg_cond_t *c) { return fastsync_cond_destroy(&c->c); }
static inline int fsg_cond_signal(fsg_cond_t *c) { return fastsync_cond_signal(&c->c); }
static inline int fsg_cond_broadcast(fsg_cond_t *c) { return fastsync_cond_broadcast(&c->c); }
static inline int fsg_cond_wait(fsg_cond_t *c, fsg_mutex_t *m) { return fastsync_cond_wait(&c->c, &m->m); }
static inline int fsg_cond_timedwait(fsg_cond_t *c, fsg_mutex_t *m, const struct timespec *abs)
{
    return fastsync_cond_clockwait(&c->c, &m->m, c->clock, abs);
}
static inline int fsg_cond_clockwait(fsg_cond_t *c, fsg_mutex_t *m, clockid_t clock,
                                     const struct timespec *abs)
{
    return fastsync_cond_clockwait(&c->c, &m->m, clock, abs);
}

#undef PTHREAD_MUTEX_INITIALIZER
#undef PTHREAD_COND_INITIALIZER
#define PTHREAD_MUTEX_INITIALIZER { FASTSYNC_MUTEX_INIT }
#define PTHREAD_COND_INITIALIZER { FASTSYNC_COND_INIT, CLOCK_REALTIME }
/* glibc's initializers of other kinds: an adaptive mutex is a normal one; a recursive or
 * error-checking one does not compile (as glibc's would, with -w, into a normal one) */
#undef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
#undef PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP
#undef PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP
#define PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP { FASTSYNC_MUTEX_INIT }
#define PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP fsg_recursive_mutexes_are_not_mapped
#define PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP fsg_errorcheck_mutexes_are_not_mapped

#define sem_t fsg_sem_t
#define sem_init fsg_sem_init
#define sem_destroy fsg_sem_destroy
#define sem_post fsg_sem_post
#define sem_wait fsg_sem_wait
#define sem_trywait fsg_sem_trywait
#define sem_timedwait fsg_sem_timedwait
#define sem_clockwait fsg_sem_clockwait
#define sem_getvalue fsg_sem_getvalue
/* not mapped: a test that uses them does not compile */
#define sem_open(...) fsg_named_semaphores_are_not_mapped
#define sem_close(...) fsg_named_semaphores_are_not_mapped
#define sem_unlink(...) fsg_named_semaphores_are_not_mapped

#define pthread_mutex_t fsg_mutex_t
#define pthread_mutex_init fsg_mutex_init
#define pthread_mutex_destroy fsg_mutex_destroy
#define pthread_mutex_lock fsg_mutex_lock
#define pthread_mutex_trylock fsg_mutex_trylock
#define pthread_mutex_unlock fsg_mutex_unlock
#define pthread_mutex_timedlock fsg_mutex_timedlock
#define pthread_mutex_clocklock fsg_mutex_clocklock
/* not mapped (robust and priority mutexes): a test that uses them does not compile */
#define pthread_mutex_consistent(...) fsg_robust_mutexes_are_not_mapped
#define pthread_mutex_consistent_np(...) fsg_robust_mutexes_are_not_mapped
#define pthread_mutex_getprioceiling(...) fsg_priority_mutexes_are_not_mapped
#define pthread_mutex_setprioceiling(...) fsg_priority_mutexes_are_not_mapped

#define pthread_cond_t fsg_cond_t
#define pthread_cond_init fsg_cond_init
#define pthread_cond_destroy fsg_cond_destroy
#define pthread_cond_signal fsg_cond_signal
#define pthread_cond_broadcast fsg_cond_broadcast
#define pthread_cond_wait fsg_cond_wait
#define pthread_cond_timedwait fsg_cond_timedwait
#define pthread_cond_clockwait fsg_cond_clockwait

#endif
