#!/usr/bin/env bash
# treduce's runtime-size kernel ("dynamic": true) against its constant kernel, on the GPU(s):
# `redjit bench` of the same request with and without "dynamic" on the peer path (ranks on GPUs r
# mod count; CUDA events, median of 25 runs, 7 above 256 MiB moved), for 1-D f32 / bf16 sums of
# 2^10 .. 2^28 elements per rank, odd counts, and 2-D shapes with a tile.  Prints one table row
# per case (kernel ms of each, dynamic / constant speed) and writes the raw JSON lines to
# $OUT/treduce-dynamic.jsonl.
#   [CARRY=carry] [REDJIT_CLI=...] [RANKS=4] [OUT=/tmp/rjout] scripts/bench-treduce-dynamic.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cli=${REDJIT_CLI:-${CARRY:-carry}/redjit}
[ -x "$cli" ] || cli=build/redjit
ranks=${RANKS:-4}
out=${OUT:-/tmp/rjout}
mkdir -p "$out"
jsonl=$out/treduce-dynamic.jsonl
: >"$jsonl"
field() { sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p"; }
printf '| case | constant ms | dynamic ms | dynamic / constant speed |\n| --- | ---: | ---: | ---: |\n'
cases=(
  'f32 [1024]' 'f32 [1048576]' 'f32 [16777216]' 'f32 [268435456]' 'f32 [1000003]'
  'f32 [33554431]' 'bf16 [16777216]' 'i32 [16777216]' 'f32 [4096,4096] [64,4096]'
  'f32 [4099,1031] [64,1031]' 'f32 [65536,1024] [64,1024]'
)
for c in "${cases[@]}"; do
  read -r dt shape tile <<<"$c"
  req="{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"$dt\",\"ranks\":$ranks,\"root\":1,\"shape\":$shape"
  [ -n "${tile:-}" ] && req+=",\"tile\":$tile"
  a=$("$cli" bench "$req}" --path peer 2>&1 | tail -1)
  b=$("$cli" bench "$req,\"dynamic\":true}" --path peer 2>&1 | tail -1)
  printf '%s\n%s\n' "$a" "$b" >>"$jsonl"
  ka=$(field kernel_ms <<<"$a")
  kb=$(field kernel_ms <<<"$b")
  ratio=$(awk -v a="$ka" -v b="$kb" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "?" }')
  printf '| %s %s %s | %s | %s | %s |\n' "$dt" "$shape" "${tile:-}" "$ka" "$kb" "$ratio"
done
