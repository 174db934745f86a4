#!/bin/bash
# SPDX-License-Identifier: MIT
# example_smoke.sh NAME SRCROOT BINARY EXPECTED_LINE
# Smoke test of one example, in TAP:
#   1. it compiles exactly as README.md says, with plain `cc -std=c11 -pthread -I<root>`
#      (the compiler from $CC, else cc; examples/meson.build passes the project's compiler
#      and link arguments, so that a cross build uses its cross compiler);
#   2. the meson-built BINARY exits with status 0 within the time limit,
#   3. and prints EXPECTED_LINE (a whole line);
#   4. the binary from step 1 does the same.
# An example that exits 77 says that it does not apply to this build (its first line says
# why): the whole test is then skipped.
set -u

if [ $# -ne 4 ]; then
    echo "usage: $0 NAME SRCROOT BINARY EXPECTED_LINE" >&2
    exit 2
fi
name=$1 root=$2 bin=$3 expect=$4
exe= # the plain build's file name ends as the meson build's (.exe for Windows)
case "$bin" in *.exe) exe=.exe ;; esac
cc=${CC:-cc}
limit=${EXAMPLE_TIMEOUT:-60}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fastsync-example.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0
point() { # point PASS DESCRIPTION
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
diag_file() { sed 's/^/# /' "$1"; }

# In a cross build meson runs tests with MESON_EXE_WRAPPER set (e.g. qemu-aarch64).
read -r -a wrapper <<<"${MESON_EXE_WRAPPER:-}"

# run BINARY LABEL: exit status and the expected line (points 2 and 3)
run() {
    timeout -k 5 "$limit" "${wrapper[@]}" "$1" >"$tmp/out.raw" 2>&1
    local status=$?
    tr -d '\r' <"$tmp/out.raw" >"$tmp/out" # Windows ends its lines with CR LF
    diag_file "$tmp/out"
    if [ $status = 124 ] || [ $status = 137 ]; then echo "# timed out after $limit s"; fi
    status_ok=1
    [ $status = 0 ] && status_ok=0
    line_ok=1
    grep -qxF -- "$expect" "$tmp/out" && line_ok=0
    [ $line_ok = 0 ] || echo "# expected the line: $expect"
    run_status=$status
}

run "$bin"
if [ $run_status = 77 ]; then
    echo "1..0 # SKIP $(head -n 1 "$tmp/out")"
    exit 0
fi
echo "1..4"

# 1. compile as a user would
read -r -a ccwords <<<"$cc" # CC may carry words of its own ("ccache gcc", "gcc -m32")
cmd=("${ccwords[@]}" -std=c11 -pthread "-I$root" "$root/examples/$name.c" -o "$tmp/$name$exe")
"${cmd[@]}" >"$tmp/cc.log" 2>&1
built=$?
point $built "$name: builds with: $cc -std=c11 -pthread -I<root> <root>/examples/$name.c"
[ $built = 0 ] || { echo "# ${cmd[*]}"; diag_file "$tmp/cc.log"; }

point $status_ok "$name (meson build): exits with status 0 (got $run_status)"
point $line_ok "$name (meson build): prints \"$expect\""

if [ $built = 0 ]; then
    run "$tmp/$name$exe"
    both=1
    [ $status_ok = 0 ] && [ $line_ok = 0 ] && both=0
    point $both "$name (plain cc build): exits 0 (got $run_status) and prints the expected line"
else
    n=$((n + 1))
    echo "ok $n - $name (plain cc build): not run # SKIP it did not build"
fi
exit $failed
