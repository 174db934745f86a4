#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# single_header: fastsync.h alone, copied to an empty folder, compiles with strict warnings as
# errors under every compiler here (gcc, clang, musl-gcc; g++ and clang++ as C++11 to C++23),
# and the program using every function runs; then the same over the POSIX backend; then
# fastsync.hpp beside it, every type used (counting_semaphore of both kinds), as C++11 to
# C++23, without exceptions, over the POSIX backend and under TSan (native builds only). A
# missing compiler is a TAP skip, never a silent pass.
# In a cross build (test/meson.build sets TARGET_CC, the cross compiler with the build's
# c_args and c_link_args, and TARGET_TRIPLE) the checks are the target's instead: the cross
# gcc and clang --target=TRIPLE, each program run under MESON_EXE_WRAPPER (qemu); the host's
# compilers are the native build's business.
set -u
src=${1:?usage: single_header.sh SOURCE_ROOT}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$src/fastsync.h" "$dir/"
cat > "$dir/use.c" <<'EOC'
#include "fastsync.h"
#include <stdio.h>

static fastsync_sem_t gs = FASTSYNC_SEM_INIT(1);
static fastsync_event_t ge = FASTSYNC_EVENT_INIT(0);

int main(void)
{
    fastsync_sem_t s;
    fastsync_event_t e;
    int bad = 0;
    bad |= fastsync_sem_init(&s, 0, FASTSYNC_SHARED) != (FASTSYNC_HAS_SHARED ? 0 : EINVAL);
    bad |= FASTSYNC_HAS_SHARED == 0 && fastsync_sem_init(&s, 0, 0) != 0;
    bad |= fastsync_sem_post(&s) != 0 || fastsync_sem_post_n(&s, 2) != 0;
    bad |= fastsync_sem_wait(&s) != 0 || fastsync_sem_trywait(&s) != 0;
    struct timespec d = fastsync_deadline_in(1000);
    bad |= fastsync_sem_timedwait(&s, &d) != 0;
    bad |= fastsync_sem_clockwait(&s, CLOCK_REALTIME, &d) != ETIMEDOUT;
    bad |= fastsync_sem_getvalue(&s) != 0 || fastsync_sem_destroy(&s) != 0;
    bad |= fastsync_sem_wait(&gs) != 0;
    bad |= fastsync_event_init(&e, 0, 0) != 0 || fastsync_event_is_set(&e);
    fastsync_event_set(&e);
    fastsync_event_wait(&e);
    bad |= fastsync_event_timedwait(&e, &d) != 0;
    fastsync_event_reset(&e);
    bad |= fastsync_event_clockwait(&e, CLOCK_MONOTONIC, &d) != ETIMEDOUT;
    bad |= fastsync_event_destroy(&e) != 0;
    fastsync_event_set(&ge);
    bad |= !fastsync_event_is_set(&ge);
    fastsync_cond_t c = FASTSYNC_COND_INIT;
    fastsync_cond_ticket_t t;
    fastsync_mutex_t m = FASTSYNC_MUTEX_INIT;
    bad |= fastsync_cond_init(&c, 0) != 0 || fastsync_cond_signal(&c) != 0;
    bad |= fastsync_cond_register(&c, &t) != 0 || fastsync_cond_broadcast(&c) != 0;
    bad |= fastsync_cond_await(&c, &t) != 0 || fastsync_mutex_lock(&m) != 0;
    d = fastsync_deadline_in(1000);
    bad |= fastsync_cond_timedwait(&c, &m, &d) != ETIMEDOUT || fastsync_mutex_unlock(&m) != 0;
    bad |= fastsync_cond_destroy(&c) != 0;
    fastsync_once_t o = FASTSYNC_ONCE_INIT;
    bad |= fastsync_once_begin(&o) != 1 || fastsync_once_commit(&o) != 0 || fastsync_once_begin(&o) != 0;
    fastsync_latch_t l = FASTSYNC_LATCH_INIT;
    bad |= fastsync_latch_add(&l, 2) != 0 || fastsync_latch_count_down(&l, 1) != 0;
    d = fastsync_deadline_in(1000);
    bad |= fastsync_latch_timedwait(&l, &d) != ETIMEDOUT || fastsync_latch_trywait(&l) != EAGAIN;
    bad |= fastsync_latch_count_down(&l, 1) != 0 || fastsync_latch_wait(&l) != 0;
    fastsync_wait_entry_t any[1] = { fastsync_wait_latch(&l) };
    unsigned i = 1;
    bad |= fastsync_wait_any(any, 1, &i) != 0 || i != 0 || fastsync_latch_destroy(&l) != 0;
    fastsync_barrier_t b;
    bad |= fastsync_barrier_init(&b, 1, 0) != 0 || fastsync_barrier_wait(&b) != FASTSYNC_BARRIER_SERIAL;
    bad |= fastsync_barrier_destroy(&b) != 0;
    bad |= sizeof(fastsync_sem_t) > 8 || sizeof(fastsync_event_t) > 8 || sizeof(fastsync_cond_t) > 16;
    bad |= sizeof(fastsync_once_t) != 4 || sizeof(fastsync_latch_t) != 8 || sizeof(fastsync_barrier_t) > 12;
    printf("%s\n", bad ? "FAIL" : "fine");
    return bad;
}
EOC
cp "$dir/use.c" "$dir/use.cpp"
cp "$src/fastsync.hpp" "$dir/"
cat > "$dir/use_hpp.cpp" <<'EOC'
#include "fastsync.hpp"
#include <cstdio>

static fastsync::mutex gm;
static fastsync::counting_semaphore<> gs{1};
static fastsync::shared_mutex gsm;

int main()
{
    using namespace std::chrono;
    fastsync::timed_mutex tm;
    fastsync::binary_semaphore bs{0};
    fastsync::event e;
    fastsync::condition_variable cv;
    fastsync::condition_variable_any cva;
    bool bad = false;
    { std::lock_guard<fastsync::mutex> g(gm); }
    bad |= !tm.try_lock_for(milliseconds(1));
    bad |= tm.try_lock_until(steady_clock::now() + milliseconds(1));
    tm.unlock();
    gs.acquire();
    bad |= gs.try_acquire() || bs.try_acquire_for(microseconds(10));
    bs.release();
    bad |= !bs.try_acquire_until(system_clock::now());
    e.set();
    bad |= !e.is_set() || !e.wait_for(seconds(1));
    e.reset();
    bad |= e.wait_until(steady_clock::now() + microseconds(10));
    std::unique_lock<fastsync::mutex> l(gm);
    bad |= cv.wait_for(l, microseconds(10)) != std::cv_status::timeout;
    bad |= cva.wait_until(l, system_clock::now(), [] { return false; });
    cv.notify_one();
    cva.notify_all();
    l.unlock();
    fastsync::ticket t(cva);
    bs.release();
    bad |= fastsync::wait_any(e, bs, t) != 1 || fastsync::try_wait_any(e, bs) != -1;
    bad |= fastsync::wait_any_for(microseconds(10), t) != -1 || !t.registered();
    t.cancel();
    fastsync::counting_semaphore<PTRDIFF_MAX> ws{0}; // the wide kind where ptrdiff_t has 64 bits
    ws.release(2);
    ws.acquire();
    bad |= !ws.try_acquire() || ws.try_acquire_for(microseconds(10)) || ws.try_acquire_until(system_clock::now());
    ws.release();
    bad |= fastsync::wait_any(e, ws) != 1;
    fastsync::shared_timed_mutex sm;
    { std::lock_guard<fastsync::shared_mutex> g(gsm); }
    gsm.lock_shared();
    bad |= !gsm.try_lock_shared() || gsm.try_lock();
    gsm.unlock_shared();
    gsm.unlock_shared();
    sm.lock_shared();
    bad |= !sm.try_lock_shared_for(milliseconds(1)) || sm.try_lock_until(steady_clock::now() + microseconds(10));
    sm.unlock_shared();
    sm.unlock_shared();
    bad |= !sm.try_lock_for(milliseconds(1)) || sm.try_lock_shared_until(system_clock::now());
    sm.downgrade();
    bad |= !sm.try_lock_shared() || sm.try_lock();
    sm.unlock_shared();
    sm.unlock_shared();
    std::printf("%s\n", bad ? "FAIL" : "fine");
    return bad;
}
EOC

warn="-Wall -Wextra -Wpedantic -Werror -Wconversion -Wsign-conversion -Wshadow -Wcast-qual -Wundef"
cwarn="$warn -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition"
cxxwarn="$warn -Wold-style-cast -Wzero-as-null-pointer-constant"
n=0
fail=0
prog=prog
check() { # name compiler args...
    local name=$1; shift
    n=$((n + 1))
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "ok $n - $name # SKIP $1 not installed"
        return
    fi
    local out
    if out=$(cd "$dir" && "$@" -o "$dir/$prog" 2>&1 && "${wrapper[@]}" "$dir/$prog" 2>&1); then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name"
        printf '%s\n' "$out" | sed 's/^/# /' | head -n 20
        fail=1
    fi
}
read -r -a wrapper <<<"${MESON_EXE_WRAPPER:-}"
if [ -n "${TARGET_CC:-}" ]; then
    read -r -a tcc <<<"$TARGET_CC"
    clang_extra=()
    case "$TARGET_TRIPLE" in
    *mingw*) # Windows: programs end in .exe (wine wants it), and Debian's clang does not
             # find mingw-w64's libgcc by itself
        prog=prog.exe
        clang_extra=("-L$(dirname "$("${tcc[0]}" -print-libgcc-file-name)")") ;;
    esac
    # the build's own flags (c_args, c_link_args) follow the compiler in TARGET_CC
    for opt in -O0 -O2; do
        check "$TARGET_CC -std=c11 $opt, fastsync.h alone" "${tcc[@]}" -std=c11 $opt $cwarn -pthread use.c
        check "clang --target=$TARGET_TRIPLE -std=c11 $opt" clang "--target=$TARGET_TRIPLE" "${tcc[@]:1}" \
            "${clang_extra[@]}" -std=c11 $opt $cwarn -pthread use.c
    done
    echo "1..$n"
    exit $fail
fi
for opt in -O0 -O2; do
    check "gcc -std=c11 $opt, fastsync.h alone" gcc -std=c11 $opt $cwarn -pthread use.c
    check "clang -std=c11 $opt, fastsync.h alone" clang -std=c11 $opt $cwarn -pthread use.c
    check "musl-gcc -std=c11 $opt (no linux/futex.h)" musl-gcc -std=c11 $opt $cwarn -static use.c
    check "g++ -std=c++11 $opt" g++ -std=c++11 $opt $cxxwarn -pthread use.cpp
    check "clang++ -std=c++11 $opt" clang++ -std=c++11 $opt $cxxwarn -pthread use.cpp
done
for std in c++14 c++17 c++20 c++23; do # (clang++ 14 calls C++23 c++2b)
    check "g++ -std=$std -O2" g++ -std=$std -O2 $cxxwarn -pthread use.cpp
    check "clang++ -std=${std/23/2b} -O2" clang++ -std=${std/23/2b} -O2 $cxxwarn -pthread use.cpp
done
for cc in gcc clang musl-gcc; do
    check "$cc -std=c11 -O2 -DFASTSYNC_BACKEND_POSIX" $cc -std=c11 -O2 -DFASTSYNC_BACKEND_POSIX $cwarn -pthread use.c
done
check "g++ -std=c++11 -O2 -DFASTSYNC_BACKEND_POSIX" g++ -std=c++11 -O2 -DFASTSYNC_BACKEND_POSIX $cxxwarn -pthread use.cpp
check "clang++ -std=c++11 -O2 -DFASTSYNC_BACKEND_POSIX" clang++ -std=c++11 -O2 -DFASTSYNC_BACKEND_POSIX $cxxwarn -pthread use.cpp
check "gcc -std=c11 -fsanitize=thread (no fences under TSan)" gcc -std=c11 -fsanitize=thread $cwarn -pthread use.c
check "clang -std=c11 -fsanitize=thread" clang -std=c11 -fsanitize=thread $cwarn -pthread use.c
for std in c++11 c++14 c++17 c++20 c++23; do
    check "g++ -std=$std -O2, fastsync.hpp" g++ -std=$std -O2 $cxxwarn -pthread use_hpp.cpp
    check "clang++ -std=${std/23/2b} -O2, fastsync.hpp" clang++ -std=${std/23/2b} -O2 $cxxwarn -pthread use_hpp.cpp
done
check "g++ -std=c++11 -fno-exceptions, fastsync.hpp" g++ -std=c++11 -O2 -fno-exceptions $cxxwarn -pthread use_hpp.cpp
check "clang++ -std=c++20 -fno-exceptions, fastsync.hpp" clang++ -std=c++20 -O2 -fno-exceptions $cxxwarn -pthread use_hpp.cpp
check "g++ -std=c++20 -DFASTSYNC_BACKEND_POSIX, fastsync.hpp" g++ -std=c++20 -O2 -DFASTSYNC_BACKEND_POSIX $cxxwarn -pthread use_hpp.cpp
check "g++ -std=c++20 -fsanitize=thread, fastsync.hpp" g++ -std=c++20 -fsanitize=thread $cxxwarn -pthread use_hpp.cpp
check "clang++ -std=c++20 -fsanitize=thread, fastsync.hpp" clang++ -std=c++20 -fsanitize=thread $cxxwarn -pthread use_hpp.cpp
check "gcc -std=gnu11 (default feature macros)" gcc -std=gnu11 $cwarn -pthread use.c
check "gcc -std=c11 -D_POSIX_C_SOURCE=200809L" gcc -std=c11 -D_POSIX_C_SOURCE=200809L $cwarn -pthread use.c
echo "1..$n"
exit $fail
