#!/usr/bin/env bash
# The tensor benchmark on the GPU machine, from the binaries carried in $CARRY (scripts/carry.sh):
# peers (torch, cupy, Triton, D2D copy) and redjit's rj_reduce measured in one process with
# Triton's do_bench (median, L2 flushed), then `bench_tensor` (rj_bench: CUDA events, rotated
# data).  Writes to $OUT (default /tmp/rjout).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${CARRY:-carry}
out=${OUT:-/tmp/rjout}; mkdir -p "$out"
cases=${CASES:-bench/cases.txt}
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee "$out/gpu.txt"
echo "== peers and rj_reduce (do_bench, median, L2 flushed)"
python3 bench/peers.py "$PWD/$dir/libredjit.so.0.2" "$cases" 2>"$out/peers.err" | tee "$out/table.md"
tail -5 "$out/peers.err"
echo "== bench_tensor (rj_bench: CUDA events, data rotated through >= 256 MiB)"
"$dir/bench_tensor" "$cases" | tee "$out/bench_tensor.jsonl"
