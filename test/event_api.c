/* SPDX-License-Identifier: MIT */
/* event_api: every event function's results and exact error codes, the deadline rules of
 * timedwait/clockwait, the promised syscall economy (set before wait, set on a set event,
 * reset on a reset event: no futex call), counted by the harness's futex layer, and
 * FASTSYNC_SHARED events in MAP_SHARED memory waking a sleeper in another process. */
#include "harness.h"

#if !defined(_WIN32) /* (for the test across fork, which Windows skips: no shared objects) */
#include <sys/mman.h>
#include <sys/wait.h>
#endif

static unsigned long syscalls(void) { return test_kernel_waits() + test_kernel_wakes(); }

/* A thread blocked in one wait, for the tests that need a real sleeper. */
struct sleeper {
    fastsync_event_t *e;
    bool timed;
    _Atomic int ret; /* -1 while inside the wait */
    int errno_after;
};

static void *sleeper_main(void *p)
{
    struct sleeper *s = (struct sleeper *)p;
    errno = 4321;
    int r = 0;
    if (s->timed) {
        struct timespec far = fastsync_deadline_in(60000000000u);
        r = fastsync_event_timedwait(s->e, &far);
    } else {
        fastsync_event_wait(s->e);
    }
    s->errno_after = errno;
    /* release: pairs with the acquire load in main that reads the result. */
    atomic_store_explicit(&s->ret, r, memory_order_release);
    return NULL;
}

static fastsync_event_t *dump_event;

static void dump(void *arg)
{
    struct sleeper *s = (struct sleeper *)arg;
    /* relaxed: a diagnostic snapshot. */
    if (s) diag("sleeper ret %d (-1: still inside the wait)", atomic_load_explicit(&s->ret, memory_order_relaxed));
    if (dump_event) test_dump_event("event", dump_event);
}

/* Blocks one thread in wait (or a 60 s timedwait) on a reset event, then sets it from here:
 * the thread must return 0 after exactly one FUTEX_WAKE. */
static void wake_one_sleeper(int flags, bool timed)
{
    fastsync_event_t e;
    fastsync_event_init(&e, false, flags);
    dump_event = &e;
    struct sleeper s = { &e, timed, -1, 0 };
    char m[32];
    snprintf(m, sizeof m, "%s%s", flags ? "shared " : "", timed ? "timedwait" : "wait");
    test_watchdog_start(dump, &s);
    unsigned long w0 = test_kernel_waits();
    pthread_t t = test_thread_start(sleeper_main, &s);
    uint64_t end = test_limit_end(10000);
    while (test_box_open(end) && !test_event_asleep(&e, 1, w0)) test_sleep_ns(100000);
    test_sleep_ns(5000000); /* let it reach the kernel */
    /* acquire: pairs with the release store in sleeper_main. */
    is_int(atomic_load_explicit(&s.ret, memory_order_acquire), -1,
           "%s: the sleeper blocks on a reset event", m);
    unsigned long k0 = test_kernel_wakes();
    errno = 1234;
    fastsync_event_set(&e);
    is_int(errno, 1234, "%s: set with a sleeper: errno untouched", m);
    test_thread_join(t);
    test_watchdog_stop();
    is_int(test_kernel_wakes() - k0, 1, "%s: set with a sleeper: exactly one FUTEX_WAKE", m);
    /* acquire: pairs with the release store in sleeper_main (also ordered by the join). */
    is_int(atomic_load_explicit(&s.ret, memory_order_acquire), 0, "%s: the sleeper returned 0", m);
    is_int(s.errno_after, 4321, "%s: the sleeper's errno untouched", m);
    ok(fastsync_event_is_set(&e), "%s: the event stays set after waking", m);
    k0 = test_kernel_wakes();
    fastsync_event_set(&e);
    is_int(test_kernel_wakes() - k0, 0, "%s: a second set: no FUTEX_WAKE", m);
    dump_event = NULL;
    is_int(fastsync_event_destroy(&e), 0, "%s: destroy once the sleeper left", m);
}

/* Parent and child each sleep once on a FASTSYNC_SHARED event in MAP_SHARED memory and
 * are woken by the other process's set (a private futex would never reach them). */
static void shared_across_fork(void)
{
#if defined(__OS2__) || !FASTSYNC_HAS_SHARED
    /* The double is one process: OS/2 has no fork, and shares memory with DosAllocSharedMem;
     * os2_table checks the shared objects' waits instead. */
    const char *why = FASTSYNC_HAS_SHARED ? "fork: the OS/2 double is one process (os2_table tests shared waits)"
                                                  : "the " FASTSYNC_BACKEND " backend has no shared objects";
    skip(why, "shared across fork: the child sleeps on a reset event");
    skip(why, "shared across fork: the child's set woke the parent");
    skip(why, "shared across fork: the parent's set woke the child");
#else
    struct pingpong { fastsync_event_t to_child, to_parent; } *x;
    x = (struct pingpong *)mmap(NULL, sizeof *x, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (x == MAP_FAILED) bail("mmap: %s", strerror(errno));
    fastsync_event_init(&x->to_child, false, FASTSYNC_SHARED);
    fastsync_event_init(&x->to_parent, false, FASTSYNC_SHARED);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) bail("fork: %s", strerror(errno));
    if (pid == 0) {
        struct timespec d = fastsync_deadline_in(5000000000u);
        int r = fastsync_event_timedwait(&x->to_child, &d);
        test_sleep_ns(50000000); /* let the parent fall asleep */
        fastsync_event_set(&x->to_parent);
        _exit(r == 0 ? 0 : r == ETIMEDOUT ? 3 : 4);
    }
    test_sleep_ns(50000000); /* let the child fall asleep */
    ok(!fastsync_event_is_set(&x->to_child), "shared across fork: the child sleeps on a reset event");
    fastsync_event_set(&x->to_child);
    struct timespec d = fastsync_deadline_in(5000000000u);
    is_int(fastsync_event_timedwait(&x->to_parent, &d), 0, "shared across fork: the child's set woke the parent");
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) bail("waitpid: %s", strerror(errno));
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "shared across fork: the parent's set woke the child (exit status %d: 3 = timed out)",
       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    fastsync_event_destroy(&x->to_child);
    fastsync_event_destroy(&x->to_parent);
    munmap(x, sizeof *x);
#endif
}

int main(void)
{
    test_init();
    fastsync_event_t e;

    ok(sizeof(fastsync_event_t) <= 8, "sizeof(fastsync_event_t) = %zu <= 8", sizeof(fastsync_event_t));
    is_int(sizeof(fastsync_event_t), 4, "sizeof(fastsync_event_t) is 4, the shared flag included");

    /* init and flags */
    is_int(fastsync_event_init(&e, false, 2), EINVAL, "init with an unknown flag: EINVAL");
    is_int(fastsync_event_init(&e, true, -1), EINVAL, "init with all flags: EINVAL");
    is_int(fastsync_event_init(&e, false, FASTSYNC_SHARED | 8), EINVAL, "init FASTSYNC_SHARED plus an unknown flag: EINVAL");
    is_int(fastsync_event_init(&e, false, 0), 0, "init reset, private");
    ok(!fastsync_event_is_set(&e), "init(false): not set");
    fastsync_event_destroy(&e);
    is_int(fastsync_event_init(&e, true, 0), 0, "init set, private");
    ok(fastsync_event_is_set(&e), "init(true): set");
    fastsync_event_destroy(&e);
    is_int(fastsync_event_init(&e, true, FASTSYNC_SHARED), FASTSYNC_HAS_SHARED ? 0 : EINVAL, "init set, FASTSYNC_SHARED: %s",
           FASTSYNC_HAS_SHARED ? "0" : "EINVAL (the " FASTSYNC_BACKEND " backend has no shared objects)");
    if (!FASTSYNC_HAS_SHARED) fastsync_event_init(&e, true, 0);
    ok(fastsync_event_is_set(&e), "init(true, SHARED): set");
    fastsync_event_destroy(&e);
    is_int(fastsync_event_init(&e, false, FASTSYNC_SHARED), FASTSYNC_HAS_SHARED ? 0 : EINVAL, "init reset, FASTSYNC_SHARED: %s",
           FASTSYNC_HAS_SHARED ? "0" : "EINVAL");
    if (!FASTSYNC_HAS_SHARED) fastsync_event_init(&e, false, 0);
    ok(!fastsync_event_is_set(&e), "init(false, SHARED): not set");
    fastsync_event_set(&e);
    ok(fastsync_event_is_set(&e), "shared: set");
    fastsync_event_reset(&e);
    ok(!fastsync_event_is_set(&e), "shared: reset");
    is_int(fastsync_event_destroy(&e), 0, "destroy a shared event");

    fastsync_event_t es = FASTSYNC_EVENT_INIT(true), er = FASTSYNC_EVENT_INIT(false);
    const fastsync_event_t *ces = &es;
    ok(fastsync_event_is_set(ces), "FASTSYNC_EVENT_INIT(true): set (is_set on a const pointer)");
    ok(!fastsync_event_is_set(&er), "FASTSYNC_EVENT_INIT(false): not set");
    fastsync_event_wait(&es);
    ok(1, "wait on FASTSYNC_EVENT_INIT(true) returns");
    is_int(fastsync_event_destroy(&es) + fastsync_event_destroy(&er), 0, "destroy the statically initialized events");

    /* set / reset / is_set */
    fastsync_event_init(&e, false, 0);
    fastsync_event_set(&e);
    ok(fastsync_event_is_set(&e), "is_set after set");
    fastsync_event_set(&e);
    ok(fastsync_event_is_set(&e), "is_set after a second set");
    fastsync_event_reset(&e);
    ok(!fastsync_event_is_set(&e), "not set after reset");
    fastsync_event_reset(&e);
    ok(!fastsync_event_is_set(&e), "not set after a second reset");
    is_int(fastsync_event_destroy(&e), 0, "destroy a reset event");
    fastsync_event_init(&e, true, 0);
    is_int(fastsync_event_destroy(&e), 0, "destroy a set event");

    /* deadlines on a reset event: errors, and no futex call for any of them */
    fastsync_event_init(&e, false, 0);
    unsigned long s0 = syscalls();
    struct timespec past = test_ts(1, 0), neg = test_ts(-5, 0), negbad = test_ts(-5, -1), badn = test_ts(1, 1000000000L),
                    negn = test_ts(1, -1);
    struct timespec badfuture = test_ts(fastsync_deadline_in(60000000000u).tv_sec, 1000000000L);
    is_int(fastsync_event_timedwait(&e, NULL), EINVAL, "reset: timedwait, NULL deadline: EINVAL");
    is_int(fastsync_event_clockwait(&e, CLOCK_MONOTONIC, NULL), EINVAL, "reset: clockwait, NULL deadline: EINVAL");
    is_int(fastsync_event_clockwait(&e, CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL, "reset: clockwait, CPU-time clock: EINVAL");
    is_int(fastsync_event_clockwait(&e, CLOCK_BOOTTIME, &past), EINVAL, "reset: clockwait, CLOCK_BOOTTIME: EINVAL");
    is_int(fastsync_event_clockwait(&e, (clockid_t)-77, &past), EINVAL, "reset: clockwait, clock -77: EINVAL");
    is_int(fastsync_event_timedwait(&e, &badn), EINVAL, "reset: timedwait, tv_nsec = 1e9: EINVAL");
    is_int(fastsync_event_timedwait(&e, &negn), EINVAL, "reset: timedwait, tv_nsec < 0: EINVAL");
    is_int(fastsync_event_timedwait(&e, &badfuture), EINVAL, "reset: timedwait, future tv_sec, tv_nsec = 1e9: EINVAL");
    is_int(fastsync_event_timedwait(&e, &negbad), EINVAL, "reset: timedwait, tv_sec < 0 and tv_nsec < 0: EINVAL");
    is_int(fastsync_event_clockwait(&e, CLOCK_REALTIME, &badn), EINVAL, "reset: clockwait REALTIME, tv_nsec = 1e9: EINVAL");
    is_int(fastsync_event_timedwait(&e, &past), ETIMEDOUT, "reset: timedwait, deadline past: ETIMEDOUT");
    is_int(fastsync_event_timedwait(&e, &neg), ETIMEDOUT, "reset: timedwait, negative tv_sec: ETIMEDOUT");
    is_int(fastsync_event_clockwait(&e, CLOCK_MONOTONIC, &past), ETIMEDOUT, "reset: clockwait MONOTONIC, past: ETIMEDOUT");
    is_int(fastsync_event_clockwait(&e, CLOCK_REALTIME, &past), ETIMEDOUT, "reset: clockwait REALTIME, past: ETIMEDOUT");
    is_int(fastsync_event_clockwait(&e, CLOCK_REALTIME, &neg), ETIMEDOUT, "reset: clockwait REALTIME, negative tv_sec: ETIMEDOUT");
    struct timespec nowm;
    clock_gettime(CLOCK_MONOTONIC, &nowm);
    is_int(fastsync_event_timedwait(&e, &nowm), ETIMEDOUT, "reset: timedwait, deadline = now: ETIMEDOUT");
    is_int(syscalls() - s0, 0, "no futex call for a past, malformed or refused deadline");
    ok(!fastsync_event_is_set(&e), "the failed waits left the event reset");

    /* the same deadlines on a set event: only NULL and the clock are checked */
    fastsync_event_set(&e);
    s0 = syscalls();
    is_int(fastsync_event_timedwait(&e, NULL), EINVAL, "set: timedwait, NULL deadline: still EINVAL");
    is_int(fastsync_event_clockwait(&e, CLOCK_REALTIME, NULL), EINVAL, "set: clockwait, NULL deadline: still EINVAL");
    is_int(fastsync_event_clockwait(&e, CLOCK_BOOTTIME, &past), EINVAL, "set: clockwait, CLOCK_BOOTTIME: still EINVAL");
    is_int(fastsync_event_clockwait(&e, CLOCK_THREAD_CPUTIME_ID, &past), EINVAL, "set: clockwait, CPU-time clock: still EINVAL");
    is_int(fastsync_event_timedwait(&e, &badn), 0, "set: timedwait, tv_nsec = 1e9: 0 (checked only when blocking)");
    is_int(fastsync_event_timedwait(&e, &negn), 0, "set: timedwait, tv_nsec < 0: 0");
    is_int(fastsync_event_clockwait(&e, CLOCK_REALTIME, &badn), 0, "set: clockwait REALTIME, tv_nsec = 1e9: 0");
    is_int(fastsync_event_timedwait(&e, &past), 0, "set: timedwait, deadline past: 0");
    is_int(fastsync_event_timedwait(&e, &neg), 0, "set: timedwait, negative tv_sec: 0");
    is_int(fastsync_event_clockwait(&e, CLOCK_MONOTONIC, &past), 0, "set: clockwait MONOTONIC, past: 0");
    is_int(fastsync_event_clockwait(&e, CLOCK_REALTIME, &past), 0, "set: clockwait REALTIME, past: 0");
    is_int(fastsync_event_clockwait(&e, CLOCK_REALTIME, &neg), 0, "set: clockwait REALTIME, negative tv_sec: 0");
    is_int(syscalls() - s0, 0, "no futex call for waits on a set event");
    ok(fastsync_event_is_set(&e), "waits do not consume the set state");
    fastsync_event_destroy(&e);

    /* the syscall economy, one thread, no sleeper */
    fastsync_event_init(&e, false, 0);
    s0 = syscalls();
    fastsync_event_reset(&e);
    is_int(syscalls() - s0, 0, "reset on a reset event: no syscall");
    fastsync_event_set(&e);
    is_int(syscalls() - s0, 0, "set on a reset event nobody waits on: no syscall");
    fastsync_event_set(&e);
    is_int(syscalls() - s0, 0, "set on a set event: no syscall");
    fastsync_event_wait(&e);
    is_int(syscalls() - s0, 0, "set before wait: wait returns without a syscall");
    fastsync_event_reset(&e);
    is_int(syscalls() - s0, 0, "reset on a set event: no syscall");
    fastsync_event_destroy(&e);
    for (int flags = 0; flags <= TEST_SHARED; flags++) {
        fastsync_event_init(&e, false, flags);
        s0 = syscalls();
        long rounds = 100000, bad = 0;
        for (long i = 0; i < rounds; i++) {
            fastsync_event_set(&e);
            fastsync_event_set(&e);
            fastsync_event_wait(&e);
            if (fastsync_event_timedwait(&e, &past) != 0) bad++;
            if (!fastsync_event_is_set(&e)) bad++;
            fastsync_event_reset(&e);
            fastsync_event_reset(&e);
            if (fastsync_event_timedwait(&e, &past) != ETIMEDOUT) bad++;
            if (fastsync_event_is_set(&e)) bad++;
        }
        is_int(bad, 0, "%s: %ld set/set/wait/reset/reset rounds give the right answers", flags ? "shared" : "private", rounds);
        is_int(syscalls() - s0, 0, "%s: ... and make no syscall", flags ? "shared" : "private");
        fastsync_event_destroy(&e);
    }

    /* a real timeout through the kernel: never early, not absurdly late, errno untouched.
     * 20 ms ahead, not 2: under emulation (qemu-user, and the OS/2 path without atomics,
     * whose every call is two Dos* calls) 2 ms could pass before the wait reached its first
     * sleep, and "it slept in the kernel" failed 4 to 53 times in 100 there. */
    fastsync_event_init(&e, false, 0);
    errno = 1234;
    unsigned long w0 = test_kernel_waits();
    struct timespec soon = fastsync_deadline_in(20000000);
    is_int(fastsync_event_timedwait(&e, &soon), ETIMEDOUT, "timedwait 20 ms on a reset event: ETIMEDOUT");
    int64_t after = test_clock_ns(CLOCK_MONOTONIC);
    is_int(errno, 1234, "errno untouched by the timeout");
    ok(test_kernel_waits() - w0 >= 1, "the timeout slept in the kernel (%lu futex waits)", test_kernel_waits() - w0);
    ok(after >= test_ts_ns(soon), "the timeout is not early");
    ok(after - test_ts_ns(soon) < 2000000000, "the timeout is not absurdly late (%.3f ms after the deadline)",
       (double)(after - test_ts_ns(soon)) / 1e6);
    ok(!fastsync_event_is_set(&e), "still reset after the timeout");
    /* a second timeout with the state a timed-out waiter leaves behind */
    soon = fastsync_deadline_in(2000000);
    is_int(fastsync_event_timedwait(&e, &soon), ETIMEDOUT, "a second 2 ms timedwait: ETIMEDOUT");
    ok(test_clock_ns(CLOCK_MONOTONIC) >= test_ts_ns(soon), "the second timeout is not early");

    struct timespec rt = test_deadline_on(CLOCK_REALTIME, 2000000);
    errno = 1234;
    is_int(fastsync_event_clockwait(&e, CLOCK_REALTIME, &rt), ETIMEDOUT, "clockwait REALTIME 2 ms: ETIMEDOUT");
    ok(test_clock_ns(CLOCK_REALTIME) >= test_ts_ns(rt), "the REALTIME timeout is not early");
    is_int(errno, 1234, "errno untouched by the REALTIME timeout");

    /* the waiters that timed out are gone: set wakes nobody, at most one wasted FUTEX_WAKE */
    unsigned long k0 = test_kernel_wakes();
    errno = 1234;
    fastsync_event_set(&e);
    ok(test_kernel_wakes() - k0 <= 1, "set after timeouts: at most one FUTEX_WAKE (%lu)", test_kernel_wakes() - k0);
    is_int(errno, 1234, "errno untouched by set");
    ok(fastsync_event_is_set(&e), "set after timeouts: set");
    fastsync_event_reset(&e);
    k0 = test_kernel_wakes();
    fastsync_event_set(&e);
    is_int(test_kernel_wakes() - k0, 0, "the next set/reset cycle with no waiter: no FUTEX_WAKE");
    is_int(fastsync_event_destroy(&e), 0, "no waiter left in the event after the timeouts");

    /* shared event, timeout */
    fastsync_event_init(&e, false, TEST_SHARED);
    soon = fastsync_deadline_in(2000000);
    is_int(fastsync_event_timedwait(&e, &soon), ETIMEDOUT, "shared: timedwait 2 ms: ETIMEDOUT");
    ok(test_clock_ns(CLOCK_MONOTONIC) >= test_ts_ns(soon), "shared: the timeout is not early");
    is_int(fastsync_event_destroy(&e), 0, "shared: no waiter left in the event after the timeout");

    /* a real sleeper woken by set, private and shared, wait and timedwait */
    wake_one_sleeper(0, false);
    wake_one_sleeper(0, true);
    wake_one_sleeper(TEST_SHARED, false);
    wake_one_sleeper(TEST_SHARED, true);

    shared_across_fork();

    return done_testing();
}
