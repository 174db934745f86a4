/* SPDX-License-Identifier: MIT */
/* sem_init_range: the semaphore's value never leaves 0..FASTSYNC_SEM_VALUE_MAX. A word holding
 * more tokens than that (no call makes one; FASTSYNC_SEM_INIT(-1) did, before it refused to
 * compile: see sem_init_const.c) makes every post fail with EOVERFLOW and leaves the word as
 * it was: the overflow check must not wrap (tokens above INT_MAX once made
 * INT_MAX - tokens underflow, and the post then wrapped the token field into the waiters). */
#include "harness.h"

static uint64_t word(uint32_t tokens, uint32_t waiters)
{
    return (uint64_t)tokens + (uint64_t)waiters * FASTSYNC__SEM_WAITER;
}

int main(void)
{
    test_init();
    fastsync_sem_t s;
    if (fastsync_sem_init(&s, 0, 0) != 0) bail("fastsync_sem_init failed");
    const uint32_t over[] = { (uint32_t)FASTSYNC_SEM_VALUE_MAX + 1u, 0xfffffffeu, 0xffffffffu };
    for (unsigned i = 0; i < sizeof over / sizeof over[0]; i++) {
        for (uint32_t waiters = 0; waiters < 2; waiters++) {
            uint64_t w = word(over[i], waiters);
            test_sem_force_word(&s, w);
            is_int(fastsync_sem_post(&s), EOVERFLOW, "tokens 0x%08x, %u waiters: post says EOVERFLOW",
                   (unsigned)over[i], (unsigned)waiters);
            is_int(test_sem_word(&s), w, "... the word is unchanged");
            is_int(fastsync_sem_post_n(&s, 2), EOVERFLOW, "... post_n(2) too");
            is_int(fastsync_sem_post_n(&s, UINT_MAX), EOVERFLOW, "... post_n(UINT_MAX) too");
            is_int(test_sem_word(&s), w, "... the word is unchanged");
        }
    }
    /* the edge itself, for comparison: a post that reaches the max is fine, one more is not */
    test_sem_force_word(&s, word((uint32_t)FASTSYNC_SEM_VALUE_MAX - 1u, 0));
    is_int(fastsync_sem_post(&s), 0, "post up to FASTSYNC_SEM_VALUE_MAX: 0");
    is_int(fastsync_sem_post(&s), EOVERFLOW, "one more: EOVERFLOW");
    is_int(fastsync_sem_getvalue(&s), FASTSYNC_SEM_VALUE_MAX, "value FASTSYNC_SEM_VALUE_MAX");
    test_sem_force_word(&s, word(0, 0));
    is_int(fastsync_sem_destroy(&s), 0, "destroy");
    return done_testing();
}
