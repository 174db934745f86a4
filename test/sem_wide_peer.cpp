// SPDX-License-Identifier: MIT
// test/sem_wide_peer.cpp - fastsync::counting_semaphore<PTRDIFF_MAX> (the wide kind) behind the
// C calls of sem_wide_peer.h, for sem_wide_boundary.c; its waits and wakes go through the C
// test's harness (FASTSYNC_FUTEX_WAIT and _WAKE, the header's seam for another futex layer).
#include "sem_wide_peer.h"
#define FASTSYNC_FUTEX_WAIT sem_wide_futex_wait
#define FASTSYNC_FUTEX_WAKE sem_wide_futex_wake
#include "fastsync.hpp"
#include "sem_wide_probe.hpp"

#include <chrono>

#if PTRDIFF_MAX > INT_MAX
struct sem_wide {
    explicit sem_wide(std::int64_t desired) : s(static_cast<std::ptrdiff_t>(desired)) {}
    fastsync::counting_semaphore<PTRDIFF_MAX> s;
};
typedef fastsync::detail::sem_probe probe;

int sem_wide_exists(void) { return 1; }
struct sem_wide *sem_wide_new(int64_t desired) { return new sem_wide(desired); }
void sem_wide_delete(struct sem_wide *s) { delete s; }
void sem_wide_release(struct sem_wide *s, int64_t update) { s->s.release(static_cast<std::ptrdiff_t>(update)); }
void sem_wide_acquire(struct sem_wide *s) { s->s.acquire(); }
int sem_wide_try_acquire(struct sem_wide *s) { return s->s.try_acquire(); }
int sem_wide_try_acquire_for(struct sem_wide *s, int64_t ns)
{
    return s->s.try_acquire_for(std::chrono::nanoseconds(ns));
}
int sem_wide_try_acquire_until_system(struct sem_wide *s, int64_t ns)
{
    return s->s.try_acquire_until(std::chrono::system_clock::now() + std::chrono::nanoseconds(ns));
}
uint64_t sem_wide_tokens(const struct sem_wide *s) { return probe::tokens(s->s); }
uint64_t sem_wide_excess(const struct sem_wide *s) { return probe::excess(s->s); }
unsigned sem_wide_waiters(const struct sem_wide *s) { return probe::waiters(s->s); }
#else
int sem_wide_exists(void) { return 0; }
#endif
