#!/bin/sh
# SPDX-License-Identifier: MIT
# extract.sh OUTDIR: unpacks, from Debian's glibc-source package (/usr/src/glibc/glibc-*.tar.xz),
# the glibc tests that test/glibc/meson.build runs and the parts of glibc's test driver they
# include, into OUTDIR (a folder of the build tree; nothing of glibc enters the repository).
# Prints the glibc source root it made, or nothing when the package is not installed.
set -eu
out=$1
tar=$(ls /usr/src/glibc/glibc-*.tar.xz 2>/dev/null | sort | tail -n 1) || true
[ -n "$tar" ] || exit 0
top=$(basename "$tar" .tar.xz)
if [ ! -f "$out/$top/.extracted" ] || [ "$tar" -nt "$out/$top/.extracted" ]; then
    rm -rf "${out:?}/$top"
    mkdir -p "$out"
    tar -xJf "$tar" -C "$out" --wildcards \
        "$top/nptl/tst-cond*" "$top/nptl/tst-mutex*" "$top/nptl/tst-sem*" \
        "$top/sysdeps/pthread/tst-cond*" "$top/sysdeps/pthread/tst-mutex*" \
        "$top/sysdeps/pthread/tst-sem*" \
        "$top/support" "$top/test-skeleton.c" \
        "$top/include/array_length.h" "$top/include/intprops.h" "$top/include/libc-diag.h"
    # glibc's own include/ would replace the C library's headers: only these three, and an
    # empty config.h (glibc's configure output, of which the tests need nothing here)
    mkdir -p "$out/$top/shim"
    mv "$out/$top/include/"*.h "$out/$top/shim/"
    : > "$out/$top/shim/config.h"
    touch "$out/$top/.extracted"
fi
printf '%s\n' "$out/$top"
