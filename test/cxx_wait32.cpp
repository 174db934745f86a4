// SPDX-License-Identifier: MIT
// test/cxx_wait32.cpp - fastsync.hpp's wait on an address (fastsync::wait, wait_for,
// wait_until, wake_one, wake_all over std::atomic<std::uint32_t>), each promise a point:
//   at compile time: std::atomic<std::uint32_t> is fastsync_word32_t, 4 bytes, 4-aligned;
//     the wakes are noexcept, the waits are not (cancellation points, as the C calls);
//   a word that differs: every wait returns at once (true);
//   deadlines: wait_for(20 ms), wait_until(steady_clock + 20 ms), (system_clock + 20 ms)
//     and (a clock of the test's own + 20 ms, converted at the call): false, and never
//     before the deadline on its own clock; negative, zero and past: false at once;
//     nanoseconds::max() and time_point::max(): for ever (a store + wake_one 30 ms later
//     ends them: true);
//   wake_all: three threads asleep in fastsync::wait on one word, one store + wake_all:
//     all three return;
//   C and C++ on one word: a ping-pong of ROUNDS rounds between this C++ thread (wait,
//     wake_one) and a C file's (cxx_wait32_peer.c: fastsync_wait32, fastsync_wake32),
//     exact values.
// Built as C++11 and C++20 (test/meson.build, as cxx_api).
#include "fastsync.hpp"

#include "cxx_wait32_peer.h"
#include "tap.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <type_traits>

using namespace std::chrono;

static_assert(std::is_same<fastsync_word32_t, std::atomic<std::uint32_t> >::value, "the word type");
static_assert(sizeof(fastsync_word32_t) == 4 && alignof(fastsync_word32_t) == 4, "the word's layout");
static_assert(noexcept(fastsync::wake_one(std::declval<std::atomic<std::uint32_t> &>())) &&
                  noexcept(fastsync::wake_all(std::declval<std::atomic<std::uint32_t> &>())),
              "wakes are noexcept");
static_assert(!noexcept(fastsync::wait(std::declval<std::atomic<std::uint32_t> &>(), 0u)), "waits are not");

// A clock of the test's own: steady_clock a day ahead (converted at each call).
struct own_clock {
    typedef nanoseconds duration;
    typedef duration::rep rep;
    typedef duration::period period;
    typedef std::chrono::time_point<own_clock> time_point;
    static const bool is_steady = true;
    static time_point now() { return time_point(steady_clock::now().time_since_epoch() + hours(24)); }
};

static double ms_since(steady_clock::time_point t0)
{
    return duration<double, std::milli>(steady_clock::now() - t0).count();
}

static std::atomic<std::uint32_t> word(0);

static void differs()
{
    word.store(5, std::memory_order_relaxed); // relaxed: one thread
    fastsync::wait(word, 4);
    bool a = fastsync::wait_for(word, 4, seconds(3600)), b = fastsync::wait_until(word, 4, steady_clock::now() + hours(1)),
         c = fastsync::wait_until(word, 4, system_clock::now() + hours(1)),
         d = fastsync::wait_until(word, 4, own_clock::now() + hours(1));
    ok(a && b && c && d, "the word differs: wait returns, wait_for and wait_until (3 clocks) true at once");
}

// f(): a timed wait 20 ms ahead on word (which holds 5); now_past(): its deadline has come
template <class Wait, class Past> static void one_deadline(const char *what, Wait f, Past now_past)
{
    word.store(5, std::memory_order_relaxed); // relaxed: one thread
    steady_clock::time_point t0 = steady_clock::now();
    bool r = f();
    double ms = ms_since(t0);
    bool past = now_past();
    ok(!r && past && ms >= 19.0, "%s: false after %.2f ms, its clock at or past the deadline", what, ms);
}

static void deadlines()
{
    // each deadline made just before its wait
    steady_clock::time_point t0 = steady_clock::now();
    one_deadline("wait_for(20 ms)", [] { return fastsync::wait_for(word, 5, milliseconds(20)); },
                 [t0] { return steady_clock::now() - t0 >= milliseconds(20); });
    steady_clock::time_point sd = steady_clock::now() + milliseconds(20);
    one_deadline("wait_until(steady_clock + 20 ms)", [sd] { return fastsync::wait_until(word, 5, sd); },
                 [sd] { return steady_clock::now() >= sd; });
    system_clock::time_point yd = system_clock::now() + milliseconds(20);
    one_deadline("wait_until(system_clock + 20 ms)", [yd] { return fastsync::wait_until(word, 5, yd); },
                 [yd] { return system_clock::now() >= yd; });
    own_clock::time_point od = own_clock::now() + milliseconds(20);
    one_deadline("wait_until(own clock + 20 ms)", [od] { return fastsync::wait_until(word, 5, od); },
                 [od] { return own_clock::now() >= od; });
    t0 = steady_clock::now();
    bool any = fastsync::wait_for(word, 5, seconds(-5)) || fastsync::wait_for(word, 5, nanoseconds(0)) ||
               fastsync::wait_until(word, 5, steady_clock::time_point::min()) ||
               fastsync::wait_until(word, 5, system_clock::time_point()) ||
               fastsync::wait_for(word, 5, duration<double>(-1e300));
    ok(!any && ms_since(t0) < 1000.0, "negative, zero and past deadlines, min(), a huge negative double: false at once");

    // for ever: a store and a wake 30 ms later end them
    auto later = [] {
        std::this_thread::sleep_for(milliseconds(30));
        word.store(6, std::memory_order_release); // release: as the manual says a waker's is
        fastsync::wake_one(word);
    };
    word.store(5, std::memory_order_relaxed); // relaxed: before the thread starts
    t0 = steady_clock::now();
    std::thread u(later);
    bool r1 = true;
    while (word.load(std::memory_order_acquire) == 5) r1 &= fastsync::wait_for(word, 5, nanoseconds::max());
    double ms = ms_since(t0);
    u.join();
    word.store(5, std::memory_order_relaxed);
    std::thread u2(later);
    bool r2 = true;
    while (word.load(std::memory_order_acquire) == 5) r2 &= fastsync::wait_until(word, 5, system_clock::time_point::max());
    u2.join();
    ok(r1 && r2 && ms >= 25.0, "wait_for(nanoseconds::max()), wait_until(system_clock max()): for ever, until the "
                               "store and wake (true, %.1f ms)", ms);
}

static void wake_all()
{
    word.store(0, std::memory_order_relaxed); // relaxed: before the threads start
    std::atomic<int> returned(0);
    std::thread t[3];
    for (int i = 0; i < 3; i++)
        t[i] = std::thread([&returned] {
            while (word.load(std::memory_order_acquire) == 0) fastsync::wait(word, 0); // acquire: the store below
            returned.fetch_add(1, std::memory_order_relaxed); // relaxed: read after the joins
        });
    std::this_thread::sleep_for(milliseconds(20)); // most likely asleep by now; either way they must return
    word.store(1, std::memory_order_release);
    fastsync::wake_all(word);
    for (int i = 0; i < 3; i++) t[i].join();
    ok(returned.load() == 3, "wake_all after a store: all 3 waiters returned (%d)", returned.load());
}

#define ROUNDS 5000

static void with_c()
{
    word.store(0, std::memory_order_relaxed); // relaxed: before the thread starts
    unsigned long c_bad = 0;
    std::thread c([&c_bad] { c_bad = cxx_wait32_peer(&word, ROUNDS); });
    unsigned long bad = 0;
    for (unsigned long k = 0; k < ROUNDS; k++) {
        word.store(static_cast<std::uint32_t>(2 * k + 1), std::memory_order_release); // pairs with C's acquire
        fastsync::wake_one(word);
        std::uint32_t v;
        while ((v = word.load(std::memory_order_acquire)) == 2 * k + 1) fastsync::wait(word, v); // C's release
        bad += v != 2 * k + 2;
    }
    c.join();
    ok(bad == 0 && c_bad == 0, "C++ (fastsync::wait, wake_one) and C (fastsync_wait32, fastsync_wake32) on one word: "
                               "%d rounds, %lu and %lu wrong", ROUNDS, bad, c_bad);
}

int main()
{
    differs();
    deadlines();
    wake_all();
    with_c();
    return done_testing();
}
