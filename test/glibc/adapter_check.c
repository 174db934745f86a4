/* SPDX-License-Identifier: MIT */
/* test/glibc/adapter_check.c: adapter.h built with the project's warnings, and what it maps
 * that glibc's tests do not pin down: the attributes it honours, the ones it refuses, and
 * the sem_* error convention (-1 and errno). */
#include "adapter.h"

#include <string.h>

#include "tap.h"

static struct timespec past(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_sec -= 1;
    return t;
}

int main(void)
{
    sem_t s;
    int v = -1;
    is_int(sem_init(&s, 0, 1), 0, "sem_init");
    is_int(sem_getvalue(&s, &v), 0, "sem_getvalue");
    is_int(v, 1, "value 1");
    is_int(sem_trywait(&s), 0, "sem_trywait takes the token");
    errno = 0;
    is_int(sem_trywait(&s), -1, "sem_trywait at 0: -1");
    is_int(errno, EAGAIN, "... errno EAGAIN");
    struct timespec t = past(CLOCK_REALTIME);
    errno = 0;
    is_int(sem_timedwait(&s, &t), -1, "sem_timedwait, a REALTIME deadline past: -1");
    is_int(errno, ETIMEDOUT, "... errno ETIMEDOUT");
    errno = 0;
    is_int(sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &t), -1, "sem_clockwait, another clock: -1");
    is_int(errno, EINVAL, "... errno EINVAL");
    errno = 0;
    is_int(sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1), -1, "sem_init above SEM_VALUE_MAX: -1");
    is_int(errno, EINVAL, "... errno EINVAL");
    is_int(sem_init(&s, 1, 0), 0, "sem_init, pshared");
    ok(fastsync__sem_shared(atomic_load(&s.s.state)), "... is a FASTSYNC_SHARED semaphore");
    is_int(sem_destroy(&s), 0, "sem_destroy");

    pthread_mutexattr_t ma;
    pthread_mutex_t m;
    pthread_mutexattr_init(&ma);
    is_int(pthread_mutex_init(&m, &ma), 0, "mutex with default attributes");
    is_int(pthread_mutex_destroy(&m), 0, "... destroyed");
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    is_int(pthread_mutex_init(&m, &ma), 0, "an adaptive mutex is a normal one");
    static const int refused[] = { PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK };
    for (unsigned i = 0; i < 2; i++) {
        pthread_mutexattr_settype(&ma, refused[i]);
        is_int(pthread_mutex_init(&m, &ma), ENOTSUP, "mutex type %d: ENOTSUP", refused[i]);
    }
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_NORMAL);
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    is_int(pthread_mutex_init(&m, &ma), ENOTSUP, "a robust mutex: ENOTSUP");
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_STALLED);
    pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
    is_int(pthread_mutex_init(&m, &ma), ENOTSUP, "a priority-inheritance mutex: ENOTSUP");
    pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_NONE);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    is_int(pthread_mutex_init(&m, &ma), 0, "a pshared mutex");
    is_int(pthread_mutex_lock(&m), 0, "... locks");
    t = past(CLOCK_REALTIME);
    is_int(pthread_mutex_timedlock(&m, &t), ETIMEDOUT, "... timedlock (REALTIME) while held: ETIMEDOUT");
    is_int(pthread_mutex_unlock(&m), 0, "... unlocks");
    pthread_mutexattr_destroy(&ma);

    pthread_mutex_t am = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
    is_int(pthread_mutex_trylock(&am), 0, "PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP: a normal mutex, unlocked");
    is_int(pthread_mutex_trylock(&am), EBUSY, "... then locked");
    is_int(pthread_mutex_unlock(&am), 0, "... unlocks");

    pthread_mutex_t sm = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t sc = PTHREAD_COND_INITIALIZER;
    is_int(sc.clock, CLOCK_REALTIME, "PTHREAD_COND_INITIALIZER: CLOCK_REALTIME");
    pthread_mutex_lock(&sm);
    t = past(CLOCK_REALTIME);
    is_int(pthread_cond_timedwait(&sc, &sm, &t), ETIMEDOUT, "... timedwait, REALTIME past: ETIMEDOUT");
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_cond_t c;
    is_int(pthread_cond_init(&c, &ca), 0, "condvar on CLOCK_MONOTONIC, pshared");
    is_int(c.clock, CLOCK_MONOTONIC, "... its clock");
    ok(fastsync__cv_shared(&c.c), "... is a FASTSYNC_SHARED condvar");
    t = fastsync_deadline_in(20 * 1000 * 1000);
    is_int(pthread_cond_timedwait(&c, &sm, &t), ETIMEDOUT, "... timedwait measures on MONOTONIC");
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    ok(now.tv_sec > t.tv_sec || (now.tv_sec == t.tv_sec && now.tv_nsec >= t.tv_nsec), "... not early");
    t = past(CLOCK_REALTIME);
    is_int(pthread_cond_clockwait(&c, &sm, CLOCK_REALTIME, &t), ETIMEDOUT, "clockwait on the clock given");
    pthread_mutex_unlock(&sm);
    is_int(pthread_cond_wait(&c, &sm), EPERM, "a wait with the mutex unlocked: fastsync's EPERM passes through");
    is_int(pthread_cond_destroy(&c), 0, "destroy");
    pthread_condattr_destroy(&ca);
    return done_testing();
}
