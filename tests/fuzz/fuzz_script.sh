#!/usr/bin/env bash
# scripts/fuzz.sh must fail on every kind of finding: a crash, a leak and a timeout planted in
# each target (FUZZ_PLANT, tests/fuzz/plant.h) each make it exit 1 and name the finding.
#   tests/fuzz/fuzz_script.sh OUT_DIR [request|ir|both]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?OUT_DIR}
which=${2:-both}
fail=0
run() { # target plant
  local dir=$out/$1-$2 rc=0
  FUZZ_PLANT=$2 FUZZ_TIMEOUT=2 FUZZ_OBJ=${FUZZ_OBJ:-$out/obj} bash scripts/fuzz.sh 4 "$dir" "$1" \
    >"$dir.log" 2>&1 || rc=$?
  if [ $rc = 77 ]; then
    echo "fuzz_script: SKIP: $(tail -1 "$dir.log")"
    exit 77
  fi
  if [ $rc != 1 ] || ! grep -q "finding" "$dir.log"; then
    echo "fuzz_script: FAIL: planted $2 in $1: exit $rc"
    tail -5 "$dir.log"
    fail=1
  else
    echo "fuzz_script: planted $2 in $1: exit 1 ($(grep -m1 finding "$dir.log"))"
  fi
}
mkdir -p "$out"
for t in request ir; do
  [ "$which" = both ] || [ "$which" = $t ] || continue
  for p in crash leak timeout; do run $t $p; done
done
exit $fail
