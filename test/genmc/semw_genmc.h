/* SPDX-License-Identifier: MIT */
/* test/genmc/semw_genmc.h - what the wide semaphore's harnesses (semw_*_genmc.c) share: the
 * configuration (no cancellation, no spinning, the futex model over the C semaphore's 64-bit
 * word), the object w (fastsync.h's struct fastsync__semw: T, the C semaphore, and E, the
 * excess), an acquirer and a releaser as fastsync.hpp's wide counting_semaphore calls them,
 * and the end state they assert. A harness that defines SEMW_MODEL_MAX before including it
 * lowers T's max M (FASTSYNC_SEM_VALUE_MAX, which is INT_MAX) to that value: INT_MAX is
 * defined so before fastsync.h (futex_model.h and the system headers it includes come
 * first, with the real one). The protocol and its proof hold for every M >= 1; the header's
 * other uses of INT_MAX (a wake's "all") do not come up in these harnesses. */
#ifndef FASTSYNC_GENMC_SEMW_GENMC_H
#define FASTSYNC_GENMC_SEMW_GENMC_H

#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define MODEL_WORD64 /* the futex word is the low half of the C semaphore's 64-bit word */
#include "futex_model.h"
#ifdef SEMW_MODEL_MAX
#include <limits.h>
#undef INT_MAX
#define INT_MAX SEMW_MODEL_MAX
#endif
#include "fastsync.h"

#define M ((uint64_t)FASTSYNC_SEM_VALUE_MAX) /* T's max */

static struct fastsync__semw w;

/* acquire(): a take from T (asleep until there is a token), then the look and refill. */
static inline void *semw_acquirer(void *unused)
{
    (void)unused;
    fastsync__semw_wait(&w);
    return NULL;
}

/* release(n): the C post while T has room, else an add to E, its look and refill. */
static inline void *semw_releaser(void *n)
{
    (void)fastsync__semw_post_n(&w, (uint64_t)(uintptr_t)n);
    return NULL;
}

/* The end state, the threads joined (no refill in progress): exact conservation (T + E +
 * the tokens taken == initial + released), no token in E beside room in T (E == 0 or
 * T == M: the proof's claim), no waiter registered in T's word. */
static inline void semw_check_end(uint64_t initial, uint64_t released, uint64_t taken)
{
    uint64_t v = atomic_load_explicit(&w.t.state, memory_order_relaxed);
    uint64_t tk = fastsync__sem_tokens(v);
    uint64_t e = atomic_load_explicit(&w.e, memory_order_relaxed);
    assert(tk + e + taken == initial + released && "exact conservation");
    assert((e == 0 || tk == M) && "no token left in E beside room in T");
    assert(fastsync__sem_waiters(v) == 0 && "no waiter left registered");
}

#endif
