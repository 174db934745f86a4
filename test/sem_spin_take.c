/* SPDX-License-Identifier: MIT */
/* sem_spin_take: a spinning waiter never takes a token from a word on which a waiter is
 * registered: that token belongs to the sleeper the post wakes, which would otherwise wake
 * for nothing and go back to sleep. The spin loop polls the word and gives up once it sees
 * a waiter; the race is in its take: the poll saw "a token, no waiter", then a waiter
 * registered and a post came before the take's CAS, which fails and retries with the fresh
 * word. White-box and deterministic: the spin path's take (fastsync__sem_take_spin) is
 * called with such a stale guess of the word, in the states the race can leave. */
#include "harness.h"

static uint64_t word(uint32_t tokens, uint32_t waiters)
{
    return (uint64_t)tokens + (uint64_t)waiters * FASTSYNC__SEM_WAITER;
}

/* Sets the word to `now`, gives the spin take the guess `stale`; the result and the word. */
static int spin_take(fastsync_sem_t *s, uint64_t now, uint64_t stale, uint64_t *after)
{
    test_sem_force_word(s, now);
    int r = fastsync__sem_take_spin(s, stale);
    *after = test_sem_word(s);
    return r;
}

int main(void)
{
    test_init();
    fastsync_sem_t s;
    uint64_t after;
    if (fastsync_sem_init(&s, 0, 0) != 0) bail("fastsync_sem_init failed");

    /* The race: polled (1 token, 0 waiters); meanwhile a waiter registered and a post came. */
    is_int(spin_take(&s, word(1, 1), word(1, 0), &after), EAGAIN,
           "a waiter registered since the poll: the spin take gives up");
    is_int(after, word(1, 1), "... and the token stays for the registered waiter");
    is_int(spin_take(&s, word(3, 2), word(2, 0), &after), EAGAIN, "the same with 3 tokens and 2 waiters");
    is_int(after, word(3, 2), "... word unchanged");
    is_int(spin_take(&s, word(1, 1), word(1, 1), &after), EAGAIN, "a fresh guess showing a waiter: gives up");
    is_int(after, word(1, 1), "... word unchanged");

    /* Without a waiter the spin take is a take: it retries a failed CAS while tokens are there. */
    is_int(spin_take(&s, word(1, 0), word(2, 0), &after), 0, "no waiter, stale guess: takes the token");
    is_int(after, word(0, 0), "... one token taken");
    is_int(spin_take(&s, word(0, 0), word(1, 0), &after), EAGAIN, "no token left: EAGAIN");
    is_int(after, word(0, 0), "... word unchanged");

    /* The public calls are not spinners: trywait takes a token whoever waits (as sem_trywait). */
    test_sem_force_word(&s, word(1, 1));
    is_int(fastsync_sem_trywait(&s), 0, "trywait with a waiter registered still takes the token");
    test_sem_force_word(&s, word(0, 0));
    is_int(fastsync_sem_destroy(&s), 0, "destroy");
    return done_testing();
}
