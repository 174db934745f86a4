/* SPDX-License-Identifier: MIT */
/* event_broadcast: 8 threads asleep on one reset event (wait, timedwait, clockwait on the
 * realtime clock, private and shared); one set wakes every one of them with exactly one
 * FUTEX_WAKE. Several rounds, with a reset in between. */
#include "harness.h"

#define NSLEEPERS 8
#define NROUNDS 8

static struct {
    fastsync_event_t ev;
    struct test_sleeper s[NSLEEPERS];
    int round;
} g;

static void dump(void *unused)
{
    (void)unused;
    diag("round %d", g.round);
    test_dump_event("event", &g.ev);
    test_sleepers_dump(g.s, NSLEEPERS);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    for (int round = 0; round < NROUNDS; round++) {
        g.round = round;
        int flags = round >= NROUNDS / 2 ? TEST_SHARED : 0;
        if (round == NROUNDS / 2) is_int(fastsync_event_destroy(&g.ev), 0, "destroy the private event: nobody left in it");
        if (round == 0 || round == NROUNDS / 2) fastsync_event_init(&g.ev, false, flags);
        else fastsync_event_reset(&g.ev);
        /* rounds 0-2 (and 4-6): one kind for all; rounds 3 and 7: the kinds mixed */
        int kind = round % (NROUNDS / 2);
        char label[64];
        snprintf(label, sizeof label, "round %d (%s, %s)", round, flags ? "shared" : "private",
                 kind < TEST_SLEEP_KINDS ? test_sleep_kind_name(kind) : "mixed");

        unsigned long w0 = test_kernel_waits();
        for (int i = 0; i < NSLEEPERS; i++) /* the timed kinds: 60 s, never reached */
            test_sleeper_start(&g.s[i], &g.ev, kind < TEST_SLEEP_KINDS ? kind : i % TEST_SLEEP_KINDS, 60000000000u);
        /* wait until all look asleep (see test_event_asleep), then give the last one time
         * to get into the kernel */
        uint64_t end = test_limit_end(10000);
        while (test_box_open(end) && !test_event_asleep(&g.ev, NSLEEPERS, w0)) test_sleep_ns(200000);
        ok(test_event_asleep(&g.ev, NSLEEPERS, w0), "%s: all %d sleepers called futex wait (%lu)", label,
           NSLEEPERS, test_kernel_waits() - w0);
        test_sleep_ns(20000000);
        is_int(test_sleepers_returned(g.s, NSLEEPERS), 0, "%s: no sleeper returned before the set", label);

        unsigned long k0 = test_kernel_wakes();
        fastsync_event_set(&g.ev);
        int zero = test_sleepers_join(g.s, NSLEEPERS);
        is_int(test_kernel_wakes() - k0, 1, "%s: one set woke them with exactly one FUTEX_WAKE", label);
        is_int(test_sleepers_returned(g.s, NSLEEPERS), NSLEEPERS, "%s: all %d sleepers returned", label, NSLEEPERS);
        is_int(zero, NSLEEPERS, "%s: every wait returned 0", label);
        ok(fastsync_event_is_set(&g.ev), "%s: the event is still set", label);
        k0 = test_kernel_wakes();
        fastsync_event_set(&g.ev);
        is_int(test_kernel_wakes() - k0, 0, "%s: a second set makes no FUTEX_WAKE", label);
    }
    test_watchdog_stop();
    is_int(fastsync_event_destroy(&g.ev), 0, "destroy the shared event: nobody left in it");
    return done_testing();
}
