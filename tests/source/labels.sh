#!/usr/bin/env bash
# The ctest labels (tests/README.md): every test has exactly one of `cpu` and `gpu` and at least
# one area label; no label outside the list below; `gpu` is exactly the suites that exit 77
# ("SKIP: no GPU") without a GPU, read off their sources (`return RJT_SKIP` in main).
#   tests/source/labels.sh BUILD_DIR SOURCE_DIR [CTEST]
set -uo pipefail
build=$1 src=$2 ctest=${3:-ctest}
areas="request cli dispatch tile subgroup tensor treduce ops custom cache isolate api install python
       source sanitize fuzz"
known=" cpu gpu slow $(echo $areas) "
cd "$build" || exit 1
# the names of the tests that carry label $1 (all tests without one)
names() { "$ctest" -N ${1:+-L "^$1\$"} | sed -n 's/^ *Test *#[0-9]*: \([^ ]*\).*/\1/p' | sort; }
all=$(names)
[ -n "$all" ] || { echo "labels: ctest lists no test in $build"; exit 1; }
fail=0
say() { echo "labels: $*"; fail=1; }

for l in $("$ctest" --print-labels | sed -n 's/^  *//p'); do
  case $known in *" $l "*) ;; *) say "unknown label \"$l\" (tests: $(names "$l" | tr '\n' ' '))" ;; esac
done
cpu=$(names cpu) gpu=$(names gpu)
declare -A area_of
for a in $areas; do for t in $(names "$a"); do area_of[$t]+="$a "; done; done
for t in $all; do
  in_cpu=$(grep -cx "$t" <<<"$cpu") in_gpu=$(grep -cx "$t" <<<"$gpu")
  [ $((in_cpu + in_gpu)) -eq 1 ] || say "$t: needs exactly one of cpu and gpu (tests/CMakeLists.txt)"
  [ -n "${area_of[$t]:-}" ] || say "$t: no area label (one of: $(echo $areas)); put its file in an" \
    "area's folder, or give it one in tests/CMakeLists.txt"
done

# gpu = the suites that skip without a GPU: their sources say so
cd "$src" || exit 1
for f in $(find tests -name 'test_*.c' | sort); do
  name=$(basename "$f" .c)
  name=${name#test_}
  grep -qx "$name" <<<"$all" || continue
  if grep -q "return RJT_SKIP" "$f"; then
    grep -qx "$name" <<<"$gpu" || say "$name ($f) skips without a GPU but is not labelled gpu"
  else
    grep -qx "$name" <<<"$gpu" && say "$name ($f) is labelled gpu but never skips without a GPU"
  fi
done
for t in $gpu; do
  [ -n "$(find tests -name "test_$t.c")" ] || say "$t is labelled gpu but is no suite (tests/*/test_$t.c)"
done
[ $fail -eq 0 ] && echo "labels: $(wc -l <<<"$all") tests, $(wc -l <<<"$gpu") gpu, all labelled"
exit $fail
