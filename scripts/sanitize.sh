#!/usr/bin/env bash
# Builds redjit and its tests with AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer
# included) into build-asan/ and runs every suite in one process each (CK_FORK=no), so a leak or
# an invalid access in any test fails.  LLVM itself is not instrumented.  The compiler library is a
# CMake MODULE: its link takes the flags through CMAKE_MODULE_LINKER_FLAGS.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null || exit 1
san="-fsanitize=address,undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
  -DCMAKE_SHARED_LINKER_FLAGS="$san" -DCMAKE_MODULE_LINKER_FLAGS="$san" >/dev/null
cmake --build build-asan -j"$(nproc)" || exit 1
fail=0
# rj_compile_ir's compiler process (redjit-irc) runs under ASan too, which reserves terabytes of
# address space: no address-space limit on it here (tests/isolate/test_isolate.c then skips
# bc_oom.bc)
export REDJIT_IR_MEMORY_MB=0
for t in build-asan/tests/test_*; do
  CK_FORK=no ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 "$t"
  rc=$?
  # 77: a GPU suite skipped for want of a GPU (said so on stderr)
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then echo "sanitize: $t failed ($rc)"; fail=1; fi
done
# the reproducers in tests/repro/ through the CLI: a status (0, or 2 naming the cause), never a
# crash or a sanitizer report (a UBSan report halts: exit 1)
for f in tests/repro/*.json; do
  [ -e "$f" ] || continue
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 timeout 120 build-asan/redjit ptx "$f" \
    >/dev/null 2>build-asan/repro.err
  rc=$?
  if { [ $rc -ne 0 ] && [ $rc -ne 2 ]; } || grep -q "Sanitizer\|runtime error" build-asan/repro.err; then
    echo "sanitize: redjit ptx $f failed ($rc)"; head -20 build-asan/repro.err; fail=1
  fi
done
exit $fail
