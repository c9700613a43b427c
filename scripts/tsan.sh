#!/usr/bin/env bash
# The threaded tests under ThreadSanitizer: the library, its compiler process and
# tests/api/test_threads.c (a context per thread; threads sharing one context, refused with
# RJ_EBUSY) built by Debian's clang with -fsanitize=thread in a build folder of their own, then run.
# Any report fails the run (halt_on_error); no suppression is used.  LLVM itself is linked as it is
# installed (not instrumented): what LLVM does inside one context is not seen, what crosses
# between threads through redjit's code is.
#   scripts/tsan.sh [BUILD_DIR (default build-tsan)]
# Exits 77 (skipped) when clang or its ThreadSanitizer runtime is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-tsan}
if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null ||
   ! echo 'int main(void){return 0;}' | clang -x c -fsanitize=thread -o /dev/null - 2>/dev/null; then
  echo "tsan: SKIP: clang with ThreadSanitizer (Debian: clang, libclang-rt-14-dev) is not available"
  exit 77
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_FLAGS="-fsanitize=thread -Wno-unknown-warning-option" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=thread" -DREDJIT_LINK_DEFS=OFF \
  >/dev/null
cmake --build "$dir" -j2 --target redjit redjit-llvm redjit-irc test_threads >/dev/null
mkdir -p "$dir/tsan-cache"
# halt_on_error: the first report ends the run with exitcode 66; CK_FORK=no: the suite runs in
# this process, so a report is not lost in a forked child
REDJIT_CACHE_DIR="$dir/tsan-cache" CK_FORK=no \
  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=4" \
  "$dir/tests/test_threads"
echo "tsan: test_threads clean under ThreadSanitizer"
