// SPDX-License-Identifier: MIT
// bench/latency_absl.cpp - bench/latency.c as C++23 with Abseil's absl::Mutex beside the
// mutexes (bench/meson.build builds it where it finds absl_synchronization; bench/run runs it
// as the libstdc++ build of bench/latency). Nothing of its own: latency.c says it all.
#define LATENCY_ABSL 1
#include "latency.c"
