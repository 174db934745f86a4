/* SPDX-License-Identifier: MIT */
/* once_api: every one-time initialisation function's results and exact error codes, in one
 * thread. sizeof 4; FASTSYNC_ONCE_INIT (automatic and static) is a new once, as init(0) is;
 * init's flags (FASTSYNC_SHARED: 0 and the shared bit, or EINVAL where the backend has no
 * shared objects; anything else EINVAL); begin says 1 on a new once (the caller initialises),
 * then commit 0, and every later begin 0 without a futex call; commit and abort with no
 * initialiser running (new, or done) say EPERM and leave the word as it was; abort says 0 and
 * leaves the once new (the shared bit kept), so that the next begin says 1 again;
 * fastsync_once runs fn exactly once, with its arg, returns 0 every time, runs nothing on a
 * once that begin/commit made done, and runs fn after an abort. Private and shared.
 * Fails with: a begin that says 1 twice or 0 on a new once; a done begin that makes a futex
 * call; commit or abort that take a once nobody initialises (EPERM not given, or the word
 * changed); an abort that leaves the once done or running, or drops the shared bit;
 * fastsync_once that runs fn twice, never, or with another argument. */
#include "harness.h"

static fastsync_once_t static_once = FASTSYNC_ONCE_INIT;

static unsigned long syscalls(void) { return test_kernel_waits() + test_kernel_wakes(); }

struct calls {
    int n;        /* fn's calls */
    void *seen;   /* the argument of the last one */
};

static void fn(void *arg)
{
    struct calls *c = (struct calls *)arg;
    c->n++;
    c->seen = arg;
}

static void init_flags(void)
{
    is_int((long long)sizeof(fastsync_once_t), 4, "sizeof(fastsync_once_t) == 4");
    is_int((long long)_Alignof(fastsync_once_t), 4, "_Alignof(fastsync_once_t) == 4");
    fastsync_once_t o = FASTSYNC_ONCE_INIT;
    is_int(test_once_word(&o), 0, "FASTSYNC_ONCE_INIT: the word is 0 (new, private)");
    is_int(test_once_word(&static_once), 0, "... also as a static object");
    is_int(fastsync_once_begin(&static_once), 1, "... whose begin says 1");
    is_int(fastsync_once_commit(&static_once), 0, "... and commit 0");
    is_int(fastsync_once_begin(&static_once), 0, "... then begin 0");

    test_once_force_word(&o, FASTSYNC__ONCE_DONE);
    is_int(fastsync_once_init(&o, 0), 0, "init(0) on a done once: 0");
    is_int(test_once_word(&o), 0, "... the word is new and private again");
    int bad[] = { 2, 3, FASTSYNC_SHARED << 1, FASTSYNC_SHARED | 2, -1, 0x100, INT_MIN };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i] == FASTSYNC_SHARED) continue;
        is_int(fastsync_once_init(&o, bad[i]), EINVAL, "init(flags %#x): EINVAL", (unsigned)bad[i]);
    }
#if FASTSYNC_HAS_SHARED
    is_int(fastsync_once_init(&o, FASTSYNC_SHARED), 0, "init(FASTSYNC_SHARED): 0");
    is_int(test_once_word(&o), FASTSYNC__ONCE_SHARED, "... the word is new with the shared bit");
#else
    is_int(fastsync_once_init(&o, FASTSYNC_SHARED), EINVAL, "init(FASTSYNC_SHARED): EINVAL (no shared objects here)");
#endif
}

static void halves(const char *kind, int flags)
{
    uint32_t sh = flags ? FASTSYNC__ONCE_SHARED : 0;
    fastsync_once_t o;
    is_int(fastsync_once_init(&o, flags), 0, "%s: init 0", kind);
    unsigned long s0 = syscalls();
    is_int(fastsync_once_commit(&o), EPERM, "%s: commit on a new once: EPERM", kind);
    is_int(fastsync_once_abort(&o), EPERM, "%s: abort on a new once: EPERM", kind);
    is_int(test_once_word(&o), sh, "%s: ... the word unchanged (new)", kind);

    is_int(fastsync_once_begin(&o), 1, "%s: begin on a new once: 1 (initialise)", kind);
    is_int(test_once_word(&o), sh | FASTSYNC__ONCE_RUNNING, "%s: ... the word says running", kind);
    is_int(fastsync_once_abort(&o), 0, "%s: abort: 0", kind);
    is_int(test_once_word(&o), sh, "%s: ... the once is new again, the shared bit kept", kind);
    is_int(fastsync_once_abort(&o), EPERM, "%s: abort again: EPERM", kind);
    is_int(fastsync_once_commit(&o), EPERM, "%s: commit after the abort: EPERM", kind);
    is_int(test_once_word(&o), sh, "%s: ... the word unchanged", kind);

    is_int(fastsync_once_begin(&o), 1, "%s: begin after an abort: 1 (initialise again)", kind);
    is_int(fastsync_once_commit(&o), 0, "%s: commit: 0", kind);
    is_int(test_once_word(&o), sh | FASTSYNC__ONCE_DONE, "%s: ... the word says done, the shared bit kept", kind);
    is_int(fastsync_once_commit(&o), EPERM, "%s: commit on a done once: EPERM", kind);
    is_int(fastsync_once_abort(&o), EPERM, "%s: abort on a done once: EPERM", kind);
    is_int(test_once_word(&o), sh | FASTSYNC__ONCE_DONE, "%s: ... the word unchanged (done)", kind);
    for (int i = 0; i < 3; i++)
        is_int(fastsync_once_begin(&o), 0, "%s: begin on a done once (%d): 0", kind, i + 1);
    is_int(syscalls() - s0, 0, "%s: none of it made a futex call", kind);
}

static void once_calls(const char *kind, int flags)
{
    fastsync_once_t o;
    fastsync_once_init(&o, flags);
    struct calls c = { 0, NULL }, other = { 0, NULL };
    unsigned long s0 = syscalls();
    is_int(fastsync_once(&o, fn, &c), 0, "%s: fastsync_once on a new once: 0", kind);
    is_int(c.n, 1, "%s: ... fn ran once", kind);
    ok(c.seen == &c, "%s: ... with its argument", kind);
    is_int(test_once_state(&o), FASTSYNC__ONCE_DONE, "%s: ... and the once is done", kind);
    for (int i = 0; i < 3; i++) is_int(fastsync_once(&o, fn, &c), 0, "%s: fastsync_once again (%d): 0", kind, i + 1);
    is_int(fastsync_once(&o, fn, &other), 0, "%s: ... and with another argument: 0", kind);
    is_int(c.n + other.n, 1, "%s: ... fn ran once in all", kind);
    is_int(fastsync_once_begin(&o), 0, "%s: begin on it: 0", kind);

    /* a once made done by begin/commit: fastsync_once runs nothing */
    fastsync_once_init(&o, flags);
    is_int(fastsync_once_begin(&o), 1, "%s: begin: 1", kind);
    is_int(fastsync_once_commit(&o), 0, "%s: commit: 0", kind);
    c.n = 0;
    is_int(fastsync_once(&o, fn, &c), 0, "%s: fastsync_once on a once that commit made done: 0", kind);
    is_int(c.n, 0, "%s: ... fn not run", kind);

    /* an aborted initialisation: fastsync_once runs fn */
    fastsync_once_init(&o, flags);
    is_int(fastsync_once_begin(&o), 1, "%s: begin: 1", kind);
    is_int(fastsync_once_abort(&o), 0, "%s: abort: 0", kind);
    c.n = 0;
    c.seen = NULL;
    is_int(fastsync_once(&o, fn, &c), 0, "%s: fastsync_once after an abort: 0", kind);
    ok(c.n == 1 && c.seen == &c, "%s: ... fn ran once, with its argument", kind);
    is_int(syscalls() - s0, 0, "%s: none of it made a futex call", kind);
}

static void dump(void *unused)
{
    (void)unused;
    test_dump_once("static once", &static_once);
}

int main(void)
{
    test_init();
    test_watchdog_start(dump, NULL); /* a begin that sleeps on its own initialisation hangs */
    init_flags();
    halves("private", 0);
    once_calls("private", 0);
#if FASTSYNC_HAS_SHARED
    halves("shared", FASTSYNC_SHARED);
    once_calls("shared", FASTSYNC_SHARED);
#else
    skip("the backend has no shared objects", "shared: the same as private");
#endif
    test_watchdog_stop();
    return done_testing();
}
