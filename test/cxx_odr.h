/* SPDX-License-Identifier: MIT */
/* test/cxx_odr.h - between cxx_odr.c (the C main: TAP, watchdog) and its sides,
 * cxx_odr_side.cpp compiled once per configuration (test/meson.build). */
#ifndef FASTSYNC_TEST_CXX_ODR_H
#define FASTSYNC_TEST_CXX_ODR_H
#ifdef __cplusplus
extern "C" {
#endif

/* The scenes, each a thread put to sleep in one object of a side's own file and woken there:
 * the sleeper and the waker both call fastsync.hpp's members (and, in the last, C). */
enum {
    ODR_MUTEX,          /* lock() behind the holder's lock(), then its unlock() */
    ODR_TIMED_MUTEX,    /* try_lock_for(1 h) behind lock(), then unlock() */
    ODR_SHARED_READER,  /* shared_mutex: lock_shared() behind lock(), then unlock() */
    ODR_SHARED_WRITER,  /* shared_mutex: lock() behind lock_shared(), then unlock_shared() */
    ODR_SEMAPHORE,      /* counting_semaphore<>: acquire() at 0, then release() */
    ODR_CONDVAR,        /* condition_variable: wait(lock, pred), then notify_one() */
    ODR_CONDVAR_ANY,    /* condition_variable_any over unique_lock<mutex>: the same */
    ODR_EVENT,          /* event: wait(), then set() */
    ODR_LATCH,          /* latch(1): wait(), then count_down() */
    ODR_BARRIER,        /* barrier<>(2): arrive_and_wait() twice */
    ODR_CALL_ONCE,      /* call_once: a caller asleep while another's f runs, then f returns */
    ODR_WAIT_ANY,       /* wait_any(semaphore, event), then release() */
    ODR_WAIT32,         /* fastsync::wait on a std::atomic<std::uint32_t>, then wake_one() */
    ODR_C_WAKE,         /* shared_mutex: lock_shared() behind the C fastsync_rwlock_wrlock of
                           its native_handle(), then the C fastsync_rwlock_wrunlock */
    ODR_SCENES
};

/* One file's seam: the waits (multi-waits too) and wakes its replacements made. */
struct odr_seam {
    unsigned long waits, wakes;
};

/* A side: cxx_odr_side.cpp built as odr_side_<name> (-DODR_SIDE=<name>). */
struct odr_side {
    const char *name;
    const char *config;              /* the backend and the replaced seam, for a diag */
    int (*play)(int scene);          /* 1: the sleeper got what it slept for */
    struct odr_seam (*seam)(void);   /* its seam's counts so far */
    const char *(*mutex_type)(void); /* typeid(fastsync::mutex).name() */
};
extern const struct odr_side odr_side_here, odr_side_wait2, odr_side_wake2, odr_side_waitv,
    odr_side_nocancel, odr_side_posix;

/* The main's, for every side: */
/* called by a side's seam as a wait enters it (before it sleeps) */
void odr_seam_entered(void);
/* how many waits have entered a seam so far */
unsigned long odr_entered(void);
/* waits until more than `before` waits have entered a seam; 0 when none did within a limit
 * that a sound run never reaches (test_limit_end) */
int odr_until_entered(unsigned long before);

#ifdef __cplusplus
}
#endif
#endif
