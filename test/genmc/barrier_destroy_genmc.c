/* SPDX-License-Identifier: MIT */
/* GenMC harness: a barrier may be destroyed and freed as soon as its round has ended (issue
 * 21). The barrier (count BARRIER_COUNT) is malloc'ed; main and BARRIER_COUNT - 1 threads
 * each write a plain slot and wait once; the serial thread (FASTSYNC_BARRIER_SERIAL)
 * destroys it at once, which must return 0, and frees it, while the others may still be on
 * their way out of the wait (a load of the word, their leaving -= 1). Destroy waits for
 * `leaving` to be 0 with a plain spin (FASTSYNC__DESTROY_NS 0: no clock, no yield), a loop
 * GenMC can close. Any access to the barrier after the free (a thread's look at the word,
 * its futex compare, its leaving -= 1) is an access to freed memory, and one not ordered
 * before the free (leaving -= 1 and destroy's load of it: release, acquire) a race with
 * it, which GenMC reports. No spinning in the wait: a thread that is not the last sleeps,
 * at every moment of its way to sleep against the round's end. Checked also: every thread
 * reads every slot after its wait, exactly one serial thread, nobody left asleep
 * (--check-liveness). (136 executions; with count 3 it was 120 024, 22 s, in the design of
 * three words.)
 * With BARRIER_DESTROY_FIRST defined (barrier_destroy_first_genmc.c): the first thread back
 * from its wait (a relaxed count), serial or not, destroys and frees: where it is not the
 * serial one, the serial thread may still be between its end CAS and its wake, and the
 * end itself comes before the free only through its release (170 executions).
 * Planted mistakes: plant_barrier_destroy_no_wait.patch (destroy returns 0 without waiting
 * for `leaving`: the serial thread frees the barrier under a thread still leaving);
 * plant_barrier_leave_relaxed.patch (leaving -= 1 relaxed instead of release: that
 * thread's accesses to the barrier are not ordered before the free);
 * plant_barrier_end_relaxed.patch (the end's CAS relaxed: in barrier_destroy_first_genmc
 * the serial thread's end is not ordered before the free). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC__DESTROY_NS 0 /* destroy spins on `leaving`, no clock */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#define MODEL_WORD64 /* the futex word is the low half of the 64-bit word */
#include "futex_model.h"
#include "fastsync.h"
#include <stdlib.h>

#ifndef BARRIER_COUNT
#define BARRIER_COUNT 2
#endif

static fastsync_barrier_t *b;
static int slot[BARRIER_COUNT]; /* plain: each thread's write before its wait */
static int serials;             /* plain: the serial thread's count */
#ifdef BARRIER_DESTROY_FIRST
static atomic_int returned; /* threads back from their wait */
#endif

static void pass(int self)
{
    slot[self] = 1;
    int ret = fastsync_barrier_wait(b);
    assert(ret == 0 || ret == FASTSYNC_BARRIER_SERIAL);
    for (int i = 0; i < BARRIER_COUNT; i++) assert(slot[i] == 1 && "a wait returns after every arrival");
    if (ret == FASTSYNC_BARRIER_SERIAL) serials++;
#ifdef BARRIER_DESTROY_FIRST
    /* relaxed: picks the first thread back; it orders nothing (the other thread's accesses
     * come before the free only through destroy's wait on `leaving`) */
    if (atomic_fetch_add_explicit(&returned, 1, memory_order_relaxed) == 0) {
#else
    if (ret == FASTSYNC_BARRIER_SERIAL) {
#endif
        assert(fastsync_barrier_destroy(b) == 0);
        free(b); /* no thread of the round touches it any more */
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
    b = malloc(sizeof *b);
    assert(b != NULL && fastsync_barrier_init(b, BARRIER_COUNT, 0) == 0);
    for (int i = 1; i < BARRIER_COUNT; i++) pthread_create(&t[i - 1], NULL, thread, (void *)(intptr_t)i);
    pass(0);
    for (int i = 1; i < BARRIER_COUNT; i++) pthread_join(t[i - 1], NULL);
    assert(serials == 1 && "one serial thread"); /* after the joins: no race */
    return 0;
}
