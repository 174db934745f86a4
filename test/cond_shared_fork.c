/* SPDX-License-Identifier: MIT */
/* cond_shared_fork: a FASTSYNC_SHARED condvar with a FASTSYNC_SHARED mutex in MAP_SHARED |
 * MAP_ANONYMOUS memory works across fork.
 *   turns:    parent and child take turns on a plain counter in the shared page, each
 *             waiting on the one condvar (wait, or a far timedwait every other time) until
 *             the counter's parity is its own, then adding one and signalling: 2 x ROUNDS
 *             turns, the counter exact; spread over the CPUs and pinned to one;
 *   ticket:   the child takes a ticket and awaits it (no mutex: a seq_cst flag); the parent
 *             sees the ticket registered, sets the flag and signals: the child's await
 *             returns 0 and it exits with 0; no ticket is left.
 * Every child's exit status is checked; the watchdog kills a hung child. */
#include "harness.h"

#include <sys/mman.h>

#define ROUNDS 5000

struct shm {
    fastsync_mutex_t m;
    fastsync_cond_t c;
    unsigned long counter; /* plain: under m */
    _Atomic(int) flag;
};

static struct shm *sh;

static void dump(void *unused)
{
    (void)unused;
    test_dump_mutex("mutex", &sh->m);
    test_dump_cond("condvar", &sh->c);
    diag("counter %lu (a snapshot)", sh->counter);
    test_kill_child();
}

/* Takes the turns of parity `me`: 0 or a bit per kind of error. */
static int take_turns(unsigned long me)
{
    int errors = 0;
    for (unsigned long i = 0; i < ROUNDS; i++) {
        if (fastsync_mutex_lock(&sh->m) != 0) errors |= 1;
        while (sh->counter % 2 != me) {
            int r;
            if (i % 2) {
                struct timespec far = fastsync_deadline_in(3600 * 1000000000ull);
                r = fastsync_cond_timedwait(&sh->c, &sh->m, &far);
            } else {
                r = fastsync_cond_wait(&sh->c, &sh->m);
            }
            if (r != 0) errors |= 2;
        }
        sh->counter++;
        if (fastsync_mutex_unlock(&sh->m) != 0) errors |= 4;
        fastsync_cond_signal(&sh->c);
    }
    return errors;
}

static int child_turns(void) { return take_turns(1); }

static int child_ticket(void)
{
    fastsync_cond_ticket_t t;
    if (fastsync_cond_register(&sh->c, &t) != 0) return 1;
    if (atomic_load(&sh->flag)) return 2; /* the parent waits for the ticket first */
    return fastsync_cond_await(&sh->c, &t) == 0 && atomic_load(&sh->flag) ? 0 : 3;
}

static void turns(const char *name, bool pinned)
{
    test_pin_all(pinned); /* the child inherits the affinity */
    sh->counter = 0;
    pid_t pid = test_spawn(child_turns);
    int errors = take_turns(0);
    is_int(test_reap(pid), 0, "turns %s: the child exited with 0 (its calls returned 0)", name);
    is_int(errors, 0, "turns %s: the parent's calls returned 0", name);
    is_int(sh->counter, 2 * ROUNDS, "turns %s: counter == 2 x %d", name, ROUNDS);
    is_int(test_cond_left(&sh->c), 0, "turns %s: no ticket, no signal left", name);
}

int main(void)
{
    test_init();
    if (!FASTSYNC_HAS_SHARED) skip_all("the " FASTSYNC_BACKEND " backend has no FASTSYNC_SHARED objects");
    sh = (struct shm *)mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) bail("mmap: %s", strerror(errno));
    is_int(fastsync_mutex_init(&sh->m, FASTSYNC_SHARED), 0, "mutex init, FASTSYNC_SHARED");
    is_int(fastsync_cond_init(&sh->c, FASTSYNC_SHARED), 0, "condvar init, FASTSYNC_SHARED");
    test_watchdog_start(dump, NULL);

    turns("spread", false);
    turns("pinned", true);
    test_pin_all(false);

    pid_t pid = test_spawn(child_ticket);
    uint64_t end = test_limit_end(5000);
    while (test_cond_waiters(&sh->c) != 1 && test_box_open(end)) test_sleep_ns(100000);
    is_int(test_cond_waiters(&sh->c), 1, "ticket: the child's ticket is registered");
    test_sleep_ns(20000000); /* let it sleep */
    atomic_store(&sh->flag, 1);
    fastsync_cond_signal(&sh->c);
    is_int(test_reap(pid), 0, "ticket: the child's await returned 0 and it exited with 0");
    is_int(fastsync_cond_destroy(&sh->c), 0, "ticket: no ticket left, destroy says 0");

    test_watchdog_stop();
    munmap(sh, sizeof *sh);
    return done_testing();
}
