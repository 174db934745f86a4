/* SPDX-License-Identifier: MIT */
/* shared_fork.c - two processes taking turns through fastsync semaphores in shared memory.
 *
 * The semaphores live in an anonymous MAP_SHARED mapping, made before fork so that parent
 * and child see the same page. They are initialized with FASTSYNC_SHARED: their futex
 * calls then work across processes (without it they would be keyed to one process's
 * address space). The parent plays on odd turns, the child on even ones; each waits for
 * its own semaphore, plays, and posts the other's.
 *
 * Build: cc -std=c11 -pthread -I. examples/shared_fork.c -o shared_fork */

/* MAP_ANONYMOUS is not POSIX 2008: ask for the C library's default (BSD/SVID) set. This
 * must come before any #include. */
#define _DEFAULT_SOURCE 1

#include "fastsync.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define TURNS 10

struct shared {
    fastsync_sem_t parent_turn; /* posted when the parent may play */
    fastsync_sem_t child_turn;  /* posted when the child may play */
    int turns_played;           /* a plain int: the semaphores hand it from one to the other */
};

/* Plays turns first, first + 2, ... up to TURNS, waiting on `mine`, posting `theirs`. */
static int play(struct shared *sh, const char *who, int first, fastsync_sem_t *mine, fastsync_sem_t *theirs)
{
    for (int turn = first; turn <= TURNS; turn += 2) {
        fastsync_sem_wait(mine);
        if (sh->turns_played != turn - 1) {
            printf("%s: expected turn %d, but %d turns were played\n", who, turn, sh->turns_played);
            return 1;
        }
        sh->turns_played = turn;
        printf("%s (pid %ld): turn %d\n", who, (long)getpid(), turn);
        fflush(stdout); /* two processes share the output: write each line now */
        fastsync_sem_post(theirs);
    }
    return 0;
}

int main(void)
{
#if !FASTSYNC_HAS_SHARED
    /* FASTSYNC_SHARED objects need a backend that has them (Linux futex, OS/2); the POSIX
     * backend's wait table lives in one process. */
    printf("shared_fork: the %s backend has no FASTSYNC_SHARED objects\n", FASTSYNC_BACKEND);
    return 77;
#endif
    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    if (fastsync_sem_init(&sh->parent_turn, 1, FASTSYNC_SHARED) != 0 ||
        fastsync_sem_init(&sh->child_turn, 0, FASTSYNC_SHARED) != 0)
        return 1;
    sh->turns_played = 0;

    printf("shared_fork: parent and child take %d turns through two FASTSYNC_SHARED semaphores\n", TURNS);
    fflush(stdout); /* else the child inherits the unwritten line and prints it again */

    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) /* the child: even turns */
        _exit(play(sh, "child ", 2, &sh->child_turn, &sh->parent_turn));

    int failed = play(sh, "parent", 1, &sh->parent_turn, &sh->child_turn);
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    if (failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || sh->turns_played != TURNS) {
        printf("FAILED: %d turns played; child %s %d\n", sh->turns_played,
               WIFEXITED(status) ? "exit status" : "killed by signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
    }
    printf("parent and child took %d turns; the child exited with status 0\n", TURNS);
    munmap(sh, sizeof *sh);
    return 0;
}
