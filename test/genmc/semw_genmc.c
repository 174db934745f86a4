/* SPDX-License-Identifier: MIT */
/* GenMC harness: the wide semaphore (fastsync.h's struct fastsync__semw, under fastsync.hpp's
 * counting_semaphore<N> for N > INT_MAX) at the real top of its C semaphore, M = INT_MAX.
 * T starts at M - 1 (fastsync__semw_init, through the C init), E at 0. An acquirer takes
 * one token from T and looks at E after its take, while one releaser releases 2 and
 * another 1: a C post fits only where T has room for it (after the take, or before the
 * other release), else it overflows into E and the releaser looks and moves what T has
 * room for; a move whose post finds T filled by the other release meanwhile gives its
 * tokens back to E and looks again. At the end:
 *   - exact conservation: T + E + 1 (the token taken) == M - 1 + 3;
 *   - no token left in E beside room in T (E == 0 or T == M): the proof's claim, once no
 *     refill is in progress. (With T near M nobody here can drain T to 0, so a token
 *     stranded in E shows as this assert; semw_wait_genmc.c shows the waiter it would leave
 *     asleep.)
 * 9 143 executions, 0.9 s.
 * Planted mistakes: plant_semw_take_fence.patch (the look after a take with an acq_rel
 * fence, not seq_cst) and plant_semw_add_fence.patch (the look after an add the same):
 * the take's look and the add's look both miss the other's step (store buffering), and E
 * keeps a token with T below M (the assert "no token left in E beside room in T");
 * plant_semw_no_give_back.patch (a move
 * drops what found no room: the assert "exact conservation"). */
#include "semw_genmc.h"

int main(void)
{
    pthread_t t[3];
    assert(fastsync__semw_init(&w, M - 1, 0) == 0);
    pthread_create(&t[0], NULL, semw_acquirer, NULL);
    pthread_create(&t[1], NULL, semw_releaser, (void *)2);
    pthread_create(&t[2], NULL, semw_releaser, (void *)1);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    semw_check_end(M - 1, 3, 1);
    return 0;
}
