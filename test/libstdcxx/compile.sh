#!/bin/sh
# SPDX-License-Identifier: MIT
# compile.sh compile|fail SRC CXX ARG...: a libstdc++ compile-only test. compile: SRC must
# compile. fail (a _neg test): it must not, and the compiler's messages must match each of
# its dg-error patterns (extended regular expressions, as DejaGnu's), at the line each is
# written on unless it says line 0.
set -u
kind=$1 src=$2
shift 2
# (a missing source would fail to compile, and a _neg test with no pattern would then pass)
if [ ! -f "$src" ]; then
    echo "compile.sh: $src does not exist"
    exit 1
fi
if [ $kind = fail ] && ! grep -q 'dg-error "' "$src"; then
    echo "compile.sh: $src is a _neg test with no dg-error pattern"
    exit 1
fi
out=$("$@" -c -o /dev/null "$src" 2>&1)
rc=$?
if [ $kind = compile ]; then
    [ $rc = 0 ] && exit 0
    printf '%s\n' "$out"
    echo "compile.sh: $src does not compile"
    exit 1
fi
if [ $rc = 0 ]; then
    echo "compile.sh: $src compiles; it must not (a _neg test)"
    exit 1
fi
status=0
# Each dg-error: "N PATTERN", N its line, or 0 for one that may be reported anywhere
# ({ target *-*-* } 0). A message at line N starts "FILE:N:" (FILE: SRC's name).
grep -n 'dg-error "' "$src" | sed 's/^\([0-9]*\):.*dg-error "\([^"]*\)"\(.*\)/\1 \2"\3/' |
while read -r line rest; do
    pat=${rest%%\"*}
    case $rest in *'} 0 }'*) line=0 ;; esac
    if [ "$line" = 0 ]; then
        printf '%s\n' "$out" | grep -qE -- "$pat" && continue
    else
        printf '%s\n' "$out" | grep -F -- "$(basename "$src"):$line:" | grep -qE -- "$pat" && continue
    fi
    echo "compile.sh: no message at line $line matches dg-error \"$pat\""
    exit 1
done || status=1
[ $status = 0 ] || printf '%s\n' "$out"
exit $status
