/* SPDX-License-Identifier: MIT */
/* GenMC harness: the barrier's split arrivals and its completion (issue 21: std::barrier's
 * arrive(n) and wait(token), and the completion run before a phase ends). A barrier of
 * count 2 with a completion (the C++ barrier's: fastsync.h's fastsync__barrier_wait_fn and
 * fastsync__barrier_arrive with a function): main arrives and waits in one call, thread A
 * arrives (split) and then waits on its token. Each writes its plain slot before it
 * arrives; the completion counts the phases in a plain counter and reads both slots. No
 * spinning: a thread that is not the round's last sleeps, at every moment of its way to
 * sleep against the round's end. Checked:
 *   - the completion reads both slots written (the arrivals are release RMWs, and the last
 *     one acquire: plain reads, so else a race or a failed assert);
 *   - after its wait each thread reads the phase count 1: the completion ran once, before
 *     the round ended (a completion run after the end races with the reader, or is seen
 *     not to have run);
 *   - nobody is left asleep (--check-liveness); at the end the word is round 1, count 2,
 *     nobody arrived or leaving.
 * With BARRIER_DROP (barrier_drop_genmc.c): thread A drops out (arrive_and_drop) instead,
 * and main then passes a second round alone, which must end at its own arrival (count 1).
 * (470 executions, 0.3 s; with BARRIER_DROP 37. A version with three threads, a split
 * arrival, a drop and two rounds did not end in 5 minutes.)
 * Planted mistakes: plant_barrier_completion_after_end.patch (the completion runs after the
 * round's end: a race with the thread it released); plant_barrier_split_relaxed.patch (the
 * split arrival's CAS relaxed: the completion's read of A's slot races with its write);
 * with BARRIER_DROP, plant_barrier_drop_no_count.patch (a drop arrives but leaves the
 * count: main's second round never ends, a liveness violation). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define MODEL_WORD64 /* the futex word is the low half of the 64-bit word */
#include "futex_model.h"
#include "fastsync.h"

static fastsync_barrier_t b;
static int slot[2]; /* plain: main's and A's writes before they arrive */
static int phases;  /* plain: the completion's count */

static void completion(void *unused)
{
    (void)unused;
    if (phases == 0) assert(slot[0] == 1 && slot[1] == 1 && "the completion sees every arrival of its round");
    phases++;
}

static void *thread_a(void *unused)
{
    (void)unused;
    slot[1] = 1;
#ifdef BARRIER_DROP
    int ret = fastsync__barrier_arrive(&b, 0, 1, NULL, completion, NULL);
    assert(ret == 0 || ret == FASTSYNC_BARRIER_SERIAL);
#else
    fastsync_barrier_token_t t;
    int ret = fastsync__barrier_arrive(&b, 1, 0, &t, completion, NULL);
    assert(ret == 0 || ret == FASTSYNC_BARRIER_SERIAL);
    assert(fastsync_barrier_wait_token(&b, t) == 0);
    assert(phases == 1 && "the round's completion ran before its wait returned");
#endif
    return NULL;
}

int main(void)
{
    pthread_t ta;
    assert(fastsync_barrier_init(&b, 2, 0) == 0);
    pthread_create(&ta, NULL, thread_a, NULL);
    slot[0] = 1;
    int ret = fastsync__barrier_wait_fn(&b, completion, NULL);
    assert(ret == 0 || ret == FASTSYNC_BARRIER_SERIAL);
    assert(phases == 1 && "the round's completion ran before its wait returned");
#ifdef BARRIER_DROP
    /* count 1 now: this thread alone ends the round */
    assert(fastsync__barrier_wait_fn(&b, completion, NULL) == FASTSYNC_BARRIER_SERIAL);
    assert(phases == 2);
#endif
    pthread_join(ta, NULL);
    /* relaxed: the join orders them */
#ifdef BARRIER_DROP
    assert(atomic_load_explicit(&b.state, memory_order_relaxed) == 2 * FASTSYNC__BAR_ROUND_ONE + FASTSYNC__BAR_COUNT_ONE);
#else
    assert(atomic_load_explicit(&b.state, memory_order_relaxed) == FASTSYNC__BAR_ROUND_ONE + 2 * FASTSYNC__BAR_COUNT_ONE);
#endif
    return 0;
}
