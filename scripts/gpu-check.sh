#!/usr/bin/env bash
# The GPU suite (all of it, or the suites named) on the device machine, from the binaries in
# carry/ (built here by scripts/carry.sh: that machine has no LLVM, Check or cJSON).  Logs go to
# $OUT when set.
# With suite names (test_gpu_treduce …) it runs only those: on one H100 the whole suite takes
# longer than one device call (600 s), so run it in two: the treduce suites
# (`… gpu-check.sh test_gpu_treduce test_gpu_treduce_stream`), then the others
# (`… gpu-check.sh $(cd carry && ls test_* | grep -v '^test_gpu_treduce')`).
# SANITIZE=1 adds scripts/sanitize-gpu.sh (compute-sanitizer over every variant and path).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${CARRY:-carry}
out=${OUT:-/tmp/rjout}; mkdir -p "$out"
export REDJIT_CLI=$PWD/$dir/redjit
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee "$out/gpu.txt"
fail=0; pass=0; summary=""
suites=("$@"); [ ${#suites[@]} -eq 0 ] && suites=($(cd "$dir" && ls test_*))
for name in "${suites[@]}"; do
  t=$dir/$name
  start=$SECONDS
  # on the GPU machine a suite that says it skipped for want of a GPU has failed
  if "$t" >"$out/$name.log" 2>&1 && ! grep -q "SKIP: no GPU" "$out/$name.log"; then
    r=PASS; pass=$((pass+1))
  else
    r=FAIL; fail=$((fail+1))
  fi
  summary+="$r $name ($(grep -E '^[0-9]+%: Checks' "$out/$name.log" | tail -1); $((SECONDS-start))s)"$'\n'
  grep -E "request cases run|SKIP" "$out/$name.log" | head -3
  [ $r = FAIL ] && grep -E ":F:|:E:" "$out/$name.log" | head -20
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
