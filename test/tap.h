/* SPDX-License-Identifier: MIT */
/* test/tap.h - a tiny TAP (Test Anything Protocol) producer for fastsync's tests.
 *
 *   plan(n)                 "1..n" (or call done_testing() at the end without a plan)
 *   ok(cond, fmt, ...)      one test point; returns cond
 *   is_int(got, want, ...)  ok(got == want), with both values in a diagnostic on failure
 *   diag(fmt, ...)          a "# " comment line
 *   skip(why, fmt, ...)     a test point that did not run, and why
 *   bail(fmt, ...)          "Bail out!" and exit(1): the run cannot go on
 *   done_testing()          prints the plan if none was given; the process exit status
 * Safe to call from several threads: each line is written whole. */
#ifndef FASTSYNC_TEST_TAP_H
#define FASTSYNC_TEST_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __cplusplus /* the C++ tests (cxx_*.cpp) use it too */
#include <atomic>
#define TAP_ATOMIC(T) std::atomic<T>
using std::atomic_fetch_add_explicit;
using std::atomic_load_explicit;
using std::memory_order_relaxed;
#else
#include <stdatomic.h>
#define TAP_ATOMIC(T) _Atomic(T)
#endif

static TAP_ATOMIC(int) tap_count, tap_failures;
static int tap_planned = -1;

/* The next test point's number. Atomic because a watchdog thread numbers its "not ok" line
 * without stdout's lock (the thread it gave up on may hold it); relaxed: a count, each line's
 * text is ordered by stdout's lock or by the exit that follows the watchdog's line. */
static inline int tap_next(void)
{
    return atomic_fetch_add_explicit(&tap_count, 1, memory_order_relaxed) + 1;
}

#if defined(_WIN32) /* the C runtime's names for them */
#define flockfile _lock_file
#define funlockfile _unlock_file
#endif

static inline void tap_vline(const char *prefix, const char *fmt, va_list ap)
{
    flockfile(stdout);
    fputs(prefix, stdout);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
    funlockfile(stdout);
}

static inline void plan(int n)
{
    tap_planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}

static inline void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_vline("# ", fmt, ap);
    va_end(ap);
}

static inline bool tap_point(bool pass, const char *directive, const char *fmt, va_list ap)
{
    flockfile(stdout);
    int n = tap_next();
    /* relaxed: a count, read after every thread that adds to it was joined */
    if (!pass) atomic_fetch_add_explicit(&tap_failures, 1, memory_order_relaxed);
    printf("%sok %d - ", pass ? "" : "not ", n);
    vprintf(fmt, ap);
    if (directive) fputs(directive, stdout);
    putchar('\n');
    fflush(stdout);
    funlockfile(stdout);
    return pass;
}

static inline bool ok(bool pass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_point(pass, NULL, fmt, ap);
    va_end(ap);
    return pass;
}

#define is_int(got, want, ...) tap_is_int((long long)(got), (long long)(want), __VA_ARGS__)
static inline bool tap_is_int(long long got, long long want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_point(got == want, NULL, fmt, ap);
    va_end(ap);
    if (got != want) diag("  got %lld, want %lld", got, want);
    return got == want;
}

static inline void skip(const char *why, const char *fmt, ...)
{
    char directive[256];
    snprintf(directive, sizeof directive, " # SKIP %s", why);
    va_list ap;
    va_start(ap, fmt);
    tap_point(true, directive, fmt, ap);
    va_end(ap);
}

/* The whole test does not apply here: TAP's plan of none, with the reason. */
static inline void skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    fflush(stdout);
    exit(0);
}

static inline void bail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_vline("Bail out! ", fmt, ap);
    va_end(ap);
    exit(1);
}

static inline int done_testing(void)
{
    /* relaxed: the threads that counted were joined (or are a watchdog that did not fire) */
    int n = atomic_load_explicit(&tap_count, memory_order_relaxed);
    int failed = atomic_load_explicit(&tap_failures, memory_order_relaxed);
    if (tap_planned < 0) printf("1..%d\n", n);
    else if (tap_planned != n) diag("planned %d tests, ran %d", tap_planned, n);
    fflush(stdout);
    return failed == 0 && (tap_planned < 0 || tap_planned == n) ? 0 : 1;
}

#endif
