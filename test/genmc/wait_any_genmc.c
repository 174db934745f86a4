/* SPDX-License-Identifier: MIT */
/* GenMC harness: fastsync_wait_any passes on a semaphore wake it absorbed (fastsync__wa_leave
 * -> fastsync__sem_cancelled). A plain waiter P sleeps in fastsync_sem_wait(&s); a wait_any
 * thread W waits on [event e, semaphore s] (the event first) with futex_waitv modelled
 * (futex_model.h: one sleeper queued on both words); a third thread posts s once, then sets
 * e. The trap: both registered on s and asleep (W first), the post's one wake picks W; W
 * looks again, finds e set by then, wins it (the lower index) and leaves s with the token
 * still in it: unless its leave wakes another sleeper of s, P sleeps for ever (a liveness
 * violation). A W that wins s instead posts the token back, so that P gets it then too.
 * Every execution: W returns with e or s, P returns with a token that carries the post's
 * write (and W with the set's, when it wins e), and at the end s has no token and no waiter.
 * One thread posts, then sets (the order of the trap): 64 065 executions, about 2 minutes
 * here on a loaded machine. With a thread for each it passes too, but explores 216 586
 * executions in 6 minutes.
 * Planted mistake: plant_wait_any_no_forward.patch (wait_any leaves a semaphore with a plain
 * fetch_sub, without passing the wake on).
 * genmc-options: --disable-instruction-caching
 * genmc-cflags: -O0
 * (With its instruction caching, GenMC v0.11 reported "Attempt to access freed memory", or
 * mixed-size accesses, on wait_any's own struct fastsync__wa, right after the return of
 * fastsync__wa_sleep (the free of its local `end`): accesses the program does not make. The
 * trace names the struct's fields as if a later local had been placed inside it. Without
 * the cache (pure stateless exploration: slower) it does not. The other harnesses avoid it
 * with -O1 instead (run.sh's default); this one still meets it at -O1 (checked again in
 * issue 32, 929 executions in). (-O1 once
 * stopped it at once, too: clang made a loop of fastsync__wa_sleep an llvm.umin intrinsic,
 * which GenMC cannot run; that slice is now a shift.) */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_sem_t s;
static fastsync_event_t e;
static int posted, set; /* plain: written before the post, before the set */

static void *plain_waiter(void *unused)
{
    (void)unused;
    fastsync_sem_wait(&s);
    assert(posted == 1); /* the token came from the post (directly or through W) */
    return NULL;
}

static void *any_waiter(void *unused)
{
    (void)unused;
    fastsync_wait_entry_t list[2] = { fastsync_wait_event(&e), fastsync_wait_sem(&s) };
    unsigned i = 2;
    assert(fastsync_wait_any(list, 2, &i) == 0);
    if (i == 0) {
        assert(set == 1);
    } else {
        assert(i == 1 && posted == 1);
        fastsync_sem_post(&s); /* give the token back: it is P's to take */
    }
    return NULL;
}

static void *poster_setter(void *unused)
{
    (void)unused;
    posted = 1;
    fastsync_sem_post(&s);
    set = 1;
    fastsync_event_set(&e);
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    fastsync_sem_init(&s, 0, 0);
    fastsync_event_init(&e, false, 0);
    model_wide_word = &s.state; /* s's futex word is the low half of a 64-bit word; e's is 32-bit */
    pthread_create(&t[0], NULL, plain_waiter, NULL);
    pthread_create(&t[1], NULL, any_waiter, NULL);
    pthread_create(&t[2], NULL, poster_setter, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    uint64_t v = atomic_load_explicit(&s.state, memory_order_relaxed);
    assert(fastsync__sem_tokens(v) == 0 && fastsync__sem_waiters(v) == 0);
    assert(fastsync_event_is_set(&e));
    return 0;
}
