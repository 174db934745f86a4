/* SPDX-License-Identifier: MIT */
/* cxx_odr: C++ files of one program use fastsync.hpp in different configurations, each on
 * objects of its own (the manual lets a file replace FASTSYNC_FUTEX_WAIT, _WAKE and _WAITV,
 * or choose its backend or FASTSYNC_NO_CANCEL, for objects that never leave it). Its
 * members are inline functions with external linkage and the C functions they call are
 * static: were two configurations' members one entity, the linker would keep one copy of
 * each (built at -O0, nothing inlined: each member a weak COMDAT symbol) and one file's
 * objects would sleep and be woken through another file's seam or backend. The sides
 * (cxx_odr_side.cpp, built once per configuration: its top lists them) each differ from the
 * first, `here`, in one thing: the wait's name, the wake's, a multi-wait of their own,
 * FASTSYNC_NO_CANCEL (not on Windows), the POSIX backend (Linux, where the build's backend
 * is not it already).
 * Points: each side's fastsync::mutex is a type of its own (typeid); then, for each side
 * and each scene (cxx_odr.h: a mutex, timed_mutex, shared_mutex both ways,
 * counting_semaphore, condition_variable, condition_variable_any, event, latch, barrier,
 * call_once, wait_any, fastsync::wait on an atomic, and a shared_mutex reader woken by the
 * C unlock of its native_handle()), a thread sleeps in an object of that side's file and is
 * woken there, by a waker that acts once the sleeper has entered a seam (the order forced
 * through the replaced wait): the sleeper got what it waited for, the side's own seam
 * counted at least one wait and one wake, and no other side's seam counted any. A sleeper
 * woken through another backend sleeps on: the watchdog. */
#include "harness.h"

#include "cxx_odr.h"

static const char *const scene_name[ODR_SCENES] = {
    "mutex",          "timed_mutex try_lock_for", "shared_mutex reader", "shared_mutex writer",
    "counting_semaphore", "condition_variable",   "condition_variable_any", "event",
    "latch",          "barrier",                  "call_once",           "wait_any",
    "wait on an atomic", "shared_mutex reader woken by C",
};

static _Atomic(unsigned long) entered;

void odr_seam_entered(void)
{
    /* relaxed: a count; what the waker then does is ordered by the primitive's own word */
    atomic_fetch_add_explicit(&entered, 1, memory_order_relaxed);
}

unsigned long odr_entered(void) { return atomic_load_explicit(&entered, memory_order_relaxed); }

int odr_until_entered(unsigned long before)
{
    uint64_t end = test_limit_end(5000);
    while (odr_entered() <= before) {
        if (test_now_ns() >= end) return 0;
        test_sleep_ns(100000);
    }
    return 1;
}

static const struct odr_side *const sides[] = {
    &odr_side_here, &odr_side_wait2, &odr_side_wake2, &odr_side_waitv,
#if defined(ODR_HAS_NOCANCEL)
    &odr_side_nocancel,
#endif
#if defined(ODR_HAS_POSIX)
    &odr_side_posix,
#endif
};
enum { NSIDES = sizeof sides / sizeof sides[0] };

/* the scene in play, for the watchdog's dump (relaxed: a report) */
static _Atomic(int) now_side = -1, now_scene = -1;

static void dump(void *unused)
{
    (void)unused;
    int sd = atomic_load_explicit(&now_side, memory_order_relaxed);
    int sc = atomic_load_explicit(&now_scene, memory_order_relaxed);
    diag("in play: %s in %s's file", sc >= 0 ? scene_name[sc] : "-", sd >= 0 ? sides[sd]->name : "-");
    for (int i = 0; i < NSIDES; i++) {
        struct odr_seam c = sides[i]->seam();
        diag("%s's seam so far: waits %lu, wakes %lu", sides[i]->name, c.waits, c.wakes);
    }
}

/* every side's seam counts but `me`'s, added up */
static struct odr_seam others(int me)
{
    struct odr_seam sum = {0, 0};
    for (int i = 0; i < NSIDES; i++) {
        if (i == me) continue;
        struct odr_seam c = sides[i]->seam();
        sum.waits += c.waits;
        sum.wakes += c.wakes;
    }
    return sum;
}

int main(void)
{
    test_init();
    plan(NSIDES + NSIDES * ODR_SCENES);
    test_watchdog_start(dump, NULL);
    for (int sd = 0; sd < NSIDES; sd++) {
        diag("%s: %s", sides[sd]->name, sides[sd]->config);
        const char *mine = sides[sd]->mutex_type();
        int alike = 0;
        for (int i = 0; i < NSIDES; i++) alike += i != sd && strcmp(mine, sides[i]->mutex_type()) == 0;
        ok(alike == 0, "%s's fastsync::mutex is a type of its own: %s (%d other sides' alike)", sides[sd]->name,
           mine, alike);
    }
    for (int sd = 0; sd < NSIDES; sd++) {
        for (int sc = 0; sc < ODR_SCENES; sc++) {
            atomic_store_explicit(&now_side, sd, memory_order_relaxed);
            atomic_store_explicit(&now_scene, sc, memory_order_relaxed);
            struct odr_seam m0 = sides[sd]->seam(), o0 = others(sd);
            int got = sides[sd]->play(sc);
            struct odr_seam m1 = sides[sd]->seam(), o1 = others(sd);
            unsigned long waits = m1.waits - m0.waits, wakes = m1.wakes - m0.wakes;
            unsigned long owaits = o1.waits - o0.waits, owakes = o1.wakes - o0.wakes;
            ok(got && waits >= 1 && wakes >= 1 && owaits == 0 && owakes == 0,
               "%s, %s's file: the sleeper %s; waits through its own seam +%lu, wakes +%lu; "
               "through the other sides' +%lu, +%lu",
               scene_name[sc], sides[sd]->name, got ? "got what it slept for" : "FAILED", waits, wakes,
               owaits, owakes);
        }
    }
    test_watchdog_stop();
    return done_testing();
}
