/* SPDX-License-Identifier: MIT */
/* posix_dlopen: one POSIX wait table per process across plugins loaded with dlopen, and
 * across fork after the image that set the table up is unloaded (issue 17, items 1 and 5).
 * The host (this file, linked with -Wl,--export-dynamic-symbol=fastsync__posix_table_v2,
 * the manual's recipe) loads two plugins built from posix_dlopen_plugin.c with RTLD_LOCAL;
 * all three force the POSIX backend, whatever the build's.
 *   1-3  plugin A's use is the process's first (the host's table is not yet set up) and
 *        sets up the host's table; A and B name the host's table.
 *   4    a thread asleep in A's wait, queued in the host's table, is woken by B's post.
 *   5    after dlclose(A), a thread asleep in B's wait is woken by the host's post.
 *   6    fork while a host thread holds the lock of a bucket: the child's wait on that
 *        bucket times out (200 ms) rather than hanging on a lock nobody in the child holds.
 * Before the fix (table and set-up flag fastsync__posix_table_v1 and fastsync__posix_once_v1,
 * fork handlers registered once per process): without the export, 2-4 fail (A's sleeper
 * sleeps on in A's own table); with both symbols exported, 6 fails: the fork handlers were
 * A's, unregistered by dlclose, and the child hangs on the inherited lock (SIGALRM, 114). */
#define FASTSYNC_BACKEND_POSIX 1
#include "harness.h"

#include <dlfcn.h>
#include <signal.h>

#include "posix_dlopen.h"

static fastsync_sem_t s;
static const struct plugin *in_b; /* for the child */

struct sleeper {
    const struct plugin *p;
    _Atomic(int) done;
    int r;
};

static void *sleeper_main(void *arg)
{
    struct sleeper *z = (struct sleeper *)arg;
    z->r = z->p->sem_wait(&s);
    /* release: pairs with the host's acquire load; join orders the rest */
    atomic_store_explicit(&z->done, 1, memory_order_release);
    return NULL;
}

/* The nodes queued in the table in the bucket of s's futex word. */
static int queued(void) { return test_table_queued(fastsync__sem_futex(&s)); }

static const struct plugin *load(const char *path, void **handle)
{
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (*handle == NULL) bail("dlopen %s: %s", path, dlerror());
    const struct plugin *p = (const struct plugin *)dlsym(*handle, "posix_dlopen_plugin");
    if (p == NULL) bail("dlsym in %s: %s", path, dlerror());
    return p;
}

/* A sleeper in `waits`' wait on s, woken by `posts`' post once it is queued in the host's
 * table: whether it returned 0 within 1 s of the post (else the host posts again, from its
 * own table, so that the thread can be joined). */
static bool wake_crosses(const struct plugin *waits, const struct plugin *posts, const char *what)
{
    struct sleeper z = { waits, 0, -1 };
    pthread_t t = test_thread_start(sleeper_main, &z);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && queued() == 0) test_sleep_ns(1000000);
    ok(queued() == 1, "%s: the sleeper is queued in the host's table", what);
    test_sleep_ns(100000000); /* asleep in its condition variable by now */
    (void)posts->sem_post(&s);
    end = test_limit_end(1000);
    while (test_box_open(end) && !atomic_load_explicit(&z.done, memory_order_acquire))
        test_sleep_ns(1000000);
    bool woke = atomic_load_explicit(&z.done, memory_order_acquire);
    if (!woke) {
        diag("%s: still asleep 1 s after the post; tokens %" PRIu32 ", waiters %" PRIu32, what,
             fastsync__sem_tokens(test_sem_word(&s)), test_sem_waiters(&s));
        (void)fastsync_sem_post(&s);
    }
    test_thread_join(t);
    return woke && z.r == 0;
}

static fastsync_sem_t held; /* its bucket is locked by a host thread across the fork */
static fastsync_event_t locked;

static void *holder_main(void *unused)
{
    (void)unused;
    struct fastsync__bucket *b = fastsync__bucket_of(fastsync__sem_futex(&held));
    (void)pthread_mutex_lock(&b->lock);
    fastsync_event_set(&locked);
    test_sleep_ns(300000000);
    (void)pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* The child: 0 its wait timed out; 1 it returned something else. A hang is SIGALRM. */
static int child(void)
{
    sigset_t all;
    sigfillset(&all);
    (void)pthread_sigmask(SIG_UNBLOCK, &all, NULL);
    (void)signal(SIGALRM, SIG_DFL);
    alarm(3);
    int r = in_b->sem_wait_ms(&held, 200);
    return r == ETIMEDOUT ? 0 : 1;
}

int main(int argc, char **argv)
{
    test_init();
    if (argc != 3) bail("usage: posix_dlopen plugin_a.so plugin_b.so");
    test_watchdog_start(NULL, NULL);
    if (fastsync_sem_init(&s, 0, 0) != 0) bail("sem_init");
    void *ha, *hb;
    const struct plugin *a = load(argv[1], &ha), *b = load(argv[2], &hb);
    in_b = b;
    const struct fastsync__table *host = &fastsync__posix_table_v2;
    is_int((int)__atomic_load_n(&host->ready, __ATOMIC_ACQUIRE), 0,
           "before plugin A's first wait, the host's table is not set up");
    is_int(a->sem_wait_ms(&s, 50), ETIMEDOUT, "plugin A's first wait (50 ms) times out");
    is_int((int)__atomic_load_n(&host->ready, __ATOMIC_ACQUIRE), 2, "... and set up the host's table");
    ok(a->table() == host, "plugin A's table is the host's (%p, %p)", a->table(), (const void *)host);
    ok(b->table() == host, "plugin B's table is the host's (%p, %p)", b->table(), (const void *)host);
    ok(wake_crosses(a, b, "wait in A, post in B"), "a sleeper in A's wait is woken by B's post");
    is_int(dlclose(ha), 0, "dlclose(A)");
    static const struct plugin here = { NULL, NULL, fastsync_sem_post, NULL };
    ok(wake_crosses(b, &here, "wait in B after A's dlclose, post in the host"),
       "after dlclose(A), a sleeper in B's wait is woken by the host's post");
    fastsync_sem_init(&held, 0, 0);
    fastsync_event_init(&locked, false, 0);
    pthread_t t = test_thread_start(holder_main, NULL);
    fastsync_event_wait(&locked);
    int code = test_reap(test_spawn(child));
    if (!is_int(code, 0, "fork while a host thread holds a bucket's lock: the child's wait there times out"))
        diag("  child exit %d: 1 its wait returned other than ETIMEDOUT; 114 SIGALRM (hung)", code);
    test_thread_join(t);
    is_int(dlclose(hb), 0, "dlclose(B)");
    test_watchdog_stop();
    return done_testing();
}
