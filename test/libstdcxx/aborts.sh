#!/bin/sh
# SPDX-License-Identifier: MIT
# aborts.sh EXE: EXE, a libstdc++ test over fastsync.hpp that breaks a precondition
# fastsync.hpp checks, must end by FASTSYNC_ASSERT: killed by SIGABRT after an assertion
# message that names fastsync.hpp. Any other end fails: an exit (the check missed), a VERIFY
# of the test's own (its message names the test's file), another signal.
set -u
out=$("$1" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc != 134 ]; then
    echo "aborts.sh: $1 ended with status $rc, not by SIGABRT (134)"
    exit 1
fi
if ! printf '%s\n' "$out" | grep -qE 'fastsync\.hpp:[0-9]+: .*Assertion'; then
    echo "aborts.sh: $1 aborted, but not at an assertion of fastsync.hpp"
    exit 1
fi
exit 0
