/* SPDX-License-Identifier: MIT */
/* dbl_incl: the double's os2.h gives each group of names only with its INCL_ macro, as
 * OS/2's does. Compiled (-fsyntax-only) once per CASE_ with WITH_INCL (must compile) and
 * once without (must fail): the other groups are always asked for, so the only thing
 * missing is the group under test. */
#if defined(CASE_ERRORS)
#define INCL_DOSSEMAPHORES
#define INCL_DOSPROCESS
#define INCL_DOSPROFILE
#ifdef WITH_INCL
#define INCL_DOSERRORS
#endif
#elif defined(CASE_SEMAPHORES)
#define INCL_DOSERRORS
#define INCL_DOSPROCESS
#define INCL_DOSPROFILE
#ifdef WITH_INCL
#define INCL_DOSSEMAPHORES
#endif
#elif defined(CASE_PROCESS)
#define INCL_DOSERRORS
#define INCL_DOSSEMAPHORES
#define INCL_DOSPROFILE
#ifdef WITH_INCL
#define INCL_DOSPROCESS
#endif
#elif defined(CASE_PROFILE)
#define INCL_DOSERRORS
#define INCL_DOSSEMAPHORES
#define INCL_DOSPROCESS
#ifdef WITH_INCL
#define INCL_DOSPROFILE
#endif
#elif defined(CASE_MEMMGR)
#define INCL_DOSERRORS
#define INCL_DOSSEMAPHORES
#define INCL_DOSPROCESS
#define INCL_DOSPROFILE
#ifdef WITH_INCL
#define INCL_DOSMEMMGR
#endif
#elif defined(CASE_DOS_ERRORS)
#define INCL_DOS                /* INCL_DOS alone gives no error codes */
#ifdef WITH_INCL
#define INCL_ERRORS
#endif
#else
#error "define a CASE_"
#endif
#include <os2.h>

int main(void)
{
#if defined(CASE_ERRORS) || defined(CASE_DOS_ERRORS)
    APIRET rc = ERROR_TIMEOUT + ERROR_ALREADY_POSTED + ERROR_INTERRUPT + NO_ERROR;
#else
    APIRET rc = 0;
#endif
#if defined(CASE_SEMAPHORES) || defined(CASE_DOS_ERRORS)
    HEV h = 0;
    rc += DosPostEventSem(h) + SEM_INDEFINITE_WAIT;
#endif
#if defined(CASE_PROCESS) || defined(CASE_DOS_ERRORS)
    PTIB ptib;
    rc += DosSleep(0) + DosGetInfoBlocks(&ptib, NULL);
#endif
#if defined(CASE_PROFILE) || defined(CASE_DOS_ERRORS)
    QWORD q;
    rc += DosTmrQueryTime(&q);
#endif
#if defined(CASE_MEMMGR) || defined(CASE_DOS_ERRORS)
    PVOID p;
    rc += DosGetNamedSharedMem(&p, (PSZ) "\\SHAREMEM\\X", PAG_READ);
#endif
    return (int)rc;
}
