/* SPDX-License-Identifier: MIT */
/* dbl_mem: the OS/2 named shared memory facts of README.md, each pinned on the double:
 * DosAllocSharedMem with a \SHAREMEM\ name (committed memory reads 0, page-aligned;
 * ERROR_ALREADY_EXISTS for a name in use, compared without case; ERROR_INVALID_NAME without
 * the prefix; ERROR_INVALID_PARAMETER without read/write access or without PAG_COMMIT, the
 * only form modelled), DosGetNamedSharedMem (the same address; ERROR_FILE_NOT_FOUND for an
 * unknown name), and DosFreeMem (the object and its name go with the last access freed). */
#define INCL_DOSMEMMGR
#define INCL_DOSERRORS
#include <os2.h>

#include <stdint.h>

#include "dbl_util.h"

int main(void)
{
    PVOID a = NULL, b = NULL, c = NULL;
    const ULONG rw = PAG_COMMIT | PAG_READ | PAG_WRITE;
    is_int(DosAllocSharedMem(&a, (PSZ) "\\SHAREMEM\\DBL\\ONE", 10000, rw), NO_ERROR, "alloc named: NO_ERROR");
    ok(a != NULL && ((uintptr_t)a & 4095) == 0, "page-aligned");
    int zero = 1;
    for (int i = 0; i < 10000; i++) zero &= ((unsigned char *)a)[i] == 0;
    ok(zero, "committed memory reads 0");
    ((unsigned char *)a)[9999] = 7;
    is_int(DosAllocSharedMem(&b, (PSZ) "\\sharemem\\dbl\\one", 100, rw), ERROR_ALREADY_EXISTS,
           "the same name (another case): ERROR_ALREADY_EXISTS");
    is_int(DosAllocSharedMem(&b, (PSZ) "\\DBL\\TWO", 100, rw), ERROR_INVALID_NAME, "no \\SHAREMEM\\ prefix: ERROR_INVALID_NAME");
    is_int(DosAllocSharedMem(&b, (PSZ) "\\SHAREMEM\\DBL\\TWO", 100, PAG_COMMIT), ERROR_INVALID_PARAMETER,
           "no read or write access: ERROR_INVALID_PARAMETER");
    is_int(DosAllocSharedMem(&b, (PSZ) "\\SHAREMEM\\DBL\\TWO", 100, PAG_READ | PAG_WRITE), ERROR_INVALID_PARAMETER,
           "not committed: ERROR_INVALID_PARAMETER (not modelled)");
    is_int(DosGetNamedSharedMem(&b, (PSZ) "\\SHAREMEM\\DBL\\TWO", PAG_READ | PAG_WRITE), ERROR_FILE_NOT_FOUND,
           "get an unknown name: ERROR_FILE_NOT_FOUND");
    is_int(DosGetNamedSharedMem(&b, (PSZ) "\\SHAREMEM\\DBL\\ONE", PAG_READ | PAG_WRITE), NO_ERROR, "get the name");
    ok(b == a && ((unsigned char *)b)[9999] == 7, "... the same memory at the same address");
    is_int(DosFreeMem(a), NO_ERROR, "free one of two accesses");
    is_int(DosGetNamedSharedMem(&c, (PSZ) "\\SHAREMEM\\DBL\\ONE", PAG_READ | PAG_WRITE), NO_ERROR,
           "the name stays while an access remains");
    is_int(DosFreeMem(c), NO_ERROR, "free it again");
    is_int(DosFreeMem(b), NO_ERROR, "free the last access");
    is_int(DosGetNamedSharedMem(&c, (PSZ) "\\SHAREMEM\\DBL\\ONE", PAG_READ | PAG_WRITE), ERROR_FILE_NOT_FOUND,
           "after the last free the name is gone");
    return done_testing();
}
