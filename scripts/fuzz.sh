#!/usr/bin/env bash
# libFuzzer over the request parser, validation and canonical form (tests/fuzz/fuzz_request.c,
# with ir/ built under AddressSanitizer and UndefinedBehaviorSanitizer by Debian's clang).  Seeds:
# examples/ and tests/repro/; dictionary: tests/fuzz/request.dict.  A finding is written to
# OUT_DIR/crash-* (or leak-*, timeout-*) and the script exits non-zero: add the file to
# tests/repro/ as a regression test.
#   scripts/fuzz.sh [SECONDS (default 60)] [OUT_DIR (default build-fuzz)]
# Exits 77 (skipped) when clang or its libFuzzer runtime is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
out=${2:-build-fuzz}
mkdir -p "$out/corpus"
rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* # a run judges its own findings only
bin=$out/fuzz_request
if ! command -v clang >/dev/null ||
   ! clang -std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
       -fno-sanitize-recover=undefined -Iinclude $(pkg-config --cflags libcjson) \
       tests/fuzz/fuzz_request.c ir/*.c $(pkg-config --libs libcjson) -lm -o "$bin"; then
  echo "fuzz: SKIP: clang with libFuzzer (Debian: clang, libclang-rt-14-dev) is not available"
  exit 77
fi
cp examples/*.json tests/repro/*.json "$out/corpus/"
"$bin" -max_total_time="$secs" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
  -dict=tests/fuzz/request.dict -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus" 2>&1 |
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|fuzz_request:|SUMMARY|==[0-9]+==ERROR)" || true
# libFuzzer's own status decides: re-run the findings, if any, to fail loudly
if ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* >/dev/null 2>&1; then
  echo "fuzz: findings in $out (crash-*, leak-*, timeout-*)"
  exit 1
fi
echo "fuzz: no finding in ${secs} s"
