#!/usr/bin/env bash
# libFuzzer, built by Debian's clang with AddressSanitizer and UndefinedBehaviorSanitizer:
#   request  tests/fuzz/fuzz_request.c: JSON requests through parsing, validation and the
#            canonical form (ir/).  Seeds examples/ and tests/repro/, tests/fuzz/request.dict.
#   ir       tests/fuzz/fuzz_ir.c: caller modules through rj_compile_ir compiled in process (all
#            of redjit's sources instrumented, LLVM linked as installed).  Seeds
#            tests/fuzz/ir_seeds/, tests/fuzz/ir.dict.  It runs in fork mode: LLVM's own fatal
#            errors, crashes, hangs and memory blow-ups end a child and the run goes on; each such
#            input is then run through the isolated path (redjit-irc: $REDJIT_IRC, else
#            build/redjit-irc), which must give a status.  Anything else, and any failure in
#            redjit's code, is a finding.
# A finding is written to OUT_DIR (crash-*, leak-*, timeout-*, oom-*, with a .log for the ir
# target) and the script exits 1: add the input to tests/repro/ as a regression test.
#   scripts/fuzz.sh [SECONDS (default 60)] [OUT_DIR (default build-fuzz)] [request|ir]
#   (ir with SECONDS 0: judge the inputs already in OUT_DIR again)
# Exits 77 (skipped) when clang or its libFuzzer runtime is missing.  Environment: FUZZ_TIMEOUT
# (seconds an input may run), FUZZ_OBJ (ir: where the instrumented objects are kept), FUZZ_PLANT
# (crash, leak or timeout on every input: tests/fuzz/fuzz_script.sh proves each fails the run),
# FUZZ_JOBS (ir: children run side by side, default 1), FUZZ_BIN (ir: a fuzz_ir built earlier,
# e.g. carried to a machine with more cores and no clang: nothing is built).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
out=${2:-build-fuzz}
target=${3:-request}
tmo=${FUZZ_TIMEOUT:-} # seconds an input may run (default: 5 request, 20 ir and 60 judging it)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
skip() {
  echo "fuzz: SKIP: clang with libFuzzer (Debian: clang, libclang-rt-14-dev) is not available"
  exit 77
}
[ -n "${FUZZ_BIN:-}" ] || command -v clang >/dev/null || skip
mkdir -p "$out"

# ---------------------------------------------------------------- request
if [ "$target" = request ]; then
  mkdir -p "$out/corpus"
  rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* # a run judges its own only
  tmo=${tmo:-5}
  bin=$out/fuzz_request
  clang -std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer $san -Iinclude \
    $(pkg-config --cflags libcjson) tests/fuzz/fuzz_request.c ir/*.c \
    $(pkg-config --libs libcjson) -lm -o "$bin" || skip
  cp examples/*.json tests/repro/*.json "$out/corpus/"
  rc=0 # libFuzzer's status: 0 only when the time ran out with no finding
  "$bin" -max_total_time="$secs" -max_len=4096 -timeout="$tmo" -rss_limit_mb=2048 \
    -dict=tests/fuzz/request.dict -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus" \
    >"$out/run.log" 2>&1 || rc=$?
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|fuzz_request:|SUMMARY|==[0-9]+==ERROR)" \
    "$out/run.log" || true
  found=$(find "$out" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | sort)
  if [ "$rc" != 0 ] || [ -n "$found" ]; then
    echo "fuzz: finding (libFuzzer exit $rc; $out/run.log):" $found
    exit 1
  fi
  echo "fuzz: no finding in ${secs} s"
  exit 0
fi
[ "$target" = ir ] || { echo "fuzz: unknown target $target (request, ir)"; exit 2; }

# ---------------------------------------------------------------- ir: build
build_ir() {
llvm_config=$(command -v llvm-config-22 || echo /usr/lib/llvm-22/bin/llvm-config)
cuda_inc=${CUDA_HOME:-/usr/local/cuda}/include
[ -e "$cuda_inc/cuda.h" ] || cuda_inc=/usr/include
cflags="-std=c17 -D_GNU_SOURCE -DREDJIT_BUILD -DREDJIT_COMPILER_STATIC -g -O1 -fno-omit-frame-pointer $san -Iinclude
  -I$($llvm_config --includedir) -I$cuda_inc $(pkg-config --cflags libcjson)"
obj=${FUZZ_OBJ:-$out/obj} # FUZZ_OBJ: the instrumented objects of another folder
mkdir -p "$obj"
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' |
  clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null || skip
# an object is built again when its source is newer, or every one when a header is
all=0
if [ ! -e "$obj/stamp" ] || [ -n "$(find include ir passes jit runtime -name '*.h' -newer "$obj/stamp")" ]; then
  all=1
fi
touch "$obj/stamp.new"
srcs=$(find ir passes jit runtime -name '*.c' | sort)
objs=""
todo=()
for s in $srcs; do
  o=$obj/$(echo "$s" | tr / _).o
  objs="$objs $o"
  if [ $all = 1 ] || [ "$s" -nt "$o" ]; then todo+=("$s" "$o"); fi
done
export FUZZ_CFLAGS="$cflags -fsanitize=fuzzer-no-link"
if [ ${#todo[@]} -gt 0 ]; then
  printf '%s\n' "${todo[@]}" | xargs -n2 -P2 sh -c 'clang $FUZZ_CFLAGS -c "$0" -o "$1"'
fi
# the compiler library's C++ (jit/llvm/*.cpp), as CMake builds it: C++17 against LLVM's headers
for s in $(find jit -name '*.cpp' | sort); do
  o=$obj/$(echo "$s" | tr / _).o
  objs="$objs $o"
  if [ $all = 1 ] || [ "$s" -nt "$o" ]; then
    clang++ -std=c++17 -fno-exceptions -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer $san \
      -fsanitize=fuzzer-no-link -isystem "$($llvm_config --includedir)" -c "$s" -o "$o"
  fi
done
mv "$obj/stamp.new" "$obj/stamp"
clang $FUZZ_CFLAGS -c tests/fuzz/fuzz_ir.c -o "$obj/fuzz_ir.o"
# shellcheck disable=SC2086
clang++ -fsanitize=fuzzer $san "$obj/fuzz_ir.o" $objs \
  $($llvm_config --link-static --libfiles nvptx passes analysis) $(pkg-config --libs libcjson) \
  -lz -lzstd -ldl -lpthread -lm -o "$bin"
}
bin=${FUZZ_BIN:-$out/fuzz_ir}
[ -n "${FUZZ_BIN:-}" ] || build_ir

# ---------------------------------------------------------------- ir: run
irc=${REDJIT_IRC:-$PWD/build/redjit-irc}
if [ "$secs" != 0 ]; then # 0: judge the inputs already in OUT_DIR again, no fuzzing
  rm -rf "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* "$out/llvm" "$out/alone"
  mkdir -p "$out/corpus-ir"
  "$bin" -fork="${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$secs" \
    -max_len=16384 -timeout="${tmo:-20}" -rss_limit_mb=2048 -dict=tests/fuzz/ir.dict \
    -artifact_prefix="$out/" "$out/corpus-ir" tests/fuzz/ir_seeds >"$out/run.log" 2>&1 || true
  grep -E "^#[0-9]+: cov" "$out/run.log" | tail -1 || true
fi

# ---------------------------------------------------------------- ir: judge what ended a child
# LLVM's: its fatal error (named by fuzz_ir's handler), or a crash, hang or memory blow-up whose
# first frame outside the sanitizers and libc is LLVM's (C++, or its C API); the isolated path
# must then give a status.  Everything else is redjit's.
first_frame() {
  grep -E '^ +#[0-9]+ 0x[0-9a-f]+ in ' "$1" | sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in //' |
    grep -vE '^(__asan|__ubsan|__sanitizer|__interceptor|__lsan|__GI_|__libc|__pthread|raise|abort|malloc|calloc|realloc|operator new|memcpy|memmove|memset|strlen|fuzzer::|LLVMFuzzer)' |
    head -1 || true
}
findings=0 contained=0
for f in "$out"/crash-* "$out"/timeout-* "$out"/oom-* "$out"/leak-*; do
  [ -e "$f" ] || continue
  case $f in *.log) continue ;; esac
  rc=0
  timeout 300 "$bin" -timeout="${tmo:-60}" -rss_limit_mb=2048 "$f" >"$f.log" 2>&1 || rc=$?
  frame=$(first_frame "$f.log")
  kind=redjit
  if grep -q "^fuzz_ir: LLVM fatal error inside LLVM" "$f.log"; then
    kind=llvm
  elif grep -qE "^fuzz_ir: |runtime error:" "$f.log" || [[ $f == */leak-* ]]; then
    kind=redjit # a property of fuzz_ir.c, undefined behaviour in redjit, or a leak
  elif echo "$frame" | grep -qE '(llvm::|\(anonymous namespace\)::|^std::|^LLVM)'; then
    kind=llvm
  elif [[ $f == */timeout-* || $f == */oom-* ]] && [ -z "$frame" ]; then
    kind=llvm # no stack: judged by the isolated path alone
  elif [ $rc = 0 ]; then
    kind=alone # it passes on its own: it needed what earlier runs of its child left
  fi
  if [ $kind != redjit ] &&
     REDJIT_IRC=$irc REDJIT_IR_TIMEOUT_MS=20000 FUZZ_IR_ISOLATED=1 timeout 120 "$bin" "$f" \
       >"$f.isolated.log" 2>&1 &&
     grep -q "fuzz_ir: isolated: RJ_" "$f.isolated.log"; then
    contained=$((contained + 1))
    mkdir -p "$out/$kind" # LLVM's (or not reproduced alone), and contained: kept, not a finding
    mv "$f" "$f.log" "$f.isolated.log" "$out/$kind/"
  else
    findings=$((findings + 1))
    echo "fuzz: finding in redjit: $f (first frame: ${frame:-none}; $f.log)"
  fi
done
echo "fuzz: $contained input(s) that end LLVM (in $out/llvm; in $out/alone those that passed on their own),"
echo "fuzz: each given a status by the isolated path"
if [ $findings -gt 0 ]; then
  echo "fuzz: $findings finding(s) in $out"
  exit 1
fi
echo "fuzz: no finding in redjit's code in ${secs} s"
