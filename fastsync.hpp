/* SPDX-License-Identifier: MIT */
/* fastsync.hpp - fastsync's primitives as C++ types that drop in where the standard
 * library's do: std::lock_guard, std::unique_lock, std::shared_lock, std::scoped_lock,
 * std::lock, std::chrono.
 *
 * Copy it beside fastsync.h (which it includes). C++11 and later, header-only, no
 * exceptions needed (-fno-exceptions works), nothing to link but what fastsync.h needs.
 *
 *   #include "fastsync.hpp"
 *   fastsync::mutex m;                   // as std::mutex: 4 bytes, a lock is one CAS
 *   fastsync::condition_variable cv;     // with std::unique_lock<fastsync::mutex>
 *   fastsync::counting_semaphore<> sem{0};
 *   { std::unique_lock<fastsync::mutex> l(m); cv.wait(l, [] { return ready; }); }
 *
 * Types (namespace fastsync; each holds exactly its C object, is standard-layout, and has
 * its size and alignment; native_handle() gives the C object, so C code can share it; but
 * the wide counting_semaphore, below, which has two counters and no native_handle()):
 *   mutex, timed_mutex           Lockable, TimedLockable (try_lock_for, try_lock_until)
 *   shared_mutex, shared_timed_mutex   also SharedLockable (lock_shared, try_lock_shared,
 *                                unlock_shared), SharedTimedLockable (try_lock_shared_for,
 *                                try_lock_shared_until): fastsync.h's reader-writer lock,
 *                                writers first (once a writer waits, new readers wait
 *                                behind it); with std::shared_lock (this header includes
 *                                <shared_mutex> from C++14 on). downgrade() is fastsync's
 *                                own, not std's: the caller's exclusive lock becomes a shared
 *                                one atomically (no writer comes in between), letting in the
 *                                readers that wait unless a writer waits too; release it with
 *                                unlock_shared, or hand it to a std::shared_lock:
 *       std::unique_lock<fastsync::shared_mutex> w(m);   // write, then
 *       m.downgrade();
 *       std::shared_lock<fastsync::shared_mutex> r(*w.release(), std::adopt_lock);  // read
 *   counting_semaphore<Least>, binary_semaphore   std::counting_semaphore's interface, for
 *                                every Least the standard allows (0 to PTRDIFF_MAX): up to
 *                                FASTSYNC_SEM_VALUE_MAX (INT_MAX; counting_semaphore<>,
 *                                binary_semaphore) the C semaphore, max() INT_MAX; above
 *                                it the wide kind (below), max() PTRDIFF_MAX
 *   condition_variable           with std::unique_lock<fastsync::mutex>;
 *                                notify_all_at_thread_exit(cv, lock)
 *   condition_variable_any       with any BasicLockable (C++20: the stop_token waits too)
 *   event                        manual-reset: set, reset, is_set, wait, wait_for, wait_until
 *   ticket                       a registration with a condition variable, for wait_any
 *   latch                        std::latch's interface (count_down, try_wait, wait,
 *                                arrive_and_wait; max() is FASTSYNC_LATCH_MAX, 2^30 - 1);
 *                                fastsync's own: wait_for, wait_until, and add(n), a wait
 *                                group's (Go's sync.WaitGroup.Add: count += n; from 0 only
 *                                once every wait on the last use has returned)
 *   barrier<CompletionFunction>  std::barrier's whole interface: its constructor, max()
 *                                (FASTSYNC_BARRIER_MAX, 2^16 - 1), arrive(update) and its
 *                                arrival_token, wait(token), arrive_and_wait() and
 *                                arrive_and_drop(). The completion runs in the thread whose
 *                                arrival is a phase's last, before the phase ends; a
 *                                completion that throws terminates (the standard requires
 *                                one that does not). All noexcept: no cancellation point (as
 *                                the C calls). native_handle() is the C barrier: C code may
 *                                share barrier<>'s (fastsync_barrier_wait is a phase's
 *                                arrive_and_wait). A phase costs arrive_and_wait two RMWs
 *                                (the last arrival's with a completion too)
 *   wait_any(objs...), try_wait_any, wait_any_for, wait_any_until   over semaphores
 *                                (either kind), events, latches (fastsync::latch or
 *                                fastsync_latch_t: ready at 0, not changed) and tickets: the
 *                                index of the one that won
 *   wait(word, expected), wait_for(word, expected, d), wait_until(word, expected, tp),
 *   wake_one(word), wake_all(word)   fastsync.h's wait on an address (fastsync_wait32, ...)
 *                                on a std::atomic<std::uint32_t>, C's fastsync_word32_t:
 *                                the contract is fastsync.h's ("Waiting on an address");
 *                                wait_for and wait_until return false only once the deadline
 *                                has passed (then the word may still hold expected), true
 *                                for a wake, a changed word or a spurious return
 *   once_flag, call_once(flag, f, args...)   std::call_once: f(args...), as std::invoke
 *                                calls it, in exactly one caller that returns normally; the
 *                                others sleep until it has, and see its writes. If f throws,
 *                                the flag is left as if never called and the exception goes
 *                                on to the caller; the next caller, or one that slept, runs f
 *                                (no hang as in GCC bug 66146). So too for a thread cancelled
 *                                inside f: with exceptions, where cancellation unwinds C++
 *                                frames (glibc: call_once's catch (...) gives the flag up and
 *                                rethrows); with -fno-exceptions, by fastsync_once's cleanup
 *                                handler (call_once is then fastsync_once; FASTSYNC_NO_CANCEL
 *                                keeps it). With exceptions on a C library whose cancellation
 *                                unwinds no C++ frame (musl), a cancelled f leaves the flag
 *                                taken: later callers sleep for good. Not a cancellation
 *                                point (as fastsync_once). Once
 *                                done, a call is one acquire load.
 * The wide counting_semaphore: counting_semaphore<Least> for a Least above INT_MAX
 * (counting_semaphore<PTRDIFF_MAX>), which exists only where ptrdiff_t has 64 bits (x86-64,
 * AArch64, 64-bit Windows, ...; where it has 32, every Least fits the C semaphore). 16 bytes,
 * 8-aligned, standard layout: a C semaphore holding up to INT_MAX of the tokens, on which
 * waiters sleep by the C protocol, and a 64-bit excess beside it for the rest (the section
 * before counting_semaphore below has the protocol and its proof). A release is the C post
 * while the C semaphore has room; beyond it, an RMW on the excess and a move of what fits
 * into the C semaphore. Each token taken from the C semaphore (acquire, try_acquire, the
 * timed waits, a wait_any it wins) is followed by a seq_cst fence and a load of the
 * excess, and while the excess holds tokens by a move of some back (a CAS and a C post):
 * release + acquire, 24 instructions against counting_semaphore<>'s 20 (callgrind, bench/cxx
 * --op sem-wide). No native_handle(): there is no single C object (a C caller that took
 * the C semaphore's tokens would not move the excess in after them). wait_any takes it: its
 * entry is the C semaphore, and the winner refills after its take. Where its promises differ
 * from counting_semaphore<>'s: try_acquire, and a timed acquire at its deadline, take from
 * the excess too when the C semaphore has none, but may find none while another thread's
 * release or acquire holds tokens in flight between its CAS on the excess and its C post (a
 * few instructions, unless that thread is preempted there); try_wait_any, and wait_any at
 * its deadline, look at the C semaphore only, and so may also miss the tokens a release has
 * put into the excess and not yet moved while it runs: in either case a contending
 * operation, where the standard lets try_acquire fail (tokens never stay in the excess
 * beside room in the C semaphore once every release and acquire has returned). And a
 * release that went into the excess touches the object after its tokens are published (it
 * moves them), so it must have returned before the semaphore is destroyed
 * (counting_semaphore<>'s release may be followed at once by the destructor in the thread
 * it woke).
 * Each constructor makes a process-private object; with the tag fastsync::process_shared
 * (where FASTSYNC_HAS_SHARED: not on Windows nor the POSIX backend, where it does not
 * compile) one that may live in MAP_SHARED memory (placement new) and be used by several
 * processes.
 *
 * Deadlines. A time_point of std::chrono::steady_clock is a CLOCK_MONOTONIC deadline and one
 * of system_clock a CLOCK_REALTIME one, converted exactly (rounded up to the nanosecond),
 * where the library's clocks are those (Linux); any other clock's time_point is converted
 * to a CLOCK_MONOTONIC deadline at the call, and after the wait times out the call reads
 * that clock again and waits on if its deadline has not come: no try_lock_until,
 * try_lock_shared_until, try_acquire_until or event wait_until returns false before
 * Clock::now() >= abs_time.
 * (A condition variable's wait_until then returns cv_status::no_timeout, a spurious
 * wakeup, as the standard's does: waiting on could miss a notify made in between.)
 * Durations count on CLOCK_MONOTONIC from the call, rounded up to the nanosecond. A
 * duration, or a deadline's distance from now, of 9.2e18 ns (292 years, just under 2^63 ns:
 * duration::max(), time_point::max() of any clock) or more means for ever: the untimed
 * wait. Zero, negative or past (time_point::min()): one try, no system call. No
 * conversion overflows, whatever the Rep and Period (hours, thirds of a second, float):
 * out of range is for ever or past. C++20 checks that a Clock is a clock (the standard's
 * is_clock, of fastsync's own: a static assertion).
 *
 * Errors. Nothing throws but call_once, which passes f's exceptions on: the C calls have no
 * failure a correct program can meet. So lock, try_lock, unlock, lock_shared,
 * try_lock_shared, unlock_shared, downgrade, release, try_acquire, notify_*, set, reset,
 * is_set, a latch's count_down, try_wait and add, and a barrier's arrive, wait,
 * arrive_and_wait and arrive_and_drop are
 * noexcept (a mutex's and a shared mutex's locks and a barrier's wait are no cancellation
 * points, as the C calls are not).
 * lock() never reports resource_deadlock_would_occur: the owner is not recorded, and a
 * thread that locks a mutex it holds deadlocks (as the C mutex); so does a thread that
 * takes a shared mutex it holds (the standard: undefined), but lock_shared under its own
 * shared lock only once a writer has started waiting in between. try_lock and
 * try_lock_shared never fail spuriously: try_lock_shared fails only while a writer holds
 * the lock or waits for it (where lock_shared would block), or at the limit below. At
 * FASTSYNC_RWLOCK_READERS_MAX (2^20 - 1) shared locks held, where the C read locks say
 * EAGAIN, nothing throws resource_unavailable_try_again: the standard has the excess
 * readers block until the count falls, so lock_shared tries again after a yield until it
 * gets in, try_lock_shared_for/until likewise until their deadline (then false), and
 * try_lock_shared returns false. The waits that sleep (acquire, try_acquire_for/until, a
 * condition variable's waits, an event's, a latch's, wait_any) are not noexcept for one
 * reason: they are cancellation points as the C calls are, and glibc cancels a C++ thread
 * by unwinding it, which a noexcept frame would turn into std::terminate (a condition
 * variable's wait relocks before the unwinding leaves it).
 * Built with -fno-exceptions, a cancelled thread runs no C++ destructor (no unique_lock's,
 * no ticket's): cancel such threads only where they wait on nothing of this header's.
 * What the C API reports as misuse is a precondition here, checked by FASTSYNC_ASSERT
 * (default: assert, so only without NDEBUG; define it before the #include to check
 * otherwise); unchecked, the call does what the C call does, which changes nothing:
 *   unlock of an unlocked mutex (C: EPERM); a shared mutex's unlock or downgrade when no
 *   thread holds it exclusively, unlock_shared when none holds it shared (EPERM: what the
 *   lock's word can tell, not who holds it); release that would pass max() (the C post's
 *   EOVERFLOW; the wide kind: where its excess alone would pass PTRDIFF_MAX) or a negative
 *   update; a semaphore built with a value outside 0..max() (it starts at 0); a semaphore
 *   destroyed with a waiter (EBUSY); a condition variable destroyed while a thread waits on
 *   it that no notify released (EBUSY), or a wait with a std::unique_lock that does not own
 *   its mutex (EPERM); a latch built with a count outside 0..max(), a count_down below 0
 *   (EINVAL), an add past max() (EOVERFLOW) or from 0 while a wait is still registered
 *   (EINVAL), a latch destroyed with a waiter while the count is above 0 (EBUSY); a barrier
 *   built with a count outside 0..max(), an arrive(update) with update 0 or above what the
 *   phase still needs, an arrive_and_drop when it needs none (EINVAL), or destroyed while a
 *   thread is blocked in a phase (after a second, EBUSY).
 * A mutex's and a shared mutex's destructors are trivial (the C objects need no destroy):
 * destroying a locked one is not diagnosed. A condition variable may be destroyed as soon
 * as notify_all returns: its destructor waits until the waiters it released have left (the
 * C destroy's one-second limit applies only to a process-shared one, whose waiter may have
 * died).
 *
 * Configurations. fastsync.h lets a file choose its backend, replace FASTSYNC_FUTEX_WAIT,
 * _WAKE and _WAITV, or define FASTSYNC_NO_CANCEL, for objects that never leave it. Every
 * entity of this header is in an inline namespace named after those choices, so files of
 * two configurations in one program have distinct types and functions (without it the
 * linker kept one copy of each inline member, and one file's shared_mutex slept through its
 * backend and was woken through the other's). fastsync::mutex is fastsync::cfg_linux::mutex
 * by default (cfg_posix, cfg_windows, cfg_os2 on those backends); then, each only where it
 * applies, __nocancel (no cancellation points where the backend has them), __wait_NAME,
 * __wake_NAME, __waitv_NAME (the replacement's name: each macro must expand to an
 * identifier, and files that differ only in a replacement must name theirs apart). So each
 * file's own objects work; objects of one configuration must still not be passed to code
 * of another: their protocols differ (a C object passed on through native_handle() or a C
 * API carries no configuration, so nothing diagnoses it). The FASTSYNC_SPIN macros are not
 * in the name: they only tune how long a waiter polls before it sleeps, so C++ files that
 * differ in them share the members, which spin as one of those files says (define them
 * alike to know which). Declare no fastsync name yourself (namespace fastsync { class
 * mutex; } names another class): include this header.
 * ABI: the mangled names carry the configuration, so two libraries built in different
 * configurations no longer share fastsync:: types in their interfaces (a function taking a
 * fastsync::mutex & in one is another function in the other): which is the truth, since
 * they cannot share objects. Built alike, they share them as before.
 *
 * Limits. With 2047 threads waiting on one condition variable (FASTSYNC_COND_TICKETS_MAX),
 * the next wait returns at once, after a yield (a spurious wakeup; a timed wait past its
 * deadline times out, a stop_token wait ends at a stop), and a ticket's constructor yields
 * until a place is free. No recursive mutex.
 * Costs: the uncontended paths are the C calls, inlined: with NDEBUG, the same instructions
 * (callgrind, bench/run: lock + unlock 14, release + acquire 20); with assertions on,
 * unlock adds its check of the C call's EPERM (2 instructions), as a C caller checking it
 * would. (The wide counting_semaphore adds its look at the excess: 24, above.)
 */
#ifndef FASTSYNC_HPP
#define FASTSYNC_HPP

#include "fastsync.h"

#include <cassert>
#include <cmath>
#include <chrono>
#include <condition_variable> /* std::cv_status */
#include <cstddef>
#include <cstdint>
#include <functional> /* std::invoke, std::reference_wrapper */
#include <limits>
#include <type_traits>
#include <utility>
#include <mutex> /* std::unique_lock */
#if __cplusplus >= 201402L
#include <shared_mutex> /* std::shared_lock */
#endif
#if defined(FASTSYNC_BACKEND_LINUX) || defined(FASTSYNC_BACKEND_POSIX)
#include <pthread.h> /* notify_all_at_thread_exit */
#endif
#if __cplusplus > 201703L
#include <version>
#endif
#if defined(__cpp_lib_jthread)
#include <stop_token>
#define FASTSYNC__HPP_STOP_TOKEN 1
#else
#define FASTSYNC__HPP_STOP_TOKEN 0
#endif

#ifndef FASTSYNC_ASSERT
#define FASTSYNC_ASSERT(e) assert(e)
#endif

/* The configuration's inline namespace (the manual's "Configurations"): fastsync::mutex is
 * fastsync::FASTSYNC__HPP_CONFIG::mutex, and so is every entity below, so that files built
 * in different configurations define different functions, not one inline function twice
 * (of which the linker would keep one, calling one file's static C functions for both).
 * The name is cfg_ and the backend, then, each only where it applies (so the default is
 * cfg_linux, cfg_posix, cfg_windows or cfg_os2):
 *   __nocancel        the waits are no cancellation points (FASTSYNC_NO_CANCEL, or a system
 *                     without cancellation) where the backend's are (Linux, POSIX)
 *   __wait_NAME, __wake_NAME, __waitv_NAME   FASTSYNC_FUTEX_WAIT, _WAKE, _WAITV replaced by
 *                     the function NAME (the macro's expansion, an identifier)
 * "__" parts apart, which no name of a program's own contains (C++ reserves such names).
 * The FASTSYNC_SPIN macros (FASTSYNC_SPIN, _NS, _YIELDS, _YIELDS_NS) are not in it: they
 * tune how long a waiter polls before it sleeps, and every protocol below works the same
 * whatever they are. */
#define FASTSYNC__HPP_CAT(a, b) a##b
#define FASTSYNC__HPP_XCAT(a, b) FASTSYNC__HPP_CAT(a, b)
#if defined(FASTSYNC_BACKEND_LINUX)
#define FASTSYNC__HPP_CONFIG_1 cfg_linux
#elif defined(FASTSYNC_BACKEND_POSIX)
#define FASTSYNC__HPP_CONFIG_1 cfg_posix
#elif defined(FASTSYNC_BACKEND_WINDOWS)
#define FASTSYNC__HPP_CONFIG_1 cfg_windows
#else
#define FASTSYNC__HPP_CONFIG_1 cfg_os2
#endif
#if !FASTSYNC__CANCEL && (defined(FASTSYNC_BACKEND_LINUX) || defined(FASTSYNC_BACKEND_POSIX))
#define FASTSYNC__HPP_CONFIG_2 FASTSYNC__HPP_XCAT(FASTSYNC__HPP_CONFIG_1, __nocancel)
#else
#define FASTSYNC__HPP_CONFIG_2 FASTSYNC__HPP_CONFIG_1
#endif
#if defined(FASTSYNC__WAIT_REPLACED)
#define FASTSYNC__HPP_CONFIG_3                                                                      \
    FASTSYNC__HPP_XCAT(FASTSYNC__HPP_CONFIG_2, FASTSYNC__HPP_XCAT(__wait_, FASTSYNC_FUTEX_WAIT))
#else
#define FASTSYNC__HPP_CONFIG_3 FASTSYNC__HPP_CONFIG_2
#endif
#if defined(FASTSYNC__WAKE_REPLACED)
#define FASTSYNC__HPP_CONFIG_4                                                                      \
    FASTSYNC__HPP_XCAT(FASTSYNC__HPP_CONFIG_3, FASTSYNC__HPP_XCAT(__wake_, FASTSYNC_FUTEX_WAKE))
#else
#define FASTSYNC__HPP_CONFIG_4 FASTSYNC__HPP_CONFIG_3
#endif
#if defined(FASTSYNC__WAITV_REPLACED)
#define FASTSYNC__HPP_CONFIG                                                                        \
    FASTSYNC__HPP_XCAT(FASTSYNC__HPP_CONFIG_4, FASTSYNC__HPP_XCAT(__waitv_, FASTSYNC_FUTEX_WAITV))
#else
#define FASTSYNC__HPP_CONFIG FASTSYNC__HPP_CONFIG_4
#endif

namespace fastsync {
inline namespace FASTSYNC__HPP_CONFIG {

class ticket;
namespace detail {
struct entries;
}

/* The tag of the process-shared constructors. */
struct process_shared_t {
    explicit process_shared_t() = default;
};
#if FASTSYNC_HAS_SHARED
constexpr process_shared_t process_shared{};
#endif

namespace detail {

/* A C call's result where the C API reports only misuse. */
inline void check(int r) noexcept
{
    FASTSYNC_ASSERT(r == 0);
    (void)r;
}

inline void bad_value() noexcept { FASTSYNC_ASSERT(false && "value outside 0..max()"); }

/* A semaphore's initial value, checked (constexpr: a constant initializer). */
constexpr std::uint64_t sem_value(std::ptrdiff_t v, std::ptrdiff_t max) noexcept
{
    return v >= 0 && v <= max ? static_cast<std::uint64_t>(v) : (bad_value(), 0u);
}

/* C++20's is_clock, of our own (libc++ before 21 has no std::chrono::is_clock): the
 * Cpp17Clock members, and a time_point whose duration is the clock's. */
template <class...> struct voider {
    typedef void type;
};
template <class T, class = void> struct is_clock : std::false_type {};
template <class T>
struct is_clock<T, typename voider<typename T::rep, typename T::period, typename T::duration,
                                   typename T::time_point, decltype(T::is_steady), decltype(T::now())>::type>
    : std::integral_constant<bool, std::is_same<typename T::time_point::duration, typename T::duration>::value> {};

template <class Clock> struct check_clock {
#if __cplusplus > 201703L
    static_assert(is_clock<Clock>::value, "fastsync: the time_point's clock is no clock");
#endif
};

/* Beyond this many nanoseconds (292 years, just under 2^63) a duration is for ever. */
constexpr long double forever_ns = 9.2e18L;

/* d in nanoseconds, as a long double: only to compare, never to wait by (its rounding). */
template <class Rep, class Period> long double approx_ns(const std::chrono::duration<Rep, Period> &d)
{
    return static_cast<long double>(d.count()) * static_cast<long double>(Period::num) * 1e9L /
           static_cast<long double>(Period::den);
}

/* d in whole nanoseconds, rounded up, where |d| < forever_ns. An integer count is split
 * into seconds and the rest, so that no product overflows (a count of thirds of a second
 * times 10^9 did); a floating one is rounded up from the long double, exact for float and
 * double counts of seconds and milliseconds within range. */
template <class Rep, class Period>
std::int64_t exact_ns(const std::chrono::duration<Rep, Period> &d, std::true_type /* integral */)
{
    using namespace std::chrono;
    seconds s = duration_cast<seconds>(d);
    std::chrono::duration<Rep, Period> rest = d - duration_cast<std::chrono::duration<Rep, Period>>(s);
    nanoseconds n = duration_cast<nanoseconds>(rest);
    if (n < rest) ++n;
    return s.count() * 1000000000 + n.count();
}
template <class Rep, class Period>
std::int64_t exact_ns(const std::chrono::duration<Rep, Period> &d, std::false_type /* floating */)
{
    return static_cast<std::int64_t>(std::ceil(approx_ns(d)));
}

/* d in nanoseconds, rounded up; `forever` 1 when d >= forever_ns (the value is then
 * meaningless), -1 when d <= -forever_ns (likewise), else 0. */
template <class Rep, class Period>
std::int64_t ceil_ns(const std::chrono::duration<Rep, Period> &d, int &forever)
{
    long double x = approx_ns(d);
    forever = x >= forever_ns ? 1 : x <= -forever_ns ? -1 : 0;
    if (forever != 0) return 0;
    return exact_ns(d, std::integral_constant<bool, std::is_integral<Rep>::value>());
}

/* Clock::now() >= tp, computed without overflow for any Dur: far apart (beyond a
 * millisecond, more than long double's rounding), the long double difference decides;
 * near, both are near now, where the exact comparison's common type holds them. */
template <class Clock, class Dur> bool reached(const std::chrono::time_point<Clock, Dur> &tp)
{
    typename Clock::time_point now = Clock::now();
    long double ahead = approx_ns(tp.time_since_epoch()) - approx_ns(now.time_since_epoch());
    if (ahead > 1e6L) return false;
    if (ahead < -1e6L) return true;
    return now >= tp;
}

/* Which C clock a std clock is, exactly: where the C++ library reads its steady_clock with
 * CLOCK_MONOTONIC and its system_clock with CLOCK_REALTIME (libstdc++ and libc++ on Linux).
 * -1: any other clock, converted at the call and re-checked. */
template <class Clock> struct clock_id {
    static constexpr int value = -1;
};
#if defined(__linux__) && (defined(FASTSYNC_BACKEND_LINUX) || defined(FASTSYNC_BACKEND_POSIX))
template <> struct clock_id<std::chrono::steady_clock> {
    static constexpr int value = CLOCK_MONOTONIC;
};
template <> struct clock_id<std::chrono::system_clock> {
    static constexpr int value = CLOCK_REALTIME;
};
#endif

/* A deadline: the C clock and absolute time, or none (for ever). */
struct deadline {
    clockid_t clock;
    struct timespec ts;
    bool finite;
};

/* A relative wait: d from now, on CLOCK_MONOTONIC (saturating in fastsync_deadline_in). */
template <class Rep, class Period> deadline after(const std::chrono::duration<Rep, Period> &d)
{
    int forever;
    std::int64_t ns = ceil_ns(d, forever);
    deadline r;
    r.clock = CLOCK_MONOTONIC;
    r.finite = forever <= 0;
    r.ts = fastsync_deadline_in(forever < 0 || ns < 0 ? 0u : static_cast<std::uint64_t>(ns));
    return r;
}

template <class Clock, class Dur, int Id = clock_id<Clock>::value> struct convert {
    /* A clock of its own: the time left, from now on CLOCK_MONOTONIC. */
    static deadline at(const std::chrono::time_point<Clock, Dur> &tp)
    {
        /* tp - now in long double: the exact difference can overflow (time_point::min(), a
         * coarse Dur); its rounding makes the deadline at most early, and wait_until
         * re-checks the clock */
        long double ahead = approx_ns(tp.time_since_epoch()) - approx_ns(Clock::now().time_since_epoch());
        if (tp == std::chrono::time_point<Clock, Dur>::max() || ahead >= forever_ns)
            return after(std::chrono::nanoseconds::max());
        return after(std::chrono::nanoseconds(ahead > 0 ? static_cast<std::int64_t>(std::ceil(ahead)) : 0));
    }
};
template <class Clock, class Dur> struct convert<Clock, Dur, CLOCK_MONOTONIC> {
    static deadline at(const std::chrono::time_point<Clock, Dur> &tp) { return exact(tp, CLOCK_MONOTONIC); }
    static deadline exact(const std::chrono::time_point<Clock, Dur> &tp, clockid_t id)
    {
        int forever;
        std::int64_t ns = ceil_ns(tp.time_since_epoch(), forever);
        deadline r;
        r.clock = id;
        r.finite = forever <= 0;
        r.ts.tv_sec = 0;
        r.ts.tv_nsec = 0; /* before 1970 or boot: past */
        if (forever == 0 && ns > 0) {
            std::int64_t s = ns / 1000000000;
            const time_t max = std::numeric_limits<time_t>::max(); /* 2038 on 32-bit time_t */
            r.ts.tv_sec = static_cast<std::uint64_t>(s) > static_cast<std::uint64_t>(max) ? max : static_cast<time_t>(s);
            r.ts.tv_nsec = static_cast<long>(ns % 1000000000);
        }
        return r;
    }
};
template <class Clock, class Dur> struct convert<Clock, Dur, CLOCK_REALTIME> {
    static deadline at(const std::chrono::time_point<Clock, Dur> &tp)
    {
        return convert<Clock, Dur, CLOCK_MONOTONIC>::exact(tp, CLOCK_REALTIME);
    }
};

template <class Clock, class Dur> deadline at(const std::chrono::time_point<Clock, Dur> &tp)
{
    (void)check_clock<Clock>();
    return convert<Clock, Dur>::at(tp);
}

/* dl has passed (read on its own clock); never for none (for ever). */
inline bool past(const deadline *dl) noexcept
{
    return dl && dl->finite && fastsync__until(dl->clock, &dl->ts) <= 0;
}

/* Every wait_until but the condition variables': wait(deadline) until it returns other
 * than ETIMEDOUT or tp has come on Clock itself (a converted deadline may come first). */
template <class Clock, class Dur, class Wait>
int wait_until(const std::chrono::time_point<Clock, Dur> &tp, Wait wait)
{
    for (;;) {
        int r = wait(at(tp));
        if (r != ETIMEDOUT || reached(tp)) return r;
    }
}

/* Unlocks a lock for the life of the object, locking it again on every way out. */
template <class Lock> class relock {
  public:
    explicit relock(Lock &l) : l_(l) { l_.unlock(); }
    ~relock() { l_.lock(); }
    relock(const relock &) = delete;
    relock &operator=(const relock &) = delete;

  private:
    Lock &l_;
};

} // namespace detail

/* ----------------------------------------------------------------------------------- */

class mutex {
  public:
    typedef fastsync_mutex_t *native_handle_type;

    constexpr mutex() noexcept : m_ FASTSYNC_MUTEX_INIT {}
#if FASTSYNC_HAS_SHARED
    explicit mutex(process_shared_t) noexcept { detail::check(fastsync_mutex_init(&m_, FASTSYNC_SHARED)); }
#endif
    mutex(const mutex &) = delete;
    mutex &operator=(const mutex &) = delete;

    void lock() noexcept { (void)fastsync_mutex_lock(&m_); }
    bool try_lock() noexcept { return fastsync_mutex_trylock(&m_) == 0; }
    void unlock() noexcept { detail::check(fastsync_mutex_unlock(&m_)); }
    native_handle_type native_handle() noexcept { return &m_; }

  protected:
    fastsync_mutex_t m_;
};

class timed_mutex : public mutex {
  public:
    constexpr timed_mutex() noexcept : mutex() {}
#if FASTSYNC_HAS_SHARED
    explicit timed_mutex(process_shared_t s) noexcept : mutex(s) {}
#endif

    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
    {
        return lock_by(detail::after(d)) == 0;
    }
    template <class Clock, class Dur> bool try_lock_until(const std::chrono::time_point<Clock, Dur> &tp)
    {
        return detail::wait_until(tp, [this](const detail::deadline &dl) { return lock_by(dl); }) == 0;
    }

  private:
    int lock_by(const detail::deadline &dl) noexcept
    {
        return dl.finite ? fastsync_mutex_clocklock(&m_, dl.clock, &dl.ts) : fastsync_mutex_lock(&m_);
    }
};

/* ----------------------------------------------------------------------------------- */

class shared_mutex {
  public:
    typedef fastsync_rwlock_t *native_handle_type;

    constexpr shared_mutex() noexcept : rw_ FASTSYNC_RWLOCK_INIT {}
#if FASTSYNC_HAS_SHARED
    explicit shared_mutex(process_shared_t) noexcept { detail::check(fastsync_rwlock_init(&rw_, FASTSYNC_SHARED)); }
#endif
    shared_mutex(const shared_mutex &) = delete;
    shared_mutex &operator=(const shared_mutex &) = delete;

    void lock() noexcept { (void)fastsync_rwlock_wrlock(&rw_); }
    bool try_lock() noexcept { return fastsync_rwlock_trywrlock(&rw_) == 0; }
    void unlock() noexcept { detail::check(fastsync_rwlock_wrunlock(&rw_)); }
    void lock_shared() noexcept { (void)rdlock_by(nullptr); }
    bool try_lock_shared() noexcept { return fastsync_rwlock_tryrdlock(&rw_) == 0; }
    void unlock_shared() noexcept { detail::check(fastsync_rwlock_rdunlock(&rw_)); }
    /* fastsync's own (not std's): the exclusive lock becomes a shared one, atomically. */
    void downgrade() noexcept { detail::check(fastsync_rwlock_downgrade(&rw_)); }
    native_handle_type native_handle() noexcept { return &rw_; }

  protected:
    /* A read lock, waiting until dl (NULL: for ever). With FASTSYNC_RWLOCK_READERS_MAX read
     * locks held (the C call's EAGAIN, at once, without a sleep) it tries again after a
     * yield until dl has passed: the standard has the excess readers block until the count
     * falls, and no wake would tell them when. 0 or ETIMEDOUT. */
    int rdlock_by(const detail::deadline *dl) noexcept
    {
        for (;;) {
            int r = dl && dl->finite ? fastsync_rwlock_clockrdlock(&rw_, dl->clock, &dl->ts)
                                     : fastsync_rwlock_rdlock(&rw_);
            if (r != EAGAIN) return r;
            if (detail::past(dl)) return ETIMEDOUT;
            fastsync__yield();
        }
    }

    fastsync_rwlock_t rw_;
};

class shared_timed_mutex : public shared_mutex {
  public:
    constexpr shared_timed_mutex() noexcept : shared_mutex() {}
#if FASTSYNC_HAS_SHARED
    explicit shared_timed_mutex(process_shared_t s) noexcept : shared_mutex(s) {}
#endif

    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
    {
        return wrlock_by(detail::after(d)) == 0;
    }
    template <class Clock, class Dur> bool try_lock_until(const std::chrono::time_point<Clock, Dur> &tp)
    {
        return detail::wait_until(tp, [this](const detail::deadline &dl) { return wrlock_by(dl); }) == 0;
    }
    template <class Rep, class Period> bool try_lock_shared_for(const std::chrono::duration<Rep, Period> &d)
    {
        detail::deadline dl = detail::after(d);
        return rdlock_by(&dl) == 0;
    }
    template <class Clock, class Dur> bool try_lock_shared_until(const std::chrono::time_point<Clock, Dur> &tp)
    {
        return detail::wait_until(tp, [this](const detail::deadline &dl) { return rdlock_by(&dl); }) == 0;
    }

  private:
    int wrlock_by(const detail::deadline &dl) noexcept
    {
        return dl.finite ? fastsync_rwlock_clockwrlock(&rw_, dl.clock, &dl.ts) : fastsync_rwlock_wrlock(&rw_);
    }
};

/* ----------------------------------------------------------------------------------- */

/* counting_semaphore<LeastMaxValue>: std::counting_semaphore's interface, in one of two
 * kinds that LeastMaxValue chooses (its base class; counting_semaphore adds only the
 * constructors and the check that LeastMaxValue >= 0).
 *
 * LeastMaxValue <= FASTSYNC_SEM_VALUE_MAX (counting_semaphore<>, binary_semaphore): the C
 * semaphore itself, detail::sem_narrow. max() is FASTSYNC_SEM_VALUE_MAX for each of them.
 *
 * LeastMaxValue above it, which only a ptrdiff_t wider than 32 bits can hold: the wide
 * kind, detail::sem_wide, whose max() is PTRDIFF_MAX: a thin wrapper over fastsync.h's
 * internal struct fastsync__semw and its fastsync__semw_* functions (the section "Wide
 * semaphore" there: the protocol, its proof of exact conservation and no lost wakeup, the
 * orders, and the GenMC harnesses that check it). Its counter is two counters: T, the
 * tokens of a C semaphore (up to FASTSYNC_SEM_VALUE_MAX), which waiters sleep on by the C
 * semaphore's own protocol, and E, a 64-bit excess beside it: the tokens that did not fit
 * into T. After every take from T and every add to E the thread looks at E (a seq_cst
 * fence, then a load) and moves tokens from E into T while T has room.
 *
 * What it costs: 16 bytes (8-aligned); release is the C post while T has room, and every
 * take is followed by a look (a fence and a load) and, when E > 0, a move. A release that
 * adds to E goes on to refill: it touches the object after its tokens are published (the C
 * post's promise that the waiter may free the semaphore at once does not hold for it).
 * There is no single C object: no native_handle(). */
namespace detail {

struct sem_probe; /* the tests' white-box look at a wide semaphore's counters */

/* The C semaphore itself: counting_semaphore<N> for N <= FASTSYNC_SEM_VALUE_MAX. */
class sem_narrow {
  public:
    typedef fastsync_sem_t *native_handle_type;

    /* The most the counter can hold, for every LeastMaxValue of this kind (the standard
     * asks only that max() >= LeastMaxValue): the C semaphore's FASTSYNC_SEM_VALUE_MAX. */
    static constexpr std::ptrdiff_t max() noexcept { return FASTSYNC_SEM_VALUE_MAX; }

    constexpr explicit sem_narrow(std::ptrdiff_t desired) noexcept : s_{{sem_value(desired, max())}} {}
#if FASTSYNC_HAS_SHARED
    sem_narrow(std::ptrdiff_t desired, process_shared_t) noexcept
    {
        check(fastsync_sem_init(&s_, static_cast<unsigned>(sem_value(desired, max())), FASTSYNC_SHARED));
    }
#endif
    ~sem_narrow() { check(fastsync_sem_destroy(&s_)); }
    sem_narrow(const sem_narrow &) = delete;
    sem_narrow &operator=(const sem_narrow &) = delete;

    void release(std::ptrdiff_t update = 1) noexcept
    {
        FASTSYNC_ASSERT(update >= 0 && update <= max());
        check(fastsync_sem_post_n(&s_, static_cast<unsigned>(update)));
    }
    void acquire() { (void)fastsync_sem_wait(&s_); }
    bool try_acquire() noexcept { return fastsync_sem_trywait(&s_) == 0; }
    template <class Rep, class Period> bool try_acquire_for(const std::chrono::duration<Rep, Period> &d)
    {
        return wait_by(after(d)) == 0;
    }
    template <class Clock, class Dur> bool try_acquire_until(const std::chrono::time_point<Clock, Dur> &tp)
    {
        return wait_until(tp, [this](const deadline &dl) { return wait_by(dl); }) == 0;
    }
    native_handle_type native_handle() noexcept { return &s_; }

  private:
    int wait_by(const deadline &dl)
    {
        return dl.finite ? fastsync_sem_clockwait(&s_, dl.clock, &dl.ts) : fastsync_sem_wait(&s_);
    }
    fastsync_sem_t *c_sem() noexcept { return &s_; } /* wait_any's entry */
    void after_wait_any() noexcept {} /* wait_any took a token: nothing more to do */
    fastsync_sem_t s_;
    friend struct entries;
};

#if PTRDIFF_MAX > FASTSYNC_SEM_VALUE_MAX
/* The wide kind: counting_semaphore<N> for N > FASTSYNC_SEM_VALUE_MAX (the section above). */
class sem_wide {
  public:
    static constexpr std::ptrdiff_t max() noexcept { return PTRDIFF_MAX; }

    constexpr explicit sem_wide(std::ptrdiff_t desired) noexcept
        : w_{{{sem_value(in_c(desired), FASTSYNC_SEM_VALUE_MAX)}}, {in_excess(desired)}}
    {
    }
#if FASTSYNC_HAS_SHARED
    sem_wide(std::ptrdiff_t desired, process_shared_t) noexcept
    {
        check(fastsync__semw_init(&w_, sem_value(desired, max()), FASTSYNC_SHARED));
    }
#endif
    ~sem_wide() { check(fastsync_sem_destroy(&w_.t)); }
    sem_wide(const sem_wide &) = delete;
    sem_wide &operator=(const sem_wide &) = delete;

    void release(std::ptrdiff_t update = 1) noexcept
    {
        FASTSYNC_ASSERT(update >= 0);
        if (update <= 0) return; /* a negative update (assertions off): nothing */
        std::uint64_t old = fastsync__semw_post_n(&w_, static_cast<std::uint64_t>(update));
        FASTSYNC_ASSERT(old + static_cast<std::uint64_t>(update) <= static_cast<std::uint64_t>(max()));
        (void)old;
    }
    void acquire() { fastsync__semw_wait(&w_); }
    bool try_acquire() noexcept { return fastsync__semw_trywait(&w_) == 0; }
    template <class Rep, class Period> bool try_acquire_for(const std::chrono::duration<Rep, Period> &d)
    {
        return wait_by(after(d)) == 0;
    }
    template <class Clock, class Dur> bool try_acquire_until(const std::chrono::time_point<Clock, Dur> &tp)
    {
        return wait_until(tp, [this](const deadline &dl) { return wait_by(dl); }) == 0;
    }

  private:
    /* An initial value's two parts: what the C semaphore holds, and the excess (as
     * fastsync__semw_init, here constexpr: a constant initializer). */
    static constexpr std::ptrdiff_t in_c(std::ptrdiff_t v) noexcept
    {
        return v < FASTSYNC_SEM_VALUE_MAX ? v : FASTSYNC_SEM_VALUE_MAX;
    }
    static constexpr std::uint64_t in_excess(std::ptrdiff_t v) noexcept
    {
        return v > FASTSYNC_SEM_VALUE_MAX ? static_cast<std::uint64_t>(v - FASTSYNC_SEM_VALUE_MAX) : 0u;
    }

    int wait_by(const deadline &dl)
    {
        return fastsync__semw_waited(&w_, dl.finite ? fastsync_sem_clockwait(&w_.t, dl.clock, &dl.ts)
                                                    : fastsync_sem_wait(&w_.t));
    }
    fastsync_sem_t *c_sem() noexcept { return &w_.t; } /* wait_any's entry: T */
    void after_wait_any() noexcept { fastsync__semw_after_take(&w_); } /* wait_any took a token from T */

    struct fastsync__semw w_;
    friend struct entries;
    friend struct sem_probe;
};

template <std::ptrdiff_t N> struct sem_kind {
    typedef typename std::conditional<(N > FASTSYNC_SEM_VALUE_MAX), sem_wide, sem_narrow>::type type;
};
#else
template <std::ptrdiff_t N> struct sem_kind {
    typedef sem_narrow type;
};
#endif

} // namespace detail

template <std::ptrdiff_t LeastMaxValue = FASTSYNC_SEM_VALUE_MAX>
class counting_semaphore : public detail::sem_kind<LeastMaxValue>::type {
    static_assert(LeastMaxValue >= 0, "fastsync::counting_semaphore: LeastMaxValue must be >= 0");
    typedef typename detail::sem_kind<LeastMaxValue>::type kind;

  public:
    constexpr explicit counting_semaphore(std::ptrdiff_t desired) noexcept : kind(desired) {}
#if FASTSYNC_HAS_SHARED
    counting_semaphore(std::ptrdiff_t desired, process_shared_t tag) noexcept : kind(desired, tag) {}
#endif
};

typedef counting_semaphore<1> binary_semaphore;

/* ----------------------------------------------------------------------------------- */

class event {
  public:
    typedef fastsync_event_t *native_handle_type;

    constexpr event() noexcept : e_ FASTSYNC_EVENT_INIT(false) {}
    constexpr explicit event(bool set) noexcept : e_ FASTSYNC_EVENT_INIT(set) {}
#if FASTSYNC_HAS_SHARED
    event(bool set, process_shared_t) noexcept { detail::check(fastsync_event_init(&e_, set, FASTSYNC_SHARED)); }
#endif
    event(const event &) = delete;
    event &operator=(const event &) = delete;

    void set() noexcept { fastsync_event_set(&e_); }
    void reset() noexcept { fastsync_event_reset(&e_); }
    bool is_set() const noexcept { return fastsync_event_is_set(&e_); }
    void wait() { fastsync_event_wait(&e_); }
    template <class Rep, class Period> bool wait_for(const std::chrono::duration<Rep, Period> &d)
    {
        return wait_by(detail::after(d)) == 0;
    }
    template <class Clock, class Dur> bool wait_until(const std::chrono::time_point<Clock, Dur> &tp)
    {
        return detail::wait_until(tp, [this](const detail::deadline &dl) { return wait_by(dl); }) == 0;
    }
    native_handle_type native_handle() noexcept { return &e_; }

  private:
    int wait_by(const detail::deadline &dl)
    {
        if (dl.finite) return fastsync_event_clockwait(&e_, dl.clock, &dl.ts);
        fastsync_event_wait(&e_);
        return 0;
    }
    fastsync_event_t e_;
};

/* ----------------------------------------------------------------------------------- */

class once_flag {
  public:
    typedef fastsync_once_t *native_handle_type;

    constexpr once_flag() noexcept : o_ FASTSYNC_ONCE_INIT {}
#if FASTSYNC_HAS_SHARED
    explicit once_flag(process_shared_t) noexcept { detail::check(fastsync_once_init(&o_, FASTSYNC_SHARED)); }
#endif
    once_flag(const once_flag &) = delete;
    once_flag &operator=(const once_flag &) = delete;

    native_handle_type native_handle() noexcept { return &o_; }

  private:
    fastsync_once_t o_;
};

namespace detail {

/* INVOKE(f, args...), the standard's (std::invoke's) rule, its result discarded: std::invoke
 * from C++17, before it one of our own. Its calls are qualified: an unqualified one would
 * look in the arguments' associated classes and instantiate them, which fails for a
 * reference_wrapper<unique_ptr<B<A>>> with A incomplete (libstdc++'s PR 60497). */
#if __cplusplus >= 201703L
template <class F, class... A> void invoke(F &&f, A &&...a)
{
    (void)std::invoke(std::forward<F>(f), std::forward<A>(a)...);
}
#else
template <class T> struct is_ref_wrapper : std::false_type {};
template <class T> struct is_ref_wrapper<std::reference_wrapper<T>> : std::true_type {};
/* What a pointer to a member of C is applied to: 0 the object (a C or one derived from it),
 * 1 a reference_wrapper of it, 2 a pointer to it (or anything that * dereferences). */
template <class C, class Obj>
struct target_kind
    : std::integral_constant<int, std::is_base_of<C, typename std::decay<Obj>::type>::value ? 0
                                  : is_ref_wrapper<typename std::decay<Obj>::type>::value       ? 1
                                                                                                : 2> {};
template <class Obj> Obj &&target(std::integral_constant<int, 0>, Obj &&o) { return std::forward<Obj>(o); }
template <class Obj> auto target(std::integral_constant<int, 1>, Obj &&o) -> decltype(o.get()) { return o.get(); }
template <class Obj>
auto target(std::integral_constant<int, 2>, Obj &&o) -> decltype(*std::forward<Obj>(o))
{
    return *std::forward<Obj>(o);
}
/* A member function; a data member (no arguments). */
template <class T, class C, class Obj, class... A>
void invoke_member(std::true_type, T C::*pm, Obj &&o, A &&...a)
{
    (void)(detail::target(target_kind<C, Obj>(), std::forward<Obj>(o)).*pm)(std::forward<A>(a)...);
}
template <class T, class C, class Obj> void invoke_member(std::false_type, T C::*pm, Obj &&o)
{
    (void)(detail::target(target_kind<C, Obj>(), std::forward<Obj>(o)).*pm);
}
/* A pointer to a member; anything else. */
template <class F, class Obj, class... A> void invoke_by(std::true_type, F &&f, Obj &&o, A &&...a)
{
    detail::invoke_member(std::is_member_function_pointer<typename std::decay<F>::type>(), f,
                          std::forward<Obj>(o), std::forward<A>(a)...);
}
template <class F, class... A> void invoke_by(std::false_type, F &&f, A &&...a)
{
    (void)std::forward<F>(f)(std::forward<A>(a)...);
}
template <class F, class... A> void invoke(F &&f, A &&...a)
{
    detail::invoke_by(std::is_member_pointer<typename std::decay<F>::type>(), std::forward<F>(f),
                      std::forward<A>(a)...);
}
#endif

/* The once's done check, call_once's inline part: fastsync_once_begin's first look.
 * acquire: pairs with fastsync_once_commit's release CAS, as fastsync_once_begin's load: a
 * caller that reads DONE sees every write f made. */
inline bool once_done(fastsync_once_t *o) noexcept
{
    return (fastsync__load(&o->state, memory_order_acquire) & FASTSYNC__ONCE_STATE) == FASTSYNC__ONCE_DONE;
}

#if defined(__GNUC__)
#define FASTSYNC__HPP_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define FASTSYNC__HPP_NOINLINE __declspec(noinline)
#else
#define FASTSYNC__HPP_NOINLINE
#endif

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
/* call_once's part past the done check, out of line: with its try/catch in call_once, gcc
 * inlined none of it, and a call on a done flag cost 19 instructions to fastsync_once's 8
 * (callgrind, bench/once); with the check inline, 7. */
template <class Callable, class... Args>
FASTSYNC__HPP_NOINLINE void call_once_slow(fastsync_once_t *o, Callable &&f, Args &&...args)
{
    if (fastsync_once_begin(o) == 0) return;
    try {
        detail::invoke(std::forward<Callable>(f), std::forward<Args>(args)...);
    } catch (...) { /* also glibc's cancellation (abi::__forced_unwind), rethrown */
        detail::check(fastsync_once_abort(o));
        throw;
    }
    detail::check(fastsync_once_commit(o));
}
#else
/* fastsync_once's initialiser: the call_once's closure. */
template <class Call> void once_trampoline(void *call) { (*static_cast<Call *>(call))(); }
template <class Callable, class... Args>
FASTSYNC__HPP_NOINLINE void call_once_slow(fastsync_once_t *o, Callable &&f, Args &&...args)
{
    auto call = [&] { detail::invoke(std::forward<Callable>(f), std::forward<Args>(args)...); };
    (void)fastsync_once(o, detail::once_trampoline<decltype(call)>, &call);
}
#endif

} // namespace detail

/* std::call_once: f(args...) as std::invoke would, in exactly one caller that returns
 * normally; every other caller returns after it, seeing its writes. An f that throws leaves
 * the flag as if never called (fastsync_once_abort), and the exception goes on to the
 * caller; the next caller, or one that waited, runs f. Built with -fno-exceptions, the call
 * is fastsync_once's, whose cleanup handler aborts when the thread is cancelled inside f.
 * Inline: the done check (the C call's instructions); the rest out of line. */
template <class Callable, class... Args> inline void call_once(once_flag &flag, Callable &&f, Args &&...args)
{
    fastsync_once_t *o = flag.native_handle();
    if (detail::once_done(o)) return;
    detail::call_once_slow(o, std::forward<Callable>(f), std::forward<Args>(args)...);
}

/* ----------------------------------------------------------------------------------- */

namespace detail {
/* A latch's initial count, checked (constexpr: a constant initializer). */
constexpr std::uint64_t latch_value(std::ptrdiff_t v) noexcept
{
    return v >= 0 && v <= static_cast<std::ptrdiff_t>(FASTSYNC_LATCH_MAX) ? static_cast<std::uint64_t>(v)
                                                                           : (bad_value(), 0u);
}
} // namespace detail

class latch {
  public:
    typedef fastsync_latch_t *native_handle_type;

    static constexpr std::ptrdiff_t max() noexcept { return FASTSYNC_LATCH_MAX; }

    constexpr explicit latch(std::ptrdiff_t expected) noexcept : l_{{detail::latch_value(expected)}} {}
#if FASTSYNC_HAS_SHARED
    latch(std::ptrdiff_t expected, process_shared_t) noexcept
    {
        detail::check(fastsync_latch_init(&l_, static_cast<unsigned>(detail::latch_value(expected)),
                                          FASTSYNC_SHARED));
    }
#endif
    /* The standard lets a latch go once no thread is blocked on it, while released waiters
     * are still returning: the C destroy waits for them (every wait counts itself from its
     * first access to its last); EBUSY while the count is above 0 and a thread waits:
     * misuse. */
    ~latch() { detail::check(fastsync_latch_destroy(&l_)); }
    latch(const latch &) = delete;
    latch &operator=(const latch &) = delete;

    /* Precondition: 0 <= n <= the count (C: EINVAL, nothing changes). */
    void count_down(std::ptrdiff_t n = 1) noexcept
    {
        if (n < 0 || n > max()) return detail::bad_value();
        detail::check(fastsync_latch_count_down(&l_, static_cast<unsigned>(n)));
    }
    bool try_wait() const noexcept { return fastsync_latch_trywait(&l_) == 0; }
    void wait() const { (void)fastsync_latch_wait(&l_); }
    /* count_down(n) and wait() in one CAS (the C call's), so that a destructor run after the
     * opening waits for this thread too. */
    void arrive_and_wait(std::ptrdiff_t n = 1)
    {
        if (n < 0 || n > max()) return detail::bad_value();
        detail::check(fastsync_latch_arrive_and_wait(&l_, static_cast<unsigned>(n)));
    }
    /* fastsync's own: the timed waits (true: the count is 0) */
    template <class Rep, class Period> bool wait_for(const std::chrono::duration<Rep, Period> &d) const
    {
        return wait_by(detail::after(d)) == 0;
    }
    template <class Clock, class Dur> bool wait_until(const std::chrono::time_point<Clock, Dur> &tp) const
    {
        return detail::wait_until(tp, [this](const detail::deadline &dl) { return wait_by(dl); }) == 0;
    }
    /* fastsync's own, a wait group's add (Go's sync.WaitGroup.Add): count += n.
     * Preconditions: 0 <= n, the count stays within max() (C: EOVERFLOW); from 0, every wait
     * on the latch's last use has returned (C: EINVAL while one is still registered). */
    void add(std::ptrdiff_t n = 1) noexcept
    {
        if (n < 0 || n > max()) return detail::bad_value();
        detail::check(fastsync_latch_add(&l_, static_cast<unsigned>(n)));
    }
    native_handle_type native_handle() noexcept { return &l_; }

  private:
    int wait_by(const detail::deadline &dl) const
    {
        return dl.finite ? fastsync_latch_clockwait(&l_, dl.clock, &dl.ts) : fastsync_latch_wait(&l_);
    }
    mutable fastsync_latch_t l_; /* mutable: the standard's waits are const */
};

/* ----------------------------------------------------------------------------------- */

namespace detail {
/* barrier<>'s completion: none (no call at all: the C calls' fn NULL). */
struct no_completion {
    void operator()() const noexcept {}
};

/* A barrier's count, checked (constexpr: a constant initializer). The C barrier has no
 * count 0, which the standard allows (then no thread may arrive): it gets 1. */
constexpr std::uint32_t barrier_count(std::ptrdiff_t v) noexcept
{
    return v == 0 ? 1u
                  : v > 0 && v <= static_cast<std::ptrdiff_t>(FASTSYNC_BARRIER_MAX) ? static_cast<std::uint32_t>(v)
                                                                                     : (bad_value(), 1u);
}

/* What a barrier holds: the C barrier, and the completion unless it is none (so barrier<>
 * is the C object, its size and standard-layout). fn()/arg(): the C calls' completion,
 * run by the thread whose arrival is a phase's last, before the phase ends (so before any
 * thread of the phase returns from its wait); in a noexcept frame (the standard requires a
 * completion that does not throw: one that does terminates here, where it would leave the
 * other threads of its phase waiting for ever). The C barrier's memory order: the
 * completion sees what every thread did before its arrival, and every thread that returns
 * from the phase's wait sees what the completion did. */
template <class F> struct barrier_state {
    fastsync_barrier_t b;
    F f;
    /* b: fastsync_barrier_init's process-private object, as a constant initializer; the
     * process-shared one calls it */
    constexpr barrier_state(std::uint32_t count, F &&g) : b FASTSYNC_BARRIER_INIT(count), f(std::move(g)) {}
    barrier_state(std::uint32_t count, int flags, F &&g) : f(std::move(g))
    {
        check(fastsync_barrier_init(&b, count, flags));
    }
    static void run(void *self) noexcept { static_cast<barrier_state *>(self)->f(); }
    void (*fn() const noexcept)(void *) { return &run; }
    void *arg() noexcept { return this; }
};
template <> struct barrier_state<no_completion> {
    fastsync_barrier_t b;
    constexpr barrier_state(std::uint32_t count, no_completion &&) : b FASTSYNC_BARRIER_INIT(count) {}
    barrier_state(std::uint32_t count, int flags, no_completion &&) { check(fastsync_barrier_init(&b, count, flags)); }
    void (*fn() const noexcept)(void *) { return nullptr; }
    void *arg() noexcept { return nullptr; }
};
} // namespace detail

/* std::barrier (see the manual). */
template <class CompletionFunction = detail::no_completion> class barrier {
  public:
    typedef fastsync_barrier_t *native_handle_type;

    /* The phase an arrival was in, for wait: move-only in use as the standard's (a value
     * the caller cannot make). */
    class arrival_token {
      public:
        arrival_token(arrival_token &&) noexcept = default;
        arrival_token &operator=(arrival_token &&) noexcept = default;

      private:
        friend class barrier;
        explicit arrival_token(fastsync_barrier_token_t r) noexcept : round_(r) {}
        fastsync_barrier_token_t round_;
    };

    static constexpr std::ptrdiff_t max() noexcept { return FASTSYNC_BARRIER_MAX; }

    constexpr explicit barrier(std::ptrdiff_t expected, CompletionFunction f = CompletionFunction())
        : s_(detail::barrier_count(expected), std::move(f))
    {
    }
#if FASTSYNC_HAS_SHARED
    barrier(std::ptrdiff_t expected, process_shared_t, CompletionFunction f = CompletionFunction())
        : s_(detail::barrier_count(expected), FASTSYNC_SHARED, std::move(f))
    {
    }
#endif
    /* Waits until every thread released by a phase has finished with the barrier (the C
     * destroy's wait; not its EBUSY for arrivals pending in a phase: std::barrier may be
     * destroyed with split arrivals pending, so long as no thread is blocked). After a
     * second without progress: again for a process-private barrier, whose released threads
     * cannot have died, unless a phase is in progress (a thread blocked in it: the
     * precondition); a process-shared one's EBUSY is the assertion's. */
    ~barrier()
    {
        int r;
        /* relaxed: it only decides whether to try again; the drain reads the word itself */
        while ((r = fastsync__barrier_drain(&s_.b, fastsync__barrier_idle)) == EBUSY &&
               !fastsync__bar_shared(fastsync__load(&s_.b.state, memory_order_relaxed)) && !fastsync__barrier_busy(&s_.b))
            fastsync__yield();
        detail::check(r);
    }
    barrier(const barrier &) = delete;
    barrier &operator=(const barrier &) = delete;

    /* None of these is a cancellation point (as the C calls), and the completion may not
     * throw: noexcept. An update of 0 or above what the phase still needs, or an
     * arrive_and_drop when it needs none: a precondition (FASTSYNC_ASSERT; unchecked,
     * nothing changes). */
#if __cplusplus >= 201703L
    [[nodiscard]]
#endif
    arrival_token arrive(std::ptrdiff_t update = 1) noexcept
    {
        fastsync_barrier_token_t t = 0;
        const unsigned n = update > 0 && update <= max() ? static_cast<unsigned>(update) : 0u;
        detail::check(arrival_ok(fastsync__barrier_arrive(&s_.b, n, 0, &t, s_.fn(), s_.arg())));
        return arrival_token(t);
    }
    void wait(arrival_token &&arrival) const noexcept
    {
        (void)fastsync_barrier_wait_token(&s_.b, arrival.round_);
    }
    void arrive_and_wait() noexcept { (void)fastsync__barrier_wait_fn(&s_.b, s_.fn(), s_.arg()); }
    void arrive_and_drop() noexcept
    {
        detail::check(arrival_ok(fastsync__barrier_arrive(&s_.b, 0, 1, nullptr, s_.fn(), s_.arg())));
    }
    native_handle_type native_handle() noexcept { return &s_.b; }

  private:
    static int arrival_ok(int r) noexcept { return r == FASTSYNC_BARRIER_SERIAL ? 0 : r; }
    mutable detail::barrier_state<CompletionFunction> s_; /* mutable: the standard's wait is const */
};

/* ----------------------------------------------------------------------------------- */

namespace detail {

/* A condition variable's or ticket's wait result as the standard's cv_status; with the
 * deadline's time_point, timeout only once its clock has reached it. */
inline std::cv_status cv_status_of(int r) noexcept
{
    return r == ETIMEDOUT ? std::cv_status::timeout : std::cv_status::no_timeout;
}
template <class Clock, class Dur> std::cv_status cv_status_of(int r, const std::chrono::time_point<Clock, Dur> &tp)
{
    return r == ETIMEDOUT && reached(tp) ? std::cv_status::timeout : std::cv_status::no_timeout;
}

/* What condition_variable, condition_variable_any and ticket share: the C object. */
class cond_base {
  public:
    typedef fastsync_cond_t *native_handle_type;

    constexpr cond_base() noexcept : c_ FASTSYNC_COND_INIT {}
#if FASTSYNC_HAS_SHARED
    explicit cond_base(process_shared_t) noexcept { check(fastsync_cond_init(&c_, FASTSYNC_SHARED)); }
#endif
    /* The C destroy waits for the waiters a notify released to leave, but gives up (EBUSY)
     * after a second in which none did (one may have died: a process-shared object). A
     * process-private one's waiters cannot die and leave it registered, so its destructor
     * waits on until they have left (a released waiter kept off the CPU, say by a signal
     * handler or a higher-priority destroyer): the standard lets it be destroyed once all
     * its waiters were notified. EBUSY with a ticket no notify released is misuse. */
    ~cond_base()
    {
        int r;
        /* relaxed: it only decides whether to try again; a destroy that returns 0 makes its
         * own acquire loads */
        while ((r = fastsync_cond_destroy(&c_)) == EBUSY && !fastsync__cv_shared(&c_) &&
               !fastsync__cv_uncalled(fastsync__load(&c_.state, memory_order_relaxed)))
            fastsync__yield();
        check(r);
    }
    cond_base(const cond_base &) = delete;
    cond_base &operator=(const cond_base &) = delete;

    void notify_one() noexcept { (void)fastsync_cond_signal(&c_); }
    void notify_all() noexcept { (void)fastsync_cond_broadcast(&c_); }
    native_handle_type native_handle() noexcept { return &c_; }

  protected:
    /* Registers t before the caller unlocks. false: 2047 tickets are registered; the
     * caller's wait is then a spurious wakeup, after a yield with its lock released. */
    template <class Lock> bool enter(fastsync_cond_ticket_t *t, Lock &lock)
    {
        if (fastsync_cond_register(&c_, t) == 0) return true;
        full(lock);
        return false;
    }
    /* No place for a ticket (the C calls' EAGAIN): a yield with the lock released. */
    template <class Lock> static void full(Lock &lock)
    {
        relock<Lock> r(lock);
        fastsync__yield();
    }
    /* Registered t, lock held: unlocks, awaits, locks again (on every way out). */
    template <class Lock> int await(fastsync_cond_ticket_t *t, Lock &lock, const deadline *dl)
    {
        relock<Lock> r(lock);
        return dl && dl->finite ? fastsync_cond_clockawait(&c_, t, dl->clock, &dl->ts) : fastsync_cond_await(&c_, t);
    }
    template <class Lock> int wait_by(Lock &lock, const deadline *dl)
    {
        fastsync_cond_ticket_t t;
        if (enter(&t, lock)) return await(&t, lock, dl);
        return past(dl) ? ETIMEDOUT : 0; /* no place: a timed wait still ends */
    }

    fastsync_cond_t c_;
    friend class fastsync::ticket;
};

} // namespace detail

class condition_variable : public detail::cond_base {
  public:
    constexpr condition_variable() noexcept : cond_base() {}
#if FASTSYNC_HAS_SHARED
    explicit condition_variable(process_shared_t s) noexcept : cond_base(s) {}
#endif

    void wait(std::unique_lock<mutex> &lock)
    {
        FASTSYNC_ASSERT(lock.owns_lock());
        (void)wait_by(lock, nullptr);
    }
    template <class Pred> void wait(std::unique_lock<mutex> &lock, Pred pred)
    {
        while (!pred()) wait(lock);
    }
    template <class Clock, class Dur>
    std::cv_status wait_until(std::unique_lock<mutex> &lock, const std::chrono::time_point<Clock, Dur> &tp)
    {
        FASTSYNC_ASSERT(lock.owns_lock());
        (void)detail::check_clock<Clock>();
        detail::deadline dl = detail::at(tp);
        return detail::cv_status_of(wait_by(lock, &dl), tp);
    }
    template <class Clock, class Dur, class Pred>
    bool wait_until(std::unique_lock<mutex> &lock, const std::chrono::time_point<Clock, Dur> &tp, Pred pred)
    {
        while (!pred())
            if (wait_until(lock, tp) == std::cv_status::timeout) return pred();
        return true;
    }
    template <class Rep, class Period>
    std::cv_status wait_for(std::unique_lock<mutex> &lock, const std::chrono::duration<Rep, Period> &d)
    {
        FASTSYNC_ASSERT(lock.owns_lock());
        detail::deadline dl = detail::after(d);
        return detail::cv_status_of(wait_by(lock, &dl));
    }
    template <class Rep, class Period, class Pred>
    bool wait_for(std::unique_lock<mutex> &lock, const std::chrono::duration<Rep, Period> &d, Pred pred)
    {
        FASTSYNC_ASSERT(lock.owns_lock());
        detail::deadline dl = detail::after(d); /* one deadline for the whole loop */
        while (!pred())
            if (wait_by(lock, &dl) == ETIMEDOUT) return pred();
        return true;
    }

  private:
    /* The C cond_wait (which relocks the mutex also when the thread is cancelled). */
    int wait_by(std::unique_lock<mutex> &lock, const detail::deadline *dl)
    {
        fastsync_mutex_t *m = lock.mutex()->native_handle();
        int r = dl && dl->finite ? fastsync_cond_clockwait(&c_, m, dl->clock, &dl->ts) : fastsync_cond_wait(&c_, m);
        if (r == EAGAIN) { /* 2047 waiters: a spurious wakeup, after a yield */
            full(*lock.mutex());
            return 0;
        }
        detail::check(r == ETIMEDOUT ? 0 : r); /* EPERM: the lock did not own the mutex */
        return r;
    }
};

namespace detail {
/* notify_all_at_thread_exit's list, one per thread: each node unlocks its mutex and then
 * notifies its condition variable. */
struct at_exit {
    condition_variable *cv;
    mutex *m;
    at_exit *next;
};
inline void run_at_exit(at_exit *e) noexcept;
#if defined(FASTSYNC_BACKEND_LINUX) || defined(FASTSYNC_BACKEND_POSIX)
/* The list hangs from a pthread key, whose destructor glibc runs after every thread_local
 * destructor of the thread (its thread exit: TLS destructors, then keys): the standard's
 * order. (As with libstdc++'s, nothing runs when the initial thread returns from main.) */
inline void at_exit_keyed(void *p) { run_at_exit(static_cast<at_exit *>(p)); }
struct at_exit_key {
    pthread_key_t key;
    at_exit_key() noexcept
    {
        int r = pthread_key_create(&key, at_exit_keyed);
        FASTSYNC_ASSERT(r == 0); /* EAGAIN: PTHREAD_KEYS_MAX keys in use */
        (void)r;
    }
};
inline void at_exit_push(condition_variable *cv, mutex *m)
{
    static at_exit_key k; /* made once, by the first caller (a C++11 static) */
    at_exit *e = new at_exit{cv, m, static_cast<at_exit *>(pthread_getspecific(k.key))};
    int r = pthread_setspecific(k.key, e);
    FASTSYNC_ASSERT(r == 0);
    (void)r;
}
#else
/* Elsewhere (Windows) a thread_local list, made by the thread's first call: destroyed after
 * the thread_locals made after that call, before those made before it. */
struct at_exit_list {
    at_exit *head = nullptr;
    ~at_exit_list() { run_at_exit(head); }
};
inline void at_exit_push(condition_variable *cv, mutex *m)
{
    static thread_local at_exit_list list;
    list.head = new at_exit{cv, m, list.head};
}
#endif
} // namespace detail

/* std::notify_all_at_thread_exit: keeps lk's mutex locked until the thread exits, then
 * unlocks it and notifies all of cv's waiters, after the thread's thread_local objects are
 * destroyed (on Windows: those made after its first call). The one allocation of this
 * header: a node per call (new: std::bad_alloc, or abort with -fno-exceptions). */
inline void notify_all_at_thread_exit(condition_variable &cv, std::unique_lock<mutex> lk)
{
    FASTSYNC_ASSERT(lk.owns_lock());
    detail::at_exit_push(&cv, lk.mutex());
    lk.release();
}

inline void detail::run_at_exit(at_exit *e) noexcept
{
    while (e) {
        at_exit *next = e->next;
        e->m->unlock();
        e->cv->notify_all();
        delete e;
        e = next;
    }
}

class condition_variable_any : public detail::cond_base {
  public:
    constexpr condition_variable_any() noexcept : cond_base() {}
#if FASTSYNC_HAS_SHARED
    explicit condition_variable_any(process_shared_t s) noexcept : cond_base(s) {}
#endif

    template <class Lock> void wait(Lock &lock) { (void)wait_by(lock, nullptr); }
    template <class Lock, class Pred> void wait(Lock &lock, Pred pred)
    {
        while (!pred()) wait(lock);
    }
    template <class Lock, class Clock, class Dur>
    std::cv_status wait_until(Lock &lock, const std::chrono::time_point<Clock, Dur> &tp)
    {
        detail::deadline dl = detail::at(tp);
        return detail::cv_status_of(wait_by(lock, &dl), tp);
    }
    template <class Lock, class Clock, class Dur, class Pred>
    bool wait_until(Lock &lock, const std::chrono::time_point<Clock, Dur> &tp, Pred pred)
    {
        while (!pred())
            if (wait_until(lock, tp) == std::cv_status::timeout) return pred();
        return true;
    }
    template <class Lock, class Rep, class Period>
    std::cv_status wait_for(Lock &lock, const std::chrono::duration<Rep, Period> &d)
    {
        detail::deadline dl = detail::after(d);
        return detail::cv_status_of(wait_by(lock, &dl));
    }
    template <class Lock, class Rep, class Period, class Pred>
    bool wait_for(Lock &lock, const std::chrono::duration<Rep, Period> &d, Pred pred)
    {
        detail::deadline dl = detail::after(d);
        while (!pred())
            if (wait_by(lock, &dl) == ETIMEDOUT) return pred();
        return true;
    }

#if FASTSYNC__HPP_STOP_TOKEN
    /* The interruptible waits: a stop request wakes the waiter (a notify_all from the stop
     * callback) and the wait returns pred(). The waiter's register RMW and the requester's
     * stop RMW are each followed by a seq_cst fence (handshake()) before it reads the other's word (the
     * stop flag; the condvar's state, in notify_all): of two such fences one comes first,
     * and the thread after it sees the other's write, so the request is never missed. */
    template <class Lock, class Pred> bool wait(Lock &lock, std::stop_token st, Pred pred)
    {
        return stop_wait(lock, st, pred, nullptr);
    }
    template <class Lock, class Clock, class Dur, class Pred>
    bool wait_until(Lock &lock, std::stop_token st, const std::chrono::time_point<Clock, Dur> &tp, Pred pred)
    {
        for (;;) {
            detail::deadline dl = detail::at(tp);
            if (stop_wait(lock, st, pred, &dl) || st.stop_requested() || detail::reached(tp)) return pred();
        }
    }
    template <class Lock, class Rep, class Period, class Pred>
    bool wait_for(Lock &lock, std::stop_token st, const std::chrono::duration<Rep, Period> &d, Pred pred)
    {
        detail::deadline dl = detail::after(d);
        return stop_wait(lock, st, pred, &dl);
    }

  private:
    /* pred() once true; false once stopped or past dl (then pred() is false). */
    template <class Lock, class Pred>
    bool stop_wait(Lock &lock, const std::stop_token &st, Pred &pred, const detail::deadline *dl)
    {
        if (st.stop_requested()) return pred();
        std::stop_callback<waker> cb(st, waker{this});
        while (!pred()) {
            fastsync_cond_ticket_t t;
            if (!enter(&t, lock)) {
                if (st.stop_requested() || detail::past(dl)) return pred();
                continue;
            }
            handshake(); /* pairs with waker's */
            if (st.stop_requested()) {
                (void)fastsync_cond_cancel(&c_, &t);
                return pred();
            }
            if (await(&t, lock, dl) == ETIMEDOUT) return pred();
        }
        return true;
    }
    /* Either half of the handshake: a seq_cst fence; under ThreadSanitizer, which has no
     * fences (gcc refuses them with -Wtsan), an acq_rel RMW that changes nothing on the
     * condition variable's word instead (fastsync.h's event does the same): of the two
     * RMWs the later reads the earlier, so the earlier thread's write (the registration;
     * the stop request) happens before the later thread's read of it. */
    void handshake() noexcept
    {
#if FASTSYNC__TSAN
        (void)fastsync__fetch_or(&c_.state, 0u, memory_order_acq_rel);
#else
        std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
    }
    struct waker {
        condition_variable_any *cv;
        void operator()() const noexcept
        {
            cv->handshake(); /* pairs with stop_wait's */
            cv->notify_all();
        }
    };
#endif
};

/* ----------------------------------------------------------------------------------- */

/* A ticket: registered with a condition variable at construction (before the caller checks
 * its predicates), then waited on once: wait, wait_for, wait_until, or as an entry of
 * wait_any; or given up (cancel, or the destructor). A notify made after the registration
 * is for it (the C ticket API's delivery rules). Every wait deregisters it, whatever it
 * returns; wait_until on a clock of its own returns no_timeout when the converted deadline
 * came before the clock reached tp (the ticket cannot wait twice: check, and take a new one). */
class ticket {
  public:
    explicit ticket(detail::cond_base &cv) noexcept : c_(&cv.c_), registered_(true)
    {
        while (fastsync_cond_register(c_, &t_) != 0) fastsync__yield();
    }
    ~ticket() { cancel(); }
    ticket(const ticket &) = delete;
    ticket &operator=(const ticket &) = delete;

    bool registered() const noexcept { return registered_; }
    void cancel() noexcept
    {
        if (registered_) (void)fastsync_cond_cancel(c_, &t_);
        registered_ = false;
    }
    void wait() { (void)wait_by(nullptr); }
    template <class Rep, class Period> std::cv_status wait_for(const std::chrono::duration<Rep, Period> &d)
    {
        detail::deadline dl = detail::after(d);
        return detail::cv_status_of(wait_by(&dl));
    }
    template <class Clock, class Dur> std::cv_status wait_until(const std::chrono::time_point<Clock, Dur> &tp)
    {
        detail::deadline dl = detail::at(tp);
        return detail::cv_status_of(wait_by(&dl), tp);
    }

  private:
    int wait_by(const detail::deadline *dl)
    {
        FASTSYNC_ASSERT(registered_);
        if (!registered_) return 0;
        registered_ = false; /* every await deregisters, whatever it returns */
        return dl && dl->finite ? fastsync_cond_clockawait(c_, &t_, dl->clock, &dl->ts) : fastsync_cond_await(c_, &t_);
    }
    fastsync_cond_t *c_;
    fastsync_cond_ticket_t t_;
    bool registered_;
    friend struct detail::entries;
};

/* ----------------------------------------------------------------------------------- */

namespace detail {

/* wait_any's list, made from its arguments; after the wait, a ticket that won is marked
 * deregistered. */
struct entries {
    /* a semaphore of either kind: its C semaphore (the wide kind's T) */
    template <std::ptrdiff_t N> static fastsync_wait_entry_t of(counting_semaphore<N> &s) noexcept
    {
        return fastsync_wait_sem(s.c_sem());
    }
    static fastsync_wait_entry_t of(event &e) noexcept { return fastsync_wait_event(e.native_handle()); }
    static fastsync_wait_entry_t of(latch &l) noexcept { return fastsync_wait_latch(l.native_handle()); }
    static fastsync_wait_entry_t of(fastsync_latch_t &l) noexcept { return fastsync_wait_latch(&l); }
    static fastsync_wait_entry_t of(ticket &t) noexcept
    {
        FASTSYNC_ASSERT(t.registered_);
        return fastsync_wait_ticket(t.c_, &t.t_);
    }
    template <class T> static void won(T &, unsigned, unsigned) noexcept {}
    /* a semaphore whose token the wait took (the wide kind refills after its take) */
    template <std::ptrdiff_t N> static void won(counting_semaphore<N> &s, unsigned i, unsigned winner) noexcept
    {
        if (i == winner) s.after_wait_any();
    }
    static void won(ticket &t, unsigned i, unsigned winner) noexcept
    {
        if (i == winner) t.registered_ = false;
    }
    template <class... Objs> static void mark(unsigned winner, Objs &...objs) noexcept
    {
        unsigned i = 0;
        int expand[] = {0, (won(objs, i++, winner), 0)...};
        (void)expand;
    }
    /* The C call: call(list, n, &index) -> 0 or an error; the index, or -1. */
    template <class Call, class... Objs> static int run(Call call, Objs &...objs)
    {
        static_assert(sizeof...(Objs) >= 1 && sizeof...(Objs) <= FASTSYNC_WAIT_ANY_MAX,
                      "fastsync::wait_any: 1 to FASTSYNC_WAIT_ANY_MAX objects");
        const fastsync_wait_entry_t list[] = {of(objs)...};
        unsigned index = 0;
        int r = call(list, static_cast<unsigned>(sizeof...(Objs)), &index);
        FASTSYNC_ASSERT(r == 0 || r == ETIMEDOUT || r == EAGAIN); /* EINVAL: an object twice */
        if (r != 0) return -1;
        mark(index, objs...);
        return static_cast<int>(index);
    }
};

/* wait_any_for's and wait_any_until's wait: until dl (for ever when it is not finite). */
template <class... Objs> int wait_any_by(const deadline &dl, Objs &...objs)
{
    return entries::run(
        [&dl](const fastsync_wait_entry_t *l, unsigned n, unsigned *i) {
            return dl.finite ? fastsync_clockwait_any(l, n, i, dl.clock, &dl.ts) : fastsync_wait_any(l, n, i);
        },
        objs...);
}

} // namespace detail

/* Waits until one of the objects (semaphores, events, registered tickets) is ready and
 * returns its index: the lowest ready one, and only it changes state (a token taken, a
 * ticket deregistered; an event is reported, not reset). The others stay as they were.
 * -1 only for what FASTSYNC_ASSERT catches (an object named twice: the C call's EINVAL),
 * where assertions are off. */
template <class... Objs> int wait_any(Objs &...objs)
{
    return detail::entries::run([](const fastsync_wait_entry_t *l, unsigned n, unsigned *i) { return fastsync_wait_any(l, n, i); },
                                objs...);
}
/* -1: none is ready (no wait). */
template <class... Objs> int try_wait_any(Objs &...objs) noexcept
{
    return detail::entries::run([](const fastsync_wait_entry_t *l, unsigned n, unsigned *i) { return fastsync_trywait_any(l, n, i); },
                                objs...);
}
/* -1: timed out. */
template <class Rep, class Period, class... Objs>
int wait_any_for(const std::chrono::duration<Rep, Period> &d, Objs &...objs)
{
    return detail::wait_any_by(detail::after(d), objs...);
}
template <class Clock, class Dur, class... Objs>
int wait_any_until(const std::chrono::time_point<Clock, Dur> &tp, Objs &...objs)
{
    for (;;) {
        int r = detail::wait_any_by(detail::at(tp), objs...);
        if (r >= 0 || detail::reached(tp)) return r;
    }
}

/* -----------------------------------------------------------------------------------
 * Waiting on an address: fastsync.h's fastsync_wait32, _clockwait32 and fastsync_wake32 (its
 * manual's "Waiting on an address" is the contract: spurious returns, never early, the
 * orders the caller uses) on a std::atomic<std::uint32_t>, which in C++ is
 * fastsync_word32_t itself: the same object as C's _Atomic(uint32_t), so a C file and a C++
 * file wait and wake on one word. flags: 0 or FASTSYNC_SHARED (where FASTSYNC_HAS_SHARED),
 * the same on both sides; anything else is a precondition (FASTSYNC_ASSERT). */
static_assert(std::is_same<fastsync_word32_t, std::atomic<std::uint32_t> >::value,
              "fastsync_word32_t is std::atomic<std::uint32_t> in C++");
static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && alignof(std::atomic<std::uint32_t>) == 4,
              "std::atomic<std::uint32_t> has the size and alignment of C's _Atomic(uint32_t)");
#if __cplusplus >= 201703L
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "std::atomic<std::uint32_t> is lock-free");
#else
static_assert(ATOMIC_INT_LOCK_FREE == 2 && sizeof(unsigned) == 4, "std::atomic<std::uint32_t> is lock-free");
#endif

namespace detail {
inline int wait32_by(const std::atomic<std::uint32_t> &word, std::uint32_t expected, int flags, const deadline &dl)
{
    int r = dl.finite ? fastsync_clockwait32(&word, expected, flags, dl.clock, &dl.ts)
                      : fastsync_wait32(&word, expected, flags);
    FASTSYNC_ASSERT(r != EINVAL);
    return r;
}
} // namespace detail

/* Blocks while word holds expected, until a wake (or spuriously): load it again after. */
inline void wait(const std::atomic<std::uint32_t> &word, std::uint32_t expected, int flags = 0)
{
    detail::check(fastsync_wait32(&word, expected, flags));
}
/* The same, until d has passed (on CLOCK_MONOTONIC from the call): false only then. */
template <class Rep, class Period>
bool wait_for(const std::atomic<std::uint32_t> &word, std::uint32_t expected,
              const std::chrono::duration<Rep, Period> &d, int flags = 0)
{
    return detail::wait32_by(word, expected, flags, detail::after(d)) != ETIMEDOUT;
}
/* The same, until tp: false only once Clock::now() >= tp (the deadlines above). */
template <class Clock, class Dur>
bool wait_until(const std::atomic<std::uint32_t> &word, std::uint32_t expected,
                const std::chrono::time_point<Clock, Dur> &tp, int flags = 0)
{
    return detail::wait_until(tp, [&word, expected, flags](const detail::deadline &dl) {
               return detail::wait32_by(word, expected, flags, dl);
           }) != ETIMEDOUT;
}
/* Wakes one (all) of the threads blocked on word. */
inline void wake_one(const std::atomic<std::uint32_t> &word, int flags = 0) noexcept
{
    detail::check(fastsync_wake32(&word, 1, flags));
}
inline void wake_all(const std::atomic<std::uint32_t> &word, int flags = 0) noexcept
{
    detail::check(fastsync_wake32_all(&word, flags));
}

} // inline namespace FASTSYNC__HPP_CONFIG
} // namespace fastsync

#endif /* FASTSYNC_HPP */
