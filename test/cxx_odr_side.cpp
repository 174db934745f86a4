// SPDX-License-Identifier: MIT
// test/cxx_odr_side.cpp - one side of cxx_odr (the C main, cxx_odr.c, says what it checks),
// built once per side with its configuration on the command line (test/meson.build):
//   here      the build's backend; FASTSYNC_FUTEX_WAIT odr_wait, _WAKE odr_wake
//   wait2     the same but FASTSYNC_FUTEX_WAIT odr_wait2
//   wake2     the same but FASTSYNC_FUTEX_WAKE odr_wake2
//   waitv     the same plus FASTSYNC_FUTEX_WAITV odr_waitv
//   nocancel  the same plus FASTSYNC_NO_CANCEL (not on Windows: no cancellation there)
//   posix     the same on the POSIX backend (Linux, where the build's backend is not it)
// so that each side differs from `here` in one thing that changes what a member of
// fastsync.hpp runs. The seams are this file's own static functions (every side's have the
// same names but wait2's wait and wake2's wake): they count the waits and wakes made through
// them and call the backend's own (fastsync__wait_sys, _wake_sys, _waitv_sys). Each scene
// makes objects of this file, puts a thread to sleep in one through a member of
// fastsync.hpp, and wakes it through another once the sleeper has entered a seam
// (odr_until_entered): a forced order, no sleep of the test's own.
#include <stdint.h>
#include <time.h>

#ifndef FASTSYNC_FUTEX_WAIT
#define FASTSYNC_FUTEX_WAIT odr_wait
#endif
#ifndef FASTSYNC_FUTEX_WAKE
#define FASTSYNC_FUTEX_WAKE odr_wake
#endif
static int FASTSYNC_FUTEX_WAIT(void *word, uint32_t expected, int shared, clockid_t clock,
                               const struct timespec *abstime);
static void FASTSYNC_FUTEX_WAKE(void *word, int n, int shared);
#if defined(FASTSYNC_FUTEX_WAITV) // (fastsync.h defines it, to its own, where it is not)
#define ODR_WAITV 1
struct fastsync__waitv;
static int FASTSYNC_FUTEX_WAITV(const struct fastsync__waitv *v, unsigned n, clockid_t clock,
                                const struct timespec *abstime);
#endif

#include "fastsync.hpp"

#include "cxx_odr.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <typeinfo>

#define ODR_CAT(a, b) ODR_CAT_(a, b)
#define ODR_CAT_(a, b) a##b
#define ODR_STR(x) ODR_STR_(x)
#define ODR_STR_(x) #x

// relaxed: counts, read by the main thread after the scene's threads are joined
static std::atomic<unsigned long> seam_waits(0), seam_wakes(0);

static int FASTSYNC_FUTEX_WAIT(void *word, uint32_t expected, int shared, clockid_t clock,
                               const struct timespec *abstime)
{
    seam_waits.fetch_add(1, std::memory_order_relaxed);
    odr_seam_entered();
    return fastsync__wait_sys(word, expected, shared, clock, abstime);
}

static void FASTSYNC_FUTEX_WAKE(void *word, int n, int shared)
{
    seam_wakes.fetch_add(1, std::memory_order_relaxed);
    fastsync__wake_sys(word, n, shared);
}

#if defined(ODR_WAITV)
// (ENOSYS where the backend or the kernel has none: wait_any then sleeps through the wait)
static int FASTSYNC_FUTEX_WAITV(const struct fastsync__waitv *v, unsigned n, clockid_t clock,
                                const struct timespec *abstime)
{
    seam_waits.fetch_add(1, std::memory_order_relaxed);
    odr_seam_entered();
    return fastsync__waitv_sys(v, n, clock, abstime);
}
#endif

// A thread runs sleeper() (which must sleep: what it waits for is held); once a wait has
// entered a seam, waker() lets it through. 1: sleeper() returned true and the wait was seen.
template <class Sleeper, class Waker> static int play(Sleeper sleeper, Waker waker)
{
    unsigned long before = odr_entered();
    bool got = false;
    std::thread t([&] { got = sleeper(); });
    int entered = odr_until_entered(before);
    waker();
    t.join();
    return got && entered;
}

// condition_variable and condition_variable_any (with unique_lock<mutex>): the sleeper waits
// for a flag, the waker sets it under the mutex and notifies.
template <class Cv> static int play_cv()
{
    fastsync::mutex m;
    Cv cv;
    bool flag = false; // under m
    return play(
        [&] {
            std::unique_lock<fastsync::mutex> l(m);
            cv.wait(l, [&] { return flag; });
            return l.owns_lock();
        },
        [&] {
            {
                std::lock_guard<fastsync::mutex> g(m);
                flag = true;
            }
            cv.notify_one();
        });
}

// A reader's lock_shared(): true when it held the lock shared (no exclusive lock to be had).
static bool read_lock(fastsync::shared_mutex &rw)
{
    rw.lock_shared();
    bool shared = !rw.try_lock();
    rw.unlock_shared();
    return shared;
}

// call_once: the first caller's f starts the sleeper, a second caller, and returns once it
// has entered a seam; the second caller's f must never run.
static fastsync::once_flag *once_flag_in_play;
static std::thread once_sleeper;
static std::atomic<int> once_runs(0);
static int once_entered;
static void once_second() { once_runs.fetch_add(1, std::memory_order_relaxed); }
static void once_first()
{
    once_runs.fetch_add(1, std::memory_order_relaxed);
    unsigned long before = odr_entered();
    once_sleeper = std::thread([] { fastsync::call_once(*once_flag_in_play, once_second); });
    once_entered = odr_until_entered(before);
}

static int play_scene(int scene)
{
    using std::chrono::hours;
    switch (scene) {
    case ODR_MUTEX: {
        fastsync::mutex m;
        m.lock();
        return play(
            [&] {
                m.lock();
                bool held = !m.try_lock();
                m.unlock();
                return held;
            },
            [&] { m.unlock(); });
    }
    case ODR_TIMED_MUTEX: {
        fastsync::timed_mutex m;
        m.lock();
        return play(
            [&] {
                if (!m.try_lock_for(hours(1))) return false;
                m.unlock();
                return true;
            },
            [&] { m.unlock(); });
    }
    case ODR_SHARED_READER: {
        fastsync::shared_mutex rw;
        rw.lock();
        return play(
            [&] { return read_lock(rw); },
            [&] { rw.unlock(); });
    }
    case ODR_SHARED_WRITER: {
        fastsync::shared_mutex rw;
        rw.lock_shared();
        return play(
            [&] {
                rw.lock();
                bool excl = !rw.try_lock_shared();
                rw.unlock();
                return excl;
            },
            [&] { rw.unlock_shared(); });
    }
    case ODR_SEMAPHORE: {
        fastsync::counting_semaphore<> s(0);
        return play(
            [&] {
                s.acquire();
                return !s.try_acquire();
            },
            [&] { s.release(); });
    }
    case ODR_CONDVAR: return play_cv<fastsync::condition_variable>();
    case ODR_CONDVAR_ANY: return play_cv<fastsync::condition_variable_any>();
    case ODR_EVENT: {
        fastsync::event e;
        return play(
            [&] {
                e.wait();
                return e.is_set();
            },
            [&] { e.set(); });
    }
    case ODR_LATCH: {
        fastsync::latch l(1);
        return play(
            [&] {
                l.wait();
                return l.try_wait();
            },
            [&] { l.count_down(); });
    }
    case ODR_BARRIER: {
        fastsync::barrier<> b(2);
        return play(
            [&] {
                b.arrive_and_wait();
                return true;
            },
            [&] { b.arrive_and_wait(); });
    }
    case ODR_CALL_ONCE: {
        fastsync::once_flag flag;
        once_flag_in_play = &flag;
        once_runs.store(0, std::memory_order_relaxed);
        fastsync::call_once(flag, once_first);
        once_sleeper.join();
        return once_entered && once_runs.load(std::memory_order_relaxed) == 1;
    }
    case ODR_WAIT_ANY: {
        fastsync::counting_semaphore<> s(0);
        fastsync::event e;
        return play([&] { return fastsync::wait_any(s, e) == 0 && !s.try_acquire() && !e.is_set(); },
                    [&] { s.release(); });
    }
    case ODR_WAIT32: {
        std::atomic<std::uint32_t> w(0);
        return play(
            [&] {
                // acquire: pairs with the waker's release store
                while (w.load(std::memory_order_acquire) == 0) fastsync::wait(w, 0);
                return w.load(std::memory_order_relaxed) == 1;
            },
            [&] {
                w.store(1, std::memory_order_release);
                fastsync::wake_one(w);
            });
    }
    case ODR_C_WAKE: {
        fastsync::shared_mutex rw;
        if (fastsync_rwlock_wrlock(rw.native_handle()) != 0) return 0;
        return play(
            [&] { return read_lock(rw); },
            [&] { (void)fastsync_rwlock_wrunlock(rw.native_handle()); });
    }
    default: return 0;
    }
}

static struct odr_seam seam_counts(void)
{
    struct odr_seam s;
    s.waits = seam_waits.load(std::memory_order_relaxed);
    s.wakes = seam_wakes.load(std::memory_order_relaxed);
    return s;
}

static const char *mutex_type(void) { return typeid(fastsync::mutex).name(); }

extern "C" const struct odr_side ODR_CAT(odr_side_, ODR_SIDE) = {
    ODR_STR(ODR_SIDE),
    FASTSYNC_BACKEND ", FASTSYNC_FUTEX_WAIT " ODR_STR(FASTSYNC_FUTEX_WAIT) ", _WAKE " ODR_STR(FASTSYNC_FUTEX_WAKE)
#if defined(ODR_WAITV)
        ", _WAITV " ODR_STR(FASTSYNC_FUTEX_WAITV)
#endif
#if defined(FASTSYNC_NO_CANCEL)
        ", FASTSYNC_NO_CANCEL"
#endif
    ,
    play_scene,
    seam_counts,
    mutex_type,
};
