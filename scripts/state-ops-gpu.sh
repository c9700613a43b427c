#!/usr/bin/env bash
# A quick GPU sweep of the state ops (argmax argmin var std logsumexp) through the carried CLI's
# `run` (random input against the CPU reference): every op x dtype x five views (a long 1-D row
# of 2^21+ elements: the streaming split, two rounds per thread) x the four input
# styles (seed bits 3-4), NaN propagated (seeds 1, 9) and ignored (17, 25).  The full suite is
# tests/ops/test_gpu_tensor_state.c (longer than one device call on one H100 in one process: its
# cases, CK_RUN_CASE=shapes0 ... splits2, run side by side).  Prints one line per failing case,
# then the counts; exit 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
cli=${CARRY:-carry}/redjit
ok=0; bad=0
for op in argmax argmin var std logsumexp; do
  for dt in f32 f16 bf16 f64 i32 u64; do
    case $op$dt in var*i32|var*u64|std*i32|std*u64|logsumexp*i32|logsumexp*u64) continue ;; esac
    for view in '"shape":[7]' '"shape":[13,17],"axes":[1]' '"shape":[33,4099],"axes":[0]' \
                '"shape":[5,7,11],"axes":[0,2]' '"shape":[2100003]'; do
      for seed in 1 9 17 25; do
        nan=propagate; [ $seed -gt 9 ] && nan=ignore # ignore: NaNs drawn (--nans), then skipped
        {
          r=$("$cli" run "{\"kind\":\"tensor\",\"op\":\"$op\",\"dtype\":\"$dt\",$view,\"nan\":\"$nan\"}" \
              --seed $seed --nans $((seed % 3)) 2>&1)
          case "$r" in
            *'"ok": true'*) ok=$((ok + 1)) ;;
            *) bad=$((bad + 1)); echo "FAIL $op $dt $view nan=$nan seed=$seed: ${r:0:200}" ;;
          esac
        }
      done
    done
  done
done
echo "$ok passed, $bad failed"
[ $bad -eq 0 ]
