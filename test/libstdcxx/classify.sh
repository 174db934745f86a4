#!/bin/sh
# SPDX-License-Identifier: MIT
# classify.sh TESTSUITE: one line per libstdc++ test FILE that extract.sh unpacked under
# TESTSUITE/30_threads (in name order), "FILE KIND STD", from its DejaGnu directives: KIND is run (dg-do run),
# compile (dg-do compile) or fail (dg-do compile with dg-error: must not compile); STD is
# gnu++20 for the tests written for C++20 (c++2a), else gnu++17 (GCC 12's default).
set -eu
cd "$1/30_threads"
for f in $(find . -name '*.cc' | sed 's|^\./||' | LC_ALL=C sort); do
    kind=run
    grep -q 'dg-do compile' "$f" && kind=compile
    [ $kind = compile ] && grep -q 'dg-error' "$f" && kind=fail
    std=gnu++17
    grep -qE 'gnu\+\+2a|c\+\+2a' "$f" && std=gnu++20
    printf '%s %s %s\n' "$f" "$kind" "$std"
done
