/* SPDX-License-Identifier: MIT */
/* GenMC harness: no lost wakeup across the wide semaphore's excess, and the order a release
 * gives the acquire that gets its token through it, with T's max M lowered to 2 so that a
 * thread drains T in two takes (at the real M = INT_MAX that is 2^31 takes away;
 * semw_genmc.c checks the same code there, up to the state that would leave a waiter
 * asleep). semw_genmc.h lowers M, which is FASTSYNC_SEM_VALUE_MAX (INT_MAX), to
 * SEMW_MODEL_MAX before it includes fastsync.h, and main asserts M == 2. Nothing in the
 * protocol or its proof depends on M's value (M >= 1), and the code is fastsync.h's own; the
 * C semaphore's overflow check (fastsync_sem_post_n's EOVERFLOW) is then at 2.
 * T starts full (2), E at 0. A takes two tokens (each take followed by its look at E); a
 * releaser writes a plain int and releases 1: its C post fits if a take came first, else
 * it overflows into E, and the releaser's look, or A's look after a take, moves the token
 * into T. Main, once A has its two, takes the third token, sleeping on T at 0 where it
 * finds none: it must return (a token left in E beside a sleeper is a liveness violation),
 * and then reads the releaser's int (the release happens before the acquire that gets its
 * token, whichever thread moved it: else a race). At the end T, E and T's waiter count
 * are 0. 258 executions, 0.2 s.
 * Planted mistakes (each a liveness violation, main asleep on T at 0 with the token in E):
 * plant_semw_take_fence.patch (the look after a take with an acq_rel fence, not seq_cst);
 * plant_semw_add_fence.patch (the look after an add the same). A race:
 * plant_semw_claim_relaxed.patch (the claim's CAS relaxed, not acquire: where A moved the
 * token, nothing orders the releaser's write before main's read). */
#define SEMW_MODEL_MAX 2 /* T's max M (FASTSYNC_SEM_VALUE_MAX), drained by two takes */
#include "semw_genmc.h"

static int data; /* plain: written before the release, read after the acquire */

static void *taker(void *unused)
{
    (void)unused;
    fastsync__semw_wait(&w);
    fastsync__semw_wait(&w);
    return NULL;
}

static void *releaser(void *unused)
{
    (void)unused;
    data = 1;
    (void)fastsync__semw_post_n(&w, 1);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    assert(M == 2);
    assert(fastsync__semw_init(&w, M, 0) == 0);
    pthread_create(&t[0], NULL, taker, NULL);
    pthread_create(&t[1], NULL, releaser, NULL);
    pthread_join(t[0], NULL);
    fastsync__semw_wait(&w); /* the third token: the release's */
    assert(data == 1);
    pthread_join(t[1], NULL);
    semw_check_end(M, 1, 3); /* T and E 0 */
    return 0;
}
