#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh SOURCE_ROOT HARNESS [--planted]
# Model-checks one harness of test/genmc with GenMC (every execution under the C11 memory
# model, with --check-liveness: a thread blocked for ever is a failure).
#   without --planted: GenMC must find no error;
#   with --planted: each "PLANT: <perl substitution>" line of the harness plants a mistake in
#     a copy of fastsync.h and fastsync_os2.h (the substitution must change them: a stale
#     one is a failure), and GenMC must report an error for each. A harness that passes
#     everything proves nothing; this shows it can fail.
# Without genmc on PATH: exit 77, which meson reports as skipped (GenMC is not packaged for
# Debian; see test/README.md for how to build it).
set -u
root=${1:?usage: run.sh SOURCE_ROOT HARNESS [--planted]}
harness=${2:?usage: run.sh SOURCE_ROOT HARNESS [--planted]}
mode=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v genmc >/dev/null 2>&1; then
    echo "skipped: genmc is not installed (not packaged for Debian; test/README.md says how to build it)"
    exit 77
fi
check() { # include-dir -> prints GenMC's verdict, returns 0 when it found no error
    local out
    out=$(genmc --check-liveness --disable-estimation -- -I"$here" -I"$1" -std=gnu11 -w "$harness" 2>&1)
    printf '%s\n' "$out" | grep -E "^Error|violation|No errors were detected|Number of complete executions|wall-clock" | head -n 6
    printf '%s\n' "$out" | grep -q "No errors were detected"
}
if [ "$mode" != "--planted" ]; then
    check "$root"
    exit $?
fi
plants=$(sed -n 's/^.*PLANT: //; T; s/[[:space:]]*\*\/[[:space:]]*$//; p' "$harness")
[ -n "$plants" ] || { echo "no PLANT: line in $harness"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
while IFS= read -r plant; do
    cp "$root/fastsync.h" "$root/fastsync_os2.h" "$tmp/"
    perl -0pi -e "$plant" "$tmp/fastsync.h" "$tmp/fastsync_os2.h"
    if cmp -s "$root/fastsync.h" "$tmp/fastsync.h" && cmp -s "$root/fastsync_os2.h" "$tmp/fastsync_os2.h"; then
        echo "stale plant (changes nothing): $plant"
        status=1
        continue
    fi
    echo "planted: $plant"
    if check "$tmp"; then
        echo "  GenMC found no error: the harness cannot catch this mistake"
        status=1
    else
        echo "  caught"
    fi
done <<< "$plants"
exit $status
