/* SPDX-License-Identifier: MIT */
/* no_stdbool: fastsync.h defines no bool, true or false (it includes no <stdbool.h>), so C
 * code with names of its own compiles: before C23, bool, true and false are ordinary
 * identifiers (a struct member named bool, an enum constant true). Compile-only, as C11 with
 * strict warnings: test/meson.build builds it over fastsync.h, test/os2/meson.build over
 * fastsync_os2.h (with atomics and without). Before the fix: "error: expected identifier"
 * at the member named bool, the <stdbool.h> macro having replaced it with _Bool. */
#include "fastsync.h"

#if defined(bool) || defined(true) || defined(false) || defined(__bool_true_false_are_defined)
#error "fastsync.h defined bool, true or false"
#endif

struct flags {
    int bool;  /* a member named bool: valid C11 */
    int true;  /* and true */
};
enum answer { false, maybe }; /* an enum constant named false */

int no_stdbool_use(struct flags *f);
int no_stdbool_use(struct flags *f)
{
    fastsync_event_t e = FASTSYNC_EVENT_INIT(0);
    _Bool set = fastsync_event_is_set(&e); /* the API's truth values are _Bool */
    return f->bool + f->true + (int)maybe + (int)false + set;
}
