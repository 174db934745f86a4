#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh SOURCE_ROOT: builds and runs test/cmake/consumer against fastsync the three ways a
# CMake project takes it (TAP):
#   subdirectory  add_subdirectory(SOURCE_ROOT)
#   fetch         FetchContent from SOURCE_ROOT's git repository at its HEAD commit (so it
#                 sees what is committed; skipped where SOURCE_ROOT is no git checkout)
#   package       cmake --install of SOURCE_ROOT to a prefix, then find_package(fastsync
#                 MAJOR.MINOR CONFIG): the installed files, and the version file's answers
#                 (the same MAJOR.MINOR is taken; an older or newer minor, or a newer major,
#                 is not, since the objects' encoding may differ)
# Skipped as a whole where cmake is not installed.
set -u
root=$(cd "${1:?usage: run.sh SOURCE_ROOT}" && pwd)
consumer=$(cd "$(dirname "$0")/consumer" && pwd)
if ! command -v cmake >/dev/null 2>&1; then
    echo "1..0 # SKIP cmake is not installed"
    exit 0
fi
ver() { sed -n "s/^#define FASTSYNC_VERSION_$1 \([0-9]*\)$/\1/p" "$root/fastsync.h"; }
major=$(ver MAJOR) minor=$(ver MINOR) patch=$(ver PATCH)
version=$major.$minor.$patch
expect="fastsync $version: got 42"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
point() { # point STATUS DESCRIPTION [LOG]
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=1
        [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 25 "$3" | sed 's/^/# /'
    fi
}
# consume NAME ARGS...: configure, build and run the consumer; one test point.
consume() {
    local name=$1; shift
    local b=$tmp/consumer-$name log=$tmp/$name.log
    if cmake -S "$consumer" -B "$b" "$@" >"$log" 2>&1 && cmake --build "$b" >>"$log" 2>&1 &&
        "$b/consumer" >"$b.out" 2>>"$log" && grep -qxF "$expect" "$b.out"; then
        point 0 "$name: the consumer builds, runs and prints \"$expect\""
    else
        point 1 "$name: the consumer builds, runs and prints \"$expect\"" "$log"
    fi
}
cmake --version | head -n 1 | sed 's/^/# /'

consume subdirectory -DFASTSYNC_VIA=subdirectory "-DFASTSYNC_SOURCE=$root"

if tag=$(git -C "$root" rev-parse HEAD 2>/dev/null); then
    consume fetch -DFASTSYNC_VIA=fetch "-DFASTSYNC_SOURCE=$root" "-DFASTSYNC_TAG=$tag"
else
    n=$((n + 1)); echo "ok $n - fetch # SKIP $root is no git checkout"
fi

prefix=$tmp/prefix log=$tmp/install.log
if cmake -S "$root" -B "$tmp/lib" "-DCMAKE_INSTALL_PREFIX=$prefix" >"$log" 2>&1 &&
    cmake --install "$tmp/lib" >>"$log" 2>&1; then
    point 0 "package: configure and install fastsync to a prefix"
else
    point 1 "package: configure and install fastsync to a prefix" "$log"
fi
installed=0
for f in include/fastsync.h include/fastsync.hpp include/fastsync_os2.h share/cmake/fastsync/fastsyncConfig.cmake \
         share/cmake/fastsync/fastsyncConfigVersion.cmake share/cmake/fastsync/fastsyncTargets.cmake; do
    [ -f "$prefix/$f" ] || { echo "# missing: $f"; installed=1; }
done
cmp -s "$root/fastsync.h" "$prefix/include/fastsync.h" || installed=1
point $installed "package: the headers and the package files are installed (fastsync.h as in the source)"
consume package -DFASTSYNC_VIA=package "-DFASTSYNC_WANT=$major.$minor" "-DCMAKE_PREFIX_PATH=$prefix"
for want in "$major.$((minor + 1))" "$((major + 1)).0" $([ "$minor" -gt 0 ] && echo "$major.$((minor - 1))"); do
    b=$tmp/refuse-$want
    if cmake -S "$consumer" -B "$b" -DFASTSYNC_VIA=package "-DFASTSYNC_WANT=$want" \
        "-DCMAKE_PREFIX_PATH=$prefix" >"$b.log" 2>&1; then
        point 1 "package: find_package(fastsync $want) refuses version $version" "$b.log"
    else
        point 0 "package: find_package(fastsync $want) refuses version $version"
    fi
done
echo "1..$n"
exit $failed
