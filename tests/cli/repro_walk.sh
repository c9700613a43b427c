#!/usr/bin/env bash
# Every reproducer in tests/repro/ (and in the folders REPRO_DIRS names, space-separated) through
# the CLI with its default limits: a status (0, or 2 with a "redjit: " message naming the cause)
# within 2 s of wall-clock time each, never a signal, another exit or a hang.
#   tests/cli/repro_walk.sh REDJIT_CLI
set -uo pipefail
cli=${1:?REDJIT_CLI}
root=$(cd "$(dirname "$0")/../.." && pwd)
bound=${REPRO_BOUND_S:-2}
fail=0 n=0
opts_of() { # the entry and target a module's reproducer was found with
  case $(basename "$1") in
  ir_clusterid.ll | ir_barcluster.ll | ir_atomic_cluster.ll) echo "--target sm_80" ;;
  ir_i128atomic.ll) echo "--target sm_100a" ;;
  bc_fatal_symbol_name.bc) echo "--entry redjit_tile --target sm_80" ;;
  bc_oom.bc) echo "--target sm_120" ;;
  esac
}
for f in "$root"/tests/repro/* ${REPRO_DIRS:+$(for d in $REPRO_DIRS; do echo "$d"/*; done)}; do
  case $f in
  *.json) args=(ptx "$f") ;;
  *.ll | *.bc)
    entry=$(grep -aoE '^define void @[A-Za-z_][A-Za-z0-9_]*' "$f" | head -1 | sed 's/.*@//')
    # shellcheck disable=SC2207
    args=(ptx --ir "$f" --entry "${entry:-k}" $(opts_of "$f"))
    ;;
  *) continue ;;
  esac
  n=$((n + 1))
  t0=$(date +%s.%N)
  REDJIT_CACHE_DISABLE=1 timeout 30 "$cli" "${args[@]}" >/dev/null 2>/tmp/repro_walk.$$ && rc=0 || rc=$?
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  msg=$(head -c 200 /tmp/repro_walk.$$ | head -1)
  if { [ $rc != 0 ] && [ $rc != 2 ]; } || { [ $rc = 2 ] && [[ $msg != redjit:* ]]; }; then
    echo "repro_walk: FAIL $f: exit $rc: $msg"
    fail=1
  elif awk -v t="$took" -v b="$bound" 'BEGIN { exit !(t > b) }'; then
    echo "repro_walk: FAIL $f: $took s (bound $bound s): exit $rc: $msg"
    fail=1
  else
    printf 'repro_walk: %5.2f s exit %d %s: %s\n' "$took" $rc "$(basename "$f")" "${msg:-compiled}"
  fi
done
rm -f /tmp/repro_walk.$$
echo "repro_walk: $n reproducers"
[ $n -ge 20 ] || { echo "repro_walk: FAIL: too few reproducers found"; fail=1; }
exit $fail
