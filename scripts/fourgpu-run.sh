#!/usr/bin/env bash
# One run on a machine of 4 GPUs (or 2): everything docs/TREDUCE.md "How auto chooses" and
# docs/PERFORMANCE.md "treduce against NCCL's reduce" / "Host time of a call" need measured, from
# the binaries scripts/carry.sh gathers into carry/ (built on the build machine).  Stages, in
# order (STAGES to choose; each writes its files to $OUT as it goes, so a run cut short still
# leaves what it finished):
#   gpu        nvidia-smi, the topology                                          (seconds)
#   calibrate  carry/treduce_calibrate: the path table of this machine, 4 ranks (4 KiB .. 1 GiB)
#              and 8 ranks (4 KiB .. 256 MiB) -> $OUT/treduce-paths.txt          (about 1 min)
#   calls      carry/treduce_calls: the host time of a whole call at 4 and 64 KiB per rank,
#              waiting and async, auto / peer / split                            (under 1 min)
#   graph      test_gpu_treduce_stream's case graph (CUDA graph capture)         (seconds)
#   bench      scripts/bench-treduce.sh N: auto (reading the new table), peer, split, split-equal,
#              ring and NCCL's reduce (EXTRA=1: then 2 and 3 ranks per GPU)      (2-3 min)
#   tests      test_gpu_treduce and test_gpu_treduce_stream on all the GPUs      (several min)
# Stages stop where the time left (BUDGET seconds from the start, default 530) is short of what
# they need; the summary says which stages ran.  With a 600 s limit per device command, run
# `STAGES="gpu calibrate calls graph bench"` in one call and `STAGES=tests` in another when the
# whole does not fit.
#   [CARRY=carry] [OUT=/tmp/rjout] [STAGES="gpu calibrate calls graph bench tests"] [BUDGET=530] \
#     [EXTRA=0] \
#     bash scripts/fourgpu-run.sh [GPUS]
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${CARRY:-carry}
out=${OUT:-/tmp/rjout}
mkdir -p "$out"
stages=${STAGES:-gpu calibrate calls graph bench tests}
budget=${BUDGET:-530}
n=${1:-$(nvidia-smi -L 2>/dev/null | wc -l)}
export REDJIT_CLI=$PWD/$carry/redjit
# kernels and the table beside each other, outside $OUT (the kernels need not come back)
export REDJIT_CACHE_DIR=${REDJIT_CACHE_DIR:-/tmp/redjit-run-cache}
mkdir -p "$REDJIT_CACHE_DIR" && chmod 700 "$REDJIT_CACHE_DIR"
summary=$out/run-summary.txt
: > "$summary"
t0=$SECONDS

# stage NAME NEEDS: true when NAME is asked for and NEEDS seconds are left
stage() {
  [[ " $stages " == *" $1 "* ]] || return 1
  local left=$((budget - (SECONDS - t0)))
  if ((left < $2)); then
    echo "$1: skipped, $left s left of the budget, it needs about $2 s" | tee -a "$summary"
    return 1
  fi
  echo "== $1 ($left s left)"
  return 0
}
done_stage() { echo "$1: $2 ($(( SECONDS - t0 )) s from the start)" | tee -a "$summary"; }

if stage gpu 5; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader \
    > "$out/gpu.txt" 2>&1
  nvidia-smi topo -m > "$out/topo.txt" 2>&1
  cat "$out/gpu.txt"
  done_stage gpu "$(wc -l < "$out/gpu.txt") GPUs"
fi

if stage calibrate 90; then
  # 4 KiB .. 1 GiB per rank with one rank per GPU; 4 KiB .. 256 MiB with two per GPU
  SAVE=cache timeout 240 "$carry/treduce_calibrate" "$n,$((2 * n)):28" 12 30 7 \
    "$out/treduce-paths.txt" > "$out/calibrate.log" 2> "$out/calibrate.err"
  rc=$?
  tail -3 "$out/calibrate.err"
  done_stage calibrate "exit $rc, $(grep -c '^[0-9]' "$out/treduce-paths.txt" 2>/dev/null) rows"
fi
# the bench's `redjit bench` processes read the new table (when there is one)
[ -s "$out/treduce-paths.txt" ] && export REDJIT_TREDUCE_TABLE=$out/treduce-paths.txt

if stage calls 60; then
  for async in 0 1; do
    for rows in 1 16; do # 4 KiB and 64 KiB per rank
      timeout 60 "$carry/treduce_calls" "$n" "$rows" 1024 2000 auto,peer,split "$async"
    done
  done > "$out/treduce-calls.jsonl" 2> "$out/treduce-calls.err"
  cat "$out/treduce-calls.jsonl"
  done_stage calls "$(grep -c '"ok": false' "$out/treduce-calls.jsonl") failed lines"
fi

if stage graph 30; then
  CK_RUN_CASE=graph timeout 120 "$carry/test_gpu_treduce_stream" > "$out/graph.log" 2>&1
  rc=$?
  grep -E "Checks|:F:|:E:|request cases" "$out/graph.log" | head -10
  done_stage graph "exit $rc"
fi

if stage bench 200; then
  left=$((budget - (SECONDS - t0) - 10))
  # EXTRA=1 adds 2 and 3 ranks per GPU (about 1.5 min more; the calibration has 2 per GPU)
  PATHS="auto peer split split-equal ring" EXTRA=${EXTRA:-0} CARRY=$carry OUT=$out \
    timeout "$left" bash scripts/bench-treduce.sh "$n" > "$out/bench.log" 2>&1
  rc=$?
  tail -40 "$out/bench.log"
  done_stage bench "exit $rc"
fi

if stage tests 120; then
  left=$((budget - (SECONDS - t0) - 5))
  CARRY=$carry OUT=$out timeout "$left" bash scripts/gpu-check.sh test_gpu_treduce \
    test_gpu_treduce_stream > "$out/tests.log" 2>&1
  rc=$?
  grep -E "^(PASS|FAIL)|passed, " "$out/tests.log"
  done_stage tests "exit $rc"
fi

echo "== summary"
cat "$summary"
