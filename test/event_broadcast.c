/* SPDX-License-Identifier: MIT */
/* event_broadcast: 8 threads asleep on one reset event (wait, timedwait, clockwait on the
 * realtime clock, private and shared); one set wakes every one of them with exactly one
 * FUTEX_WAKE. Several rounds, with a reset in between. */
#include "harness.h"

#define NSLEEPERS 8
#define NROUNDS 8

enum { KIND_WAIT, KIND_TIMED, KIND_REALTIME, NKINDS };
static const char *const kind_name[NKINDS] = { "wait", "timedwait", "clockwait(REALTIME)" };

enum { ST_STARTING, ST_WAITING, ST_RETURNED };
static const char *const st_name[] = { "starting", "inside the wait", "returned" };

struct sleeper {
    int kind;
    _Atomic int state; /* ST_*: progress, for the checks and the dump */
    int ret;           /* written before state becomes ST_RETURNED */
};

static struct {
    fastsync_event_t ev;
    struct sleeper s[NSLEEPERS];
    int round;
} g;

static void *sleeper_main(void *p)
{
    struct sleeper *s = (struct sleeper *)p;
    /* relaxed: progress for the dump; the result is published by the release store below. */
    atomic_store_explicit(&s->state, ST_WAITING, memory_order_relaxed);
    int r = 0;
    if (s->kind == KIND_WAIT) {
        fastsync_event_wait(&g.ev);
    } else if (s->kind == KIND_TIMED) {
        struct timespec far = fastsync_deadline_in(60000000000u);
        r = fastsync_event_timedwait(&g.ev, &far);
    } else {
        struct timespec far;
        clock_gettime(CLOCK_REALTIME, &far);
        far.tv_sec += 60;
        r = fastsync_event_clockwait(&g.ev, CLOCK_REALTIME, &far);
    }
    s->ret = r;
    /* release: pairs with the acquire loads in main that count returned sleepers. */
    atomic_store_explicit(&s->state, ST_RETURNED, memory_order_release);
    return NULL;
}

static int returned(void)
{
    int n = 0;
    for (int i = 0; i < NSLEEPERS; i++)
        /* acquire: pairs with the release store in sleeper_main (ret is read after it). */
        n += atomic_load_explicit(&g.s[i].state, memory_order_acquire) == ST_RETURNED;
    return n;
}

static void dump(void *unused)
{
    (void)unused;
    diag("round %d, event word 0x%08" PRIx32, g.round,
         atomic_load_explicit(&g.ev.state, memory_order_relaxed));
    for (int i = 0; i < NSLEEPERS; i++)
        /* relaxed: a diagnostic snapshot. */
        diag("  sleeper %d (%s): %s", i, kind_name[g.s[i].kind],
             st_name[atomic_load_explicit(&g.s[i].state, memory_order_relaxed)]);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    for (int round = 0; round < NROUNDS; round++) {
        g.round = round;
        int flags = round >= NROUNDS / 2 ? FASTSYNC_SHARED : 0;
        if (round == 0 || round == NROUNDS / 2) fastsync_event_init(&g.ev, false, flags);
        else fastsync_event_reset(&g.ev);
        /* rounds 0-2 (and 4-6): one kind for all; rounds 3 and 7: the kinds mixed */
        int kind = round % (NROUNDS / 2);
        char label[64];
        snprintf(label, sizeof label, "round %d (%s, %s)", round, flags ? "shared" : "private",
                 kind < NKINDS ? kind_name[kind] : "mixed");

        unsigned long w0 = test_kernel_waits();
        pthread_t t[NSLEEPERS];
        for (int i = 0; i < NSLEEPERS; i++) {
            g.s[i].kind = kind < NKINDS ? kind : i % NKINDS;
            /* relaxed: the thread is not started yet; thread creation publishes it. */
            atomic_store_explicit(&g.s[i].state, ST_STARTING, memory_order_relaxed);
            g.s[i].ret = -1;
            t[i] = test_thread_start(sleeper_main, &g.s[i]);
        }
        /* every sleeper makes exactly one futex wait until the set: wait for all of them,
         * then give the last one time to get into the kernel */
        uint64_t end = test_box_end(10000);
        while (test_box_open(end) && test_kernel_waits() - w0 < NSLEEPERS) test_sleep_ns(200000);
        ok(test_kernel_waits() - w0 >= NSLEEPERS, "%s: all %d sleepers called futex wait (%lu)", label,
           NSLEEPERS, test_kernel_waits() - w0);
        test_sleep_ns(20000000);
        is_int(returned(), 0, "%s: no sleeper returned before the set", label);

        unsigned long k0 = test_kernel_wakes();
        fastsync_event_set(&g.ev);
        for (int i = 0; i < NSLEEPERS; i++) test_thread_join(t[i]);
        is_int(test_kernel_wakes() - k0, 1, "%s: one set woke them with exactly one FUTEX_WAKE", label);
        is_int(returned(), NSLEEPERS, "%s: all %d sleepers returned", label, NSLEEPERS);
        int zero = 0;
        for (int i = 0; i < NSLEEPERS; i++) zero += g.s[i].ret == 0;
        is_int(zero, NSLEEPERS, "%s: every wait returned 0", label);
        ok(fastsync_event_is_set(&g.ev), "%s: the event is still set", label);
        k0 = test_kernel_wakes();
        fastsync_event_set(&g.ev);
        is_int(test_kernel_wakes() - k0, 0, "%s: a second set makes no FUTEX_WAKE", label);
    }
    test_watchdog_stop();
    return done_testing();
}
