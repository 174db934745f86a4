/* SPDX-License-Identifier: MIT */
/* GenMC harness: the wide semaphore's give-back (fastsync.h's fastsync__semw_refill), at the
 * real M = INT_MAX. It starts full: T at M, E at 1 (fastsync__semw_init with M + 1). An
 * acquirer A takes from T, looks, finds E's token and claims it; a releaser's C post (of 1)
 * may then fill T before A posts, so that A gives the token back to E (an add) and looks
 * again. Main takes a second token once the release is done, while A may still be in its
 * move: its take and A's give-back are the pair whose looks must not both miss. At the
 * end, exact conservation (T + E + 2 == M + 1 + 1) and no token in E beside room in T
 * (E == 0 or T == M: the proof's claim with no refill in progress). 1 974 executions,
 * 0.2 s. A main free to come first (two acquirers and the releaser) took 2 820 580
 * executions (149 s).
 * Planted mistake: plant_semw_give_back_fence.patch (the look after a give-back with an
 * acq_rel fence, not seq_cst): A reads T full, main's look reads E before the give-back,
 * and a token stays in E with T at M - 1 (the assert "no token left in E beside room in
 * T"). With M lowered to 2 (SEMW_MODEL_MAX) and main taking three tokens, the same plant
 * leaves main asleep for ever (a liveness violation; 57 249 executions, 11 s, not in the
 * suite). */
#include "semw_genmc.h"

int main(void)
{
    pthread_t t[2];
    assert(fastsync__semw_init(&w, M + 1, 0) == 0);
    pthread_create(&t[0], NULL, semw_acquirer, NULL);
    pthread_create(&t[1], NULL, semw_releaser, (void *)1);
    pthread_join(t[1], NULL);
    fastsync__semw_wait(&w); /* the second take, A perhaps still in its move */
    pthread_join(t[0], NULL);
    semw_check_end(M + 1, 1, 2);
    return 0;
}
