#!/usr/bin/env bash
# ptx-reuse.sh: proof that a context's kept codegen pipelines (jit/llvm/emitter.cpp) emit what a fresh
# process does.  Compiles every request of the PTX corpus in ONE context, each kernel after all
# those before it (build/bench/jit_latency with JIT_LATENCY_PTX_DIR), and compares each PTX with
# the record scripts/ptx-corpus.sh made (one process per request), "// redjit:" lines aside.
#
#   scripts/ptx-reuse.sh BUILD_DIR RECORD_DIR [CORPUS]     exit 0: all identical; 1: any differs
set -euo pipefail
export LC_ALL=C CUDA_VISIBLE_DEVICES=""
[[ $# -ge 2 && -x "$1/bench/jit_latency" && -d "$2" ]] ||
  { sed -n "2,7p" "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$1 record=$2 corpus=${3:-$(dirname "$0")/../tests/corpus/requests.jsonl}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
JIT_LATENCY_PTX_DIR=$out "$build/bench/jit_latency" --corpus "$corpus" 1 >/dev/null
same=0 differ=0 missing=0
for f in "$out"/*.ptx; do
  name=$(basename "$f")
  if [[ ! -f "$record/$name" ]]; then
    missing=$((missing + 1)); echo "no record: $name"; continue
  fi
  if cmp -s <(grep -v '^// redjit:' "$f") <(grep -v '^// redjit:' "$record/$name"); then
    same=$((same + 1))
  else
    differ=$((differ + 1)); echo "differs: $name"
  fi
done
echo "one context: $same identical, $differ differ, $missing without a record"
[[ $differ == 0 && $missing == 0 && $same -gt 0 ]]
