/* SPDX-License-Identifier: MIT */
/* posix_dlopen: one POSIX wait table per process across plugins loaded with dlopen, across
 * dlclose of the image that set it up, and fork (issue 17, items 1, 2 and 5). The host
 * (this file, linked with -Wl,--export-dynamic-symbol=fastsync__posix_table_v2, the
 * manual's recipe) loads two plugins built from posix_dlopen_plugin.c with RTLD_LOCAL (B
 * with -fvisibility=hidden); all three force the POSIX backend, whatever the build's.
 *   0    a fork while a thread sets the table up (forced): the child sets it up itself.
 *   1-3  plugin A's use is the process's first and sets up the host's table; A and B name
 *        the host's table.
 *   4    a thread asleep in A's wait, queued in the host's table, is woken by B's post.
 *   5    after dlclose(A) (unloaded, where the C library unloads), a thread asleep in B's
 *        wait is woken by the host's post.
 *   6    fork while a host thread holds the lock of a bucket: the child's wait on that
 *        bucket times out (200 ms) rather than hanging on a lock nobody in the child will
 *        unlock; a fork handler of the program's own, registered before the table's first
 *        use, wakes a sleeper (nothing of the table is locked around the fork); the
 *        parent's buckets are all unlocked after it.
 * Before the fix (table and set-up flag fastsync__posix_table_v1 and fastsync__posix_once_v1,
 * fork handlers registered once per process): without the export, 2-4 fail (A's sleeper
 * sleeps on in A's own table); with both symbols exported, 6 fails: the fork handlers were
 * A's, unregistered by dlclose, and the child hangs on the inherited lock (SIGALRM, 114).
 * With the first v2 (every bucket locked in the first prepare handler), the program's own
 * prepare handler, run after it, hung in its wake; and 0 hung (SIGALRM). */
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
 * table: whether it returned 0 within the harness's limit of 5 s after the post, which only
 * a lost wake reaches (else the host posts again, from its own table, so that the thread can
 * be joined). (The limit was 1 s, which a loaded machine could reach: issue 32, item 8.) */
static bool wake_crosses(const struct plugin *waits, const struct plugin *posts, const char *what)
{
    struct sleeper z = { waits, 0, -1 };
    pthread_t t = test_thread_start(sleeper_main, &z);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && queued() == 0) test_sleep_ns(1000000);
    ok(queued() == 1, "%s: the sleeper is queued in the host's table", what);
    test_sleep_ns(100000000); /* asleep in its condition variable by now */
    (void)posts->sem_post(&s);
    end = test_limit_end(5000);
    while (test_box_open(end) && !atomic_load_explicit(&z.done, memory_order_acquire))
        test_sleep_ns(1000000);
    bool woke = atomic_load_explicit(&z.done, memory_order_acquire);
    if (!woke) {
        diag("%s: still asleep 5 s after the post; tokens %" PRIu32 ", waiters %" PRIu32, what,
             fastsync__sem_tokens(test_sem_word(&s)), test_sem_waiters(&s));
        (void)fastsync_sem_post(&s);
    }
    test_thread_join(t);
    return woke && z.r == 0;
}

/* The fork (point 6): a host thread holds the lock of held's bucket through it, and a fork
 * handler of the test's own, registered before any image's first use, posts fs, on which
 * a thread sleeps (its wake locks fs's bucket, another one). */
static fastsync_sem_t held, fss[4], *fs;
static _Atomic(int) locked, forked, prepare_armed, prepare_posted;

static void *holder_main(void *unused)
{
    (void)unused;
    struct fastsync__bucket *b = fastsync__bucket_of(fastsync__sem_futex(&held));
    (void)pthread_mutex_lock(&b->lock);
    /* release / acquire (these two flags): pair with main's loads and stores */
    atomic_store_explicit(&locked, 1, memory_order_release);
    while (!atomic_load_explicit(&forked, memory_order_acquire)) test_sleep_ns(1000000);
    (void)pthread_mutex_unlock(&b->lock);
    return NULL;
}

static void user_prepare(void)
{
    /* relaxed: main's own flags, set and read by the forking thread */
    if (!atomic_load_explicit(&prepare_armed, memory_order_relaxed)) return;
    (void)fastsync_sem_post(fs); /* a sleeper: a wake, which locks fs's bucket */
    atomic_store_explicit(&prepare_posted, 1, memory_order_relaxed);
}

static void *fs_sleeper(void *unused)
{
    (void)unused;
    return (void *)(intptr_t)in_b->sem_wait(fs);
}

/* The children: 0 a 200 ms wait (50 ms for the set-up) timed out; 1 it returned something
 * else. A hang is SIGALRM (exit 114). */
static int child_wait(fastsync_sem_t *on, int ms)
{
    sigset_t all;
    sigfillset(&all);
    (void)pthread_sigmask(SIG_UNBLOCK, &all, NULL);
    (void)signal(SIGALRM, SIG_DFL);
    alarm(3);
    return in_b->sem_wait_ms(on, ms) == ETIMEDOUT ? 0 : 1;
}

static int child(void) { return child_wait(&held, 200); }

static int child_setup(void)
{
    fastsync_sem_t here;
    fastsync_sem_init(&here, 0, 0);
    return child_wait(&here, 50);
}

static size_t bucket_index(fastsync_sem_t *x)
{
    return (size_t)(fastsync__bucket_of(fastsync__sem_futex(x)) - fastsync__posix_table_v2.bucket);
}

int main(int argc, char **argv)
{
    test_init();
    if (argc != 3) bail("usage: posix_dlopen plugin_a.so plugin_b.so");
    test_watchdog_start(NULL, NULL);
    if (fastsync_sem_init(&s, 0, 0) != 0) bail("sem_init");
    (void)pthread_atfork(user_prepare, NULL, NULL); /* before any image's first use */
    void *ha, *hb;
    const struct plugin *a = load(argv[1], &ha), *b = load(argv[2], &hb);
    in_b = b;
    struct fastsync__table *host = &fastsync__posix_table_v2;
    /* A fork while a thread of this process sets the table up (forced: the set-up word as
     * that thread leaves it; nothing else uses the table yet): the child, which has no such
     * thread, must set it up itself, not wait for ever. */
    __atomic_store_n(&host->ready, ((uint32_t)getpid() << 2) | 1u, __ATOMIC_RELAXED);
    int code = test_reap(test_spawn(child_setup));
    if (!is_int(code, 0, "a fork during the table's set-up: the child's first wait (50 ms) times out"))
        diag("  child exit %d: 1 its wait returned other than ETIMEDOUT; 114 SIGALRM (hung)", code);
    __atomic_store_n(&host->ready, 0u, __ATOMIC_RELAXED);
    is_int((int)__atomic_load_n(&host->ready, __ATOMIC_ACQUIRE), 0,
           "before plugin A's first wait, the host's table is not set up");
    is_int(a->sem_wait_ms(&s, 50), ETIMEDOUT, "plugin A's first wait (50 ms) times out");
    is_int((int)__atomic_load_n(&host->ready, __ATOMIC_ACQUIRE), 2, "... and set up the host's table");
    ok(a->table() == host, "plugin A's table is the host's (%p, %p)", a->table(), (const void *)host);
    ok(b->table() == host, "plugin B's table is the host's (%p, %p)", b->table(), (const void *)host);
    ok(wake_crosses(a, b, "wait in A, post in B"), "a sleeper in A's wait is woken by B's post");
    is_int(dlclose(ha), 0, "dlclose(A)");
    void *again = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    if (again == NULL) {
        ok(true, "A is unloaded (dlopen RTLD_NOLOAD finds it not)");
    } else {
        skip("this C library keeps A loaded after dlclose (musl never unloads)", "A is unloaded");
        (void)dlclose(again);
    }
    static const struct plugin here = { NULL, NULL, fastsync_sem_post, NULL };
    ok(wake_crosses(b, &here, "wait in B after A's dlclose, post in the host"),
       "after dlclose(A), a sleeper in B's wait is woken by the host's post");
    /* The fork: held's bucket locked by the holder, fs's another, with a sleeper on fs. */
    fastsync_sem_init(&held, 0, 0);
    for (int i = 0; i < 4 && fs == NULL; i++) {
        fastsync_sem_init(&fss[i], 0, 0);
        if (bucket_index(&fss[i]) != bucket_index(&held)) fs = &fss[i];
    }
    if (fs == NULL) bail("four semaphores in held's bucket");
    pthread_t sl = test_thread_start(fs_sleeper, NULL);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && test_table_queued(fastsync__sem_futex(fs)) == 0) test_sleep_ns(1000000);
    pthread_t t = test_thread_start(holder_main, NULL);
    while (!atomic_load_explicit(&locked, memory_order_acquire)) test_sleep_ns(1000000);
    atomic_store_explicit(&prepare_armed, 1, memory_order_relaxed);
    code = test_reap(test_spawn(child));
    atomic_store_explicit(&prepare_armed, 0, memory_order_relaxed);
    atomic_store_explicit(&forked, 1, memory_order_release);
    if (!is_int(code, 0, "fork while a host thread holds a bucket's lock: the child's wait there times out"))
        diag("  child exit %d: 1 its wait returned other than ETIMEDOUT; 114 SIGALRM (hung)", code);
    ok(atomic_load_explicit(&prepare_posted, memory_order_relaxed),
       "a fork handler of the program's own posted a semaphore with a sleeper (a wake) before the fork");
    is_int((int)(intptr_t)test_thread_join(sl), 0, "... and its sleeper (in B's wait) returned 0");
    test_thread_join(t);
    int usable = 0;
    for (int i = 0; i < FASTSYNC__TABLE_SIZE; i++) {
        if (pthread_mutex_trylock(&host->bucket[i].lock) != 0) continue;
        (void)pthread_mutex_unlock(&host->bucket[i].lock);
        usable++;
    }
    is_int(usable, FASTSYNC__TABLE_SIZE, "after the fork, every bucket of the parent's table is unlocked");
    is_int(dlclose(hb), 0, "dlclose(B)");
    test_watchdog_stop();
    return done_testing();
}
