/* SPDX-License-Identifier: MIT */
/* GenMC harness: fastsync_wait_any over a latch registers on it and leaves it (issue 21). A
 * thread W waits on [latch l, semaphore s] (the latch first; s is never posted) with
 * futex_waitv modelled (futex_model.h: one sleeper queued on both words); main writes a
 * plain int and counts l (count 1) down, at every moment of W's way: its first look (which
 * enters l: waiters += 1), its registration on s, its look again (which sets l's `slept`),
 * its futex compare, its sleep. Checked: W returns the latch (index 0), seeing main's write
 * (the count_down's release CAS, W's acquire RMW or load of the count 0); nobody is left
 * asleep (--check-liveness: the count_down reads `slept` in its own RMW and wakes the
 * words' sleeper); at the end l holds count 0, no `slept` and no waiter (W left it, the
 * winner, before it returned), and s no token and no waiter (W left it too).
 * With LATCH_WAIT_ANY_POST defined (latch_wait_any_post_genmc.c): a thread P also writes a
 * plain int and posts s once, at any moment: W returns the latch (seeing main's write) or
 * the token (seeing P's), and a W that wins s must still leave the latch it registered on
 * (fastsync__wa_leave); the end state as above, and a token W did not take still in s.
 * genmc-options: --disable-instruction-caching
 * genmc-cflags: -O0
 * (As wait_any_genmc.c, which says why: -O1 makes wait_any's code an intrinsic GenMC cannot
 * run, and its instruction caching then reports accesses to freed memory on wait_any's
 * locals that the code does not make.)
 * Planted mistakes: plant_latch_wait_any_no_leave.patch (wait_any's winner does not leave the
 * latch it won), and with P plant_latch_wait_any_loser_stays.patch (a wait_any that another
 * entry won does not leave the latch): the waiter count is left at 1, the final assert. */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WORD64       /* both futex words are the low halves of 64-bit words */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"

static fastsync_latch_t l;
static fastsync_sem_t s;
static int data; /* plain: written before the count_down */
#ifdef LATCH_WAIT_ANY_POST
static int posted; /* plain: written before the post */

static void *poster(void *unused)
{
    (void)unused;
    posted = 1;
    assert(fastsync_sem_post(&s) == 0);
    return NULL;
}
#endif

static void *any_waiter(void *unused)
{
    (void)unused;
    fastsync_wait_entry_t list[2] = { fastsync_wait_latch(&l), fastsync_wait_sem(&s) };
    unsigned i = 2;
    assert(fastsync_wait_any(list, 2, &i) == 0);
#ifdef LATCH_WAIT_ANY_POST
    if (i == 1) {
        assert(posted == 1 && "the token carries the post's write");
        return NULL;
    }
#endif
    assert(i == 0 && "the latch, the only entry made ready");
    assert(data == 1 && "after the count_down, seeing its write");
    return NULL;
}

int main(void)
{
    pthread_t t, p;
    assert(fastsync_latch_init(&l, 1, 0) == 0);
    assert(fastsync_sem_init(&s, 0, 0) == 0);
    pthread_create(&t, NULL, any_waiter, NULL);
#ifdef LATCH_WAIT_ANY_POST
    pthread_create(&p, NULL, poster, NULL);
#else
    (void)p;
#endif
    data = 1;
    assert(fastsync_latch_count_down(&l, 1) == 0);
    pthread_join(t, NULL);
#ifdef LATCH_WAIT_ANY_POST
    pthread_join(p, NULL);
    if (fastsync_sem_trywait(&s) == 0) assert(posted == 1); /* the token W did not take */
#endif
    /* relaxed: the join orders them */
    assert(atomic_load_explicit(&l.state, memory_order_relaxed) == 0 && "open, W left it");
    uint64_t v = atomic_load_explicit(&s.state, memory_order_relaxed);
    assert(fastsync__sem_tokens(v) == 0 && fastsync__sem_waiters(v) == 0 && "W left s");
    return 0;
}
