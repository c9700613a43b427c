#!/usr/bin/env bash
# Every request in examples/ through `redjit ptx` and `redjit explain`, on the target the examples
# README names: the PTX must have an .entry, and explain must print exactly one `chosen` line, for
# the variant examples/README.md promises.  A new example must be added to the table below, so a
# change in dispatch (or an unlisted file) fails this test.
#   bash tests/cli/examples.sh [REDJIT] [EXAMPLES_DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cli=${1:-$here/build/redjit}
dir=${2:-$here/examples}

# file                        target    variant explain must choose
table="
seed000_shared.json           sm_90     shared
tile_shared_warpgroup.json    sm_90     shared
tile_local_mma.json           sm_90     local
tile_packed_sm100a.json       sm_100a   sm100_packed
tile_redux.json               sm_90     redux
tile_custom_ordered.json      sm_90     shared
subgroup_custom_argmax.json   sm_90     subgroup
subgroup_reduce_all.json      sm_90     subgroup
tensor_rows.json              sm_90     tensor_rows
tensor_cols.json              sm_90     tensor_cols
tensor_dynamic.json           sm_90     tensor_rows
tensor_cluster.json           sm_90     tensor_cluster
tensor_generic.json           sm_90     tensor_generic
tensor_mean_f64_acc.json      sm_90     tensor_rows
tensor_fused_dot.json         sm_90     tensor_rows
tensor_fused_huber.json       sm_90     tensor_rows
tensor_segmented.json         sm_90     tensor_segmented
tensor_custom_welford.json    sm_90     tensor_rows
tensor_custom_ordered.json    sm_90     tensor_ordered
treduce_custom.json           sm_90     treduce
treduce.json                  sm_90     treduce
treduce_custom_welford.json   sm_90     treduce
"

fail=0
n=0
for path in "$dir"/*.json; do
  f=$(basename "$path")
  row=$(awk -v f="$f" '$1 == f { print $2, $3 }' <<<"$table")
  if [ -z "$row" ]; then
    echo "FAIL $f: not in tests/cli/examples.sh's table (add its target and variant, and list it in examples/README.md)"
    fail=1
    continue
  fi
  read -r target want <<<"$row"
  n=$((n + 1))
  ptx=$("$cli" ptx "$path" --target "$target" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL $f: redjit ptx --target $target exited $rc: $(head -c 300 <<<"$ptx")"
    fail=1
    continue
  fi
  if ! grep -q '\.entry' <<<"$ptx"; then
    echo "FAIL $f: the PTX for $target has no .entry"
    fail=1
  fi
  out=$("$cli" explain "$path" --target "$target" 2>&1)
  rc=$?
  chosen=$(awk '$3 == "chosen"' <<<"$out")
  count=$(grep -c . <<<"$chosen")
  got=$(awk '{ print $1 }' <<<"$chosen")
  if [ $rc -ne 0 ] || [ "$count" -ne 1 ] || [ "$got" != "$want" ]; then
    echo "FAIL $f: redjit explain --target $target (exit $rc) chose \"$got\" ($count chosen lines), expected $want"
    fail=1
  else
    echo "ok   $f: $target -> $want"
  fi
done
# every row of the table must have its file
while read -r f _; do
  [ -z "$f" ] && continue
  [ -f "$dir/$f" ] || { echo "FAIL $f: listed in the table but missing from $dir"; fail=1; }
done <<<"$table"
[ $n -gt 0 ] || { echo "FAIL: no examples found in $dir"; fail=1; }
exit $fail
