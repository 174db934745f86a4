/* SPDX-License-Identifier: MIT */
/* cancel_in_handler: what the manual says of a signal handler that runs while a thread
 * sleeps in a wait and is cancelled there (issue 17, item 8). W sleeps in fastsync_sem_wait
 * on s1; a signal interrupts it, and its handler posts s2, on which Q sleeps. The post's
 * wake is held in the replaceable wake (after the post's RMW, before its FUTEX_WAKE) until
 * W has been cancelled, so the cancel arrives exactly between the two.
 *   plain: the handler runs with asynchronous cancellation (the Linux backend's window
 *          around its futex call), and the cancel acts inside the post: the wake is never
 *          made, Q sleeps on with the token in s2's word (the manual's warning; then the
 *          test posts again to release Q).
 *   remedy: the handler disables cancellation around its post (as the manual says to):
 *          the wake is made, Q returns with the token, and the cancel acts after the
 *          handler, at W's wait, whose cleanup leaves nothing registered on s1.
 * Both ways W ends cancelled. The Linux backend only (the POSIX backend sleeps in the C
 * library's own pthread_cond_wait; Windows and OS/2 have no cancellation); not under
 * ThreadSanitizer, which defers signal handlers to its own points. */
#include "harness.h"

#include <signal.h>

#if defined(FASTSYNC_BACKEND_LINUX) && FASTSYNC__CANCEL && !defined(TEST_TSAN)
static fastsync_sem_t s1, s2;
static bool remedy;
static _Atomic(int) armed, in_window, cancel_sent, handler_type, post_returned;
static _Atomic(int) w_tid, q_tid; /* W's and Q's threads, for /proc (seq_cst: polled ids) */

static void on_signal(int sig)
{
    (void)sig;
    int state = PTHREAD_CANCEL_ENABLE, type;
    if (remedy) (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
    /* the handler's cancellation type, as it found it (set back at once) */
    (void)pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
    (void)pthread_setcanceltype(type, &type);
    /* relaxed (these flags): read after W is joined, which orders them */
    atomic_store_explicit(&handler_type, type == PTHREAD_CANCEL_ASYNCHRONOUS ? 2 : 1, memory_order_relaxed);
    (void)fastsync_sem_post(&s2);
    atomic_store_explicit(&post_returned, 1, memory_order_relaxed);
    if (remedy) (void)pthread_setcancelstate(state, &state);
}

/* The post's wake, held until W has been cancelled (50 ms after the cancel was sent). */
static void held_wake(void *word, int n, int shared)
{
    if (word == (void *)fastsync__sem_futex(&s2) && atomic_exchange(&armed, 0)) {
        /* release / acquire: pair with main's loads and stores of the two flags */
        atomic_store_explicit(&in_window, 1, memory_order_release);
        while (!atomic_load_explicit(&cancel_sent, memory_order_acquire)) test_sleep_ns(1000000);
        test_sleep_ns(50000000);
    }
    fastsync__wake_sys(word, n, shared);
}

static int wait_s1(int kind)
{
    (void)kind;
    atomic_store(&w_tid, test_tid());
    return fastsync_sem_wait(&s1);
}

static void *q_main(void *unused)
{
    (void)unused;
    atomic_store(&q_tid, test_tid());
    return (void *)(intptr_t)fastsync_sem_wait(&s2);
}

static void one_case(bool with_remedy)
{
    const char *name = with_remedy ? "remedy" : "plain";
    remedy = with_remedy;
    fastsync_sem_init(&s1, 0, 0);
    fastsync_sem_init(&s2, 0, 0);
    atomic_store(&in_window, 0);
    atomic_store(&cancel_sent, 0);
    atomic_store(&handler_type, 0);
    atomic_store(&post_returned, 0);
    atomic_store(&w_tid, 0);
    atomic_store(&q_tid, 0);
    pthread_t q = test_thread_start(q_main, NULL);
    struct test_cwaiter w;
    test_cwaiter_start(&w, wait_s1, 0, false, false);
    uint64_t end = test_limit_end(5000);
    while (test_box_open(end) && (test_sem_waiters(&s1) == 0 || test_sem_waiters(&s2) == 0))
        test_sleep_ns(1000000);
    /* Both asleep in the kernel, read so in /proc (registered, and their only sleep is the
     * futex call): W inside the backend's window of asynchronous cancellation, Q where the
     * post's RMW cannot reach it without the wake. (A 50 ms pause, before issue 32: on a
     * loaded machine W could still be on its way, its handler finding deferred
     * cancellation, and Q could see the token and take it.) */
    ok(test_until_asleep(atomic_load(&w_tid), 50000000) && test_until_asleep(atomic_load(&q_tid), 50000000),
       "%s: W and Q asleep in their futex waits", name);
    atomic_store(&armed, 1);
    (void)pthread_kill(w.thread, SIGUSR1);
    end = test_limit_end(5000);
    while (test_box_open(end) && !atomic_load_explicit(&in_window, memory_order_acquire))
        test_sleep_ns(1000000);
    if (!ok(atomic_load(&in_window), "%s: the handler's post reached its wake", name)) bail("no post");
    is_int(pthread_cancel(w.thread), 0, "%s: W cancelled between the post's RMW and its wake", name);
    atomic_store_explicit(&cancel_sent, 1, memory_order_release);
    void *wr = test_thread_join(w.thread);
    ok(wr == PTHREAD_CANCELED, "%s: W ends cancelled", name);
    is_int(atomic_load_explicit(&handler_type, memory_order_relaxed), 2,
           "%s: the handler found asynchronous cancellation on (2; 1 deferred)", name);
    is_int(test_sem_waiters(&s1), 0, "%s: W's cleanup left nothing registered on s1", name);
    if (with_remedy) {
        ok(atomic_load_explicit(&post_returned, memory_order_relaxed), "remedy: the handler's post returned");
        is_int((int)(intptr_t)test_thread_join(q), 0, "remedy: Q returned 0 (the post's wake was made)");
        is_int((int)fastsync__sem_tokens(test_sem_word(&s2)), 0, "remedy: Q took the token");
    } else {
        ok(!atomic_load_explicit(&post_returned, memory_order_relaxed),
           "plain: the cancel acted inside the handler's post (it never returned)");
        test_sleep_ns(200000000);
        ok(test_sem_waiters(&s2) == 1 && fastsync__sem_tokens(test_sem_word(&s2)) == 1,
           "plain: 200 ms later Q still sleeps, the token in s2's word (waiters %" PRIu32 ", tokens %" PRIu32 ")",
           test_sem_waiters(&s2), fastsync__sem_tokens(test_sem_word(&s2)));
        (void)fastsync_sem_post(&s2); /* a second post: its wake releases Q */
        is_int((int)(intptr_t)test_thread_join(q), 0, "plain: a second post releases Q");
    }
    is_int(fastsync_sem_destroy(&s1), 0, "%s: s1 destroyed", name);
    is_int(fastsync_sem_destroy(&s2), 0, "%s: s2 destroyed", name);
}

int main(void)
{
    test_init();
    test_watchdog_start(NULL, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: the futex call returns EINTR after it */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0) bail("sigaction");
    test_wake_override = held_wake;
    test_wait_override = fastsync__wait_sys;
    one_case(false);
    one_case(true);
    test_watchdog_stop();
    return done_testing();
}
#else
int main(void)
{
#if defined(TEST_TSAN)
    skip_all("ThreadSanitizer defers signal handlers to its own points: no handler runs inside the sleep");
#else
    skip_all("the Linux backend's cancellation window only (the POSIX backend sleeps in the C library's pthread_cond_wait; Windows and OS/2 have no cancellation)");
#endif
    return 0;
}
#endif
