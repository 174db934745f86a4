/* SPDX-License-Identifier: MIT */
/* GenMC harness: the count_down that opens the latch touches it only up to its CAS: a waiter
 * that sees it open may free it at once (issue 21). The latch (count 2) is malloc'ed; two
 * counters, free to come first, each write a plain int and count down by 1; main waits
 * (registering and sleeping, at every moment of its way to sleep, or finding the count 0 at
 * its first look), checks both ints, destroys (0: its own leave was the last change of the
 * waiter count) and frees the latch at once, perhaps before the last counter's wake has
 * run: a wake only compares the address (futex_model.h), but any access to the latch after
 * the opening CAS (a load of the word) is an access to freed memory, which GenMC reports.
 * The first counter's accesses come before the free through the release sequence of its
 * CAS, which the last counter's CAS continues. Checked also: nobody is left asleep
 * (--check-liveness). No spinning.
 * Planted mistake: plant_latch_load_after_count_down.patch (the wake's shared bit read from
 * the word after the CAS, not from the value the CAS read). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define MODEL_WORD64       /* the futex word is the low half of the latch's 64-bit word */
#define FASTSYNC_SPIN 0
#define FASTSYNC_SPIN_YIELDS 0
#include "futex_model.h"
#include "fastsync.h"
#include <stdlib.h>

static fastsync_latch_t *latch;
static int data[2]; /* plain: counter i's write before its count_down */

static void *counter(void *arg)
{
    int i = (int)(intptr_t)arg;
    data[i] = 1;
    assert(fastsync_latch_count_down(latch, 1) == 0); /* the last counter's last access */
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    latch = malloc(sizeof *latch);
    assert(latch != NULL && fastsync_latch_init(latch, 2, 0) == 0);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, counter, (void *)(intptr_t)i);
    assert(fastsync_latch_wait(latch) == 0);
    assert(data[0] == 1 && data[1] == 1 && "the wait returns after both count-downs");
    assert(fastsync_latch_destroy(latch) == 0);
    free(latch); /* no counter touches it any more */
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 0;
}
