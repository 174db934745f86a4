/* SPDX-License-Identifier: MIT */
/* GenMC harness: a latch may be destroyed and freed as soon as it is open and no thread is
 * blocked on it, while released waiters are still on their way out of their waits (C++'s rule
 * for std::latch; issue 32). The latch (count 1) is malloc'ed. A thread W waits on it; main,
 * once the word counts W inside (a relaxed poll of `waiters`: W is then blocked, as the rule
 * needs a thread that called wait before the opening), writes a plain int, counts the latch
 * down, destroys it at once (which must return 0: it waits, with a plain spin,
 * FASTSYNC__DESTROY_NS 0, until every waiter has left) and frees it, while W may be anywhere
 * on its way: spinning (none here: FASTSYNC_SPIN 0), setting `slept`, in its futex compare,
 * asleep, woken, loading the word, leaving. Any access by W to the latch after the free is an
 * access to freed memory, and one not ordered before it (W's leave, release; destroy's load
 * of `waiters`, acquire) a race with it, which GenMC reports. Checked also: W returns 0 and
 * reads main's int; nobody is left asleep (--check-liveness).
 * With LATCH_ARRIVE defined (latch_destroy_arrive_genmc.c): a latch of count 2, and W and main
 * each call arrive_and_wait(1) with no gate, main destroying and freeing the latch when its
 * call returns: whichever arrives first waits for the other, and W, if first, is counted in
 * by its arrival's own CAS, so that main's destroy waits for it.
 * With LATCH_WAIT_ANY defined (latch_destroy_wait_any_genmc.c): W waits by wait_any over [the
 * latch, a semaphore never posted], gated as above: its first look enters the latch.
 * Planted mistakes: plant_latch_destroy_no_wait.patch (destroy returns 0 with the count 0
 * without waiting for the waiters inside: W touches freed memory); plant_latch_leave_relaxed
 * (the leave relaxed instead of release: W's accesses are not ordered before the free);
 * with LATCH_ARRIVE plant_latch_arrive_two_steps.patch (arrive_and_wait as a count_down and
 * then a wait: a first W is not counted when main's arrival opens the latch, and its wait's
 * first access may come after the free). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC__DESTROY_NS 0 /* destroy spins on `waiters`, no clock */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define MODEL_WORD64 /* the futex words are the low halves of 64-bit words */
#include "futex_model.h"
#include "fastsync.h"
#include <stdlib.h>

static fastsync_latch_t *l;
static int data; /* plain: main's write before its count_down (or arrival) */
#ifdef LATCH_WAIT_ANY
static fastsync_sem_t s;
#endif

static void *waiter(void *unused)
{
    (void)unused;
#if defined LATCH_ARRIVE
    assert(fastsync_latch_arrive_and_wait(l, 1) == 0);
#elif defined LATCH_WAIT_ANY
    fastsync_wait_entry_t list[2] = { fastsync_wait_latch(l), fastsync_wait_sem(&s) };
    unsigned i = 2;
    assert(fastsync_wait_any(list, 2, &i) == 0 && i == 0);
#else
    assert(fastsync_latch_wait(l) == 0);
#endif
    assert(data == 1 && "the wait returns after main's count-down, seeing its write");
    return NULL;
}

int main(void)
{
    pthread_t t;
    l = malloc(sizeof *l);
#ifdef LATCH_ARRIVE
    assert(l != NULL && fastsync_latch_init(l, 2, 0) == 0);
#else
    assert(l != NULL && fastsync_latch_init(l, 1, 0) == 0);
#endif
#ifdef LATCH_WAIT_ANY
    assert(fastsync_sem_init(&s, 0, 0) == 0);
#endif
    pthread_create(&t, NULL, waiter, NULL);
    data = 1;
#ifdef LATCH_ARRIVE
    assert(fastsync_latch_arrive_and_wait(l, 1) == 0);
#else
    /* relaxed: a gate (W is inside its wait); the latch's own RMWs order what matters */
    while ((atomic_load_explicit(&l->state, memory_order_relaxed) >> 32) == 0) {} /* waiters: no call (-O0) */
    assert(fastsync_latch_count_down(l, 1) == 0);
#endif
    assert(fastsync_latch_destroy(l) == 0);
    free(l); /* W may still be in its wait: destroy waited for it to leave */
    pthread_join(t, NULL);
#ifdef LATCH_WAIT_ANY
    /* relaxed: the join orders it */
    assert(atomic_load_explicit(&s.state, memory_order_relaxed) == 0 && "W left s");
#endif
    return 0;
}
