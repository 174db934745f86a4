/* SPDX-License-Identifier: MIT */
/* test/genmc/table_harness.h - the threads of the wait-table harnesses (posix_table_genmc.c,
 * os2_table_genmc.c), included after fastsync.h: two events that share the table's one
 * bucket, a waiter on each and a third thread that sets one and then the other. Each waiter
 * must return (a waiter left asleep is a liveness violation), and both events end set. */
#ifndef FASTSYNC_TABLE_HARNESS_H
#define FASTSYNC_TABLE_HARNESS_H

static fastsync_event_t e[2] = { FASTSYNC_EVENT_INIT(false), FASTSYNC_EVENT_INIT(false) };

static void *waiter(void *arg)
{
    fastsync_event_wait(&e[(intptr_t)arg]);
    return NULL;
}

static void *setter(void *unused)
{
    (void)unused;
    fastsync_event_set(&e[0]);
    fastsync_event_set(&e[1]);
    return NULL;
}

/* Runs the three threads once the table is set up. */
static int table_harness_run(void)
{
    pthread_t t[3];
    for (intptr_t i = 0; i < 2; i++) pthread_create(&t[i], NULL, waiter, (void *)i);
    pthread_create(&t[2], NULL, setter, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    assert(fastsync_event_is_set(&e[0]) && fastsync_event_is_set(&e[1]));
    return 0;
}
#endif
