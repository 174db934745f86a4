/* SPDX-License-Identifier: MIT */
/* test/genmc/cas_progress.h - GenMC v0.11 takes a retry loop whose only effect is a failed
 * CAS (the CAS writes nothing, it only refreshes the expected value) for a spin without
 * side effects, blocks it, and reports a liveness violation that is not there. Here every
 * failed CAS also makes one relaxed increment of a counter nobody reads, so that a round
 * of such a loop counts as progress. Include after <stdatomic.h>, before the code under
 * test. */
#ifndef FASTSYNC_GENMC_CAS_PROGRESS_H
#define FASTSYNC_GENMC_CAS_PROGRESS_H
#include <stdatomic.h>

static atomic_int genmc_failed_cas;

#define GENMC__CAS_COUNTED(builtin, p, e, d, s, f)                                         \
    (__extension__({                                                                       \
        _Bool done__ = builtin((p), (e), (d), (s), (f));                                   \
        if (!done__) atomic_fetch_add_explicit(&genmc_failed_cas, 1, memory_order_relaxed); \
        done__;                                                                            \
    }))
#undef atomic_compare_exchange_weak_explicit
#undef atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_weak_explicit(p, e, d, s, f)                                \
    GENMC__CAS_COUNTED(__c11_atomic_compare_exchange_weak, p, e, d, s, f)
#define atomic_compare_exchange_strong_explicit(p, e, d, s, f)                              \
    GENMC__CAS_COUNTED(__c11_atomic_compare_exchange_strong, p, e, d, s, f)
#endif
