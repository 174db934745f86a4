/* SPDX-License-Identifier: MIT */
/* version: fastsync.h's FASTSYNC_VERSION_* are the project's version (meson.build), which
 * test/meson.build passes as MAJOR, MINOR and PATCH. Compile-only. */
#include "fastsync.h"

_Static_assert(FASTSYNC_VERSION_MAJOR == MAJOR && FASTSYNC_VERSION_MINOR == MINOR &&
                   FASTSYNC_VERSION_PATCH == PATCH,
               "FASTSYNC_VERSION_* in fastsync.h differ from the version in meson.build");
