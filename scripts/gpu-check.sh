#!/usr/bin/env bash
# The GPU suite (all of it, or the suites named) on the device machine, from the binaries in
# carry/ (built here by scripts/carry.sh: that machine has no LLVM, Check or cJSON).  Logs go to
# $OUT when set.
# With suite names (test_gpu_treduce …) it runs only those: on one H100 the whole suite takes
# longer than one device call (600 s), so run it in two: the treduce suites
# (`… gpu-check.sh test_gpu_treduce test_gpu_treduce_stream`), then the others
# (`… gpu-check.sh $(cd carry && ls test_* | grep -v '^test_gpu_treduce')`).
# SANITIZE=1 adds scripts/sanitize-gpu.sh (compute-sanitizer over every variant and path).
# JOBS=N runs N suites at a time (see below); a name SUITE:CASE runs one case of a suite;
# SUITE_TIMEOUT=S stops a suite after S seconds (a failure).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${CARRY:-carry}
out=${OUT:-/tmp/rjout}; mkdir -p "$out"
export REDJIT_CLI=$PWD/$dir/redjit
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee "$out/gpu.txt"
suites=("$@"); [ ${#suites[@]} -eq 0 ] && suites=($(cd "$dir" && ls test_*))
ngpu=$(nvidia-smi -L | wc -l)
# one suite: its log, then "PASS|FAIL name (checks; seconds)" in $out/$name.result
# (NAME:CASE runs one Check case of the suite: CK_RUN_CASE=CASE)
run_suite() {
  local name=$1 t=$dir/${1%%:*} log=$out/${1//:/.}.log start=$SECONDS r
  if [[ $name == *:* ]]; then export CK_RUN_CASE=${name#*:}; fi # (in the job's subshell)
  # on the GPU machine a suite that skipped for want of a GPU, or ran no check, has failed
  if timeout "${SUITE_TIMEOUT:-0}" "$t" >"$log" 2>&1 && ! grep -q "SKIP: no GPU" "$log" &&
    ! grep -q "Checks: 0," "$log"
  then r=PASS; else r=FAIL; fi
  echo "$r $name ($(grep -E '^[0-9]+%: Checks' "$log" | tail -1); $((SECONDS-start))s)" \
    >"${log%.log}.result"
}
# JOBS=N runs N suites at a time; with several GPUs each suite but the treduce ones (which span
# them) gets one GPU of its own, round robin.
i=0
for name in "${suites[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-1}" ]; do wait -n; done
  if [ "${JOBS:-1}" -gt 1 ] && [ "$ngpu" -gt 1 ] && [[ $name != *treduce* ]]; then
    CUDA_VISIBLE_DEVICES=$((i % ngpu)) run_suite "$name" &
    i=$((i + 1))
  else
    run_suite "$name" &
  fi
done
wait
fail=0; pass=0; summary=""
for name in "${suites[@]}"; do
  log=$out/${name//:/.}.log
  r=$(cat "${log%.log}.result" 2>/dev/null || echo "FAIL $name (no result)")
  summary+="$r"$'\n'
  grep -E "request cases run|SKIP" "$log" | head -3
  if [[ $r == PASS* ]]; then pass=$((pass+1)); else
    fail=$((fail+1)); grep -E ":F:|:E:" "$log" | head -20
  fi
done
echo "== the main job's request through the CLI"
"$dir/redjit" run examples/seed000_shared.json
echo "== summary"; printf "%s" "$summary"
echo "$pass passed, $fail failed"
if [ "${SANITIZE:-0}" = 1 ]; then # compute-sanitizer's four tools over every variant and path
  echo "== compute-sanitizer"
  OUT=$out/sanitize bash scripts/sanitize-gpu.sh | tail -1 || fail=$((fail + 1))
fi
[ $fail -eq 0 ]
