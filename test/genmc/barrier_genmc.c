/* SPDX-License-Identifier: MIT */
/* GenMC harness: the barrier's rounds do not mix, each has one serial thread, and no wake is
 * lost (issue 21). A barrier of count BARRIER_COUNT; main and BARRIER_COUNT - 1 threads pass
 * it BARRIER_ROUNDS times. In round r each thread writes its own plain slot slot[r][self]
 * before its wait, and after the wait reads every thread's slot of that round; the serial
 * thread (FASTSYNC_BARRIER_SERIAL) adds 1 to a plain count of its round. No spinning: a
 * thread that is not the round's last sets `slept` and sleeps, at every moment of its way
 * to sleep against the round's end; a thread of round 1 may still be leaving round 0 when
 * the other arrives in round 1. Checked:
 *   - after its wait every thread reads every slot of its round written (1): plain reads,
 *     so a wait that returns before every thread's arrival, or not ordered after it (the
 *     arrivals' release, the serial thread's acquire arrival and release end, the others'
 *     acquire load of the moved round), is a race or a failed assert; the slots of the next
 *     round are others, so a thread of round r + 1 never races with a reader of round r
 *     (that it does not is what the barrier promises);
 *   - exactly one serial thread per round (two race on the count, or leave it at 2);
 *   - every wait returns 0 or FASTSYNC_BARRIER_SERIAL, and nobody is left asleep
 *     (--check-liveness);
 *   - at the end no thread has arrived in a new round, `slept` is clear, the round number
 *     is BARRIER_ROUNDS, `leaving` is 0 and the count unchanged (the whole word).
 * (4 884 executions, 1.5 s. Count 2 and three rounds took 164 484 executions (74 s), count
 * 3 and one round 40 008 (6 s); count 3 and two rounds did not end in 2 minutes.)
 * Planted mistakes: plant_barrier_arrive_relaxed.patch (the arrival relaxed instead of
 * acq_rel: a race on the slots), plant_barrier_no_wake.patch (the end skips the
 * wake `slept` asks for), plant_barrier_no_slept.patch (a thread sleeps without setting
 * `slept`: the end reads it clear and wakes nobody): both liveness violations. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define MODEL_WORD64 /* the futex word is the low half of the 64-bit word */
#include "futex_model.h"
#include "fastsync.h"

#ifndef BARRIER_COUNT
#define BARRIER_COUNT 2
#endif
#ifndef BARRIER_ROUNDS
#define BARRIER_ROUNDS 2
#endif

static fastsync_barrier_t b;
static int slot[BARRIER_ROUNDS][BARRIER_COUNT]; /* plain: each thread's write in each round */
static int serials[BARRIER_ROUNDS];             /* plain: the serial thread's count */

static void pass(int self)
{
    for (int r = 0; r < BARRIER_ROUNDS; r++) {
        slot[r][self] = 1;
        int ret = fastsync_barrier_wait(&b);
        assert(ret == 0 || ret == FASTSYNC_BARRIER_SERIAL);
        if (ret == FASTSYNC_BARRIER_SERIAL) serials[r]++;
        for (int i = 0; i < BARRIER_COUNT; i++)
            assert(slot[r][i] == 1 && "a wait returns after every thread of its round arrived");
    }
}

static void *thread(void *arg)
{
    pass((int)(intptr_t)arg);
    return NULL;
}

int main(void)
{
    pthread_t t[BARRIER_COUNT - 1];
    assert(fastsync_barrier_init(&b, BARRIER_COUNT, 0) == 0);
    for (int i = 1; i < BARRIER_COUNT; i++) pthread_create(&t[i - 1], NULL, thread, (void *)(intptr_t)i);
    pass(0);
    for (int i = 1; i < BARRIER_COUNT; i++) pthread_join(t[i - 1], NULL);
    for (int r = 0; r < BARRIER_ROUNDS; r++) assert(serials[r] == 1 && "one serial thread per round");
    /* relaxed: the joins order them */
    assert(atomic_load_explicit(&b.state, memory_order_relaxed) ==
           BARRIER_ROUNDS * FASTSYNC__BAR_ROUND_ONE + BARRIER_COUNT * FASTSYNC__BAR_COUNT_ONE);
    return 0;
}
