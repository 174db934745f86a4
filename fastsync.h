/* SPDX-License-Identifier: MIT */
/* fastsync.h - fast semaphore, manual-reset event, mutex, reader-writer lock, condition
 * variable, one-time initialisation, latch and barrier on C11 atomics and wait-on-address.
 *
 * One header, no library to link, no allocation, no global state. Copy it into a project
 * (or use it as the meson subproject `fastsync`). Every function stays in user space
 * unless a thread really has to sleep or be woken.
 *
 *   #include "fastsync.h"
 *   static fastsync_sem_t items = FASTSYNC_SEM_INIT(0);
 *   void produce(void) { push_item(); fastsync_sem_post(&items); }  // no syscall unless a
 *   void consume(void) { fastsync_sem_wait(&items); pop_item(); }   // consumer sleeps
 *
 * Build: cc -std=c11 -pthread (the waits are cancellation points: pthread_setcanceltype,
 * which glibc before 2.34 keeps in libpthread).
 * Supported: Linux >= 2.6.29 (FUTEX_WAIT_BITSET) with glibc or musl, on any CPU with
 * lock-free 64-bit atomics (x86-64, i686, AArch64, ARMv7, RISC-V 64, POWER, s390x); gcc >= 7,
 * clang >= 6, g++/clang++ as C++11 or later (std::atomic, same object layout as C). Windows
 * 8 and later with mingw-w64 gcc (nothing to link: no -pthread, no synchronization.lib).
 * Other POSIX systems (macOS, the BSDs) through the POSIX backend. OS/2 (GCC with kLIBC,
 * OpenWatcom -za99) through the OS/2 backend, fastsync_os2.h, which this header includes.
 *
 * Backends (below the seam; see "The seam" and the top of the code). One is chosen at compile
 * time; FASTSYNC_BACKEND names it, FASTSYNC_HAS_SHARED says whether it has FASTSYNC_SHARED:
 *   FASTSYNC_BACKEND_LINUX  "linux"  futex(2). Shared: yes. Clocks: MONOTONIC, REALTIME.
 *                           wait_any: futex_waitv (5.16+; before, slices). The default on
 *                           Linux.
 *   FASTSYNC_BACKEND_POSIX  "posix"  a wait table on pthread mutexes and condition
 *                           variables, one per process (a weak definition: nothing to link
 *                           or define). Shared: no, init says EINVAL (the table is in one
 *                           process). Clocks: MONOTONIC, REALTIME (slept on in slices of at
 *                           most 2 s timed on MONOTONIC; on macOS on REALTIME). Signals
 *                           never interrupt its sleep. A fork's child starts with an empty
 *                           table. The default on other POSIX systems; define it to use it
 *                           on Linux.
 *   FASTSYNC_BACKEND_WINDOWS "windows" WaitOnAddress, WakeByAddressSingle/All, looked up
 *                           at first use. Shared: no, init says EINVAL (WaitOnAddress is
 *                           process-private). Clocks: MONOTONIC (QueryPerformanceCounter),
 *                           REALTIME (GetSystemTimePreciseAsFileTime, since 1970); slept on
 *                           in whole ms rounded up, never returning early. No cancellation
 *                           points (Windows has no thread cancellation). The default on
 *                           Windows.
 *   FASTSYNC_BACKEND_OS2    "os2"    fastsync_os2.h: a wait table on OS/2 semaphores, one
 *                           for the system, in named shared memory (its manual is at its
 *                           top). Shared: yes (in memory OS/2 maps at the same address in
 *                           every process). Clocks: MONOTONIC, REALTIME. No cancellation
 *                           points. Without <stdatomic.h> (OpenWatcom) every atomic
 *                           operation runs under the table's locks. Always, and only, on OS/2.
 * The guarantees below hold on each; "FUTEX_WAKE" and "syscall" then mean the backend's wake
 * and its sleeping call. wait_any sleeps in slices on all but Linux (no multi-wait). Tested
 * on x86-64 (glibc and musl), and under qemu-user on i386 (32- and 64-bit time_t), AArch64,
 * ARMv7, RISC-V 64, ppc64le and s390x; Windows x86-64 under wine; see README.md. CMake: the
 * target fastsync::fastsync (CMakeLists.txt).
 *
 * Version: FASTSYNC_VERSION_MAJOR, _MINOR, _PATCH (below). The objects' words are an ABI:
 * between processes that share FASTSYNC_SHARED objects, and between components built with
 * different copies of the header that pass objects to each other. Their encoding changes
 * only with the major version (before 1.0: with the minor version).
 *
 * ---------------------------------------------------------------------------------------
 * API  (0 or a positive errno value; nothing touches errno; no function ever aborts; truth
 *   values are _Bool, bool in C++: the header includes no <stdbool.h> and defines no bool)
 *
 * Semaphore, waiter-counting: a post makes a FUTEX_WAKE only when a waiter is registered.
 *   int  fastsync_sem_init(fastsync_sem_t *s, unsigned value, int flags);
 *            EINVAL: value > FASTSYNC_SEM_VALUE_MAX, or flags other than FASTSYNC_SHARED
 *   int  fastsync_sem_destroy(fastsync_sem_t *s);          EBUSY while a waiter is registered
 *   int  fastsync_sem_post(fastsync_sem_t *s);             EOVERFLOW at the max, value unchanged
 *   int  fastsync_sem_post_n(fastsync_sem_t *s, unsigned n);  all n or nothing (EOVERFLOW)
 *   int  fastsync_sem_wait(fastsync_sem_t *s);             always 0
 *   int  fastsync_sem_trywait(fastsync_sem_t *s);          EAGAIN when 0; never spuriously
 *   int  fastsync_sem_timedwait(fastsync_sem_t *s, const struct timespec *abs_monotonic);
 *   int  fastsync_sem_clockwait(fastsync_sem_t *s, clockid_t clock, const struct timespec *abs);
 *   unsigned fastsync_sem_getvalue(const fastsync_sem_t *s);  a snapshot, no ordering
 *   FASTSYNC_SEM_INIT(n)  static initializer (process-private); FASTSYNC_SEM_VALUE_MAX = INT_MAX.
 *            n must be an integer constant in 0..FASTSYNC_SEM_VALUE_MAX: anything else does
 *            not compile (a value from a variable goes through fastsync_sem_init)
 *
 * Manual-reset event (QemuEvent style): set / reset / wait on one 32-bit futex word.
 *   int  fastsync_event_init(fastsync_event_t *e, _Bool set, int flags);  EINVAL: bad flags
 *   int  fastsync_event_destroy(fastsync_event_t *e);      always 0; the event may be freed
 *            once every wait on it has returned (a set touches it only up to its RMW: a
 *            waiter it woke may free it while the set is still in its wake; a waiter still
 *            inside its wait, woken or not, still reads the word)
 *   void fastsync_event_set(fastsync_event_t *e);          wakes every waiter
 *   void fastsync_event_reset(fastsync_event_t *e);
 *   _Bool fastsync_event_is_set(const fastsync_event_t *e);
 *   void fastsync_event_wait(fastsync_event_t *e);
 *   int  fastsync_event_timedwait(fastsync_event_t *e, const struct timespec *abs_monotonic);
 *   int  fastsync_event_clockwait(fastsync_event_t *e, clockid_t clock, const struct timespec *abs);
 *   FASTSYNC_EVENT_INIT(set)  static initializer (process-private)
 *   Intended use:  for (;;) { fastsync_event_reset(&e); if (cond()) break; fastsync_event_wait(&e); }
 *   That loop is for one thread that resets. With several, one's reset can undo a set that
 *   another has not seen yet (B resets after the set; A, between its check and its wait,
 *   then sleeps with cond() true): reset only in the critical section that found cond()
 *   false, under the lock that guards it, and set after publishing under that lock
 *   (examples/worker_pool.c); or let one thread alone reset.
 *
 * Mutex, 4 bytes: a lock is one CAS (a FASTSYNC_SHARED mutex's two, see Guarantees), an unlock
 * one CAS and a FUTEX_WAKE only when a thread may sleep. The owner is not recorded (see the
 * mutex section for what that rules out).
 *   int  fastsync_mutex_init(fastsync_mutex_t *m, int flags);        EINVAL: bad flags
 *   int  fastsync_mutex_destroy(fastsync_mutex_t *m);                EBUSY while locked
 *   int  fastsync_mutex_lock(fastsync_mutex_t *m);                   always 0
 *   int  fastsync_mutex_trylock(fastsync_mutex_t *m);                EBUSY when locked; never spuriously
 *   int  fastsync_mutex_timedlock(fastsync_mutex_t *m, const struct timespec *abs_monotonic);
 *   int  fastsync_mutex_clocklock(fastsync_mutex_t *m, clockid_t clock, const struct timespec *abs);
 *   int  fastsync_mutex_unlock(fastsync_mutex_t *m);                 EPERM if it was not locked
 *   FASTSYNC_MUTEX_INIT  static initializer (process-private)
 *   Not a cancellation point (as pthread_mutex_lock); a thread that locks a mutex it holds
 *   deadlocks (a timed lock times out); any thread may unlock. Starvation-free: a sleeper
 *   that has waited FASTSYNC_MUTEX_HANDOFF_NS (1 ms) is handed the lock (mutex section,
 *   "Fairness").
 *
 * Reader-writer lock, 8 bytes, writers first: once a writer waits (registered, after its
 * bounded spin), new readers wait behind it, so a stream of readers does not starve a
 * writer; and starvation-free: a reader or writer that has waited FASTSYNC_RWLOCK_HANDOFF_NS
 * (1 ms) claims the next turn, so a stream of writers does not starve readers either (the
 * section's "Fairness" gives the order waiters get and the bound). A read lock is one CAS, its unlock one more (a load before each),
 * and no syscall unless a thread must sleep; a write lock and its unlock likewise (the
 * mutex's lock is one CAS without the load).
 *   int  fastsync_rwlock_init(fastsync_rwlock_t *rw, int flags);     EINVAL: bad flags
 *   int  fastsync_rwlock_destroy(fastsync_rwlock_t *rw);
 *            EBUSY while held or a waiter is registered (a snapshot, as the others' destroy)
 *   int  fastsync_rwlock_rdlock(fastsync_rwlock_t *rw);              0 or EAGAIN
 *   int  fastsync_rwlock_tryrdlock(fastsync_rwlock_t *rw);
 *            EBUSY: a writer holds it or waits for it (where rdlock would block); never
 *            spuriously
 *   int  fastsync_rwlock_timedrdlock(fastsync_rwlock_t *rw, const struct timespec *abs_monotonic);
 *   int  fastsync_rwlock_clockrdlock(fastsync_rwlock_t *rw, clockid_t clock, const struct timespec *abs);
 *            the read locks: EAGAIN when FASTSYNC_RWLOCK_READERS_MAX (2^20 - 1, 1 048 575)
 *            read locks are held already
 *   int  fastsync_rwlock_wrlock(fastsync_rwlock_t *rw);              always 0
 *   int  fastsync_rwlock_trywrlock(fastsync_rwlock_t *rw);           EBUSY when held or handed to a
 *            waiting writer (the section's "Fairness"); never spuriously
 *   int  fastsync_rwlock_timedwrlock(fastsync_rwlock_t *rw, const struct timespec *abs_monotonic);
 *   int  fastsync_rwlock_clockwrlock(fastsync_rwlock_t *rw, clockid_t clock, const struct timespec *abs);
 *   int  fastsync_rwlock_rdunlock(fastsync_rwlock_t *rw);            EPERM if no read lock was held
 *   int  fastsync_rwlock_wrunlock(fastsync_rwlock_t *rw);            EPERM if not write-locked
 *   int  fastsync_rwlock_downgrade(fastsync_rwlock_t *rw);
 *            the write lock becomes a read lock, atomically (no writer can come in between),
 *            letting in the readers that wait, unless a writer waits too (they stay behind
 *            it); EPERM if not write-locked. Release it with rdunlock. There is no upgrade
 *            (the section says why, and what to do instead).
 *   FASTSYNC_RWLOCK_INIT  static initializer (process-private)
 *   Not a cancellation point (as pthread_rwlock_*). The owner is not recorded: a thread
 *   that locks a lock it write-holds, either way, deadlocks (a timed lock times out); one
 *   that read-locks again a lock it read-holds deadlocks if a writer started waiting in
 *   between (take it once); any thread may unlock.
 *
 * One-time initialisation, 4 bytes: once done, a call is one acquire load; the first caller
 * runs the initialiser and the others sleep until it is done (a wake only if one slept).
 *   int  fastsync_once_init(fastsync_once_t *o, int flags);          EINVAL: bad flags
 *   int  fastsync_once(fastsync_once_t *o, void (*fn)(void *), void *arg);   always 0
 *            fn(arg) in exactly one caller; every call returns after that fn has returned,
 *            and sees its writes. If fn is cancelled (a cancellation point of its own), the
 *            once is left as if never called: the next caller runs fn (wherever threads
 *            can be cancelled, FASTSYNC_NO_CANCEL too: fn runs under a cleanup handler).
 *   For an initialiser that can fail or throw, the halves:
 *   int  fastsync_once_begin(fastsync_once_t *o);
 *            1: the caller must initialise, then commit or abort; 0: done (after sleeping
 *            while another thread initialised)
 *   int  fastsync_once_commit(fastsync_once_t *o);   done: wakes the sleepers, who return 0
 *   int  fastsync_once_abort(fastsync_once_t *o);    not done: one of the sleepers (or the
 *            next caller) gets 1 and initialises (C++ call_once's rule for an exception)
 *            commit and abort: EPERM when no initialiser runs (the word unchanged)
 *   FASTSYNC_ONCE_INIT  static initializer (process-private)
 *   No destroy (nothing to release): a once may be freed once every call on it has
 *   returned. commit and abort touch it only up to their CAS, so the caller they let in may
 *   free it while the initialiser is still inside commit's wake; callers still inside begin
 *   (asleep, or woken and about to look at the word) count as calls, unlike a latch's
 *   waiters, which destroy waits for.
 *   Not a cancellation point (as pthread_once). fork while another thread initialises: the
 *   child's callers wait for good (the One-time initialisation section).
 *
 * Latch, 8 bytes: a count that threads count down and any number of threads wait for to
 * reach 0 (C++ std::latch), or, with add, a wait group (Go's sync.WaitGroup). A count_down is
 * one CAS, and makes a FUTEX_WAKE only when it opens the latch with a waiter that may be
 * asleep (one that spun and went on to sleep). A wait is two RMWs (it counts itself in
 * before it reads anything, and out before it returns), also on an open latch (trywait is
 * one load).
 *   int  fastsync_latch_init(fastsync_latch_t *l, unsigned count, int flags);
 *            EINVAL: count > FASTSYNC_LATCH_MAX (2^30 - 1), or bad flags
 *   int  fastsync_latch_destroy(fastsync_latch_t *l);
 *            EBUSY while a waiter is blocked (the count above 0); with the count 0 it waits
 *            (yielding) until every thread still inside a wait on the latch has left it,
 *            then returns 0, and the memory may be freed (EBUSY after a second in which no
 *            waiter left: one died). So destroy may be called as soon as the latch is open
 *            and no thread is blocked on it, by the thread whose count_down opened it or by
 *            any thread that saw it open, while woken waiters are still returning (C++'s
 *            rule for std::latch). A wait counts from its first access: one whose call
 *            comes after the destroy began is the caller's to order before it
 *   int  fastsync_latch_count_down(fastsync_latch_t *l, unsigned n);
 *            count -= n; EINVAL if n is above the count (nothing changes). The call uses
 *            only the latch's address after its one RMW (the wake): the thread whose
 *            count_down opened it may destroy it at once
 *   int  fastsync_latch_add(fastsync_latch_t *l, unsigned n);
 *            count += n; EOVERFLOW above FASTSYNC_LATCH_MAX; EINVAL when the count is 0 and
 *            threads are still inside waits (an add for the next use of the latch must
 *            come after every wait on the last one has returned, as Go's rule). From 0 with
 *            nobody waiting it reopens the latch
 *   int  fastsync_latch_wait(fastsync_latch_t *l);       always 0
 *   int  fastsync_latch_trywait(const fastsync_latch_t *l);   EAGAIN while the count is above 0
 *   int  fastsync_latch_timedwait(fastsync_latch_t *l, const struct timespec *abs_monotonic);
 *   int  fastsync_latch_clockwait(fastsync_latch_t *l, clockid_t clock, const struct timespec *abs);
 *            0 once the count is 0: everything the counters did before their count_down
 *            happens before the return. Waits are cancellation points (a cancelled waiter
 *            leaves); any number of threads may wait.
 *   int  fastsync_latch_arrive_and_wait(fastsync_latch_t *l, unsigned n);
 *            count_down(n), then wait (std::latch::arrive_and_wait), in one CAS: the thread
 *            counts itself in as a waiter in the RMW that counts down, so that a destroy
 *            after the opening waits for it too. 0, or EINVAL as count_down (nothing
 *            changes); n 0: a wait
 *   FASTSYNC_LATCH_INIT  static initializer: count 0 (a wait group before its first add)
 *   A latch entry for wait_any: fastsync_wait_latch (below).
 *
 * Barrier, 8 bytes: count threads meet; cyclic (pthread_barrier_t, and std::barrier's
 * split arrivals and dropping out).
 *   int  fastsync_barrier_init(fastsync_barrier_t *b, unsigned count, int flags);
 *            EINVAL: count 0 or above FASTSYNC_BARRIER_MAX (2^16 - 1), or bad flags
 *   int  fastsync_barrier_wait(fastsync_barrier_t *b);
 *            returns once count threads have called it in this round: FASTSYNC_BARRIER_SERIAL
 *            (-1, as PTHREAD_BARRIER_SERIAL_THREAD) in exactly one of them, 0 in the others;
 *            everything each did before its call happens before every return. The next
 *            round begins at once; any threads may take part in any round. Two RMWs per
 *            thread per round (a third to sleep), a FUTEX_WAKE per round only if a thread
 *            slept. Not a cancellation point (as pthread_barrier_wait). More than count
 *            arrivals in one round, or more than 2^16 - 1 threads inside the barrier's
 *            waits at once: undefined.
 *   int  fastsync_barrier_arrive(fastsync_barrier_t *b, unsigned n,
 *                                fastsync_barrier_token_t *token);
 *            n arrivals in the current round without waiting (std::barrier::arrive(n));
 *            *token names the round. FASTSYNC_BARRIER_SERIAL if they were the round's last
 *            (the round is over: this call ended it), else 0; EINVAL, nothing changed, if n
 *            is 0 or more than the round still needs. One RMW. (Rounds are numbered mod
 *            2^14: a thread kept off the CPU inside a wait while exactly k * 16384 rounds
 *            end without it, which split arrivals can do in a fraction of a millisecond,
 *            sleeps on until the next round ends.)
 *   int  fastsync_barrier_arrive_and_drop(fastsync_barrier_t *b);
 *            one arrival in the current round, and one fewer in every later round
 *            (std::barrier::arrive_and_drop): FASTSYNC_BARRIER_SERIAL or 0 as arrive;
 *            EINVAL, nothing changed, when the round needs no more arrivals. Once every
 *            thread dropped out (count 0) nobody may arrive (EINVAL; a wait: undefined).
 *   int  fastsync_barrier_wait_token(fastsync_barrier_t *b, fastsync_barrier_token_t token);
 *            returns 0 once the round `token` names has ended (at once if it has): what
 *            every arrival of that round did before it happens before the return. For a
 *            token of the current or the previous round (std::barrier::wait). Two RMWs
 *            (it counts itself in, then out, as a wait), a third to sleep. Not a
 *            cancellation point.
 *   FASTSYNC_BARRIER_INIT(count)  static initializer: fastsync_barrier_init(b, count, 0)'s
 *            object (count not checked: 1..FASTSYNC_BARRIER_MAX)
 *   int  fastsync_barrier_destroy(fastsync_barrier_t *b);
 *            EBUSY while a round is in progress (a thread has arrived); else it waits
 *            (yielding) until every thread released by any round has finished with the
 *            object, and returns 0: the memory may be freed then, as soon as any thread's
 *            last fastsync_barrier_wait has returned (EBUSY after a second in which no
 *            thread finished). A thread in wait_token is counted as a wait's from its first
 *            access on (an RMW): one whose call comes after the round's end is a call on an
 *            object that may be being destroyed, which the caller must order before the
 *            destroy (as any call). Split arrivals pending in a round make it EBUSY (the
 *            C++ barrier's destructor waits only for the threads leaving: std::barrier may
 *            be destroyed with arrivals pending and nobody blocked).
 *
 * Condition variable, 16 bytes, counters only (so FASTSYNC_SHARED works across processes):
 * with one fastsync_mutex_t (wait), or with several mutexes or none (a ticket).
 *   int  fastsync_cond_init(fastsync_cond_t *c, int flags);           EINVAL: bad flags
 *   int  fastsync_cond_destroy(fastsync_cond_t *c);
 *            EBUSY while a ticket that no signal or broadcast has called is registered; 0 at
 *            once after a broadcast (or signals that called every ticket): it waits for the
 *            released waiters to finish with the object (yielding; EBUSY after a second in
 *            which none did: one died). Then the memory may be freed.
 *   int  fastsync_cond_signal(fastsync_cond_t *c);      always 0
 *   int  fastsync_cond_broadcast(fastsync_cond_t *c);   always 0
 *   int  fastsync_cond_wait(fastsync_cond_t *c, fastsync_mutex_t *m);
 *   int  fastsync_cond_timedwait(fastsync_cond_t *c, fastsync_mutex_t *m,
 *                                const struct timespec *abs_monotonic);
 *   int  fastsync_cond_clockwait(fastsync_cond_t *c, fastsync_mutex_t *m, clockid_t clock,
 *                                const struct timespec *abs);
 *            m locked by the caller: unlocked while the thread waits, locked again before the
 *            wait returns (also with ETIMEDOUT). 0: a signal or broadcast woke it (never
 *            spuriously); ETIMEDOUT, EINVAL (the deadline, as below: returned at once, m
 *            held throughout); EPERM: m was not locked (no wait made); EAGAIN:
 *            FASTSYNC_COND_TICKETS_MAX (2047) tickets that nothing has released yet are
 *            registered already.
 *   The ticket API, for several mutexes or none:
 *   int  fastsync_cond_register(fastsync_cond_t *c, fastsync_cond_ticket_t *t);  0, EAGAIN
 *            (2047 registered). Take it before checking the predicates; then exactly one of:
 *   int  fastsync_cond_cancel(fastsync_cond_t *c, fastsync_cond_ticket_t *t);    always 0
 *            (a predicate was true: no wait; a signal t holds is passed on as the
 *            delivery rules below say)
 *   int  fastsync_cond_await(fastsync_cond_t *c, fastsync_cond_ticket_t *t);     always 0
 *   int  fastsync_cond_timedawait(fastsync_cond_t *c, fastsync_cond_ticket_t *t,
 *                                 const struct timespec *abs_monotonic);
 *   int  fastsync_cond_clockawait(fastsync_cond_t *c, fastsync_cond_ticket_t *t,
 *                                 clockid_t clock, const struct timespec *abs);
 *            0: a signal or broadcast made after t was registered woke it; ETIMEDOUT;
 *            EINVAL (the deadline: a malformed one only when t has no signal to take).
 *            Every one of them deregisters t, whatever it returns.
 *   FASTSYNC_COND_INIT  static initializer (process-private)
 *   Intended use (two queues, each with its own mutex, one consumer; producers push under
 *   their queue's mutex, unlock, then signal):
 *     for (;;) { fastsync_cond_register(&c, &t);
 *                if (take(&q1) || take(&q2)) { fastsync_cond_cancel(&c, &t); break; }
 *                fastsync_cond_await(&c, &t); }        (take locks and unlocks its queue)
 *   A predicate that no lock guards must be stored and loaded seq_cst (the Condition
 *   variable section says why); signal and broadcast may be called with or without any
 *   mutex held.
 *
 * Waiting for any of several objects: up to FASTSYNC_WAIT_ANY_MAX (64) semaphores, events,
 * latches and condition variable tickets at once; the lowest ready index wins (ready when the wait's
 * look, which reads them in index order, reaches it), and only it changes state.
 *   fastsync_wait_entry_t fastsync_wait_sem(fastsync_sem_t *s);       an entry: a token
 *   fastsync_wait_entry_t fastsync_wait_event(fastsync_event_t *e);   the event set (or set
 *                                  since the wait began); reported, not reset
 *   fastsync_wait_entry_t fastsync_wait_latch(fastsync_latch_t *l);   the count 0; reported,
 *                                  not changed
 *   fastsync_wait_entry_t fastsync_wait_ticket(fastsync_cond_t *c, fastsync_cond_ticket_t *t);
 *                                  t registered (fastsync_cond_register): a signal or
 *                                  broadcast for it, claimed as await would (t deregistered)
 *   int  fastsync_wait_any(const fastsync_wait_entry_t *list, unsigned n, unsigned *index);
 *   int  fastsync_trywait_any(list, n, index);                        EAGAIN: none ready
 *   int  fastsync_timedwait_any(list, n, index, const struct timespec *abs_monotonic);
 *   int  fastsync_clockwait_any(list, n, index, clockid_t clock, const struct timespec *abs);
 *            0 and *index: the entry that won (a token taken from that semaphore and no
 *            other; a winning ticket is deregistered, the others stay registered: await,
 *            cancel or wait on them again). ETIMEDOUT, EINVAL: the deadline as below; n 0 or
 *            above 64, a NULL list, index or object, an object named twice (two tickets of
 *            one condvar too). Never EINTR; a cancellation point like the other waits (a
 *            cancelled wait leaves the semaphores and latches it joined, its tickets stay
 *            registered). A latch entry counts the wait among the latch's waiters from its
 *            first look (as a latch wait's first access), so a destroy of the latch waits
 *            for it too.
 *            Sleeps in futex_waitv on Linux >= 5.16; elsewhere, and where that call is
 *            refused, on one object at a time in slices of 50 us to 10 ms (an object it is
 *            not asleep on is seen up to a slice late; see "Waiting for any of several
 *            objects").
 *   Intended use (a worker):  fastsync_wait_entry_t l[3] = { fastsync_wait_sem(&jobs),
 *       fastsync_wait_event(&shutdown), fastsync_wait_event(&reload) };
 *       for (unsigned i;;) { fastsync_wait_any(l, 3, &i); if (i == 0) run_job(); ... }
 *
 * Waiting on an address: the seam under every primitive above, public, for a primitive of
 * the caller's own (Zig's std.Thread.Futex, Rust's atomic-wait, C++20's atomic wait with
 * deadlines). The word is the caller's, of the primitives' atomic type:
 *   fastsync_word32_t   _Atomic(uint32_t) in C, std::atomic<uint32_t> in C++ (the same size,
 *                       4, alignment and representation: C and C++ share words); a plain
 *                       uint32_t on OS/2 without atomics (OpenWatcom), where the caller has
 *                       no atomic operations of its own to use on it
 *   int  fastsync_wait32(const fastsync_word32_t *addr, uint32_t expected, int flags);
 *   int  fastsync_timedwait32(const fastsync_word32_t *addr, uint32_t expected, int flags,
 *                             const struct timespec *abs_monotonic);
 *   int  fastsync_clockwait32(const fastsync_word32_t *addr, uint32_t expected, int flags,
 *                             clockid_t clock, const struct timespec *abs);
 *            blocks while *addr holds `expected`, until a wake on addr, the deadline, or a
 *            spurious return. 0: woken, *addr differed (at the call, without a system call
 *            when a relaxed load sees it; or at the backend's compare), or spuriously: the
 *            caller loads its word again and decides. ETIMEDOUT: the deadline has passed
 *            on its clock (never earlier). EINVAL: flags other than 0 or FASTSYNC_SHARED,
 *            or FASTSYNC_SHARED where FASTSYNC_HAS_SHARED is 0; the deadline as every
 *            clockwait's (below: a NULL one or another clock always, a tv_nsec outside
 *            [0, 1e9) only when the word holds `expected`). A deadline already past, with
 *            the word holding `expected`: ETIMEDOUT without a system call. Never EINTR (a
 *            signal is absorbed; the wait goes on to the same deadline).
 *   int  fastsync_wake32(const fastsync_word32_t *addr, unsigned n, int flags);
 *   int  fastsync_wake32_all(const fastsync_word32_t *addr, int flags);
 *            wakes up to n (all) of the threads blocked on addr. 0, or EINVAL (flags, as
 *            above: nothing done). n 0: nothing, no system call; n >= INT_MAX: all. The
 *            number woken is not returned (Windows cannot tell it). Every wake makes the
 *            backend's call (Linux: one FUTEX_WAKE system call, found waiter or not): a
 *            primitive that wants no call when nobody sleeps keeps its own waiter count
 *            or flag in the word, as the primitives above do.
 *   The contract (every backend, but where the table below says otherwise):
 *   - Compare and block are atomic with respect to a wake on the same address: if a thread
 *     stores to the word a value other than `expected` and then calls a wake, a waiter
 *     whose compare comes after the store returns without sleeping, and one asleep before
 *     it is among those the wake may wake. So a store followed by a wake is never lost,
 *     whatever the store's memory order, relaxed too (the backend orders the store
 *     before its wake's look for sleepers: the kernel's full barriers, the table's
 *     lock); a wake with no store before it may be missed by a waiter about to sleep
 *     (there is nothing it could have seen).
 *   - Returns may be spurious (0 with the word unchanged and no wake made): a signal on
 *     OS/2 (ERROR_INTERRUPT; Linux absorbs them), the slices below, a wake of a freed
 *     word's address meeting a new one (next points). So a wait is a loop:
 *       while (atomic_load_explicit(w, memory_order_acquire) == v) fastsync_wait32(w, v, 0);
 *     A timed one stops at ETIMEDOUT; calling again with the same deadline returns it at
 *     once, without a system call.
 *   - A wake of n wakes at most n of the waiters blocked on addr with the same flags
 *     (FASTSYNC_SHARED waiters and private wakes, or the reverse, never meet on Linux or
 *     OS/2: waiter and waker must agree). It wakes min(n, k) of the k threads blocked
 *     when it is made, except: a waiter between two slices of its sleep (OS/2, Windows,
 *     the Linux fallback below) is not blocked and sees the word at its next look
 *     instead; a thread whose deadline passes as the wake reaches it returns 0 (Linux,
 *     POSIX, OS/2: the wake is not lost to a timeout; Windows does not say). Which
 *     waiters are woken is not said.
 *   - Memory order: the wait's compare is a relaxed load (the kernel's; the table's under
 *     its lock), and no return is promised to synchronize with anything, not even a
 *     return for a wake (a backend may give more; nothing may rely on it). The waker
 *     stores to the word with release (or a release RMW) before the wake, and the
 *     waiter, after the wait returns, loads the word with acquire: that load, reading the
 *     value stored, is what makes the waker's earlier writes visible. The wake orders
 *     nothing by itself.
 *   - The wake never reads or writes the word: only its address counts. So the word's
 *     owner may free it as soon as it has seen the value that the wake follows, even while
 *     the wake is still being made; a wake that then lands on the address of a new word
 *     is a spurious return for that word's waiters. A wait touches the word only until it
 *     returns.
 *   - Cancellation: where the primitives' waits are (Linux, POSIX backend; not with
 *     FASTSYNC_NO_CANCEL), a wait that reaches the backend's sleep is a deferred
 *     cancellation point (a wait that returns at once makes no call and is none); a
 *     cancelled wait leaves nothing behind. Windows and OS/2: none.
 *   - Async-signal-safety: the wait, never. The wake: as the table says.
 *   Per backend:  SHARED       a wake of n wakes    spurious returns     its wake in a
 *                                                                        signal handler
 *     linux       yes (page)   min(n, blocked)      the fallback's 1 ms  yes: a raw
 *                                                   slices; reused addr  syscall, errno kept
 *     posix       EINVAL       min(n, blocked)      a reused address     no: it locks a
 *                                                                        bucket of its table
 *     windows     EINVAL       min(n, blocked): n   WaitOnAddress's      (no signals; its
 *                              WakeByAddressSingle  own; each ~1 s of    first call loads
 *                              calls, or ...All     a far deadline       the API set)
 *     os2         yes (shared  min(n, queued)       each 1 s slice;      no: it locks the
 *                 arena)                            ERROR_INTERRUPT      table
 *   Example: examples/countdown.c, a one-word countdown of the caller's own.
 *
 * Deadlines: absolute struct timespec; *_timedwait measures them on CLOCK_MONOTONIC,
 *   *_clockwait on CLOCK_MONOTONIC or CLOCK_REALTIME. (sem_timedwait measures on
 *   CLOCK_REALTIME: code ported from it calls fastsync_sem_clockwait(s, CLOCK_REALTIME, t).)
 *   struct timespec fastsync_deadline_in(uint64_t ns);  now + ns on CLOCK_MONOTONIC, saturating
 *   A NULL deadline or another clock: EINVAL, always. tv_nsec outside [0, 1e9): EINVAL, only
 *   when the call would block. A deadline already past (or tv_sec < 0): ETIMEDOUT without a
 *   syscall, but never when the semaphore, event, mutex or reader-writer lock could be
 *   taken at once. Waits never return EINTR: a signal is absorbed and the wait goes on to
 *   the same deadline.
 *
 * Cancellation: a wait that sleeps is a deferred cancellation point, as sem_wait is
 *   (glibc, musl): pthread_cancel acts while the thread sleeps, or as it is about to sleep
 *   if the cancel was pending. The cancelled semaphore waiter deregisters in a cleanup
 *   handler (destroy then says 0, and a later post makes no wake); if a post had woken it
 *   for a token it did not take, the handler wakes another sleeper instead. A cancelled
 *   event waiter leaves what a timed-out one leaves: the next set makes one FUTEX_WAKE. A
 *   cancelled condition variable waiter deregisters its ticket, passing on a signal it may
 *   have absorbed (as fastsync_cond_cancel), and cond_wait's then locks the mutex again
 *   before the caller's cleanup handlers run (as POSIX requires of pthread_cond_wait). A
 *   wait that can take or return at once is not a cancellation point (the fast paths make
 *   no call). With cancellation disabled nothing changes. FASTSYNC_NO_CANCEL turns it off
 *   for the waits (threads stay cancellable at points of their own: fastsync_once's cleanup
 *   stays; see Configuration).
 *   Signal handlers: the Linux backend turns asynchronous cancellation on around its futex
 *   call only, as glibc before 2.41 does around its own cancellation points (2.36's, seen
 *   here; musl's own points, and by its sources glibc 2.41's, check where the thread was
 *   instead, and do not do this). So a handler that runs while the thread sleeps in a wait runs with asynchronous
 *   cancellation, and a pthread_cancel arriving then acts anywhere in the handler: a post,
 *   set or unlock the handler makes can be cut between its RMW and its wake (a sleeper of
 *   that object sleeps on, the token in the word). A handler that may run in a thread that
 *   may be cancelled must make its calls with cancellation disabled
 *   (pthread_setcancelstate around them: not on POSIX's list of async-signal-safe calls,
 *   but a store to the thread's own state on glibc and musl; the cancel then acts at the
 *   thread's next cancellation point, its wait going on), or have its signal blocked in
 *   the threads that are cancelled; or the program defines FASTSYNC_NO_CANCEL
 *   (test/cancel_in_handler.c shows both the cut and the remedy). The POSIX backend sleeps
 *   in the C library's pthread_cond_wait and has that function's behaviour.
 *
 * Flags: 0 (process-private) or FASTSYNC_SHARED (the object may live in MAP_SHARED memory
 *   and be used by several processes; the futex is then keyed by page, not by address).
 *   Where the backend has no shared objects (FASTSYNC_HAS_SHARED 0), init refuses it: EINVAL.
 *
 * Guarantees
 *   - A post with no registered waiter: one atomic RMW, no syscall. A wait on a positive
 *     semaphore: one CAS. set on a set event: no RMW, no syscall; wait on a set event: one
 *     load; reset on a reset event: no syscall.
 *   - A successful wait synchronizes-with the post whose token it took (release/acquire).
 *     successful waits + final value == initial value + successful posts, always: a waiter
 *     that times out never keeps a token.
 *   - A post touches the semaphore only up to the RMW that publishes its token, then at most
 *     makes a FUTEX_WAKE on its address: the waiter may destroy and free it at once.
 *     The same holds for event_set after its RMW.
 *   - event_set synchronizes-with every wait and is_set that reads the SET it wrote, and
 *     wakes every thread blocked in wait at that moment (even if the event is reset again
 *     before that thread runs). When the event is already set, set only makes a full
 *     fence and a load: a thread that resets the event afterwards and then checks its
 *     condition sees the writes made before set (reset ends with a full fence; the pair
 *     is a Dekker handshake; see the event section). The condition must itself be atomic
 *     or read under a lock: the handshake orders the accesses, it does not make a racy
 *     plain read of the condition defined.
 *   - A wait blocked when set is called returns, even if the event is reset again before
 *     it runs, by seeing the event's 29-bit generation count move. The bound: a sleeper
 *     that stays descheduled while exactly k * 2^29 sets that change the state happen
 *     (536 870 912; a set on a set event does not count) sees its old generation again and
 *     sleeps on, missing those sets.
 *   - A lock that finds the mutex unlocked: one CAS, no syscall. On a FASTSYNC_SHARED mutex
 *     two CASes, inline, with no load, no call and no syscall: its word holds the shared bit,
 *     so the CAS from 0 fails and returns the word, and a second CAS from that word takes
 *     the lock. trylock, timedlock and clocklock: a load and a CAS, shared or not. An unlock:
 *     a load (of the shared bit) and one RMW, and a FUTEX_WAKE (of one thread) only when the
 *     word says a thread may sleep. A successful lock synchronizes-with the unlock before
 *     it. An unlock touches the mutex only up to that RMW: the next owner may destroy and
 *     free it at once.
 *   - signal and broadcast with no ticket registered (or each registered ticket already
 *     owed a signal): one load, no write, no syscall. Otherwise one RMW (and one on the
 *     count of released tickets before it, when it releases a group) and one FUTEX_WAKE
 *     (of one thread; broadcast: all), after which the condvar is not touched: the waiter
 *     may destroy and free it at once. A wait registers with one RMW and deregisters with
 *     one (a released ticket: a load and a decrement of that count), and makes no syscall
 *     unless it sleeps; it does not spin.
 *   - Condition variable, delivery rules (the Condition variable section has the groups
 *     behind them; the tests cite them by number):
 *     1. every ticket registered before a broadcast returns 0 from its wait, however many
 *        register later and whatever they, signals and cancels do;
 *     2. a signal goes only to a ticket that was registered before it and that no earlier
 *        signal or broadcast has called: a ticket registered after a signal never takes
 *        it, nor does one a broadcast has released; with no such ticket it has no effect;
 *     3. a signal made while such a ticket waits goes to exactly one of them (which one is
 *        not said: older tickets first, by groups, no FIFO inside a group), unless that
 *        one is cancelled (rule 5);
 *     4. a wait returns 0 only for a signal or broadcast: no spurious wakeups; a waiter that
 *        times out neither keeps nor leaks a signal: if one was owed to it by the time it
 *        deregisters, it returns 0 instead; a successful wait synchronizes-with the signal
 *        or broadcast that woke it;
 *     5. a ticket cancelled (fastsync_cond_cancel, or pthread_cancel in a wait) passes a
 *        signal it holds on only to a ticket registered before that signal: (a) a ticket
 *        of a group that still has tickets without a signal leaves the group's signals to
 *        them; (b) once each ticket of its group had one and a signal released the group,
 *        the first such cancel in the group passes one signal to the next group, if that
 *        group is still the one signals go to and has a ticket without one; any other
 *        cancel of a released ticket drops its signal (cancel returns 0); (c) a ticket a
 *        broadcast released has nothing to pass on.
 *     The group number has 29 bits: a released ticket descheduled between its release and
 *     its look at the word while exactly k * 2^29 groups form misreads its state (the
 *     Condition variable section).
 *   - A read lock that finds no writer holding or waiting: a load and one CAS, no syscall;
 *     its rdunlock a load and one CAS. A write lock that finds the lock free: a load and one
 *     CAS; its wrunlock a load and one CAS. An unlock makes a wake only when the word says a
 *     thread may sleep (one writer, or every reader), and touches the lock only up to its
 *     RMW: the next owner may destroy and free it at once. A successful lock
 *     synchronizes-with the unlocks before it (a read lock with the last write unlock or
 *     downgrade, a write lock with every unlock). A writer that gives up at its deadline,
 *     if no other writer waits and none holds the lock, lets in the readers it held back.
 *   - Sizes: sizeof(fastsync_sem_t) == 8, sizeof(fastsync_event_t) == 4,
 *     sizeof(fastsync_mutex_t) == 4, sizeof(fastsync_rwlock_t) == 8,
 *     sizeof(fastsync_once_t) == 4, sizeof(fastsync_latch_t) == 8 (8-aligned),
 *     sizeof(fastsync_barrier_t) == 8 (8-aligned),
 *     sizeof(fastsync_cond_t) == 16 (8-aligned; a fastsync_cond_ticket_t, the caller's, 8).
 *
 * What a thread or process leaves behind (as with glibc's sem_t, which counts its waiters
 * the same way)
 *   - A semaphore waiter that dies registered (its process killed, or its thread cancelled
 *     asynchronously: the waits are not async-cancel-safe) leaves the waiter count raised
 *     for good: every later post makes a FUTEX_WAKE that finds nobody, waiters no longer
 *     spin (they see a waiter), and destroy says EBUSY. An event waiter leaves BUSY: one
 *     FUTEX_WAKE at the next set.
 *   - A poster that dies between its RMW and its FUTEX_WAKE leaves its token in the word,
 *     but the sleeper it was for sleeps on until the next post (which wakes, seeing the
 *     count) or its deadline. A setter that dies there leaves the event set with its
 *     sleepers asleep until their deadline or a reset and another set (a set on a set
 *     event does nothing).
 *   - A condition variable waiter that dies registered (killed, or cancelled
 *     asynchronously) leaves its ticket counted: destroy says EBUSY until a signal or
 *     broadcast releases it, then waits a second and says EBUSY (it never goes); the ticket
 *     takes one signal as a live waiter would (a signal given to it wakes nobody for it);
 *     after that it costs nothing, and live waiters lose nothing. A signaler that dies
 *     between its RMW and its wake leaves its signal with its waiter asleep until the next
 *     signal or broadcast that wakes that waiter's group, or its deadline.
 *   - A thread or process that dies holding a mutex leaves it locked for good (no robust
 *     kind: the owner is not recorded); one that dies asleep in lock leaves the word saying
 *     CONTENDED: the next unlock makes one needless FUTEX_WAKE. The same for a
 *     reader-writer lock held either way. A writer that dies registered (asleep in wrlock)
 *     holds readers back for good, as a waiting writer does: untimed read locks wait for
 *     good, timed ones time out; every later unlock that frees the lock makes a needless
 *     FUTEX_WAKE; destroy says EBUSY.
 *   - A latch waiter that dies inside its wait leaves the waiter count raised for good (and
 *     `slept`, if it was about to sleep: the count_down that opens the latch makes a
 *     needless FUTEX_WAKE); destroy says EBUSY (after a second, once the count is 0), and
 *     an add from 0 (the next use as a wait group) says EINVAL. A counter that dies before
 *     its count_down leaves the latch closed: its waiters wait for good (or their
 *     deadline). A barrier thread that dies before it arrives leaves its round short for
 *     good; one that dies released but before it counts itself out makes destroy say
 *     EBUSY after a second. A once initialiser that dies leaves the once RUNNING (or
 *     WAITED): its callers wait for good (a cancelled one aborts, above).
 *   - fork while another thread waits on a private object: in the child the object is a
 *     copy that still counts that waiter, which does not exist there: the costs of a dead
 *     waiter, above.
 *
 * Async-signal-safety: the calls a signal handler may make, per backend, whatever the thread
 *   it interrupts is doing (inside any call of this header, on any object). Each is lock-free
 *   atomics, then at most the backend's wake, and keeps errno. Linux's wake is a raw futex
 *   system call (glibc and musl; where the kernel refuses futex, a refused call). The POSIX
 *   backend's locks a bucket of its wait table (pthread_once, pthread_mutex_lock,
 *   pthread_cond_signal: none async-signal-safe, and the interrupted thread may hold that
 *   very lock, on a wait or a wake of any word of the bucket: the handler deadlocks), so
 *   there a call is safe only when it makes no wake, and the column says when that is:
 *     call (prefix fastsync_)           linux  posix: safe when
 *     sem_init, sem_destroy,            yes    always
 *       sem_trywait, sem_getvalue
 *     sem_post, sem_post_n              yes    no waiter is registered (one that timed out or
 *                                              was cancelled has left)
 *     event_init, event_destroy,        yes    always
 *       event_reset, event_is_set
 *     event_set                         yes    no wait has marked the event since its last
 *                                              set (a wait that timed out leaves the mark)
 *     cond_init                         yes    always
 *     cond_destroy                      yes    no ticket that a signal or broadcast released
 *                                              is still to leave (destroy then yields:
 *                                              sched_yield, not on POSIX's list)
 *     cond_signal, cond_broadcast       yes    every registered ticket has had its signal
 *                                              (or none is registered)
 *     latch_init, latch_add,            yes    always
 *       latch_trywait
 *     latch_destroy                     yes    no waiter is still to leave the open latch
 *                                              (destroy then yields, as cond_destroy)
 *     latch_count_down                  yes    no waiter may be asleep on the latch (`slept`:
 *                                              it wakes only then, as it opens the latch)
 *     deadline_in                       yes    always (clock_gettime)
 *     wake32, wake32_all                yes    never (the wake itself)
 *   No other call may be made from a handler: the blocking waits change the cancellation
 *   type and may sleep on an object the interrupted thread is using; the others are not
 *   claimed. On Linux a cond_destroy or latch_destroy that waits for released waiters
 *   yields (a raw system call), and if the interrupted thread is one of them it says EBUSY
 *   after a second.
 *   Windows: no signal interrupts a thread (a console control handler runs in a thread of
 *   its own). OS/2: none is claimed. Without atomics (OpenWatcom) every operation takes the
 *   table's lock; with GCC's the calls above that make no wake are lock-free atomics, as on
 *   the POSIX backend, but a wake takes the table's mutex semaphore for the word, which OS/2
 *   lets the thread that holds it take again (a handler would enter the bucket its thread is
 *   changing), and no handler has been run on OS/2 here. test/signal_handler_calls.c makes
 *   these calls from handlers, per backend as the table says, and checks that the table
 *   above and its own list agree.
 *
 * When the kernel refuses futex (Linux backend; ENOSYS or EPERM: a kernel without futex, a
 *   seccomp filter), waits do not spin: they sleep in 1 ms slices and look at the word after
 *   each, keeping their deadlines; posts and sets still work, seen within a slice. On a
 *   32-bit ABI with a 64-bit time_t, futex_time64 is needed only for deadlines past 2038.
 *
 * Configuration (define before the #include)
 *   FASTSYNC_SPIN         bounded spin of a waiter before it sleeps (semaphore, mutex,
 *                         reader-writer lock; latch and barrier, whose spinners take
 *                         nothing from a sleeper), polls of the word with a CPU pause
 *                         between them; for the first three only while no other waiter
 *                         sleeps (each primitive's section says how it tells). An untimed
 *                         wait pauses up to FASTSYNC_SPIN times (default 20), then yields;
 *                         a timed wait, a mutex's lock, and a writer of the reader-writer
 *                         lock before it registers, only pause, for up to FASTSYNC_SPIN_NS,
 *                         backing off (the pauses between two polls double, 1 to 64). 0
 *                         turns all spinning off.
 *   FASTSYNC_SPIN_NS      the pauses' time bound, ns (default 10000): no spin pauses for
 *                         longer, whatever a pause costs on the CPU. So a timed wait returns
 *                         at most this much (and one poll) after its deadline, beyond the
 *                         OS's own wake-up latency, and a writer holds new readers back at
 *                         most this long after its call (plus any preemption).
 *   FASTSYNC_SPIN_YIELDS  then up to this many polls, each after sched_yield() (default 16;
 *   FASTSYNC_SPIN_YIELDS_NS  untimed waits only), while FASTSYNC_SPIN_YIELDS_NS ns (default
 *                         100000) have not passed since the first. A yield runs a thread
 *                         this one may be waiting for when they share a CPU; beside other
 *                         busy threads one yield can take a whole time slice, after which
 *                         the spin ends. See "Spinning" at fastsync__spin for the figures.
 *   FASTSYNC_MUTEX_HANDOFF_NS  how long a mutex sleeper waits (ns from its first sleep,
 *                         default 1000000) before it claims the next unlock, which hands
 *                         it the lock: the bound on barging (mutex section, "Fairness").
 *                         Negative: no hand-off, the barging of 0.4. 0: a claim after any
 *                         sleep, with no clock read (the model checker's setting).
 *   FASTSYNC_RWLOCK_HANDOFF_NS  the same for the reader-writer lock (default 1000000): a
 *                         reader or a registered writer that has waited this long claims the
 *                         next turn (its section, "Fairness"); a sleeping reader with no
 *                         claim made looks again at this interval. Negative: writers first
 *                         and barging alone, as 0.4 (the writer count's maximum stays 255).
 *                         0: a claim after any sleep with no clock read, and so no slices
 *                         either: a reader behind a steady stream of writers is then woken
 *                         by no one and bounded by nothing (the model checker's setting,
 *                         not one to build with).
 *   FASTSYNC_API          storage of every function. Default: static inline.
 *   FASTSYNC_BACKEND_LINUX, _WINDOWS, _POSIX   the backend (above).
 *   FASTSYNC_FUTEX_WAIT   replace the wait and wake of the seam, on any backend (fault
 *   FASTSYNC_FUTEX_WAKE   injection, call counting, another kernel): functions with the
 *                         signatures of the backend's fastsync__wait_sys and
 *                         fastsync__wake_sys, declared before the #include (a replacement
 *                         usually calls them). (One that does not call fastsync__wait_sys
 *                         makes the waits no cancellation points.)
 *                         Per file, as the backend and FASTSYNC_NO_CANCEL: with the default
 *                         FASTSYNC_API (static) each file's functions are its own, so the
 *                         objects a file makes and keeps sleep and are woken through its own
 *                         configuration. Objects of one configuration must still not be
 *                         passed to code of another: their protocols differ (a sleeper on a
 *                         futex is never woken through the POSIX table; a replacement sees
 *                         only its own file's waits and wakes). fastsync.hpp keeps each
 *                         configuration's C++ types and functions apart, in an inline
 *                         namespace named after it (its manual, "Configurations"); for it
 *                         each of FASTSYNC_FUTEX_WAIT, _WAKE and _WAITV must expand to an
 *                         identifier, the replacement's name (a qualified name does not
 *                         compile), and files whose configurations differ only in a
 *                         replacement must name theirs apart: two static functions of one
 *                         name are one configuration to it.
 *   FASTSYNC_FUTEX_WAITV  replace the multi-wait of wait_any (fastsync__waitv_sys's
 *                         signature; ENOSYS: sleep on one word at a time through
 *                         FASTSYNC_FUTEX_WAIT). Where FASTSYNC_FUTEX_WAIT is replaced and
 *                         this is not, wait_any uses no multi-wait: it sleeps through the
 *                         replaced wait, which the replaced wake reaches.
 *   FASTSYNC_NO_CANCEL    waits are not cancellation points: the Linux backend's make no
 *                         pthread call (but where the kernel refuses futex, whose slices
 *                         sleep in nanosleep: cancellation disabled around each); the POSIX
 *                         backend's disable cancellation around its sleep. Threads stay
 *                         cancellable at points of their own, and what fastsync does about
 *                         that stays: fastsync_once runs fn under a cleanup handler
 *                         (pthread_cleanup_push, which glibc before 2.34 keeps in
 *                         libpthread), so an initialiser cancelled inside fn leaves the once
 *                         as if never called.
 *
 * Contents (each part below starts with a banner of '='):
 *   the seam          wait on a word while it holds a value, wake its waiters (the contract)
 *   the backends      Linux futex; Windows; POSIX wait table; OS/2 (fastsync_os2.h)
 *   deadlines         deadline_in and the argument checks every wait shares; the seam,
 *                     public (fastsync_wait32, fastsync_wake32: "Waiting on an address")
 *   the primitives    semaphore, manual-reset event, mutex, reader-writer lock, one-time
 *                     initialisation, latch, barrier, condition variable: each written
 *                     once, over the seam; then waiting for any of several of them
 *   before them       configuration, and the atomics layer (C11, C++11 std::atomic, or OS/2's
 *                     locked operations) that every primitive goes through
 *
 * Under a strict -std=c11 the C library hides clock_gettime and syscall; fastsync.h then
 * defines _DEFAULT_SOURCE itself, which works when it is the first header included (or
 * define _DEFAULT_SOURCE / _POSIX_C_SOURCE 200809L yourself).
 * ---------------------------------------------------------------------------------------
 */
#ifndef FASTSYNC_H
#define FASTSYNC_H

#define FASTSYNC_VERSION_MAJOR 0
#define FASTSYNC_VERSION_MINOR 4
#define FASTSYNC_VERSION_PATCH 0

/* The backend: the part below the seam that knows the platform (see "The seam"). Exactly one
 * FASTSYNC_BACKEND_<name> is defined after the #include; define one before it to choose:
 *   FASTSYNC_BACKEND_LINUX    futex(2); the default on Linux.
 *   FASTSYNC_BACKEND_WINDOWS  WaitOnAddress; the default on Windows.
 *   FASTSYNC_BACKEND_POSIX    a wait table on pthread mutexes and condition variables; the
 *                             default on other POSIX systems, and a choice on Linux.
 *   FASTSYNC_BACKEND_OS2      fastsync_os2.h: a wait table on OS/2 semaphores; always, and
 *                             only, where __OS2__ is defined (a choice made for the other
 *                             systems a project builds on is set aside there).
 * FASTSYNC_BACKEND names it as a string; FASTSYNC_HAS_SHARED says whether FASTSYNC_SHARED
 * objects work (1) or init refuses them with EINVAL (0). Every file of a program that shares
 * an object must choose the same one (in C and in C++): a futex sleeper and a table waker
 * never meet. */
#if defined(__OS2__)
#undef FASTSYNC_BACKEND_POSIX
#undef FASTSYNC_BACKEND_LINUX
#undef FASTSYNC_BACKEND_WINDOWS
#define FASTSYNC_BACKEND_OS2 1
#elif defined(FASTSYNC_BACKEND_POSIX)
#elif defined(FASTSYNC_BACKEND_WINDOWS) || defined(_WIN32)
#undef FASTSYNC_BACKEND_WINDOWS
#define FASTSYNC_BACKEND_WINDOWS 1
#elif defined(FASTSYNC_BACKEND_LINUX) || defined(__linux__)
#undef FASTSYNC_BACKEND_LINUX
#define FASTSYNC_BACKEND_LINUX 1
#else
#define FASTSYNC_BACKEND_POSIX 1
#endif
#if defined(FASTSYNC_BACKEND_LINUX)
#define FASTSYNC_BACKEND "linux"
#define FASTSYNC_HAS_SHARED 1
#elif defined(FASTSYNC_BACKEND_WINDOWS)
#define FASTSYNC_BACKEND "windows"
#define FASTSYNC_HAS_SHARED 0
#elif defined(FASTSYNC_BACKEND_OS2)
#define FASTSYNC_BACKEND "os2"
#define FASTSYNC_HAS_SHARED 1
#else
#define FASTSYNC_BACKEND "posix"
#define FASTSYNC_HAS_SHARED 0
#endif

#if defined(__STRICT_ANSI__) && !defined(__cplusplus) && !defined(_DEFAULT_SOURCE) && \
    !defined(_GNU_SOURCE) && !defined(_BSD_SOURCE) && !defined(_POSIX_C_SOURCE) &&      \
    !defined(_XOPEN_SOURCE)
#define _DEFAULT_SOURCE 1
#endif

#if defined(__cplusplus) && __cplusplus < 201103L
#error "fastsync.h as C++ needs C++11 (std::atomic)"
#endif

#include <errno.h>
#include <limits.h>
#include <stdint.h>
/* The API's truth values are _Bool (bool in C++; C23's bool is _Bool): the header includes no
 * <stdbool.h>, whose macros bool, true and false would change code that has names of its own
 * (a struct member named bool is valid C before C23). Inside, truth values are int. */
#ifdef __cplusplus
#define FASTSYNC__BOOL bool
#else
#define FASTSYNC__BOOL _Bool
#endif
#include <time.h>
#if defined(FASTSYNC_BACKEND_OS2)
#include "fastsync_os2.h" /* its part 1: <os2.h>, the clocks, whether it has atomics */
#elif defined(FASTSYNC_BACKEND_WINDOWS)
#include <windows.h>
#if !defined(CLOCK_MONOTONIC) /* mingw-w64 has them (pthread_time.h); MSVC has not */
typedef int clockid_t;
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#endif
#else
#include <unistd.h>
#endif
#if defined(FASTSYNC_BACKEND_LINUX)
#include <sys/syscall.h>
#elif defined(FASTSYNC_BACKEND_POSIX)
#include <sched.h>
#endif

#if !defined(CLOCK_MONOTONIC)
#error "fastsync.h: POSIX clocks are hidden; include fastsync.h first or define _POSIX_C_SOURCE=200809L"
#endif

/* syscall() is declared only in the C library's default/GNU mode. */
#if defined(FASTSYNC_BACKEND_LINUX) && !defined(__cplusplus) && !defined(__USE_MISC) && \
    !defined(_GNU_SOURCE) && !defined(_BSD_SOURCE) && !defined(_DEFAULT_SOURCE)
long syscall(long number, ...);
#endif

#ifndef FASTSYNC_API
#if defined(__WATCOMC__)
#define FASTSYNC_API static __inline
#else
#define FASTSYNC_API static inline
#endif
#endif

/* Two questions about POSIX thread cancellation, kept apart:
 *   FASTSYNC__THREAD_CANCEL  threads can be cancelled here: the Linux and POSIX backends, but
 *                            not with Android's bionic (no pthread_cancel) nor a <pthread.h>
 *                            without cancellation (GenMC's). Then a cancellation point that
 *                            is not fastsync's to switch off can end a thread inside a call
 *                            of this header: one in fastsync_once's fn (the caller's), which
 *                            the once's cleanup handler answers; and the C library's sleeps
 *                            that fastsync calls (the POSIX table's pthread_cond_wait, the
 *                            refused-futex fallback's nanosleep), which must be cancellation
 *                            points exactly where the waits are: cancellation is disabled
 *                            around them otherwise. FASTSYNC_NO_CANCEL changes none of this.
 *   FASTSYNC__CANCEL         the waits that sleep are cancellation points: where threads can
 *                            be cancelled, unless FASTSYNC_NO_CANCEL is defined. */
#if defined(__BIONIC__) || defined(FASTSYNC_BACKEND_WINDOWS) || defined(FASTSYNC_BACKEND_OS2)
#define FASTSYNC__THREAD_CANCEL 0
#else
#include <pthread.h>
#if defined(PTHREAD_CANCEL_DISABLE)
#define FASTSYNC__THREAD_CANCEL 1
#else
#define FASTSYNC__THREAD_CANCEL 0
#endif
#endif
#if defined(FASTSYNC_NO_CANCEL) || !FASTSYNC__THREAD_CANCEL
#define FASTSYNC__CANCEL 0
#else
#define FASTSYNC__CANCEL 1
#endif

/* Under AddressSanitizer a frame that holds a cancellation cleanup (pthread_cleanup_push) is
 * left uninstrumented: the C library unwinds a cancelled thread without telling ASan, whose
 * no-return handling (which it would insert before the unwinding goes on from there) then
 * trips over the dropped frames' stale redzones (google/sanitizers issue 1399). Such a frame
 * makes no memory access of its own to check. */
#if defined(__SANITIZE_ADDRESS__)
#define FASTSYNC__CLEANUP_FRAME __attribute__((no_sanitize_address))
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FASTSYNC__CLEANUP_FRAME __attribute__((no_sanitize_address))
#endif
#endif
#ifndef FASTSYNC__CLEANUP_FRAME
#define FASTSYNC__CLEANUP_FRAME
#endif

/* The system calls and the slow paths stay out of line and cold, so that the inlined fast
 * paths are a handful of instructions with no stack frame to build. */
#if defined(__GNUC__)
#define FASTSYNC__COLD static __attribute__((noinline, cold, unused))
#else
#define FASTSYNC__COLD FASTSYNC_API
#endif

/* Spin before sleeping: the defaults of the configuration macros (the manual's
 * "Configuration"); fastsync__spin says how they combine, and why, with the figures. */
#ifndef FASTSYNC_SPIN
#define FASTSYNC_SPIN 20
#endif
#ifndef FASTSYNC_SPIN_NS
#define FASTSYNC_SPIN_NS 10000
#endif
#ifndef FASTSYNC_SPIN_YIELDS
#define FASTSYNC_SPIN_YIELDS 16
#endif
#ifndef FASTSYNC_SPIN_YIELDS_NS
#define FASTSYNC_SPIN_YIELDS_NS 100000
#endif
#define FASTSYNC__SPIN_CHECK 16 /* pauses between two looks at the clock */
#define FASTSYNC__SPIN_BACKOFF 6 /* the pausing kind's pauses between polls double up to 2^6 */
#ifndef FASTSYNC_MUTEX_HANDOFF_NS
#define FASTSYNC_MUTEX_HANDOFF_NS 1000000 /* the mutex's starvation bound (its section) */
#endif
#ifndef FASTSYNC_RWLOCK_HANDOFF_NS
#define FASTSYNC_RWLOCK_HANDOFF_NS 1000000 /* the reader-writer lock's (its section) */
#endif

/* Atomics: the one layer every primitive goes through. Its operations are C11's generic
 * functions under short names, with C11's memory orders:
 *   fastsync__load(p, mo)  fastsync__store(p, v, mo)  fastsync__exchange(p, v, mo)
 *   fastsync__cas_weak(p, &expected, desired, success, failure)  fastsync__cas_strong(...)
 *   fastsync__fetch_add(p, v, mo)  fastsync__fetch_sub(p, v, mo)  fastsync__fetch_or(p, v, mo)
 *   fastsync__fence(mo)                                           (atomic_thread_fence)
 * on words declared FASTSYNC__ATOMIC(uint32_t) or FASTSYNC__ATOMIC(uint64_t). In C they are
 * <stdatomic.h>'s; in C++ (11 and later) <atomic>'s, which has the same functions and orders
 * under the same names in std, and FASTSYNC__ATOMIC(T) is std::atomic<T>: for the lock-free
 * integers used here it has the size, alignment and representation of C's _Atomic(T) under
 * gcc and clang, so a C library and a C++ program share objects (test: c_cxx_share). Where
 * the compiler has no atomics (OS/2 with OpenWatcom: FASTSYNC__LOCKED_ATOMICS),
 * fastsync_os2.h defines them as operations under a lock (its part 2). */
#if defined(FASTSYNC__LOCKED_ATOMICS)
#define FASTSYNC__ATOMIC(T) T
#else
#ifdef __cplusplus
#include <atomic>
#define FASTSYNC__ATOMIC(T) std::atomic<T>
using std::atomic_compare_exchange_strong_explicit;
using std::atomic_compare_exchange_weak_explicit;
using std::atomic_exchange_explicit;
using std::atomic_fetch_add_explicit;
using std::atomic_fetch_or_explicit;
using std::atomic_fetch_sub_explicit;
using std::atomic_load_explicit;
using std::atomic_signal_fence;
using std::atomic_store_explicit;
using std::atomic_thread_fence;
using std::memory_order_acq_rel;
using std::memory_order_acquire;
using std::memory_order_relaxed;
using std::memory_order_release;
using std::memory_order_seq_cst;
#else
#include <stdatomic.h>
#define FASTSYNC__ATOMIC(T) _Atomic(T)
#endif
#define fastsync__load(p, mo) atomic_load_explicit(p, mo)
#define fastsync__store(p, v, mo) atomic_store_explicit(p, v, mo)
#define fastsync__exchange(p, v, mo) atomic_exchange_explicit(p, v, mo)
#define fastsync__cas_weak(p, e, d, s, f) atomic_compare_exchange_weak_explicit(p, e, d, s, f)
#define fastsync__cas_strong(p, e, d, s, f) atomic_compare_exchange_strong_explicit(p, e, d, s, f)
#define fastsync__fetch_add(p, v, mo) atomic_fetch_add_explicit(p, v, mo)
#define fastsync__fetch_sub(p, v, mo) atomic_fetch_sub_explicit(p, v, mo)
#define fastsync__fetch_or(p, v, mo) atomic_fetch_or_explicit(p, v, mo)
#define fastsync__fence(mo) atomic_thread_fence(mo)
#endif

#define FASTSYNC_SHARED 1
#define FASTSYNC_SEM_VALUE_MAX INT_MAX

#if UINT64_MAX == ULONG_MAX
#define FASTSYNC__ATOMIC64_LOCK_FREE ATOMIC_LONG_LOCK_FREE
#else
#define FASTSYNC__ATOMIC64_LOCK_FREE ATOMIC_LLONG_LOCK_FREE
#endif
/* The semaphore's word is an 8-aligned 64-bit atomic, and must be lock-free. The question is
 * about that word, not about the type: clang says ATOMIC_LLONG_LOCK_FREE 1 on i386 (the
 * type's ABI alignment is 4 there), yet an 8-aligned word is lock-free (cmpxchg8b, which the
 * CPU has when __GCC_HAVE_SYNC_COMPARE_AND_SWAP_8 is defined: i586 and later). gcc says 2
 * on i686; gcc and clang for i386/i486, which have no 8-byte compare-and-swap, are refused. */
#if !defined(FASTSYNC__LOCKED_ATOMICS) && FASTSYNC__ATOMIC64_LOCK_FREE != 2 && \
    !(defined(__clang__) && defined(__i386__) && defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8))
#error "fastsync.h needs lock-free 64-bit atomics (the semaphore is one 64-bit word)"
#endif

#ifdef __cplusplus
/* The code is C: C casts are its idiom, not a slip, in projects that warn about them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wzero-as-null-pointer-constant"
extern "C" {
#endif

/* ======================================================================================
 * The seam: wait on a word while it holds a value, wake its waiters
 *
 * The primitives below it are written once; a backend (chosen at the top) supplies:
 *   int  fastsync__wait_sys(word, expected, shared, clock, abstime)
 *        sleeps while the 32-bit word at `word` holds `expected`, until a wake or the
 *        absolute deadline `abstime` on `clock` (CLOCK_MONOTONIC or CLOCK_REALTIME; NULL: no
 *        deadline). Returns 0 (woken, or spuriously, or the word differed where the backend
 *        cannot tell), EAGAIN (the word differed: no wake was taken), ETIMEDOUT (only once
 *        the deadline has passed on `clock`) or EINTR; only 0 may have taken a wake (the
 *        condition variable passes on a wake it took and cannot use). A deferred
 *        cancellation point unless FASTSYNC__CANCEL is 0.
 *   void fastsync__wake_sys(word, n, shared)    wakes up to n sleepers (INT_MAX: all)
 *   int  fastsync__waitv_sys(v, n, clock, abstime)   optional: sleeps while each of n words
 *        v[i].word holds v[i].expected, until a wake of any of them or the deadline; returns
 *        as wait_sys, or ENOSYS where the backend (or the kernel) has no such call, and then
 *        the caller sleeps on one word at a time instead (see "Waiting for any of several
 *        objects"). Only the Linux backend has one (futex_waitv); the others answer ENOSYS.
 *   void fastsync__yield(void)                  gives the CPU to another runnable thread
 *   void fastsync__clock_now(clock, &ts)        reads CLOCK_MONOTONIC or CLOCK_REALTIME
 *        (clock_gettime, but on Windows)
 * `shared` says the object may be used by several processes (FASTSYNC_SHARED).
 *
 * The pairing every backend keeps: a wake made after the word changed either finds the
 * sleeper asleep or the sleeper's compare sees the new value, so a store followed by a wake
 * never loses a sleeper. The primitives re-read the word after every wait and treat any
 * return but ETIMEDOUT as "look again" (so a replacement may also return EAGAIN).
 * ====================================================================================== */

#define FASTSYNC__NSEC_PER_SEC 1000000000L

/* One word of a multi-wait (fastsync__waitv_sys). */
struct fastsync__waitv {
    void *word;        /* a 32-bit futex word */
    uint32_t expected; /* sleep while it holds this */
    int shared;        /* FASTSYNC_SHARED object */
};

#if defined(FASTSYNC_BACKEND_WINDOWS) || defined(FASTSYNC_BACKEND_OS2)
FASTSYNC_API void fastsync__clock_now(clockid_t clock, struct timespec *now); /* its backend's */
#else
FASTSYNC_API void fastsync__clock_now(clockid_t clock, struct timespec *now)
{
    clock_gettime(clock, now); /* cannot fail for CLOCK_MONOTONIC or CLOCK_REALTIME */
}
#endif

/* The seconds from b to a, two tv_sec values (>= 0), as a signed 64-bit count, compared
 * before subtracting: exact whether time_t is signed (every Linux ABI) or unsigned
 * (OpenWatcom, where a - b would wrap to "far ahead" for a deadline already past). A macro,
 * so that a test can apply it to an unsigned type where time_t is signed. */
#define FASTSYNC__SEC_DIFF(a, b) ((a) >= (b) ? (int64_t)((a) - (b)) : -(int64_t)((b) - (a)))
/* x < 0, for a time_t that may be unsigned (then never), with no "always false" warning */
#define FASTSYNC__SEC_NEGATIVE(x) ((x) < 1 && (x) != 0)

/* How far the deadline `abstime` (tv_sec >= 0, tv_nsec normalized) lies ahead of `clock`
 * now, in ns: 0 or less once it has passed; more than a second reads as one second. (The
 * deadline helpers below use it too.) */
FASTSYNC_API int64_t fastsync__until(clockid_t clock, const struct timespec *abstime)
{
    struct timespec now;
    fastsync__clock_now(clock, &now);
    int64_t secs = FASTSYNC__SEC_DIFF(abstime->tv_sec, now.tv_sec);
    if (secs > 1) return FASTSYNC__NSEC_PER_SEC;
    return secs * FASTSYNC__NSEC_PER_SEC + (abstime->tv_nsec - now.tv_nsec);
}

/* The largest time_t: signed on every Linux ABI, unsigned on OpenWatcom. */
#define FASTSYNC__TIME_MAX                                                               \
    ((time_t)-1 > 0 ? (time_t)-1                                                        \
                    : (time_t)((((uintmax_t)1 << (sizeof(time_t) * CHAR_BIT - 2)) - 1) * 2 + 1))

/* *t (normalized, tv_sec >= 0) plus ns, normalized, saturating at the largest time_t. The
 * sum of the nanoseconds is taken in 64 bits: a 32-bit long (i686, arm) overflows at
 * 2.1e9, and a slice of up to 2 s added to a tv_nsec of up to 1e9 reaches 3e9. */
FASTSYNC_API void fastsync__ts_add(struct timespec *t, uint64_t ns)
{
    uint64_t secs = ns / FASTSYNC__NSEC_PER_SEC;
    int64_t nsec = (int64_t)t->tv_nsec + (int64_t)(ns % FASTSYNC__NSEC_PER_SEC); /* < 2e9 */
    if (nsec >= FASTSYNC__NSEC_PER_SEC) {
        nsec -= FASTSYNC__NSEC_PER_SEC;
        secs++;
    }
    if (secs > (uint64_t)(FASTSYNC__TIME_MAX - t->tv_sec)) {
        t->tv_sec = FASTSYNC__TIME_MAX;
        t->tv_nsec = FASTSYNC__NSEC_PER_SEC - 1;
    } else {
        t->tv_sec += (time_t)secs;
        t->tv_nsec = (long)nsec;
    }
}

/* The time left until `abstime` on `clock` in whole milliseconds, rounded up (a sleep that
 * long never ends early), under 2000 (fastsync__until reads a far deadline as a second: the
 * caller sleeps again after it, and the count cannot wrap); 0 once it has passed. (The
 * Windows and OS/2 backends sleep in milliseconds.) */
FASTSYNC_API uint32_t fastsync__ms_left(clockid_t clock, const struct timespec *abstime)
{
    int64_t left = fastsync__until(clock, abstime); /* under 2 s */
    return left <= 0 ? 0u : (uint32_t)((left + 999999) / 1000000);
}

/* The bucket of a word's address `a` in a wait table of `size` buckets, a power of two (the
 * POSIX and OS/2 backends): words 4 or 8 bytes apart, or a page apart, spread out; the two
 * halves of an 8-aligned 64-bit word share one. (An integer, not a pointer: only the
 * address counts, and a compiler must not think the word is read here.) */
FASTSYNC_API uintptr_t fastsync__addr_hash(uintptr_t a, uintptr_t size)
{
    a ^= a >> 6 ^ a >> 12;
    return (a >> 3) & (size - 1);
}

/* ======================================================================================
 * Backend: Linux futex. The only place that makes system calls.
 *
 * The kernel keeps the pairing above: both sides take the futex hash-bucket lock, and the
 * kernel places full barriers around its compare and its check for queued waiters. `shared`
 * 0 adds FUTEX_PRIVATE_FLAG (cheaper: the kernel keys the futex by address instead of by
 * page).
 *
 * When the kernel refuses to sleep (ENOSYS or EPERM: no futex, or a seccomp filter; EFAULT,
 * EINVAL: which no correct use makes), a wait never retries at once, which would spin at
 * full speed for ever: it sleeps in slices of 1 ms and looks at its word after each one,
 * still returning at its deadline. A refused wake is ignored: the sleepers are polling.
 * ====================================================================================== */
#if defined(FASTSYNC_BACKEND_LINUX)

/* Kernel ABI constants (linux/futex.h; not on musl-gcc's include path, so defined here). */
enum {
    FASTSYNC__FUTEX_WAKE = 1,
    FASTSYNC__FUTEX_WAIT_BITSET = 9,
    FASTSYNC__FUTEX_PRIVATE_FLAG = 128,
    FASTSYNC__FUTEX_CLOCK_REALTIME = 256
};
#define FASTSYNC__FUTEX_BITSET_MATCH_ANY 0xffffffffu

/* Which system call takes which timespec. A 32-bit ABI with a 64-bit time_t (musl >= 1.2;
 * glibc with _TIME_BITS=64) has two: futex with a timespec of two longs, and futex_time64
 * (Linux >= 5.1) with the C library's 64-bit one. As a C library does, fastsync uses futex
 * whenever the deadline fits in a long (every wake, every wait without a deadline, every
 * deadline before 2038), so neither an older kernel nor a seccomp filter that refuses
 * futex_time64 can stop it; futex_time64 only for a later deadline. Where futex_time64
 * answers ENOSYS, that deadline is clamped to the largest a long can hold, which only
 * CLOCK_REALTIME can reach (in 2038), and after it the wait polls (below). */
#if defined(SYS_futex_time64) && defined(SYS_futex) && ULONG_MAX == 0xffffffffu
#define FASTSYNC__FUTEX_TIME64 1 /* both calls; struct timespec may be the 64-bit one */
#else
#define FASTSYNC__FUTEX_TIME64 0 /* one call, taking struct timespec as it is */
#if defined(SYS_futex)
#define FASTSYNC__SYS_FUTEX SYS_futex
#else
#define FASTSYNC__SYS_FUTEX SYS_futex_time64 /* 32-bit ABIs born with a 64-bit time_t */
#endif
#endif

/* A futex call: 0 or the error the kernel gave. syscall() reports through errno; the
 * caller's errno is kept as it was. */
FASTSYNC__COLD int fastsync__futex_call(long nr, void *word, int op, uint32_t val, const void *ts)
{
    int saved = errno;
    long r = syscall(nr, word, op, val, ts, (void *)0, FASTSYNC__FUTEX_BITSET_MATCH_ANY);
    int err = r == -1 ? errno : 0;
    errno = saved;
    return err;
}

/* FUTEX_WAIT_BITSET with the deadline in the timespec the kernel takes: 0 or an error. */
FASTSYNC__COLD int fastsync__futex_wait_call(void *word, int op, uint32_t expected,
                                           const struct timespec *abstime)
{
#if FASTSYNC__FUTEX_TIME64
    /* Whether futex_time64 said ENOSYS once (in this translation unit; relaxed: a hint, any
     * thread may find it out again). */
    static FASTSYNC__ATOMIC(int) no_time64;
    long ts32[2];
    if (abstime == NULL || sizeof(abstime->tv_sec) == sizeof(long))
        return fastsync__futex_call(SYS_futex, word, op, expected, abstime);
    if (abstime->tv_sec > LONG_MAX && !fastsync__load(&no_time64, memory_order_relaxed)) {
        int err = fastsync__futex_call(SYS_futex_time64, word, op, expected, abstime);
        if (err != ENOSYS) return err;
        fastsync__store(&no_time64, 1, memory_order_relaxed);
    }
    if (abstime->tv_sec > LONG_MAX) {
        /* Clamped: a timeout here is not the caller's. Poll from then on (see below). */
        ts32[0] = LONG_MAX;
        ts32[1] = 0;
        int err = fastsync__futex_call(SYS_futex, word, op, expected, ts32);
        return err == ETIMEDOUT ? ENOSYS : err;
    }
    ts32[0] = (long)abstime->tv_sec;
    ts32[1] = abstime->tv_nsec;
    return fastsync__futex_call(SYS_futex, word, op, expected, ts32);
#else
    return fastsync__futex_call(FASTSYNC__SYS_FUTEX, word, op, expected, abstime);
#endif
}

/* The kernel would not sleep for us: sleep one slice (FASTSYNC__POLL_NS, 1 ms, or less up
 * to the deadline) and report ETIMEDOUT only once the deadline on `clock` has passed. The
 * caller reads its word after every slice, so no wakeup is lost, only late by up to a slice;
 * what it costs is a nanosleep per slice per sleeping thread. nanosleep is a cancellation
 * point: where the waits are, so is it (the callers' cleanup handlers run, as for the futex
 * call); with FASTSYNC_NO_CANCEL cancellation is disabled around it, the waits being none. */
#define FASTSYNC__POLL_NS 1000000L
FASTSYNC__COLD int fastsync__futex_poll(clockid_t clock, const struct timespec *abstime)
{
    struct timespec slice = { 0, FASTSYNC__POLL_NS };
    int saved = errno;
    if (abstime != NULL) {
        int64_t left = fastsync__until(clock, abstime);
        if (left <= 0) return ETIMEDOUT;
        if (left < slice.tv_nsec) slice.tv_nsec = (long)left;
    }
#if FASTSYNC__THREAD_CANCEL && !FASTSYNC__CANCEL
    int cancel;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
#endif
    (void)nanosleep(&slice, NULL); /* EINTR: the caller looks again all the same */
#if FASTSYNC__THREAD_CANCEL && !FASTSYNC__CANCEL
    (void)pthread_setcancelstate(cancel, &cancel);
#endif
    errno = saved;
    return 0;
}

FASTSYNC__COLD int fastsync__wait_sys(void *word, uint32_t expected, int shared,
                                      clockid_t clock, const struct timespec *abstime)
{
    int op = FASTSYNC__FUTEX_WAIT_BITSET;
    if (!shared) op |= FASTSYNC__FUTEX_PRIVATE_FLAG;
    if (clock == CLOCK_REALTIME) op |= FASTSYNC__FUTEX_CLOCK_REALTIME;
#if FASTSYNC__CANCEL
    /* The wait is a deferred cancellation point, as sem_wait's: asynchronous cancellation is
     * on around the system call only, so a pthread_cancel acts while the thread sleeps (and
     * at once if one is pending). The callers' cleanup handlers undo their registration. */
    int type;
    (void)pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
    int err = fastsync__futex_wait_call(word, op, expected, abstime);
    (void)pthread_setcanceltype(type, &type);
#else
    int err = fastsync__futex_wait_call(word, op, expected, abstime);
#endif
    if (err == 0 || err == EAGAIN || err == ETIMEDOUT || err == EINTR) return err;
    /* ENOSYS or EPERM (a seccomp filter, a kernel without futex), EFAULT, EINVAL: retrying
     * would fail at once, for ever: a busy loop. Sleep a slice instead. */
    return fastsync__futex_poll(clock, abstime);
}

FASTSYNC__COLD void fastsync__wake_sys(void *word, int n, int shared)
{
    int op = FASTSYNC__FUTEX_WAKE;
    if (!shared) op |= FASTSYNC__FUTEX_PRIVATE_FLAG;
    /* Errors: none that a retry would mend; a refused wake leaves the sleepers polling. */
#if FASTSYNC__FUTEX_TIME64
    (void)fastsync__futex_call(SYS_futex, word, op, (uint32_t)n, (void *)0);
#else
    (void)fastsync__futex_call(FASTSYNC__SYS_FUTEX, word, op, (uint32_t)n, (void *)0);
#endif
}

/* futex_waitv (Linux >= 5.16): one sleep on up to 128 words. The number is 449 on every
 * architecture (the unified table); the C library's headers may not know it yet (musl). */
#if defined(SYS_futex_waitv)
#define FASTSYNC__SYS_FUTEX_WAITV SYS_futex_waitv
#elif defined(__x86_64__) && defined(__ILP32__)
#define FASTSYNC__SYS_FUTEX_WAITV (0x40000000L + 449) /* x32 */
#else
#define FASTSYNC__SYS_FUTEX_WAITV 449L
#endif
#define FASTSYNC__HAS_WAITV 1

FASTSYNC__COLD int fastsync__waitv_sys(const struct fastsync__waitv *v, unsigned n,
                                       clockid_t clock, const struct timespec *abstime)
{
    /* the kernel's struct futex_waitv and struct __kernel_timespec (64-bit on every ABI) */
    struct { uint64_t val, uaddr; uint32_t flags, reserved; } kv[64];
    struct { int64_t tv_sec, tv_nsec; } kts;
    if (n > 64) return EINVAL;
    for (unsigned i = 0; i < n; i++) {
        kv[i].val = v[i].expected;
        kv[i].uaddr = (uint64_t)(uintptr_t)v[i].word;
        kv[i].flags = 2u /* FUTEX2_SIZE_U32 */ | (v[i].shared ? 0u : (unsigned)FASTSYNC__FUTEX_PRIVATE_FLAG);
        kv[i].reserved = 0;
    }
    if (abstime != NULL) {
        kts.tv_sec = (int64_t)abstime->tv_sec;
        kts.tv_nsec = abstime->tv_nsec;
    }
    int saved = errno;
#if FASTSYNC__CANCEL
    /* a deferred cancellation point, as fastsync__wait_sys */
    int type;
    (void)pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
#endif
    long r = syscall(FASTSYNC__SYS_FUTEX_WAITV, (void *)kv, n, 0u, abstime != NULL ? (void *)&kts : (void *)0,
                     (long)clock);
#if FASTSYNC__CANCEL
    (void)pthread_setcanceltype(type, &type);
#endif
    int err = r == -1 ? errno : 0;
    errno = saved;
    if (err == 0 || err == EAGAIN || err == ETIMEDOUT || err == EINTR)
        return err; /* 0: a wake (r: its index); EAGAIN: a word differed */
    /* ENOSYS (before 5.16, qemu-user, a seccomp filter that knows only futex), EPERM:
     * the caller sleeps on one word at a time. EFAULT, EINVAL, ENOMEM: the same, which
     * works wherever fastsync__wait_sys does. */
    return ENOSYS;
}

/* Gives the CPU to another runnable thread, if there is one (the thread that will post,
 * when there are more threads than CPUs); returns at once otherwise. */
FASTSYNC__COLD void fastsync__yield(void)
{
    int saved = errno;
    (void)syscall(SYS_sched_yield);
    errno = saved;
}

#elif defined(FASTSYNC_BACKEND_WINDOWS)
/* ======================================================================================
 * Backend: Windows (8 and later): WaitOnAddress, WakeByAddressSingle, WakeByAddressAll.
 *
 * The pairing is Windows': WaitOnAddress compares the word with the expected value and
 * sleeps as one step against WakeByAddress* on that address. The three functions live in
 * an API set (api-ms-win-core-synch-l1-2-0.dll) that needs an import library of its own
 * (synchronization.lib); so that a user links nothing, they are looked up at their first
 * use. Should the lookup fail (a trimmed system, an emulator without them), or a wait fail
 * for another reason than its timeout, waits sleep in 1 ms slices and look again, as the
 * Linux backend does when the kernel refuses futex: slower, never a busy loop, never a lost
 * wakeup. Windows 8 is the floor all the same: GetSystemTimePreciseAsFileTime is imported.
 *
 * Deadlines: WaitOnAddress takes a relative time in milliseconds. The time left (at most a
 * second, then the deadline is looked at again) is rounded up to a millisecond, and
 * ETIMEDOUT is returned only once the deadline has passed on its own clock: never early.
 * Clocks: CLOCK_MONOTONIC is QueryPerformanceCounter; CLOCK_REALTIME is
 * GetSystemTimePreciseAsFileTime, the epoch of timespec_get(TIME_UTC).
 * What it refuses: FASTSYNC_SHARED (WaitOnAddress is process-private; init says EINVAL).
 * Waits are no cancellation points (Windows has no thread cancellation).
 * ====================================================================================== */

FASTSYNC_API void fastsync__clock_now(clockid_t clock, struct timespec *now)
{
    if (clock == CLOCK_REALTIME) {
        FILETIME ft;
        GetSystemTimePreciseAsFileTime(&ft);
        /* 100 ns units since 1601-01-01, which is 11644473600 s before 1970-01-01 */
        uint64_t t = ((uint64_t)ft.dwHighDateTime << 32 | ft.dwLowDateTime) - 116444736000000000u;
        now->tv_sec = (time_t)(t / 10000000u);
        now->tv_nsec = (long)(t % 10000000u) * 100;
    } else {
        LARGE_INTEGER c, f;
        QueryPerformanceCounter(&c); /* neither fails on Windows XP and later */
        QueryPerformanceFrequency(&f);
        uint64_t n = (uint64_t)c.QuadPart, hz = (uint64_t)f.QuadPart;
        now->tv_sec = (time_t)(n / hz);
        now->tv_nsec = (long)((n % hz) * (uint64_t)FASTSYNC__NSEC_PER_SEC / hz);
    }
}

enum { FASTSYNC__WIN_WAIT, FASTSYNC__WIN_WAKE_ONE, FASTSYNC__WIN_WAKE_ALL };
typedef BOOL(WINAPI *fastsync__wait_on_address_fn)(volatile VOID *, PVOID, SIZE_T, DWORD);
typedef VOID(WINAPI *fastsync__wake_by_address_fn)(PVOID);

/* The address of one of the three functions, or 0 where Windows has none. */
FASTSYNC__COLD uintptr_t fastsync__win_fn(int which)
{
    static const char *const name[3] = { "WaitOnAddress", "WakeByAddressSingle", "WakeByAddressAll" };
    static FASTSYNC__ATOMIC(uintptr_t) fn[3]; /* 0: not looked up; 1: missing; else the address */
    /* relaxed: the address is all that is shared; the code it points to is kernelbase.dll's,
     * mapped in every process before main. Threads that look it up at once find the same. */
    uintptr_t f = fastsync__load(&fn[which], memory_order_relaxed);
    if (f == 0) {
        HMODULE m = LoadLibraryW(L"api-ms-win-core-synch-l1-2-0.dll");
        FARPROC p = m != NULL ? GetProcAddress(m, name[which]) : NULL;
        f = p != NULL ? (uintptr_t)p : 1;
        fastsync__store(&fn[which], f, memory_order_relaxed);
    }
    return f == 1 ? 0 : f;
}

FASTSYNC__COLD int fastsync__wait_sys(void *word, uint32_t expected, int shared,
                                     clockid_t clock, const struct timespec *abstime)
{
    (void)shared; /* always 0: init refuses FASTSYNC_SHARED */
    DWORD ms = INFINITE;
    if (abstime != NULL) {
        ms = fastsync__ms_left(clock, abstime);
        if (ms == 0) return ETIMEDOUT;
    }
    /* relaxed: the caller re-reads the word with the order it needs. A word that differs
     * before the call took no wake (WaitOnAddress cannot say it afterwards). */
    if (fastsync__load((FASTSYNC__ATOMIC(uint32_t) *)word, memory_order_relaxed) != expected)
        return EAGAIN;
    uintptr_t f = fastsync__win_fn(FASTSYNC__WIN_WAIT);
    if (f != 0 && ((fastsync__wait_on_address_fn)f)(word, &expected, sizeof expected, ms))
        return 0; /* woken, the word differed, or spuriously */
    if (f == 0 || GetLastError() != ERROR_TIMEOUT)
        Sleep(1); /* no WaitOnAddress, or it failed: a slice, never a busy loop */
    return abstime != NULL && fastsync__until(clock, abstime) <= 0 ? ETIMEDOUT : 0;
}

FASTSYNC__COLD void fastsync__wake_sys(void *word, int n, int shared)
{
    (void)shared;
    if (n == INT_MAX) {
        uintptr_t f = fastsync__win_fn(FASTSYNC__WIN_WAKE_ALL);
        if (f != 0) ((fastsync__wake_by_address_fn)f)(word);
        return;
    }
    uintptr_t f = fastsync__win_fn(FASTSYNC__WIN_WAKE_ONE);
    while (f != 0 && n-- > 0) ((fastsync__wake_by_address_fn)f)(word);
}

FASTSYNC__COLD void fastsync__yield(void) { (void)SwitchToThread(); }

#elif defined(FASTSYNC_BACKEND_POSIX)
/* ======================================================================================
 * Backend: POSIX wait table (macOS, the BSDs, ...; on Linux with FASTSYNC_BACKEND_POSIX)
 *
 * A waiter queues a node on the stack in one of FASTSYNC__TABLE_SIZE buckets, chosen by the
 * word's address; each bucket is a pthread mutex and a list, each node has its own condition
 * variable. wait locks the bucket, compares the word, queues and sleeps; wake locks the
 * bucket, unqueues up to n nodes of that address and signals each: n means n, as futex's,
 * and a wake on one address wakes no waiter of another that shares its bucket.
 *
 * The pairing: the waker changes the word before it locks the bucket, the waiter compares
 * after it locks it. If the waker locks first, its unlock happens before the waiter's lock,
 * and the waiter's compare sees the new word (or a later one) and does not sleep; if the
 * waiter locks first, it is queued before it unlocks (pthread_cond_wait unlocks atomically),
 * and the wake finds it.
 *
 * One table per process, though the library is one header: the table,
 * fastsync__posix_table_v2, is a weak definition with default visibility (whatever
 * -fvisibility says), emitted by every file that includes this header with this backend,
 * which the linker merges into one per image (executable or shared library) and the
 * dynamic linker binds to one copy across the images that export it; no
 * FASTSYNC_IMPLEMENTATION for the user to place (a forgotten one would be a link error, a
 * duplicated one too: a weak symbol has neither failure mode). Its set-up word is in it, so
 * images never disagree on whether it is set up. Its name carries a layout number, so
 * copies of the header with another layout get their own table and never read each
 * other's (every image must also agree on the internal FASTSYNC__ macros). Where images
 * meet:
 *   - an executable and the shared libraries it is linked with: one table;
 *   - code loaded with dlopen (RTLD_LOCAL too) binds to the copy of the executable or of a
 *     library the executable is linked with, if that image exports it. A library does; an
 *     executable only if a library it is linked with names the table, or if it is linked
 *     with -Wl,--export-dynamic-symbol=fastsync__posix_table_v2 (GNU ld 2.35, gold, lld,
 *     mold; older GNU ld: -Wl,--dynamic-list=FILE, FILE holding
 *     "{ fastsync__posix_table_v2; };") or -rdynamic (every symbol). So a plugin host
 *     compiles at least one file that includes fastsync.h with this backend, and is
 *     linked so (test/posix_dlopen.c is, and shows the wake crossing);
 *   - the cases that keep a table of their own, so that a wait there and a wake elsewhere
 *     never meet: a plugin of a host that does not export a table (not linked as above,
 *     or with no file of fastsync's: then two RTLD_LOCAL plugins have one each, and so
 *     does a library that only plugins depend on, with the first plugin loaded; load one
 *     plugin RTLD_GLOBAL before the others, or fix the host); an image loaded with
 *     RTLD_DEEPBIND or dlmopen; an image linked with -Bsymbolic (-Bsymbolic-functions is
 *     fine), with -Wl,--exclude-libs over an archive holding fastsync code, or whose
 *     version script makes fastsync__* local; the plugins of a static executable (it has
 *     no dynamic symbols to bind to). Objects that never leave one image are never
 *     affected;
 *   - dlclose: the table lives in the image whose copy the others are bound to, which the
 *     dynamic linker keeps loaded while they are (glibc, musl). Every image registers its
 *     own fork handler at its first use, because glibc's dlclose unregisters the handlers
 *     of the image it unloads (musl never unloads); on a system whose dlclose unloads code
 *     but keeps its fork handlers, a fork after the dlclose of a plugin that used the
 *     table would call into unmapped code: link such plugins with -Wl,-z,nodelete;
 *   - macOS (Mach-O, two-level namespaces): whether dyld binds a dlopen'ed image's weak
 *     definition to the executable's is not known here (not measured: no macOS in CI).
 *
 * What it refuses: FASTSYNC_SHARED (a table is in one process; init says EINVAL). What it
 * costs: a sleep and a wake lock a bucket mutex; deadlines are waited for in slices of at
 * most two seconds, each checked against the deadline's clock. The slices are timed on
 * CLOCK_MONOTONIC (the node's condition variable made so with pthread_condattr_setclock),
 * so a step of the real-time clock, either way, neither delays a CLOCK_MONOTONIC deadline
 * nor ends it early, and a CLOCK_REALTIME deadline is seen within a slice of the step. On
 * macOS, which has no pthread_condattr_setclock, they are timed on CLOCK_REALTIME
 * (FASTSYNC__POSIX_SLICE_MONOTONIC 0): a step back there delays a monotonic deadline by up
 * to the step (not measured: no macOS in CI). fork: in the child, a handler
 * (pthread_atfork) empties every bucket and makes its lock anew: a node queued in the
 * parent is a thread the child does not have, which a wake must not pick (the child's own
 * waiter would sleep on) and whose stack the child's threads may reuse, and a lock held by
 * one would never be unlocked. Making a lock anew that may be held (pthread_mutex_init
 * over the child's copy) is what POSIX leaves undefined; glibc and musl do it as a plain
 * initialisation (tested here), other systems are not measured. Nothing is locked around
 * the fork (no prepare handler), so the program's own prepare and parent handlers may use
 * fastsync objects; a child handler that runs before the table is made anew (one
 * registered before every image's first use of the table) must not, if another thread may
 * have been in the table at the fork. A fork during the table's set-up leaves the child's
 * first use to set it up again.
 * ====================================================================================== */
#if !defined(__GNUC__)
#error "fastsync.h: the POSIX backend needs a weak definition (gcc, clang)"
#endif

#ifndef FASTSYNC__TABLE_SIZE
#define FASTSYNC__TABLE_SIZE 64 /* buckets; a power of two (a GenMC harness sets 1) */
#endif

/* The clock of the slices (above): CLOCK_MONOTONIC where pthread_condattr_setclock exists
 * (1), else CLOCK_REALTIME (0). */
#ifndef FASTSYNC__POSIX_SLICE_MONOTONIC
#if defined(__APPLE__)
#define FASTSYNC__POSIX_SLICE_MONOTONIC 0
#else
#define FASTSYNC__POSIX_SLICE_MONOTONIC 1
#endif
#endif
#define FASTSYNC__POSIX_SLICE_CLOCK (FASTSYNC__POSIX_SLICE_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME)

/* The table's timed sleep, pthread_cond_timedwait; a test replaces it to see the deadline
 * of every slice (test/posix_slice_deadline.c). */
#ifndef FASTSYNC__POSIX_TIMEDWAIT
#define FASTSYNC__POSIX_TIMEDWAIT pthread_cond_timedwait
#endif

struct fastsync__node {
    struct fastsync__node *next, *prev;
    void *word;
    int woken;               /* set by the waker, under the bucket's lock */
    pthread_cond_t cond;
};

struct fastsync__bucket {
    pthread_mutex_t lock;
    struct fastsync__node head; /* a ring: head.next is the oldest waiter */
    char pad[64];               /* keeps neighbouring buckets' locks off one cache line */
};

struct fastsync__table {
    /* Set-up, once per process by whichever image uses the table first: 0 none; 2 done
     * (its release store pairs with the acquire load of every later use); else
     * (pid << 2) | 1, under way in a thread of process pid, so that the child of a fork
     * made meanwhile, which has no such thread, sees another pid and takes it over. */
    uint32_t ready;
    pthread_condattr_t attr; /* the nodes' (the slices' clock): made once, at set-up */
    struct fastsync__bucket bucket[FASTSYNC__TABLE_SIZE];
};

/* The table, one per process: a weak definition with default visibility (whatever the
 * build's -fvisibility), so that the dynamic linker binds every image that names it to one
 * copy (the manual, above, says when it cannot). It is self-contained: its set-up word is
 * in it, so that images never disagree on whether it is set up. */
__attribute__((weak, visibility("default"))) struct fastsync__table fastsync__posix_table_v2;
#define FASTSYNC__TABLE fastsync__posix_table_v2

/* This image's first use of the table (hidden: one flag per executable or shared library),
 * which registers this image's fork handler: dlclose unregisters the handlers of the image
 * it unloads, which may be the one that set the table up. */
__attribute__((weak, visibility("hidden"))) pthread_once_t fastsync__posix_image_once_v2 = PTHREAD_ONCE_INIT;

#define FASTSYNC__TABLE_READY 2u

/* Every bucket empty, its lock new (at set-up, and in the child of a fork). */
FASTSYNC__COLD void fastsync__table_buckets_init(void)
{
    for (int i = 0; i < FASTSYNC__TABLE_SIZE; i++) {
        struct fastsync__bucket *b = &FASTSYNC__TABLE.bucket[i];
        (void)pthread_mutex_init(&b->lock, NULL);
        b->head.next = b->head.prev = &b->head;
    }
}

/* The child of a fork (each image's handler; the first does the work, the others do it
 * again, harmlessly): every queued node is a thread of the parent's, and a bucket's lock
 * may be held by one, which nobody here will unlock: each bucket is emptied and its lock
 * made anew. Nothing is locked around the fork (no prepare or parent handler), so a fork
 * handler of the program's own may use fastsync objects. One thread here: plain access. */
FASTSYNC__COLD void fastsync__table_child(void)
{
    if (__atomic_load_n(&FASTSYNC__TABLE.ready, __ATOMIC_RELAXED) != FASTSYNC__TABLE_READY)
        return; /* a set-up under way at the fork: the next use takes it over */
    fastsync__table_buckets_init();
}

FASTSYNC__COLD void fastsync__table_setup(void)
{
    fastsync__table_buckets_init();
    (void)pthread_condattr_init(&FASTSYNC__TABLE.attr);
#if FASTSYNC__POSIX_SLICE_MONOTONIC
    (void)pthread_condattr_setclock(&FASTSYNC__TABLE.attr, CLOCK_MONOTONIC);
#endif
    /* release: pairs with the acquire loads of every other image's and thread's use */
    __atomic_store_n(&FASTSYNC__TABLE.ready, FASTSYNC__TABLE_READY, __ATOMIC_RELEASE);
}

/* This image's first use: sets the table up if no thread of this process has (or waits
 * for the one that is), then registers this image's fork handler (after: the handler
 * never meets a table being set up in this process). */
FASTSYNC__COLD void fastsync__table_image_init(void)
{
    uint32_t mine = ((uint32_t)getpid() << 2) | 1u, v = 0;
    for (unsigned i = 0;; i++) {
        /* acquire (success and failure): pairs with the release store of READY in
         * fastsync__table_setup (a failure that reads it may use the table at once); a
         * success takes 0 or a set-up of another process's, whose writes it redoes. */
        if (v != mine && __atomic_compare_exchange_n(&FASTSYNC__TABLE.ready, &v, mine, 0,
                                                     __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
            fastsync__table_setup();
            break;
        }
        if (v == FASTSYNC__TABLE_READY) break;
        if (v != mine) continue; /* another process's set-up, cut by a fork: take it over */
        /* a thread of this process sets it up (microseconds): yield, then sleep, so that
         * a waiter of higher priority cannot keep it from the CPU */
        if (i < 64) {
            (void)sched_yield();
        } else {
            struct timespec ms = { 0, 1000000 };
            (void)nanosleep(&ms, NULL);
        }
        v = __atomic_load_n(&FASTSYNC__TABLE.ready, __ATOMIC_ACQUIRE); /* as the CAS's */
    }
    (void)pthread_atfork(NULL, NULL, fastsync__table_child);
}

FASTSYNC__COLD struct fastsync__bucket *fastsync__bucket_of(void *word)
{
    /* pthread_once: every later call in this image happens after the init's return, so
     * after its acquire of READY */
    (void)pthread_once(&fastsync__posix_image_once_v2, fastsync__table_image_init);
    return &FASTSYNC__TABLE.bucket[fastsync__addr_hash((uintptr_t)word, FASTSYNC__TABLE_SIZE)];
}

FASTSYNC__COLD void fastsync__node_unlink(struct fastsync__node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
}

struct fastsync__sleep {
    struct fastsync__bucket *b;
    struct fastsync__node *n;
};

/* A cancelled sleeper (pthread_cond_*wait is a cancellation point; it returns to this
 * handler with the lock held): leaves the queue if no wake took it out, and unlocks. */
FASTSYNC__COLD void fastsync__sleep_cancelled(void *arg)
{
    struct fastsync__sleep *z = (struct fastsync__sleep *)arg;
    if (!z->n->woken) fastsync__node_unlink(z->n);
    (void)pthread_mutex_unlock(&z->b->lock);
    (void)pthread_cond_destroy(&z->n->cond);
}

FASTSYNC__COLD int fastsync__wait_sys(void *word, uint32_t expected, int shared,
                                     clockid_t clock, const struct timespec *abstime)
{
    (void)shared; /* always 0: init refuses FASTSYNC_SHARED */
    struct fastsync__node n;
    struct fastsync__sleep z = { fastsync__bucket_of(word), &n };
    int err = 0;
#if FASTSYNC__THREAD_CANCEL && !FASTSYNC__CANCEL
    /* pthread_cond_wait is a cancellation point; with FASTSYNC_NO_CANCEL the waits are none */
    int state;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
#endif
    (void)pthread_mutex_lock(&z.b->lock);
    /* relaxed: the bucket's lock orders it (see above); the caller re-reads the word with
     * the order it needs. */
    if (__atomic_load_n((uint32_t *)word, __ATOMIC_RELAXED) != expected) {
        err = EAGAIN; /* no wake taken */
    } else {
        n.word = word;
        n.woken = 0;
        (void)pthread_cond_init(&n.cond, &FASTSYNC__TABLE.attr);
        n.prev = z.b->head.prev;
        n.next = &z.b->head;
        n.prev->next = n.next->prev = &n;
#if FASTSYNC__CANCEL
        pthread_cleanup_push(fastsync__sleep_cancelled, &z);
#endif
        while (!n.woken && err == 0) {
            if (abstime == NULL) {
                (void)pthread_cond_wait(&n.cond, &z.b->lock);
                continue;
            }
            /* a slice of at most two seconds on the slices' clock, then the deadline's own */
            int64_t left = fastsync__until(clock, abstime);
            if (left <= 0) {
                err = ETIMEDOUT;
                break;
            }
            struct timespec t;
            fastsync__clock_now(FASTSYNC__POSIX_SLICE_CLOCK, &t);
            fastsync__ts_add(&t, (uint64_t)left); /* up to 2 s: in 64 bits */
            (void)FASTSYNC__POSIX_TIMEDWAIT(&n.cond, &z.b->lock, &t);
        }
#if FASTSYNC__CANCEL
        pthread_cleanup_pop(0);
#endif
        if (!n.woken) fastsync__node_unlink(&n);
        (void)pthread_cond_destroy(&n.cond);
    }
    (void)pthread_mutex_unlock(&z.b->lock);
#if FASTSYNC__THREAD_CANCEL && !FASTSYNC__CANCEL
    (void)pthread_setcancelstate(state, &state);
#endif
    return err;
}

FASTSYNC__COLD void fastsync__wake_sys(void *word, int n, int shared)
{
    (void)shared;
    struct fastsync__bucket *b = fastsync__bucket_of(word);
    (void)pthread_mutex_lock(&b->lock);
    for (struct fastsync__node *x = b->head.next, *next; x != &b->head && n > 0; x = next) {
        next = x->next;
        if (x->word != word) continue;
        fastsync__node_unlink(x);
        x->woken = 1;
        (void)pthread_cond_signal(&x->cond); /* under the lock: x stays alive until we unlock */
        n--;
    }
    (void)pthread_mutex_unlock(&b->lock);
}

FASTSYNC__COLD void fastsync__yield(void) { (void)sched_yield(); }

#elif defined(FASTSYNC_BACKEND_OS2)
/* ======================================================================================
 * Backend: OS/2 (fastsync_os2.h, its part 2): a wait table on OS/2 semaphores, shared by
 * every process, and the atomics where the compiler has none. Its manual is at its top.
 * ====================================================================================== */
#include "fastsync_os2.h"
#endif /* backends */

/* No multi-wait: the caller sleeps on one word at a time (fastsync__wa_sleep). */
FASTSYNC__COLD int fastsync__waitv_none(const struct fastsync__waitv *v, unsigned n,
                                        clockid_t clock, const struct timespec *abstime)
{
    (void)v;
    (void)n;
    (void)clock;
    (void)abstime;
    return ENOSYS;
}
#ifndef FASTSYNC__HAS_WAITV
#define fastsync__waitv_sys fastsync__waitv_none /* the backends without one */
#endif

/* The replaceable layer: fault injection, counting, another kernel (see FASTSYNC_FUTEX_WAIT
 * in the manual). A program that replaces the wait but not the multi-wait gets none: its
 * multi-waits then go through its wait, one word at a time, as its wake expects (a sleeper
 * in futex_waitv would never see a wake that is not FUTEX_WAKE). What the program replaced is
 * noted first: fastsync.hpp names its configuration after it (FASTSYNC__HPP_CONFIG). */
#ifdef FASTSYNC_FUTEX_WAIT
#define FASTSYNC__WAIT_REPLACED 1
#endif
#ifdef FASTSYNC_FUTEX_WAKE
#define FASTSYNC__WAKE_REPLACED 1
#endif
#ifdef FASTSYNC_FUTEX_WAITV
#define FASTSYNC__WAITV_REPLACED 1
#endif
#ifndef FASTSYNC_FUTEX_WAITV
#ifdef FASTSYNC_FUTEX_WAIT
#define FASTSYNC_FUTEX_WAITV fastsync__waitv_none
#else
#define FASTSYNC_FUTEX_WAITV fastsync__waitv_sys
#endif
#endif
#ifndef FASTSYNC_FUTEX_WAIT
#define FASTSYNC_FUTEX_WAIT fastsync__wait_sys
#endif
#ifndef FASTSYNC_FUTEX_WAKE
#define FASTSYNC_FUTEX_WAKE fastsync__wake_sys
#endif

FASTSYNC__COLD int fastsync__wait(void *word, uint32_t expected, int shared, clockid_t clock,
                                  const struct timespec *abstime)
{
    return FASTSYNC_FUTEX_WAIT(word, expected, shared, clock, abstime);
}

FASTSYNC__COLD void fastsync__wake(void *word, int n, int shared)
{
    FASTSYNC_FUTEX_WAKE(word, n, shared);
}

FASTSYNC__COLD int fastsync__wait_many(const struct fastsync__waitv *v, unsigned n, clockid_t clock,
                                   const struct timespec *abstime)
{
    return FASTSYNC_FUTEX_WAITV(v, n, clock, abstime);
}

/* The seam takes a word's address as a plain pointer: only the backend reads the word
 * through it (the kernel; the POSIX table with an atomic load of the 32 bits). (Through
 * uintptr_t: a direct cast would drop _Atomic.) */
#define FASTSYNC__FUTEX_ADDR(p) ((void *)(uintptr_t)(p))

/* A hint to the CPU inside a spin loop (lets the sibling hyperthread run, saves power). */
FASTSYNC_API void fastsync__cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && (defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7))
    __asm__ __volatile__("yield" ::: "memory");
#elif defined(FASTSYNC__LOCKED_ATOMICS)
    /* nothing: every poll is a locked operation, a kernel call */
#else
    atomic_signal_fence(memory_order_seq_cst); /* compiler barrier only */
#endif
}

/* The bounded spin before a sleep: a waiter calls fastsync__spin_start once, then
 * fastsync__spin after each failed poll, which takes one step and returns 1, or returns 0,
 * taking none, once the spin is over. Two kinds:
 *   pausing   (yields 0) CPU pauses for up to FASTSYNC_SPIN_NS, backing off: the k-th poll
 *             comes after 2^min(k, FASTSYNC__SPIN_BACKOFF) pauses (1, 2, 4, ... 64), so a
 *             spinner reads the word less often the longer it waits and leaves its cache
 *             line to the holder. For a waiter whose spin holds others back (a writer not
 *             yet registered lets new readers in), whose deadline a yield could overshoot by
 *             a time slice (every timed wait), or whose yield costs more than it saves (a
 *             mutex's lock: see "Mutexes" below);
 *   yielding  (yields 1) up to FASTSYNC_SPIN pauses (and no longer than FASTSYNC_SPIN_NS),
 *             then up to FASTSYNC_SPIN_YIELDS yields while FASTSYNC_SPIN_YIELDS_NS have not
 *             passed since the first: the untimed waits.
 * FASTSYNC_SPIN 0 turns both off. Time is read on CLOCK_MONOTONIC before the first poll that
 * comes FASTSYNC__SPIN_CHECK pauses or more after the last reading, first after the first
 * FASTSYNC__SPIN_CHECK - 1 (a spin that succeeds sooner reads no clock), and before every
 * yield. Time, not a count of steps, bounds the spin: a pause costs
 * from a few to over a hundred cycles by CPU, a yield from a system call to a whole time
 * slice (Linux's EEVDF puts the yielder behind every runnable thread), and a thread
 * preempted in its spin stops at its next reading.
 * Measured with bench/latency --quick (4 threads on 2 CPUs, alone and beside 4 busy threads;
 * 3 runs each, fastsync 0.3's spin, 20 pauses and 16 yields with no time bound, against this
 * one, in one session; 2-vCPU AMD EPYC VM, Linux 6.18, glibc 2.36, 2026-12-05):
 *   a writer's wait under 4 readers (50-200 us holds), median   23-45 ms -> 0.12-0.15 ms
 *                                       (glibc PREFER_WRITER_NONRECURSIVE 0.14-0.33 ms)
 *   1 ms timed waits beside 4 busy threads, overshoot p99:      19-59 ms -> 0.08-0.14 ms
 *   rwlock, 2 readers and 2 writers, 0.1-0.5 us holds, writer locks/s: 0.6-1.4 k -> 0.7-1.0 M
 *   latch and barrier rounds/s alone (yields kept):             208-303 k -> 230-429 k
 * Yields stay for the untimed waits: without them 4 threads meeting at a barrier on 2 CPUs
 * made 30-60 k rounds/s (glibc's 240 k) instead of 390-430 k, 2 threads 85 k instead of
 * 1.3 M, and 4 semaphore ping-pong pairs on 2 CPUs took 30 us a round trip instead of 5: a
 * waiter that shares its CPU with the thread it waits for only wastes its pauses. Beside
 * busy threads a latch or barrier round still costs a stretched yield (about 250 rounds/s,
 * glibc's barrier 71 k): the untimed waits of the latch and barrier keep that cost.
 * Mutexes: a mutex's waiter does not yield. A lock user that yields to another lock user on
 * its CPU waits for that one's turn, and the yields were the tail of the spinning regime:
 * bench/latency, hold and think 0.1-0.5 us, 4 / 8 threads on 2 CPUs alone, p99 29 / 66 us
 * with yields (glibc's 0.15 / 34 us), 2.6 / 1.7 us pausing with back-off, and lock+unlock/s
 * 1.50 / 1.44 M -> 1.58 / 1.70 M; beside 4 busy threads at 8 threads the slowest thread's
 * share 0.01 -> 0.28. Pausing without back-off cut the p99 further (0.7 us) but polled the
 * word so often that bench/mutex's contended loop (no think time) fell from 7-14 M pairs/s
 * to 7-9 M; with the back-off it makes 10-11 M at 2 threads (7-8 M with yields) and 10-13 M
 * at 4 and 8 (12-14 M). (2-vCPU Intel Xeon VM, Linux 6.18, glibc 2.36, 2026-12-06, medians of
 * 3 runs, the builds in turn; the contended loop varies by about 1.5x between runs.) */
struct fastsync__spinner {
    int phase;   /* 0 pausing, 1 yielding, 2 over */
    int yields;  /* the yielding kind */
    int steps;   /* steps taken in this phase */
    int64_t pauses; /* pauses taken (phase 0) */
    int64_t check;  /* the pause count at which the clock is read next (phase 0) */
    int64_t end; /* this phase's end, ns on CLOCK_MONOTONIC; 0: not read yet */
};

FASTSYNC_API int64_t fastsync__mono_ns(void)
{
    struct timespec t;
    fastsync__clock_now(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * FASTSYNC__NSEC_PER_SEC + t.tv_nsec;
}

FASTSYNC_API void fastsync__spin_start(struct fastsync__spinner *sp, int yields)
{
    sp->phase = FASTSYNC_SPIN > 0 ? 0 : 2;
    sp->yields = yields;
    sp->steps = 0;
    sp->pauses = 0;
    sp->check = FASTSYNC__SPIN_CHECK - 1;
    sp->end = 0;
}

FASTSYNC_API int fastsync__spin(struct fastsync__spinner *sp)
{
    if (sp->phase == 0) {
        int i = sp->steps++;
        int over = sp->yields && i >= FASTSYNC_SPIN;
        if (!over && sp->pauses >= sp->check) {
            int64_t now = fastsync__mono_ns();
            sp->check = sp->pauses + FASTSYNC__SPIN_CHECK;
            if (sp->end == 0)
                sp->end = now + FASTSYNC_SPIN_NS;
            else
                over = now >= sp->end;
        }
        if (!over) {
            /* the yielding kind polls after every pause; the pausing kind backs off */
            int n = sp->yields ? 1 : 1 << (i < FASTSYNC__SPIN_BACKOFF ? i : FASTSYNC__SPIN_BACKOFF);
            sp->pauses += n;
            while (n-- > 0) fastsync__cpu_relax();
            return 1;
        }
        sp->phase = sp->yields && FASTSYNC_SPIN_YIELDS > 0 ? 1 : 2;
        sp->steps = 0;
        sp->end = 0;
    }
    if (sp->phase == 1) {
        int64_t now = fastsync__mono_ns();
        if (sp->end == 0) sp->end = now + FASTSYNC_SPIN_YIELDS_NS;
        if (sp->steps < FASTSYNC_SPIN_YIELDS && now < sp->end) {
            sp->steps++;
            fastsync__yield();
            return 1;
        }
        sp->phase = 2;
    }
    return 0;
}

/* A sleep on one word for at most `slice` ns timed on CLOCK_MONOTONIC, so that a step of the
 * real-time clock neither stretches nor cuts it, and no longer than what is left of the
 * deadline `abstime` on `clock` (NULL: none). For a waiter that no wake is sure to reach
 * (it looks again after each slice). Returns ETIMEDOUT once that deadline has passed, else
 * 0; *woke (if not NULL): what the sleep itself returned, 0 where it may have taken a wake. */
FASTSYNC__COLD int fastsync__wait_slice(void *word, uint32_t expected, int shared, uint64_t slice,
                                        clockid_t clock, const struct timespec *abstime, int *woke)
{
    if (abstime != NULL) {
        int64_t left = fastsync__until(clock, abstime);
        if (left < (int64_t)slice) slice = left > 0 ? (uint64_t)left : 0; /* 0: no sleep */
    }
    struct timespec end;
    fastsync__clock_now(CLOCK_MONOTONIC, &end);
    fastsync__ts_add(&end, slice);
    int r = fastsync__wait(word, expected, shared, CLOCK_MONOTONIC, &end);
    if (woke != NULL) *woke = r;
    return abstime != NULL && fastsync__until(clock, abstime) <= 0 ? ETIMEDOUT : 0;
}

/* An untimed sleep that is not a cancellation point (once, barrier: as pthread_once and
 * pthread_barrier_wait): cancellation is disabled around the sleep only, so a wait that never
 * sleeps makes no pthread_setcancelstate calls (glibc's are two RMWs). */
FASTSYNC__COLD void fastsync__wait_uncancellable(void *word, uint32_t expected, int shared)
{
#if FASTSYNC__CANCEL
    int cancel;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
#endif
    (void)fastsync__wait(word, expected, shared, CLOCK_MONOTONIC, NULL);
#if FASTSYNC__CANCEL
    (void)pthread_setcancelstate(cancel, &cancel);
#endif
}

/* ======================================================================================
 * Deadlines
 * ====================================================================================== */

FASTSYNC_API struct timespec fastsync_deadline_in(uint64_t ns)
{
    /* all of it: a 32-bit ABI's 64-bit timespec has padding that a backend's clock (OS/2's
     * timer) leaves unwritten, and returning it unset is -Wmaybe-uninitialized */
    struct timespec t = { 0, 0 };
    fastsync__clock_now(CLOCK_MONOTONIC, &t);
    fastsync__ts_add(&t, ns);
    return t;
}

/* The flags every init accepts: 0, or FASTSYNC_SHARED where the backend has it. */
FASTSYNC_API int fastsync__flags_ok(int flags)
{
    return flags == 0 || (flags == FASTSYNC_SHARED && FASTSYNC_HAS_SHARED);
}

/* The arguments every clockwait checks before anything else: EINVAL or 0. */
FASTSYNC_API int fastsync__clock_args(clockid_t clock, const struct timespec *abstime)
{
    if (abstime == NULL) return EINVAL;
    return clock == CLOCK_MONOTONIC || clock == CLOCK_REALTIME ? 0 : EINVAL;
}

/* Called once a wait knows it would block: EINVAL for a malformed deadline, ETIMEDOUT for
 * one already past (no syscall: on Linux clock_gettime is served by the vDSO), else 0. */
FASTSYNC_API int fastsync__deadline_check(clockid_t clock, const struct timespec *abstime)
{
    if (abstime->tv_nsec < 0 || abstime->tv_nsec >= FASTSYNC__NSEC_PER_SEC) return EINVAL;
    if (FASTSYNC__SEC_NEGATIVE(abstime->tv_sec)) return ETIMEDOUT;
    return fastsync__until(clock, abstime) <= 0 ? ETIMEDOUT : 0;
}

/* ======================================================================================
 * The seam, public: fastsync_wait32 and fastsync_wake32 ("Waiting on an address" in the
 * manual). Entry points over fastsync__wait and fastsync__wake, the primitives' own layer
 * (FASTSYNC_FUTEX_WAIT and _WAKE replace it for both): only the argument checks and the
 * mapping of the seam's returns are theirs.
 * ====================================================================================== */

typedef FASTSYNC__ATOMIC(uint32_t) fastsync_word32_t;

/* The sleep of a wait whose arguments are checked: 0 or ETIMEDOUT. The seam's EAGAIN (the
 * word differed) is a 0; its EINTR (a signal, no wake taken) sleeps again to the same
 * deadline. */
FASTSYNC__COLD int fastsync__wait32_sleep(const fastsync_word32_t *addr, uint32_t expected, int flags,
                                          clockid_t clock, const struct timespec *abstime)
{
    int r;
    do r = fastsync__wait(FASTSYNC__FUTEX_ADDR(addr), expected, flags, clock, abstime);
    while (r == EINTR);
    return r == ETIMEDOUT ? ETIMEDOUT : 0;
}

FASTSYNC_API int fastsync_wait32(const fastsync_word32_t *addr, uint32_t expected, int flags)
{
    if (!fastsync__flags_ok(flags)) return EINVAL;
    /* relaxed: a look that saves the system call when the word differs already; the
     * backend compares again, atomically with the wake, and the caller re-reads the word
     * with the order it needs (the manual). */
    if (fastsync__load(addr, memory_order_relaxed) != expected) return 0;
    return fastsync__wait32_sleep(addr, expected, flags, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_clockwait32(const fastsync_word32_t *addr, uint32_t expected, int flags,
                                      clockid_t clock, const struct timespec *abs)
{
    int r = fastsync__clock_args(clock, abs);
    if (r != 0 || !fastsync__flags_ok(flags)) return EINVAL;
    /* relaxed: as fastsync_wait32's */
    if (fastsync__load(addr, memory_order_relaxed) != expected) return 0;
    if ((r = fastsync__deadline_check(clock, abs)) != 0) return r;
    return fastsync__wait32_sleep(addr, expected, flags, clock, abs);
}

FASTSYNC_API int fastsync_timedwait32(const fastsync_word32_t *addr, uint32_t expected, int flags,
                                      const struct timespec *abs_monotonic)
{
    return fastsync_clockwait32(addr, expected, flags, CLOCK_MONOTONIC, abs_monotonic);
}

FASTSYNC_API int fastsync_wake32(const fastsync_word32_t *addr, unsigned n, int flags)
{
    if (!fastsync__flags_ok(flags)) return EINVAL;
    if (n == 0) return 0;
    /* INT_MAX: the seam's "all" */
    fastsync__wake(FASTSYNC__FUTEX_ADDR(addr), n >= (unsigned)INT_MAX ? INT_MAX : (int)n, flags);
    return 0;
}

FASTSYNC_API int fastsync_wake32_all(const fastsync_word32_t *addr, int flags)
{
    return fastsync_wake32(addr, INT_MAX, flags);
}

#ifndef FASTSYNC__DESTROY_NS
#define FASTSYNC__DESTROY_NS 1000000000u /* a destroy's limit without progress; 0 (a GenMC
                                          * harness): none, and no yield: a plain spin */
#endif

/* A destroy's wait for the threads that a condition variable or a barrier released and that
 * still use the object: left(obj) is their number, which each counts down with a release
 * RMW that is its last access, read with an acquire load; `first` is the caller's own
 * acquire load of it. 0 once it reads 0 (acquire: every
 * such thread's last access happens before the return, so the memory may be freed); EBUSY
 * as soon as busy(obj) says the object is in use again (misuse), or after
 * FASTSYNC__DESTROY_NS in which the count did not fall (one of them died). Yields between
 * looks. */
FASTSYNC__COLD int fastsync__drain(uint32_t (*left)(void *), uint32_t first, int (*busy)(void *),
                                   void *obj)
{
#if FASTSYNC__DESTROY_NS > 0
    struct timespec limit = fastsync_deadline_in(FASTSYNC__DESTROY_NS);
#endif
    while (first != 0) {
        if (busy(obj)) return EBUSY;
#if FASTSYNC__DESTROY_NS > 0
        if (fastsync__until(CLOCK_MONOTONIC, &limit) <= 0) return EBUSY; /* one died */
        fastsync__yield();
#endif
        uint32_t now = left(obj); /* acquire: as the caller's first load */
#if FASTSYNC__DESTROY_NS > 0
        if (now < first) limit = fastsync_deadline_in(FASTSYNC__DESTROY_NS);
#endif
        first = now;
    }
    return 0;
}

/* ======================================================================================
 * Semaphore
 *
 * State: one 64-bit atomic word.
 *   bits  0..31  tokens   the semaphore's value, 0..FASTSYNC_SEM_VALUE_MAX. These 32 bits
 *                         are the futex word: waiters sleep while it reads 0.
 *   bits 32..62  waiters  threads registered in the slow path (may be asleep or about to be)
 *   bit  63      shared   FASTSYNC_SHARED given at init; never changes afterwards
 * Keeping tokens and waiters in one word is the point: post reads "is anyone waiting?"
 * from the very RMW that publishes its token, so no waiter can register unseen between
 * the two (the lost wakeup of semaphores that read a waiter count separately, or skip the
 * wake because the value was already positive), and post never reads the object again.
 *
 * Transitions (each a single RMW on the word):
 *   post        tokens += n                      then FUTEX_WAKE min(n, waiters) if waiters > 0
 *   take        tokens -= 1                      (fast path, trywait, spinning)
 *   register    waiters += 1                     (before the first sleep)
 *   take+leave  tokens -= 1, waiters -= 1        (a registered waiter that got a token)
 *   leave       waiters -= 1                     (a registered waiter that timed out, seeing
 *                                                 no token in the same RMW)
 * Token conservation follows: a token leaves the word only through take or take+leave, and
 * each of those is one successful wait. A timed-out waiter deregisters with a CAS that
 * fails if a token has arrived; it then takes the token and succeeds instead.
 * ====================================================================================== */

/* 8-aligned explicitly: gcc before 11.1 gives an _Atomic 64-bit member only 4-byte alignment
 * on i386, where the word could then straddle a cache line (and a locked RMW split-lock). */
#ifdef __cplusplus
#define FASTSYNC__ALIGN8 alignas(8)
#elif defined(FASTSYNC__LOCKED_ATOMICS)
#define FASTSYNC__ALIGN8 /* the word is read and written under a lock only */
#elif defined(__GNUC__)
/* (the attribute rather than _Alignas, which makes gcc >= 11 note on i386 that the alignment
 * of _Atomic 64-bit fields changed in 11.1: with the explicit alignment it did not) */
#define FASTSYNC__ALIGN8 __attribute__((aligned(8)))
#else
#define FASTSYNC__ALIGN8 _Alignas(8)
#endif

typedef struct fastsync_sem {
    FASTSYNC__ALIGN8 FASTSYNC__ATOMIC(uint64_t) state; /* private: use the functions */
} fastsync_sem_t;

/* FASTSYNC_SEM_INIT(n): n must be an integer constant expression in 0..FASTSYNC_SEM_VALUE_MAX;
 * anything else does not compile (C: a bit-field of negative width, whose name says why;
 * C++: the static_assert of fastsync__sem_init_value, defined after the extern "C" block).
 * A value from a variable goes through fastsync_sem_init, which says EINVAL. */
#ifdef __cplusplus
/* (inner braces: std::atomic cannot be copy-initialized before C++17) */
#define FASTSYNC_SEM_INIT(n) { { fastsync__sem_init_value<(n)>::value } }
#else
#define FASTSYNC__SEM_INIT_CHECK(n)                                                          \
    (0 * sizeof(struct {                                                                   \
         int fastsync_sem_init_value_out_of_range                                          \
             : ((n) == 0 || ((n) > 0 && (n) <= FASTSYNC_SEM_VALUE_MAX)) ? 1 : -1;           \
     }))
#define FASTSYNC_SEM_INIT(n) { (uint64_t)(n) + FASTSYNC__SEM_INIT_CHECK(n) }
#endif

#define FASTSYNC__SEM_TOKENS 0xffffffffu                     /* mask of the token field */
#define FASTSYNC__SEM_WAITER ((uint64_t)1 << 32)             /* one registered waiter */
#define FASTSYNC__SEM_WAITERS ((uint64_t)0x7fffffff << 32)   /* mask of the waiter field */
#define FASTSYNC__SEM_SHARED ((uint64_t)1 << 63)             /* process-shared flag */

FASTSYNC_API uint32_t fastsync__sem_tokens(uint64_t v) { return (uint32_t)(v & FASTSYNC__SEM_TOKENS); }
FASTSYNC_API uint32_t fastsync__sem_waiters(uint64_t v) { return (uint32_t)((v & FASTSYNC__SEM_WAITERS) >> 32); }
FASTSYNC_API int fastsync__sem_shared(uint64_t v) { return (v & FASTSYNC__SEM_SHARED) != 0; }

/* The address of the low 32 bits of a 64-bit word at `word` (the semaphore's, the
 * condition variable's and the barrier's futex word): its second half on a big-endian
 * CPU. */
FASTSYNC_API void *fastsync__low_half(void *word)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (uint32_t *)word + 1;
#else
    return word;
#endif
}

/* The address of the high 32 bits of a 64-bit word at `word` (the reader-writer lock's
 * writers' futex word): its first half on a big-endian CPU. */
FASTSYNC_API void *fastsync__high_half(void *word)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return word;
#else
    return (uint32_t *)word + 1;
#endif
}

/* The address of the token half, the futex word (computed, never read, by post). */
FASTSYNC_API void *fastsync__sem_futex(fastsync_sem_t *s)
{
    return fastsync__low_half(FASTSYNC__FUTEX_ADDR(&s->state));
}

FASTSYNC_API int fastsync_sem_init(fastsync_sem_t *s, unsigned value, int flags)
{
    if (value > FASTSYNC_SEM_VALUE_MAX || !fastsync__flags_ok(flags)) return EINVAL;
    uint64_t v = value;
    if (flags & FASTSYNC_SHARED) v |= FASTSYNC__SEM_SHARED;
    /* relaxed: before init returns no other thread may use the object; the caller publishes
     * it (thread creation, a mutex, fork) with its own happens-before. */
    fastsync__store(&s->state, v, memory_order_relaxed);
    return 0;
}

FASTSYNC_API int fastsync_sem_destroy(fastsync_sem_t *s)
{
    /* relaxed: a snapshot; destroying while others may still register is the caller's bug,
     * EBUSY is a courtesy for the case it can see. */
    uint64_t v = fastsync__load(&s->state, memory_order_relaxed);
    return fastsync__sem_waiters(v) != 0 ? EBUSY : 0;
}

FASTSYNC_API int fastsync_sem_post_n(fastsync_sem_t *s, unsigned n)
{
    if (n == 0) return 0;
    /* relaxed: only a guess for the CAS, which reads the word again atomically. */
    uint64_t old = fastsync__load(&s->state, memory_order_relaxed);
    do {
        /* tokens + n > max, without a wrap for any n and any word (even one holding more
         * than the max, which no call makes); one compare when n is a constant. */
        if (n > (unsigned)FASTSYNC_SEM_VALUE_MAX ||
            fastsync__sem_tokens(old) > (unsigned)FASTSYNC_SEM_VALUE_MAX - n)
            return EOVERFLOW;
        /* release: pairs with the acquire CAS of the wait that takes one of these tokens
         * (fastsync__sem_take, fastsync__sem_wait_slow); failure relaxed: retried. */
    } while (!fastsync__cas_weak(&s->state, &old, old + n,
                                 memory_order_release, memory_order_relaxed));
    /* From here on `s` may be freed by a waiter that took a token: only its address is used. */
    uint32_t waiters = fastsync__sem_waiters(old);
    if (waiters != 0)
        fastsync__wake(fastsync__sem_futex(s), (int)(n < waiters ? n : waiters),
                             fastsync__sem_shared(old));
    return 0;
}

FASTSYNC_API int fastsync_sem_post(fastsync_sem_t *s) { return fastsync_sem_post_n(s, 1); }

/* Takes a token if there is one, given `old` as a fresh guess of the word; retries only
 * while tokens are there, so it never fails spuriously. Returns 0 or EAGAIN. */
FASTSYNC_API int fastsync__sem_take(fastsync_sem_t *s, uint64_t old)
{
    while (fastsync__sem_tokens(old) != 0) {
        /* acquire: pairs with the release CAS in fastsync_sem_post_n that published the
         * token; failure relaxed: `old` is only the next guess. */
        if (fastsync__cas_weak(&s->state, &old, old - 1,
                               memory_order_acquire, memory_order_relaxed))
            return 0;
    }
    return EAGAIN;
}

/* The spin loop's take: as fastsync__sem_take, but it gives up (EAGAIN) as soon as the word
 * shows a registered waiter, also after a failed CAS: a token posted then belongs to the
 * sleeper that the post wakes, and a spinner that took it would send that sleeper back to
 * bed. `old` is the spinner's poll, possibly stale. */
FASTSYNC_API int fastsync__sem_take_spin(fastsync_sem_t *s, uint64_t old)
{
    while (fastsync__sem_tokens(old) != 0 && fastsync__sem_waiters(old) == 0) {
        /* acquire: pairs with the release CAS in fastsync_sem_post_n that published the
         * token; failure relaxed: `old` is only the next guess (and shows new waiters). */
        if (fastsync__cas_weak(&s->state, &old, old - 1,
                               memory_order_acquire, memory_order_relaxed))
            return 0;
    }
    return EAGAIN;
}

FASTSYNC_API int fastsync_sem_trywait(fastsync_sem_t *s)
{
    /* relaxed: a guess for the CAS in fastsync__sem_take. */
    return fastsync__sem_take(s, fastsync__load(&s->state, memory_order_relaxed));
}

/* The slow path of every wait, entered with no token seen: spin, register, sleep.
 * abstime NULL: no deadline (clock unused). Returns 0 or ETIMEDOUT. */
/* A registered waiter's sleep: take a token (and leave) or time out (and leave). Entered with
 * `old`, the word its register RMW left. Returns 0 or ETIMEDOUT. */
FASTSYNC__COLD int fastsync__sem_sleep(fastsync_sem_t *s, uint64_t old, clockid_t clock,
                                     const struct timespec *abstime)
{
    int timed_out = 0;
    for (;;) {
        if (fastsync__sem_tokens(old) != 0) {
            /* take+leave. acquire: pairs with the release CAS of the post that published the
             * token. failure relaxed: loop with the fresh value. */
            if (fastsync__cas_weak(&s->state, &old, old - FASTSYNC__SEM_WAITER - 1,
                                   memory_order_acquire, memory_order_relaxed))
                return 0;
            continue;
        }
        if (timed_out) {
            /* leave, only if still no token (else take it above: never lose one that a post
             * meant for us). relaxed: no token changes hands; the waiter count it publishes
             * only decides whether later posts wake. */
            if (fastsync__cas_weak(&s->state, &old, old - FASTSYNC__SEM_WAITER,
                                   memory_order_relaxed, memory_order_relaxed))
                return ETIMEDOUT;
            continue;
        }
        /* tokens == 0, so the futex word is 0: sleep unless a post changes it first. */
        timed_out = fastsync__wait(fastsync__sem_futex(s), 0, fastsync__sem_shared(old), clock,
                                   abstime) == ETIMEDOUT;
        /* relaxed: only decides what to try next; the token is taken with acquire. */
        old = fastsync__load(&s->state, memory_order_relaxed);
    }
}

/* The cleanup of a registered waiter whose thread is cancelled in its sleep: leave, and pass
 * on the wake it may have absorbed. A post wakes min(n, waiters) sleepers; if this thread was
 * one of them, its token is still in the word, and another registered waiter may sleep on:
 * one FUTEX_WAKE hands the chance over (at most one wake can have ended this thread's sleep;
 * a wake that was not needed only makes a sleeper look again). Like a post, it touches only
 * the word's address after its RMW. */
FASTSYNC__COLD void fastsync__sem_cancelled(void *arg)
{
    fastsync_sem_t *s = (fastsync_sem_t *)arg;
    /* leave. relaxed: no token changes hands (the cancelled thread takes none); the RMW's own
     * value says whether tokens and waiters remain, and later posts read the count from
     * their RMWs, totally ordered with this one. */
    uint64_t old = fastsync__fetch_sub(&s->state, FASTSYNC__SEM_WAITER, memory_order_relaxed) -
                   FASTSYNC__SEM_WAITER;
    if (fastsync__sem_tokens(old) != 0 && fastsync__sem_waiters(old) != 0)
        fastsync__wake(fastsync__sem_futex(s), 1, fastsync__sem_shared(old));
}

#if FASTSYNC__CANCEL
/* fastsync__sem_sleep with fastsync__sem_cancelled as its cancellation cleanup. */
FASTSYNC__COLD FASTSYNC__CLEANUP_FRAME int fastsync__sem_sleep_cancellable(
    fastsync_sem_t *s, uint64_t old, clockid_t clock, const struct timespec *abstime)
{
    int r;
    pthread_cleanup_push(fastsync__sem_cancelled, s);
    r = fastsync__sem_sleep(s, old, clock, abstime);
    pthread_cleanup_pop(0);
    return r;
}
#endif

/* The slow path of every wait, entered with no token seen: spin, register, sleep.
 * abstime NULL: no deadline (clock unused). Returns 0 or ETIMEDOUT. */
FASTSYNC__COLD int fastsync__sem_wait_slow(fastsync_sem_t *s, clockid_t clock,
                                         const struct timespec *abstime)
{
    /* Spin (fastsync__spin: polls for up to FASTSYNC_SPIN_NS) only while nobody is
     * registered: with a sleeper, a post's token belongs to the thread it wakes, and a
     * spinner would take it and send the sleeper back to bed. */
    struct fastsync__spinner sp;
    fastsync__spin_start(&sp, abstime == NULL);
    do {
        /* relaxed: a poll; the take below has the acquire. */
        uint64_t v = fastsync__load(&s->state, memory_order_relaxed);
        if (fastsync__sem_waiters(v) != 0) break;
        if (fastsync__sem_take_spin(s, v) == 0) return 0;
    } while (fastsync__spin(&sp));

    /* register. relaxed: posts read the waiter count from their own RMW on this word, and
     * all RMWs on one word are totally ordered: a post ordered before this RMW left a token
     * that `old` shows; a post ordered after it sees waiters > 0 and wakes. */
    uint64_t old = fastsync__fetch_add(&s->state, FASTSYNC__SEM_WAITER, memory_order_relaxed);
    old += FASTSYNC__SEM_WAITER;
#if FASTSYNC__CANCEL
    return fastsync__sem_sleep_cancellable(s, old, clock, abstime);
#else
    return fastsync__sem_sleep(s, old, clock, abstime);
#endif
}

FASTSYNC_API int fastsync_sem_wait(fastsync_sem_t *s)
{
    /* relaxed: a guess for the CAS. */
    uint64_t old = fastsync__load(&s->state, memory_order_relaxed);
    /* acquire: pairs with the release CAS in fastsync_sem_post_n that published the token.
     * failure relaxed: the slow path looks again (and retries while tokens are there). */
    if (fastsync__sem_tokens(old) != 0 &&
        fastsync__cas_weak(&s->state, &old, old - 1, memory_order_acquire, memory_order_relaxed))
        return 0;
    return fastsync__sem_wait_slow(s, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_sem_clockwait(fastsync_sem_t *s, clockid_t clock,
                                        const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    if (fastsync_sem_trywait(s) == 0) return 0;
    r = fastsync__deadline_check(clock, abstime);
    if (r != 0) return r;
    return fastsync__sem_wait_slow(s, clock, abstime);
}

FASTSYNC_API int fastsync_sem_timedwait(fastsync_sem_t *s, const struct timespec *abs_monotonic)
{
    return fastsync_sem_clockwait(s, CLOCK_MONOTONIC, abs_monotonic);
}

FASTSYNC_API unsigned fastsync_sem_getvalue(const fastsync_sem_t *s)
{
    /* relaxed: a snapshot that orders nothing (as sem_getvalue). */
    return fastsync__sem_tokens(fastsync__load(&s->state, memory_order_relaxed));
}

/* ======================================================================================
 * Wide semaphore (internal: fastsync.hpp's counting_semaphore<N> for N above
 * FASTSYNC_SEM_VALUE_MAX, whose max() is PTRDIFF_MAX; C and C++ alike, so that the GenMC
 * harnesses in test/genmc check this code)
 *
 * Its counter is two counters, struct fastsync__semw:
 *   T  the tokens of a C semaphore (fastsync_sem_t, 0..M, M = FASTSYNC_SEM_VALUE_MAX), which
 *      waiters sleep on by the C semaphore's own protocol, untouched;
 *   E  the excess beside it, a 64-bit atomic: the tokens that did not fit into T.
 * Every change of either is one RMW, made by one of these steps:
 *   post   T += n  a release whose n fits (fastsync_sem_post_n)
 *   take   T -= 1  an acquire, try_acquire, timed acquire or wait_any that gets a token from
 *                  the C semaphore (fastsync_sem_wait, _trywait, _clockwait, fastsync_wait_any)
 *   add    E += n  a release whose n does not fit (the C post said EOVERFLOW, or n > M);
 *                  and a move's give-back (below)
 *   claim  E -= k  a move takes k tokens out of E, then posts them into T; what finds no
 *                  room there (T filled meanwhile) it gives back to E by an add
 *   take_E E -= 1  try_acquire, and a timed acquire whose deadline passed, with T at 0
 * A take or an add is a dangerous step: it can leave E > 0 with T < M. After each, the
 * thread refills: it looks (a seq_cst fence, then a load of E), and while E > 0 and
 * T < M (T read by fastsync_sem_getvalue) it claims k = min(E, M - T) and posts them, as
 * T has room; a give-back is an add, so it looks again; a move whose k are all posted ends.
 *
 * Exact conservation. Each step is one RMW: post and add bring a release's tokens in, take
 * and take_E hand one out to an acquire, and a claim's k are in flight only until the posts
 * and the give-back that put the same k back. So initial + released == acquired + T + E +
 * in flight, always, and nothing is in flight outside a move.
 *
 * No lost wakeup (C11 7.17.4, [atomics.fences]: for seq_cst fences X and Y and an atomic
 * object's modification A sequenced before X and a read B after Y, X before Y in the single
 * total order S of seq_cst fences makes B read A or a later modification). Claim: whenever no
 * thread is between a dangerous step and the end of the refill after it, E == 0 or T == M.
 * Suppose E > 0 and T < M then. Every thread that made dangerous steps refilled after its
 * last one; let P be the thread whose last look's fence F comes last in S among those. Each
 * dangerous step A of any thread is sequenced before that thread's last fence, which is F or
 * precedes F in S, so every read P made after F (its load of E, its claim's CAS, its
 * fastsync_sem_getvalue) read A or a later modification: in each counter's modification
 * order only safe steps follow those reads (claims and take_E lower E, posts raise T). So P's
 * last reads saw E' >= E and T' <= T (the values now). P stopped either because E' == 0 or
 * T' == M, which makes E == 0 or T == M; or after posting all k = min(E', M - T') tokens of a
 * claim whose CAS read E', which makes E <= E' - k and T >= T' + k, so again E == 0 or
 * T == M. Contradiction. A waiter sleeps only while T == 0 (the C protocol), so once the
 * refills in progress have ended no token waits in E while a waiter sleeps (M >= 1); a
 * refill in progress posts what it claims, and the C post wakes the waiters registered
 * in T's word. A refill ends after a bounded number of its own steps, but for RMWs that
 * fail because another thread's step came first (lock-free).
 * Each of the three looks' fences is needed: a look after a take, after an add and after a
 * give-back is one side of a store-buffering pair (take T, then read E; add E, then read
 * T), and with either side's fence weakened to acq_rel both reads may miss the other's
 * step. GenMC shows each (test/genmc: semw_genmc.c and semw_give_back_genmc.c at the real
 * M, a token left in E beside room in T; semw_wait_genmc.c with M lowered to 2, a waiter
 * asleep on T at 0 beside a token in E).
 *
 * Under ThreadSanitizer, which has no fences (gcc refuses them with -Wtsan), a look is an
 * acq_rel fetch_add(E, 0) instead (the event does the same): of two threads' looks, the
 * later in E's modification order reads the earlier's value or a later one, which is in the
 * earlier's release sequence (every change of E is an RMW), and so synchronizes with it:
 * the later thread's reads see every step the earlier made before its look. The proof goes
 * through with "last in S" read as "last in E's modification order"; the same pair, in a
 * form TSan checks.
 *
 * Orders, each named at its RMW: a release's add (release) pairs with the claim or take_E
 * (acquire) that takes its tokens out of E; a moved token then goes through the C post's
 * release CAS to the C take's acquire, so a release happens before the acquire that gets
 * its token whichever way the token went. The loads that only guess or size (the look's,
 * getvalue) are relaxed: the CAS that acts reads the counter again, and the look's fence
 * orders them where the proof needs it.
 *
 * What it costs: T and E are 16 bytes (8-aligned); release is the C post while T has room,
 * and every take is followed by a look (a fence and a load) and, when E > 0, a move. A
 * release that adds to E goes on to refill: it touches the object after its tokens are
 * published (the C post's promise that the waiter may free the semaphore at once does not
 * hold for it).
 * ====================================================================================== */

#if defined(__SANITIZE_THREAD__)
#define FASTSYNC__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FASTSYNC__TSAN 1
#endif
#endif
#ifndef FASTSYNC__TSAN
#define FASTSYNC__TSAN 0
#endif

struct fastsync__semw {
    fastsync_sem_t t;                                /* T: the C semaphore */
    FASTSYNC__ALIGN8 FASTSYNC__ATOMIC(uint64_t) e;   /* E: the excess */
};

/* An initial value v: min(v, M) in T, the rest in E. Returns fastsync_sem_init's result. */
FASTSYNC_API int fastsync__semw_init(struct fastsync__semw *w, uint64_t v, int flags)
{
    uint64_t in_t = v < (uint64_t)FASTSYNC_SEM_VALUE_MAX ? v : (uint64_t)FASTSYNC_SEM_VALUE_MAX;
    int r = fastsync_sem_init(&w->t, (unsigned)in_t, flags);
    /* relaxed: no other thread may use the object before init returns (the caller publishes
     * it, as fastsync_sem_init's) */
    if (r == 0) fastsync__store(&w->e, v - in_t, memory_order_relaxed);
    return r;
}

/* The room left in T (M - T). */
FASTSYNC_API uint64_t fastsync__semw_room(const struct fastsync__semw *w)
{
    return (uint64_t)FASTSYNC_SEM_VALUE_MAX - fastsync_sem_getvalue(&w->t);
}

/* A look: E, read after a seq_cst fence (the proof's F), or under ThreadSanitizer by an RMW
 * that changes nothing (the section says why). */
FASTSYNC_API uint64_t fastsync__semw_look(struct fastsync__semw *w)
{
#if FASTSYNC__TSAN
    /* acq_rel: pairs with the other threads' looks and adds on E (the Dekker pair) */
    return fastsync__fetch_add(&w->e, (uint64_t)0, memory_order_acq_rel);
#else
    /* seq_cst: pairs with the other threads' look fences (the Dekker pair); the load
     * relaxed: the fence orders it, and the claim's CAS reads E again */
    fastsync__fence(memory_order_seq_cst);
    return fastsync__load(&w->e, memory_order_relaxed);
#endif
}

/* Posts k claimed tokens into T, in pieces as it has room; returns those that found none. */
FASTSYNC_API uint64_t fastsync__semw_put(struct fastsync__semw *w, uint64_t k)
{
    while (k != 0) {
        uint64_t r = fastsync__semw_room(w);
        if (r == 0) break;
        unsigned n = (unsigned)(k < r ? k : r);
        if (fastsync_sem_post_n(&w->t, n) == 0) k -= n; /* else T rose meanwhile: size again */
    }
    return k;
}

/* A refill after a look that saw E > 0: moves tokens from E into T while T has room. */
FASTSYNC__COLD void fastsync__semw_refill(struct fastsync__semw *w)
{
    /* relaxed: a guess for the claim's CAS, which reads E again (after the look's fence) */
    uint64_t e = fastsync__load(&w->e, memory_order_relaxed);
    while (e != 0) {
        /* M - T, T by getvalue's relaxed load: after the look's fence, which orders it (the
         * proof's T'); the claim's k, no more than T has room for */
        uint64_t k = fastsync__semw_room(w);
        if (k == 0) return;
        if (k > e) k = e;
        /* claim. acquire: pairs with the release of the adds whose tokens these are;
         * failure relaxed: e is the next guess */
        if (!fastsync__cas_weak(&w->e, &e, e - k, memory_order_acquire, memory_order_relaxed))
            continue;
        k = fastsync__semw_put(w, k);
        if (k == 0) return; /* all posted: the move ends */
        /* give-back (an add). release: pairs with the acquire of the claim or take_E that
         * takes these tokens (they came from adds: the chain of release sequences) */
        fastsync__fetch_add(&w->e, k, memory_order_release);
        e = fastsync__semw_look(w);
    }
}

/* After a take from T: refill, if E holds tokens. */
FASTSYNC_API void fastsync__semw_after_take(struct fastsync__semw *w)
{
    if (fastsync__semw_look(w) != 0) fastsync__semw_refill(w);
}

/* add: n tokens into E, then refill. Returns E before the add. */
FASTSYNC__COLD uint64_t fastsync__semw_add(struct fastsync__semw *w, uint64_t n)
{
    /* release: pairs with the acquire of the claim or take_E that takes these tokens */
    uint64_t old = fastsync__fetch_add(&w->e, n, memory_order_release);
    if (fastsync__semw_look(w) != 0) fastsync__semw_refill(w);
    return old;
}

/* A release of n tokens: the C post while T has room, else an add. Returns E before the
 * add (0 where none was made). */
FASTSYNC_API uint64_t fastsync__semw_post_n(struct fastsync__semw *w, uint64_t n)
{
    if (n > (uint64_t)FASTSYNC_SEM_VALUE_MAX || fastsync_sem_post_n(&w->t, (unsigned)n) != 0)
        return fastsync__semw_add(w, n);
    return 0;
}

/* take_E: one token out of E, if it has one. Returns 0 or EAGAIN. */
FASTSYNC_API int fastsync__semw_take_excess(struct fastsync__semw *w)
{
    /* relaxed: a guess for the CAS */
    uint64_t e = fastsync__load(&w->e, memory_order_relaxed);
    while (e != 0) {
        /* acquire: pairs with the release of the add that brought the token into E;
         * failure relaxed: e is the next guess */
        if (fastsync__cas_weak(&w->e, &e, e - 1, memory_order_acquire, memory_order_relaxed))
            return 0;
    }
    return EAGAIN;
}

/* acquire: a take from T (asleep until there is a token), then the refill. */
FASTSYNC_API void fastsync__semw_wait(struct fastsync__semw *w)
{
    (void)fastsync_sem_wait(&w->t);
    fastsync__semw_after_take(w);
}

/* try_acquire: a take from T and the refill, or take_E. Returns 0 or EAGAIN. */
FASTSYNC_API int fastsync__semw_trywait(struct fastsync__semw *w)
{
    if (fastsync_sem_trywait(&w->t) != 0) return fastsync__semw_take_excess(w);
    fastsync__semw_after_take(w);
    return 0;
}

/* After a wait on T that said r: 0 (it took a token), the refill; else (its deadline passed
 * with T at 0) take_E. Returns 0, or r where E had no token either. */
FASTSYNC_API int fastsync__semw_waited(struct fastsync__semw *w, int r)
{
    if (r == 0) fastsync__semw_after_take(w);
    else if (fastsync__semw_take_excess(w) == 0) r = 0;
    return r;
}

/* ======================================================================================
 * Manual-reset event
 *
 * State: one 32-bit atomic word, which is also the futex word.
 *   bits 0..1  state   SET (0), FREE (1: reset, nobody sleeps), BUSY (3: reset, someone may
 *                      sleep). The encoding makes reset a single fetch_or(FREE):
 *                      SET -> FREE, FREE -> FREE, BUSY -> BUSY.
 *   bit  2     shared  FASTSYNC_SHARED given at init; never changes afterwards
 *   bits 3..31 gen     counts sets that changed the state (mod 2^29): a sleeper woken by a
 *                      set returns even if the event was reset again before it ran
 *
 * Valid transitions:
 *   FREE -> SET    set      (CAS, gen + 1; no sleeper to wake)
 *   BUSY -> SET    set      (CAS, gen + 1, then FUTEX_WAKE all)
 *   SET  -> FREE   reset    (fetch_or)
 *   FREE -> BUSY   wait     (CAS by a waiter about to sleep)
 * BUSY -> FREE never happens: only set leaves BUSY, so a thread that announced it sleeps is
 * always woken by the next set. A waiter that times out leaves BUSY behind; that costs the
 * next set one FUTEX_WAKE syscall, never a wakeup.
 *
 * The reset / check / wait handshake. reset is an RMW then a seq_cst fence; set starts with
 * a seq_cst fence then loads the word, and does nothing more if it reads SET:
 *   resetter:  reset RMW ; fence ; read condition        setter: write condition ; fence ; load
 * If the setter's load read a SET older than the reset, its fence precedes the resetter's
 * in the single total order of seq_cst fences, so the resetter's read of the condition sees
 * the setter's write (C11 7.17.4p3, [atomics.fences]). Else the setter saw the reset (or a
 * later state) and sets the event itself. Either way the resetter does not sleep through
 * the condition. (QEMU's 2023 fix added exactly this pair after threads hung on ARM.)
 * Every modification after init is an RMW, so an acquire load that reads any later value
 * synchronizes with the set whose release CAS bumped the generation it sees.
 *
 * Under ThreadSanitizer, which does not model fences (and gcc rejects them with -Wtsan),
 * reset's RMW becomes acq_rel without the fence, and set starts with an acq_rel RMW that
 * changes nothing instead of fence + load. The handshake then runs through the word's
 * modification order: if set's RMW comes first, reset's acquire reads it (or a later RMW
 * of its release sequence) and the resetter sees the setter's writes; if reset's comes
 * first, set reads FREE or BUSY and sets the event. The same guarantee, in a form TSan
 * checks; it costs set an RMW on a set event, so it is not the default.
 * ====================================================================================== */

typedef struct fastsync_event {
    FASTSYNC__ATOMIC(uint32_t) state; /* private: use the functions */
} fastsync_event_t;

#define FASTSYNC__EV_SET 0u        /* set: waits return at once */
#define FASTSYNC__EV_FREE 1u       /* reset, no thread announced a sleep */
#define FASTSYNC__EV_BUSY 3u       /* reset, a thread may sleep: set must wake */
#define FASTSYNC__EV_STATE 3u      /* mask of the state field */
#define FASTSYNC__EV_SHARED 4u     /* process-shared flag */
#define FASTSYNC__EV_GEN_ONE 8u    /* one step of the generation field */
#define FASTSYNC__EV_GEN (~7u)     /* mask of the generation field */

#ifdef __cplusplus
#define FASTSYNC_EVENT_INIT(set) { { (set) ? FASTSYNC__EV_SET : FASTSYNC__EV_FREE } }
#else
#define FASTSYNC_EVENT_INIT(set) { (set) ? FASTSYNC__EV_SET : FASTSYNC__EV_FREE }
#endif

FASTSYNC_API uint32_t fastsync__ev_state(uint32_t v) { return v & FASTSYNC__EV_STATE; }
FASTSYNC_API int fastsync__ev_shared(uint32_t v) { return (v & FASTSYNC__EV_SHARED) != 0; }

FASTSYNC_API int fastsync_event_init(fastsync_event_t *e, FASTSYNC__BOOL set, int flags)
{
    if (!fastsync__flags_ok(flags)) return EINVAL;
    uint32_t v = set ? FASTSYNC__EV_SET : FASTSYNC__EV_FREE;
    if (flags & FASTSYNC_SHARED) v |= FASTSYNC__EV_SHARED;
    /* relaxed: the caller publishes the object with its own happens-before. */
    fastsync__store(&e->state, v, memory_order_relaxed);
    return 0;
}

FASTSYNC_API int fastsync_event_destroy(fastsync_event_t *e)
{
    /* Nothing to release. A waiter cannot be told apart from one that timed out (both leave
     * BUSY), so there is no EBUSY: destroying with threads inside wait is the caller's bug. */
    (void)e;
    return 0;
}

FASTSYNC_API void fastsync_event_set(fastsync_event_t *e)
{
#if FASTSYNC__TSAN
    /* acq_rel RMW that changes nothing: the handshake through the word's modification order
     * (see "Under ThreadSanitizer" above); pairs with the acq_rel RMW in reset. */
    uint32_t old = fastsync__fetch_or(&e->state, 0u, memory_order_acq_rel);
#else
    /* seq_cst fence: the setter's half of the reset/check handshake; pairs with the fence
     * at the end of fastsync_event_reset (see above). */
    fastsync__fence(memory_order_seq_cst);
    /* relaxed: the fence above orders it; SET seen means nothing to do. */
    uint32_t old = fastsync__load(&e->state, memory_order_relaxed);
#endif
    do {
        if (fastsync__ev_state(old) == FASTSYNC__EV_SET) return;
        /* release: pairs with the acquire load/CAS in wait and is_set that reads this SET or
         * a later value of the word. failure relaxed: loop. */
    } while (!fastsync__cas_weak(
        &e->state, &old, ((old & ~FASTSYNC__EV_STATE) + FASTSYNC__EV_GEN_ONE) | FASTSYNC__EV_SET,
        memory_order_release, memory_order_relaxed));
    /* From here on `e` may be gone: only its address is used. */
    if (fastsync__ev_state(old) == FASTSYNC__EV_BUSY)
        fastsync__wake(FASTSYNC__FUTEX_ADDR(&e->state), INT_MAX, fastsync__ev_shared(old));
}

FASTSYNC_API void fastsync_event_reset(fastsync_event_t *e)
{
#if FASTSYNC__TSAN
    /* acq_rel: pairs with the acq_rel RMW at the start of fastsync_event_set. */
    (void)fastsync__fetch_or(&e->state, FASTSYNC__EV_FREE, memory_order_acq_rel);
#else
    /* relaxed RMW: SET -> FREE, others unchanged; ordering comes from the fence below. */
    (void)fastsync__fetch_or(&e->state, FASTSYNC__EV_FREE, memory_order_relaxed);
    /* seq_cst fence: orders the reset before the caller's next check of its condition;
     * pairs with the fence at the start of fastsync_event_set. */
    fastsync__fence(memory_order_seq_cst);
#endif
}

FASTSYNC_API FASTSYNC__BOOL fastsync_event_is_set(const fastsync_event_t *e)
{
    /* acquire: pairs with the release CAS in fastsync_event_set. */
    return fastsync__ev_state(fastsync__load(&e->state, memory_order_acquire)) ==
           FASTSYNC__EV_SET;
}

/* The slow path of every event wait, entered with `old` (read with acquire) not SET.
 * Returns 0 once the event is seen set or a set happened since `old`; ETIMEDOUT. */
FASTSYNC__COLD int fastsync__event_wait_slow(fastsync_event_t *e, uint32_t old, clockid_t clock,
                                           const struct timespec *abstime)
{
    const uint32_t gen = old & FASTSYNC__EV_GEN;
    int timed_out = 0;
    for (;;) {
        if (fastsync__ev_state(old) == FASTSYNC__EV_SET || (old & FASTSYNC__EV_GEN) != gen)
            return 0;
        if (timed_out) return ETIMEDOUT;
        if (fastsync__ev_state(old) == FASTSYNC__EV_FREE) {
            /* FREE -> BUSY: tell set there is someone to wake. On failure `old` may be a SET
             * to return on: acquire pairs with set's release CAS. (Success needs no order:
             * the handshake with set is carried by this one word, whose RMWs are totally
             * ordered; C11 just forbids a failure order stronger than the success order.) */
            uint32_t busy = old | FASTSYNC__EV_BUSY;
            if (!fastsync__cas_strong(&e->state, &old, busy,
                                      memory_order_acquire, memory_order_acquire))
                continue;
            old = busy;
        }
        timed_out = fastsync__wait(FASTSYNC__FUTEX_ADDR(&e->state), old, fastsync__ev_shared(old),
                                   clock, abstime) == ETIMEDOUT;
        /* acquire: pairs with the release CAS in fastsync_event_set. */
        old = fastsync__load(&e->state, memory_order_acquire);
    }
}

FASTSYNC_API void fastsync_event_wait(fastsync_event_t *e)
{
    /* acquire: pairs with the release CAS in fastsync_event_set. */
    uint32_t old = fastsync__load(&e->state, memory_order_acquire);
    if (fastsync__ev_state(old) != FASTSYNC__EV_SET)
        (void)fastsync__event_wait_slow(e, old, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_event_clockwait(fastsync_event_t *e, clockid_t clock,
                                          const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    /* acquire: pairs with the release CAS in fastsync_event_set. */
    uint32_t old = fastsync__load(&e->state, memory_order_acquire);
    if (fastsync__ev_state(old) == FASTSYNC__EV_SET) return 0;
    r = fastsync__deadline_check(clock, abstime);
    if (r != 0) return r;
    return fastsync__event_wait_slow(e, old, clock, abstime);
}

FASTSYNC_API int fastsync_event_timedwait(fastsync_event_t *e, const struct timespec *abs_monotonic)
{
    return fastsync_event_clockwait(e, CLOCK_MONOTONIC, abs_monotonic);
}

/* ======================================================================================
 * Mutex
 *
 * State: one 32-bit atomic word, which is also the futex word.
 *   bits 0..1  state   UNLOCKED (0), LOCKED (1: held, no thread sleeps on it), CONTENDED
 *                      (2: held, a thread may sleep: unlock must wake one)
 *   bit  2     shared  FASTSYNC_SHARED given at init; never changes afterwards
 *
 * lock:   CAS UNLOCKED -> LOCKED (acquire): one CAS, no syscall. A shared mutex's word is
 *         never 0 (its shared bit), so that CAS fails on it, returning the word; when the word
 *         is exactly shared | UNLOCKED, a second CAS from it to shared | LOCKED takes the lock,
 *         inline, with no load (the failed CAS returned the word). Otherwise spin (below),
 *         then exchange the word to CONTENDED until the exchange returns UNLOCKED, sleeping
 *         while the word is CONTENDED. A thread that got the lock this way holds it as
 *         CONTENDED (it cannot know whether others still sleep), so its unlock wakes one.
 * unlock: exchange to UNLOCKED (release): one RMW; if it returns CONTENDED, one wake on the
 *         word's address. After the exchange the mutex is not touched: the next owner may
 *         free it at once.
 * No lost wakeup: a thread sleeps only while the word holds CONTENDED, which its own exchange
 * put there as it saw the mutex held. Until that hold's unlock no RMW can leave anything else
 * (lock and trylock CAS only from UNLOCKED), so that unlock's exchange reads CONTENDED and
 * wakes one: the wake finds the sleeper asleep, or the sleeper's compare in the kernel sees
 * the word changed. The woken thread exchanges CONTENDED in again before it sleeps again or
 * takes the lock as CONTENDED, so the chain goes on while sleepers remain; a newcomer that
 * takes the lock as LOCKED in the meantime is seen by that exchange, after which its own
 * unlock reads CONTENDED too.
 *
 * Spinning: only while the word says LOCKED, i.e. no thread has given up and gone to sleep:
 * fastsync does not record the owner, so it cannot ask whether the owner runs; a sleeper on
 * the word is the sign that holds here are long (or the owner is descheduled), and a thread
 * that finds CONTENDED queues in the kernel at once. The spin is fastsync__spin's pausing
 * kind, bounded in time (FASTSYNC_SPIN_NS), with no yields, for lock and timedlock alike
 * (fastsync__spin, "Mutexes", has the figures).
 *
 * Fairness: barging, bounded by a hand-off. An unlocked mutex goes to whichever thread's RMW
 * comes first, a newcomer or the sleeper just woken: the lock stays busy while a woken
 * thread is scheduled, and a thread that unlocks and locks again keeps the line in its cache
 * (the throughput below). Barging alone can starve a sleeper: woken, it finds the mutex taken
 * again and sleeps again, as often as that happens. So a sleeper that has waited
 * FASTSYNC_MUTEX_HANDOFF_NS (default 1 ms, from its first sleep; looked at each time it
 * wakes into a held mutex) claims the next unlock: its CAS sets STARVING (bit 3) with
 * CONTENDED, only while no other thread holds the claim, so there is one claimant, and it
 * knows it. Then:
 *   unlock     keeps STARVING and clears the state: the mutex is handed, not free; it wakes
 *              every sleeper (the claimant is one of them and no wake can single it out);
 *   claimant   takes a handed mutex by CAS to CONTENDED, which clears STARVING;
 *   others     never take a word with STARVING: lock's fast CAS (from 0) and trylock fail on
 *              it, spinners stop spinning, sleepers sleep on it unchanged; destroy says EBUSY.
 *   deadline   a timed claimant whose deadline passes gives the claim back (CAS clearing
 *              STARVING; the word stays CONTENDED, so the unlock wakes one as it would
 *              have), unless the mutex was handed to it first: then it takes it and returns
 *              0. Cancellation does not apply (lock is no cancellation point).
 * The bound: a claimant gets the mutex at the end of the hold in progress when it claims,
 * plus its wake-up; a thread that keeps waiting claims as soon as no other holds the claim,
 * i.e. after at most one other claimant's turn per claim. With the kernel's FIFO order of
 * sleepers of one priority (Linux) every sleeper comes to claim in turn, so a waiter with
 * N - 1 others waits at most about N holds plus N x (FASTSYNC_MUTEX_HANDOFF_NS + a wake-up),
 * as long as no hand-off happens meanwhile: a hand-off wakes every sleeper, and those that
 * sleep again queue in the order the scheduler runs them, so after one the order among the
 * non-claimants is the scheduler's. The other backends promise no order among sleepers: there
 * only the claimant's bound holds. The claim costs nothing until a sleeper has waited that long: the lock and unlock
 * fast paths are one CAS each (callgrind: lock+unlock 9 instructions, 14 with 0.4's
 * exchange-based unlock), a sleeper reads CLOCK_MONOTONIC once before its first sleep and
 * once per wake-up. A hand-off wakes every sleeper, and all but the claimant sleep again: a
 * system call per sleeper per hand-off, the price of the bound where holds are long.
 * Measured with bench/latency (T threads on 2 CPUs; hold 20-200 us, think 2-20 us; medians
 * of 5 runs of 150 ms; 2-vCPU VM, Linux 6.18, glibc 2.36, 2026-12-05; fastsync 0.4 without
 * the hand-off -> with it, the two builds run one after the other):
 *   threads, busy    p99 wait, ms      slowest/fastest thread   lock+unlock/s
 *   4 alone          11.7 -> 4.2       0.57 -> 0.64             7.8 k -> 7.6 k
 *   8 alone          32.6 -> 6.8       0.14 -> 0.61             8.0 k -> 7.2 k
 *   8 + 4 busy       68.4 -> 20.5      0.00 -> 0.08             4.4 k -> 5.5 k
 * (glibc's pthread_mutex_t in an earlier run of the same kind: p99 10.6, 28.7, 60 ms;
 * slowest/fastest 0.45, 0.01, 0.01).
 * Beside busy threads the slowest thread is the one the scheduler gives least CPU, which no
 * lock can make up for.
 * In the spinning regime (short holds, waits absorbed by the spin) nobody sleeps and the
 * claim never arises: the throughput is over twice glibc's (bench/mutex, 2026-12-01, glibc
 * 2.36, x86-64, medians of 5; spread: the slowest thread's pairs / the fastest's):
 *     threads   fastsync pairs/s  spread    pthread_mutex_t pairs/s  spread
 *     2         29.2 M            0.73      13.4 M                   0.60
 *     4         33.7 M            0.63      14.1 M                   0.64
 *     8         33.3 M            0.69      15.3 M                   0.66
 * That was an AMD EPYC VM. On the 2-vCPU Intel Xeon VM of 2026-12-06 (3 runs) the same loop
 * made, fastsync / glibc: 2 threads 9.7-11.3 M / 9-14 M, 4 threads 9.9-11.7 M / 13-18 M,
 * 8 threads 9.9-13.2 M / 8-11.5 M (glibc's waiters sleep at once, and one thread at a time
 * then runs the loop with the line in its cache): not twice glibc's on every machine.
 *
 * Ownership is not tracked: no error-checking, recursive, robust or priority-inheritance
 * kind. A thread that locks twice deadlocks; an unlock by another thread than the owner
 * unlocks; a process that dies holding a shared mutex leaves it locked for good. Each of
 * those needs the owner's id in the word (and, for robust and PI, the kernel's robust list
 * and FUTEX_LOCK_PI), which would cost the 4-byte word its fast paths. Where they are needed,
 * use pthread_mutex_t with PTHREAD_MUTEX_ERRORCHECK, _RECURSIVE, PTHREAD_MUTEX_ROBUST or
 * PTHREAD_PRIO_INHERIT. unlock of an unlocked mutex says EPERM: a courtesy for the misuse it
 * can see.
 *
 * Not a cancellation point (as pthread_mutex_lock): cancellation is disabled around the
 * sleep.
 * ====================================================================================== */

typedef struct fastsync_mutex {
    FASTSYNC__ATOMIC(uint32_t) state; /* private: use the functions */
} fastsync_mutex_t;

#define FASTSYNC__MX_UNLOCKED 0u
#define FASTSYNC__MX_LOCKED 1u
#define FASTSYNC__MX_CONTENDED 2u
#define FASTSYNC__MX_STATE 3u   /* mask of the state field */
#define FASTSYNC__MX_SHARED 4u  /* process-shared flag */
#define FASTSYNC__MX_STARVING 8u /* a sleeper claims the next hand-off */

#ifdef __cplusplus
#define FASTSYNC_MUTEX_INIT { { FASTSYNC__MX_UNLOCKED } }
#else
#define FASTSYNC_MUTEX_INIT { FASTSYNC__MX_UNLOCKED }
#endif

FASTSYNC_API uint32_t fastsync__mx_state(uint32_t v) { return v & FASTSYNC__MX_STATE; }

FASTSYNC_API int fastsync_mutex_init(fastsync_mutex_t *m, int flags)
{
    if (!fastsync__flags_ok(flags)) return EINVAL;
    /* relaxed: the caller publishes the object with its own happens-before. */
    fastsync__store(&m->state, (flags & FASTSYNC_SHARED) ? FASTSYNC__MX_SHARED : 0u,
                    memory_order_relaxed);
    return 0;
}

FASTSYNC_API int fastsync_mutex_destroy(fastsync_mutex_t *m)
{
    /* relaxed: a snapshot; EBUSY is a courtesy for the misuse it can see. */
    /* held, or handed to a sleeper (STARVING) */
    return (fastsync__load(&m->state, memory_order_relaxed) &
            (FASTSYNC__MX_STATE | FASTSYNC__MX_STARVING)) != 0
               ? EBUSY
               : 0;
}

FASTSYNC_API int fastsync_mutex_trylock(fastsync_mutex_t *m)
{
    /* relaxed: a guess for the CAS. */
    uint32_t v = fastsync__load(&m->state, memory_order_relaxed);
    /* unlocked and not handed to a sleeper (STARVING) */
    while ((v & (FASTSYNC__MX_STATE | FASTSYNC__MX_STARVING)) == 0) {
        /* acquire: pairs with the release CAS in fastsync_mutex_unlock. failure relaxed:
         * `v` is the next guess; retried while unlocked, so never spuriously. */
        if (fastsync__cas_weak(&m->state, &v, v | FASTSYNC__MX_LOCKED,
                               memory_order_acquire, memory_order_relaxed))
            return 0;
    }
    return EBUSY;
}

/* How long a waiter of a lock with a hand-off (mutex, reader-writer lock) has waited, for
 * its claim: fastsync__sleeping before each of its sleeps notes the first (and reads
 * CLOCK_MONOTONIC then, only when bound > 0); fastsync__waited says whether it has slept and
 * waited `bound` ns since (FASTSYNC_MUTEX_HANDOFF_NS, FASTSYNC_RWLOCK_HANDOFF_NS), long enough
 * to claim the next hand-off. A bound of 0 claims after any sleep with no clock read (the
 * GenMC harnesses explore the hand-offs with it); a negative one never claims. */
struct fastsync__waiting {
    int slept;     /* it has slept at least once, first at `since` */
    int64_t since;
};

FASTSYNC_API void fastsync__sleeping(struct fastsync__waiting *w, int64_t bound)
{
    if (w->slept) return;
    w->slept = 1;
    if (bound > 0) w->since = fastsync__mono_ns();
}

FASTSYNC_API int fastsync__waited(const struct fastsync__waiting *w, int64_t bound)
{
    if (!w->slept || bound < 0) return 0;
    return bound == 0 || fastsync__mono_ns() - w->since >= bound;
}

/* The slow path of every lock, entered once the fast CAS failed. abstime NULL: no deadline
 * (clock unused). Returns 0 or ETIMEDOUT. */
FASTSYNC__COLD int fastsync__mutex_lock_slow(fastsync_mutex_t *m, clockid_t clock,
                                             const struct timespec *abstime)
{
    /* relaxed: a poll; the lock is taken by an acquire RMW below. */
    uint32_t v = fastsync__load(&m->state, memory_order_relaxed);
    const uint32_t shared = v & FASTSYNC__MX_SHARED;
    struct fastsync__spinner sp;
    fastsync__spin_start(&sp, 0); /* pauses only: "Spinning" above */
    for (;;) {
        /* a thread sleeps (CONTENDED), or one claims the next hand-off (STARVING) */
        if (v & (FASTSYNC__MX_CONTENDED | FASTSYNC__MX_STARVING)) break;
        /* acquire: pairs with the release CAS in fastsync_mutex_unlock. failure relaxed:
         * `v` is the fresh poll. Tried once even without spinning: the mutex may have been
         * unlocked since the caller's CAS (and clocklock's trylock comes here on a word it
         * saw held), and the sleeping loop below would take it as CONTENDED and make its
         * unlock wake. */
        if (fastsync__mx_state(v) == FASTSYNC__MX_UNLOCKED &&
            fastsync__cas_weak(&m->state, &v, v | FASTSYNC__MX_LOCKED,
                               memory_order_acquire, memory_order_relaxed))
            return 0;
        if (!fastsync__spin(&sp)) break;
        /* relaxed: a poll, as above. */
        v = fastsync__load(&m->state, memory_order_relaxed);
    }
#if FASTSYNC__CANCEL
    int cancel;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
#endif
    int r = 0;
    int starving = 0;  /* this thread set STARVING: the next unlock is a hand-off to it */
    struct fastsync__waiting waiting = { 0, 0 };
    for (;;) {
        uint32_t want;
        if (fastsync__mx_state(v) == FASTSYNC__MX_UNLOCKED &&
            (starving || !(v & FASTSYNC__MX_STARVING))) {
            /* Free, or handed to this thread: take it as CONTENDED (other threads may sleep:
             * its unlock must wake one), clearing STARVING. acquire: pairs with the release
             * CAS in fastsync_mutex_unlock (or fastsync__mutex_unlock_slow) that freed or
             * handed it. failure relaxed: `v` is the next guess. Taken even once the deadline
             * has passed: never ETIMEDOUT then. */
            if (fastsync__cas_weak(&m->state, &v, shared | FASTSYNC__MX_CONTENDED,
                                   memory_order_acquire, memory_order_relaxed)) {
                r = 0;
                break;
            }
            continue;
        }
        if (r == ETIMEDOUT) {
            if (!starving) break; /* left CONTENDED behind: one needless wake, no loss */
            /* Give the claim back: the word stays CONTENDED, so the holder's unlock wakes a
             * sleeper as it would have without this thread. relaxed: takes nothing, and
             * publishes nothing a reader of the bit needs (the holder's unlock is a plain
             * release of the lock then). failure relaxed: `v` is the next guess; a hand-off
             * that came first is taken above. */
            if (fastsync__cas_weak(&m->state, &v, v & ~FASTSYNC__MX_STARVING,
                                   memory_order_relaxed, memory_order_relaxed))
                break;
            continue;
        }
        if (fastsync__mx_state(v) == FASTSYNC__MX_UNLOCKED) {
            want = v; /* handed to the claimant: sleep until it takes it (as CONTENDED) */
        } else {
            /* Held: say CONTENDED so that its unlock wakes; and claim the next hand-off if
             * this thread has slept long enough and nobody holds the claim. */
            want = (v & ~FASTSYNC__MX_STATE) | FASTSYNC__MX_CONTENDED;
            if (!(v & FASTSYNC__MX_STARVING) && fastsync__waited(&waiting, FASTSYNC_MUTEX_HANDOFF_NS))
                want |= FASTSYNC__MX_STARVING;
        }
        /* relaxed: takes nothing (the acquire CAS above takes the lock); the holder's unlock
         * reads the bits by its own RMW, the same modification order. failure relaxed: `v`
         * is the next guess. */
        if (want != v && !fastsync__cas_weak(&m->state, &v, want,
                                             memory_order_relaxed, memory_order_relaxed))
            continue;
        if (want & ~v & FASTSYNC__MX_STARVING) starving = 1;
        fastsync__sleeping(&waiting, FASTSYNC_MUTEX_HANDOFF_NS);
        r = fastsync__wait(FASTSYNC__FUTEX_ADDR(&m->state), want, shared != 0, clock,
                           abstime) == ETIMEDOUT
                ? ETIMEDOUT
                : 0;
        /* relaxed: a poll; the lock is taken by the acquire CAS above. */
        v = fastsync__load(&m->state, memory_order_relaxed);
    }
#if FASTSYNC__CANCEL
    (void)pthread_setcancelstate(cancel, &cancel);
#endif
    return r;
}

FASTSYNC_API int fastsync_mutex_lock(fastsync_mutex_t *m)
{
    uint32_t v = FASTSYNC__MX_UNLOCKED;
    /* acquire: pairs with the release CAS in fastsync_mutex_unlock. failure relaxed: `v` is
     * only the guess for the shared mutex's CAS below, itself the acquire RMW that takes the
     * lock, and the slow path reads the word again. */
    if (fastsync__cas_strong(&m->state, &v, FASTSYNC__MX_LOCKED,
                             memory_order_acquire, memory_order_relaxed))
        return 0;
    /* A shared mutex's word holds its shared bit, so the CAS from 0 fails on it even
     * unlocked; it returned the word, and when that says "shared, unlocked" one more CAS
     * from it takes the lock (no load: the failed CAS brought the line). acquire: pairs with
     * the release CAS in fastsync_mutex_unlock. failure relaxed: the slow path reads the
     * word again. */
    if (v == FASTSYNC__MX_SHARED &&
        fastsync__cas_strong(&m->state, &v, FASTSYNC__MX_SHARED | FASTSYNC__MX_LOCKED,
                             memory_order_acquire, memory_order_relaxed))
        return 0;
    return fastsync__mutex_lock_slow(m, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_mutex_clocklock(fastsync_mutex_t *m, clockid_t clock,
                                          const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    if (fastsync_mutex_trylock(m) == 0) return 0;
    r = fastsync__deadline_check(clock, abstime);
    if (r != 0) return r;
    return fastsync__mutex_lock_slow(m, clock, abstime);
}

FASTSYNC_API int fastsync_mutex_timedlock(fastsync_mutex_t *m, const struct timespec *abs_monotonic)
{
    return fastsync_mutex_clocklock(m, CLOCK_MONOTONIC, abs_monotonic);
}

/* The unlock of a word that is not exactly LOCKED (its shared bit aside), `v` as the failed
 * CAS read it: CONTENDED, with or without STARVING; not locked at all (EPERM); or LOCKED
 * (a shared mutex's word read before a sleeper made it CONTENDED). */
FASTSYNC__COLD int fastsync__mutex_unlock_slow(fastsync_mutex_t *m, uint32_t v)
{
    /* release: pairs with the acquire CAS of the next lock. failure relaxed: `v` is read
     * again; a held word leaves LOCKED only for CONTENDED (a sleeper's CAS). */
    if (fastsync__mx_state(v) == FASTSYNC__MX_LOCKED &&
        fastsync__cas_strong(&m->state, &v, v & ~FASTSYNC__MX_STATE,
                             memory_order_release, memory_order_relaxed))
        return 0; /* LOCKED: nobody sleeps, and STARVING comes only with CONTENDED */
    if (fastsync__mx_state(v) != FASTSYNC__MX_CONTENDED) return EPERM;
    /* CONTENDED: only the holder changes the state field now (sleepers CAS only from
     * UNLOCKED, or to CONTENDED again, setting or clearing STARVING), so one subtraction sets
     * it to UNLOCKED and keeps whatever the other bits hold at that moment: with STARVING the
     * mutex is then handed to the claimant, which alone may take it. (Two unlocks of one hold
     * racing each other are undefined, as POSIX's.) release: pairs with the acquire CAS of
     * the next lock (the claimant's). */
    v = fastsync__fetch_sub(&m->state, FASTSYNC__MX_CONTENDED, memory_order_release);
    /* From here on `m` may be freed by the next owner: only its address is used. The
     * claimant sleeps among the others and no wake can pick it out: wake them all (the
     * others find the mutex handed and sleep again). */
    fastsync__wake(FASTSYNC__FUTEX_ADDR(&m->state), (v & FASTSYNC__MX_STARVING) ? INT_MAX : 1,
                   (v & FASTSYNC__MX_SHARED) != 0);
    return 0;
}

FASTSYNC_API int fastsync_mutex_unlock(fastsync_mutex_t *m)
{
    uint32_t v = FASTSYNC__MX_LOCKED;
    /* release: pairs with the acquire CAS of the next lock. failure relaxed: `v` is the
     * guess for the shared mutex's CAS below and the slow path's. */
    if (fastsync__cas_strong(&m->state, &v, FASTSYNC__MX_UNLOCKED,
                             memory_order_release, memory_order_relaxed))
        return 0;
    /* A shared mutex's word, held with nobody waiting, is its shared bit | LOCKED: one more
     * CAS, as in lock. release, failure relaxed: as above. */
    if (v == (FASTSYNC__MX_SHARED | FASTSYNC__MX_LOCKED) &&
        fastsync__cas_strong(&m->state, &v, FASTSYNC__MX_SHARED,
                             memory_order_release, memory_order_relaxed))
        return 0;
    return fastsync__mutex_unlock_slow(m, v);
}

/* ======================================================================================
 * Reader-writer lock
 *
 * State: one 64-bit atomic word whose two halves are two futex words: readers sleep on its
 * low half, writers on its high half.
 *   bits  0..19  readers  read locks held, 0..FASTSYNC_RWLOCK_READERS_MAX (2^20 - 1)
 *   bits 20..27  writers  writers registered to sleep (waiting, asleep or about to be),
 *                         0..FASTSYNC__RW_WRITERS_MAX (255)
 *   bit  28      rstarve  a reader that has waited FASTSYNC_RWLOCK_HANDOFF_NS claims the
 *                         next read lock ("Fairness", below), only while wlocked; cleared
 *                         by the release of the write lock, which gives it that read lock,
 *                         or by that reader when its deadline passes first
 *   bit  29      wstarve  a registered writer that has waited as long claims the next
 *                         turn for itself; cleared by that writer
 *   bit  30      rwait    a reader may sleep on the low half: set by a reader before it
 *                         sleeps, cleared by the RMW that lets readers in again, which then
 *                         wakes every reader
 *   bit  31      wlocked  held by a writer (readers is then 0)
 *   bit  32      shared   FASTSYNC_SHARED given at init; never changes afterwards
 *   bits 33..63  wseq     the writers' wake count: the RMW that frees the lock while writers
 *                         are registered adds 1 (wrapping), then wakes one writer
 * The high half, the writers' futex word, is only the shared bit and wseq, so that wseq has
 * 31 bits: a writer compares the high half it loaded, and only 2^31 hand-offs between its
 * load and its sleep bring that value back (the bound, under "No lost wakeup").
 * Readers may enter while the word has neither wlocked nor a registered writer ("readable");
 * a writer while it has neither wlocked, readers nor wstarve ("writable"), and the writer
 * holding wstarve as if it had no wstarve (rstarve implies wlocked: see "No lost wakeup").
 *
 * Transitions (each a single RMW on the word; "hand-off" is what any RMW that can free the
 * lock or let readers in adds, fastsync__rw_handoff):
 *   rdlock      readers += 1                           when readable
 *   wrlock      wlocked (and writers -= 1 if registered) when writable
 *   rdunlock    readers -= 1, hand-off
 *   wrunlock    wlocked cleared, hand-off
 *   downgrade   wlocked cleared, readers = 1, hand-off
 *   give-up     writers -= 1, hand-off                  (a registered writer's deadline passed
 *                                                        while the lock was not writable)
 *   register    writers += 1 (a writer), or rwait set (a reader), before the first sleep
 *   claim       rstarve set (a reader, with rwait, only while wlocked) or wstarve set (a
 *               registered writer), each only while not already set ("Fairness")
 *   give back   rstarve cleared, then a wake of all on the low half (a reader whose claim
 *               its deadline ended); a writer's goes with its give-up
 *   hand-off:   when the result has rstarve and no wlocked (the write lock released while a
 *               reader claimed): readers += 1 (the claimant's read lock) and rstarve
 *               cleared, rwait cleared too if that is readable, then a wake of all on the
 *               low half (the claimant cannot be singled out); else when it has neither
 *               wlocked nor readers, and writers > 0: wseq += 1, then one wake on the high
 *               half (of all if wstarve, for the same reason); else when it is readable
 *               with rwait: rwait cleared, then a wake of all on the low half. After its RMW
 *               the caller touches only the word's address: the next owner may destroy and
 *               free the lock at once.
 *
 * No lost wakeup. A writer sleeps on the high half only while it holds the value of the
 * same load that found the lock not writable, the writer already registered; the RMW that
 * later makes the lock writable sees writers > 0 and changes wseq, so the writer's compare
 * fails or the wake that follows reaches a sleeping writer (any woken writer takes the lock
 * if it is writable, even past its deadline, so the wake is not wasted; one that finds it
 * taken again sleeps on, and that holder's unlock hands off in turn). A reader sleeps on the
 * low half only with rwait set in the value it compares, and rwait stays set while the word
 * is not readable (invariant: rwait => not readable; each transition keeps it): only a
 * hand-off clears it, by the RMW that makes the word readable, and wakes all. The claim
 * keeps it too (rstarve => wlocked: set only with wlocked, and the RMW that clears wlocked
 * clears rstarve, giving the claimant its read lock; a registered writer then keeps the
 * word not readable and rwait set for the other readers, who are woken with the claimant
 * and sleep again). A reader that gives its claim back clears rstarve only, and wakes the
 * readers (see "Fairness").
 * A writer that gives up (its deadline) deregisters; if it was the last writer registered
 * and no writer holds the lock, its hand-off lets in and wakes the readers it held back
 * (the class of glibc bug 23844). It cannot strand a writer's wake: it gives up only while
 * the lock is not writable (else it takes it), and the holder's unlock hands off again.
 * No wake needs to reach exactly one thread, nor say how many it woke: any writer a wake
 * reaches looks again, so a wake that Windows delivers to a writer already woken is not
 * lost either.
 * The bound: a registered writer kept off the CPU between its load and its futex call while
 * exactly k * 2^31 hand-offs happen (other writers taking and releasing the lock meanwhile;
 * 2^31 of them take minutes back to back) compares equal and sleeps on a lock that may be
 * free, holding readers back, until another writer's unlock or its own deadline.
 *
 * Policy: writers first. Once a writer is registered, new readers wait behind it (readers
 * already inside finish). It registers after its bounded spin, with a CAS: other threads'
 * RMWs on the word can make that CAS retry (lock-free, not wait-free: a writer could in
 * theory lose every race to readers coming and going; none was seen to lose more than a
 * few). Waiting writers go before waiting readers; among writers there is no order (the
 * kernel picks the sleeper a wake reaches, and a writer that arrives as the lock is freed
 * may take it first: barging, as the mutex); waiting readers all enter together once no
 * writer holds the lock or waits. A thread that read-locks again while it holds a read lock
 * deadlocks if a writer registered in between (as in Rust's std and Zig's RwLock; POSIX's
 * pthread_rwlock_rdlock allows it): take the lock once.
 *
 * Fairness: writers first alone would let a steady stream of writers hold readers back for
 * as long as it lasts, and barging lets writers pass a sleeping writer again and again. So a
 * waiter that has waited FASTSYNC_RWLOCK_HANDOFF_NS (default 1 ms, from its first sleep)
 * claims the next turn, one reader and one writer at a time, each knowing its claim:
 *   reader     claims rstarve, while a writer holds the lock, in the CAS that sets rwait.
 *              That writer's release (wrunlock or downgrade) then gives the claimant a read
 *              lock in its own RMW, whoever else waits, and wakes every reader; the claimant
 *              finds rstarve gone and holds the lock (no CAS of its own). Only the claimant:
 *              registered writers still hold the other readers back (it is a hand-off, not
 *              a readers' free-for-all that a preempted claimant would leave open), and the
 *              writers' turn comes when it leaves. No reader sleeps past its bound unawares:
 *              while nobody holds rstarve, a sleeping reader (whom no writer's unlock is sure
 *              to wake) sleeps in slices of FASTSYNC_RWLOCK_HANDOFF_NS and looks again after
 *              each; with a claim made, it sleeps until that hand-off's wake.
 *   writer     a registered writer woken into a lock it may not take claims wstarve. The
 *              release that frees the lock then wakes every writer and only the claimant may
 *              take it (trywrlock and the others' CAS fail on wstarve); readers stay out as
 *              behind any registered writer.
 *   deadline   a claimant whose deadline passes takes the lock if it was handed to it (0,
 *              never ETIMEDOUT then), else gives the claim back: a reader clears rstarve (the
 *              word is write-locked: nobody is let in by it) and wakes the readers so that
 *              another may claim; a writer clears wstarve with its give-up, whose hand-off
 *              wakes as any release's.
 *   cancellation  does not apply (neither lock is a cancellation point).
 * With both claims made, the reader goes first, then the claimant writer: turns alternate
 * while both kinds starve, one starving reader per writer's hold. The bound: a reader that
 * has waited FASTSYNC_RWLOCK_HANDOFF_NS claims within one more slice, at the next writer's
 * hold if a read turn is in progress, unless another reader holds the claim (then at the
 * hold after the one that serves it), and enters at the end of that hold; a writer claims
 * at its first wake-up after the bound and enters at the end of the hold in progress, or of
 * the claimant reader's hold served before it. Linux wakes sleeping writers first-in
 * first-out, so each comes to a wake-up in turn, as long as no hand-off to a claimant writer
 * (a wake of all, after which they queue in the order they run, as the mutex's sleepers)
 * happens meanwhile; the other backends promise no order among sleeping writers. So a reader
 * waits at most about the holds ahead of it plus a few times FASTSYNC_RWLOCK_HANDOFF_NS per
 * starving reader ahead; a claimant writer the hold in progress and at most one claimant
 * reader's; the bound of a writer yet to claim is the order of its wake-ups. A negative
 * FASTSYNC_RWLOCK_HANDOFF_NS turns the claims off (writers first and barging alone, as 0.4,
 * with at most 255 registered writers); 0 is the model checker's setting (Configuration).
 * The cost while nobody has waited that
 * long: none on the paths that do not sleep (rdlock's and wrlock's uncontended instructions
 * are the same); a sleeping reader's sleeps are timed (one more wake-up every
 * FASTSYNC_RWLOCK_HANDOFF_NS while it sleeps behind writers with nobody claiming), and a
 * writer reads CLOCK_MONOTONIC once before its first sleep and once per wake-up.
 * Measured with bench/latency (2-vCPU VM, Linux 6.18, glibc 2.36, 2026-12-06; medians of 5):
 * a reader's wait under 4 and 8 continuous writers (holds 50-200 us), median 1.17 and 1.20
 * ms, longest 2.96 and 3.62 ms (0.4: not in within 1 s; glibc's prefer-writer kind neither);
 * a writer's under 4 and 8 continuous readers unchanged, median 0.16 and 0.35 ms (glibc's
 * prefer-writer kind 0.23 and 0.31); 4 readers and 4 writers beside 4 busy threads (hold
 * 20-200 us): p99 24 ms for the readers and 13.5 ms for the writers (glibc prefer-writer 113
 * and 20 ms; 0.4 in one run with the hand-off's build: readers 116 ms, writers 40 ms).
 *
 * Spinning (fastsync__spin): a writer while no writer is registered (readers may sleep
 * behind another writer's hold meanwhile), with pauses only and for at most FASTSYNC_SPIN_NS,
 * then it registers: an unregistered writer holds no reader back, so writers-first starts
 * within that bound of the call (a yield beside busy threads cost it a time slice, and 16 of
 * them up to a second); a reader while only a writer's hold (no registered writer, no rwait)
 * keeps it out, as the mutex's waiters.
 *
 * No upgrade (read to write): two readers that both tried it would each wait for the other
 * to leave. Release the read lock and take the write lock, then check again what was read;
 * or take the write lock from the start and downgrade once the writing is done.
 *
 * A writer count at its maximum (255 registered) leaves a further writer unregistered:
 * it sleeps in slices of FASTSYNC__RW_SLICE_NS (1 ms) and looks again after each (nothing
 * is sure to wake it), still keeping its deadline.
 *
 * Memory order: a lock's RMW is acquire, an unlock's and a downgrade's release: a lock reads
 * the value of the RMW that last released the write lock (or, for a writer, of the readers'
 * unlocks) or of an RMW after it, each of which continues that release sequence. register
 * and rwait are relaxed: they publish nothing, and the decisions made on them read the word
 * with RMWs, totally ordered on it. A give-up is release: a reader it lets in may free the
 * lock at once, and the writer's accesses to the word must happen before that.
 *
 * Not a cancellation point (as pthread_rwlock_rdlock and _wrlock): cancellation is disabled
 * around the sleeps.
 * ====================================================================================== */

typedef struct fastsync_rwlock {
    FASTSYNC__ALIGN8 FASTSYNC__ATOMIC(uint64_t) state; /* private: use the functions */
} fastsync_rwlock_t;

#ifdef __cplusplus
#define FASTSYNC_RWLOCK_INIT { { 0 } }
#else
#define FASTSYNC_RWLOCK_INIT { 0 }
#endif

#define FASTSYNC_RWLOCK_READERS_MAX 0xfffffu
#define FASTSYNC__RW_READERS ((uint64_t)FASTSYNC_RWLOCK_READERS_MAX) /* mask; one reader is 1 */
#define FASTSYNC__RW_WRITER ((uint64_t)1 << 20)            /* one registered writer */
#define FASTSYNC__RW_WRITERS_MAX 0xffu
#define FASTSYNC__RW_WRITERS ((uint64_t)FASTSYNC__RW_WRITERS_MAX << 20) /* the writer count */
#define FASTSYNC__RW_RSTARVE ((uint64_t)1 << 28)
#define FASTSYNC__RW_WSTARVE ((uint64_t)1 << 29)
#define FASTSYNC__RW_RWAIT ((uint64_t)1 << 30)
#define FASTSYNC__RW_WLOCKED ((uint64_t)1 << 31)
#define FASTSYNC__RW_SHARED ((uint64_t)1 << 32)
#define FASTSYNC__RW_WSEQ ((uint64_t)1 << 33)              /* one hand-off to a writer */
#define FASTSYNC__RW_WSEQS (~(uint64_t)0 << 33)            /* the wseq field */
#define FASTSYNC__RW_SLICE_NS 1000000u

FASTSYNC_API uint32_t fastsync__rw_readers(uint64_t v) { return (uint32_t)(v & FASTSYNC__RW_READERS); }
FASTSYNC_API int fastsync__rw_shared(uint64_t v) { return (v & FASTSYNC__RW_SHARED) != 0; }
/* Readers may enter: no writer holds the lock or is registered. */
FASTSYNC_API int fastsync__rw_readable(uint64_t v)
{
    return (v & (FASTSYNC__RW_WLOCKED | FASTSYNC__RW_WRITERS)) == 0;
}
/* A writer may enter: nobody holds the lock and no writer claimed it (the writer that
 * claimed wstarve asks with it masked off). A reader's claim needs no look: rstarve implies
 * wlocked. */
FASTSYNC_API int fastsync__rw_writable(uint64_t v)
{
    return (v & (FASTSYNC__RW_WLOCKED | FASTSYNC__RW_READERS | FASTSYNC__RW_WSTARVE)) == 0;
}

/* The readers' futex word (the low half) and the writers' (the high half): addresses,
 * computed, never read, by an unlock. */
FASTSYNC_API void *fastsync__rw_rfutex(fastsync_rwlock_t *rw)
{
    return fastsync__low_half(FASTSYNC__FUTEX_ADDR(&rw->state));
}
FASTSYNC_API void *fastsync__rw_wfutex(fastsync_rwlock_t *rw)
{
    return fastsync__high_half(FASTSYNC__FUTEX_ADDR(&rw->state));
}

/* The hand-off (above), applied to `v`, the word after an RMW's own change: what that RMW
 * must leave instead. *wake: 0, FASTSYNC__RW_WAKE_WRITER, _WRITERS or _READERS, for
 * fastsync__rw_wake after the RMW. */
#define FASTSYNC__RW_WAKE_WRITER 1
#define FASTSYNC__RW_WAKE_READERS 2
#define FASTSYNC__RW_WAKE_WRITERS 3
FASTSYNC_API uint64_t fastsync__rw_handoff(uint64_t v, int *wake)
{
    *wake = 0;
    if ((v & (FASTSYNC__RW_WRITERS | FASTSYNC__RW_RWAIT | FASTSYNC__RW_RSTARVE)) == 0)
        return v; /* nobody waits */
    /* the write lock released while a reader claimed the next turn: that reader's read lock
     * (it alone: registered writers still hold new readers back), and a wake of every reader
     * (only that reaches it) */
    if ((v & (FASTSYNC__RW_WLOCKED | FASTSYNC__RW_RSTARVE)) == FASTSYNC__RW_RSTARVE) {
        v = v + 1 - FASTSYNC__RW_RSTARVE;
        *wake = FASTSYNC__RW_WAKE_READERS;
        return fastsync__rw_readable(v) ? v & ~FASTSYNC__RW_RWAIT : v;
    }
    /* free, writers registered: the writers' turn (wstarve: the claimant's, and only a wake
     * of all is sure to reach it) */
    if (fastsync__rw_writable(v & ~FASTSYNC__RW_WSTARVE) && (v & FASTSYNC__RW_WRITERS) != 0) {
        *wake = (v & FASTSYNC__RW_WSTARVE) ? FASTSYNC__RW_WAKE_WRITERS : FASTSYNC__RW_WAKE_WRITER;
        return v + FASTSYNC__RW_WSEQ; /* (wraps at the top of the word) */
    }
    if (fastsync__rw_readable(v) && (v & FASTSYNC__RW_RWAIT) != 0) {
        *wake = FASTSYNC__RW_WAKE_READERS;
        return v & ~FASTSYNC__RW_RWAIT;
    }
    return v;
}

/* The wake a hand-off asked for; `v` is any value the word had (for its shared bit). Only the
 * word's address is used: the lock may be freed already. */
FASTSYNC__COLD void fastsync__rw_wake(fastsync_rwlock_t *rw, int wake, uint64_t v)
{
    if (wake != FASTSYNC__RW_WAKE_READERS)
        fastsync__wake(fastsync__rw_wfutex(rw), wake == FASTSYNC__RW_WAKE_WRITER ? 1 : INT_MAX,
                       fastsync__rw_shared(v));
    else
        fastsync__wake(fastsync__rw_rfutex(rw), INT_MAX, fastsync__rw_shared(v));
}

FASTSYNC_API int fastsync_rwlock_init(fastsync_rwlock_t *rw, int flags)
{
    if (!fastsync__flags_ok(flags)) return EINVAL;
    /* relaxed: the caller publishes the object with its own happens-before. */
    fastsync__store(&rw->state, (flags & FASTSYNC_SHARED) ? FASTSYNC__RW_SHARED : 0u,
                    memory_order_relaxed);
    return 0;
}

FASTSYNC_API int fastsync_rwlock_destroy(fastsync_rwlock_t *rw)
{
    /* relaxed: a snapshot; EBUSY is a courtesy for the misuse it can see. Anything but the
     * shared bit and wseq is a holder or a waiter (rwait too, by the invariant above). */
    uint64_t v = fastsync__load(&rw->state, memory_order_relaxed);
    return (v & ~(FASTSYNC__RW_SHARED | FASTSYNC__RW_WSEQS)) != 0 ? EBUSY : 0;
}

/* A read lock if readers may enter, given *v as a fresh guess of the word; retried while
 * they may, so it never fails spuriously. 0, EBUSY (a writer holds the lock or waits) or
 * EAGAIN (FASTSYNC_RWLOCK_READERS_MAX read locks held). On EBUSY *v is the value that said
 * so (the last failed CAS's, not the first guess): a reader that goes on to sleep must
 * compare against it, since the guess may have been readable and be again by then (a
 * writer that locked and unlocked in between leaves the same value), and a reader that
 * marked rwait on it would sleep on a free lock (test/rwlock_reader_stale_guess.c). */
FASTSYNC_API int fastsync__rw_tryread(fastsync_rwlock_t *rw, uint64_t *v)
{
    /* Readable with fewer readers than the maximum, in one compare: wlocked and the writer
     * count lie above the readers field, so either makes the masked word exceed it. */
    while ((*v & (FASTSYNC__RW_WLOCKED | FASTSYNC__RW_WRITERS | FASTSYNC__RW_READERS)) <
           FASTSYNC_RWLOCK_READERS_MAX) {
        /* acquire: pairs with the release RMW that last released the write lock
         * (wrunlock, downgrade; later RMWs continue its release sequence). failure relaxed:
         * `*v` is the next guess. */
        if (fastsync__cas_weak(&rw->state, v, *v + 1, memory_order_acquire, memory_order_relaxed))
            return 0;
    }
    return fastsync__rw_readable(*v) ? EAGAIN : EBUSY;
}

FASTSYNC_API int fastsync_rwlock_tryrdlock(fastsync_rwlock_t *rw)
{
    /* relaxed: a guess for the CAS. */
    uint64_t v = fastsync__load(&rw->state, memory_order_relaxed);
    return fastsync__rw_tryread(rw, &v);
}

FASTSYNC_API int fastsync_rwlock_trywrlock(fastsync_rwlock_t *rw)
{
    /* relaxed: a guess for the CAS. */
    uint64_t v = fastsync__load(&rw->state, memory_order_relaxed);
    while (fastsync__rw_writable(v)) {
        /* acquire: pairs with the release RMW of the unlocks that freed the lock. failure
         * relaxed: `v` is the next guess; retried while writable, so never spuriously. */
        if (fastsync__cas_weak(&rw->state, &v, v | FASTSYNC__RW_WLOCKED,
                               memory_order_acquire, memory_order_relaxed))
            return 0;
    }
    return EBUSY;
}

/* The slow path of every read lock, entered once a first try found it not readable.
 * abstime NULL: no deadline (clock unused). Returns 0, EAGAIN or ETIMEDOUT. */
FASTSYNC__COLD int fastsync__rw_rdlock_slow(fastsync_rwlock_t *rw, clockid_t clock,
                                            const struct timespec *abstime)
{
    /* relaxed (every load here): a poll; the lock is taken by the acquire CAS of
     * fastsync__rw_tryread. */
    uint64_t v = fastsync__load(&rw->state, memory_order_relaxed);
    int r;
    /* Spin while only a writer's hold keeps readers out (nobody registered or asleep). */
    struct fastsync__spinner sp;
    fastsync__spin_start(&sp, abstime == NULL);
    for (;;) {
        if ((r = fastsync__rw_tryread(rw, &v)) != EBUSY) return r;
        if ((v & (FASTSYNC__RW_WRITERS | FASTSYNC__RW_RWAIT)) != 0 || !fastsync__spin(&sp)) break;
        v = fastsync__load(&rw->state, memory_order_relaxed);
    }
#if FASTSYNC__CANCEL
    int cancel;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
#endif
    int timed_out = 0;
    uint64_t claim = 0; /* FASTSYNC__RW_RSTARVE once this reader holds the readers' claim */
    struct fastsync__waiting waiting = { 0, 0 };
    for (;;) {
        /* relaxed while this reader holds no claim. With the claim, acquire: rstarve gone
         * means the hand-off gave it its read lock, and this load pairs with that release
         * RMW (wrunlock, downgrade), as a read lock's CAS would. */
        v = fastsync__load(&rw->state, claim ? memory_order_acquire : memory_order_relaxed);
        if (claim && (v & FASTSYNC__RW_RSTARVE) == 0) {
            r = 0; /* handed, even once the deadline has passed: never ETIMEDOUT then */
            break;
        }
        if ((r = fastsync__rw_tryread(rw, &v)) != EBUSY) break; /* (never with the claim) */
        if (timed_out) {
            r = ETIMEDOUT; /* rwait stays: one needless wake at most */
            if (claim == 0) break;
            /* Give the claim back. The word is write-locked (a claim is made only then and
             * lasts until the hand-off): clearing rstarve lets nobody in, so no hand-off is
             * due; the readers are woken to claim again (those that slept on it sleep with
             * no slice). relaxed: takes and publishes nothing. failure relaxed: look again
             * (a hand-off that came first gave this reader the lock: taken above). */
            if (!fastsync__cas_weak(&rw->state, &v, v & ~FASTSYNC__RW_RSTARVE,
                                    memory_order_relaxed, memory_order_relaxed))
                continue;
            fastsync__rw_wake(rw, FASTSYNC__RW_WAKE_READERS, v);
            break;
        }
        /* rwait, then sleep while the low half holds it; and the readers' claim if this
         * reader has slept past its bound, a writer holds the lock and nobody claimed.
         * relaxed: the hand-off that clears them reads them with its own RMW on this word.
         * Set only where not readable: the CAS fails if the word has changed. */
        uint64_t want = v | FASTSYNC__RW_RWAIT;
        if ((v & (FASTSYNC__RW_WLOCKED | FASTSYNC__RW_RSTARVE)) == FASTSYNC__RW_WLOCKED &&
            fastsync__waited(&waiting, FASTSYNC_RWLOCK_HANDOFF_NS))
            want |= FASTSYNC__RW_RSTARVE;
        if (want != v && !fastsync__cas_weak(&rw->state, &v, want,
                                             memory_order_relaxed, memory_order_relaxed))
            continue;
        claim |= want & ~v & FASTSYNC__RW_RSTARVE;
        v = want;
        fastsync__sleeping(&waiting, FASTSYNC_RWLOCK_HANDOFF_NS);
        /* With no claim made, no writer's unlock is sure to wake this reader: a slice. */
        if (FASTSYNC_RWLOCK_HANDOFF_NS > 0 && (v & FASTSYNC__RW_RSTARVE) == 0)
            timed_out = fastsync__wait_slice(fastsync__rw_rfutex(rw), (uint32_t)v,
                                             fastsync__rw_shared(v),
                                             (uint64_t)FASTSYNC_RWLOCK_HANDOFF_NS, clock,
                                             abstime, NULL) == ETIMEDOUT;
        else
            timed_out = fastsync__wait(fastsync__rw_rfutex(rw), (uint32_t)v,
                                       fastsync__rw_shared(v), clock, abstime) == ETIMEDOUT;
    }
#if FASTSYNC__CANCEL
    (void)pthread_setcancelstate(cancel, &cancel);
#endif
    return r;
}

/* The slow path of every write lock, entered once a first try found it not writable.
 * abstime NULL: no deadline (clock unused). Returns 0 or ETIMEDOUT. */
FASTSYNC__COLD int fastsync__rw_wrlock_slow(fastsync_rwlock_t *rw, clockid_t clock,
                                            const struct timespec *abstime)
{
    /* relaxed (every load here): a poll; the lock is taken by an acquire CAS. */
    uint64_t v = fastsync__load(&rw->state, memory_order_relaxed);
    /* Spin while no writer is registered (none asleep: the holds are short so far). */
    struct fastsync__spinner sp;
    fastsync__spin_start(&sp, 0);
    while ((v & FASTSYNC__RW_WRITERS) == 0) {
        /* acquire: pairs with the release RMW of the unlocks that freed the lock. failure
         * relaxed: `v` is the fresh poll. */
        if (fastsync__rw_writable(v) &&
            fastsync__cas_weak(&rw->state, &v, v | FASTSYNC__RW_WLOCKED,
                               memory_order_acquire, memory_order_relaxed))
            return 0;
        if (!fastsync__spin(&sp)) break;
        v = fastsync__load(&rw->state, memory_order_relaxed);
    }
#if FASTSYNC__CANCEL
    int cancel;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
#endif
    uint64_t me = 0;    /* FASTSYNC__RW_WRITER once registered */
    uint64_t claim = 0; /* FASTSYNC__RW_WSTARVE once this writer holds the writers' claim */
    struct fastsync__waiting waiting = { 0, 0 };
    int r, timed_out = 0, wake;
    for (;;) {
        if (fastsync__rw_writable(v & ~claim)) {
            /* take it, and leave the count and the claim. acquire: as above; failure
             * relaxed: look again. */
            if (fastsync__cas_weak(&rw->state, &v, (v | FASTSYNC__RW_WLOCKED) - me - claim,
                                   memory_order_acquire, memory_order_relaxed)) {
                r = 0; /* taken, even once the deadline has passed: never ETIMEDOUT then */
                break;
            }
            continue;
        }
        if (timed_out) {
            r = ETIMEDOUT;
            if (me == 0) break;
            /* give up: leave the count and the claim, and if that lets the readers in, wake
             * them. release: pairs with the acquire CAS of a reader it lets in, which may
             * destroy and free the lock at once: this thread's accesses to the word (its
             * registration, this RMW) happen before that. failure relaxed: look again. */
            if (!fastsync__cas_weak(&rw->state, &v, fastsync__rw_handoff(v - me - claim, &wake),
                                    memory_order_release, memory_order_relaxed))
                continue;
            if (wake != 0) fastsync__rw_wake(rw, wake, v);
            break;
        }
        if (me == 0 && (v & FASTSYNC__RW_WRITERS) != FASTSYNC__RW_WRITERS) {
            /* register. relaxed: the unlocks read the count with their own RMWs on this
             * word, totally ordered with this one: one ordered before it left the value that
             * `v` shows, one after it sees the count and hands off. */
            if (!fastsync__cas_weak(&rw->state, &v, v + FASTSYNC__RW_WRITER,
                                    memory_order_relaxed, memory_order_relaxed))
                continue;
            me = FASTSYNC__RW_WRITER;
            v += me;
        } else if (me != 0 && (v & FASTSYNC__RW_WSTARVE) == 0 &&
                   fastsync__waited(&waiting, FASTSYNC_RWLOCK_HANDOFF_NS)) {
            /* Woken into a lock it may not take, past its bound, nobody claiming: claim the
             * next turn. relaxed: as register (the release that hands off reads it with its
             * own RMW). */
            if (!fastsync__cas_weak(&rw->state, &v, v | FASTSYNC__RW_WSTARVE,
                                    memory_order_relaxed, memory_order_relaxed))
                continue;
            claim = FASTSYNC__RW_WSTARVE;
            v |= claim;
        }
        fastsync__sleeping(&waiting, FASTSYNC_RWLOCK_HANDOFF_NS);
        if (me != 0)
            timed_out = fastsync__wait(fastsync__rw_wfutex(rw), (uint32_t)(v >> 32),
                                       fastsync__rw_shared(v), clock, abstime) == ETIMEDOUT;
        else /* the count is full: slices, nothing is sure to wake this writer */
            timed_out = fastsync__wait_slice(fastsync__rw_wfutex(rw), (uint32_t)(v >> 32),
                                             fastsync__rw_shared(v), FASTSYNC__RW_SLICE_NS,
                                             clock, abstime, NULL) == ETIMEDOUT;
        v = fastsync__load(&rw->state, memory_order_relaxed);
    }
#if FASTSYNC__CANCEL
    (void)pthread_setcancelstate(cancel, &cancel);
#endif
    return r;
}

FASTSYNC_API int fastsync_rwlock_rdlock(fastsync_rwlock_t *rw)
{
    /* relaxed: a guess for the CAS. */
    uint64_t v = fastsync__load(&rw->state, memory_order_relaxed);
    int r = fastsync__rw_tryread(rw, &v);
    if (r != EBUSY) return r;
    return fastsync__rw_rdlock_slow(rw, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_rwlock_wrlock(fastsync_rwlock_t *rw)
{
    if (fastsync_rwlock_trywrlock(rw) == 0) return 0;
    return fastsync__rw_wrlock_slow(rw, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_rwlock_clockrdlock(fastsync_rwlock_t *rw, clockid_t clock,
                                             const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    if ((r = fastsync_rwlock_tryrdlock(rw)) != EBUSY) return r;
    if ((r = fastsync__deadline_check(clock, abstime)) != 0) return r;
    return fastsync__rw_rdlock_slow(rw, clock, abstime);
}

FASTSYNC_API int fastsync_rwlock_clockwrlock(fastsync_rwlock_t *rw, clockid_t clock,
                                             const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    if (fastsync_rwlock_trywrlock(rw) == 0) return 0;
    if ((r = fastsync__deadline_check(clock, abstime)) != 0) return r;
    return fastsync__rw_wrlock_slow(rw, clock, abstime);
}

FASTSYNC_API int fastsync_rwlock_timedrdlock(fastsync_rwlock_t *rw, const struct timespec *abs_monotonic)
{
    return fastsync_rwlock_clockrdlock(rw, CLOCK_MONOTONIC, abs_monotonic);
}

FASTSYNC_API int fastsync_rwlock_timedwrlock(fastsync_rwlock_t *rw, const struct timespec *abs_monotonic)
{
    return fastsync_rwlock_clockwrlock(rw, CLOCK_MONOTONIC, abs_monotonic);
}

/* rdunlock (readers -= 1), wrunlock (wlocked cleared) and downgrade (wlocked cleared,
 * readers = 1): `held` is the field that says the caller holds the lock that way (EPERM
 * when it is 0), `change` what is subtracted. */
FASTSYNC_API int fastsync__rw_release(fastsync_rwlock_t *rw, uint64_t held, uint64_t change)
{
    /* relaxed: a guess for the CAS. */
    uint64_t v = fastsync__load(&rw->state, memory_order_relaxed), nv;
    int wake;
    do {
        if ((v & held) == 0) return EPERM;
        nv = fastsync__rw_handoff(v - change, &wake);
        /* release: pairs with the acquire CAS of the lock that reads this value or a later
         * one. failure relaxed: the next guess. */
    } while (!fastsync__cas_weak(&rw->state, &v, nv, memory_order_release, memory_order_relaxed));
    /* From here on `rw` may be freed by the next owner: only its address is used. */
    if (wake != 0) fastsync__rw_wake(rw, wake, v);
    return 0;
}

FASTSYNC_API int fastsync_rwlock_rdunlock(fastsync_rwlock_t *rw)
{
    return fastsync__rw_release(rw, FASTSYNC__RW_READERS, 1);
}

FASTSYNC_API int fastsync_rwlock_wrunlock(fastsync_rwlock_t *rw)
{
    return fastsync__rw_release(rw, FASTSYNC__RW_WLOCKED, FASTSYNC__RW_WLOCKED);
}

FASTSYNC_API int fastsync_rwlock_downgrade(fastsync_rwlock_t *rw)
{
    return fastsync__rw_release(rw, FASTSYNC__RW_WLOCKED, FASTSYNC__RW_WLOCKED - 1);
}

/* ======================================================================================
 * One-time initialisation
 *
 * State: one 32-bit atomic word, which is also the futex word.
 *   bits 0..1  state   NEW (0: no initialiser has finished), RUNNING (1: an initialiser
 *                      runs, nobody sleeps), WAITED (2: an initialiser runs, someone may
 *                      sleep), DONE (3)
 *   bit  2     shared  FASTSYNC_SHARED given at init; never changes afterwards
 *
 * Transitions (each one RMW):
 *   NEW -> RUNNING          begin: the caller that initialises (CAS)
 *   RUNNING -> WAITED       begin: a caller about to sleep (CAS)
 *   RUNNING/WAITED -> DONE  commit (CAS), then a wake of all if it read WAITED
 *   RUNNING/WAITED -> NEW   abort (CAS), then a wake of all if it read WAITED: the
 *                           sleepers look again, and one of them initialises
 * Done: one acquire load, which reads DONE, and nothing else. No lost wakeup: a caller sleeps
 * only while the word holds WAITED, which its own CAS (or another sleeper's) put there while
 * the initialiser ran; the initialiser's commit or abort reads WAITED in its CAS and wakes
 * all. (commit and abort CAS rather than exchange, so that one made with no initialiser
 * running says EPERM and changes nothing.) A wake only when someone may sleep: RUNNING -> DONE makes none.
 *
 * Memory order: commit is a release CAS and every load that can read DONE is acquire:
 * a caller that returns 0 sees every write of the initialiser. abort is release too and the
 * begin CAS that takes NEW acquire, so the next initialiser sees what the aborted one left.
 *
 * Not a cancellation point (as pthread_once): cancellation is disabled around the sleep
 * (fastsync__wait_uncancellable).
 * fastsync_once runs fn with a cleanup handler that aborts, so an initialiser cancelled
 * inside fn (at a cancellation point of its own) leaves the once NEW, as if never called,
 * and the next caller initialises (POSIX's rule for pthread_once). Wherever threads can be
 * cancelled (FASTSYNC__THREAD_CANCEL), whatever FASTSYNC_NO_CANCEL says: that switch makes
 * the waits no cancellation points, it cannot make fn's none (test/once_cancel.c, built
 * with it too).
 * fork while another thread initialises: the child's copy says RUNNING or WAITED and no
 * thread of the child will commit, so callers in the child wait for good (as for a mutex
 * held at fork). The thread that forks from inside its own initialiser commits in both.
 * ====================================================================================== */

typedef struct fastsync_once_word {
    FASTSYNC__ATOMIC(uint32_t) state; /* private: use the functions */
} fastsync_once_t;

#ifdef __cplusplus
#define FASTSYNC_ONCE_INIT { { 0u } }
#else
#define FASTSYNC_ONCE_INIT { 0u }
#endif

#define FASTSYNC__ONCE_NEW 0u
#define FASTSYNC__ONCE_RUNNING 1u
#define FASTSYNC__ONCE_WAITED 2u
#define FASTSYNC__ONCE_DONE 3u
#define FASTSYNC__ONCE_STATE 3u  /* mask of the state field */
#define FASTSYNC__ONCE_SHARED 4u /* process-shared flag */

FASTSYNC_API int fastsync_once_init(fastsync_once_t *o, int flags)
{
    if (!fastsync__flags_ok(flags)) return EINVAL;
    /* relaxed: the caller publishes the object with its own happens-before. */
    fastsync__store(&o->state, (flags & FASTSYNC_SHARED) ? FASTSYNC__ONCE_SHARED : 0u,
                    memory_order_relaxed);
    return 0;
}

/* begin once the first look did not read DONE: initialise (1) or wait for the initialiser
 * (0, once DONE). `v` is that look. */
FASTSYNC__COLD int fastsync__once_begin_slow(fastsync_once_t *o, uint32_t v)
{
    int r;
    for (;;) {
        uint32_t state = v & FASTSYNC__ONCE_STATE;
        if (state == FASTSYNC__ONCE_DONE) {
            r = 0;
            break;
        }
        if (state == FASTSYNC__ONCE_NEW) {
            /* acquire: pairs with the release CAS of an abort, so that this initialiser
             * sees what an aborted one left. failure acquire: `v` may read DONE, and then
             * pairs with commit's release CAS. */
            if (fastsync__cas_weak(&o->state, &v, v | FASTSYNC__ONCE_RUNNING,
                                   memory_order_acquire, memory_order_acquire)) {
                r = 1;
                break;
            }
            continue;
        }
        if (state == FASTSYNC__ONCE_RUNNING) {
            /* failure acquire: as above. Success acquire only because C11 allows no
             * failure order stronger than the success order: WAITED publishes nothing, and
             * commit and abort read it with their RMW. */
            if (!fastsync__cas_weak(&o->state, &v, v + (FASTSYNC__ONCE_WAITED - FASTSYNC__ONCE_RUNNING),
                                    memory_order_acquire, memory_order_acquire))
                continue;
            v += FASTSYNC__ONCE_WAITED - FASTSYNC__ONCE_RUNNING;
        }
        fastsync__wait_uncancellable(FASTSYNC__FUTEX_ADDR(&o->state), v, (v & FASTSYNC__ONCE_SHARED) != 0);
        /* acquire: a DONE read here pairs with commit's release CAS. */
        v = fastsync__load(&o->state, memory_order_acquire);
    }
    return r;
}

FASTSYNC_API int fastsync_once_begin(fastsync_once_t *o)
{
    /* acquire: pairs with commit's release CAS: a caller that reads DONE sees every write
     * the initialiser made before it committed. */
    uint32_t v = fastsync__load(&o->state, memory_order_acquire);
    if ((v & FASTSYNC__ONCE_STATE) == FASTSYNC__ONCE_DONE) return 0;
    return fastsync__once_begin_slow(o, v);
}

/* commit (to DONE) or abort (to NEW): only from RUNNING or WAITED (else EPERM, the word
 * unchanged), then a wake of all if someone may sleep. */
FASTSYNC__COLD int fastsync__once_end(fastsync_once_t *o, uint32_t to)
{
    /* relaxed: a guess for the CAS. */
    uint32_t v = fastsync__load(&o->state, memory_order_relaxed);
    do {
        uint32_t state = v & FASTSYNC__ONCE_STATE;
        if (state != FASTSYNC__ONCE_RUNNING && state != FASTSYNC__ONCE_WAITED) return EPERM;
        /* release: pairs with the acquire loads and CAS failures that read DONE (commit),
         * and with the acquire CAS that takes NEW (abort). failure relaxed: the next guess. */
    } while (!fastsync__cas_weak(&o->state, &v, (v & FASTSYNC__ONCE_SHARED) | to,
                                 memory_order_release, memory_order_relaxed));
    /* From here on `o` may be freed by a caller that read DONE: only its address is used. */
    if ((v & FASTSYNC__ONCE_STATE) == FASTSYNC__ONCE_WAITED)
        fastsync__wake(FASTSYNC__FUTEX_ADDR(&o->state), INT_MAX, (v & FASTSYNC__ONCE_SHARED) != 0);
    return 0;
}

FASTSYNC_API int fastsync_once_commit(fastsync_once_t *o)
{
    return fastsync__once_end(o, FASTSYNC__ONCE_DONE);
}

FASTSYNC_API int fastsync_once_abort(fastsync_once_t *o)
{
    return fastsync__once_end(o, FASTSYNC__ONCE_NEW);
}

#if FASTSYNC__THREAD_CANCEL
/* The cleanup of an initialiser cancelled inside fn: as if fastsync_once was never called.
 * Wherever threads can be cancelled, FASTSYNC_NO_CANCEL or not: that switch makes the waits
 * no cancellation points; fn's are its own. */
FASTSYNC__COLD void fastsync__once_cancelled(void *o)
{
    (void)fastsync_once_abort((fastsync_once_t *)o);
}

/* fn(arg) with that cleanup pushed. */
FASTSYNC__COLD FASTSYNC__CLEANUP_FRAME void fastsync__once_call(fastsync_once_t *o, void (*fn)(void *),
                                                                void *arg)
{
    pthread_cleanup_push(fastsync__once_cancelled, o);
    fn(arg);
    pthread_cleanup_pop(0);
}
#endif

FASTSYNC_API int fastsync_once(fastsync_once_t *o, void (*fn)(void *), void *arg)
{
    if (fastsync_once_begin(o) == 1) {
#if FASTSYNC__THREAD_CANCEL
        fastsync__once_call(o, fn, arg);
#else
        fn(arg);
#endif
        (void)fastsync_once_commit(o);
    }
    return 0;
}

/* ======================================================================================
 * Latch
 *
 * State: one 64-bit atomic word.
 *   bits  0..29  count    0..FASTSYNC_LATCH_MAX (2^30 - 1); the latch is open at 0
 *   bit  30      slept    a waiter may sleep: the count_down that opens the latch wakes
 *   bit  31      shared   FASTSYNC_SHARED given at init; never changes afterwards
 *   bits 32..63  waiters  threads inside a wait (wait, timedwait, clockwait,
 *                         arrive_and_wait, a wait_any that has the latch as an entry),
 *                         from their first access to their last
 * The low half (bits 0..31) is the futex word.
 *
 * Transitions (each one RMW on the word):
 *   count_down  count -= n (CAS: n above the count is EINVAL and changes nothing); the CAS
 *               that makes the count 0 also clears `slept`, and wakes all if it read it
 *   add         count += n (CAS: EINVAL from 0 while waiters > 0; EOVERFLOW above the max)
 *   enter       waiters += 1 (fetch_add): a wait's first access, whatever the count
 *   arrive      count -= n, and waiters += 1 unless that opens the latch (one CAS:
 *               arrive_and_wait's, with count_down's rules and its wake when it opens it)
 *   slept       sets `slept` (CAS), only while count > 0: a waiter that will sleep
 *   leave       waiters -= 1: a waiter's last access, once it saw the count 0 (fetch_sub),
 *               or timed out or was cancelled or, in a wait_any, did not win (CAS: the last
 *               waiter to leave also clears `slept`, so that a latch nobody sleeps on
 *               again costs its opener no wake)
 * So a wait makes two RMWs (enter, leave; one CAS more if it sleeps), and a wait on an open
 * latch two as well: counting itself before it reads anything is what lets the latch be
 * destroyed while waiters are still on their way out (below).
 * No lost wakeup: a waiter sleeps only on a low half that has the count above 0 and
 * `slept`, which its own CAS (or another waiter's) put there; the count_down that makes
 * the count 0 comes after that CAS in the word's order, reads `slept` in its own RMW and
 * wakes every sleeper; a wake that comes before the sleep finds the word changed, and the
 * sleep does not start. The low half cannot come back to a value a sleeper holds: once the
 * count is 0 it stays 0 while any waiter is inside (add from 0 says EINVAL then). No wake
 * is sent when nobody slept: a waiter that spun and saw the opening costs the opener
 * nothing.
 * Destroy-safety: a waiter is counted in `waiters` from its first access (the enter, an
 * RMW) to its last (the leave), so whatever a waiter is doing (its spin, its sleep, its way
 * out), destroy sees it: with the count 0 and waiters > 0 it waits (yielding) until every
 * waiter has left, after which no wait touches the object (C++ std::latch's rule: the
 * latch may be destroyed as soon as no thread is blocked on it, while released waiters are
 * still returning). A wait whose first access comes after the destroy began is a call on
 * an object being destroyed, which the caller orders before the destroy, as any call
 * (arrive_and_wait counts itself down and in with one CAS, so a thread that arrives and
 * waits is counted before the latch can open). The count_down that opens the latch uses
 * only the word's address after its CAS (the wake), so the thread that opens it may
 * destroy it at once.
 *
 * Memory order: count_down's CAS is release and every RMW or load that can read the count
 * 0 and return is acquire (enter, the spin's and sleep's loads, the slept CAS's failure, a
 * leave that quits): every count_down is a release RMW, and the RMWs after it on the word
 * (count-downs, enters, leaves) continue its release sequence, so a waiter that reads 0
 * sees what every counter did before its count_down. arrive_and_wait's CAS is acq_rel (a
 * count_down, and a look that may read the count 0 and return). A leave is release and
 * destroy's load of `waiters` acquire: every write of the word after init is an RMW, so a
 * destroy that reads `waiters` 0 comes after every waiter's last access. add and slept
 * publish nothing (add only lets more count-downs be needed; `slept` only decides whether
 * the opening count_down wakes, and that CAS reads it from its own RMW); slept is acquire
 * only because its failure may read the count 0.
 *
 * wait_any: a latch entry is ready while the count is 0 (reported, not consumed); a
 * wait_any enters every latch entry at its first look (the first access, as a wait's) and
 * leaves each one it entered before it returns (the winner too).
 * ====================================================================================== */

typedef struct fastsync_latch {
    FASTSYNC__ALIGN8 FASTSYNC__ATOMIC(uint64_t) state; /* private: use the functions */
} fastsync_latch_t;

#define FASTSYNC_LATCH_MAX 0x3FFFFFFFu /* 2^30 - 1 */

#ifdef __cplusplus
#define FASTSYNC_LATCH_INIT { { 0u } }
#else
#define FASTSYNC_LATCH_INIT { 0u }
#endif

#define FASTSYNC__LATCH_COUNT ((uint64_t)FASTSYNC_LATCH_MAX) /* mask of the count field */
#define FASTSYNC__LATCH_SLEPT ((uint64_t)1 << 30)            /* a waiter may sleep */
#define FASTSYNC__LATCH_SHARED ((uint64_t)1 << 31)           /* process-shared flag */
#define FASTSYNC__LATCH_WAITER ((uint64_t)1 << 32)           /* one waiter inside */

FASTSYNC_API uint32_t fastsync__latch_count(uint64_t v) { return (uint32_t)(v & FASTSYNC__LATCH_COUNT); }
FASTSYNC_API uint32_t fastsync__latch_waiters(uint64_t v) { return (uint32_t)(v >> 32); }
FASTSYNC_API int fastsync__latch_shared(uint64_t v) { return (v & FASTSYNC__LATCH_SHARED) != 0; }

/* The futex word, the low half: its address, computed, never read, by the opener. */
FASTSYNC_API void *fastsync__latch_futex(fastsync_latch_t *l)
{
    return fastsync__low_half(FASTSYNC__FUTEX_ADDR(&l->state));
}

FASTSYNC_API int fastsync_latch_init(fastsync_latch_t *l, unsigned count, int flags)
{
    if (!fastsync__flags_ok(flags) || count > FASTSYNC_LATCH_MAX) return EINVAL;
    /* relaxed: the caller publishes the object with its own happens-before. */
    fastsync__store(&l->state, (uint64_t)count | ((flags & FASTSYNC_SHARED) ? FASTSYNC__LATCH_SHARED : 0u),
                    memory_order_relaxed);
    return 0;
}

/* fastsync__drain's view of the latch: `waiters` (acquire: pairs with each leave's release
 * RMW, a waiter's last access), and its busy test: the count above 0 (a waiter is blocked
 * again: an add reopened the latch, a misuse; relaxed: a snapshot). */
FASTSYNC__COLD uint32_t fastsync__latch_left(void *l)
{
    return fastsync__latch_waiters(fastsync__load(&((fastsync_latch_t *)l)->state, memory_order_acquire));
}
FASTSYNC__COLD int fastsync__latch_busy(void *l)
{
    return fastsync__latch_count(fastsync__load(&((fastsync_latch_t *)l)->state, memory_order_relaxed)) != 0;
}

FASTSYNC_API int fastsync_latch_destroy(fastsync_latch_t *l)
{
    /* acquire: as fastsync__latch_left's. */
    uint64_t v = fastsync__load(&l->state, memory_order_acquire);
    if (fastsync__latch_waiters(v) == 0) return 0;
    if (fastsync__latch_count(v) != 0) return EBUSY; /* a waiter is blocked */
    return fastsync__drain(fastsync__latch_left, fastsync__latch_waiters(v), fastsync__latch_busy, l);
}

/* The word after a count_down of n from v (n <= the count): the count less n, and `slept`
 * cleared if that opens the latch. */
FASTSYNC_API uint64_t fastsync__latch_down(uint64_t v, unsigned n)
{
    v -= n;
    return fastsync__latch_count(v) == 0 ? v & ~FASTSYNC__LATCH_SLEPT : v;
}

/* The opener's wake, after the CAS that made the count 0 read `v`: only if a waiter may
 * sleep. From the CAS on, `l` may be destroyed: only its address is used. */
FASTSYNC_API void fastsync__latch_opened(fastsync_latch_t *l, uint64_t v)
{
    if (v & FASTSYNC__LATCH_SLEPT) fastsync__wake(fastsync__latch_futex(l), INT_MAX, fastsync__latch_shared(v));
}

FASTSYNC_API int fastsync_latch_count_down(fastsync_latch_t *l, unsigned n)
{
    if (n == 0) return 0;
    /* relaxed: a guess for the CAS. */
    uint64_t v = fastsync__load(&l->state, memory_order_relaxed);
    do {
        if (n > fastsync__latch_count(v)) return EINVAL; /* below 0: nothing changed */
        /* release: pairs with the acquire loads and RMWs of the waiters that read the count
         * 0 (this CAS heads a release sequence that every later RMW on the word continues).
         * failure relaxed: the next guess. */
    } while (!fastsync__cas_weak(&l->state, &v, fastsync__latch_down(v, n), memory_order_release,
                                 memory_order_relaxed));
    if (fastsync__latch_count(v) == n) fastsync__latch_opened(l, v);
    return 0;
}

FASTSYNC_API int fastsync_latch_add(fastsync_latch_t *l, unsigned n)
{
    if (n == 0) return 0;
    /* relaxed: a guess for the CAS. */
    uint64_t v = fastsync__load(&l->state, memory_order_relaxed);
    do {
        uint32_t count = fastsync__latch_count(v);
        if (count == 0 && fastsync__latch_waiters(v) != 0) return EINVAL; /* waits not over */
        if (n > FASTSYNC_LATCH_MAX - count) return EOVERFLOW;
        /* relaxed: an add publishes nothing (see the section's memory order). */
    } while (!fastsync__cas_weak(&l->state, &v, v + n, memory_order_relaxed, memory_order_relaxed));
    return 0;
}

FASTSYNC_API int fastsync_latch_trywait(const fastsync_latch_t *l)
{
    /* acquire: pairs with the release CAS of every count_down (see the memory order). */
    return fastsync__latch_count(fastsync__load(&l->state, memory_order_acquire)) == 0 ? 0 : EAGAIN;
}

/* enter: a wait's first access; the word it made. acquire: a count 0 read here pairs with
 * the release CAS of every count_down. */
FASTSYNC_API uint64_t fastsync__latch_enter(fastsync_latch_t *l)
{
    return fastsync__fetch_add(&l->state, FASTSYNC__LATCH_WAITER, memory_order_acquire) + FASTSYNC__LATCH_WAITER;
}

/* leave, once the waiter saw the count 0: its last access. release: pairs with destroy's
 * acquire load of `waiters`; the waiter's own look at the count had the acquire. */
FASTSYNC_API void fastsync__latch_leave(fastsync_latch_t *l)
{
    (void)fastsync__fetch_sub(&l->state, FASTSYNC__LATCH_WAITER, memory_order_release);
}

/* leave with the latch maybe still closed (a waiter that timed out or was cancelled, a
 * wait_any that did not win it): as fastsync__latch_leave, and the last waiter to leave
 * clears `slept` (nobody sleeps then: the opening need not wake). Returns the word it
 * read. acq_rel: release, as every leave; acquire, its value may show the count 0 after
 * all (a timed-out wait then returns 0). failure relaxed: the next guess. */
FASTSYNC__COLD uint64_t fastsync__latch_quit(fastsync_latch_t *l)
{
    /* relaxed: a guess for the CAS. */
    uint64_t v = fastsync__load(&l->state, memory_order_relaxed), next;
    do {
        next = v - FASTSYNC__LATCH_WAITER;
        if (fastsync__latch_waiters(next) == 0) next &= ~FASTSYNC__LATCH_SLEPT;
    } while (!fastsync__cas_weak(&l->state, &v, next, memory_order_acq_rel, memory_order_relaxed));
    return v;
}

/* The cleanup of a waiter cancelled in its sleep: quit. */
FASTSYNC__COLD void fastsync__latch_cancelled(void *l)
{
    (void)fastsync__latch_quit((fastsync_latch_t *)l);
}

/* A waiter inside the latch (v: the word its enter or arrive made, the count above 0): spin
 * (fastsync__spin, up to FASTSYNC_SPIN_NS, as the mutex's), then sleep until
 * the count is 0 or the deadline (abstime NULL: none); leaves before it returns 0 or
 * ETIMEDOUT. Without the spin, a waiter of a latch that opens a few microseconds later
 * slept and waited for the wake: bench/latch round, 2 counters and 2 waiters on 2 CPUs,
 * 26.3 and 26.5 us from the opening to the last waiter's return; with it 4.8 and 4.4 (4+4:
 * 30 us either way; 8+8: 52-54 without, 57-58 with). */
FASTSYNC__COLD int fastsync__latch_sleep(fastsync_latch_t *l, uint64_t v, clockid_t clock,
                                         const struct timespec *abstime)
{
    /* acquire: pairs with the release CAS of every count_down. */
    struct fastsync__spinner sp;
    fastsync__spin_start(&sp, abstime == NULL);
    while (fastsync__latch_count(v) != 0 && fastsync__spin(&sp))
        v = fastsync__load(&l->state, memory_order_acquire);
    int r = 0;
    while (fastsync__latch_count(v) != 0) {
        if (r == ETIMEDOUT) {
            /* quit; the count 0 after all: 0, not ETIMEDOUT (the latch is open when the wait
             * returns) */
            return fastsync__latch_count(fastsync__latch_quit(l)) == 0 ? 0 : ETIMEDOUT;
        }
        if (!(v & FASTSYNC__LATCH_SLEPT)) {
            /* slept. failure acquire: the fresh value may show the count 0. Success acquire
             * only because C11 allows no failure order stronger than the success order:
             * `slept` publishes nothing, and the opener reads it in its own CAS. */
            if (!fastsync__cas_weak(&l->state, &v, v | FASTSYNC__LATCH_SLEPT, memory_order_acquire,
                                    memory_order_acquire))
                continue;
            v |= FASTSYNC__LATCH_SLEPT;
        }
        r = fastsync__wait(fastsync__latch_futex(l), (uint32_t)v, fastsync__latch_shared(v), clock, abstime);
        /* acquire: as above. */
        v = fastsync__load(&l->state, memory_order_acquire);
    }
    fastsync__latch_leave(l);
    return 0;
}

#if FASTSYNC__CANCEL
/* fastsync__latch_sleep with fastsync__latch_cancelled as its cancellation cleanup. */
FASTSYNC__COLD FASTSYNC__CLEANUP_FRAME int fastsync__latch_sleep_cancellable(
    fastsync_latch_t *l, uint64_t v, clockid_t clock, const struct timespec *abstime)
{
    int r;
    pthread_cleanup_push(fastsync__latch_cancelled, l);
    r = fastsync__latch_sleep(l, v, clock, abstime);
    pthread_cleanup_pop(0);
    return r;
}
#else
#define fastsync__latch_sleep_cancellable fastsync__latch_sleep
#endif

/* Every wait: enter; then, unless the count is 0, check the deadline (abstime NULL: none)
 * and wait. */
FASTSYNC_API int fastsync__latch_wait(fastsync_latch_t *l, clockid_t clock, const struct timespec *abstime)
{
    uint64_t v = fastsync__latch_enter(l);
    if (fastsync__latch_count(v) == 0) {
        fastsync__latch_leave(l);
        return 0;
    }
    int r = abstime != NULL ? fastsync__deadline_check(clock, abstime) : 0;
    if (r != 0) return fastsync__latch_count(fastsync__latch_quit(l)) == 0 ? 0 : r; /* as a timeout */
    return fastsync__latch_sleep_cancellable(l, v, clock, abstime);
}

FASTSYNC_API int fastsync_latch_wait(fastsync_latch_t *l)
{
    return fastsync__latch_wait(l, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_latch_clockwait(fastsync_latch_t *l, clockid_t clock,
                                          const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    return fastsync__latch_wait(l, clock, abstime);
}

FASTSYNC_API int fastsync_latch_timedwait(fastsync_latch_t *l, const struct timespec *abs_monotonic)
{
    return fastsync_latch_clockwait(l, CLOCK_MONOTONIC, abs_monotonic);
}

FASTSYNC_API int fastsync_latch_arrive_and_wait(fastsync_latch_t *l, unsigned n)
{
    if (n == 0) return fastsync_latch_wait(l);
    /* relaxed: a guess for the CAS. (Not an access that destroy must see: the latch cannot
     * open before this thread's count_down, the CAS below.) */
    uint64_t v = fastsync__load(&l->state, memory_order_relaxed), next;
    do {
        if (n > fastsync__latch_count(v)) return EINVAL; /* below 0: nothing changed */
        next = fastsync__latch_down(v, n);
        if (fastsync__latch_count(next) != 0) next += FASTSYNC__LATCH_WAITER;
        /* acq_rel: release, as count_down's; acquire, the count 0 it makes comes after every
         * other count_down (their release sequence). failure relaxed: the next guess. */
    } while (!fastsync__cas_weak(&l->state, &v, next, memory_order_acq_rel, memory_order_relaxed));
    if (fastsync__latch_count(next) == 0) {
        fastsync__latch_opened(l, v);
        return 0;
    }
    return fastsync__latch_sleep_cancellable(l, next, CLOCK_MONOTONIC, NULL);
}

/* ======================================================================================
 * Barrier
 *
 * State: one 64-bit atomic word.
 *   bits  0..15  arrived  arrivals in the current round (0..count)
 *   bit  16      slept    a thread of the current round may sleep: the round's end wakes
 *   bit  17      shared   FASTSYNC_SHARED given at init; never changes afterwards
 *   bits 18..31  round    the round's number, mod 2^14
 *   bits 32..47  count    the arrivals that end a round: init's count, one less for each
 *                         arrive_and_drop
 *   bits 48..63  leaving  threads inside fastsync_barrier_wait (arrived, or released and
 *                         not finished with the object) and inside a wait_token that
 *                         had to wait
 * The low half (bits 0..31) is the futex word. Each thread keeps its own place in
 * `leaving` from its arrival on, so no thread ever adds for another: POSIX lets any
 * threads take part in any round, and a thread released by an earlier round may still be
 * leaving when a later round ends without it (test barrier_mixed_rounds).
 *
 * A round (every transition one RMW on the word):
 *   wait        arrived += 1 and leaving += 1 (one fetch_add). The thread that makes
 *               arrived equal count is the serial one: it ends the round with one CAS
 *               (arrived 0, slept 0, round + 1, and leaving - 1: it has finished), and
 *               wakes all if that CAS read `slept`. Every other thread polls the word until
 *               the round number moves (bounded spin, as the mutex's), then sets `slept`
 *               (CAS) and sleeps on the low half while it holds the value with `slept`;
 *               then leaving -= 1 (its last access).
 *   arrive(n)   arrived += n by CAS, refused (EINVAL) when n is 0 or arrived + n > count.
 *               An arrival that makes arrived equal count ends the round in the same CAS
 *               (the serial thread's CAS above), and wakes if it read `slept`. It does not
 *               count itself in `leaving`: it does not wait (its token may be dropped).
 *   drop        count -= 1 by the same CAS, refused when arrived = count: the arrival
 *               itself, since a round ends when arrived equals count, and a + 1 = c
 *               exactly when a = c - 1; later rounds need c - 1.
 *   wait_token  leaving += 1 (fetch_add), then, as a thread of `wait` (above), waits
 *               until the round moved (at once if the RMW read it moved), then leaving
 *               -= 1.
 * So a thread of fastsync_barrier_wait makes two RMWs per round (the arrival, and its
 * leaving -= 1, or for the serial one the end), a third only to sleep; a round's end makes
 * a wake only if someone set `slept`. (A completion, the C++ barrier's: the serial thread
 * runs it between its arrival and the end, so that no thread of the round returns before
 * it has; arrive's CAS then only arrives, and the end is a CAS of its own.)
 * No lost wakeup: a sleeper sleeps on a low half with its own round number and `slept`,
 * which only the end of the round changes; that end's CAS comes after the `slept` CAS in
 * the word's order, reads it and wakes; a wake before the sleep finds the word changed.
 * Rounds do not mix: a thread sleeps only while the round number is its own round's, and
 * the end of that round moves it. The number is kept mod 2^14: where the same threads meet
 * in every round it cannot come back (a later round needs the sleeper's own arrival);
 * where other threads take part in later rounds, a thread released by round r and kept
 * off the CPU between its `slept` CAS and its sleep while exactly k * 16384 rounds end
 * without it sleeps on until the next round ends (the bound, as the event's generation).
 * Destroy-safety: the serial thread uses only the word's address after its CAS (the wake).
 * The others still read the word and leave after the round ended: destroy waits (yielding)
 * until `leaving` is 0, after which no thread of any round's wait touches the object;
 * EBUSY while a round is in progress (arrived > 0), and after a second with no thread
 * leaving (one died). `leaving` has 16 bits: more than 2^16 - 1 threads inside the waits
 * at once (more than count arrived, or released threads of several rounds not yet out)
 * would carry out of the word (undefined, the manual says).
 *
 * Memory order: the arrival is acq_rel and the end's CAS release: every thread's arrival is
 * a release RMW whose release sequence the later RMWs on the word continue, so the serial
 * thread's arrival (acquire) sees what every thread did before its wait, and its end
 * (release) passes that on, with its own writes (a completion's), to every thread whose
 * load reads the round moved (acquire). The end's release also orders the serial thread's
 * own accesses before anything a released thread does next: a destroy and free after
 * that thread's wait (GenMC, barrier_destroy_first_genmc). `slept` publishes nothing.
 * leaving -= 1 is release, destroy's load acquire: every write of the word after init is
 * an RMW, so a destroy that reads `leaving` 0 comes after every leaving thread's last
 * access. A wait_token's leaving += 1 is acquire (a moved round it reads pairs with the
 * end, as the loads) and its first access: if it comes before the round's end in the
 * word's order, every destroy that comes after the end counts it; if after, the call came
 * after the end, and its order with a destroy is the caller's (the manual).
 *
 * Not a cancellation point (as pthread_barrier_wait: a cancelled thread would leave its
 * round short for ever): cancellation is disabled around the sleep
 * (fastsync__wait_uncancellable).
 * fork: a child's barrier is the parent's at the fork, arrivals and leaving threads
 * included; the threads behind them do not exist in the child: a round begun before the
 * fork ends there only if enough of the child's threads arrive, and with threads still
 * leaving at the fork the child's destroy says EBUSY after a second.
 * ====================================================================================== */

typedef struct fastsync_barrier {
    FASTSYNC__ALIGN8 FASTSYNC__ATOMIC(uint64_t) state; /* private: use the functions */
} fastsync_barrier_t;

typedef uint32_t fastsync_barrier_token_t; /* a round, for fastsync_barrier_wait_token */

#define FASTSYNC_BARRIER_MAX 0xFFFFu /* 2^16 - 1 threads per round */
#define FASTSYNC_BARRIER_SERIAL (-1)  /* as PTHREAD_BARRIER_SERIAL_THREAD */

#ifdef __cplusplus
#define FASTSYNC_BARRIER_INIT(count) { { static_cast<uint64_t>(count) << 32 } }
#else
#define FASTSYNC_BARRIER_INIT(count) { (uint64_t)(count) << 32 }
#endif

#define FASTSYNC__BAR_ARRIVED 0x000000000000FFFFull
#define FASTSYNC__BAR_SLEPT 0x0000000000010000ull
#define FASTSYNC__BAR_SHARED 0x0000000000020000ull
#define FASTSYNC__BAR_ROUND 0x00000000FFFC0000ull
#define FASTSYNC__BAR_ROUND_ONE 0x0000000000040000ull
#define FASTSYNC__BAR_COUNT 0x0000FFFF00000000ull
#define FASTSYNC__BAR_COUNT_ONE 0x0000000100000000ull
#define FASTSYNC__BAR_LEAVING 0xFFFF000000000000ull
#define FASTSYNC__BAR_LEAVE_ONE 0x0001000000000000ull

FASTSYNC_API int fastsync__bar_shared(uint64_t v) { return (v & FASTSYNC__BAR_SHARED) != 0; }
FASTSYNC_API uint32_t fastsync__bar_arrived(uint64_t v) { return (uint32_t)(v & FASTSYNC__BAR_ARRIVED); }
FASTSYNC_API uint32_t fastsync__bar_count(uint64_t v) { return (uint32_t)((v & FASTSYNC__BAR_COUNT) >> 32); }
FASTSYNC_API uint32_t fastsync__bar_leaving(uint64_t v) { return (uint32_t)(v >> 48); }

/* The futex word, the low half: its address, computed, never read, by the end. */
FASTSYNC_API void *fastsync__bar_futex(fastsync_barrier_t *b)
{
    return fastsync__low_half(FASTSYNC__FUTEX_ADDR(&b->state));
}

FASTSYNC_API int fastsync_barrier_init(fastsync_barrier_t *b, unsigned count, int flags)
{
    if (!fastsync__flags_ok(flags) || count == 0 || count > FASTSYNC_BARRIER_MAX) return EINVAL;
    uint64_t v = (uint64_t)count * FASTSYNC__BAR_COUNT_ONE;
    if (flags & FASTSYNC_SHARED) v |= FASTSYNC__BAR_SHARED;
    /* relaxed: the caller publishes the object with its own happens-before. */
    fastsync__store(&b->state, v, memory_order_relaxed);
    return 0;
}

/* fastsync__drain's view of the barrier: `leaving` (acquire: pairs with each leaving
 * thread's release RMW, its last access), and its busy test: a thread has arrived (a round
 * began while threads of the last one were still leaving: misuse; relaxed: a snapshot). */
FASTSYNC__COLD uint32_t fastsync__barrier_left(void *b)
{
    return fastsync__bar_leaving(fastsync__load(&((fastsync_barrier_t *)b)->state, memory_order_acquire));
}
FASTSYNC__COLD int fastsync__barrier_busy(void *b)
{
    return fastsync__bar_arrived(fastsync__load(&((fastsync_barrier_t *)b)->state, memory_order_relaxed)) != 0;
}

/* The C++ barrier's busy test: none (std::barrier may be destroyed with split arrivals
 * pending, so long as no thread is blocked). */
FASTSYNC__COLD int fastsync__barrier_idle(void *b)
{
    (void)b;
    return 0;
}

/* destroy's wait for the threads still in the waits (`leaving`): fastsync__drain with the
 * busy test `busy`. */
FASTSYNC__COLD int fastsync__barrier_drain(fastsync_barrier_t *b, int (*busy)(void *))
{
    uint32_t left = fastsync__barrier_left(b);
    return left == 0 ? 0 : fastsync__drain(fastsync__barrier_left, left, busy, b);
}

FASTSYNC_API int fastsync_barrier_destroy(fastsync_barrier_t *b)
{
    if (fastsync__barrier_busy(b)) return EBUSY; /* a round is in progress */
    return fastsync__barrier_drain(b, fastsync__barrier_busy);
}

/* The word after the end of the round `v` is in: arrived 0, slept 0, the next round. */
FASTSYNC_API uint64_t fastsync__bar_next(uint64_t v)
{
    return (v & (FASTSYNC__BAR_COUNT | FASTSYNC__BAR_LEAVING | FASTSYNC__BAR_SHARED)) |
           ((v + FASTSYNC__BAR_ROUND_ONE) & FASTSYNC__BAR_ROUND);
}

/* The end of the round whose arrivals are all in (v: the word after the last one), by the
 * thread that made the last: `leave` is FASTSYNC__BAR_LEAVE_ONE for a thread of wait (it
 * has finished), else 0. From its CAS on, `b` may be freed: only its address is used. */
FASTSYNC_API void fastsync__barrier_end(fastsync_barrier_t *b, uint64_t v, uint64_t leave)
{
    /* release: pairs with the acquire loads that read the round moved (see the memory
     * order). failure relaxed: only `slept` and `leaving` can have changed; the next try
     * reads them. */
    while (!fastsync__cas_weak(&b->state, &v, fastsync__bar_next(v) - leave, memory_order_release,
                               memory_order_relaxed)) {
    }
    if (v & FASTSYNC__BAR_SLEPT) fastsync__wake(fastsync__bar_futex(b), INT_MAX, fastsync__bar_shared(v));
}

/* A thread counted in `leaving`: wait until the round `round` has ended, then leave (its
 * last access). */
FASTSYNC__COLD void fastsync__barrier_sleep(fastsync_barrier_t *b, uint64_t round)
{
    uint64_t v;
    struct fastsync__spinner sp;
    fastsync__spin_start(&sp, 1);
    do {
        /* acquire: a moved round pairs with the end's release CAS. */
        v = fastsync__load(&b->state, memory_order_acquire);
    } while ((v & FASTSYNC__BAR_ROUND) == round && fastsync__spin(&sp));
    while ((v & FASTSYNC__BAR_ROUND) == round) {
        if (!(v & FASTSYNC__BAR_SLEPT)) {
            /* set `slept`. failure acquire: the fresh value may show the round moved. Success
             * acquire only because C11 allows no failure order stronger than the success
             * order: `slept` publishes nothing, and the end reads it in its own CAS. */
            if (!fastsync__cas_weak(&b->state, &v, v | FASTSYNC__BAR_SLEPT, memory_order_acquire,
                                    memory_order_acquire))
                continue;
            v |= FASTSYNC__BAR_SLEPT;
        }
        fastsync__wait_uncancellable(fastsync__bar_futex(b), (uint32_t)v, fastsync__bar_shared(v));
        /* acquire: as above. */
        v = fastsync__load(&b->state, memory_order_acquire);
    }
    /* leave: the last access. release: pairs with destroy's acquire load. */
    (void)fastsync__fetch_sub(&b->state, FASTSYNC__BAR_LEAVE_ONE, memory_order_release);
}

/* fastsync_barrier_wait, with a completion: fn(arg), if fn is not NULL, run by the serial
 * thread before the round ends (the C++ barrier's). */
FASTSYNC_API int fastsync__barrier_wait_fn(fastsync_barrier_t *b, void (*fn)(void *), void *arg)
{
    /* arrive, counted in `leaving`. acq_rel: release, what this thread did comes before the
     * round's end; acquire, the serial thread sees what every thread did (see the memory
     * order). */
    uint64_t v = fastsync__fetch_add(&b->state, 1u + FASTSYNC__BAR_LEAVE_ONE, memory_order_acq_rel) +
                 (1u + FASTSYNC__BAR_LEAVE_ONE);
    if (fastsync__bar_arrived(v) != fastsync__bar_count(v)) {
        fastsync__barrier_sleep(b, v & FASTSYNC__BAR_ROUND);
        return 0;
    }
    if (fn != NULL) fn(arg);
    fastsync__barrier_end(b, v, FASTSYNC__BAR_LEAVE_ONE);
    return FASTSYNC_BARRIER_SERIAL;
}

FASTSYNC_API int fastsync_barrier_wait(fastsync_barrier_t *b)
{
    return fastsync__barrier_wait_fn(b, NULL, NULL);
}

/* fastsync_barrier_arrive and _arrive_and_drop (drop: 1), with a completion as
 * fastsync__barrier_wait_fn's: then the CAS that makes the last arrival only arrives, and
 * the round ends after fn(arg). */
FASTSYNC_API int fastsync__barrier_arrive(fastsync_barrier_t *b, unsigned n, unsigned drop,
                                          fastsync_barrier_token_t *token, void (*fn)(void *), void *arg)
{
    /* relaxed: a guess; the CAS reads the word itself. */
    uint64_t v = fastsync__load(&b->state, memory_order_relaxed), next;
    int last;
    do {
        uint32_t arrived = fastsync__bar_arrived(v), count = fastsync__bar_count(v);
        if (n + drop == 0 || n > count - arrived || drop > count - arrived - n) return EINVAL;
        next = v + n - drop * FASTSYNC__BAR_COUNT_ONE;
        last = arrived + n == count - drop;
        if (last && fn == NULL) next = fastsync__bar_next(next);
        /* acq_rel, as wait's arrival; and the end's release when it ends the round. failure
         * relaxed: the next try reads the word again. */
    } while (!fastsync__cas_weak(&b->state, &v, next, memory_order_acq_rel, memory_order_relaxed));
    if (token != NULL) *token = (fastsync_barrier_token_t)(v & FASTSYNC__BAR_ROUND);
    if (!last) return 0;
    if (fn != NULL) {
        fn(arg);
        fastsync__barrier_end(b, next, 0);
    } else if (v & FASTSYNC__BAR_SLEPT) {
        /* the round ended in the CAS: from here on `b` may be freed (only its address) */
        fastsync__wake(fastsync__bar_futex(b), INT_MAX, fastsync__bar_shared(v));
    }
    return FASTSYNC_BARRIER_SERIAL;
}

FASTSYNC_API int fastsync_barrier_arrive(fastsync_barrier_t *b, unsigned n, fastsync_barrier_token_t *token)
{
    return fastsync__barrier_arrive(b, n, 0, token, NULL, NULL);
}

FASTSYNC_API int fastsync_barrier_arrive_and_drop(fastsync_barrier_t *b)
{
    return fastsync__barrier_arrive(b, 0, 1, NULL, NULL, NULL);
}

FASTSYNC_API int fastsync_barrier_wait_token(fastsync_barrier_t *b, fastsync_barrier_token_t token)
{
    /* counted in `leaving` by its first access. acquire: a moved round pairs with the end's
     * release CAS (see the memory order). */
    (void)fastsync__fetch_add(&b->state, FASTSYNC__BAR_LEAVE_ONE, memory_order_acquire);
    fastsync__barrier_sleep(b, token); /* its first load sees the round moved, if it has */
    return 0;
}

/* ======================================================================================
 * Condition variable
 *
 * Groups. Tickets wait in groups, by the order they were registered in. Signals go to the
 * current group, the oldest one that has a ticket with no signal yet; which of its tickets
 * takes a signal is not said. A new ticket always joins the next group, made of the tickets
 * registered since the current group was formed. Once every ticket of the current group has
 * a signal, the group is released (each of its tickets returns 0, owing nothing to anyone)
 * and the next group becomes the current one, at once (whether a signal, a cancel or a
 * pass-on gave the last one); a group whose tickets all leave without one stays the current
 * group, empty, and the next signal that finds it empty first makes the next group current.
 * A broadcast releases both groups. Hence:
 *   - a signal goes only to a ticket registered before it (the current group was formed
 *     before the signal, of tickets registered before that) and not yet called (a ticket
 *     that has a signal belongs to a group that takes no more than it has tickets, and a
 *     released ticket belongs to no group);
 *   - every ticket registered before a broadcast is released by it, whatever comes after;
 *   - older tickets first: a signal never goes to the next group while the current one has
 *     a ticket without a signal (no FIFO inside a group).
 *
 * State: two words, counters only (a FASTSYNC_SHARED condvar lives in memory that another
 * process maps: no waiter may be a node on some thread's stack).
 * `state`, 64 bits, every transition one RMW on it:
 *   bits  0..10  P    signals the current group holds and has not claimed; P < U + P, the
 *                     group's tickets (when each has one, the group is released)
 *   bit  11      FWD  a wake has been passed on since the last signal (see "Wakes")
 *   bits 12..40  G    the current group's number (29 bits, mod 2^29); the next group is G+1
 *   bit  41      KP   the current group may take one signal passed on from the group before
 *                     it (a signal released that group; see "Cancels")
 *   bits 42..52  U    tickets of the current group with no signal
 *   bits 53..63  N    tickets of the next group
 *   The low 32 bits (P, FWD and the low 20 bits of G) are the futex word: every signal,
 *   broadcast and release changes them, and a sleeper sleeps while they hold what it read.
 * `released`, 32 bits: R, the tickets released and not gone yet: whatever releases tickets
 *   adds them to R before its RMW of `state` (a signal, a broadcast, a cancel or a pass-on
 *   that releases a group), and each of them takes itself off after its last look at the
 *   word (destroy waits for them; see "Destroy"). Tickets that leave through an RMW of
 *   `state` (a claim, a leave) are in the word's counts until then, and never in R.
 * `flags`: FASTSYNC_SHARED given at init; written by init only, so a plain field (its readers
 *   are ordered after init by whatever published the object).
 * A ticket (the caller's) remembers its group, G + 1 when it registered. From the word it
 * reads where it is: its group is G + 1 (next), G (current), or another one, which a
 * signal or broadcast has released: it returns 0.
 *
 * Transitions (each one RMW on `state`):
 *   register   U + P + N < 2047: N += 1; the ticket's group is G + 1   (seq_cst)
 *   signal     U > 0: give; U == 0, N > 0: shift, then give; else nothing (one load, no write)
 *     give     U -= 1, P += 1, FWD = 0; if U == 0, release
 *     shift    G += 1, U = N, N = 0, P = 0, KP = 0        (the next group becomes current)
 *     release  G += 1, U = N, N = 0, P = 0, KP = 1 if a signal gave the last signal
 *   broadcast  U + N > 0: G += 2, U = N = P = 0, KP = 0, FWD = 0      (both groups released)
 *   claim      P -= 1    a ticket of the current group, P > 0: its wait returns 0
 *   leave      U -= 1 (and release, if U reaches 0 with P > 0) or N -= 1: a ticket of the
 *              current or next group that times out with no signal (P == 0), or is
 *              cancelled
 *   pass on    KP = 0, give: a released ticket cancelled before it returned, if its group is
 *              G - 1, KP is set and U > 0 (below)
 *   forward    FWD = 1 (below)
 * A released ticket's last access is R -= 1 (release); every other ticket's, its RMW of
 * `state`.
 *
 * Why the counts hold: a give moves one ticket of the current group from "no signal" (U)
 * to "has one" (P), and a release when none is left, so P < U + P, or the group is empty.
 * A claim takes a signal and its ticket together. A ticket without a signal that leaves
 * takes nothing, and a timed-out ticket of the current group claims instead if P > 0 (a
 * timed-out waiter neither keeps nor leaks a signal). So every signal given is claimed by
 * exactly one ticket of its group, or released with it, and a wait returns 0 only for a
 * signal or broadcast (no spurious wakeups).
 *
 * Cancels. A ticket of the current group that is cancelled leaves the group's signals to
 * its other tickets, all registered before them. A released ticket cancelled before it
 * returned holds a signal, or a broadcast: a broadcast covers everyone and has nothing to
 * pass on. A signal that released a group was made after every ticket of the next group
 * registered (they registered before the release), so the first released ticket of that
 * group to be cancelled passes one signal on to the next group, while it is still current
 * (G is its group + 1) and has a ticket with no signal: KP says that this may happen, and
 * once. Any other cancel of a released ticket drops its signal: a second one (its signal
 * may be older than some tickets of the next group, which counters cannot tell apart), one
 * whose group a cancel or a pass-on released (the signals it held are older), and one
 * whose next group has been released too (its tickets each have a signal already; those
 * registered after it were registered after that signal). This is the one place where a
 * signal may go unused while a ticket registered before it still waits: two cancels in one
 * group that signals released, both before their tickets returned.
 *
 * Wakes. Every ticket sleeps on the futex word, each while it holds what the ticket read.
 * A give wakes one sleeper (any ticket of the current group may take the signal), a
 * release by a signal one (the other tickets of the group each had a signal given, with a
 * wake of its own, and those wakes reach sleepers or find them awake: one ticket is left
 * that needs one), a broadcast every sleeper. The kernel picks the sleeper (Linux wakes the
 * oldest; WaitOnAddress does not say), and the one it picks may be a ticket that cannot use
 * the wake: one of the next group, or of the current group after the signal was claimed by
 * a ticket that had not slept yet. Such a ticket passes the wake on as it sleeps again or
 * leaves: when its last sleep may have taken a wake (it returned 0, or was cancelled in
 * it), a signal is pending (P > 0) or a released ticket has not gone yet (R > 0), and FWD
 * is clear, it sets FWD and wakes every sleeper. Every
 * sleeper then looks again; one that sleeps later read the word after that wake, so while
 * FWD stays set no ticket sleeps that is owed a wake: a pending signal is claimed by a
 * ticket that looks, and a released ticket that looks returns. Only a new signal, broadcast
 * or release makes a new debt, and it clears FWD. So a wake lost to the wrong sleeper costs
 * one wake of all, once per signal, never a ring of tickets passing it round. A ticket that
 * is cancelled and leaves having taken a wake does the same.
 *
 * Destroy. A released ticket still has to look at the word to find out (a thread woken by
 * a broadcast runs later), so destroy right after a broadcast waits for it: while R > 0,
 * destroy polls R, yielding the CPU (sched_yield), until every one has made its last
 * access; it gives up (EBUSY) after a second in which none did (a waiter that died
 * released). A ticket touches the condvar only up to its R -= 1 (or its RMW of `state`), so
 * once destroy returns 0 the memory may be freed. EBUSY at once while the word counts a
 * ticket that nothing has called (U + N > 0).
 *
 * Bounds. G has 29 bits: a released ticket that stays descheduled, between its release
 * and its look at the word, while exactly k * 2^29 (or k * 2^29 - 1) groups are formed after
 * it takes itself for a ticket of the current (next) group, and the counts go wrong. A
 * sleeper that stays descheduled between its look and its sleep while exactly k * 2^20
 * groups are formed, with P and FWD as they were, sleeps on a word it takes for unchanged.
 *
 * Memory order. A signal synchronizes-with the wait that returns for it (release RMW;
 * acquire claim, or acquire load that finds the ticket released: every later write of
 * `state` is an RMW, so the signal's release sequence reaches it, through pass-ons too).
 * A ticket's last access happens before a destroy that returns 0, so that the memory may be
 * freed: a claim or a leave is a release RMW of `state`, whose release sequence destroy's
 * acquire load of `state` reads; a released ticket's R -= 1 is a release, read by destroy's
 * acquire load of R.
 * The handshake that makes a signal with no registered ticket safe to skip is Dekker's: the
 * waiter registers (RMW) and then reads its predicate; the signaler writes the predicate
 * and then reads the word. When a lock orders them (the predicate read and written under a
 * mutex, the ticket taken before the waiter's unlock or inside its lock), the lock's
 * happens-before does it. Without a lock, the register RMW and the signal's first load are
 * seq_cst, and the caller's predicate store and load must be seq_cst too (on x86 a seq_cst
 * load is a plain load; the store is an xchg): then the signal's load does not see the
 * ticket only if it comes before it in the single total order, and then the waiter's load
 * of the predicate sees the store.
 * ====================================================================================== */

typedef struct fastsync_cond {
    FASTSYNC__ALIGN8 FASTSYNC__ATOMIC(uint64_t) state; /* private: use the functions */
    FASTSYNC__ATOMIC(uint32_t) released;                /* private */
    uint32_t flags;                                     /* private */
} fastsync_cond_t;

/* A ticket: the caller's, on its stack; private fields. */
typedef struct fastsync_cond_ticket {
    uint32_t group; /* the group it joined: the next group when it registered */
    uint32_t flags; /* FASTSYNC__CT_* */
} fastsync_cond_ticket_t;

#ifdef __cplusplus
#define FASTSYNC_COND_INIT { { 0 }, { 0 }, 0 }
#else
#define FASTSYNC_COND_INIT { 0, 0, 0 }
#endif

#define FASTSYNC_COND_TICKETS_MAX 2047
#define FASTSYNC__CV_COUNT 0x7ffu                     /* mask of P, U, N */
#define FASTSYNC__CV_FWD ((uint64_t)1 << 11)          /* a wake passed on since the last signal */
#define FASTSYNC__CV_G_SHIFT 12
#define FASTSYNC__CV_G 0x1fffffffu                    /* mask of G, the current group */
#define FASTSYNC__CV_KP ((uint64_t)1 << 41)           /* may take one signal passed on */
#define FASTSYNC__CV_U_SHIFT 42
#define FASTSYNC__CV_N_SHIFT 53

#define FASTSYNC__CT_WOKEN 1u /* the ticket's last sleep may have taken a wake */

/* The word's fields, as numbers. */
struct fastsync__cv {
    uint32_t p, fwd, g, kp, u, n;
};

FASTSYNC_API struct fastsync__cv fastsync__cv_get(uint64_t v)
{
    struct fastsync__cv s;
    s.p = (uint32_t)v & FASTSYNC__CV_COUNT;
    s.fwd = (v & FASTSYNC__CV_FWD) != 0;
    s.g = (uint32_t)(v >> FASTSYNC__CV_G_SHIFT) & FASTSYNC__CV_G;
    s.kp = (v & FASTSYNC__CV_KP) != 0;
    s.u = (uint32_t)(v >> FASTSYNC__CV_U_SHIFT) & FASTSYNC__CV_COUNT;
    s.n = (uint32_t)(v >> FASTSYNC__CV_N_SHIFT) & FASTSYNC__CV_COUNT;
    return s;
}

FASTSYNC_API uint64_t fastsync__cv_put(struct fastsync__cv s)
{
    return (uint64_t)s.p | (s.fwd ? FASTSYNC__CV_FWD : 0) |
           (uint64_t)(s.g & FASTSYNC__CV_G) << FASTSYNC__CV_G_SHIFT | (s.kp ? FASTSYNC__CV_KP : 0) |
           (uint64_t)s.u << FASTSYNC__CV_U_SHIFT | (uint64_t)s.n << FASTSYNC__CV_N_SHIFT;
}

/* Whether the word counts a ticket that nothing has called (U or N). */
FASTSYNC_API int fastsync__cv_uncalled(uint64_t v) { return (v >> FASTSYNC__CV_U_SHIFT) != 0; }

/* Tickets the word counts (those of both groups: nothing has released them). */
FASTSYNC_API uint32_t fastsync__cv_waiters(uint64_t v)
{
    struct fastsync__cv s = fastsync__cv_get(v);
    return s.u + s.p + s.n;
}

/* Signals the current group holds and has not claimed. */
FASTSYNC_API uint32_t fastsync__cv_pending(uint64_t v) { return (uint32_t)v & FASTSYNC__CV_COUNT; }

/* Where ticket t is, given the word's fields. */
enum { FASTSYNC__CV_NEXT, FASTSYNC__CV_CURRENT, FASTSYNC__CV_RELEASED };
FASTSYNC_API int fastsync__cv_where(const struct fastsync__cv *s, const fastsync_cond_ticket_t *t)
{
    uint32_t d = (s->g - t->group) & FASTSYNC__CV_G;
    return d == FASTSYNC__CV_G ? FASTSYNC__CV_NEXT : d == 0 ? FASTSYNC__CV_CURRENT : FASTSYNC__CV_RELEASED;
}

/* The transitions of the same names above, on the fields; release and give return how many
 * tickets they released. */
FASTSYNC_API uint32_t fastsync__cv_release(struct fastsync__cv *s, uint32_t by_signal)
{
    uint32_t k = s->p; /* U is 0: each ticket of the group has a signal */
    s->g = (s->g + 1) & FASTSYNC__CV_G;
    s->u = s->n;
    s->n = 0;
    s->p = 0;
    s->kp = by_signal;
    return k;
}

FASTSYNC_API uint32_t fastsync__cv_give(struct fastsync__cv *s, uint32_t by_signal)
{
    s->u--;
    s->p++;
    s->fwd = 0;
    return s->u == 0 ? fastsync__cv_release(s, by_signal) : 0;
}

FASTSYNC_API void fastsync__cv_shift(struct fastsync__cv *s)
{
    (void)fastsync__cv_release(s, 0); /* the current group is empty: nothing is released */
}

/* R counts k tickets for an RMW of `state` about to be tried, *counted for the one tried
 * before (see `released` above). relaxed: it is sequenced before that RMW, whose release a
 * destroy's acquire load of `state` reads before it loads R: it then sees them counted. */
FASTSYNC_API void fastsync__cv_count(fastsync_cond_t *c, uint32_t *counted, uint32_t k)
{
    if (k != *counted) (void)fastsync__fetch_add(&c->released, k - *counted, memory_order_relaxed);
    *counted = k;
}

FASTSYNC_API void *fastsync__cv_futex(fastsync_cond_t *c)
{
    return fastsync__low_half(FASTSYNC__FUTEX_ADDR(&c->state));
}

FASTSYNC_API int fastsync__cv_shared(const fastsync_cond_t *c) { return (c->flags & FASTSYNC_SHARED) != 0; }

FASTSYNC_API int fastsync_cond_init(fastsync_cond_t *c, int flags)
{
    if (!fastsync__flags_ok(flags)) return EINVAL;
    /* relaxed: the caller publishes the object with its own happens-before. */
    fastsync__store(&c->state, (uint64_t)0, memory_order_relaxed);
    fastsync__store(&c->released, 0u, memory_order_relaxed);
    c->flags = (uint32_t)flags;
    return 0;
}

/* fastsync__drain's busy test: a ticket registered since (misuse). acquire: as in
 * fastsync_cond_destroy. */
FASTSYNC__COLD int fastsync__cond_busy(void *c)
{
    return fastsync__cv_uncalled(fastsync__load(&((fastsync_cond_t *)c)->state, memory_order_acquire));
}

/* fastsync__drain's count: released tickets that have not looked yet. acquire: as in
 * fastsync_cond_destroy. */
FASTSYNC__COLD uint32_t fastsync__cond_released(void *c)
{
    return fastsync__load(&((fastsync_cond_t *)c)->released, memory_order_acquire);
}

FASTSYNC_API int fastsync_cond_destroy(fastsync_cond_t *c)
{
    /* acquire (both): destroy returns 0 only after every ticket's last access (an RMW of
     * `state`, or a released ticket's release R -= 1 in fastsync__cv_gone), so the caller
     * may free the memory; and a release it sees in `state` has its tickets in R. */
    if (fastsync__cv_uncalled(fastsync__load(&c->state, memory_order_acquire))) return EBUSY;
    uint32_t r = fastsync__load(&c->released, memory_order_acquire);
    /* released tickets that have not looked yet: wait for them (see "Destroy" above) */
    return r == 0 ? 0 : fastsync__drain(fastsync__cond_released, r, fastsync__cond_busy, c);
}

/* A released ticket's last access to the condvar. */
FASTSYNC_API void fastsync__cv_gone(fastsync_cond_t *c)
{
    /* release: pairs with destroy's acquire loads of R: everything this ticket did to the
     * condvar happens before a destroy that returns 0. */
    (void)fastsync__fetch_sub(&c->released, 1u, memory_order_release);
    /* From here on `c` may be freed. */
}

/* How many sleepers a signal's wake and a pass-on's wake wake: one, as "Wakes" above says,
 * but every one on the Windows backend. The protocol needs a wake of one to reach a sleeper
 * still blocked when there is one; WakeByAddressSingle does not promise which waiter it
 * wakes, and under wine it did not keep that: cond_delivery_stress hung in every run, a
 * released ticket asleep after the signal that released it (its one wake most likely
 * spent on a ticket that a broadcast had woken already). A wake of all is always safe here
 * (a sleeper that cannot use it sleeps again, passing it on at most once per signal). */
#if defined(FASTSYNC_BACKEND_WINDOWS)
#define FASTSYNC__CV_WAKE_ONE INT_MAX
#else
#define FASTSYNC__CV_WAKE_ONE 1
#endif

/* signal (all 0) or broadcast (all 1). */
FASTSYNC_API int fastsync__cond_wake(fastsync_cond_t *c, int all)
{
    /* seq_cst: the signaler's half of the handshake with fastsync_cond_register's seq_cst RMW
     * (see "Memory order" above): this load sees every ticket registered before it in the
     * total order, and a ticket registered after it sees the caller's predicate. */
    uint64_t v = fastsync__load(&c->state, memory_order_seq_cst);
    if (!fastsync__cv_uncalled(v)) return 0; /* no ticket without a signal */
    int shared = fastsync__cv_shared(c), n = all ? INT_MAX : FASTSYNC__CV_WAKE_ONE;
    uint32_t counted = 0, k;
    uint64_t nv;
    do {
        struct fastsync__cv s = fastsync__cv_get(v);
        if (s.u == 0 && s.n == 0) {
            fastsync__cv_count(c, &counted, 0);
            return 0;
        }
        if (all) {
            k = s.u + s.p + s.n;
            s.g = (s.g + 2) & FASTSYNC__CV_G;
            s.u = s.n = s.p = s.kp = s.fwd = 0;
        } else {
            if (s.u == 0) fastsync__cv_shift(&s);
            k = fastsync__cv_give(&s, 1);
        }
        fastsync__cv_count(c, &counted, k); /* the tickets it releases, before it does */
        nv = fastsync__cv_put(s);
        /* release: pairs with the acquire claim or look of the waiter that returns for this
         * signal (fastsync__cond_sleep, fastsync__cond_leave). failure relaxed: a fresher `v`,
         * later in the word's order than the seq_cst load, so the handshake holds for it. */
    } while (!fastsync__cas_weak(&c->state, &v, nv, memory_order_release, memory_order_relaxed));
    /* From here on `c` may be freed by a waiter that returned: only its address is used. */
    fastsync__wake(fastsync__cv_futex(c), n, shared);
    return 0;
}

FASTSYNC_API int fastsync_cond_signal(fastsync_cond_t *c) { return fastsync__cond_wake(c, 0); }
FASTSYNC_API int fastsync_cond_broadcast(fastsync_cond_t *c) { return fastsync__cond_wake(c, 1); }

FASTSYNC_API int fastsync_cond_register(fastsync_cond_t *c, fastsync_cond_ticket_t *t)
{
    /* relaxed: a guess for the CAS. */
    uint64_t v = fastsync__load(&c->state, memory_order_relaxed), nv;
    struct fastsync__cv s;
    do {
        s = fastsync__cv_get(v);
        if (s.u + s.p + s.n >= FASTSYNC_COND_TICKETS_MAX) return EAGAIN;
        s.n++;
        nv = fastsync__cv_put(s);
        /* seq_cst: the waiter's half of the handshake with the seq_cst load in
         * fastsync__cond_wake (see "Memory order" above). failure relaxed: retried. */
    } while (!fastsync__cas_weak(&c->state, &v, nv, memory_order_seq_cst, memory_order_relaxed));
    t->group = (s.g + 1) & FASTSYNC__CV_G;
    t->flags = 0;
    return 0;
}

/* The wake ticket t may have taken and does not use, passed on (see "Wakes" above): t
 * sleeps again, or leaves without a signal; self: t is a released ticket, counted in R. */
FASTSYNC__COLD void fastsync__cv_forward(fastsync_cond_t *c, fastsync_cond_ticket_t *t, uint32_t self)
{
    if ((t->flags & FASTSYNC__CT_WOKEN) == 0) return;
    t->flags &= ~FASTSYNC__CT_WOKEN;
    /* acquire: R below then counts the tickets of every release this load sees (counted
     * before the releasing RMW, whose release sequence it reads). */
    uint64_t v = fastsync__load(&c->state, memory_order_acquire);
    for (;;) {
        struct fastsync__cv s = fastsync__cv_get(v);
        if (s.fwd) return; /* passed on since the last signal: no sleeper is owed a wake */
        /* relaxed: ordered by the acquire load above (or the CAS's). */
        uint32_t r = fastsync__load(&c->released, memory_order_relaxed) - self;
        if (s.p == 0 && r == 0) return; /* nobody is owed a wake */
        s.fwd = 1;
        /* acquire (both): as the load above, for the retry (FWD itself orders nothing; the
         * wake below does the work). */
        if (fastsync__cas_weak(&c->state, &v, fastsync__cv_put(s), memory_order_acquire,
                               memory_order_acquire))
            break;
    }
    fastsync__wake(fastsync__cv_futex(c), INT_MAX, fastsync__cv_shared(c));
}

/* Ticket t returns without a signal of its own: cancel 0, its wait timed out (a ticket owed
 * a signal takes it instead and returns 0; else ETIMEDOUT); cancel 1, it is cancelled
 * (returns 0; a signal it holds is passed on as "Cancels" above says). t is deregistered:
 * a ticket in the word by the RMW that is its last access (a wake it may have taken and
 * does not use is passed on in that same RMW, FWD, as fastsync__cv_forward would), a
 * released one by its R -= 1; afterwards at most a wake, on the word's address. */
FASTSYNC__COLD int fastsync__cond_leave(fastsync_cond_t *c, fastsync_cond_ticket_t *t, int cancel)
{
    /* acquire: a ticket found released, or a claim, synchronizes-with the signal (as in
     * fastsync__cond_sleep). */
    uint64_t v = fastsync__load(&c->state, memory_order_acquire);
    int r, pass_on, forward, where, shared = fastsync__cv_shared(c);
    int woken = (t->flags & FASTSYNC__CT_WOKEN) != 0;
    uint32_t counted = 0, k;
    for (;;) {
        struct fastsync__cv s = fastsync__cv_get(v);
        where = fastsync__cv_where(&s, t);
        r = cancel ? 0 : ETIMEDOUT;
        pass_on = forward = 0;
        k = 0;
        if (where == FASTSYNC__CV_RELEASED) {
            r = 0;
            if (!cancel || !s.kp || t->group != ((s.g - 1) & FASTSYNC__CV_G) || s.u == 0) break;
            s.kp = 0; /* pass on: the first cancel of a group a signal released */
            k = fastsync__cv_give(&s, 0);
            pass_on = 1;
        } else if (where == FASTSYNC__CV_CURRENT && s.p > 0 && !cancel) {
            s.p--; /* claim */
            r = 0;
        } else {
            if (where == FASTSYNC__CV_CURRENT) {
                s.u--;
                if (s.u == 0 && s.p > 0) k = fastsync__cv_release(&s, 0); /* each has one */
            } else {
                s.n--;
            }
            /* relaxed: ordered by the acquire load (or failed CAS) that read `v`, as in
             * fastsync__cv_forward. */
            forward = woken && !s.fwd &&
                      (s.p > 0 || k > 0 || fastsync__load(&c->released, memory_order_relaxed) > 0);
            if (forward) s.fwd = 1;
        }
        fastsync__cv_count(c, &counted, k); /* the tickets it releases, before it does */
        /* acq_rel: acquire as the load above (a claim); release: a destroy's acquire load of
         * `state` that reads this RMW then sees the tickets it releases counted in R.
         * failure acquire: as the load above, for the retry. */
        if (fastsync__cas_weak(&c->state, &v, fastsync__cv_put(s), memory_order_acq_rel,
                               memory_order_acquire))
            break;
    }
    fastsync__cv_count(c, &counted, k); /* none, if it broke out with no RMW to make */
    if (where == FASTSYNC__CV_RELEASED) {
        if (!pass_on && cancel) fastsync__cv_forward(c, t, 1); /* counted in R until gone */
        fastsync__cv_gone(c);
    }
    /* From here on `c` may be freed: only its address is used. */
    if (pass_on) fastsync__wake(fastsync__cv_futex(c), FASTSYNC__CV_WAKE_ONE, shared);
    if (forward) fastsync__wake(fastsync__cv_futex(c), INT_MAX, shared);
    return r;
}

FASTSYNC_API int fastsync_cond_cancel(fastsync_cond_t *c, fastsync_cond_ticket_t *t)
{
    return fastsync__cond_leave(c, t, 1);
}

/* A registered ticket's wait: return for a signal (claimed, or the group released), or time
 * out and leave. timed_out: the deadline has passed already (look once, then leave).
 * abstime NULL: no deadline. Returns 0 or ETIMEDOUT, the ticket deregistered. */
FASTSYNC__COLD int fastsync__cond_sleep(fastsync_cond_t *c, fastsync_cond_ticket_t *t, clockid_t clock,
                                        const struct timespec *abstime, int timed_out)
{
    int shared = fastsync__cv_shared(c);
    /* acquire: a ticket found released synchronizes-with the signal or broadcast that
     * released it (see "Memory order" above); a claim is an acq_rel CAS. */
    uint64_t v = fastsync__load(&c->state, memory_order_acquire);
    for (;;) {
        struct fastsync__cv s = fastsync__cv_get(v);
        int where = fastsync__cv_where(&s, t);
        if (where == FASTSYNC__CV_RELEASED) {
            fastsync__cv_gone(c);
            return 0;
        }
        if (where == FASTSYNC__CV_CURRENT && s.p > 0) {
            s.p--;
            /* claim (its last access). acq_rel: acquire pairs with the release CAS of the
             * signal; release: a destroy's acquire load of `state` reads this RMW or a later
             * one (every later write is an RMW: its release sequence), so the claim happens
             * before destroy returns and the memory is freed. failure acquire: the next
             * round may find the ticket released. */
            if (fastsync__cas_weak(&c->state, &v, fastsync__cv_put(s), memory_order_acq_rel,
                                   memory_order_acquire))
                return 0;
            continue;
        }
        if (timed_out) return fastsync__cond_leave(c, t, 0);
        fastsync__cv_forward(c, t, 0);
        t->flags |= FASTSYNC__CT_WOKEN;
        /* sleeps while the futex word is as read: every signal, broadcast and release
         * changes it */
        int r = fastsync__wait(fastsync__cv_futex(c), (uint32_t)v, shared, clock, abstime);
        if (r != 0) t->flags &= ~FASTSYNC__CT_WOKEN; /* the word differed, a signal, a timeout */
        timed_out = r == ETIMEDOUT;
        /* acquire: as above. */
        v = fastsync__load(&c->state, memory_order_acquire);
    }
}

/* What a cancelled waiter's cleanup handler needs. */
struct fastsync__cond_cleanup {
    fastsync_cond_t *c;
    fastsync_cond_ticket_t *t;
    fastsync_mutex_t *m; /* NULL: the ticket API (no mutex to lock again) */
};

/* The cleanup of a waiter cancelled in its sleep: deregister (passing on a signal it may
 * hold, or a wake it may have taken, as fastsync_cond_cancel), then lock the mutex again, so
 * that the caller's cleanup handlers run with it held, as POSIX requires of
 * pthread_cond_wait. */
FASTSYNC__COLD void fastsync__cond_cancelled(void *arg)
{
    struct fastsync__cond_cleanup *k = (struct fastsync__cond_cleanup *)arg;
    (void)fastsync_cond_cancel(k->c, k->t);
    if (k->m != NULL) (void)fastsync_mutex_lock(k->m);
}

#if FASTSYNC__CANCEL
/* fastsync__cond_sleep with fastsync__cond_cancelled as its cancellation cleanup. */
FASTSYNC__COLD FASTSYNC__CLEANUP_FRAME int fastsync__cond_sleep_cancellable(
    fastsync_cond_t *c, fastsync_cond_ticket_t *t, fastsync_mutex_t *m, clockid_t clock,
    const struct timespec *abstime, int timed_out)
{
    int r;
    struct fastsync__cond_cleanup k;
    k.c = c;
    k.t = t;
    k.m = m;
    pthread_cleanup_push(fastsync__cond_cancelled, &k);
    r = fastsync__cond_sleep(c, t, clock, abstime, timed_out);
    pthread_cleanup_pop(0);
    return r;
}
#endif

/* Every await and wait after its ticket is taken (and the mutex, if any, unlocked). */
FASTSYNC_API int fastsync__cond_await(fastsync_cond_t *c, fastsync_cond_ticket_t *t,
                                      fastsync_mutex_t *m, clockid_t clock,
                                      const struct timespec *abstime, int timed_out)
{
#if FASTSYNC__CANCEL
    return fastsync__cond_sleep_cancellable(c, t, m, clock, abstime, timed_out);
#else
    (void)m;
    return fastsync__cond_sleep(c, t, clock, abstime, timed_out);
#endif
}

FASTSYNC_API int fastsync_cond_await(fastsync_cond_t *c, fastsync_cond_ticket_t *t)
{
    return fastsync__cond_await(c, t, NULL, CLOCK_MONOTONIC, NULL, 0);
}

FASTSYNC_API int fastsync_cond_clockawait(fastsync_cond_t *c, fastsync_cond_ticket_t *t,
                                          clockid_t clock, const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) {
        (void)fastsync_cond_cancel(c, t);
        return r;
    }
    /* A malformed deadline is EINVAL only when the call would block, and a past one
     * ETIMEDOUT: look once (a signal owed to t is taken: 0), then leave. */
    r = fastsync__deadline_check(clock, abstime);
    int got = fastsync__cond_await(c, t, NULL, clock, abstime, r != 0);
    return got == ETIMEDOUT && r == EINVAL ? EINVAL : got;
}

FASTSYNC_API int fastsync_cond_timedawait(fastsync_cond_t *c, fastsync_cond_ticket_t *t,
                                          const struct timespec *abs_monotonic)
{
    return fastsync_cond_clockawait(c, t, CLOCK_MONOTONIC, abs_monotonic);
}

/* Every wait: take a ticket under the mutex, unlock, await, lock again. abstime NULL: no
 * deadline (clock unused). */
FASTSYNC__COLD int fastsync__cond_wait(fastsync_cond_t *c, fastsync_mutex_t *m, clockid_t clock,
                                       const struct timespec *abstime)
{
    fastsync_cond_ticket_t t;
    int r = fastsync_cond_register(c, &t);
    if (r != 0) return r;
    if (fastsync_mutex_unlock(m) != 0) {
        (void)fastsync_cond_cancel(c, &t); /* the mutex was not locked: no wait */
        return EPERM;
    }
    r = fastsync__cond_await(c, &t, m, clock, abstime, 0);
    (void)fastsync_mutex_lock(m);
    return r;
}

FASTSYNC_API int fastsync_cond_wait(fastsync_cond_t *c, fastsync_mutex_t *m)
{
    return fastsync__cond_wait(c, m, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_cond_clockwait(fastsync_cond_t *c, fastsync_mutex_t *m, clockid_t clock,
                                         const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    /* EINVAL, or ETIMEDOUT for a deadline already past: at once, the mutex held throughout
     * (no signal can be owed to a ticket not taken yet). */
    r = fastsync__deadline_check(clock, abstime);
    if (r != 0) return r;
    return fastsync__cond_wait(c, m, clock, abstime);
}

FASTSYNC_API int fastsync_cond_timedwait(fastsync_cond_t *c, fastsync_mutex_t *m,
                                         const struct timespec *abs_monotonic)
{
    return fastsync_cond_clockwait(c, m, CLOCK_MONOTONIC, abs_monotonic);
}

/* ======================================================================================
 * Waiting for any of several objects
 *
 * An entry names a semaphore, an event, a latch or a condition variable's ticket; a wait over
 * up to FASTSYNC_WAIT_ANY_MAX entries returns the index of one that is ready, and only that
 * one changes state: a token is taken from a winning semaphore (from no other), a condvar
 * ticket that wins claims its signal (and is deregistered, as an await that returns 0), an
 * event or a latch is reported and left as it is. Ready: a semaphore with a token; an event
 * that is set, or was set since the wait began (even if reset again: a set is not missed, as
 * with event_wait); a latch whose count is 0; a ticket that is called with a signal pending
 * (what await returns 0 for).
 * When several are ready at one look, the lowest index wins. A look reads the entries one
 * after the other, in index order, not at one instant: an entry made ready after the look
 * read it and before it read a later, ready one is not seen by that look (a job posted and
 * then a shutdown set may be seen as the shutdown alone); so a worker that stops on an
 * event drains its semaphores with trywait afterwards (examples/worker.c).
 *
 * The wait:
 *   1. look at every entry in order, as trywait would; the first ready one wins (each
 *      event's generation is recorded: the wait begins at this look; each latch looked at
 *      is entered, waiters += 1, the wait's first access of it, as a latch wait's);
 *   2. register on every semaphore: waiters += 1 (posts then wake); a ticket is registered
 *      already, a latch entered already;
 *   3. look again in order, now as a registered waiter (a semaphore's token is taken with
 *      take+leave), each entry's futex word read in the same load as its readiness, a reset
 *      event made BUSY (FREE -> BUSY: sets then wake), a closed latch's `slept` set (the
 *      count_down that opens it then wakes); if none is ready, sleep on all those words at
 *      once, each while it holds what was read; after any wake, timeout or change, go to 3;
 *   4. leave every entry that did not win: waiters -= 1 on each semaphore, and on every
 *      latch entered (the winner too: a latch is reported, not consumed); events keep BUSY
 *      (their next set makes one needless wake, as after a timed-out event_wait); tickets
 *      stay registered, the caller's to await, cancel or wait on again. A wait that wins at
 *      its first look, or finds its deadline past, leaves the latches it entered there.
 *
 * The trap of every multi-wait: a post wakes min(n, waiters) sleepers of its semaphore, and
 * the sleeper it wakes may be this thread, which then wins another entry (or times out)
 * and does not take the token: the token is in the word, but the plain waiter it was for
 * sleeps on. So leaving a semaphore passes the wake on, as a cancelled waiter does
 * (fastsync__sem_cancelled): if the leave's RMW shows a token and another registered
 * waiter, one FUTEX_WAKE (a needless one only makes a sleeper look again). A signal, like a
 * post, wakes one sleeper: a ticket entry whose condvar's wake this wait may have taken
 * (its sleep returned 0) and that it does not use, as it sleeps again or leaves, passes it
 * on as a condvar wait does (fastsync__cv_forward: one wake of all, at most once per
 * signal). Events need nothing: a set wakes everyone.
 * (test/wait_any_forward.c and the GenMC harness wait_any_genmc check this.)
 *
 * The sleep: futex_waitv on Linux >= 5.16 (one system call for every word, each with its
 * own private or shared flag, the caller's clock and absolute deadline). Where there is no
 * multi-wait (fastsync__waitv_sys says ENOSYS: an older kernel, qemu-user, a seccomp filter
 * that knows only futex; the Windows, POSIX and OS/2 backends), the thread sleeps on one
 * entry's word at a time, taking the entries in turn, for a slice that starts at
 * FASTSYNC__WA_SLICE_MIN_NS (50 us) and doubles after every slice that ends with nothing
 * ready, up to FASTSYNC__WA_SLICE_MAX_NS (10 ms); it looks at every entry after each slice.
 * The slices are timed on CLOCK_MONOTONIC whatever the deadline's clock (cut to what is
 * left of it), so a step of the real-time clock does not stretch one.
 * Its cost: the entry it sleeps on wakes it at once, another is seen at the end of the
 * slice (up to 10 ms late once the wait has lasted about 20 ms), and an idle waiter makes
 * about 100 wakeups a second (98 sleeps in a 1 s timedwait_any, where futex_waitv makes
 * one). bench/waitany (2 CPUs; bench/results/waitany.txt): with futex_waitv a wait over 1 to
 * 64 entries is woken in 0.98x to 1.32x the time of a single sem_wait; with the fallback,
 * in 2.1x by the entry it sleeps on and 9x by another (the end of its slice). (OS/2's
 * DosWaitMuxWaitSem needs a semaphore per object, which the OS/2 backend no longer has: it
 * takes the same slices.)
 *
 * Costs: the first look is a load per entry, an RMW per latch (and the RMW of the winner;
 * each latch looked at is left with one more); a wait that sleeps makes an RMW per semaphore
 * to register and one to leave, a CAS per reset event and per closed latch, and one system
 * call per sleep. It does not spin. Stack: about 3 KB (64 entries' words).
 * ====================================================================================== */

#define FASTSYNC_WAIT_ANY_MAX 64

/* A test's window between a wait's first look and the rest (test/wait_any_api.c defines it
 * to set and reset an event there); nothing otherwise. */
#ifndef FASTSYNC__WA_BETWEEN_LOOKS
#define FASTSYNC__WA_BETWEEN_LOOKS() ((void)0)
#endif

enum { FASTSYNC__WA_SEM = 1, FASTSYNC__WA_EVENT, FASTSYNC__WA_TICKET, FASTSYNC__WA_LATCH };

/* One entry: made by fastsync_wait_sem, _event, _latch or _ticket; private fields. */
typedef struct fastsync_wait_entry {
    int kind;                        /* FASTSYNC__WA_* */
    void *object;                    /* the semaphore, event, condition variable or latch */
    fastsync_cond_ticket_t *ticket;  /* FASTSYNC__WA_TICKET: the caller's registered ticket */
} fastsync_wait_entry_t;

FASTSYNC_API fastsync_wait_entry_t fastsync_wait_sem(fastsync_sem_t *s)
{
    fastsync_wait_entry_t e;
    e.kind = FASTSYNC__WA_SEM;
    e.object = s;
    e.ticket = NULL;
    return e;
}

FASTSYNC_API fastsync_wait_entry_t fastsync_wait_event(fastsync_event_t *ev)
{
    fastsync_wait_entry_t e;
    e.kind = FASTSYNC__WA_EVENT;
    e.object = ev;
    e.ticket = NULL;
    return e;
}

FASTSYNC_API fastsync_wait_entry_t fastsync_wait_latch(fastsync_latch_t *l)
{
    fastsync_wait_entry_t e;
    e.kind = FASTSYNC__WA_LATCH;
    e.object = l;
    e.ticket = NULL;
    return e;
}

FASTSYNC_API fastsync_wait_entry_t fastsync_wait_ticket(fastsync_cond_t *c, fastsync_cond_ticket_t *t)
{
    fastsync_wait_entry_t e;
    e.kind = FASTSYNC__WA_TICKET;
    e.object = c;
    e.ticket = t;
    return e;
}

/* EINVAL for a list the wait cannot take: none, more than FASTSYNC_WAIT_ANY_MAX, a NULL
 * pointer, an unknown kind, an object named twice (two tickets of one condvar included). */
FASTSYNC_API int fastsync__wa_args(const fastsync_wait_entry_t *list, unsigned n, const unsigned *index)
{
    if (list == NULL || index == NULL || n == 0 || n > FASTSYNC_WAIT_ANY_MAX) return EINVAL;
    for (unsigned i = 0; i < n; i++) {
        if (list[i].object == NULL || list[i].kind < FASTSYNC__WA_SEM ||
            list[i].kind > FASTSYNC__WA_LATCH || (list[i].kind == FASTSYNC__WA_TICKET) != (list[i].ticket != NULL))
            return EINVAL;
        for (unsigned j = 0; j < i; j++)
            if (list[j].object == list[i].object) return EINVAL;
    }
    return 0;
}

/* What a wait's first look records (the wait begins there), kept by fastsync__wait_any. */
struct fastsync__wa_first {
    uint32_t gen[FASTSYNC_WAIT_ANY_MAX]; /* events: the generation at the first look */
    uint64_t joined; /* latches: bit i, entry i's latch counts this wait among its waiters */
};

/* What a wait that may sleep keeps per entry, and for its cancellation cleanup. */
struct fastsync__wa {
    const fastsync_wait_entry_t *list;
    unsigned n;
    struct fastsync__waitv v[FASTSYNC_WAIT_ANY_MAX]; /* each entry's futex word, as last read */
    struct fastsync__wa_first *first;                /* the first look's record */
};

/* How fastsync__wa_try looks at an entry:
 *   LOOK   not registered; where `first` is not NULL (the first look of every wait; trywait
 *          records nothing) records an event's generation and enters a latch
 *   FIRST  not registered (but in the latches); records the entry's futex word
 *   AGAIN  registered; records the value to sleep on (a reset event made BUSY first, a
 *          latch's `slept` set)
 *   LAST   registered, the deadline has passed; records nothing */
enum { FASTSYNC__WA_LOOK, FASTSYNC__WA_FIRST, FASTSYNC__WA_AGAIN, FASTSYNC__WA_LAST };

/* Entry i of w: true if it is ready, its state taken (a token, a claimed signal). first: the
 * first look's record (LOOK: NULL or where to record; else w->first). */
FASTSYNC_API int fastsync__wa_try(const fastsync_wait_entry_t *e, struct fastsync__wa *w,
                                  struct fastsync__wa_first *first, unsigned i, int how)
{
    const int registered = how >= FASTSYNC__WA_AGAIN;
    if (e->kind == FASTSYNC__WA_SEM) {
        fastsync_sem_t *s = (fastsync_sem_t *)e->object;
        /* relaxed: a guess for the CAS; registered, also the value to sleep on (a token that
         * comes after it changes the futex word, and the sleep does not start). */
        uint64_t old = fastsync__load(&s->state, memory_order_relaxed);
        if (how == FASTSYNC__WA_FIRST) {
            w->v[i].word = fastsync__sem_futex(s);
            w->v[i].expected = 0;
            w->v[i].shared = fastsync__sem_shared(old);
        }
        if (!registered) return fastsync__sem_take(s, old) == 0;
        while (fastsync__sem_tokens(old) != 0) {
            /* take+leave. acquire: pairs with the release CAS of the post that published the
             * token. failure relaxed: loop with the fresh value. */
            if (fastsync__cas_weak(&s->state, &old, old - FASTSYNC__SEM_WAITER - 1,
                                   memory_order_acquire, memory_order_relaxed))
                return 1;
        }
        return 0;
    }
    if (e->kind == FASTSYNC__WA_LATCH) {
        fastsync_latch_t *l = (fastsync_latch_t *)e->object;
        uint64_t v;
        if (how == FASTSYNC__WA_LOOK && first != NULL) {
            /* enter, the wait's first access of the latch (as a wait's, whose acquire it
             * has); entered latches leave in fastsync__wa_leave_latches, the winner too */
            v = fastsync__latch_enter(l);
            first->joined |= (uint64_t)1 << i;
        } else {
            /* acquire: pairs with the release CAS of every count_down. */
            v = fastsync__load(&l->state, memory_order_acquire);
        }
        /* once seen 0 by a wait that entered it, the count stays 0 until that wait leaves
         * (add from 0 says EINVAL while a waiter is inside) */
        if (fastsync__latch_count(v) == 0) return 1;
        if (how == FASTSYNC__WA_LOOK) return 0;
        if (how == FASTSYNC__WA_FIRST) {
            w->v[i].word = fastsync__latch_futex(l);
            w->v[i].shared = fastsync__latch_shared(v);
        }
        /* AGAIN: the value to sleep on, with `slept` (as fastsync__latch_sleep's CAS, whose
         * comment says why these orders); on failure, look at the fresh value. */
        while (how == FASTSYNC__WA_AGAIN && !(v & FASTSYNC__LATCH_SLEPT)) {
            if (fastsync__cas_weak(&l->state, &v, v | FASTSYNC__LATCH_SLEPT, memory_order_acquire,
                                   memory_order_acquire))
                v |= FASTSYNC__LATCH_SLEPT;
            else if (fastsync__latch_count(v) == 0)
                return 1;
        }
        w->v[i].expected = (uint32_t)v;
        return 0;
    }
    if (e->kind == FASTSYNC__WA_EVENT) {
        fastsync_event_t *ev = (fastsync_event_t *)e->object;
        /* acquire: pairs with the release CAS in fastsync_event_set. */
        uint32_t old = fastsync__load(&ev->state, memory_order_acquire);
        for (;;) {
            if (fastsync__ev_state(old) == FASTSYNC__EV_SET) return 1;
            if (how == FASTSYNC__WA_LOOK) {
                if (first != NULL) first->gen[i] = old & FASTSYNC__EV_GEN; /* the wait begins here */
                return 0;
            }
            if ((old & FASTSYNC__EV_GEN) != first->gen[i]) return 1; /* set since the first look */
            if (how == FASTSYNC__WA_FIRST) {
                w->v[i].word = FASTSYNC__FUTEX_ADDR(&ev->state);
                w->v[i].shared = fastsync__ev_shared(old);
                return 0;
            }
            if (how == FASTSYNC__WA_LAST) return 0;
            if (fastsync__ev_state(old) == FASTSYNC__EV_BUSY) break;
            /* FREE -> BUSY, as in fastsync__event_wait_slow (whose comment says why these
             * orders); on failure, look at the fresh value. */
            if (fastsync__cas_strong(&ev->state, &old, old | FASTSYNC__EV_BUSY,
                                     memory_order_acquire, memory_order_acquire)) {
                old |= FASTSYNC__EV_BUSY;
                break;
            }
        }
        w->v[i].expected = old;
        return 0;
    }
    fastsync_cond_t *c = (fastsync_cond_t *)e->object;
    fastsync_cond_ticket_t *t = e->ticket;
    /* acquire: as in fastsync__cond_sleep (a ticket found released; a claim). */
    uint64_t v = fastsync__load(&c->state, memory_order_acquire);
    for (;;) {
        struct fastsync__cv s = fastsync__cv_get(v);
        int where = fastsync__cv_where(&s, t);
        if (where == FASTSYNC__CV_RELEASED) {
            fastsync__cv_gone(c); /* deregistered, as an await that returns 0 */
            return 1;
        }
        if (where == FASTSYNC__CV_NEXT || s.p == 0) {
            if (how == FASTSYNC__WA_FIRST) {
                w->v[i].word = fastsync__cv_futex(c);
                w->v[i].shared = fastsync__cv_shared(c);
            } else if (how == FASTSYNC__WA_AGAIN) {
                fastsync__cv_forward(c, t, 0); /* as fastsync__cond_sleep */
                w->v[i].expected = (uint32_t)v;
            }
            return 0;
        }
        s.p--;
        /* claim (the entry's last access). acq_rel: as in fastsync__cond_sleep. failure
         * acquire: the next round may find the ticket released. */
        if (fastsync__cas_weak(&c->state, &v, fastsync__cv_put(s), memory_order_acq_rel,
                               memory_order_acquire))
            return 1; /* claimed: deregistered, as an await that returns 0 */
    }
}

/* Every latch that `joined` marks (bit i: entry i of list) quits: its last access. */
FASTSYNC__COLD void fastsync__wa_leave_latches(const fastsync_wait_entry_t *list, uint64_t joined)
{
    for (unsigned i = 0; joined != 0; i++, joined >>= 1)
        if (joined & 1u) (void)fastsync__latch_quit((fastsync_latch_t *)list[i].object);
}

/* Step 4 above: every entry but `winner` (n: none) leaves, passing on a wake it may have
 * absorbed; every latch entered leaves, the winner too. Like a post, it touches each object
 * only up to its RMW. */
FASTSYNC__COLD void fastsync__wa_leave(struct fastsync__wa *w, unsigned winner)
{
    for (unsigned i = 0; i < w->n; i++) {
        const fastsync_wait_entry_t *e = &w->list[i];
        if (i == winner) continue;
        if (e->kind == FASTSYNC__WA_SEM) {
            fastsync__sem_cancelled((fastsync_sem_t *)e->object); /* leave, pass the wake on */
        } else if (e->kind == FASTSYNC__WA_TICKET) {
            /* the ticket stays registered; a wake its condvar owes another sleeper, which
             * the last sleep may have taken, is passed on */
            fastsync__cv_forward((fastsync_cond_t *)e->object, e->ticket, 0);
        }
    }
    fastsync__wa_leave_latches(w->list, w->first->joined);
}

FASTSYNC__COLD void fastsync__wa_cancelled(void *arg)
{
    struct fastsync__wa *w = (struct fastsync__wa *)arg;
    fastsync__wa_leave(w, w->n);
}

/* Marks every ticket entry of w but `keep` (n: none) as having slept on its condvar in a
 * sleep that may have taken a wake (on 1), or not (on 0): FASTSYNC__CT_WOKEN, which
 * fastsync__cv_forward reads. */
FASTSYNC__COLD void fastsync__wa_woken(struct fastsync__wa *w, unsigned keep, int on)
{
    for (unsigned i = 0; i < w->n; i++) {
        fastsync_cond_ticket_t *t = w->list[i].ticket;
        if (w->list[i].kind != FASTSYNC__WA_TICKET || i == keep) continue;
        if (on) t->flags |= FASTSYNC__CT_WOKEN;
        else t->flags &= ~FASTSYNC__CT_WOKEN;
    }
}

#define FASTSYNC__WA_SLICE_MIN_NS 50000u
#define FASTSYNC__WA_SLICE_MAX_NS 10000000u

/* One sleep on every entry's word (step 3): 0 (look again) or ETIMEDOUT (the deadline has
 * passed). *one: 0 while the backend's multi-wait works; else the fallback's round, which
 * picks the entry slept on and the slice. */
FASTSYNC__COLD int fastsync__wa_sleep(struct fastsync__wa *w, unsigned *one, clockid_t clock,
                                      const struct timespec *abstime)
{
    fastsync__wa_woken(w, w->n, 1);
    if (*one == 0) {
        int r = fastsync__wait_many(w->v, w->n, clock, abstime);
        if (r != ENOSYS) {
            if (r != 0) fastsync__wa_woken(w, w->n, 0); /* no wake taken */
            return r == ETIMEDOUT ? ETIMEDOUT : 0;
        }
        *one = 1;
    }
    /* The fallback: a slice on one entry's word (looked at again after it). */
    unsigned round = (*one)++;
    /* the minimum doubled once per slice before this one, up to the maximum (a shift, not a
     * loop: clang -O1 turns such a loop's count into an llvm.umin, which GenMC cannot run) */
    uint64_t slice = round <= 8 ? (uint64_t)FASTSYNC__WA_SLICE_MIN_NS << (round - 1) : FASTSYNC__WA_SLICE_MAX_NS;
    if (slice > FASTSYNC__WA_SLICE_MAX_NS) slice = FASTSYNC__WA_SLICE_MAX_NS;
    unsigned slept_on = (round - 1) % w->n;
    const struct fastsync__waitv *v = &w->v[slept_on];
    int r, woke;
    r = fastsync__wait_slice(v->word, v->expected, v->shared, slice, clock, abstime, &woke);
    fastsync__wa_woken(w, woke != 0 ? w->n : slept_on, 0); /* only that word's wake was taken */
    return r;
}

/* Steps 2 to 4, entered after a first look found nothing ready. Returns 0 (*index set) or
 * ETIMEDOUT. */
FASTSYNC__COLD int fastsync__wa_slow(struct fastsync__wa *w, unsigned *index, clockid_t clock,
                                     const struct timespec *abstime)
{
    unsigned one = 0;
    int how = FASTSYNC__WA_AGAIN;
    for (unsigned i = 0; i < w->n; i++)
        if (w->list[i].kind == FASTSYNC__WA_SEM) {
            fastsync_sem_t *s = (fastsync_sem_t *)w->list[i].object;
            /* register. relaxed: as in fastsync__sem_wait_slow (posts read the count from
             * their own RMW; the take+leave reads the tokens with acquire). */
            (void)fastsync__fetch_add(&s->state, FASTSYNC__SEM_WAITER, memory_order_relaxed);
        }
    for (;;) {
        for (unsigned i = 0; i < w->n; i++)
            if (fastsync__wa_try(&w->list[i], w, w->first, i, how)) {
                fastsync__wa_leave(w, i);
                *index = i;
                return 0;
            }
        if (how == FASTSYNC__WA_LAST) {
            fastsync__wa_leave(w, w->n);
            return ETIMEDOUT;
        }
        if (fastsync__wa_sleep(w, &one, clock, abstime) == ETIMEDOUT) how = FASTSYNC__WA_LAST;
    }
}

#if FASTSYNC__CANCEL
/* fastsync__wa_slow with fastsync__wa_cancelled as its cancellation cleanup. */
FASTSYNC__COLD FASTSYNC__CLEANUP_FRAME int fastsync__wa_slow_cancellable(
    struct fastsync__wa *w, unsigned *index, clockid_t clock, const struct timespec *abstime)
{
    int r;
    pthread_cleanup_push(fastsync__wa_cancelled, w);
    r = fastsync__wa_slow(w, index, clock, abstime);
    pthread_cleanup_pop(0);
    return r;
}
#endif

/* A wait whose first look found nothing ready (and recorded each event's generation: a set
 * after that look shows as a moved generation; and entered every latch): record the words,
 * then steps 2 to 4. */
FASTSYNC__COLD int fastsync__wa_block(const fastsync_wait_entry_t *list, unsigned n, unsigned *index,
                                      struct fastsync__wa_first *first, clockid_t clock,
                                      const struct timespec *abstime)
{
    struct fastsync__wa w;
    w.list = list;
    w.n = n;
    w.first = first;
    for (unsigned i = 0; i < n; i++)
        if (fastsync__wa_try(&list[i], &w, first, i, FASTSYNC__WA_FIRST)) {
            fastsync__wa_leave_latches(list, first->joined);
            *index = i;
            return 0;
        }
#if FASTSYNC__CANCEL
    return fastsync__wa_slow_cancellable(&w, index, clock, abstime);
#else
    return fastsync__wa_slow(&w, index, clock, abstime);
#endif
}

/* Every wait: check the list, look once, then (unless try) check the deadline and block.
 * abstime NULL: no deadline. */
FASTSYNC_API int fastsync__wait_any(const fastsync_wait_entry_t *list, unsigned n, unsigned *index,
                                    int try_only, clockid_t clock, const struct timespec *abstime)
{
    struct fastsync__wa_first first; /* this first look's record */
    int r = fastsync__wa_args(list, n, index);
    if (r != 0) return r;
    first.joined = 0;
    for (unsigned i = 0; i < n; i++)
        if (fastsync__wa_try(&list[i], NULL, try_only ? NULL : &first, i, FASTSYNC__WA_LOOK)) {
            if (first.joined != 0) fastsync__wa_leave_latches(list, first.joined);
            *index = i;
            return 0;
        }
    if (try_only) return EAGAIN;
    FASTSYNC__WA_BETWEEN_LOOKS();
    if (abstime != NULL) {
        r = fastsync__deadline_check(clock, abstime);
        if (r != 0) {
            if (first.joined != 0) fastsync__wa_leave_latches(list, first.joined);
            return r;
        }
    }
    return fastsync__wa_block(list, n, index, &first, clock, abstime);
}

FASTSYNC_API int fastsync_wait_any(const fastsync_wait_entry_t *list, unsigned n, unsigned *index)
{
    return fastsync__wait_any(list, n, index, 0, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_trywait_any(const fastsync_wait_entry_t *list, unsigned n, unsigned *index)
{
    return fastsync__wait_any(list, n, index, 1, CLOCK_MONOTONIC, NULL);
}

FASTSYNC_API int fastsync_clockwait_any(const fastsync_wait_entry_t *list, unsigned n, unsigned *index,
                                        clockid_t clock, const struct timespec *abstime)
{
    int r = fastsync__clock_args(clock, abstime);
    if (r != 0) return r;
    return fastsync__wait_any(list, n, index, 0, clock, abstime);
}

FASTSYNC_API int fastsync_timedwait_any(const fastsync_wait_entry_t *list, unsigned n, unsigned *index,
                                        const struct timespec *abs_monotonic)
{
    return fastsync_clockwait_any(list, n, index, CLOCK_MONOTONIC, abs_monotonic);
}

#ifdef __cplusplus
}
#pragma GCC diagnostic pop

/* The value of FASTSYNC_SEM_INIT(N) in C++, checked at compile time (a template cannot have
 * C linkage, hence out here). */
template <long long N> struct fastsync__sem_init_value {
    static_assert(N >= 0 && N <= FASTSYNC_SEM_VALUE_MAX,
                  "FASTSYNC_SEM_INIT(n): n must be a constant in 0..FASTSYNC_SEM_VALUE_MAX");
    static constexpr uint64_t value = static_cast<uint64_t>(N);
};
#endif

#endif /* FASTSYNC_H */
