/* SPDX-License-Identifier: MIT */
/* futex_fallback: waits keep their promises when the kernel refuses a futex call.
 *   time64:  on a 32-bit ABI with a 64-bit time_t (i386 with _TIME_BITS=64; musl), futex_time64
 *            answers ENOSYS (a kernel before 5.1, a seccomp profile): a 200 ms timed wait
 *            times out on time, on both clocks; a post wakes a waiter, with no deadline and
 *            with one past 2038; no call but those past 2038 needs futex_time64, and its
 *            ENOSYS is remembered. Skipped where the ABI has no futex_time64.
 *   ENOSYS, EPERM:  every futex call on the test's objects fails so (a kernel without futex,
 *            a seccomp filter): a 200 ms timed wait still times out on time and is not a busy
 *            loop (a bounded number of calls into the futex layer), and a post or a set still
 *            reaches a blocked waiter (which polls).
 *   cancel:  every futex call ENOSYS, a waiter blocked in sem_wait (polling: a nanosleep per
 *            slice, a cancellation point of the C library's) is sent a cancel. Where the
 *            waits are cancellation points it ends cancelled inside the wait, deregistered.
 *            With FASTSYNC_NO_CANCEL (futex_fallback_nocancel) the wait is none: the cancel
 *            waits while the waiter polls on (two more slices after the cancel was sent),
 *            the post ends the wait with 0, and the cancel acts at the waiter's own
 *            pthread_testcancel after it (issue 32: the nanosleep acted on it, the waiter
 *            ending inside its wait, registered for good).
 * Each case runs in a child process that installs a seccomp filter refusing the calls on the
 * address range of its objects. Where no filter can be installed (qemu-user, which runs the
 * i386 build in CI, refuses PR_SET_SECCOMP; it also cannot start threads in a forked child),
 * the cases run in this process, and the syscall() the test links in front of the C
 * library's refuses the calls instead (futex_fallback_sys.c, -Wl,--wrap=syscall). The checks
 * are recorded in shared memory and reported by the parent; its watchdog turns a hang (a busy
 * loop that never times out, or a lost wakeup) into a failure, and kills the child. */
#include "harness.h"

#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#if defined(__has_include)
#if __has_include(<linux/seccomp.h>) && __has_include(<linux/filter.h>) && __has_include(<linux/audit.h>)
#define HAVE_KERNEL_HEADERS 1 /* (musl-gcc has none on its include path) */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif
#endif

void fallback_refuse(long nr_a, long nr_b, int err, uintptr_t lo, uintptr_t hi);
unsigned long fallback_calls(long nr);

#if defined(SYS_futex_time64) && ULONG_MAX == 0xffffffffu
#define HAVE_TIME64_CALL 1
#else
#define HAVE_TIME64_CALL 0
#endif

#if !defined(HAVE_KERNEL_HEADERS)
/* no seccomp filter: the test's syscall() refuses the calls */
#elif defined(__x86_64__) && !defined(__ILP32__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define FILTER_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

#define WAIT_MS 200

struct check { bool pass; char what[160]; };
static struct shared {
    struct { fastsync_sem_t s; fastsync_event_t e; } obj; /* the calls on these are refused */
    int nchecks;
    struct check c[32];
    char how[64];
} *m;

/* One check, recorded for the parent to report. */
static bool check(bool pass, const char *fmt, ...)
{
    if (m->nchecks >= (int)(sizeof m->c / sizeof m->c[0])) return pass;
    struct check *c = &m->c[m->nchecks++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->what, sizeof c->what, fmt, ap);
    va_end(ap);
    c->pass = pass;
    return pass;
}

/* A seccomp filter (returning `err` for calls nr_a and nr_b on the objects), as a program. */
#if defined(FILTER_ARCH) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HAVE_FILTER 1
static int install_filter(long nr_a, long nr_b, int err, uintptr_t lo, uintptr_t hi)
{
    /* Arguments are 64-bit in seccomp_data (the low half first, on these CPUs); the objects
     * must not straddle a 4 GiB boundary for the two-halves compare below. */
    if ((uint64_t)lo >> 32 != (uint64_t)hi >> 32) return -1;
    uint32_t hi_half = (uint32_t)((uint64_t)lo >> 32);
    struct sock_filter f[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
        /* 2 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr_a, 1, 0),
        /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr_b, 0, 6),
        /* 6 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + 4),
        /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, hi_half, 0, 4),
        /* 8 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        /* 9 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)lo, 0, 2),
        /* 10 */ BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)hi, 1, 0),
        /* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((uint32_t)err & SECCOMP_RET_DATA)),
        /* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}
#else
#define HAVE_FILTER 0
#endif

/* Whether this process may install seccomp filters: tried in a child that makes no thread
 * (qemu-user refuses them, and also fails to start threads in a forked child). */
static bool filters_work(void)
{
#if HAVE_FILTER
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) bail("fork: %s", strerror(errno));
    if (pid == 0) _exit(install_filter(SYS_getppid, SYS_getppid, EPERM, 1, 1) == 0 ? 0 : 1);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
#else
    return false;
#endif
}

static bool use_filter; /* else the test's syscall() refuses the calls */

/* Refuses futex calls nr_a and nr_b on the objects with err: in a child with a seccomp filter,
 * else with the test's syscall(). Records how. */
static void refuse(long nr_a, long nr_b, int err)
{
    uintptr_t lo = (uintptr_t)&m->obj, hi = lo + sizeof m->obj - 1;
    fallback_refuse(nr_a, nr_b, 0, lo, hi); /* count the calls in any case */
#if HAVE_FILTER
    if (use_filter) {
        if (install_filter(nr_a, nr_b, err, lo, hi) != 0) bail("seccomp filter: %s", strerror(errno));
        snprintf(m->how, sizeof m->how, "a seccomp filter");
        return;
    }
#endif
    fallback_refuse(nr_a, nr_b, err, lo, hi);
    snprintf(m->how, sizeof m->how, "the test's syscall() (no seccomp filter here)");
}

/* ---- what each case checks ---- */

static void *sem_waiter(void *p)
{
    struct timespec *d = (struct timespec *)p;
    return (void *)(intptr_t)(d ? fastsync_sem_clockwait(&m->obj.s, CLOCK_REALTIME, d) : fastsync_sem_wait(&m->obj.s));
}

static void *event_waiter(void *unused)
{
    (void)unused;
    fastsync_event_wait(&m->obj.e);
    return NULL;
}

/* A timed wait on each clock on the empty semaphore: ETIMEDOUT, never early, not absurdly
 * late, and with at most max_calls calls into the futex layer (one sleep each). */
static void timed_waits(const char *label, unsigned long max_calls)
{
    const clockid_t clocks[2] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
    for (int i = 0; i < 2; i++) {
        unsigned long calls0 = test_kernel_waits();
        int64_t t0 = test_clock_ns(clocks[i]);
        struct timespec d = test_deadline_on(clocks[i], WAIT_MS * 1000000ull);
        int r = fastsync_sem_clockwait(&m->obj.s, clocks[i], &d);
        int64_t late = test_clock_ns(clocks[i]) - test_ts_ns(d);
        unsigned long calls = test_kernel_waits() - calls0;
        const char *cn = i == 0 ? "MONOTONIC" : "REALTIME";
        check(r == ETIMEDOUT, "%s: %d ms wait on %s: ETIMEDOUT (got %d)", label, WAIT_MS, cn, r);
        check(late >= 0 && late < (int64_t)(2e9 * test_scale_up()),
              "%s: ... at its deadline (%.1f ms after it; %.1f ms in all)", label, late / 1e6,
              (test_clock_ns(clocks[i]) - t0) / 1e6);
        check(calls <= max_calls, "%s: ... with %lu calls into the futex layer (at most %lu: no busy loop)",
              label, calls, max_calls);
    }
}

/* A blocked waiter (sem: deadline d or none; event) gets the post or set. */
static void wake_blocked(const char *label, struct timespec *d)
{
    pthread_t t = test_thread_start(sem_waiter, d);
    while (test_sem_waiters(&m->obj.s) == 0) test_sleep_ns(1000000);
    test_sleep_ns(50000000); /* asleep by now, or polling */
    int rp = fastsync_sem_post(&m->obj.s);
    intptr_t r = (intptr_t)test_thread_join(t);
    check(rp == 0 && r == 0, "%s: a post reached the blocked sem waiter%s (post %d, wait %d)", label,
          d ? " (deadline past 2038)" : "", rp, (int)r);
    check(test_sem_waiters(&m->obj.s) == 0 && fastsync_sem_getvalue(&m->obj.s) == 0,
          "%s: ... which took the token and left", label);
}

static void wake_event(const char *label)
{
    unsigned long w0 = test_kernel_waits();
    pthread_t t = test_thread_start(event_waiter, NULL);
    while (test_kernel_waits() == w0) test_sleep_ns(1000000);
    test_sleep_ns(50000000);
    fastsync_event_set(&m->obj.e);
    test_thread_join(t);
    check(true, "%s: a set reached the blocked event waiter", label);
    fastsync_event_reset(&m->obj.e);
}

/* The cancelled waiter: sem_wait, then a cancellation point of its own. phase: 1 in the wait,
 * 2 back from it (relaxed: polled; the join orders what is read after it). */
static _Atomic(int) cw_phase;
static int cw_ret;

static void *cancelled_waiter(void *unused)
{
    (void)unused;
    pthread_cleanup_push(test_cwaiter_unpoison, NULL);
    atomic_store_explicit(&cw_phase, 1, memory_order_relaxed);
    cw_ret = fastsync_sem_wait(&m->obj.s);
    atomic_store_explicit(&cw_phase, 2, memory_order_relaxed);
    pthread_testcancel();
    pthread_cleanup_pop(0);
    return NULL;
}

/* A cancel sent to a waiter that polls (the futex calls refused). */
static void cancel_polling(const char *label)
{
    atomic_store_explicit(&cw_phase, 0, memory_order_relaxed);
    cw_ret = -1;
    unsigned long w0 = test_kernel_waits();
    pthread_t t = test_thread_start(cancelled_waiter, NULL);
    uint64_t end = test_limit_end(5000);
    while ((test_sem_waiters(&m->obj.s) == 0 || test_kernel_waits() == w0) && test_box_open(end))
        test_sleep_ns(100000);
    int rc = pthread_cancel(t);
    if (FASTSYNC__CANCEL) {
        /* the wait is a cancellation point: the cancel acts at the waiter's next slice */
        void *res = test_thread_join(t);
        check(rc == 0 && res == PTHREAD_CANCELED && atomic_load_explicit(&cw_phase, memory_order_relaxed) == 1,
              "%s: a cancel sent to a polling sem waiter ends it inside its wait (the waits are cancellation "
              "points)", label);
        check(test_sem_waiters(&m->obj.s) == 0, "%s: ... which left no waiter registered", label);
        return;
    }
    /* Every slice begins with a call into the futex layer and ends with a nanosleep: two more
     * calls after the cancel was sent, and the waiter has slept through at least one slice
     * with the cancel pending, which would have acted there. */
    unsigned long w1 = test_kernel_waits();
    end = test_limit_end(5000);
    while (test_kernel_waits() < w1 + 2 && test_box_open(end)) test_sleep_ns(100000);
    check(rc == 0 && test_kernel_waits() >= w1 + 2,
          "%s: FASTSYNC_NO_CANCEL: the sem waiter polls on after a cancel (%lu more slices)", label,
          test_kernel_waits() - w1);
    int rp = fastsync_sem_post(&m->obj.s);
    void *res = test_thread_join(t);
    check(rp == 0 && cw_ret == 0 && atomic_load_explicit(&cw_phase, memory_order_relaxed) == 2,
          "%s: ... the post ends its wait, which returns 0 (no cancellation point)", label);
    check(res == PTHREAD_CANCELED, "%s: ... and the cancel acts after it, at the thread's own point", label);
    check(test_sem_waiters(&m->obj.s) == 0 && fastsync_sem_getvalue(&m->obj.s) == 0,
          "%s: ... the token taken, no waiter left", label);
}

/* ---- the cases (each in a child) ---- */

static int case_time64(void)
{
#if HAVE_TIME64_CALL
    refuse(SYS_futex_time64, SYS_futex_time64, ENOSYS);
    timed_waits("futex_time64 ENOSYS", 4);
    wake_blocked("futex_time64 ENOSYS", NULL);
    check(fallback_calls(SYS_futex_time64) == 0,
          "futex_time64 ENOSYS: no call so far needed futex_time64 (%lu made)", fallback_calls(SYS_futex_time64));
    if (sizeof(time_t) > sizeof(long)) {
        struct timespec far = test_deadline_on(CLOCK_REALTIME, 0);
        time_t year = 86400 * 365;
        far.tv_sec = (time_t)LONG_MAX;
        far.tv_sec += year; /* 2039 (a runtime sum: with a 32-bit time_t this never runs) */
        wake_blocked("futex_time64 ENOSYS", &far);
        wake_blocked("futex_time64 ENOSYS", &far);
        check(fallback_calls(SYS_futex_time64) == 1,
              "futex_time64 ENOSYS: two waits past 2038 tried futex_time64 once (%lu): its ENOSYS is remembered",
              fallback_calls(SYS_futex_time64));
    }
    wake_event("futex_time64 ENOSYS");
#endif
    return 0;
}

/* Every futex call on the objects refused with err. */
static void refuse_futex(int err)
{
#if defined(SYS_futex) && defined(SYS_futex_time64)
    refuse(SYS_futex, SYS_futex_time64, err);
#elif defined(SYS_futex)
    refuse(SYS_futex, SYS_futex, err);
#else
    refuse(SYS_futex_time64, SYS_futex_time64, err);
#endif
}

static int refuse_all(int err, const char *label)
{
    refuse_futex(err);
    /* A poll of 1 ms makes about WAIT_MS calls; a busy loop makes millions. */
    timed_waits(label, 4 * WAIT_MS);
    wake_blocked(label, NULL);
    wake_event(label);
    return 0;
}

static int case_enosys(void) { return refuse_all(ENOSYS, "every futex call ENOSYS"); }
static int case_cancel(void)
{
    refuse_futex(ENOSYS);
    cancel_polling("cancel, every futex call ENOSYS");
    return 0;
}
static int case_eperm(void) { return refuse_all(EPERM, "every futex call EPERM"); }

static pid_t child = -1;

static void dump(void *unused)
{
    (void)unused;
    test_dump_sem("sem", &m->obj.s);
    test_dump_event("event", &m->obj.e);
    diag("%d checks recorded by the child so far", m->nchecks);
    if (child > 0) kill(child, SIGKILL);
}

static void run(const char *name, int (*fn)(void))
{
    memset(m, 0, sizeof *m);
    if (fastsync_sem_init(&m->obj.s, 0, 0) != 0 || fastsync_event_init(&m->obj.e, false, 0) != 0)
        bail("init failed");
    int status = 0;
    if (use_filter) {
        /* A filter cannot be removed: each case in a child of its own, forked while this
         * process has no other thread (the watchdog starts after). */
        fflush(stdout);
        child = fork();
        if (child < 0) bail("fork: %s", strerror(errno));
        if (child == 0) _exit(fn());
        test_watchdog_start(dump, NULL);
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        child = -1;
    } else {
        test_watchdog_start(dump, NULL);
        status = fn();
        fallback_refuse(0, 0, 0, 0, 0);
    }
    test_watchdog_stop();
    if (m->nchecks == 0) {
        skip("no futex_time64 on this ABI, or a 32-bit time_t", "%s", name);
        return;
    }
    diag("%s: the calls refused by %s", name, m->how);
    for (int i = 0; i < m->nchecks; i++) ok(m->c[i].pass, "%s", m->c[i].what);
    if (use_filter) ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child exited normally", name);
}

int main(void)
{
    test_init();
#if !defined(FASTSYNC_BACKEND_LINUX)
    skip_all("the futex fallback is the Linux backend's; this is the " FASTSYNC_BACKEND " backend");
#endif
    m = (struct shared *)mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) bail("mmap: %s", strerror(errno));
    use_filter = filters_work();
    run("futex_time64 ENOSYS", case_time64);
    run("every futex call ENOSYS", case_enosys);
    run("every futex call EPERM", case_eperm);
    run("cancel, every futex call ENOSYS", case_cancel);
    return done_testing();
}
