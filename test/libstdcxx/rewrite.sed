# SPDX-License-Identifier: MIT
# rewrite.sed: a libstdc++ thread test made a test of fastsync.hpp, mechanically (GNU sed).
# The standard's types become fastsync's (std::latch and std::barrier too), and
# std::call_once fastsync::call_once (an unqualified call_once finds it through its
# once_flag argument); std::unique_lock, shared_lock, lock_guard, scoped_lock, std::lock and
# std::try_lock stay the standard library's (they are what the fastsync types must work
# with); std::recursive_mutex and the like, which fastsync does not have, stay too. The
# headers of the replaced types (<semaphore>, <shared_mutex>, <latch>, <barrier>) become
# fastsync.hpp (which includes <shared_mutex>, so std::shared_lock comes with it);
# fastsync.hpp comes before the test's first #include in any case.
s|^#include <semaphore>|#include "fastsync.hpp" // was <semaphore>|
s|^#include <shared_mutex>|#include "fastsync.hpp" // was <shared_mutex>|
s|^#include <latch>|#include "fastsync.hpp" // was <latch>|
s|^#include <barrier>|#include "fastsync.hpp" // was <barrier>|
0,/^#include/{
  /"fastsync\.hpp"/!s|^#include|#include "fastsync.hpp"\n#include|
}
s/\bstd::mutex\b/fastsync::mutex/g
# an explicit instantiation inside namespace std names the mutex unqualified
/^ *template class /s/\([<, ]\)\(shared_timed_mutex\|shared_mutex\|timed_mutex\|mutex\)\b/\1fastsync::\2/g
s/\bstd::timed_mutex\b/fastsync::timed_mutex/g
s/\bstd::shared_mutex\b/fastsync::shared_mutex/g
s/\bstd::shared_timed_mutex\b/fastsync::shared_timed_mutex/g
s/\bstd::condition_variable\b/fastsync::condition_variable/g
s/\bstd::condition_variable_any\b/fastsync::condition_variable_any/g
s/\bstd::counting_semaphore\b/fastsync::counting_semaphore/g
s/\bstd::binary_semaphore\b/fastsync::binary_semaphore/g
s/\bstd::notify_all_at_thread_exit\b/fastsync::notify_all_at_thread_exit/g
s/\bstd::once_flag\b/fastsync::once_flag/g
s/\bstd::call_once\b/fastsync::call_once/g
s/\bstd::latch\b/fastsync::latch/g
s/\bstd::barrier\b/fastsync::barrier/g
