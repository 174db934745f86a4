/* SPDX-License-Identifier: MIT */
/* once_fork: what fork during an initialisation leaves (fastsync.h, "One-time
 * initialisation"): the thread that forks from inside its own initialiser commits in both
 * processes. A private once, in plain memory that fork copies.
 *   fastsync_once whose fn forks: in the child, fn returns and fastsync_once commits there
 *     (the child's copy says done; a second fastsync_once runs nothing); in the parent the
 *     same. fn ran once in each process.
 *   begin, then fork with a thread of the parent asleep in begin (the word says WAITED): the
 *     child's commit says 0 (its wake finds nobody: the sleeper was not copied) and its
 *     begin 0; the parent's commit wakes the sleeper, which returns 0 and reads the record.
 * (The other case, a fork while another thread initialises, leaves the child's callers
 * waiting for good, as for a mutex held at fork: not tested, a hang.)
 * Not on Windows (no fork) nor over the OS/2 double (one process).
 * Fails with a commit that refuses the copied running state in the child (EPERM: the child's
 * word would stay running for good), or a child whose copy is not done after it. */
#include "harness.h"

static fastsync_once_t o;
static int calls;   /* fn's calls in this process */
static int rec;     /* plain: the record, written before the commit */
static _Atomic(bool) back; /* the sleeper returned: release, pairs with the acquire poll */
static int sleeper_ret, sleeper_rec;
static _Atomic(int) sleeper_tid; /* relaxed: for /proc, stored before the sleeper's begin */

static void dump(void *unused)
{
    (void)unused;
    test_dump_once("once", &o);
    test_kill_child();
}

static void count(void *unused)
{
    (void)unused;
    calls++;
}

static pid_t forked; /* in the parent: the child; in the child: 0 */

static void fn_forks(void *unused)
{
    (void)unused;
    calls++;
    fflush(stdout);
    forked = fork();
    if (forked < 0) bail("fork: %s", strerror(errno));
    if (forked == 0) alarm((unsigned)test_watchdog_seconds() + 5); /* a hung child ends */
}

/* The child's checks, as bits of its exit code (0: all good). */
static int child_checks(void)
{
    int bad = 0;
    if (test_once_state(&o) != FASTSYNC__ONCE_DONE) bad |= 1;
    fastsync_once(&o, count, NULL);
    if (calls != 1) bad |= 2;
    if (fastsync_once_begin(&o) != 0) bad |= 4;
    return bad;
}

static void forks_in_fn(void)
{
    fastsync_once_init(&o, 0);
    calls = 0;
    int r = fastsync_once(&o, fn_forks, NULL);
    if (forked == 0) _exit(child_checks() | (r != 0) << 3); /* the child prints nothing */
    test_child = forked;
    is_int(r, 0, "fn forks: fastsync_once says 0");
    is_int(calls, 1, "fn forks: in the parent fn ran once");
    is_int(test_once_state(&o), FASTSYNC__ONCE_DONE, "fn forks: ... the parent's once is done");
    fastsync_once(&o, count, NULL);
    is_int(calls, 1, "fn forks: ... a second fastsync_once runs nothing");
    is_int(test_reap(forked), 0,
           "fn forks: in the child fastsync_once committed too and said 0: done, fn not run again, begin 0 (bits 1, 2, 4, 8)");
}

static void *sleeper(void *unused)
{
    (void)unused;
    atomic_store_explicit(&sleeper_tid, test_tid(), memory_order_relaxed);
    sleeper_ret = fastsync_once_begin(&o);
    sleeper_rec = rec;
    atomic_store_explicit(&back, true, memory_order_release);
    return NULL;
}

static int child_commit(void)
{
    int bad = 0;
    if (test_once_state(&o) != FASTSYNC__ONCE_WAITED) bad |= 1;
    if (fastsync_once_commit(&o) != 0) bad |= 2;
    if (test_once_state(&o) != FASTSYNC__ONCE_DONE) bad |= 4;
    if (fastsync_once_begin(&o) != 0) bad |= 8;
    return bad;
}

static void begin_fork_sleeper(void)
{
    fastsync_once_init(&o, 0);
    rec = 0;
    atomic_store_explicit(&back, false, memory_order_relaxed); /* relaxed: before the thread */
    is_int(fastsync_once_begin(&o), 1, "begin, fork: this thread initialises");
    unsigned long waits0 = test_kernel_waits();
    pthread_t t = test_thread_start(sleeper, NULL);
    uint64_t end = test_limit_end(5000);
    while ((test_once_state(&o) != FASTSYNC__ONCE_WAITED || test_kernel_waits() == waits0) && test_box_open(end))
        test_sleep_ns(100000);
    /* and asleep in /proc: past the backend's first use in this process (the POSIX
     * backend's table is set up by pthread_once, which a fork must not split) */
    ok(test_once_state(&o) == FASTSYNC__ONCE_WAITED &&
           test_until_asleep(atomic_load_explicit(&sleeper_tid, memory_order_relaxed), 20000000),
       "begin, fork: a thread sleeps in begin (the word says WAITED)");
    rec = 5;
    pid_t pid = test_spawn(child_commit);
    is_int(test_reap(pid), 0, "begin, fork: in the child, commit 0 on the copied WAITED, done, begin 0 (bits 1, 2, 4, 8)");
    is_int(fastsync_once_commit(&o), 0, "begin, fork: the parent's commit: 0");
    end = test_limit_end(3000);
    /* acquire: pairs with the sleeper's release store */
    while (!atomic_load_explicit(&back, memory_order_acquire) && test_box_open(end)) test_sleep_ns(100000);
    ok(atomic_load_explicit(&back, memory_order_acquire), "begin, fork: ... it woke the parent's sleeper");
    if (!atomic_load_explicit(&back, memory_order_acquire)) fastsync__wake_sys(&o, INT_MAX, 0);
    test_thread_join(t);
    ok(sleeper_ret == 0 && sleeper_rec == 5, "begin, fork: ... whose begin said 0 and read the record");
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    forks_in_fn();
    begin_fork_sleeper();
    test_watchdog_stop();
    return done_testing();
}
