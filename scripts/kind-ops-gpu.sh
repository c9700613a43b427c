#!/usr/bin/env bash
# A GPU sweep of the ops added to the tile, subgroup and tensor_cluster kinds, through the carried
# CLI's `run` (random input against the CPU reference, as scripts/state-ops-gpu.sh does for the
# tensor rows / cols / generic variants):
#   tile     argmax argmin var std logsumexp x dtypes (argmax / argmin: i32 u64 too) x four bodies
#            (shared one level, shared two levels, local whole warp, local looped slots) x the
#            four input styles (seeds 1 9 17 25: ties, offsets and magnitudes, -inf rows,
#            constant rows), NaNs propagated (seeds 1, 9) and ignored (17, 25);
#   subgroup reduce_mul / _and / _or / _xor and reduce_all_* x every dtype they take x k = 3, 5
#            (i32 / u32 and / or / xor at k = 5: redux.sync) x two seeds; reduce_argmax ...
#            reduce_all_logsumexp x dtypes x k = 2, 5 x the four input styles, NaNs;
#   cluster  the state ops on 1-D arrays tensor_cluster takes (sm_90+) x dtypes x four seeds.
# JOBS=N runs N at a time (default 8).  Prints one line per failing case, then the counts; exit 1
# on any failure.  The full suites: tests/tile/test_gpu_tile.c (CK_RUN_CASE=state_shared,
# state_local), tests/subgroup/test_gpu_subgroup.c (CK_RUN_CASE=mul_bitwise, states),
# tests/ops/test_gpu_tensor_state.c (CK_RUN_CASE=cluster).
set -uo pipefail
cd "$(dirname "$0")/.."
cli=${CARRY:-carry}/redjit
list=$(mktemp)
trap 'rm -f "$list"' EXIT
emit() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$list"; } # request, seed, nans

SH1='"scope":"cta","threads":64,"src":{"mem":"shared","shape":[16,40]},"dst":{"mem":"shared","shape":[16]}'
SH2='"scope":"cta","threads":256,"src":{"mem":"shared","shape":[3,1500]},"dst":{"mem":"shared","shape":[3]}'
LW='"scope":"warp","src":{"mem":"local","shape":[32,4],"layout":{"shape":[32,4],"stride":["1@lane",1]}},"dst":{"mem":"local","shape":[4],"layout":{"shape":[4],"stride":[1],"replicate":[[32,"1@lane"]]}},"axes":[0]'
LL='"scope":"thread","src":{"mem":"local","shape":[300,4]},"dst":{"mem":"local","shape":[4]},"axes":[0]'
for op in argmax argmin var std logsumexp; do
  for dt in f32 f16 bf16 f64 i32 u64; do
    case $op$dt in var*i32 | var*u64 | std*i32 | std*u64 | logsumexp*i32 | logsumexp*u64) continue ;; esac
    for body in "$SH1" "$SH2" "$LW" "$LL"; do
      for seed in 1 9 17 25; do
        nan=propagate
        [ $seed -gt 9 ] && nan=ignore
        emit "{\"kind\":\"tile\",\"op\":\"$op\",\"dtype\":\"$dt\",$body,\"nan\":\"$nan\"}" $seed $((seed % 3))
      done
    done
  done
done
for prim in reduce_mul reduce_and reduce_or reduce_xor reduce_all_mul reduce_all_and reduce_all_or reduce_all_xor; do
  for dt in f32 f16 bf16 f64 i32 u32 i64 u64; do
    case $prim$dt in *mul*) ;; *f16 | *bf16 | *f32 | *f64) continue ;; esac
    for k in 3 5; do
      for seed in 1 2; do
        emit "{\"kind\":\"subgroup\",\"primitive\":\"$prim\",\"dtype\":\"$dt\",\"log2_size\":$k,\"threads\":128,\"blocks\":3}" $seed 0
      done
    done
  done
done
for op in argmax argmin var std logsumexp; do
  for all in "" all_; do
    for dt in f32 f16 bf16 f64 i32 u64; do
      case $op$dt in var*i32 | var*u64 | std*i32 | std*u64 | logsumexp*i32 | logsumexp*u64) continue ;; esac
      for k in 2 5; do
        for seed in 1 9 17 25; do
          emit "{\"kind\":\"subgroup\",\"primitive\":\"reduce_$all$op\",\"dtype\":\"$dt\",\"log2_size\":$k,\"threads\":64,\"blocks\":3}" $seed $((seed % 3))
        done
      done
    done
  done
done
for op in argmax argmin var std logsumexp; do
  for dt in f32 bf16 f64 i32; do
    case $op$dt in var*i32 | std*i32 | logsumexp*i32) continue ;; esac
    n=100003
    [ $dt = bf16 ] && n=200003
    for seed in 1 9 17 25; do
      nan=propagate
      [ $seed -gt 9 ] && nan=ignore
      emit "{\"kind\":\"tensor\",\"op\":\"$op\",\"dtype\":\"$dt\",\"shape\":[$n],\"nan\":\"$nan\",\"variant\":\"tensor_cluster\"}" $seed $((seed % 3))
    done
  done
done

# one case: prints "ok" or "FAIL ..."
one() {
  local r
  r=$("$cli" run "$1" --seed "$2" --nans "$3" 2>&1)
  case "$r" in
    *'"ok": true'*) echo ok ;;
    *) echo "FAIL seed=$2 nans=$3 $1: ${r:0:300}" ;;
  esac
}
export -f one
export cli
out=$(tr '\n' '\0' <"$list" | xargs -0 -P "${JOBS:-8}" -I{} bash -c 'IFS=$'"'"'\t'"'"' read -r q s n <<<"$1"; one "$q" "$s" "$n"' _ {})
ok=$(grep -c '^ok$' <<<"$out")
bad=$(grep -c '^FAIL' <<<"$out")
grep '^FAIL' <<<"$out"
echo "$ok passed, $bad failed ($(wc -l <"$list") cases)"
[ "$bad" -eq 0 ] && [ "$ok" -eq "$(wc -l <"$list")" ]
