/* SPDX-License-Identifier: MIT */
/* test/cxx_wait32_peer.c - the C side of cxx_wait32.cpp, compiled as C: it waits and wakes
 * with fastsync_wait32 and fastsync_wake32 on a word that the C++ side declares as
 * std::atomic<std::uint32_t> (fastsync_word32_t in both languages). */
#include "cxx_wait32_peer.h"

unsigned long cxx_wait32_peer(fastsync_word32_t *w, unsigned long rounds)
{
    unsigned long bad = 0;
    for (unsigned long k = 0; k < rounds; k++) {
        uint32_t v;
        /* acquire: pairs with the C++ side's release store of 2k+1 */
        while ((v = atomic_load_explicit(w, memory_order_acquire)) == (uint32_t)(2 * k))
            bad += fastsync_wait32(w, v, 0) != 0;
        bad += v != (uint32_t)(2 * k + 1);
        /* release: pairs with the C++ side's acquire load */
        atomic_store_explicit(w, (uint32_t)(2 * k + 2), memory_order_release);
        bad += fastsync_wake32(w, 1, 0) != 0;
    }
    return bad;
}
