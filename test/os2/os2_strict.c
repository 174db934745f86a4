/* SPDX-License-Identifier: MIT */
/* os2_strict: fastsync.h with its OS/2 backend compiles without a warning under the strict
 * flags single_header uses (-Wconversion, -Wsign-conversion, -Wshadow, -Wcast-qual, ...),
 * with atomics and without (the locked atomics' macros convert every value explicitly).
 * Compile-only; the double is included as a system header (its own code is not held to
 * these flags). */
#include "fastsync.h"

int main(void)
{
    static fastsync_sem_t s = FASTSYNC_SEM_INIT(0);
    static fastsync_event_t e = FASTSYNC_EVENT_INIT(0);
    static fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
    struct timespec d = fastsync_deadline_in(1000);
    (void)fastsync_sem_post(&s);
    (void)fastsync_sem_timedwait(&s, &d);
    fastsync_event_set(&e);
    fastsync_event_reset(&e);
    (void)fastsync_event_clockwait(&e, CLOCK_REALTIME, &d);
    (void)fastsync_mutex_lock(&m);
    return fastsync_mutex_unlock(&m) + (int)fastsync_sem_getvalue(&s);
}
