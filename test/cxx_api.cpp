// SPDX-License-Identifier: MIT
// test/cxx_api.cpp - fastsync.hpp's types, each promise of its manual a point: layout and
// noexcept (at compile time), exclusion and exact totals with the standard's lock types,
// deadlines on steady_clock, system_clock, duration::max() and a user clock whose time
// jumps back, wait_any, C code on the same objects (cxx_share.c), the stop_token waits
// (C++20), cancellation relocking (with exceptions, on glibc), process-shared objects across
// fork; the shared mutexes: readers share and writers exclude (with std::shared_lock,
// unique_lock, lock_guard, scoped_lock, condition_variable_any), try_lock_shared never
// spurious, downgrade, their timed forms, the reader limit blocking as the standard says;
// once_flag and call_once: one call among threads, an exception or a cancellation gives the
// flag up to the next caller, arguments as std::invoke takes them, C code on the same flag;
// latch: exact count-down totals with several waiters, its deadlines, add (a wait group),
// wait_any over it and the C latch, C code on the same latch, its destructor waiting for a
// released waiter; barrier: phases with and without a completion (run once a phase, before
// any thread of it returns), by arrive_and_wait and by arrive + wait(token), arrive_and_drop,
// C code on barrier<>'s C object; both process-shared across fork.
// Built as C++11, C++17 and C++20, each with and without exceptions (test/meson.build).
#include "fastsync.hpp"

#include "cxx_share.h"
#include "sem_wide_probe.hpp"
#include "tap.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>
#if defined(__unix__)
#include <pthread.h>
#include <unistd.h>
#endif
#if defined(__linux__)
#include <signal.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#endif

using namespace std::chrono;

// ---- at compile time: the layout of the C object, noexcept where the manual says ------
template <class T, class C> struct same_layout {
    static const bool value = sizeof(T) == sizeof(C) && alignof(T) == alignof(C) &&
                              std::is_standard_layout<T>::value &&
                              std::is_same<typename T::native_handle_type, C *>::value;
};
static_assert(same_layout<fastsync::mutex, fastsync_mutex_t>::value, "mutex");
static_assert(same_layout<fastsync::timed_mutex, fastsync_mutex_t>::value, "timed_mutex");
static_assert(same_layout<fastsync::counting_semaphore<>, fastsync_sem_t>::value, "counting_semaphore");
static_assert(same_layout<fastsync::binary_semaphore, fastsync_sem_t>::value, "binary_semaphore");
static_assert(same_layout<fastsync::condition_variable, fastsync_cond_t>::value, "condition_variable");
static_assert(same_layout<fastsync::condition_variable_any, fastsync_cond_t>::value, "condition_variable_any");
static_assert(same_layout<fastsync::event, fastsync_event_t>::value, "event");
static_assert(same_layout<fastsync::shared_mutex, fastsync_rwlock_t>::value, "shared_mutex");
static_assert(same_layout<fastsync::shared_timed_mutex, fastsync_rwlock_t>::value, "shared_timed_mutex");
static_assert(!std::is_copy_constructible<fastsync::mutex>::value && !std::is_copy_assignable<fastsync::mutex>::value, "mutex copies");
static_assert(!std::is_copy_constructible<fastsync::shared_mutex>::value && !std::is_copy_assignable<fastsync::shared_mutex>::value &&
                  !std::is_copy_constructible<fastsync::shared_timed_mutex>::value &&
                  !std::is_copy_assignable<fastsync::shared_timed_mutex>::value,
              "shared mutex copies");
static_assert(std::is_trivially_destructible<fastsync::mutex>::value, "mutex: trivial destructor");
static_assert(std::is_trivially_destructible<fastsync::shared_mutex>::value &&
                  std::is_trivially_destructible<fastsync::shared_timed_mutex>::value,
              "shared mutexes: trivial destructors");
// max(): what the counter can hold, >= LeastMaxValue as the standard asks
static_assert(fastsync::counting_semaphore<7>::max() == FASTSYNC_SEM_VALUE_MAX &&
                  fastsync::binary_semaphore::max() == FASTSYNC_SEM_VALUE_MAX,
              "max()");
// Every LeastMaxValue the standard allows (0 up to PTRDIFF_MAX, the most a ptrdiff_t holds)
// makes a type, and its max(), a constant expression of type ptrdiff_t, is at least that
// LeastMaxValue: the semaphore can count that far. (A program may ask for
// counting_semaphore<PTRDIFF_MAX> and read max() back; until the wide kind it did not
// compile.)
template <std::ptrdiff_t N> struct holds {
    static const bool value = std::is_same<decltype(fastsync::counting_semaphore<N>::max()), std::ptrdiff_t>::value &&
                              fastsync::counting_semaphore<N>::max() >= N;
};
static_assert(holds<0>::value && holds<1>::value && holds<2>::value && holds<INT_MAX - 1>::value &&
                  holds<INT_MAX>::value && holds<PTRDIFF_MAX>::value && holds<PTRDIFF_MAX - 1>::value,
              "max() >= LeastMaxValue, for the smallest, the C semaphore's edge and the largest");
static_assert(fastsync::counting_semaphore<>::max() >= 1 && fastsync::counting_semaphore<>::max() == INT_MAX,
              "counting_semaphore<>: the C semaphore's FASTSYNC_SEM_VALUE_MAX");
#if PTRDIFF_MAX > INT_MAX
// Above FASTSYNC_SEM_VALUE_MAX: the wide kind (two counters, 16 bytes), max() PTRDIFF_MAX.
typedef fastsync::counting_semaphore<PTRDIFF_MAX> wide_sem;
typedef fastsync::counting_semaphore<static_cast<std::ptrdiff_t>(INT_MAX) + 1> wide_sem_least;
static_assert(holds<static_cast<std::ptrdiff_t>(INT_MAX) + 1>::value && holds<static_cast<std::ptrdiff_t>(UINT32_MAX)>::value,
              "max() >= LeastMaxValue just above the C semaphore's edge");
static_assert(wide_sem::max() == PTRDIFF_MAX && wide_sem_least::max() == PTRDIFF_MAX, "the wide kind's max()");
static_assert(sizeof(wide_sem) == 16 && alignof(wide_sem) == 8 && std::is_standard_layout<wide_sem>::value &&
                  sizeof(wide_sem_least) == 16,
              "the wide kind: the C semaphore and a 64-bit excess, standard layout");
static_assert(!std::is_copy_constructible<wide_sem>::value && !std::is_copy_assignable<wide_sem>::value,
              "the wide kind: not copyable");
// no native_handle(): the wide kind has no single C object
template <class T, class = void> struct has_native_handle : std::false_type {};
template <class T>
struct has_native_handle<T, typename fastsync::detail::voider<decltype(std::declval<T &>().native_handle())>::type>
    : std::true_type {};
static_assert(has_native_handle<fastsync::counting_semaphore<>>::value && !has_native_handle<wide_sem>::value &&
                  !has_native_handle<wide_sem_least>::value,
              "native_handle(): the C semaphore's only");
#endif

// constexpr constructors: constant-initialized (C++20 checks it: constinit)
#if defined(__cpp_constinit)
#define CONSTANT constinit
#else
#define CONSTANT
#endif
static CONSTANT fastsync::mutex constant_mutex;
static CONSTANT fastsync::counting_semaphore<> constant_sem(3);
static CONSTANT fastsync::event constant_event(true);
static CONSTANT fastsync::condition_variable constant_cv;
static CONSTANT fastsync::shared_mutex constant_shared;
static CONSTANT fastsync::shared_timed_mutex constant_shared_timed;
#if PTRDIFF_MAX > INT_MAX
static CONSTANT wide_sem constant_wide(PTRDIFF_MAX);
#endif

static void noexcept_points()
{
    fastsync::timed_mutex m;
    fastsync::counting_semaphore<> s(0);
    fastsync::condition_variable cv;
    fastsync::event e;
    std::unique_lock<fastsync::mutex> l(constant_mutex, std::defer_lock);
    // noexcept: what cannot sleep in a cancellation point
    static_assert(noexcept(m.lock()) && noexcept(m.try_lock()) && noexcept(m.unlock()), "mutex noexcept");
    static_assert(noexcept(s.release()) && noexcept(s.try_acquire()), "semaphore noexcept");
    static_assert(noexcept(cv.notify_one()) && noexcept(cv.notify_all()), "notify noexcept");
    static_assert(noexcept(e.set()) && noexcept(e.reset()) && noexcept(e.is_set()), "event noexcept");
    // not noexcept: the waits that sleep are cancellation points (glibc unwinds)
    static_assert(!noexcept(s.acquire()) && !noexcept(s.try_acquire_for(seconds(1))), "acquire");
    static_assert(!noexcept(cv.wait(l)) && !noexcept(e.wait()), "waits");
    // the shared mutexes' locks are no cancellation points (as the C calls): all noexcept
    fastsync::shared_timed_mutex sm;
    static_assert(noexcept(sm.lock()) && noexcept(sm.try_lock()) && noexcept(sm.unlock()) &&
                      noexcept(sm.lock_shared()) && noexcept(sm.try_lock_shared()) &&
                      noexcept(sm.unlock_shared()) && noexcept(sm.downgrade()),
                  "shared mutex noexcept");
    static_assert(std::is_nothrow_default_constructible<fastsync::shared_mutex>::value &&
                      std::is_nothrow_default_constructible<fastsync::shared_timed_mutex>::value,
                  "shared mutex() noexcept");
    ok(constant_sem.try_acquire() && constant_event.is_set() && constant_mutex.try_lock(),
       "constant-initialized objects work (static mutex, semaphore(3), event(true))");
    constant_mutex.unlock();
    constant_cv.notify_all();
    ok(constant_shared.try_lock_shared() && constant_shared.try_lock_shared() && !constant_shared.try_lock() &&
           constant_shared_timed.try_lock() && !constant_shared_timed.try_lock_shared(),
       "constant-initialized shared_mutex (two shared locks, no exclusive one) and shared_timed_mutex "
       "(an exclusive lock, no shared one)");
    constant_shared.unlock_shared();
    constant_shared.unlock_shared();
    constant_shared_timed.unlock();
}

// ---- exclusion: a plain counter under the lock, exact totals ---------------------------
static const int THREADS = 4;
static const long ROUNDS = 20000;

template <class Mutex, class Guard> static long count_with(Mutex &m)
{
    long counter = 0;
    std::vector<std::thread> t;
    for (int i = 0; i < THREADS; i++)
        t.push_back(std::thread([&m, &counter] {
            for (long k = 0; k < ROUNDS; k++) {
                Guard g(m);
                ++counter;
            }
        }));
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    return counter;
}

static void exclusion()
{
    fastsync::mutex m;
    fastsync::timed_mutex tm;
    is_int((count_with<fastsync::mutex, std::lock_guard<fastsync::mutex>>(m)), THREADS * ROUNDS,
           "mutex with std::lock_guard: %d threads x %ld, exact", THREADS, ROUNDS);
    is_int((count_with<fastsync::timed_mutex, std::unique_lock<fastsync::timed_mutex>>(tm)), THREADS * ROUNDS,
           "timed_mutex with std::unique_lock: exact");
    // std::lock over two fastsync mutexes taken in opposite orders: no deadlock, exact
    fastsync::mutex a, b;
    long both = 0;
    std::thread t1([&] {
        for (long k = 0; k < ROUNDS; k++) {
            std::lock(a, b);
            ++both;
            a.unlock();
            b.unlock();
        }
    });
    std::thread t2([&] {
        for (long k = 0; k < ROUNDS; k++) {
            std::unique_lock<fastsync::mutex> lb(b, std::defer_lock), la(a, std::defer_lock);
            std::lock(lb, la);
            ++both;
        }
    });
    t1.join();
    t2.join();
    is_int(both, 2 * ROUNDS, "std::lock over two fastsync::mutex, opposite orders: exact");
#if __cplusplus >= 201703L
    long counter = 0;
    {
        std::scoped_lock<fastsync::mutex, fastsync::timed_mutex> g(m, tm);
        ++counter;
    }
    ok(counter == 1 && m.try_lock() && tm.try_lock(), "std::scoped_lock over mutex and timed_mutex, released");
    m.unlock();
    tm.unlock();
#endif
    // C code on the same mutex: 2 C++ threads, 2 C threads (cxx_share.c), one counter
    long shared = 0;
    std::vector<std::thread> t;
    for (int i = 0; i < 2; i++) {
        t.push_back(std::thread([&] {
            for (long k = 0; k < ROUNDS; k++) {
                std::lock_guard<fastsync::mutex> g(m);
                ++shared;
            }
        }));
        t.push_back(std::thread([&] { cxx_share_count(m.native_handle(), &shared, ROUNDS); }));
    }
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    is_int(shared, 4 * ROUNDS, "one mutex locked by C++ (lock_guard) and by C (native_handle): exact");
}

// ---- deadlines --------------------------------------------------------------------------
// A clock of the test's own: steady_clock, jumped back by jump_ns from its reading number
// jump_at on (0: the first reading after arm()). The jump is tied to the readings, not to
// when a thread that would make it gets a CPU: a wait reads the clock once to convert its
// deadline and once to look after each timeout, so the jump lands between those two, on a
// loaded machine as on an idle one.
struct jump_clock {
    typedef nanoseconds duration;
    typedef duration::rep rep;
    typedef duration::period period;
    typedef std::chrono::time_point<jump_clock> time_point;
    static const bool is_steady = false;
    // seq_cst (the default): one thread reads the clock at a time in these points; the
    // count orders nothing else
    static std::atomic<long> reads;
    static long jump_at;
    static long long jump_ns;
    static void arm(long at, long long ns)
    {
        jump_at = at;
        jump_ns = ns;
        reads = 0;
    }
    static time_point now()
    {
        long long off = reads.fetch_add(1) >= jump_at ? -jump_ns : 0;
        return time_point(steady_clock::now().time_since_epoch() + nanoseconds(off));
    }
};
std::atomic<long> jump_clock::reads(0);
long jump_clock::jump_at = 0;
long long jump_clock::jump_ns = 0;

static double ms_since(steady_clock::time_point t0)
{
    return duration_cast<duration<double, std::milli>>(steady_clock::now() - t0).count();
}

// Runs wait(tp) with tp = jump_clock::now() + 100 ms (the clock's reading 0), the clock
// jumping back 200 ms at its reading 2: after the wait's conversion of tp (reading 1), at its
// first look after that deadline (issue 32, item 8: the jump was a thread's, 30 ms in, and
// when that thread was not scheduled within 100 ms the wait rightly timed out at 100 ms).
// The clock reaches tp only 300 ms after the start, on steady_clock: wait must time out
// (false), and not before jump_clock reaches tp, so not before 300 ms (the clock is short of
// tp before then, whatever it read when).
template <class Wait> static void jump_back(const char *what, Wait wait)
{
    jump_clock::arm(2, 200000000);
    steady_clock::time_point t0 = steady_clock::now();
    jump_clock::time_point tp = jump_clock::now() + milliseconds(100);
    bool got = wait(tp);
    bool reached = jump_clock::now() >= tp;
    double ms = ms_since(t0);
    long reads = jump_clock::reads.load();
    ok(!got && reached && ms >= 299.0,
       "%s: a user clock jumped back 200 ms after the wait converted its deadline: timed out after "
       "%.1f ms, its clock at the deadline (%ld readings)", what, ms, reads);
}

static void deadlines()
{
    fastsync::timed_mutex m;
    m.lock();
    steady_clock::time_point t0 = steady_clock::now();
    bool got = m.try_lock_for(milliseconds(20));
    double ms = ms_since(t0);
    ok(!got && ms >= 20.0, "try_lock_for(20 ms) on a locked mutex: false after %.1f ms", ms);
    t0 = steady_clock::now();
    got = m.try_lock_until(system_clock::now() + milliseconds(20));
    ms = ms_since(t0);
    ok(!got && ms >= 19.0, "try_lock_until(system_clock + 20 ms): false after %.1f ms", ms);
    t0 = steady_clock::now();
    got = m.try_lock_for(seconds(-5)) || m.try_lock_until(steady_clock::time_point::min()) ||
          m.try_lock_until(system_clock::time_point()) || m.try_lock_for(duration<double>(-1e300));
    ok(!got && ms_since(t0) < 1000.0, "negative and past deadlines, min() and a huge negative double: one try each");
    // duration::max() and time_point::max(): for ever, not an overflow into the past (t0
    // before the thread that unlocks 30 ms after its start: the wait is >= 30 ms however late
    // this thread runs)
    t0 = steady_clock::now();
    std::thread u([&m] {
        std::this_thread::sleep_for(milliseconds(30));
        m.unlock();
    });
    got = m.try_lock_for(nanoseconds::max());
    ms = ms_since(t0);
    u.join();
    ok(got && ms >= 25.0, "try_lock_for(nanoseconds::max()) waits for the unlock: true after %.1f ms", ms);
    std::thread u2([&m] {
        std::this_thread::sleep_for(milliseconds(30));
        m.unlock();
    });
    ok(m.try_lock_for(hours::max()), "try_lock_for(hours::max()) (beyond nanoseconds) waits: true");
    u2.join();
    std::thread u3([&m] {
        std::this_thread::sleep_for(milliseconds(30));
        m.unlock();
    });
    ok(m.try_lock_until(system_clock::time_point::max()) , "try_lock_until(system_clock::time_point::max()): true");
    u3.join();
    m.unlock();

    fastsync::counting_semaphore<> s(0);
    std::thread r([&s] {
        std::this_thread::sleep_for(milliseconds(30));
        s.release();
    });
    ok(s.try_acquire_for(duration<double>::max()), "try_acquire_for(duration<double>::max()) waits: true");
    r.join();
    t0 = steady_clock::now();
    got = s.try_acquire_for(duration<float, std::milli>(20.5f));
    ms = ms_since(t0);
    ok(!got && ms >= 20.5, "try_acquire_for(20.5 float ms): false after %.1f ms (rounded up)", ms);

    // a user clock whose time jumps back: every timed wait of a clock of its own
    m.lock();
    jump_back("timed_mutex::try_lock_until", [&m](jump_clock::time_point tp) { return m.try_lock_until(tp); });
    m.unlock();
    jump_back("counting_semaphore::try_acquire_until", [&s](jump_clock::time_point tp) { return s.try_acquire_until(tp); });
    fastsync::event e;
    jump_back("event::wait_until", [&e](jump_clock::time_point tp) { return e.wait_until(tp); });
    fastsync::condition_variable cv;
    fastsync::mutex cm;
    jump_back("condition_variable::wait_until(pred)", [&](jump_clock::time_point tp) {
        std::unique_lock<fastsync::mutex> l(cm);
        return cv.wait_until(l, tp, [] { return false; });
    });
    fastsync::condition_variable_any cva;
    jump_back("condition_variable_any::wait_until(pred)", [&](jump_clock::time_point tp) {
        std::unique_lock<fastsync::mutex> l(cm);
        return cva.wait_until(l, tp, [] { return false; });
    });
    fastsync::counting_semaphore<> none(0);
    jump_back("wait_any_until", [&](jump_clock::time_point tp) { return fastsync::wait_any_until(tp, none, e) >= 0; });
    // the first wait without a predicate, early on its clock: a spurious wakeup (the clock
    // jumps back an hour at its look after the converted deadline, reading 2)
    {
        jump_clock::arm(2, 3600000000000LL);
        jump_clock::time_point tp = jump_clock::now() + milliseconds(50);
        std::unique_lock<fastsync::mutex> l(cm);
        std::cv_status st = cv.wait_until(l, tp);
        ok(st == std::cv_status::no_timeout && jump_clock::now() < tp,
           "condition_variable::wait_until, its clock short of the deadline when the wait ends: no_timeout");
    }
}

// A clock of its own that reads steady_clock: every deadline on it is converted and
// re-checked, as every clock's is on Windows and where fastsync.h uses the POSIX backend.
struct own_clock {
    typedef nanoseconds duration;
    typedef duration::rep rep;
    typedef duration::period period;
    typedef std::chrono::time_point<own_clock> time_point;
    static const bool is_steady = true;
    static time_point now() { return time_point(steady_clock::now().time_since_epoch()); }
};

// Deadlines at the edges of their types: no overflow into "for ever", none into the past,
// rounding always up (issue 19's review: each of these hung, busy-looped or returned early).
static void deadline_edges()
{
    typedef duration<long long, std::ratio<1, 3>> thirds;
    int forever = 0;
    long long ns = fastsync::detail::ceil_ns(thirds(1), forever);
    ok(forever == 0 && ns == 333333334, "ceil_ns(1/3 s) = %lld ns, rounded up", ns);
    ns = fastsync::detail::ceil_ns(thirds(10000000000LL), forever); // 105 years: x 10^9 overflowed
    ok(forever == 0 && ns == 3333333333333333334LL, "ceil_ns(10^10 thirds of a second, 105 years) = %lld ns", ns);
    fastsync::detail::ceil_ns(thirds(30000000000LL), forever);
    ok(forever == 1, "ceil_ns(3 x 10^10 thirds, 317 years): for ever");
    ns = fastsync::detail::ceil_ns(duration<float>(1000.5f), forever);
    ok(forever == 0 && ns == 1000500000000LL, "ceil_ns(1000.5f s) = %lld ns (float's rounding lost 30 us)", ns);
    ns = fastsync::detail::ceil_ns(duration<double, std::milli>(-0.5), forever);
    ok(forever == 0 && ns == -500000, "ceil_ns(-0.5 ms) = %lld ns", ns);

    fastsync::timed_mutex m;
    m.lock();
    steady_clock::time_point t0 = steady_clock::now();
    bool got = m.try_lock_until(own_clock::time_point::min()) ||
               m.try_lock_until(std::chrono::time_point<own_clock, hours>(hours(-3000000))) ||
               m.try_lock_until(std::chrono::time_point<steady_clock, hours>(hours(-3000000)));
    double ms = ms_since(t0);
    ok(!got && ms < 1000.0, "time_point::min() of a converted clock, and deadlines long past in hours "
                            "(both kinds of clock): one try each, false after %.1f ms", ms);
    t0 = steady_clock::now();
    std::thread u([&m] {
        std::this_thread::sleep_for(milliseconds(30));
        m.unlock();
    });
    got = m.try_lock_for(thirds(10000000000LL));
    ms = ms_since(t0);
    u.join();
    ok(got && ms >= 25.0, "try_lock_for(105 years in thirds of a second) waits for the unlock: true after %.1f ms", ms);
    m.unlock();
    fastsync::counting_semaphore<> s(0);
    t0 = steady_clock::now();
    std::thread r([&s] {
        std::this_thread::sleep_for(milliseconds(30));
        s.release();
    });
    got = s.try_acquire_until(std::chrono::time_point<own_clock, hours>(
        duration_cast<hours>(own_clock::now().time_since_epoch()) + hours(24 * 365 * 1000)));
    ms = ms_since(t0);
    r.join();
    ok(got && ms >= 25.0, "try_acquire_until(1000 years ahead, in hours, a converted clock) waits: true after %.1f ms", ms);
}

// ---- condition variables at their limits ------------------------------------------------
// With FASTSYNC_COND_TICKETS_MAX tickets registered a wait cannot register: a timed wait
// must still end at its deadline (it looped on spurious wakeups for ever), a stop still
// ends a stop_token wait.
static void cond_full()
{
    fastsync::condition_variable_any cva;
    fastsync::mutex m;
    std::vector<fastsync_cond_ticket_t> t(FASTSYNC_COND_TICKETS_MAX);
    int refused = 0;
    for (fastsync_cond_ticket_t &x : t) refused |= fastsync_cond_register(cva.native_handle(), &x);
    fastsync_cond_ticket_t extra;
    refused = refused == 0 && fastsync_cond_register(cva.native_handle(), &extra) == EAGAIN;
    std::unique_lock<fastsync::mutex> l(m);
    steady_clock::time_point t0 = steady_clock::now();
    bool got = cva.wait_for(l, milliseconds(20), [] { return false; }) ||
               cva.wait_until(l, steady_clock::now() + milliseconds(20), [] { return false; });
    double ms = ms_since(t0);
    ok(refused && !got && l.owns_lock() && ms >= 40.0,
       "condition_variable_any with %d tickets registered: wait_for and wait_until(20 ms) time out after %.1f ms",
       FASTSYNC_COND_TICKETS_MAX, ms);
#if FASTSYNC__HPP_STOP_TOKEN
    std::stop_source src;
    std::thread stopper([&src] {
        std::this_thread::sleep_for(milliseconds(20));
        src.request_stop();
    });
    got = cva.wait(l, src.get_token(), [] { return false; });
    stopper.join();
    ok(!got && src.stop_requested(), "and a stop request ends its wait(lock, stop_token, pred): false");
#else
    skip("no std::stop_token before C++20", "a stop request ends a wait with every ticket taken");
#endif
    l.unlock();
    for (fastsync_cond_ticket_t &x : t) (void)fastsync_cond_cancel(cva.native_handle(), &x);
}

#if defined(__linux__)
// "Safe to destroy once all threads have been notified": a waiter that notify_all released
// but that does not run for longer than the C destroy's one-second limit (here: a signal
// handler that sleeps 1.2 s in it once the destruction begins) must not make the destructor
// give up while it may still touch the object, which lies at the end of a page unmapped as
// the destructor returns. The handler says when it ends (in_handler 2), and the destructor
// must return after that: whatever the threads' scheduling (issue 32, item 8: it checked
// that the destructor took 1 s, which it did only if this thread began the destruction
// within 0.2 s of the handler's start).
// seq_cst (both flags): polled across threads; what they order is read after a join
static std::atomic<int> in_handler(0); // 1 in the handler, 2 it has ended
static std::atomic<bool> destroying(false);
static void slow_handler(int)
{
    in_handler.store(1);
    while (!destroying.load()) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, nullptr);
    }
    struct timespec d = {1, 200000000};
    while (nanosleep(&d, &d) != 0) {
    }
    in_handler.store(2);
}
static void cond_destroy_slow_waiter()
{
    long page = sysconf(_SC_PAGESIZE);
    char *mem = static_cast<char *>(mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    fastsync::condition_variable *cv =
        new (mem + page - sizeof(fastsync::condition_variable)) fastsync::condition_variable();
    fastsync::mutex m;
    bool flag = false;
    std::atomic<int> waiting(0);
    struct sigaction sa = {};
    sa.sa_handler = slow_handler;
    sigaction(SIGUSR2, &sa, nullptr);
    std::thread w([&] {
        std::unique_lock<fastsync::mutex> l(m);
        waiting.store(1);
        cv->wait(l, [&] { return flag; });
    });
    while (waiting.load() == 0) std::this_thread::yield();
    { std::lock_guard<fastsync::mutex> g(m); } // w is in the wait (it unlocked m)
    pthread_kill(w.native_handle(), SIGUSR2);
    // ThreadSanitizer may defer the handler while the thread blocks in pthread_cond_wait
    // (the POSIX backend's sleep): then it runs only after the wait, and proves nothing
    steady_clock::time_point h0 = steady_clock::now();
    while (in_handler.load() == 0 && ms_since(h0) < 3000.0) std::this_thread::yield();
    bool held = in_handler.load() != 0;
    {
        std::lock_guard<fastsync::mutex> g(m);
        flag = true;
    }
    steady_clock::time_point t0 = steady_clock::now();
    destroying.store(true); // the handler holds the waiter 1.2 s from here
    cv->notify_all();
    cv->~condition_variable();
    double ms = ms_since(t0);
    int handler_at_return = in_handler.load();
    munmap(mem, static_cast<size_t>(page));
    w.join(); // a touch of the unmapped page would have been a SIGSEGV
    if (held)
        ok(handler_at_return == 2, "condition_variable destroyed right after notify_all, its waiter held 1.2 s in a "
                                   "signal handler: the destructor returned after the handler had ended (%.1f ms)", ms);
    else
        skip("the signal handler did not run while the waiter slept (deferred by the sanitizer)",
             "destroy waits for a slow released waiter");
    sa.sa_handler = SIG_DFL;
    sigaction(SIGUSR2, &sa, nullptr);
}
#else
static void cond_destroy_slow_waiter() { skip("needs Linux (mmap, signals)", "destroy waits for a slow released waiter"); }
#endif

#if defined(__GLIBC__)
// notify_all_at_thread_exit: the notify comes after every thread_local of the thread is
// destroyed, also those made before the call.
static std::atomic<int> tl_gone(0);
struct tl_marker {
    int touched = 0;
    ~tl_marker() { tl_gone.store(1); }
};
static thread_local tl_marker marker;
static void at_thread_exit()
{
    fastsync::mutex m;
    fastsync::condition_variable cv;
    bool done = false;
    std::unique_lock<fastsync::mutex> l(m);
    std::thread t([&] {
        marker.touched = 1; // made before the call
        std::unique_lock<fastsync::mutex> tl(m);
        done = true;
        fastsync::notify_all_at_thread_exit(cv, std::move(tl));
    });
    cv.wait(l, [&] { return done; });
    int gone = tl_gone.load();
    l.unlock();
    t.join();
    ok(gone == 1, "notify_all_at_thread_exit: the waiter woke after the thread's thread_local (made before "
                  "the call) was destroyed");
}
#else
static void at_thread_exit() { skip("thread_locals made before the call: glibc's order of thread exit", "notify_all_at_thread_exit after every thread_local"); }
#endif

// ---- semaphore: exact delivery ---------------------------------------------------------
static void semaphore_totals()
{
    fastsync::counting_semaphore<> s(0);
    std::atomic<long> taken(0);
    std::vector<std::thread> t;
    for (int i = 0; i < THREADS; i++) {
        t.push_back(std::thread([&s] {
            for (long k = 0; k < ROUNDS; k++) s.release();
        }));
        t.push_back(std::thread([&s, &taken] {
            for (long k = 0; k < ROUNDS; k++) {
                if (k % 2) s.acquire();
                else while (!s.try_acquire_for(milliseconds(1))) {}
                taken.fetch_add(1, std::memory_order_relaxed);
            }
        }));
    }
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    ok(taken.load() == THREADS * ROUNDS && !s.try_acquire(), "semaphore: %d releasers, %d acquirers x %ld: every token taken once",
       THREADS, THREADS, ROUNDS);
    s.release(5);
    int n = 0;
    while (s.try_acquire()) n++;
    is_int(n, 5, "release(5) then try_acquire: 5 tokens");
    // C posts into a C++ semaphore
    cxx_share_post(s.native_handle(), 3);
    n = 0;
    while (s.try_acquire()) n++;
    is_int(n, 3, "3 posts by C code (native_handle): 3 tokens");
    fastsync::binary_semaphore b(1);
    ok(b.try_acquire() && !b.try_acquire(), "binary_semaphore(1): one token");
}

// ---- the wide kind: counting_semaphore<N> for N above FASTSYNC_SEM_VALUE_MAX ------------
#if PTRDIFF_MAX > INT_MAX
typedef fastsync::detail::sem_probe probe;

// T (the C semaphore's tokens) and E (the excess) are want_t and want_e.
static bool counters(const wide_sem &s, std::uint64_t want_t, std::uint64_t want_e)
{
    std::uint64_t t = probe::tokens(s), e = probe::excess(s);
    if (t != want_t || e != want_e)
        diag("  T %llu, E %llu; want T %llu, E %llu", static_cast<unsigned long long>(t), static_cast<unsigned long long>(e),
             static_cast<unsigned long long>(want_t), static_cast<unsigned long long>(want_e));
    return t == want_t && e == want_e;
}

// Until a waiter is registered in s's C semaphore (its thread about to sleep or asleep).
static bool until_registered(const wide_sem &s)
{
    steady_clock::time_point end = steady_clock::now() + seconds(30);
    while (probe::waiters(s) == 0)
        if (steady_clock::now() > end) return false;
        else std::this_thread::sleep_for(microseconds(100));
    return true;
}

static void wide_semaphore()
{
    const std::uint64_t M = INT_MAX;
    ok(counters(constant_wide, M, static_cast<std::uint64_t>(PTRDIFF_MAX) - M),
       "wide: a constant-initialized counting_semaphore<PTRDIFF_MAX>(PTRDIFF_MAX): INT_MAX tokens in the C "
       "semaphore, the rest in the excess");
    ok(constant_wide.try_acquire() && counters(constant_wide, M, static_cast<std::uint64_t>(PTRDIFF_MAX) - M - 1),
       "wide: try_acquire at PTRDIFF_MAX: the C semaphore refilled from the excess");

    // the standard's calls, as on counting_semaphore<>
    wide_sem s(0);
    wide_sem_least l(2);
    ok(!s.try_acquire() && l.try_acquire() && l.try_acquire() && !l.try_acquire(),
       "wide: try_acquire on 0 false; counting_semaphore<INT_MAX + 1>(2): two tokens");
    s.release();
    s.acquire();
    s.release(3);
    ok(s.try_acquire() && s.try_acquire_for(seconds(1)) && s.try_acquire_until(system_clock::now() + seconds(1)) &&
           !s.try_acquire(),
       "wide: release(3), then try_acquire, try_acquire_for, try_acquire_until: three tokens");
    steady_clock::time_point t0 = steady_clock::now();
    bool got = s.try_acquire_for(milliseconds(20));
    double ms = ms_since(t0);
    ok(!got && ms >= 20.0, "wide: try_acquire_for(20 ms) on 0: false after %.1f ms", ms);
    t0 = steady_clock::now();
    got = s.try_acquire_until(system_clock::now() + milliseconds(20)) || s.try_acquire_for(milliseconds(-5)) ||
          s.try_acquire_until(steady_clock::time_point::min());
    ms = ms_since(t0);
    ok(!got && ms >= 19.0, "wide: try_acquire_until(system_clock + 20 ms) false after %.1f ms; past deadlines one try", ms);
    jump_back("wide counting_semaphore::try_acquire_until", [&s](jump_clock::time_point tp) { return s.try_acquire_until(tp); });
    std::thread r([&s] {
        std::this_thread::sleep_for(milliseconds(30));
        s.release();
    });
    ok(s.try_acquire_for(nanoseconds::max()), "wide: try_acquire_for(nanoseconds::max()) waits for a release: true");
    r.join();

    // across INT_MAX: release(INT_MAX) fills the C semaphore, release(10) overflows into the
    // excess; each acquire then takes from the C semaphore and moves one token back from the
    // excess, so after 10 acquires (each kind) the C semaphore is full and the excess empty,
    // and the 11th leaves INT_MAX - 1: INT_MAX + 10 released, 11 acquired, exact
    s.release(INT_MAX);
    s.release(10);
    ok(counters(s, M, 10), "wide: release(INT_MAX), release(10): INT_MAX in the C semaphore, 10 in the excess");
    bool refilled = true;
    for (int i = 0; i < 10; i++) {
        bool took = i % 4 == 0 ? (s.acquire(), true)
                    : i % 4 == 1 ? s.try_acquire()
                    : i % 4 == 2 ? s.try_acquire_for(seconds(1))
                                 : s.try_acquire_until(system_clock::now() + seconds(1));
        refilled = refilled && took && counters(s, M, static_cast<std::uint64_t>(9 - i));
    }
    ok(refilled, "wide: 10 acquires (acquire, try_acquire, _for, _until): each refills the C semaphore from the excess");
    s.acquire();
    ok(counters(s, M - 1, 0), "wide: the 11th: INT_MAX - 1 left, the excess empty: INT_MAX + 10 - 11, exact");

    // one release of more than the C semaphore holds
    wide_sem b(0);
    b.release(0);
    ok(counters(b, 0, 0), "wide: release(0): nothing");
    b.release(PTRDIFF_MAX);
    ok(counters(b, M, static_cast<std::uint64_t>(PTRDIFF_MAX) - M),
       "wide: release(PTRDIFF_MAX) on 0: INT_MAX in the C semaphore, the rest in the excess");
    ok(b.try_acquire() && counters(b, M, static_cast<std::uint64_t>(PTRDIFF_MAX) - M - 1),
       "wide: then try_acquire: refilled, the excess one less");

    // a token in the excess with the C semaphore at 0: the state a release leaves between its
    // add to the excess and its refill (made here by the probe). try_acquire takes it; a
    // timed acquire takes it at its deadline.
    wide_sem x(0);
    probe::force(x, 0, 3);
    ok(x.try_acquire() && x.try_acquire() && x.try_acquire() && !x.try_acquire() && counters(x, 0, 0),
       "wide: 3 tokens in the excess, none in the C semaphore: try_acquire takes the 3, then false");
    probe::force(x, 0, 2);
    t0 = steady_clock::now();
    got = x.try_acquire_for(milliseconds(5));
    ms = ms_since(t0);
    ok(got && ms >= 5.0 && x.try_acquire_until(steady_clock::now() - seconds(1)) && counters(x, 0, 0),
       "wide: tokens in the excess only: try_acquire_for(5 ms) takes one at its deadline (after %.1f ms), "
       "try_acquire_until(past) the other", ms);

    // a release whose token went into the excess (the C semaphore full) happens before the
    // acquire that takes it out: a plain int written before the release, read after the
    // acquire, without a join in between (without that order: a data race, which TSan
    // reports). The release has returned (a relaxed flag) before the acquire begins, so the
    // acquire's take is followed by a refill whose claim reads the release's add.
    wide_sem f(INT_MAX);
    int payload = 0;
    std::atomic<bool> released(false);
    std::thread rel([&f, &payload, &released] {
        payload = 42;
        f.release();
        released.store(true, std::memory_order_relaxed);
    });
    while (!released.load(std::memory_order_relaxed)) std::this_thread::yield();
    bool excess = counters(f, M, 1);
    f.acquire();
    int seen = payload;
    rel.join();
    ok(excess && seen == 42 && counters(f, M, 0),
       "wide: a release into the excess (the C semaphore full), then an acquire: the acquire refills from the "
       "excess and sees the releaser's write");

    // a waiter asleep on 0 (registered in the C semaphore), woken by a release that
    // overflows: the release adds to the excess and refills the C semaphore
    wide_sem w(0);
    std::atomic<bool> woke(false);
    std::thread a([&w, &woke] {
        w.acquire();
        woke.store(true);
    });
    bool registered = until_registered(w);
    w.release(static_cast<std::ptrdiff_t>(M) + 7);
    a.join();
    ok(registered && woke.load() && counters(w, M, 6),
       "wide: an acquire asleep on 0, release(INT_MAX + 7): woken; INT_MAX in the C semaphore, 6 in the excess");

    // wait_any: a wide semaphore that wins refills after its take
    fastsync::event e;
    wide_sem y(0);
    is_int(fastsync::try_wait_any(e, y), -1, "wide: try_wait_any(event, wide) on 0: -1");
    y.release(INT_MAX);
    y.release(2);
    is_int(fastsync::wait_any(e, y), 1, "wide: wait_any(event, wide): the semaphore wins");
    ok(counters(y, M, 1), "wide: after wait_any's take, refilled from the excess");
    is_int(fastsync::wait_any_for(seconds(1), y, e), 0, "wide: wait_any_for(wide, event): the semaphore wins");
    ok(counters(y, M, 0), "wide: refilled again, the excess empty");
}
#else
static void wide_semaphore()
{
    skip("ptrdiff_t has 32 bits: every LeastMaxValue fits the C semaphore (no wide kind)", "the wide counting_semaphore");
}
#endif

// ---- condition variables ---------------------------------------------------------------
static void condition_variables()
{
    // ping-pong, exact: each side waits for its turn
    fastsync::mutex m;
    fastsync::condition_variable cv;
    long turn = 0;
    const long PINGS = 5000;
    std::thread other([&] {
        std::unique_lock<fastsync::mutex> l(m);
        for (long k = 0; k < PINGS; k++) {
            cv.wait(l, [&] { return turn % 2 == 1; });
            ++turn;
            cv.notify_one();
        }
    });
    {
        std::unique_lock<fastsync::mutex> l(m);
        for (long k = 0; k < PINGS; k++) {
            ++turn;
            cv.notify_one();
            cv.wait(l, [&] { return turn % 2 == 0; });
        }
    }
    other.join();
    is_int(turn, 2 * PINGS, "condition_variable ping-pong, %ld rounds: every turn taken", PINGS);

    std::unique_lock<fastsync::mutex> l(m);
    steady_clock::time_point t0 = steady_clock::now();
    std::cv_status st = cv.wait_for(l, milliseconds(20));
    double ms = ms_since(t0);
    ok(st == std::cv_status::timeout && l.owns_lock() && ms >= 20.0, "wait_for(20 ms): timeout after %.1f ms, lock held", ms);
    ok(!cv.wait_for(l, seconds(-1), [] { return false; }), "wait_for(-1 s, false): false at once");
    int flag = 0;
    std::thread c([&] { cxx_share_notify(cv.native_handle(), m.native_handle(), &flag); });
    ok(cv.wait_for(l, nanoseconds::max(), [&] { return flag == 1; }), "wait_for(max(), pred), notified by C code: true");
    l.unlock();
    c.join();

    // condition_variable_any with the standard library's own mutex: notify_all wakes every
    // waiter that was waiting, and the object is destroyed at once after it
    std::mutex sm;
    std::unique_ptr<fastsync::condition_variable_any> cva(new fastsync::condition_variable_any);
    int waiting = 0;
    bool go = false;
    std::atomic<int> woke(0);
    std::vector<std::thread> t;
    for (int i = 0; i < 8; i++)
        t.push_back(std::thread([&] {
            std::unique_lock<std::mutex> sl(sm);
            ++waiting;
            fastsync::condition_variable_any *p = cva.get();
            while (!go) p->wait(sl);
            woke.fetch_add(1);
        }));
    for (;;) {
        std::lock_guard<std::mutex> g(sm);
        if (waiting == 8) break;
    }
    {
        std::lock_guard<std::mutex> g(sm);
        go = true;
        cva->notify_all();
        cva.reset(); // destroyed right after the broadcast (under the lock: no waiter has left)
    }
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    is_int(woke.load(), 8, "condition_variable_any over std::mutex: notify_all woke all 8, then destroyed at once");

    // with a fastsync::timed_mutex through std::unique_lock
    fastsync::timed_mutex tm;
    fastsync::condition_variable_any cv2;
    std::unique_lock<fastsync::timed_mutex> tl(tm);
    ok(!cv2.wait_for(tl, milliseconds(5), [] { return false; }) && tl.owns_lock(),
       "condition_variable_any over unique_lock<timed_mutex>: times out, lock held");
}

// ---- event, ticket and wait_any -------------------------------------------------------
static void event_and_wait_any()
{
    fastsync::event e;
    ok(!e.is_set() && !e.wait_for(milliseconds(5)), "event: reset; wait_for times out");
    std::thread s([&e] {
        std::this_thread::sleep_for(milliseconds(20));
        e.set();
    });
    ok(e.wait_for(nanoseconds::max()) && e.is_set(), "event: wait_for(max()) returns at the set");
    s.join();
    e.reset();

    fastsync::counting_semaphore<> sem(0);
    fastsync::condition_variable_any cv;
    is_int(fastsync::try_wait_any(sem, e), -1, "try_wait_any: none ready: -1");
    is_int(fastsync::wait_any_for(milliseconds(5), sem, e), -1, "wait_any_for(5 ms): timed out: -1");
    sem.release();
    e.set();
    is_int(fastsync::wait_any(sem, e), 0, "wait_any(sem, event), both ready: the lowest index, 0");
    ok(!sem.try_acquire() && e.is_set(), "its token taken; the event left set");
    e.reset();
    {
        fastsync::ticket t(cv);
        std::thread n([&cv] {
            std::this_thread::sleep_for(milliseconds(20));
            cv.notify_one();
        });
        is_int(fastsync::wait_any(sem, e, t), 2, "wait_any(sem, event, ticket): a notify_one wins for the ticket");
        ok(!t.registered(), "the winning ticket is deregistered");
        n.join();
    }
    {
        fastsync::ticket t(cv);
        sem.release();
        is_int(fastsync::wait_any(t, sem), 1, "wait_any(ticket, sem): the semaphore wins");
        ok(t.registered(), "the ticket that lost stays registered");
        cv.notify_one();
        ok(t.wait_for(seconds(5)) == std::cv_status::no_timeout, "and a notify made after its registration is its own");
    }
    {
        fastsync::ticket t(cv);
        ok(t.wait_for(milliseconds(5)) == std::cv_status::timeout && !t.registered(), "ticket::wait_for: times out, deregistered");
    }
    {
        fastsync::ticket t(cv); // cancelled by its destructor
    }
    ok(cv.native_handle() != nullptr, "tickets given up by their destructor leave the condition variable usable");
}

// ---- C++20: waits a stop request interrupts --------------------------------------------
static void stop_tokens()
{
#if FASTSYNC__HPP_STOP_TOKEN
    fastsync::condition_variable_any cv;
    std::mutex m;
#if defined(_WIN32)
    // mingw-w64's libstdc++ under wine: its own stop_token machinery hangs in this loop (over
    // std::condition_variable_any: 1 of 3 runs of 3000 races hung; this test over fastsync 2
    // of 36 runs, at the same place), so the race runs on the other backends only.
    skip("mingw-w64 libstdc++'s stop_token under wine hangs this loop over std::condition_variable_any too",
         "wait(lock, stop_token, pred): stop requests at every moment");
#else
    int stopped = 0;
    const int RACES = 300;
    for (int i = 0; i < RACES; i++) {
        std::stop_source src;
        std::thread w([&] {
            std::unique_lock<std::mutex> l(m);
            if (!cv.wait(l, src.get_token(), [] { return false; })) stopped++;
        });
        if (i % 3 == 1) std::this_thread::yield();
        if (i % 3 == 2) std::this_thread::sleep_for(microseconds(50));
        src.request_stop();
        w.join();
    }
    is_int(stopped, RACES, "wait(lock, stop_token, pred): %d stop requests at every moment, each one ends the wait", RACES);
#endif
    std::stop_source src;
    std::unique_lock<std::mutex> l(m);
    ok(!cv.wait_for(l, src.get_token(), milliseconds(10), [] { return false; }) && !src.stop_requested(),
       "wait_for(lock, stop_token, 10 ms, pred): times out without a stop");
#else
    skip("C++ before 20, or no std::stop_token", "the stop_token waits");
    skip("C++ before 20, or no std::stop_token", "the stop_token wait_for");
#endif
}

// ---- cancellation: a waiter cancelled in a wait leaves its lock locked again -------------
#if defined(__GLIBC__) && defined(__EXCEPTIONS) && FASTSYNC__CANCEL
struct counted_lock { // BasicLockable over std::mutex, counting
    std::mutex m;
    std::atomic<int> locks{0}, unlocks{0};
    void lock() { m.lock(); locks++; }
    void unlock() { unlocks++; m.unlock(); }
};
static void cancellation()
{
    counted_lock cl;
    fastsync::condition_variable_any cv;
    std::atomic<bool> waiting(false);
    std::thread t([&] {
        std::unique_lock<counted_lock> l(cl);
        waiting = true;
        cv.wait(l, [] { return false; });
    });
    while (!waiting) std::this_thread::yield();
    std::this_thread::sleep_for(milliseconds(20));
    pthread_cancel(t.native_handle());
    t.join();
    ok(cl.locks == cl.unlocks && cl.locks >= 2 && cl.m.try_lock(),
       "condition_variable_any: a cancelled wait relocked before unwinding (%d locks, %d unlocks)", cl.locks.load(), cl.unlocks.load());
    cl.m.unlock();
}
#else
static void cancellation() { skip("needs glibc, exceptions and cancellation", "a cancelled wait relocks"); }
#endif

// ---- shared mutexes -------------------------------------------------------------------
// A shared lock for the life of the object: std::shared_lock from C++14, and before it (C++11
// has none) a guard of the test's own.
#if __cplusplus >= 201402L
template <class M> using read_guard = std::shared_lock<M>;
#else
template <class M> class read_guard {
  public:
    explicit read_guard(M &m) : m_(m) { m_.lock_shared(); }
    ~read_guard() { m_.unlock_shared(); }
    read_guard(const read_guard &) = delete;
    read_guard &operator=(const read_guard &) = delete;

  private:
    M &m_;
};
#endif

// Holds m in a thread of its own, shared or exclusively, from the constructor's return (the
// lock is held then) until the destructor, or for `ms` milliseconds when ms >= 0.
template <class M> class holder {
  public:
    holder(M &m, bool shared, long ms = -1) : m_(m), shared_(shared), held_(false), release_(false)
    {
        t_ = std::thread([this, ms] {
            if (shared_) m_.lock_shared();
            else m_.lock();
            held_ = true;
            if (ms >= 0) std::this_thread::sleep_for(milliseconds(ms));
            else
                while (!release_) std::this_thread::sleep_for(milliseconds(1));
            if (shared_) m_.unlock_shared();
            else m_.unlock();
        });
        while (!held_) std::this_thread::yield();
    }
    ~holder()
    {
        release_ = true;
        t_.join();
    }
    holder(const holder &) = delete;
    holder &operator=(const holder &) = delete;

  private:
    M &m_;
    bool shared_;
    std::atomic<bool> held_, release_;
    std::thread t_;
};

// Readers share, writers exclude: a plain pair (a, b) that writers change together and
// readers compare, exact totals; with each of the standard's lock types, and C code
// (cxx_share.c) on the same lock.
template <class M> static void readers_and_writers(M &m, const char *what)
{
    long a = 0, b = 0;
    std::atomic<long> differ(0), reads(0);
    std::vector<std::thread> t;
    for (int i = 0; i < 2; i++) {
        t.push_back(std::thread([&] {
            for (long k = 0; k < ROUNDS; k++) {
                std::lock_guard<M> g(m);
                ++a;
                ++b;
            }
        }));
        t.push_back(std::thread([&] {
            long d = 0;
            for (long k = 0; k < ROUNDS; k++) {
                read_guard<M> r(m);
                d += a != b;
            }
            differ += d;
            reads += ROUNDS;
        }));
    }
    long c_differ = 0;
    t.push_back(std::thread([&] { c_differ = cxx_share_rw(m.native_handle(), &a, &b, ROUNDS); }));
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    ok(a == 3 * ROUNDS && b == 3 * ROUNDS && differ.load() == 0 && c_differ == 0 && reads.load() == 2 * ROUNDS,
       "%s: 2 writers (std::lock_guard) and 2 readers (%s) x %ld, and C code (native_handle) writing and "
       "reading %ld times: exact (%ld), no read saw a half-done write", what,
       __cplusplus >= 201402L ? "std::shared_lock" : "lock_shared/unlock_shared", ROUNDS, ROUNDS, a);
}

static void shared_exclusion()
{
    fastsync::shared_mutex m;
    fastsync::shared_timed_mutex tm;
    is_int((count_with<fastsync::shared_mutex, std::lock_guard<fastsync::shared_mutex>>(m)), THREADS * ROUNDS,
           "shared_mutex with std::lock_guard: %d threads x %ld, exact", THREADS, ROUNDS);
    is_int((count_with<fastsync::shared_timed_mutex, std::unique_lock<fastsync::shared_timed_mutex>>(tm)),
           THREADS * ROUNDS, "shared_timed_mutex with std::unique_lock: exact");
    readers_and_writers(m, "shared_mutex");
    readers_and_writers(tm, "shared_timed_mutex");

    // shared ownership is shared: a reader in another thread holds it, this thread gets a
    // shared lock too and no exclusive one
    {
        holder<fastsync::shared_mutex> h(m, true);
        bool shared = m.try_lock_shared();
        bool exclusive = m.try_lock();
        ok(shared && !exclusive, "shared_mutex read-held by another thread: try_lock_shared true, try_lock false");
        if (shared) m.unlock_shared();
        if (exclusive) m.unlock();
    }
    {
        holder<fastsync::shared_mutex> h(m, false);
        ok(!m.try_lock_shared() && !m.try_lock(), "shared_mutex write-held by another thread: try_lock_shared and "
                                                  "try_lock false");
    }
    ok(m.try_lock(), "released: try_lock true");
    m.unlock();

    // std::lock over two shared mutexes taken in opposite orders: no deadlock, exact
    fastsync::shared_mutex x;
    long both = 0;
    std::thread t1([&] {
        for (long k = 0; k < ROUNDS; k++) {
            std::lock(x, tm);
            ++both;
            x.unlock();
            tm.unlock();
        }
    });
    std::thread t2([&] {
        for (long k = 0; k < ROUNDS; k++) {
            std::unique_lock<fastsync::shared_timed_mutex> lb(tm, std::defer_lock);
            std::unique_lock<fastsync::shared_mutex> la(x, std::defer_lock);
            std::lock(lb, la);
            ++both;
        }
    });
    t1.join();
    t2.join();
    is_int(both, 2 * ROUNDS, "std::lock over shared_mutex and shared_timed_mutex, opposite orders: exact");
#if __cplusplus >= 201703L
    {
        std::scoped_lock<fastsync::shared_mutex, fastsync::shared_timed_mutex> g(m, tm);
        ++both;
    }
    ok(both == 2 * ROUNDS + 1 && m.try_lock() && tm.try_lock(), "std::scoped_lock over both, released");
    m.unlock();
    tm.unlock();
#else
    skip("no std::scoped_lock before C++17", "std::scoped_lock over both shared mutexes");
#endif
#if __cplusplus >= 201402L
    // condition_variable_any over a std::shared_lock: the wait releases and retakes the
    // shared lock
    fastsync::condition_variable_any cv;
    bool flag = false;
    std::atomic<int> owned(0);
    std::thread w([&] {
        std::shared_lock<fastsync::shared_mutex> l(m);
        cv.wait(l, [&] { return flag; });
        owned = l.owns_lock() && !m.try_lock() ? 1 : 2;
    });
    {
        std::unique_lock<fastsync::shared_mutex> l(m);
        flag = true;
    }
    cv.notify_all();
    w.join();
    std::shared_lock<fastsync::shared_mutex> l(m);
    bool timed_out = !cv.wait_for(l, milliseconds(10), [] { return false; });
    ok(owned.load() == 1 && timed_out && l.owns_lock(),
       "condition_variable_any over std::shared_lock<shared_mutex>: woken holding the shared lock; wait_for times "
       "out, the lock held");
#else
    skip("no std::shared_lock before C++14", "condition_variable_any over std::shared_lock<shared_mutex>");
#endif
}

// try_lock_shared fails only while a writer holds or waits: threads that only read, each
// try racing the others' CASes on the word, never see it fail.
static void shared_try_never_spurious()
{
    fastsync::shared_mutex m;
    std::atomic<long> failed(0);
    std::vector<std::thread> t;
    for (int i = 0; i < THREADS; i++)
        t.push_back(std::thread([&] {
            long f = 0;
            for (long k = 0; k < ROUNDS; k++) {
                if (m.try_lock_shared()) m.unlock_shared();
                else f++;
            }
            failed += f;
        }));
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    is_int(failed.load(), 0, "try_lock_shared by %d readers at once, no writer, x %ld: never false", THREADS, ROUNDS);
}

// downgrade: the writer's lock becomes a shared one at once, the waiting readers come in
// while it still holds it, and no writer comes in between.
static void shared_downgrade()
{
    fastsync::shared_mutex m;
    long value = 0;
    m.lock();
    std::atomic<int> inside(0);
    std::atomic<long> seen(0);
    std::vector<std::thread> t;
    for (int i = 0; i < 3; i++)
        t.push_back(std::thread([&] {
            read_guard<fastsync::shared_mutex> r(m);
            seen += value;
            inside++;
            while (inside.load() < 4) std::this_thread::yield(); // all three, and the downgrader
        }));
    std::this_thread::sleep_for(milliseconds(20)); // (asleep in lock_shared by now, or soon)
    value = 7;
    m.downgrade();
    steady_clock::time_point t0 = steady_clock::now();
    while (inside.load() < 3 && ms_since(t0) < 10000.0) std::this_thread::yield();
    bool writer_out = !m.try_lock();
    inside++;
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    m.unlock_shared();
    ok(seen.load() == 21 && writer_out && m.try_lock(),
       "downgrade: 3 waiting readers came in while the downgraded lock was held, each read the write (sum %ld), "
       "no exclusive lock until it was released", seen.load());
    m.unlock();

    // the adoption the manual shows: unique_lock, downgrade, shared_lock(adopt_lock)
#if __cplusplus >= 201402L
    {
        std::unique_lock<fastsync::shared_mutex> w(m);
        m.downgrade();
        std::shared_lock<fastsync::shared_mutex> r(*w.release(), std::adopt_lock);
        bool other_reads = false, other_writes = true;
        std::thread o([&] {
            other_reads = m.try_lock_shared();
            if (other_reads) m.unlock_shared();
            other_writes = m.try_lock();
        });
        o.join();
        ok(r.owns_lock() && !w.owns_lock() && other_reads && !other_writes,
           "unique_lock, downgrade, shared_lock(*release(), adopt_lock): another thread reads, does not write");
    }
    ok(m.try_lock(), "and the shared_lock released it");
    m.unlock();
#else
    skip("no std::shared_lock before C++14", "downgrade adopted by std::shared_lock");
    skip("no std::shared_lock before C++14", "downgrade adopted by std::shared_lock, released");
#endif

    // under load: writers that downgrade find their own write while they read it back
    long counter = 0;
    std::atomic<long> lost(0);
    std::vector<std::thread> u;
    for (int i = 0; i < 2; i++) {
        u.push_back(std::thread([&] {
            long l = 0;
            for (long k = 0; k < ROUNDS; k++) {
                m.lock();
                long mine = ++counter;
                m.downgrade();
                l += counter != mine;
                m.unlock_shared();
            }
            lost += l;
        }));
        u.push_back(std::thread([&] {
            for (long k = 0; k < ROUNDS; k++) {
                read_guard<fastsync::shared_mutex> r(m);
                (void)counter;
            }
        }));
    }
    for (size_t i = 0; i < u.size(); i++) u[i].join();
    ok(counter == 2 * ROUNDS && lost.load() == 0,
       "2 writers that downgrade x %ld, 2 readers: exact (%ld), no writer came in between a downgrade and "
       "its read", ROUNDS, counter);
}

static void shared_deadlines()
{
    fastsync::shared_timed_mutex m;
    steady_clock::time_point t0;
    double ms;
    bool got;
    {
        holder<fastsync::shared_timed_mutex> h(m, false); // held exclusively elsewhere
        t0 = steady_clock::now();
        got = m.try_lock_shared_for(milliseconds(20));
        ms = ms_since(t0);
        ok(!got && ms >= 20.0, "try_lock_shared_for(20 ms), write-held: false after %.1f ms", ms);
        t0 = steady_clock::now();
        got = m.try_lock_shared_until(system_clock::now() + milliseconds(20));
        ms = ms_since(t0);
        ok(!got && ms >= 19.0, "try_lock_shared_until(system_clock + 20 ms): false after %.1f ms", ms);
        t0 = steady_clock::now();
        got = m.try_lock_shared_until(steady_clock::now() + milliseconds(20));
        ms = ms_since(t0);
        ok(!got && ms >= 20.0, "try_lock_shared_until(steady_clock + 20 ms): false after %.1f ms", ms);
#if __cplusplus >= 201402L
        t0 = steady_clock::now();
        std::shared_lock<fastsync::shared_timed_mutex> l(m, milliseconds(20));
        ms = ms_since(t0);
        ok(!l.owns_lock() && ms >= 20.0, "std::shared_lock(m, 20 ms), write-held: not owned after %.1f ms", ms);
#else
        skip("no std::shared_lock before C++14", "std::shared_lock's timed constructor");
#endif
        t0 = steady_clock::now();
        got = m.try_lock_shared_for(seconds(-5)) || m.try_lock_shared_until(steady_clock::time_point::min()) ||
              m.try_lock_shared_until(system_clock::time_point()) ||
              m.try_lock_shared_for(duration<double>(-1e300)) || m.try_lock_shared_until(own_clock::time_point::min());
        ok(!got && ms_since(t0) < 1000.0, "try_lock_shared: negative and past deadlines, min() of a std and a "
                                          "converted clock, a huge negative double: one try each");
        jump_back("shared_timed_mutex::try_lock_shared_until",
                  [&m](jump_clock::time_point tp) { return m.try_lock_shared_until(tp); });
    }
    {
        holder<fastsync::shared_timed_mutex> h(m, true); // held shared elsewhere
        t0 = steady_clock::now();
        got = m.try_lock_for(milliseconds(20));
        ms = ms_since(t0);
        ok(!got && ms >= 20.0, "try_lock_for(20 ms), read-held: false after %.1f ms", ms);
        t0 = steady_clock::now();
        got = m.try_lock_until(system_clock::now() + milliseconds(20));
        ms = ms_since(t0);
        ok(!got && ms >= 19.0, "try_lock_until(system_clock + 20 ms): false after %.1f ms", ms);
        t0 = steady_clock::now();
        std::unique_lock<fastsync::shared_timed_mutex> l(m, steady_clock::now() + milliseconds(20));
        ms = ms_since(t0);
        ok(!l.owns_lock() && ms >= 20.0, "std::unique_lock(m, steady_clock + 20 ms), read-held: not owned after %.1f ms", ms);
        t0 = steady_clock::now();
        got = m.try_lock_for(seconds(-5)) || m.try_lock_until(steady_clock::time_point::min()) ||
              m.try_lock_until(system_clock::time_point()) || m.try_lock_until(own_clock::time_point::min());
        ok(!got && ms_since(t0) < 1000.0, "try_lock: negative and past deadlines: one try each");
        jump_back("shared_timed_mutex::try_lock_until", [&m](jump_clock::time_point tp) { return m.try_lock_until(tp); });
        t0 = steady_clock::now();
        got = m.try_lock_shared_for(seconds(5));
        ms = ms_since(t0);
        ok(got && ms < 1000.0, "try_lock_shared_for(5 s), read-held: true at once (%.1f ms)", ms);
        if (got) m.unlock_shared();
    }
    // for ever: duration::max() and time_point::max() wait for the holder, 30 ms (t0 before
    // it starts: the wait is >= 30 ms however late this thread runs)
    {
        t0 = steady_clock::now();
        holder<fastsync::shared_timed_mutex> h(m, false, 30);
        got = m.try_lock_shared_for(nanoseconds::max());
        ms = ms_since(t0);
        ok(got && ms >= 25.0, "try_lock_shared_for(nanoseconds::max()) waits for the unlock: true after %.1f ms", ms);
        if (got) m.unlock_shared();
    }
    {
        holder<fastsync::shared_timed_mutex> h(m, false, 30);
        got = m.try_lock_shared_until(steady_clock::time_point::max());
        ok(got, "try_lock_shared_until(steady_clock::time_point::max()) waits: true");
        if (got) m.unlock_shared();
    }
    {
        holder<fastsync::shared_timed_mutex> h(m, true, 30);
        got = m.try_lock_for(hours::max());
        ok(got, "try_lock_for(hours::max()), read-held, waits: true");
        if (got) m.unlock();
    }
    {
        holder<fastsync::shared_timed_mutex> h(m, true, 30);
        got = m.try_lock_until(system_clock::time_point::max());
        ok(got, "try_lock_until(system_clock::time_point::max()), read-held, waits: true");
        if (got) m.unlock();
    }
}

// The reader limit (white-box: 2^20 - 1 shared locks set in the word): the standard has the
// excess readers block until the count falls, not fail or throw.
static void shared_limit()
{
    fastsync::shared_timed_mutex m;
    const unsigned long max = FASTSYNC_RWLOCK_READERS_MAX;
    cxx_share_rw_force_readers(m.native_handle(), max);
    ok(!m.try_lock_shared(), "at FASTSYNC_RWLOCK_READERS_MAX shared locks: try_lock_shared false");
    steady_clock::time_point t0 = steady_clock::now();
    bool got = m.try_lock_shared_for(milliseconds(20)) || m.try_lock_shared_until(steady_clock::now() + milliseconds(20));
    double ms = ms_since(t0);
    ok(!got && ms >= 40.0, "try_lock_shared_for and _until(20 ms) at the limit: false after %.1f ms", ms);
    ok(!m.try_lock_shared_for(seconds(-1)), "try_lock_shared_for(-1 s) at the limit: false");
    std::atomic<int> in(0);
    std::thread r([&] {
        m.lock_shared();
        in = 1;
    });
    bool timed = false;
    std::thread tr([&] { timed = m.try_lock_shared_for(seconds(30)); });
    std::this_thread::sleep_for(milliseconds(30));
    int early = in.load();
    is_int(fastsync_rwlock_rdunlock(m.native_handle()), 0, "one shared lock released (C)");
    is_int(fastsync_rwlock_rdunlock(m.native_handle()), 0, "another released (C)");
    r.join();
    tr.join();
    ok(early == 0 && in.load() == 1 && timed && cxx_share_rw_readers(m.native_handle()) == max,
       "lock_shared and try_lock_shared_for(30 s) at the limit wait until shared locks are released, then get in "
       "(the count at the limit again)");
    cxx_share_rw_force_readers(m.native_handle(), 0);
}

// ---- once_flag and call_once ----------------------------------------------------------
static_assert(same_layout<fastsync::once_flag, fastsync_once_t>::value, "once_flag");
static_assert(!std::is_copy_constructible<fastsync::once_flag>::value && !std::is_copy_assignable<fastsync::once_flag>::value &&
                  !std::is_move_constructible<fastsync::once_flag>::value && !std::is_move_assignable<fastsync::once_flag>::value,
              "once_flag: neither copied nor moved (as std::once_flag)");
static_assert(std::is_nothrow_default_constructible<fastsync::once_flag>::value &&
                  std::is_trivially_destructible<fastsync::once_flag>::value,
              "once_flag() noexcept, trivial destructor");
static CONSTANT fastsync::once_flag constant_once;

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define ONCE_EXCEPTIONS 1
#else
#define ONCE_EXCEPTIONS 0
#endif

// Yields until o's state field reads `state` (cxx_share_once_state: 2, an initialiser runs
// and another caller has registered to sleep).
inline void once_wait_state(fastsync::once_flag &o, unsigned state) // (unused where both callers are skipped)
{
    while (cxx_share_once_state(o.native_handle()) != state) std::this_thread::yield();
}

// Exactly one call per flag among THREADS threads calling it together, over many flags; each
// caller, once call_once returns, sees the write of the call that ran (a plain int: the
// commit's release and the callers' acquire order it, which TSan checks).
static void once_exactly()
{
    const int FLAGS = 500;
    std::unique_ptr<fastsync::once_flag[]> flags(new fastsync::once_flag[FLAGS]);
    std::unique_ptr<int[]> runs(new int[FLAGS]());
    // ready: a start gate, only to bring the threads together (what they share is ordered by
    // call_once); stale: read after the joins. Their order (seq_cst) matters to no result.
    std::atomic<int> ready(0), stale(0);
    std::vector<std::thread> t;
    for (int k = 0; k < THREADS; k++)
        t.push_back(std::thread([&] {
            ready++;
            while (ready.load() < THREADS) std::this_thread::yield(); // all at once
            int bad = 0;
            fastsync::call_once(constant_once, [&] { ++runs[0]; });
            for (int i = 1; i < FLAGS; i++) {
                fastsync::call_once(flags[i], [&runs, i] { ++runs[i]; });
                bad += runs[i] != 1;
            }
            stale += bad;
        }));
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    long total = 0, wrong = 0;
    for (int i = 0; i < FLAGS; i++) {
        total += runs[i];
        wrong += runs[i] != 1;
    }
    ok(total == FLAGS && wrong == 0 && stale.load() == 0,
       "call_once: %d threads on %d flags (one of them constant-initialized): each f ran once (%ld calls), every "
       "caller saw its write",
       THREADS, FLAGS, total);
}

#if ONCE_EXCEPTIONS
// An f that throws leaves the flag as if never called: the exception reaches its caller,
// and the next caller runs f. One thread: K throws, then the success, then no more calls.
// Then THREADS threads together (GCC bug 66146 is libstdc++'s hang here): each throwing f
// first waits until another caller has registered to sleep (the state word says WAITED), so
// every abort has a sleeper to wake, who must then run f.
static void once_exceptions()
{
    {
        const int K = 3;
        fastsync::once_flag f;
        int calls = 0, caught = 0, caught_sum = 0;
        for (int i = 0; i < K + 3; i++) {
            try {
                fastsync::call_once(f, [&calls] {
                    if (++calls <= K) throw calls;
                });
            } catch (int n) {
                caught++;
                caught_sum += n;
            }
        }
        ok(calls == K + 1 && caught == K && caught_sum == K * (K + 1) / 2 &&
               cxx_share_once_state(f.native_handle()) == 3,
           "call_once: f threw %d times, each exception reached its caller, the next caller ran f; then done and "
           "no more calls (%d calls)",
           K, calls);
    }
    {
        const int K = THREADS - 1; // each throw ends one caller; one is left to succeed
        fastsync::once_flag f;
        int calls = 0; // plain: each f's write happens before the next f (abort, then begin)
        // ready: a start gate; inside: the fs running now, whose RMWs (atomic, in one order
        // on it) say whether two overlapped; the counts are read after the joins. None orders
        // anything else: seq_cst or not, no result changes.
        std::atomic<int> ready(0), caught(0), returned(0), inside(0), overlap(0);
        std::vector<std::thread> t;
        for (int k = 0; k < THREADS; k++)
            t.push_back(std::thread([&] {
                ready++;
                while (ready.load() < THREADS) std::this_thread::yield();
                try {
                    fastsync::call_once(f, [&] {
                        if (inside++ != 0) overlap++;
                        int n = ++calls;
                        if (n <= K) {
                            once_wait_state(f, 2); // another caller sleeps, or is about to
                            inside--;
                            throw n;
                        }
                        inside--;
                    });
                    returned++;
                } catch (int) {
                    caught++;
                }
            }));
        for (size_t i = 0; i < t.size(); i++) t[i].join();
        ok(calls == K + 1 && caught.load() == K && returned.load() == THREADS - K && overlap.load() == 0,
           "call_once, %d threads: %d throws, each with a caller asleep, then one success (%d calls, never two at "
           "once); %d callers caught, %d returned",
           THREADS, K, calls, caught.load(), returned.load());
    }
}
#else
static void once_exceptions()
{
    skip("built without exceptions", "call_once: throws, then the next caller runs f");
    skip("built without exceptions", "call_once: throws with sleepers among threads");
}
#endif

// The arguments go to f as std::invoke takes them: forwarded, not copied (LWG 2442): a
// move-only one, an lvalue reference and an rvalue one; f itself forwarded (an rvalue-only
// call operator); pointers to members, on an object, a pointer, a reference_wrapper, a
// derived object; a data member; f's result dropped.
struct once_obj {
    int n;
    int data;
    once_obj() : n(0), data(0) {}
    void add(int k) { n += k; }
    int get() const { return n; }
};
struct once_derived : once_obj {};
struct rvalue_call {
    int *out;
    void operator()() && { *out = 1; }
};
static void once_arguments()
{
    fastsync::once_flag f1, f2, f3, f4, f5, f6, f7, f8, f9, f10;
    std::unique_ptr<int> p(new int(5));
    int got = 0;
    fastsync::call_once(f1, [&got](std::unique_ptr<int> q) { got = *q; }, std::move(p));
    int a = 0, b = 0;
    fastsync::call_once(f2, [](int &x, int &&y) { x = 1; y = 2; }, a, std::move(b));
    int r = 0;
    fastsync::call_once(f3, rvalue_call{&r});
    ok(got == 5 && !p && a == 1 && b == 2 && r == 1,
       "call_once forwards: a move-only argument (moved into f), int& and int&& (not copies), an rvalue-only f");
    once_obj o;
    once_derived d;
    fastsync::call_once(f4, &once_obj::add, o, 1);
    fastsync::call_once(f5, &once_obj::add, &o, 2);
    fastsync::call_once(f6, &once_obj::add, std::ref(o), 4);
    fastsync::call_once(f7, &once_obj::add, d, 8);
    fastsync::call_once(f8, &once_obj::get, o);
    fastsync::call_once(f9, &once_obj::data, o);
    fastsync::call_once(f10, [] { return 42; });
    fastsync::call_once(f4, &once_obj::add, o, 100); // done: not called
    ok(o.n == 7 && d.n == 8,
       "call_once with a member function: on the object (not a copy), a pointer, std::ref, a derived object; a "
       "const one, a data member, a result dropped (n = %d)", o.n);
}

// Compiled, not run: a reference_wrapper whose type names an incomplete one (libstdc++'s PR
// 60497, as C++11 and 14 too, where call_once's INVOKE is fastsync.hpp's own): nothing may
// instantiate once_box<once_incomplete> (an unqualified call would, looking for its
// associated classes). inline, not static: no warning that it is not called.
struct once_incomplete;
template <class T> struct once_box {
    T t;
};
inline void once_take_box(std::unique_ptr<once_box<once_incomplete>> &) {}
inline void once_incomplete_argument(std::unique_ptr<once_box<once_incomplete>> &p)
{
    fastsync::once_flag o;
    fastsync::call_once(o, once_take_box, std::ref(p));
}

// C code on the same object: fastsync_once on native_handle() sees a call_once done, and
// call_once sees a fastsync_once done.
static void once_with_c()
{
    fastsync::once_flag f, g;
    int cpp = 0, c = 0;
    fastsync::call_once(f, [&cpp] { ++cpp; });
    int r1 = cxx_share_once(f.native_handle(), &c);
    int r2 = cxx_share_once(g.native_handle(), &c);
    fastsync::call_once(g, [&cpp] { ++cpp; });
    ok(r1 == 0 && r2 == 0 && cpp == 1 && c == 1,
       "once_flag and C code: fastsync_once on native_handle() skips a flag call_once did, call_once skips one "
       "fastsync_once did");
}

// A thread cancelled inside f gives the flag up: a caller asleep on it wakes and runs f. With
// exceptions on glibc, call_once's catch (...) sees the cancellation's unwinding; without
// exceptions, fastsync_once's cleanup handler runs, whether or not the waits are cancellation
// points (cxx_api_cxx11_noexcept_nocancel: FASTSYNC_NO_CANCEL; issue 32, item 4). Wherever
// threads can be cancelled (not bionic).
#if defined(__unix__) && !defined(__BIONIC__) && (defined(__GLIBC__) || !ONCE_EXCEPTIONS)
#if defined(__SANITIZE_ADDRESS__)
#define ONCE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ONCE_ASAN 1
#endif
#endif
#if defined(ONCE_ASAN)
#include <sanitizer/asan_interface.h>
#endif
// As harness.h's test_cwaiter_unpoison (a C header, which C++ cannot include): without
// exceptions the C library unwinds the cancelled thread without telling AddressSanitizer,
// and the redzones of the frames it drops (call_once's, this test's) stay poisoned until the
// thread's exit trips over them (google/sanitizers issue 1399). The thread's outermost
// cleanup clears the shadow of its whole stack.
static void once_unpoison(void *)
{
#if defined(ONCE_ASAN)
    pthread_attr_t a;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    if (pthread_attr_getstack(&a, &lo, &size) == 0) __asan_unpoison_memory_region(lo, size);
    pthread_attr_destroy(&a);
#endif
}
static void *once_cancelled_thread(void *arg)
{
    fastsync::once_flag *f = static_cast<fastsync::once_flag *>(arg);
    pthread_cleanup_push(once_unpoison, nullptr);
    fastsync::call_once(*f, [f] {
        once_wait_state(*f, 2); // the other caller sleeps, or is about to
        pthread_cancel(pthread_self());
        pthread_testcancel(); // acts here
    });
    pthread_cleanup_pop(0);
    return nullptr; // not reached
}
static void once_cancel()
{
    fastsync::once_flag f;
    int runs = 0;
    pthread_t t;
    if (pthread_create(&t, nullptr, once_cancelled_thread, &f) != 0) bail("pthread_create");
    once_wait_state(f, 1);             // t runs f
    fastsync::call_once(f, [&runs] { ++runs; }); // sleeps until t's f is cancelled, then runs f
    void *res = nullptr;
    pthread_join(t, &res);
    ok(res == PTHREAD_CANCELED && runs == 1 && cxx_share_once_state(f.native_handle()) == 3,
       "call_once: a thread cancelled inside f gave the flag up (%s); the caller asleep on it ran f",
       ONCE_EXCEPTIONS ? "catch (...), rethrown" : "fastsync_once's cleanup handler");
}
#else
static void once_cancel() { skip("needs cancellation, and glibc where exceptions are on", "call_once: a cancelled f"); }
#endif

// A process-shared flag in shared memory: the child calls it, the parent then finds it done.
static void once_process_shared()
{
#if FASTSYNC_HAS_SHARED && defined(__linux__)
    struct area {
        fastsync::once_flag f;
        int runs;
        area() : f(fastsync::process_shared), runs(0) {}
    };
    void *mem = mmap(nullptr, sizeof(area), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) bail("mmap");
    area *x = new (mem) area;
    pid_t pid = fork();
    if (pid == 0) {
        fastsync::call_once(x->f, [x] { ++x->runs; });
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    fastsync::call_once(x->f, [x] { x->runs += 10; });
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && x->runs == 1,
       "process_shared once_flag across fork: the child's call ran f, the parent's found it done");
    x->~area();
    munmap(mem, sizeof(area));
#else
    skip("no FASTSYNC_SHARED on this backend", "a process_shared once_flag across fork");
#endif
}

// ---- process-shared objects across fork -----------------------------------------------
static void process_shared()
{
#if FASTSYNC_HAS_SHARED && defined(__linux__)
    struct area {
        fastsync::mutex m;
        fastsync::counting_semaphore<> s;
        long counter;
        area() : m(fastsync::process_shared), s(0, fastsync::process_shared), counter(0) {}
    };
    void *mem = mmap(nullptr, sizeof(area), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) bail("mmap");
    area *a = new (mem) area;
    pid_t pid = fork();
    if (pid == 0) {
        for (long k = 0; k < ROUNDS; k++) {
            std::lock_guard<fastsync::mutex> g(a->m);
            ++a->counter;
        }
        a->s.release();
        _exit(0);
    }
    for (long k = 0; k < ROUNDS; k++) {
        std::lock_guard<fastsync::mutex> g(a->m);
        ++a->counter;
    }
    bool got = a->s.try_acquire_for(seconds(30));
    int status = 0;
    waitpid(pid, &status, 0);
    ok(got && a->counter == 2 * ROUNDS && WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "process_shared mutex and semaphore across fork: exact count %ld, the child's release taken", a->counter);
    a->~area();
    munmap(mem, sizeof(area));
#if PTRDIFF_MAX > INT_MAX
    // the wide kind: the parent asleep on 0, the child's release of INT_MAX + 5 wakes it
    mem = mmap(nullptr, sizeof(wide_sem), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) bail("mmap");
    wide_sem *w = new (mem) wide_sem(0, fastsync::process_shared);
    pid = fork();
    if (pid == 0) {
        if (!until_registered(*w)) _exit(1);
        w->release(static_cast<std::ptrdiff_t>(INT_MAX) + 5);
        _exit(0);
    }
    w->acquire();
    status = 0;
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && counters(*w, INT_MAX, 4),
       "process_shared wide semaphore across fork: an acquire asleep on 0 woken by the child's release(INT_MAX + 5); "
       "INT_MAX + 4 left");
    w->~wide_sem();
    munmap(mem, sizeof(wide_sem));
#endif
#else
    skip("no FASTSYNC_SHARED on this backend", "process_shared objects across fork");
#endif
}

// A process-shared shared_timed_mutex: a reader asleep in the child woken by the parent's
// unlock, and a writer asleep in the parent by the child's; then both processes write
// (std::lock_guard; lock, then downgrade and read back) and read (a timed shared lock) a
// pair in shared memory.
static void process_shared_rw()
{
#if FASTSYNC_HAS_SHARED && defined(__linux__)
    struct area {
        fastsync::shared_timed_mutex m;
        long a, b;
        area() : m(fastsync::process_shared), a(0), b(0) {}
    };
    void *mem = mmap(nullptr, sizeof(area), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) bail("mmap");
    area *x = new (mem) area;
    // rounds k % 3: 0 a write, 1 a read, 2 a write read back after a downgrade; the number
    // of reads that saw a half-done write or another writer's
    auto rounds = [x]() -> long {
        long bad = 0;
        for (long k = 0; k < ROUNDS; k++) {
            if (k % 3 == 0) {
                std::lock_guard<fastsync::shared_timed_mutex> g(x->m);
                ++x->a;
                ++x->b;
            } else if (k % 3 == 1) {
                if (!x->m.try_lock_shared_for(seconds(30))) return -1;
                bad += x->a != x->b;
                x->m.unlock_shared();
            } else {
                x->m.lock();
                long mine = ++x->a;
                ++x->b;
                x->m.downgrade();
                bad += x->a != mine || x->b != mine;
                x->m.unlock_shared();
            }
        }
        return bad;
    };
    long writes = 0;
    for (long k = 0; k < ROUNDS; k++) writes += k % 3 != 1;
    x->m.lock();
    pid_t pid = fork();
    if (pid == 0) {
        steady_clock::time_point t0 = steady_clock::now();
        bool got = x->m.try_lock_shared_for(seconds(20)); // until the parent's unlock
        if (!got || ms_since(t0) > 10000.0) _exit(2);
        std::this_thread::sleep_for(milliseconds(100));
        x->m.unlock_shared();
        _exit(rounds() == 0 ? 0 : 1);
    }
    std::this_thread::sleep_for(milliseconds(100)); // the child asleep (normally)
    x->m.unlock();
    steady_clock::time_point t0 = steady_clock::now();
    while (cxx_share_rw_readers(x->m.native_handle()) == 0 && ms_since(t0) < 10000.0) std::this_thread::yield();
    t0 = steady_clock::now();
    bool got = x->m.try_lock_for(seconds(20)); // until the child's unlock_shared
    double ms = ms_since(t0);
    if (got) x->m.unlock();
    long bad = rounds();
    int status = 0;
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) != 2 && got && ms < 10000.0,
       "process_shared shared_timed_mutex across fork: a reader asleep in the child let in by the parent's unlock, "
       "a writer asleep in the parent by the child's unlock_shared (after %.1f ms)", ms);
    ok(bad == 0 && x->a == 2 * writes && x->b == 2 * writes && WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "and writes, timed reads and downgrades in both processes: exact (%ld), every read whole", x->a);
    x->~area();
    munmap(mem, sizeof(area));
#else
    skip("no FASTSYNC_SHARED on this backend", "a process_shared shared_timed_mutex across fork: wakes");
    skip("no FASTSYNC_SHARED on this backend", "a process_shared shared_timed_mutex across fork: exact");
#endif
}

// ---- latch and barrier ------------------------------------------------------------------
static_assert(same_layout<fastsync::latch, fastsync_latch_t>::value, "latch");
static_assert(same_layout<fastsync::barrier<>, fastsync_barrier_t>::value, "barrier<>");
static_assert(!std::is_copy_constructible<fastsync::latch>::value && !std::is_copy_assignable<fastsync::latch>::value &&
                  !std::is_copy_constructible<fastsync::barrier<>>::value &&
                  !std::is_copy_assignable<fastsync::barrier<>>::value,
              "latch, barrier: not copied");
static_assert(!std::is_convertible<std::ptrdiff_t, fastsync::latch>::value &&
                  !std::is_convertible<std::ptrdiff_t, fastsync::barrier<>>::value,
              "latch, barrier: explicit constructors");
static_assert(fastsync::latch::max() == FASTSYNC_LATCH_MAX && fastsync::barrier<>::max() == FASTSYNC_BARRIER_MAX,
              "latch, barrier: max()");
static CONSTANT fastsync::latch constant_latch(2);
static CONSTANT fastsync::barrier<> constant_barrier(1);

// A barrier's completion that counts its runs (the phase that ended) in a plain long, and
// checks that it sees every thread's write for that phase; every 50th phase it sleeps 2 ms,
// so that a thread of the phase that returned before it ran would read the count short.
struct phase_counter {
    long *phases;     // runs so far
    long (*slots)[4]; // slots[r % 2][i]: thread i's round r, written before it arrives
    int threads;
    long *bad;        // runs that did not find every slot at the round
    void operator()() noexcept
    {
        long r = *phases;
        for (int i = 0; i < threads; i++) *bad += slots[r % 2][i] != r;
        if (r % 50 == 0) std::this_thread::sleep_for(milliseconds(2));
        ++*phases;
    }
};

static void latch_points()
{
    fastsync::latch l(1);
    static_assert(noexcept(l.count_down()) && noexcept(l.try_wait()) && noexcept(l.add()), "latch noexcept");
    static_assert(!noexcept(l.wait()) && !noexcept(l.arrive_and_wait()) && !noexcept(l.wait_for(seconds(1))),
                  "latch waits: cancellation points");
    fastsync::barrier<> b(1);
    static_assert(noexcept(b.arrive_and_wait()), "barrier::arrive_and_wait noexcept (no cancellation point)");
    ok(!constant_latch.try_wait() && (constant_latch.count_down(2), constant_latch.try_wait()),
       "constant-initialized latch(2): closed, open after count_down(2)");
    constant_barrier.arrive_and_wait();
    constant_barrier.arrive_and_wait();
    ok(true, "constant-initialized barrier<>(1): two phases, each at once");
    fastsync::latch zero(0);
    ok(zero.try_wait() && zero.wait_for(seconds(0)), "latch(0): open");
}

// THREADS counters x K count_down(1) each, with 3 waiters: the latch stays closed with 2
// left (no waiter has returned), then count_down(1) and arrive_and_wait(1) open it; every
// waiter returns and sees every counter's writes (plain longs: the count_downs' release and
// the waits' acquire order them).
static void latch_totals()
{
    static const long K = 2000;
    static const int WAITERS = 3;
    fastsync::latch l(THREADS * K + 2);
    std::vector<long> last(THREADS, 0);
    // returned: how many waiters returned; seen: how many saw every counter's last write.
    // seq_cst: only counted, and read after the joins or as a poll (a waiter that returned
    // too early is caught by the poll, or by seen after the joins)
    std::atomic<int> returned(0), seen(0);
    std::vector<std::thread> w, c;
    for (int i = 0; i < WAITERS; i++)
        w.push_back(std::thread([&] {
            l.wait();
            returned++;
            bool all = true;
            for (int k = 0; k < THREADS; k++) all = all && last[k] == K;
            seen += all;
        }));
    for (int i = 0; i < THREADS; i++)
        c.push_back(std::thread([&l, &last, i] {
            for (long k = 1; k <= K; k++) {
                last[i] = k;
                l.count_down();
            }
        }));
    for (size_t i = 0; i < c.size(); i++) c[i].join();
    bool closed = !l.try_wait() && returned.load() == 0;
    l.count_down(1);
    closed = closed && !l.try_wait() && fastsync_latch_trywait(l.native_handle()) == EAGAIN && returned.load() == 0;
    l.arrive_and_wait(1);
    for (size_t i = 0; i < w.size(); i++) w[i].join();
    ok(closed && l.try_wait() && returned.load() == WAITERS && seen.load() == WAITERS,
       "latch(%ld): %d threads x %ld count_down with %d waiters: closed at 2 and 1 left, open at 0, every waiter "
       "returned (%d) and saw every count_down's write (%d)",
       THREADS * K + 2, THREADS, K, WAITERS, returned.load(), seen.load());
    fastsync::latch m(5);
    std::thread t([&m] { m.count_down(3); });
    m.arrive_and_wait(2);
    t.join();
    ok(m.try_wait(), "latch(5): count_down(3) in a thread and arrive_and_wait(2): open");
}

// The timed waits: on a closed latch they time out, not before their deadline; duration::max()
// and time_point::max() wait for the count_down; past deadlines are one try.
static void latch_deadlines()
{
    fastsync::latch l(1);
    steady_clock::time_point t0 = steady_clock::now();
    bool got = l.wait_for(milliseconds(20));
    double ms = ms_since(t0);
    ok(!got && ms >= 20.0, "latch::wait_for(20 ms), closed: false after %.1f ms", ms);
    t0 = steady_clock::now();
    got = l.wait_until(steady_clock::now() + milliseconds(20));
    ms = ms_since(t0);
    ok(!got && ms >= 20.0, "latch::wait_until(steady_clock + 20 ms): false after %.1f ms", ms);
    t0 = steady_clock::now();
    got = l.wait_until(system_clock::now() + milliseconds(20));
    ms = ms_since(t0);
    ok(!got && ms >= 19.0, "latch::wait_until(system_clock + 20 ms): false after %.1f ms", ms);
    t0 = steady_clock::now();
    got = l.wait_until(own_clock::now() + milliseconds(20));
    ms = ms_since(t0);
    ok(!got && ms >= 20.0, "latch::wait_until(a clock of its own + 20 ms): false after %.1f ms", ms);
    t0 = steady_clock::now();
    got = l.wait_for(seconds(-5)) || l.wait_until(steady_clock::time_point::min()) ||
          l.wait_until(system_clock::time_point()) || l.wait_until(own_clock::time_point::min()) ||
          l.wait_for(duration<double>(-1e300));
    ok(!got && ms_since(t0) < 1000.0, "latch: negative and past deadlines, min(): one try each, false");
    jump_back("latch::wait_until", [&l](jump_clock::time_point tp) { return l.wait_until(tp); });
    // (t0 before the thread that counts down 30 ms after its start: the wait is >= 30 ms)
    t0 = steady_clock::now();
    std::thread c([&l] {
        std::this_thread::sleep_for(milliseconds(30));
        l.count_down();
    });
    got = l.wait_for(nanoseconds::max());
    ms = ms_since(t0);
    c.join();
    ok(got && ms >= 25.0, "latch::wait_for(nanoseconds::max()) waits for the count_down: true after %.1f ms", ms);
    fastsync::latch l2(1), l3(1), l4(1);
    std::thread c2([&] {
        std::this_thread::sleep_for(milliseconds(30));
        l2.count_down();
        l3.count_down();
        l4.count_down();
    });
    got = l2.wait_for(hours::max()) && l3.wait_until(system_clock::time_point::max()) &&
          l4.wait_until(own_clock::time_point::max());
    c2.join();
    ok(got, "latch: wait_for(hours::max()), wait_until(system_clock and a converted clock's time_point::max()): "
            "for ever, true at the count_down");
    ok(l.wait_for(seconds(0)) && l.wait_until(steady_clock::time_point::min()),
       "an open latch: a zero or past deadline is true");
}

// add (fastsync's own): a wait group used twice; wait_any over a latch, fastsync::latch and C's;
// C code counting down and waiting on the same latch.
static void latch_add_any_and_c()
{
    fastsync::latch wg(0);
    bool open0 = wg.try_wait();
    int work[2][3] = {{0, 0, 0}, {0, 0, 0}}; // each worker's result, a plain int per use
    int seen = 0;
    for (int use = 0; use < 2; use++) {
        wg.add(3);
        std::vector<std::thread> t;
        for (int i = 0; i < 3; i++)
            t.push_back(std::thread([&wg, &work, use, i] {
                work[use][i] = 10 * use + i + 1;
                wg.count_down();
            }));
        wg.wait(); // every wait on this use returns before the next add
        for (int i = 0; i < 3; i++) seen += work[use][i] == 10 * use + i + 1;
        for (size_t i = 0; i < t.size(); i++) t[i].join();
    }
    wg.add(1);
    ok(open0 && seen == 6 && !wg.try_wait() && (wg.count_down(), wg.try_wait()),
       "latch as a wait group: open at 0; add(3), 3 workers count down, the wait sees their results (%d of 6), "
       "twice; add(1) closes it again",
       seen);

    fastsync::latch l(1);
    fastsync::event e;
    fastsync::counting_semaphore<> sem(0);
    fastsync_latch_t cl;
    fastsync_latch_init(&cl, 1, 0);
    is_int(fastsync::try_wait_any(l, e, cl), -1, "try_wait_any(latch, event, C latch), none ready: -1");
    is_int(fastsync::wait_any_for(milliseconds(5), l, cl), -1, "wait_any_for(5 ms) over two closed latches: -1");
    std::thread c([&l] {
        std::this_thread::sleep_for(milliseconds(20));
        l.count_down();
    });
    is_int(fastsync::wait_any(sem, l, cl), 1, "wait_any(sem, latch, C latch): the latch's count_down wins");
    c.join();
    ok(l.try_wait() && !sem.try_acquire(), "the latch left open (reported, not changed), no token taken");
    (void)fastsync_latch_count_down(&cl, 1);
    is_int(fastsync::wait_any(sem, cl), 1, "wait_any(sem, C latch at 0): the C latch");
    ok(fastsync_latch_destroy(&cl) == 0, "no waiter left registered on the C latch");

    // C code on the same latch: a C thread waits, C and C++ count it down
    fastsync::latch s(2);
    int c_ret = -1;
    std::thread cw([&s, &c_ret] { c_ret = cxx_share_latch_wait(s.native_handle()); });
    while (cxx_share_latch_waiters(s.native_handle()) == 0) std::this_thread::yield(); // registered
    int r1 = cxx_share_latch_count_down(s.native_handle(), 1);
    bool closed = !s.try_wait();
    s.count_down();
    cw.join();
    int r2 = cxx_share_latch_count_down(s.native_handle(), 1); // below 0: EINVAL, unchanged
    ok(r1 == 0 && closed && c_ret == 0 && s.try_wait() && r2 == EINVAL,
       "latch and C code: a C waiter (native_handle) released by a C count_down and a C++ one; a C count_down "
       "below 0 is EINVAL");
}

#if defined(__linux__)
// A latch destroyed by the thread whose count_down opened it, while the waiter that count_down
// woke is held in a signal handler, still registered, until 50 ms after the destruction
// began: the destructor must wait for it to leave (the C destroy says EBUSY), not give up or
// touch nothing while the waiter still reads and writes the latch, which lies at the end of
// a page unmapped as it returns. The handler says when it ends (2); the destructor must
// return after that, whatever the scheduling (issue 32, item 8: the handler held it 50 ms
// from its start, and the point needed this thread at the count_down within 30 ms of that).
// seq_cst (both flags): polled across threads; what they order is read after a join
static std::atomic<int> latch_in_handler(0); // 1 in the handler, 2 it has ended
static std::atomic<bool> latch_destroying(false);
static void latch_slow_handler(int)
{
    latch_in_handler.store(1);
    while (!latch_destroying.load()) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, nullptr);
    }
    struct timespec d = {0, 50000000};
    while (nanosleep(&d, &d) != 0) {
    }
    latch_in_handler.store(2);
}
static void latch_destroy_slow_waiter()
{
    long page = sysconf(_SC_PAGESIZE);
    char *mem = static_cast<char *>(mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (mem == MAP_FAILED) bail("mmap");
    fastsync::latch *l = new (mem + page - sizeof(fastsync::latch)) fastsync::latch(1);
    struct sigaction sa = {};
    sa.sa_handler = latch_slow_handler;
    sigaction(SIGUSR2, &sa, nullptr);
    std::thread w([l] { l->wait(); });
    while (cxx_share_latch_waiters(l->native_handle()) == 0) std::this_thread::yield(); // registered
    pthread_kill(w.native_handle(), SIGUSR2);
    // (a sanitizer may defer the handler while the thread sleeps: then it proves nothing)
    steady_clock::time_point h0 = steady_clock::now();
    while (latch_in_handler.load() == 0 && ms_since(h0) < 3000.0) std::this_thread::yield();
    bool held = latch_in_handler.load() != 0;
    steady_clock::time_point t0 = steady_clock::now();
    l->count_down();
    unsigned still = cxx_share_latch_waiters(l->native_handle());
    latch_destroying.store(true); // the handler holds the waiter 50 ms from here
    l->~latch();
    double ms = ms_since(t0);
    int handler_at_return = latch_in_handler.load();
    munmap(mem, static_cast<size_t>(page));
    w.join(); // a touch of the unmapped page would have been a SIGSEGV
    if (held)
        ok(still == 1 && handler_at_return == 2, "latch destroyed right after the count_down that opened it, its "
                                                 "waiter held in a signal handler: the destructor returned after "
                                                 "the handler had ended (%.1f ms)", ms);
    else
        skip("the signal handler did not run while the waiter slept (deferred by the sanitizer)",
             "a latch's destructor waits for a slow released waiter");
    sa.sa_handler = SIG_DFL;
    sigaction(SIGUSR2, &sa, nullptr);
}

// std::latch's own pattern: two threads arrive_and_wait on a latch(2), and the one that
// returns first destroys it and unmaps its page at once, while the other may still be in its
// call ("~latch may be called even if some threads have not yet returned from invocations of
// wait on this object, provided that they are unblocked"). arrive_and_wait counts a thread
// down and in with one CAS, so the destructor waits for it. 200 rounds, each on a fresh
// page; before issue 32's fix (arrive_and_wait as count_down, then wait) the other thread's
// wait could start after the unmap: a SIGSEGV (or, with the page mapped again, a registration
// in a new object at the same address).
static void latch_arrive_destroy()
{
    long page = sysconf(_SC_PAGESIZE);
    int rounds = 0;
    for (int r = 0; r < 200; r++) {
        char *mem = static_cast<char *>(mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (mem == MAP_FAILED) bail("mmap");
        fastsync::latch *l = new (mem + page - sizeof(fastsync::latch)) fastsync::latch(2);
        std::atomic<char *> gone(nullptr); // seq_cst: the page, once the first one back unmapped it
        auto both = [l, mem, page, &gone] {
            l->arrive_and_wait();
            char *expected = nullptr;
            if (gone.compare_exchange_strong(expected, mem)) { // the first back destroys at once
                l->~latch();
                munmap(mem, static_cast<size_t>(page));
            }
        };
        std::thread t(both);
        both();
        t.join(); // a touch of the unmapped page would have been a SIGSEGV
        rounds += gone.load() == mem;
    }
    is_int(rounds, 200, "latch(2), two threads arrive_and_wait, the first back destroys it and unmaps its page at "
                        "once: 200 rounds, the other never touched it after");
}
#else
static void latch_destroy_slow_waiter() { skip("needs Linux (mmap, signals)", "a latch's destructor waits for a slow released waiter"); }
static void latch_arrive_destroy() { skip("needs Linux (mmap)", "a latch destroyed by the first of two arrive_and_wait"); }
#endif

// Barrier phases: THREADS threads x R phases, each thread writing its slot of the phase
// before arrive_and_wait and reading all of them after (slots[r % 2]: a slot is written again
// only two phases later, after every reader of it has arrived in the phase between). With a
// completion (phase_counter): it runs once per phase, sees every slot, and every thread of
// the phase reads its count at r + 1 after returning (so it ran before any of them returned;
// it sleeps 2 ms every 50th phase to make a late run show).
// split: the odd threads arrive (arrive()) and then wait on their token, instead of
// arrive_and_wait.
template <class Barrier>
static void barrier_phases(const char *what, Barrier &b, long *phases, long (*slots)[4], bool split = false)
{
    static const long R = 1000;
    std::atomic<long> bad(0); // seq_cst: a sum read after the joins
    std::vector<std::thread> t;
    for (int i = 0; i < THREADS; i++)
        t.push_back(std::thread([&b, &bad, phases, slots, i, split] {
            long mine = 0;
            for (long r = 0; r < R; r++) {
                slots[r % 2][i] = r;
                if (split && i % 2 == 1)
                    b.wait(b.arrive());
                else
                    b.arrive_and_wait();
                for (int k = 0; k < THREADS; k++) mine += slots[r % 2][k] != r;
                if (phases) mine += *phases != r + 1;
            }
            bad += mine;
        }));
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    ok(bad.load() == 0 && (!phases || *phases == R),
       "%s%s: %d threads x %ld phases: every thread read every slot of its phase%s (%ld wrong reads)", what,
       split ? " (odd threads: arrive, then wait(token))" : "", THREADS, R,
       phases ? "; the completion ran once per phase, before any thread of it returned" : "", bad.load());
}

static void barriers()
{
    long slots[2][4] = {{-1, -1, -1, -1}, {-1, -1, -1, -1}};
    {
        fastsync::barrier<> b(THREADS);
        barrier_phases("barrier<>", b, nullptr, slots);
    }
    long phases = 0, cbad = 0;
    long slots2[2][4] = {{-1, -1, -1, -1}, {-1, -1, -1, -1}};
    phase_counter pc = {&phases, slots2, THREADS, &cbad};
    {
        fastsync::barrier<phase_counter> b(THREADS, pc);
        barrier_phases("barrier<completion>", b, &phases, slots2);
    }
    ok(cbad == 0, "and the completion found every thread's slot at its phase (%ld wrong)", cbad);
    {
        fastsync::barrier<> b(THREADS);
        barrier_phases("barrier<>", b, nullptr, slots, true);
    }
    phases = 0;
    {
        fastsync::barrier<phase_counter> b(THREADS, pc);
        barrier_phases("barrier<completion>", b, &phases, slots2, true);
    }
    ok(cbad == 0, "and the completion found every thread's slot at its phase (%ld wrong)", cbad);
    {
        // arrive_and_drop: a third thread's drop is its arrival in phase 0, and the two
        // others then pass 100 phases alone; the completion runs at each of the 101
        int runs = 0;
        auto count = [&runs]() noexcept { ++runs; };
        fastsync::barrier<decltype(count)> b(3, count);
        static_assert(noexcept(b.arrive()) && noexcept(b.arrive_and_drop()) &&
                          noexcept(b.wait(std::declval<decltype(b)::arrival_token>())),
                      "barrier: arrive, wait and arrive_and_drop noexcept (no cancellation point)");
        std::atomic<long> passed(0); // seq_cst: a sum read after the joins
        std::thread d([&b] { b.arrive_and_drop(); });
        std::thread t([&b, &passed] {
            for (int r = 0; r < 101; r++) b.arrive_and_wait(), passed++;
        });
        for (int r = 0; r < 101; r++) b.arrive_and_wait(), passed++;
        d.join();
        t.join();
        ok(passed.load() == 202 && runs == 101,
           "barrier(3) with a completion: one thread's arrive_and_drop, then two threads pass 101 phases (%ld "
           "waits back, %d completions)",
           passed.load(), runs);
        // arrive(2) by one thread completes a phase of count 2 (arrival_token dropped)
        (void)b.arrive(2);
        ok(runs == 102, "... and arrive(2) by one thread is a whole phase of count 2 (its completion ran: %d)", runs);
    }
    {
        // std::barrier may be destroyed with arrivals pending and nobody blocked: the
        // destructor waits only for threads leaving (the C destroy would say EBUSY)
        fastsync::barrier<> b(2);
        auto t = b.arrive();
        (void)t;
        is_int(fastsync__bar_arrived(fastsync__load(&b.native_handle()->state, memory_order_relaxed)), 1,
               "barrier(2) with one arrival pending, nobody blocked");
    }
    ok(true, "... destroyed without an assertion");
    // a lambda, as the standard's examples; a barrier of one thread runs it at every phase
    int x = 0;
    auto add = [&x]() noexcept { ++x; };
    fastsync::barrier<decltype(add)> one(1, add);
    for (int i = 0; i < 5; i++) one.arrive_and_wait();
    is_int(x, 5, "barrier<lambda>(1): its completion ran at each of 5 phases");

    // C code on barrier<>'s C object: two C++ threads and one C thread (native_handle)
    long s3[2][3] = {{-1, -1, -1}, {-1, -1, -1}};
    fastsync::barrier<> b3(3);
    const long R = 500;
    long c_bad = -1;
    std::thread c([&] { c_bad = cxx_share_barrier(b3.native_handle(), s3, 2, R); });
    std::atomic<long> bad(0); // seq_cst: a sum read after the joins
    std::vector<std::thread> t;
    for (int me = 0; me < 2; me++)
        t.push_back(std::thread([&, me] {
            long mine = 0;
            for (long r = 0; r < R; r++) {
                s3[r % 2][me] = r;
                b3.arrive_and_wait();
                for (int k = 0; k < 3; k++) mine += s3[r % 2][k] != r;
            }
            bad += mine;
        }));
    for (size_t i = 0; i < t.size(); i++) t[i].join();
    c.join();
    ok(c_bad == 0 && bad.load() == 0,
       "barrier<> shared with C code (fastsync_barrier_wait on native_handle): %ld phases of 2 C++ threads and a C "
       "one, every slot read at its phase",
       R);
}

// A process-shared latch and barrier (with a completion) across fork.
static void latch_barrier_process_shared()
{
#if FASTSYNC_HAS_SHARED && defined(__linux__)
    struct count_phase {
        long *phases;
        void operator()() noexcept { ++*phases; }
    };
    struct area {
        fastsync::latch l;
        fastsync::barrier<count_phase> b;
        long phases;
        area() : l(1, fastsync::process_shared), b(2, fastsync::process_shared, count_phase{&phases}), phases(0) {}
    };
    const long R = 200;
    void *mem = mmap(nullptr, sizeof(area), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) bail("mmap");
    area *x = new (mem) area;
    pid_t pid = fork();
    if (pid == 0) {
        while (cxx_share_latch_waiters(x->l.native_handle()) == 0) std::this_thread::yield(); // the parent asleep
        x->l.count_down();
        long bad = 0;
        for (long r = 0; r < R; r++) {
            x->b.arrive_and_wait();
            bad += x->phases != r + 1;
        }
        _exit(bad == 0 ? 0 : 1);
    }
    bool got = x->l.wait_for(seconds(30));
    long bad = 0;
    for (long r = 0; r < R; r++) {
        x->b.arrive_and_wait();
        bad += x->phases != r + 1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ok(got && bad == 0 && x->phases == R && WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "process_shared latch and barrier<completion> across fork: the parent's wait released by the child's "
       "count_down; %ld phases, the completion once each before either process returned",
       R);
    x->~area();
    munmap(mem, sizeof(area));
#else
    skip("no FASTSYNC_SHARED on this backend", "a process_shared latch and barrier across fork");
#endif
}

int main()
{
#if defined(__unix__)
    alarm(120); // a hang fails the test (and meson's timeout everywhere)
#endif
    noexcept_points();
    exclusion();
    deadlines();
    deadline_edges();
    semaphore_totals();
    wide_semaphore();
    condition_variables();
    cond_full();
    cond_destroy_slow_waiter();
    at_thread_exit();
    event_and_wait_any();
    stop_tokens();
    cancellation();
    shared_exclusion();
    shared_try_never_spurious();
    shared_downgrade();
    shared_deadlines();
    shared_limit();
    process_shared();
    process_shared_rw();
    once_exactly();
    once_exceptions();
    once_arguments();
    once_with_c();
    once_cancel();
    once_process_shared();
    latch_points();
    latch_totals();
    latch_deadlines();
    latch_add_any_and_c();
    latch_destroy_slow_waiter();
    latch_arrive_destroy();
    barriers();
    latch_barrier_process_shared();
    diag("C++ %ld, exceptions %s", static_cast<long>(__cplusplus),
#if defined(__EXCEPTIONS) || defined(__cpp_exceptions)
         "on"
#else
         "off"
#endif
    );
    return done_testing();
}
