// SPDX-License-Identifier: MIT
// test/sem_wide_probe.hpp - white-box access to the wide kind of fastsync::counting_semaphore
// (counting_semaphore<N> for N > FASTSYNC_SEM_VALUE_MAX): fastsync.hpp declares
// fastsync::detail::sem_probe a friend of detail::sem_wide and leaves its definition to the
// tests, which read its two counters and, to make a state that no sequence of calls leaves
// behind, write them. Only where ptrdiff_t is wider than 32 bits (the wide kind exists).
#ifndef FASTSYNC_TEST_SEM_WIDE_PROBE_HPP
#define FASTSYNC_TEST_SEM_WIDE_PROBE_HPP
#include "fastsync.hpp"

#include <cstdint>

#if PTRDIFF_MAX > INT_MAX
namespace fastsync {
namespace detail {
// relaxed (every access): a snapshot, or a state written while no other thread uses the
// object; what the test concludes is ordered by its own synchronization (joins).
struct sem_probe {
    // T: the tokens of the C semaphore
    static std::uint64_t tokens(const sem_wide &s) { return fastsync_sem_getvalue(&s.w_.t); }
    // E: the excess
    static std::uint64_t excess(const sem_wide &s) { return fastsync__load(&s.w_.e, memory_order_relaxed); }
    // the waiters registered in the C semaphore's word
    static unsigned waiters(const sem_wide &s)
    {
        return fastsync__sem_waiters(fastsync__load(&s.w_.t.state, memory_order_relaxed));
    }
    // T and E overwritten (the waiter count and the shared bit kept)
    static void force(sem_wide &s, std::uint32_t tokens, std::uint64_t excess)
    {
        std::uint64_t w = fastsync__load(&s.w_.t.state, memory_order_relaxed);
        fastsync__store(&s.w_.t.state, (w & ~static_cast<std::uint64_t>(FASTSYNC__SEM_TOKENS)) | tokens,
                        memory_order_relaxed);
        fastsync__store(&s.w_.e, excess, memory_order_relaxed);
    }
};
} // namespace detail
} // namespace fastsync
#endif
#endif
