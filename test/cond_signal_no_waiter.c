/* SPDX-License-Identifier: MIT */
/* cond_signal_no_waiter: signal and broadcast with no ticket registered write nothing and
 * make no syscall: a million of each on a condvar with no waiter, with the wakes counted
 * through the harness's futex layer and the word compared before and after; where there is
 * mmap (not Windows) the condvar sits in a page made read-only, so a write would fault. The
 * same when every registered ticket is already owed a signal (W == P): one registered
 * ticket, one signal (one wake), then a million more signals make no wake and leave the word
 * as it was. */
#include "harness.h"
#if !defined(_WIN32)
#include <sys/mman.h>
#endif

enum { CALLS = 1000000 };

int main(void)
{
    test_init();
    fastsync_cond_t *c;
#if !defined(_WIN32)
    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) bail("mmap: %s", strerror(errno));
    c = (fastsync_cond_t *)p;
#else
    static fastsync_cond_t cv;
    c = &cv;
#endif
    fastsync_cond_init(c, 0);
    /* a condvar that has seen a signal: seq 1, no ticket */
    fastsync_cond_ticket_t t;
    fastsync_cond_register(c, &t);
    fastsync_cond_signal(c);
    fastsync_cond_await(c, &t);
    uint64_t before = test_cond_word(c);
#if !defined(_WIN32)
    if (mprotect(p, (size_t)page, PROT_READ) != 0) bail("mprotect: %s", strerror(errno));
#endif
    unsigned long k0 = test_kernel_wakes();
    for (int i = 0; i < CALLS; i++) {
        fastsync_cond_signal(c);
        fastsync_cond_broadcast(c);
    }
    is_int(test_kernel_wakes() - k0, 0, "no waiter: %d signals and broadcasts, no wake", CALLS);
    ok(test_cond_word(c) == before, "... the word unchanged%s",
#if !defined(_WIN32)
       " (and never written: the page is read-only)"
#else
       ""
#endif
    );
#if !defined(_WIN32)
    mprotect(p, (size_t)page, PROT_READ | PROT_WRITE);
#endif

    fastsync_cond_register(c, &t);
    k0 = test_kernel_wakes();
    fastsync_cond_signal(c);
    is_int(test_kernel_wakes() - k0, 1, "one ticket: the first signal makes one wake");
    before = test_cond_word(c);
#if !defined(_WIN32)
    mprotect(p, (size_t)page, PROT_READ);
#endif
    for (int i = 0; i < CALLS; i++) {
        fastsync_cond_signal(c);
        fastsync_cond_broadcast(c);
    }
    is_int(test_kernel_wakes() - k0, 1, "... then %d signals and broadcasts with it owed one: no wake", CALLS);
    ok(test_cond_word(c) == before, "... the word unchanged");
#if !defined(_WIN32)
    mprotect(p, (size_t)page, PROT_READ | PROT_WRITE);
#endif
    is_int(fastsync_cond_await(c, &t), 0, "the ticket takes its one signal");
    is_int(test_cond_left(c), 0, "no ticket, no signal left");
    return done_testing();
}
