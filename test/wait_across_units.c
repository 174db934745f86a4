/* SPDX-License-Identifier: MIT */
/* wait_across_units: a thread asleep in a wait compiled in one translation unit is woken by
 * a post or set compiled in another (wait_across_units_peer.c, which includes fastsync.h
 * like any user file), both ways, for the semaphore and the event. The library is a header:
 * on the Linux and OS/2 backends the kernel's queue is the meeting point; on the POSIX
 * backend it is the wait table, which must be one per process, not one per file. With two
 * tables the sleeper (an untimed wait) would sleep on: the test gives it 5 s, then wakes it
 * from its own file and fails.
 * The waker acts once the sleeper has registered and, 100 ms later, is asleep: a waker that
 * came first would only show that the word changed, which any table sees.
 * Built twice: with the peer in C, and (wait_across_units_cxx, -DPEER_CXX) with the same peer
 * compiled as C++11, where the objects are std::atomic: then the layouts and the peer's static
 * initializers are checked too, so that a C library and a C++ program can share objects. */
#include "harness.h"

#include "wait_across_units.h"

#if defined(PEER_CXX)
#define PEER "the C++ peer"
#else
#define PEER "the peer"
#endif

enum { SEM_HERE, SEM_PEER, EVENT_HERE, EVENT_PEER };
static const char *const kind_name[] = {
    "semaphore, wait here, post in " PEER, "semaphore, wait in " PEER ", post here",
    "event, wait here, set in " PEER, "event, wait in " PEER ", set here",
};

struct sleeper {
    int kind;
    fastsync_sem_t *s;
    fastsync_event_t *e;
    _Atomic(int) done;
};

static void *sleeper_main(void *p)
{
    struct sleeper *z = (struct sleeper *)p;
    switch (z->kind) {
    case SEM_HERE: fastsync_sem_wait(z->s); break;
    case SEM_PEER: peer_sem_wait(z->s); break;
    case EVENT_HERE: fastsync_event_wait(z->e); break;
    default: peer_event_wait(z->e); break;
    }
    /* relaxed: only whether it returned; join orders the rest */
    atomic_store_explicit(&z->done, 1, memory_order_relaxed);
    return NULL;
}

static void dump(void *unused) { (void)unused; }

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL);
    /* Files built over two backends never meet (a futex and a table, say): every file of a
     * program must use one. A build that compiled the peer otherwise (C flags given to C only,
     * not to C++) stops here rather than in five seconds of sleep. */
    if (!ok(strcmp(peer_backend(), FASTSYNC_BACKEND) == 0, "backend %s here, %s in " PEER,
            FASTSYNC_BACKEND, peer_backend()))
        bail("build both files with the same backend");
#if defined(FASTSYNC_BACKEND_POSIX)
    ok(peer_table() == (const void *)&fastsync__posix_table_v2,
       "the POSIX backend's wait table is the same object in both files");
#endif
    size_t lay[4];
    peer_layout(lay);
    ok(lay[0] == sizeof(fastsync_sem_t) && lay[1] == _Alignof(fastsync_sem_t),
       "fastsync_sem_t: size %zu, alignment %zu here and in " PEER, lay[0], lay[1]);
    ok(lay[2] == sizeof(fastsync_event_t) && lay[3] == _Alignof(fastsync_event_t),
       "fastsync_event_t: size %zu, alignment %zu here and in " PEER, lay[2], lay[3]);
    is_int(fastsync_sem_getvalue(peer_static_sem()), 3, "FASTSYNC_SEM_INIT(3) in " PEER ": 3 here");
    is_int(fastsync_sem_trywait(peer_static_sem()), 0, "... a token taken here");
    ok(fastsync_event_is_set(peer_static_event()), "FASTSYNC_EVENT_INIT(true) in " PEER ": set here");
    for (int kind = SEM_HERE; kind <= EVENT_PEER; kind++) {
        fastsync_sem_t s;
        fastsync_event_t e;
        fastsync_sem_init(&s, 0, 0);
        fastsync_event_init(&e, false, 0);
        unsigned long w0 = test_kernel_waits();
        struct sleeper z = { kind, &s, &e, 0 };
        pthread_t t = test_thread_start(sleeper_main, &z);
        uint64_t end = test_limit_end(5000);
        if (kind == SEM_HERE || kind == SEM_PEER) {
            while (test_box_open(end) && test_sem_waiters(&s) == 0) test_sleep_ns(1000000);
        } else if (kind == EVENT_HERE) {
            while (test_box_open(end) && !test_event_asleep(&e, 1, w0)) test_sleep_ns(1000000);
        } else {
            /* the peer's waits are not counted (w0 - 1 asks the word only): the word shows
             * the sleeper there (Linux, POSIX: BUSY, written just before it sleeps; OS/2:
             * joined) */
            while (test_box_open(end) && !test_event_asleep(&e, 1, w0 - 1)) test_sleep_ns(1000000);
        }
        test_sleep_ns(100000000);
        switch (kind) {
        case SEM_HERE: peer_sem_post(&s); break;
        case SEM_PEER: fastsync_sem_post(&s); break;
        case EVENT_HERE: peer_event_set(&e); break;
        default: fastsync_event_set(&e); break;
        }
        end = test_limit_end(5000);
        /* relaxed: a flag; join orders the rest */
        while (test_box_open(end) && !atomic_load_explicit(&z.done, memory_order_relaxed)) test_sleep_ns(1000000);
        bool woke = atomic_load_explicit(&z.done, memory_order_relaxed);
        ok(woke, "%s: the sleeper woke", kind_name[kind]);
        if (!woke) { /* the wake went elsewhere: wake it from its own file, to end the test */
            if (kind == SEM_HERE) fastsync_sem_post(&s);
            else if (kind == SEM_PEER) peer_sem_post(&s);
            else if (kind == EVENT_HERE) fastsync_event_set(&e);
            else peer_event_set(&e);
        }
        test_thread_join(t);
        is_int(fastsync_sem_destroy(&s), 0, "%s: nothing left registered", kind_name[kind]);
        fastsync_event_destroy(&e);
    }
    test_watchdog_stop();
    return done_testing();
}
