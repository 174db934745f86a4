/* SPDX-License-Identifier: MIT */
/* GenMC harness: a broadcast touches the condvar only up to its RMW, so a thread that sees
 * that RMW may destroy and free the memory at once (issue 16, item 5, from a thread that is
 * neither the broadcaster nor a waiter). The condvar is malloc'ed. Waiter W takes a ticket,
 * says so, and awaits it (it must return 0); X waits until W registered and broadcasts; D
 * waits until W registered, then calls destroy until it stops saying EBUSY (it says EBUSY
 * while W is uncalled, before the broadcast's RMW): it must then return 0, and D frees the
 * memory at once. Any access to the condvar after that (W's look at the word, its R -= 1, X's
 * count of released tickets) is an access to freed memory, which GenMC reports. D reads the
 * broadcast's RMW in `state` with no other order to X, so the released ticket must be in R
 * before that RMW. Destroy waits for the released tickets with a plain spin on R
 * (FASTSYNC__DESTROY_NS 0: no clock, no yield), a loop GenMC can close.
 * Planted mistakes: plant_cond_count_after_rmw.patch (a signal or broadcast adds the tickets
 * it releases to R after its RMW, not before: D reads the released word and R still 0, and
 * frees the memory under W and under X's own late count); plant_cond_destroy_no_wait.patch
 * (destroy does not wait for the released tickets: D frees the memory under W). */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#define FASTSYNC__DESTROY_NS 0 /* destroy spins on R, no clock */
#define MODEL_WORD64
#include "futex_model.h"
#include "fastsync.h"
#include "cond_genmc.h"
#include <stdlib.h>

static fastsync_cond_t *c;
static atomic_int registered;

static void *waiter(void *unused)
{
    (void)unused;
    cond_genmc_register_await(c, &registered);
    return NULL;
}

static void *x(void *unused)
{
    (void)unused;
    while (!atomic_load_explicit(&registered, memory_order_acquire)) {}
    fastsync_cond_broadcast(c);
    return NULL;
}

static void *d(void *unused)
{
    (void)unused;
    int r;
    while (!atomic_load_explicit(&registered, memory_order_acquire)) {}
    while ((r = fastsync_cond_destroy(c)) == EBUSY) {} /* W uncalled: before the broadcast */
    assert(r == 0);
    free(c); /* nobody touches it any more */
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    c = malloc(sizeof *c);
    assert(c != NULL && fastsync_cond_init(c, 0) == 0);
    pthread_create(&t[0], NULL, waiter, NULL);
    pthread_create(&t[1], NULL, x, NULL);
    pthread_create(&t[2], NULL, d, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    return 0;
}
