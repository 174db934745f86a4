#!/bin/sh
# SPDX-License-Identifier: MIT
# extract.sh OUTDIR: unpacks, from Debian's gcc-12-source package
# (/usr/src/gcc-12/gcc-*.tar.xz), libstdc++'s thread tests that test/libstdcxx/meson.build
# runs and the test utilities they include, into OUTDIR (a folder of the build tree;
# nothing of GCC enters the repository). Prints libstdc++'s testsuite folder it made, or
# nothing when the package is not installed.
set -eu
out=$1
tar=$(ls /usr/src/gcc-12/gcc-*.tar.xz 2>/dev/null | sort | tail -n 1) || true
[ -n "$tar" ] || exit 0
top=$(basename "$tar" .tar.xz | sed 's/-dfsg$//')
suite=$top/libstdc++-v3/testsuite
dirs="semaphore mutex timed_mutex shared_mutex shared_timed_mutex condition_variable
      condition_variable_any unique_lock shared_lock lock_guard scoped_lock lock try_lock
      call_once latch barrier"
dirs=$(echo $dirs)
# .extracted holds the folders taken: a new one in the list extracts again
if [ ! -f "$out/$top/.extracted" ] || [ "$tar" -nt "$out/$top/.extracted" ] ||
   [ "$(cat "$out/$top/.extracted")" != "$dirs" ]; then
    rm -rf "${out:?}/$top"
    mkdir -p "$out"
    set --
    for d in $dirs; do
        set -- "$@" "$suite/30_threads/$d"
    done
    tar -xJf "$tar" -C "$out" "$@" "$suite/util/testsuite_hooks.h" \
        "$suite/util/testsuite_common_types.h" "$suite/util/slow_clock.h" "$suite/util/thread"
    printf '%s\n' "$dirs" > "$out/$top/.extracted"
fi
printf '%s\n' "$out/$suite"
