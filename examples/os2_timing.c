/* SPDX-License-Identifier: MIT */
/* os2_timing.c - what a call costs on OS/2, by the method of seed 000: read the
 * high-resolution timer (DosTmrQueryTime) just before and just after one call, 300 times,
 * and keep the smallest difference. The minimum strips out preemption and cache misses;
 * the timer's frequency does not matter for comparing the calls (it is printed anyway).
 *
 *   DosEnterCritSec()                 suspends the process's other threads
 *   DosRequestMutexSem()              on a free mutex semaphore
 *   fastsync_sem_wait()               on a posted fastsync semaphore (a token is there)
 *   fastsync_event_wait()             on a set fastsync event
 *
 * The last two stay in user space when they need not sleep, so they should cost little
 * more than the two timer reads around them.
 *
 * Build on OS/2:  gcc -Zmt -I. examples/os2_timing.c -o os2_timing.exe        (GCC, kLIBC)
 *                 wcl386 -bt=os2 -bm -I. examples\os2_timing.c                   (OpenWatcom)
 * On Linux the test suite builds it over the OS/2 API double in test/os2. */
#define INCL_DOSPROFILE
#define INCL_DOSPROCESS
#define INCL_DOSSEMAPHORES
#define INCL_DOSERRORS
#include <os2.h>

#include "fastsync.h"

#include <stdbool.h>
#include <stdio.h>

#define SAMPLES 300

/* The timer as one number. ULONG is 32 bits on OS/2; the masks keep the halves right where
 * it is wider (the double on a 64-bit system). */
static unsigned long long ticks(const QWORD *q)
{
    return ((unsigned long long)(q->ulHi & 0xffffffffUL) << 32) | (q->ulLo & 0xffffffffUL);
}

static void report(const char *what, unsigned long long min, ULONG hz)
{
    /* ticks to nanoseconds, in two steps so that nothing overflows */
    unsigned long long ns = min / hz * 1000000000ULL + min % hz * 1000000000ULL / hz;
    printf("%-24s %6llu ticks  (%llu ns)\n", what, min, ns);
}

int main(void)
{
    ULONG hz = 0;
    HMTX mutex = 0;
    fastsync_sem_t sem;
    fastsync_event_t ev;
    QWORD start, end;
    unsigned long long crit_min = ~0ULL, mutex_min = ~0ULL, sem_min = ~0ULL, ev_min = ~0ULL, d;
    int i, failed = 0;

    if (DosTmrQueryFreq(&hz) != NO_ERROR || hz == 0) {
        fprintf(stderr, "DosTmrQueryFreq failed\n");
        return 1;
    }
    if (DosCreateMutexSem(NULL, &mutex, 0, FALSE) != NO_ERROR) {
        fprintf(stderr, "DosCreateMutexSem failed\n");
        return 1;
    }
    if (fastsync_sem_init(&sem, 0, 0) != 0 || fastsync_event_init(&ev, true, 0) != 0) {
        fprintf(stderr, "fastsync init failed (no OS/2 semaphore left?)\n");
        return 1;
    }

    for (i = 0; i < SAMPLES; i++) {
        DosTmrQueryTime(&start);
        failed |= DosEnterCritSec() != NO_ERROR;
        DosTmrQueryTime(&end);
        DosExitCritSec();
        d = ticks(&end) - ticks(&start);
        if (d < crit_min) crit_min = d;

        DosTmrQueryTime(&start);
        failed |= DosRequestMutexSem(mutex, SEM_INDEFINITE_WAIT) != NO_ERROR;
        DosTmrQueryTime(&end);
        DosReleaseMutexSem(mutex);
        d = ticks(&end) - ticks(&start);
        if (d < mutex_min) mutex_min = d;

        fastsync_sem_post(&sem); /* untimed: the token the timed wait takes */
        DosTmrQueryTime(&start);
        failed |= fastsync_sem_wait(&sem) != 0;
        DosTmrQueryTime(&end);
        d = ticks(&end) - ticks(&start);
        if (d < sem_min) sem_min = d;

        DosTmrQueryTime(&start);
        fastsync_event_wait(&ev);
        DosTmrQueryTime(&end);
        d = ticks(&end) - ticks(&start);
        if (d < ev_min) ev_min = d;
    }

    printf("minimum of %d samples, timer at %lu Hz\n", SAMPLES, (unsigned long)hz);
    report("DosEnterCritSec()", crit_min, hz);
    report("DosRequestMutexSem()", mutex_min, hz);
    report("fastsync_sem_wait()", sem_min, hz);
    report("fastsync_event_wait()", ev_min, hz);

    failed |= fastsync_sem_getvalue(&sem) != 0;
    failed |= fastsync_sem_destroy(&sem) != 0 || fastsync_event_destroy(&ev) != 0;
    failed |= DosCloseMutexSem(mutex) != NO_ERROR;
    if (failed) fprintf(stderr, "a call failed\n");
    return failed ? 1 : 0;
}
