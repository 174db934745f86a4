#!/bin/sh
# SPDX-License-Identifier: MIT
# rewrite.sh IN OUT: OUT is IN rewritten by rewrite.sed. Refuses (exit 1) a result that
# still names a standard type fastsync replaces, or that names none of fastsync's: the
# test would then check libstdc++, not fastsync.
set -eu
sed -f "$(dirname "$0")/rewrite.sed" "$1" > "$2.tmp"
if grep -nE '\bstd::(mutex|timed_mutex|shared_mutex|shared_timed_mutex|condition_variable|condition_variable_any|counting_semaphore|binary_semaphore|notify_all_at_thread_exit|once_flag|call_once|latch|barrier)\b' "$2.tmp"; then
    echo "rewrite.sh: $1 still names a standard type fastsync replaces (above)" >&2
    exit 1
fi
# (an explicit instantiation inside namespace std names it unqualified)
if grep -nE '^ *template class .*[<, ](mutex|timed_mutex|shared_mutex|shared_timed_mutex)\b' "$2.tmp"; then
    echo "rewrite.sh: $1 still instantiates a standard type fastsync replaces (above)" >&2
    exit 1
fi
if ! grep -q 'fastsync::' "$2.tmp"; then
    echo "rewrite.sh: $1 names no fastsync type after the rewrite" >&2
    exit 1
fi
mv "$2.tmp" "$2"
