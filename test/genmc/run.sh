#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test/genmc/run.sh ROOT HARNESS [PLANT.patch] - runs one GenMC harness over copies of
# fastsync.h and fastsync_os2.h. Without a patch the harness must pass ("No errors were
# detected"). With one, the patch plants a mistake in the copies and GenMC must catch it: a
# failed assert, a liveness violation, a race on a plain variable or an access to freed memory
# (a harness that frees the object it checks); a patch that no longer
# applies fails the test (update the patch with the header). Exit 77 (meson: skipped) where genmc is not installed.
set -u
root=$1 harness=$2 plant=${3:-}
if ! command -v genmc >/dev/null 2>&1; then
    echo "genmc not installed: skipped"
    exit 77
fi
if [ -n "$plant" ] && ! command -v patch >/dev/null 2>&1; then
    echo "patch not installed: skipped"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/fastsync.h" "$root/fastsync_os2.h" "$work/"
if [ -n "$plant" ]; then
    if ! patch -s -d "$work" -p1 < "$plant"; then
        echo "FAIL: $plant no longer applies to the headers"
        exit 1
    fi
fi
# A harness may name extra GenMC options on a line "genmc-options: OPTIONS" (in a comment),
# and its compiler options on a line "genmc-cflags: OPTIONS" (default -O1). -O1: at -O0
# (clang's default) GenMC v0.11 with its instruction caching reported accesses to freed
# memory that the code does not make, on the condvar's struct fastsync__cv locals in loops;
# at -O1 it does not (the old condvar's cond_signal_genmc explored 41 798 executions at
# both). A harness whose code -O1 turns into intrinsics GenMC cannot run (llvm.umin)
# names -O0 and --disable-instruction-caching instead.
opts=$(sed -n 's/^.*genmc-options: *\([-a-z0-9= ]*\).*$/\1/p' "$harness" | head -n 1)
cflags=$(sed -n 's/^.*genmc-cflags: *\([-A-Za-z0-9= ]*\).*$/\1/p' "$harness" | head -n 1)
cflags=${cflags:--O1}
# shellcheck disable=SC2086 # $opts, $cflags: several options, split on purpose
genmc --check-liveness --disable-estimation $opts -- -I"$work" -I"$root/test/genmc" -DUNDER_GENMC \
    -std=gnu11 $cflags "$harness" > "$work/log" 2>&1
status=$?
if [ -z "$plant" ]; then
    tail -n 4 "$work/log"
    if [ $status -eq 0 ] && grep -q "No errors were detected" "$work/log"; then exit 0; fi
    cat "$work/log"
    echo "FAIL: GenMC found an error in $(basename "$harness")"
    exit 1
fi
if grep -q "No errors were detected" "$work/log"; then
    tail -n 4 "$work/log"
    echo "FAIL: the planted mistake $(basename "$plant") was not caught"
    exit 1
fi
if grep -Eq "Assertion violation|Liveness violation|Safety violation|Non-atomic race|access freed memory" "$work/log"; then
    grep -E "Assertion violation|Liveness violation|Safety violation|Non-atomic race|access freed memory" "$work/log" | head -n 3
    echo "ok: the planted mistake $(basename "$plant") was caught"
    exit 0
fi
cat "$work/log"
echo "FAIL: GenMC stopped without a verdict on the planted mistake"
exit 1
