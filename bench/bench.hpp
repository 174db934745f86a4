// SPDX-License-Identifier: MIT
// bench/bench.hpp - what the C++20 benchmarks (bench/cxx.cpp, bench/wait32.cpp) share:
// bench/bench.h's helpers in C++ (the clock, pinning, the options every benchmark takes, the
// median and its CSV row).
#ifndef FASTSYNC_BENCH_HPP
#define FASTSYNC_BENCH_HPP

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>


// The loops that callgrind measures stay functions of their own, with their own names
// (no constant-propagated clone, whose name --toggle-collect=loop_x(*) would not match).
#if defined(__clang__)
#define LOOP_FN __attribute__((noinline))
#else
#define LOOP_FN __attribute__((noinline, noclone))
#endif

inline std::uint64_t now_ns()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

[[noreturn]] inline void fail(const char *what)
{
    std::fprintf(stderr, "BENCH FAILED: %s\n", what);
    std::exit(1);
}

inline long ncpu() { return sysconf(_SC_NPROCESSORS_ONLN); }

// Pins the calling thread to CPU cpu (ignored if the machine has no such CPU).
inline void pin(int cpu)
{
    if (cpu < 0 || cpu >= ncpu()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Limits the calling thread to CPUs 0..n-1 (those online).
inline void limit_cpus(int n)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < n && cpu < ncpu(); cpu++) CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

struct opts {
    bool quick = false;
    int reps = 5;
    const char *csv = nullptr;
    const char *build = "glibc";
    const char *op = nullptr;
    long iters = 0;
    unsigned ms = 0;
    std::vector<std::string> cases;
};

inline opts parse(int argc, char **argv)
{
    opts o;
#if !defined(__GLIBC__)
    o.build = "libc";
#endif
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool more = i + 1 < argc;
        if (a == "--quick") o.quick = true;
        else if (a == "--reps" && more) o.reps = std::atoi(argv[++i]);
        else if (a == "--csv" && more) o.csv = argv[++i];
        else if (a == "--build" && more) o.build = argv[++i];
        else if (a == "--op" && more) o.op = argv[++i];
        else if (a == "--iters" && more) o.iters = std::atol(argv[++i]);
        else if (a == "--ms" && more) o.ms = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a.compare(0, 2, "--") == 0) {
            std::fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[i]);
            std::exit(2);
        } else o.cases.push_back(a);
    }
    if (o.reps < 1) o.reps = 1;
    return o;
}

// The median of v (sorted by the call), with its min and max; appends the CSV row
// bench,build,variant,metric,unit,median,min,max,reps (bench/bench.h's) to --csv FILE.
inline double row(const opts &o, const char *bench, const char *variant, const std::string &metric,
                  const char *unit, std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    if (o.csv) {
        FILE *f = std::fopen(o.csv, "a");
        if (!f) {
            std::perror(o.csv);
            std::exit(2);
        }
        std::fprintf(f, "%s,%s,%s,%s,%s,%.6g,%.6g,%.6g,%zu\n", bench, o.build, variant, metric.c_str(), unit,
                     med, v.front(), v.back(), n);
        std::fclose(f);
    }
    return med;
}

// Each object on a cache line of its own.

#endif
