#!/bin/sh
# SPDX-License-Identifier: MIT
# skip.sh REASON...: a test that is not run: prints why and exits 77 (meson's SKIP).
echo "$*"
exit 77
