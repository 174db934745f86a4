/* SPDX-License-Identifier: MIT */
/* posix_fork_table: after fork, the POSIX backend's wait table (forced here, whatever the
 * build's backend) holds none of the parent's sleepers (issue 17, item 2). A parent thread
 * T sleeps in fastsync_sem_wait on a private semaphore s (value 0), queued in the table;
 * then the main thread forks. The child's table must have no node at all, and a post there
 * (s's copy still counts T, so the post makes a wake) must leave its token for the child to
 * take. Before the fix the child's bucket still linked T's node, a thread the child does
 * not have: the post's wake picked it (oldest first), so a waiter of the child's own would
 * sleep on with the token in the word, and the wake signalled the condition variable on
 * T's stack (the child died of SIGSEGV there). Then the parent posts s and T returns. */
#define FASTSYNC_BACKEND_POSIX 1
#include "harness.h"

static fastsync_sem_t s;

/* The nodes queued in the table in the bucket of s's futex word. */
static int queued(void) { return test_table_queued(fastsync__sem_futex(&s)); }

static void *parent_sleeper(void *unused)
{
    (void)unused;
    return (void *)(intptr_t)fastsync_sem_wait(&s);
}

/* The child (no thread of its own: qemu-user and ThreadSanitizer cannot start one in the
 * child of a multi-threaded fork): 0 all good; 1 its table held a node at the start; 2 its
 * post left no token to take. */
static int child(void)
{
    int ghosts = queued();
    fastsync_sem_post(&s); /* s's copy counts T, a waiter the child does not have: one wake */
    int r = fastsync_sem_trywait(&s);
    printf("# child: %d node(s) in its table at the start; after its post, trywait %d\n", ghosts, r);
    fflush(stdout);
    if (ghosts != 0) return 1;
    return r != 0 ? 2 : 0;
}

int main(void)
{
    test_init();
    test_watchdog_start(NULL, NULL);
    if (fastsync_sem_init(&s, 0, 0) != 0) bail("sem_init");
    pthread_t t = test_thread_start(parent_sleeper, NULL);
    int64_t until = test_clock_ns(CLOCK_MONOTONIC) + 5000000000;
    while (queued() < 1 && test_clock_ns(CLOCK_MONOTONIC) < until) test_sleep_ns(1000000);
    if (!ok(queued() == 1, "the parent's sleeper is queued in the table")) bail("no sleeper");
    int code = test_reap(test_spawn(child));
    if (!is_int(code, 0, "the child's table starts empty, and a post there leaves its token"))
        diag("  child exit %d: 1 a parent's node in its table; 2 no token after its post; 100 + n: signal n", code);
    fastsync_sem_post(&s);
    is_int((int)(intptr_t)test_thread_join(t), 0, "the parent's sleeper returns 0 after the parent's post");
    is_int(queued(), 0, "the parent's table is empty at the end");
    is_int(fastsync_sem_destroy(&s), 0, "the semaphore: no waiter left");
    test_watchdog_stop();
    return done_testing();
}
