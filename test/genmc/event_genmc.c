/* SPDX-License-Identifier: MIT */
/* GenMC harness: the manual-reset event (fastsync_event_set / _reset / _wait). Two
 * independent handshakes, each on its own event:
 *   - The reset-then-check handshake (the fences of reset and set, "The reset / check / wait
 *     handshake" in fastsync.h). The event starts set; the waiter runs the intended loop
 *     (reset, check a relaxed flag, wait) while the setter writes the flag and sets. If the
 *     setter's load reads the old SET, the waiter's check must see the flag: else it sleeps
 *     for ever on a reset event (a liveness violation). When the waiter returns from wait,
 *     only the setter's set can have ended it (the waiter's own reset came first), and a plain
 *     int written before that set must be visible to it (set's release, wait's acquire).
 *   - A waiter blocked when set is called returns, even if the event is reset again before
 *     it runs (the generation count). The setter waits until the word says BUSY (the waiter
 *     announced its sleep), writes a plain int, sets and resets at once; the waiter must
 *     return and see the int: its acquire load reads the reset's RMW, which continues set's
 *     release sequence.
 * No spinning is involved (the event never spins). Planted mistakes:
 * plant_event_reset_no_fence.patch (reset without its seq_cst fence: the waiter sleeps
 * through the flag); plant_event_wait_relaxed.patch (wait's first load relaxed: a race on
 * the plain int); plant_event_set_no_wake.patch (set skips the wake a BUSY word is owed).
 * (set's CAS made relaxed is not a mistake this harness can catch: the seq_cst fence that
 * starts set is a release fence before that CAS, so an acquire load reading it still
 * synchronizes with the setter.) */
#define FASTSYNC_NO_CANCEL /* GenMC has no cancellation */
#include "futex_model.h"
#include "fastsync.h"

static fastsync_event_t dekker = FASTSYNC_EVENT_INIT(1), blocked = FASTSYNC_EVENT_INIT(0);
static atomic_int flag; /* the condition: relaxed, the handshake's fences order it */
static int dekker_data, blocked_data; /* plain: the event must order every access */

static void *dekker_waiter(void *unused)
{
    (void)unused;
    for (;;) {
        fastsync_event_reset(&dekker);
        if (atomic_load_explicit(&flag, memory_order_relaxed)) break;
        fastsync_event_wait(&dekker);
        assert(dekker_data == 1 && "a wait ended by set sees the writes before it");
    }
    return NULL;
}

static void *dekker_setter(void *unused)
{
    (void)unused;
    dekker_data = 1;
    atomic_store_explicit(&flag, 1, memory_order_relaxed);
    fastsync_event_set(&dekker);
    return NULL;
}

static void *blocked_waiter(void *unused)
{
    (void)unused;
    fastsync_event_wait(&blocked);
    assert(blocked_data == 1 && "a wait ended by set sees the writes before it");
    return NULL;
}

static void *blocked_setter(void *unused)
{
    (void)unused;
    /* relaxed: only waits for the waiter's FREE -> BUSY; nothing is read through it. */
    while (fastsync__ev_state(atomic_load_explicit(&blocked.state, memory_order_relaxed)) !=
           FASTSYNC__EV_BUSY) {
    }
    blocked_data = 1;
    fastsync_event_set(&blocked);
    fastsync_event_reset(&blocked);
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    pthread_create(&t[0], NULL, dekker_waiter, NULL);
    pthread_create(&t[1], NULL, dekker_setter, NULL);
    pthread_create(&t[2], NULL, blocked_waiter, NULL);
    pthread_create(&t[3], NULL, blocked_setter, NULL);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    return 0;
}
