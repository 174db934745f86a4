/* SPDX-License-Identifier: MIT */
/* GenMC harness: the latch loses no wake and publishes every count-down (issue 21). A latch
 * of count 2; two counters each write a plain int and count down by 1; main and a thread W
 * wait on it. A waiter enters (waiters += 1, its first access), sets `slept` while the count
 * is above 0 and sleeps, at every moment of its way to sleep against the count-downs; no
 * spinning. The second counter
 * counts down once it sees the count at 1 (a relaxed load of the word: the first counter's
 * write reaches the waiters only through the release sequence of its CAS, which the second
 * counter's CAS continues; with both counters free to come first the harness ran more than
 * 3 minutes here without ending). Checked:
 *   - every wait that returns finds the count 0 and reads both counters' ints: plain reads,
 *     so a return not ordered after both count-downs (their release CAS, continued by the
 *     release sequence, read by the waiter's acquire load or RMW) is a race, which GenMC
 *     reports, and one before them fails the assert;
 *   - nobody is left asleep (--check-liveness): the count_down that opens the latch reads
 *     `slept` in its own RMW and wakes them all;
 *   - at the end the word holds count 0, no `slept` and no waiter (every waiter left).
 * With LATCH_TIMED defined (latch_timed_genmc.c): a latch of count 1, one counter, main
 * waiting and a timed waiter T, which enters and sleeps as fastsync_latch_clockwait does
 * (its deadline check reads the clock, which GenMC does not run: T skips it; the deadline
 * here is the model's: any non-NULL abstime), its deadline passing at a moment GenMC
 * chooses (futex_model.h's model_time_out, called by main while the others run: before T
 * sleeps, while it sleeps, or as a wake picks it): T returns 0 (the count 0, the counter's
 * write seen; also where its leave's own value shows the latch open) or ETIMEDOUT, main
 * always returns, and T's leave leaves no waiter and no `slept` behind.
 * With LATCH_ADD defined (latch_add_genmc.c): a latch of count 1, which the first counter
 * raises by 1 (fastsync_latch_add) before it lets the second counter go (as a thread that
 * hands out more work before it counts its own share down), then counts down; the waiter
 * (main) must return only after both count-downs, whichever comes first (522 executions).
 * The reads of the ints are in a function that is not inlined: at -O1 clang hoisted a plain
 * read out of `if (r == 0)` (legal in LLVM, whose racy loads give undef), and GenMC reported
 * a race of a read that the program makes only on the other branch.
 * Planted mistakes: plant_latch_count_down_relaxed.patch (count_down's CAS relaxed instead
 * of release: a race on a counter's int); plant_latch_no_wake.patch (the count_down that
 * makes the count 0 skips the wake its waiters are owed; also in latch_add_genmc.c),
 * plant_latch_wake_inverted.patch (it wakes only when `slept` is not set),
 * plant_latch_no_slept.patch (a waiter sleeps without setting `slept`), and in
 * latch_timed_genmc.c plant_latch_slept_before_cas.patch (the count_down reads `slept`
 * from a load before its CAS loop, not from its CAS: a `slept` set in between is missed):
 * each leaves a waiter asleep. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WORD64       /* the futex word is the low half of the latch's 64-bit word */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

#if defined LATCH_ADD || defined LATCH_TIMED
#define LATCH_COUNT 1
#else
#define LATCH_COUNT 2
#endif
#ifdef LATCH_TIMED
#define COUNTERS 1
#else
#define COUNTERS 2
#endif

static fastsync_latch_t latch;
static int data[COUNTERS]; /* plain: counter i's write before its count_down */
#ifdef LATCH_ADD
static atomic_int go; /* the second counter's gate: the add is done */
#endif

__attribute__((noinline)) static void check_open(void)
{
    for (int i = 0; i < COUNTERS; i++)
        assert(data[i] == 1 && "a waiter returns after every count-down, seeing its write");
}

static void *counter(void *arg)
{
    int i = (int)(intptr_t)arg;
#ifdef LATCH_ADD
    if (i == 0) {
        assert(fastsync_latch_add(&latch, 1) == 0); /* the count is 1 or more: no EINVAL */
        /* release: pairs with the second counter's acquire load: its count_down comes after
         * the add in the word's order (as in a thread this one started) */
        atomic_store_explicit(&go, 1, memory_order_release);
    } else {
        while (!atomic_load_explicit(&go, memory_order_acquire)) {}
    }
#elif !defined LATCH_TIMED
    /* relaxed: a gate that orders nothing (the first counter's write must reach the waiters
     * through the latch: its CAS's release sequence) */
    if (i == 1)
        while (fastsync__latch_count(atomic_load_explicit(&latch.state, memory_order_relaxed)) > 1) {}
#endif
    data[i] = 1;
    assert(fastsync_latch_count_down(&latch, 1) == 0);
    return NULL;
}

static void *waiter(void *unused)
{
    (void)unused;
#ifdef LATCH_TIMED
    static const struct timespec deadline = { 1, 0 }; /* any: the model decides when it passes */
    /* fastsync__latch_wait without the deadline check */
    uint64_t v = fastsync__latch_enter(&latch);
    int r = 0;
    if (fastsync__latch_count(v) == 0)
        fastsync__latch_leave(&latch);
    else
        r = fastsync__latch_sleep(&latch, v, CLOCK_MONOTONIC, &deadline);
    assert(r == 0 || r == ETIMEDOUT);
    if (r == 0) check_open();
#else
    assert(fastsync_latch_wait(&latch) == 0);
    check_open();
#endif
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    int n = 0;
    assert(fastsync_latch_init(&latch, LATCH_COUNT, 0) == 0);
    for (int i = 0; i < COUNTERS; i++) pthread_create(&t[n++], NULL, counter, (void *)(intptr_t)i);
#ifndef LATCH_ADD
    pthread_create(&t[n++], NULL, waiter, NULL);
#endif
#ifdef LATCH_TIMED
    model_time_out(); /* while the others run */
#endif
    assert(fastsync_latch_wait(&latch) == 0);
    check_open();
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    /* relaxed: the joins order it */
    assert(atomic_load_explicit(&latch.state, memory_order_relaxed) == 0 && "open, no `slept`, no waiter left");
    return 0;
}
