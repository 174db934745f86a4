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

static int tap_count, tap_failures, tap_planned = -1;

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
    int n = ++tap_count;
    if (!pass) tap_failures++;
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
    if (tap_planned < 0) printf("1..%d\n", tap_count);
    else if (tap_planned != tap_count) diag("planned %d tests, ran %d", tap_planned, tap_count);
    fflush(stdout);
    return tap_failures == 0 && (tap_planned < 0 || tap_planned == tap_count) ? 0 : 1;
}

#endif
