#!/usr/bin/env bash
# compute-sanitizer's four tools (memcheck, racecheck, synccheck, initcheck) over one request of
# every variant and every treduce path, run through the carried CLI (`redjit run`: the request's
# kernel on random input, checked against the CPU oracle) on the GPU machine.  Each line of the
# summary is one tool on one request: "clean", or the sanitizer's error summary.  Exit 1 when any
# is not clean.
#   scripts/sanitize-gpu.sh [TOOL ...]      (default: all four; logs under $OUT when set)
set -uo pipefail
cd "$(dirname "$0")/.."
cli=${CARRY:-carry}/redjit
out=${OUT:-/tmp/rjsan}; mkdir -p "$out"
tools=("$@"); [ ${#tools[@]} -eq 0 ] && tools=(memcheck racecheck synccheck initcheck)
t='"kind":"tensor","dtype":"f32"' # shapes kept small: the sanitizers slow kernels 10-100x
cases=(
  "shared|examples/seed000_shared.json"
  "shared_warpgroup|examples/tile_shared_warpgroup.json"
  "local|examples/tile_local_mma.json"
  "redux|examples/tile_redux.json"
  "sm100_packed_emulated|examples/tile_packed_sm100a.json --emulate-packed"
  "subgroup|examples/subgroup_reduce_all.json"
  "tensor_rows|{$t,\"op\":\"sum\",\"shape\":[512,4096],\"axes\":[1]}"
  "tensor_cols|{\"kind\":\"tensor\",\"dtype\":\"bf16\",\"op\":\"max\",\"shape\":[512,2048],\"axes\":[0],\"nan\":\"ignore\"}"
  "tensor_generic|examples/tensor_generic.json"
  "tensor_cluster|{$t,\"op\":\"sum\",\"shape\":[100000],\"variant\":\"tensor_cluster\"}"
  "tensor_dynamic|{$t,\"op\":\"sum\",\"shape\":[4096,128],\"axes\":[1],\"dynamic\":true}"
  "tensor_rows_tail_nan|{$t,\"op\":\"max\",\"shape\":[37,1003],\"axes\":[1],\"nan\":\"ignore\"}"
  "tensor_cols_strided|{$t,\"op\":\"min\",\"shape\":[257,33],\"strides\":[40,1],\"axes\":[0]}"
  "tensor_rows_argmax|{$t,\"op\":\"argmax\",\"shape\":[37,1003],\"axes\":[1]}"
  "tensor_cols_var|{$t,\"op\":\"var\",\"shape\":[257,33],\"axes\":[0]}"
  "tensor_generic_logsumexp|{$t,\"op\":\"logsumexp\",\"shape\":[5,7,11],\"axes\":[0,2]}"
  "tensor_rows_prod|{$t,\"op\":\"prod\",\"shape\":[64,300],\"axes\":[1]}"
  "tile_shared_mean|{\"kind\":\"tile\",\"op\":\"mean\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[8,96]},\"dst\":{\"mem\":\"shared\",\"shape\":[8]}}"
  "redux_xor|{\"kind\":\"tile\",\"op\":\"xor\",\"dtype\":\"u32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0,1]}"
  "local_looped|{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[600]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}"
  "treduce_peer|examples/treduce.json --path peer"
  "treduce_staged|examples/treduce.json --path staged"
  "treduce_split|examples/treduce.json --path split"
  "treduce_ring|examples/treduce.json --path ring"
)
bad=0
for tool in "${tools[@]}"; do
  for c in "${cases[@]}"; do
    name=${c%%|*}; args=${c#*|}
    req=${args%% --*}; flags=""; [ "$req" != "$args" ] && flags=${args#"$req"}
    log=$out/$tool.$name.log
    # shellcheck disable=SC2086
    timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 99 "$cli" run "$req" $flags \
      >"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q '"ok": true' "$log"; then
      echo "clean  $tool $name"
    else
      bad=$((bad + 1))
      echo "FAIL   $tool $name (exit $rc): $(grep -E 'ERROR SUMMARY|Error|"ok": false' "$log" | head -2 | tr '\n' ' ')"
    fi
  done
done
echo "$bad not clean"
[ $bad -eq 0 ]
