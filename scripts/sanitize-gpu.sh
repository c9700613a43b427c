#!/usr/bin/env bash
# compute-sanitizer's four tools (memcheck, racecheck, synccheck, initcheck) over one request of
# every variant and every treduce path, and of every tensor variant under every op (op custom
# included), run through the carried CLI (`redjit run`: the request's kernel on random input,
# checked against the CPU oracle; op custom, which has no oracle, under `run --no-check`:
# launched, every output written, guards and sources unchanged) on the GPU machine.  Each line
# of the summary is one tool on one request: "clean", or the sanitizer's error summary.  Then
# GPU test suites from carry/ under each tool (`suites` below: tile and subgroup op custom,
# which `redjit run` cannot launch unchecked, run in test_gpu_custom_kinds).
# Exit 1 when any is not clean.
#   scripts/sanitize-gpu.sh [TOOL ...]      (default: all four; logs under $OUT when set; ONLY=REGEX
#                                            runs the cases whose names match, e.g. to split the
#                                            run over several device calls; JOBS=N runs N CLI
#                                            cases at a time)
#   scripts/sanitize-gpu.sh --dry           (no GPU, no sanitizer: every case compiles with
#                                            `redjit ptx`, and `redjit run` takes its flags: a run
#                                            without a GPU must end in status 3, not 2)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
cli=${CARRY:-carry}/redjit
out=${OUT:-/tmp/rjsan}; mkdir -p "$out"
dry=0
[ "${1:-}" = "--dry" ] && { dry=1; shift; }
tools=("$@"); [ ${#tools[@]} -eq 0 ] && tools=(memcheck racecheck synccheck initcheck)
t='"kind":"tensor","dtype":"f32"' # shapes kept small: the sanitizers slow kernels 10-100x
ts='"kind":"tile","dtype":"f32","scope":"cta","threads":64,"src":{"mem":"shared","shape":[8,96]},"dst":{"mem":"shared","shape":[8]}'
tl='"kind":"tile","dtype":"f32","scope":"warp","src":{"mem":"local","shape":[32,4],"layout":{"shape":[32,4],"stride":["1@lane",1]}},"dst":{"mem":"local","shape":[1],"layout":{"shape":[1],"stride":[1],"replicate":[[32,"1@lane"]]}},"axes":[0,1]'
sg='"kind":"subgroup","threads":64,"blocks":2'
tr='"kind":"treduce","dtype":"f32","ranks":4,"root":1,"shape":[512,32],"tile":[64,32],"pingpong":true'
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
  "tile_shared_argmax|{$ts,\"op\":\"argmax\"}"
  "tile_shared_var|{$ts,\"op\":\"var\"}"
  "tile_shared_logsumexp|{$ts,\"op\":\"logsumexp\"}"
  "tile_local_argmax|{$tl,\"op\":\"argmax\"}"
  "tile_local_var|{$tl,\"op\":\"var\"}"
  "tile_local_logsumexp|{$tl,\"op\":\"logsumexp\"}"
  "subgroup_argmax|{$sg,\"primitive\":\"reduce_argmax\",\"dtype\":\"f32\",\"log2_size\":5}"
  "subgroup_all_var|{$sg,\"primitive\":\"reduce_all_var\",\"dtype\":\"f32\",\"log2_size\":4}"
  "subgroup_logsumexp|{$sg,\"primitive\":\"reduce_logsumexp\",\"dtype\":\"f32\",\"log2_size\":3}"
  "subgroup_mul|{$sg,\"primitive\":\"reduce_mul\",\"dtype\":\"i32\",\"log2_size\":5}"
  "subgroup_and|{$sg,\"primitive\":\"reduce_and\",\"dtype\":\"u32\",\"log2_size\":4}"
  "subgroup_or|{$sg,\"primitive\":\"reduce_or\",\"dtype\":\"u64\",\"log2_size\":5}"
  "subgroup_xor|{$sg,\"primitive\":\"reduce_xor\",\"dtype\":\"i64\",\"log2_size\":2}"
  "tensor_cluster_argmax|{$t,\"op\":\"argmax\",\"shape\":[100000],\"variant\":\"tensor_cluster\"}"
  "tensor_cluster_var|{$t,\"op\":\"var\",\"shape\":[100000],\"variant\":\"tensor_cluster\"}"
  "tensor_rows_argmax_values|{$t,\"op\":\"argmax\",\"shape\":[37,1003],\"axes\":[1],\"values\":true} --nans 5"
  "tensor_cols_argmin_values|{\"kind\":\"tensor\",\"dtype\":\"f16\",\"op\":\"argmin\",\"shape\":[257,33],\"axes\":[0],\"values\":true}"
  "tensor_cluster_argmax_values|{$t,\"op\":\"argmax\",\"shape\":[100000],\"variant\":\"tensor_cluster\",\"values\":true}"
  "treduce_mean_peer|{$tr,\"op\":\"mean\"} --path peer"
  "treduce_mean_ring|{$tr,\"op\":\"mean\"} --path ring"
  "treduce_custom_peer|examples/treduce_custom.json --path peer --no-check"
  "treduce_custom_ring|examples/treduce_custom.json --path ring --no-check"
  "tensor_custom_scalar_ordered|examples/tensor_custom_ordered.json --no-check"
  "tensor_custom_struct|examples/tensor_custom_welford.json --no-check"
  "tensor_rows_sum_acc_f64|{$t,\"op\":\"sum\",\"shape\":[37,100003],\"axes\":[1],\"acc_dtype\":\"f64\"}"
  "tensor_cols_mean_acc_f64|{\"kind\":\"tensor\",\"dtype\":\"bf16\",\"op\":\"mean\",\"shape\":[20011,33],\"axes\":[0],\"acc_dtype\":\"f64\"}"
)
# Every tensor variant (forced) x every op: f32 for the float ops, i32 for and / or / xor, op custom
# as a commutative sum (the variants that serve it) and a non-commutative first-non-zero
# (tensor_ordered).
csum='"combine":{"ir":"define float @add(float %a, float %b) {\n  %r = fadd float %a, %b\n  ret float %r\n}\n","function":"add","identity":0,"commutative":true}'
for v in tensor_rows tensor_cols tensor_generic tensor_cluster; do
  case $v in
  tensor_rows) shp='"shape":[37,1003],"axes":[1]' ;;
  tensor_cols) shp='"shape":[257,33],"axes":[0]' ;;
  tensor_generic) shp='"shape":[5,7,11],"axes":[0,2]' ;;
  tensor_cluster) shp='"shape":[100000]' ;;
  esac
  ops="sum max min prod argmax argmin mean var std logsumexp and or xor"
  [ $v = tensor_cluster ] || ops+=" custom" # the cluster variant declines op custom
  for op in $ops; do
    case $op in
    and | or | xor) d=i32 extra="" flags="" ;;
    custom) d=f32 extra=",$csum" flags=" --no-check" ;;
    *) d=f32 extra="" flags="" ;;
    esac
    cases+=("matrix_${v}_$op|{\"kind\":\"tensor\",\"dtype\":\"$d\",\"op\":\"$op\",$shp,\"variant\":\"$v\"$extra}$flags")
  done
done
cases+=("matrix_tensor_ordered_custom|{\"kind\":\"tensor\",\"op\":\"custom\",\"dtype\":\"f32\",\"shape\":[37,1003],\"axes\":[1],\"variant\":\"tensor_ordered\",\"combine\":{\"ir\":\"define float @first_nonzero(float %a, float %b) {\\n  %z = fcmp oeq float %a, 0.0\\n  %r = select i1 %z, float %b, float %a\\n  ret float %r\\n}\\n\",\"function\":\"first_nonzero\",\"identity\":0,\"commutative\":false}} --no-check")
# The small integer, bool and float8 dtypes, zero-size dims, and the fused maps.
cases+=(
  "dtype_i8_sum_rows|{\"kind\":\"tensor\",\"dtype\":\"i8\",\"op\":\"sum\",\"shape\":[37,1003],\"axes\":[1]}"
  "dtype_u8_max_cols|{\"kind\":\"tensor\",\"dtype\":\"u8\",\"op\":\"max\",\"shape\":[257,33],\"axes\":[0]}"
  "dtype_bool_sum_generic|{\"kind\":\"tensor\",\"dtype\":\"bool\",\"op\":\"sum\",\"shape\":[5,7,11],\"axes\":[0,2]}"
  "dtype_i16_mean_cluster|{\"kind\":\"tensor\",\"dtype\":\"i16\",\"op\":\"mean\",\"shape\":[200000],\"variant\":\"tensor_cluster\"}"
  "dtype_e4m3_sum_rows|{\"kind\":\"tensor\",\"dtype\":\"e4m3\",\"op\":\"sum\",\"shape\":[37,1003],\"axes\":[1]}"
  "dtype_e5m2_argmax_cols|{\"kind\":\"tensor\",\"dtype\":\"e5m2\",\"op\":\"argmax\",\"shape\":[257,33],\"axes\":[0]}"
  "dtype_zero_size|{\"kind\":\"tensor\",\"dtype\":\"f32\",\"op\":\"mean\",\"shape\":[64,0],\"axes\":[1]}"
  "fused_dot_rows|{\"kind\":\"tensor\",\"dtype\":\"f32\",\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\"}],\"shape\":[37,1003],\"axes\":[1]}"
  "fused_norm_cols|{\"kind\":\"tensor\",\"dtype\":\"bf16\",\"op\":\"norm\",\"p\":2,\"shape\":[257,33],\"axes\":[0]}"
  "fused_where_generic|{\"kind\":\"tensor\",\"dtype\":\"f16\",\"op\":\"sum\",\"map\":\"where\",\"others\":[{\"dtype\":\"u8\"}],\"shape\":[5,7,11],\"axes\":[0,2]}"
  "fused_mse_cluster|{\"kind\":\"tensor\",\"dtype\":\"f32\",\"op\":\"mse\",\"others\":[{\"dtype\":\"f32\"}],\"shape\":[100000],\"variant\":\"tensor_cluster\"}"
  "fused_where_i8|{\"kind\":\"tensor\",\"dtype\":\"i8\",\"op\":\"sum\",\"map\":\"where\",\"others\":[{\"dtype\":\"bool\"}],\"shape\":[64,1000],\"axes\":[1]}"
  "fused_where_rows_u8|{\"kind\":\"tensor\",\"dtype\":\"f32\",\"op\":\"sum\",\"map\":\"where\",\"others\":[{\"dtype\":\"u8\"}],\"shape\":[37,1003],\"axes\":[1]}"
  "fused_masked_mean_1d_u8|{\"kind\":\"tensor\",\"dtype\":\"bf16\",\"op\":\"masked_mean\",\"others\":[{\"dtype\":\"u8\"}],\"shape\":[100003]}"
  "fused_count_i16|{\"kind\":\"tensor\",\"dtype\":\"i16\",\"op\":\"count_nonzero\",\"shape\":[640]}"
  "fused_dot_rows_cta|{\"kind\":\"tensor\",\"dtype\":\"f32\",\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\"}],\"shape\":[300,5001],\"axes\":[1]}"
  "fused_tile_shared_norm|{$ts,\"op\":\"norm\",\"p\":1}"
  "fused_tile_local_sumsq|{$tl,\"op\":\"sumsq\"}"
  "invariant_rows_bf16|{\"kind\":\"tensor\",\"dtype\":\"bf16\",\"op\":\"sum\",\"shape\":[37,1003],\"axes\":[1],\"invariant\":true}"
  "invariant_cols_bf16|{\"kind\":\"tensor\",\"dtype\":\"bf16\",\"op\":\"sum\",\"shape\":[257,35],\"axes\":[0],\"invariant\":true}"
  "invariant_1d_f32|{\"kind\":\"tensor\",\"dtype\":\"f32\",\"op\":\"mean\",\"shape\":[100003],\"invariant\":true}"
  "seg_1d_f32_short|{\"kind\":\"tensor\",\"dtype\":\"f32\",\"op\":\"sum\",\"shape\":[200003],\"segments\":{\"count\":30000,\"dtype\":\"i64\"}}"
  "invariant_seg_1d_f32|{\"kind\":\"tensor\",\"dtype\":\"f32\",\"op\":\"sum\",\"shape\":[300001],\"segments\":{\"count\":77},\"invariant\":true}"
  "invariant_seg_2d_bf16|{\"kind\":\"tensor\",\"dtype\":\"bf16\",\"op\":\"var\",\"shape\":[20000,3],\"axes\":[0],\"segments\":{\"count\":40},\"invariant\":true}"
  "invariant_list_norm_bf16|{\"kind\":\"tensor\",\"dtype\":\"bf16\",\"op\":\"norm\",\"list\":{\"count\":150,\"total\":true},\"invariant\":true}"
)
# run in process (CK_FORK=no), every case of the suite; SUITES="..." names others ("" for none)
read -r -a suites <<<"${SUITES-test_gpu_custom_kinds}"
# --dry: each case's request compiles (ptx takes --emulate-packed, not run's flags), and run
# takes the request and its flags (status 3 here: no GPU; 2 would be a refused request or flag).
if [ $dry -eq 1 ]; then
  bad=0
  for c in "${cases[@]}"; do
    name=${c%%|*}; args=${c#*|}
    req=${args%% --*}; flags=""; [ "$req" != "$args" ] && flags=${args#"$req"}
    pflags=""; [[ $flags == *--emulate-packed* ]] && pflags=--emulate-packed
    # shellcheck disable=SC2086
    if ! msg=$("$cli" ptx "$req" --target sm_90 $pflags 2>&1 >/dev/null); then
      bad=$((bad + 1)); echo "FAIL   $name: redjit ptx: $msg"; continue
    fi
    # shellcheck disable=SC2086
    line=$(CUDA_VISIBLE_DEVICES="" "$cli" run "$req" $flags 2>/dev/null)
    rc=$?
    if [ $rc -ne 3 ]; then
      bad=$((bad + 1)); echo "FAIL   $name: redjit run$flags exited $rc (want 3, no GPU): $line"
    else
      echo "ok     $name"
    fi
  done
  echo "${#cases[@]} cases, $bad bad"
  [ $bad -eq 0 ]
  exit
fi
# one tool over one CLI case: prints "clean ..." or "FAIL ..."
run_case() {
  local tool=$1 name=$2 args=$3 req flags="" log rc
  req=${args%% --*}; [ "$req" != "$args" ] && flags=${args#"$req"}
  log=$out/$tool.$name.log
  # shellcheck disable=SC2086
  timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 99 "$cli" run "$req" $flags \
    >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -q '"ok": true' "$log"; then
    echo "clean  $tool $name"
  else
    echo "FAIL   $tool $name (exit $rc): $(grep -E 'ERROR SUMMARY|Error|"ok": false' "$log" | head -2 | tr '\n' ' ')"
  fi
}
# JOBS=N: N CLI cases at a time on the one GPU (default 1)
results=$out/results.txt; : >"$results"
for tool in "${tools[@]}"; do
  for c in "${cases[@]}"; do
    name=${c%%|*}; args=${c#*|}
    [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]] && continue
    while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-1}" ]; do wait -n; done
    run_case "$tool" "$name" "$args" >>"$results" &
  done
done
wait
for tool in "${tools[@]}"; do
  for suite in "${suites[@]}"; do
    [ -n "${ONLY:-}" ] && ! [[ $suite =~ $ONLY ]] && continue
    log=$out/$tool.$suite.log
    CK_FORK=no timeout 540 compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "${CARRY:-carry}/$suite" >"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -qE '^100%: Checks' "$log"; then
      echo "clean  $tool $suite ($(grep -E 'cases run' "$log" | tail -1))" >>"$results"
    else
      echo "FAIL   $tool $suite (exit $rc): $(grep -E 'ERROR SUMMARY|:F:|:E:' "$log" | head -2 | tr '\n' ' ')" >>"$results"
    fi
  done
done
sort -k2,3 "$results"
bad=$(grep -c '^FAIL' "$results")
echo "$bad not clean"
[ "$bad" -eq 0 ]
