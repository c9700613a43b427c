#!/usr/bin/env bash
# The layering rules of docs/ARCHITECTURE.md, checked on the sources' #include lines: each folder
# may include only the layers below it.  Prints every breach and exits 1 if there is one.
#   tests/source/layers.sh [SOURCE_DIR]
set -uo pipefail
cd "${1:-$(dirname "$0")/../..}"
breaches=0

# rule FILES FORBIDDEN_REGEX WHY [OPENERS]: no file includes a header whose path contains a match
# (OPENERS: the include forms checked, '<"' by default; '"' for the project's own headers only).
rule() {
  local files=$1 forbidden=$2 why=$3 open=${4:-<\"} hits
  # shellcheck disable=SC2086
  hits=$(grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[$open][^>\"]*($forbidden)" $files 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layering: $why"
    echo "$hits" | sed 's/^/  /'
    breaches=$((breaches + 1))
  fi
}

shopt -s nullglob globstar
ir=(ir/*.c ir/*.h)
passes=(passes/**/*.c passes/**/*.h)
runtime=(runtime/*.c runtime/*.h)
core=(jit/*.c jit/*.h)
compiler=(jit/llvm/*.c jit/llvm/*.h jit/llvm/*.cpp)
treduce=(jit/treduce/*.c jit/treduce/*.h)
harness=(jit/harness/*.c jit/harness/*.h)
users=(tools/*.c bench/*.c examples/**/*.c)

rule "${ir[*]}" 'llvm-c/|cuda\.h|jit/|passes/|runtime/' \
  "ir/ is plain C data: no LLVM, no CUDA, no other layer"
rule "${passes[*]}" 'cuda\.h|jit/|runtime/' \
  "passes/ lowers to LLVM IR: it never reaches the core, the driver or a layer above"
rule "${runtime[*]}" 'llvm-c/|jit/|passes/' \
  "runtime/ wraps the drivers: no LLVM, no core"
rule "${core[*]}" 'treduce/|harness/|redjit_check\.h|cuda\.h' \
  "the core (jit/*.c) never calls a layer above it, nor the driver except through runtime/"
rule "${core[*]}" 'llvm/' \
  "the core reaches the compiler library (jit/llvm/) through its table alone (jit/compiler.h)" '"'
rule "${core[*]}" 'llvm-c/' \
  "the core includes no LLVM-C header: its LLVM state is the compiler library's (jit/llvm/llvm.h)"
rule "${compiler[*]}" 'isolate\.h|rj_compiler_id|treduce/|harness/|runtime/|redjit_check\.h|cuda\.h' \
  "the compiler library (jit/llvm/) sees the core's data (jit/compiler.h, jit.h), not its calls"
rule "${treduce[*]}" 'harness/|redjit_check\.h|cuda\.h|llvm-c/|llvm/' \
  "treduce uses the core's calls and runtime/, never the harness, LLVM or cuda.h"
rule "${harness[*]}" 'jit\.h|rt\.h|runtime/|passes|treduce/|cuda\.h|llvm-c/|llvm/' \
  "the run/bench harness uses the public API (and ir/ request data) only"
rule "${ir[*]} ${passes[*]} ${runtime[*]} ${core[*]}" 'redjit_treduce\.h|redjit_check\.h' \
  "treduce and the harness are layers above the core: nothing below them includes their headers"
rule "${users[*]}" 'jit/|passes/|runtime/|ir/|llvm-c/' \
  "the CLI, benchmarks and examples use the public headers only"

if [ $breaches -eq 0 ]; then
  echo "layering: every include follows docs/ARCHITECTURE.md"
else
  echo "layering: $breaches rule(s) broken"
  exit 1
fi
