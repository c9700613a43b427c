#!/usr/bin/env bash
# The NCCL backend of treduce, one process per GPU (needs >= 2 GPUs and libnccl.so.2; not run by
# gpu-check.sh).  Builds bench/nccl_treduce_rank.c against $BUILD's libredjit.so unless
# $RANK_BIN names a built one, starts one process per GPU, and fails if any rank fails.
#   scripts/nccl-treduce-test.sh [NRANKS]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
n=${1:-$(nvidia-smi -L | wc -l)}
bin=${RANK_BIN:-}
if [ -z "$bin" ]; then
  bin=$build/nccl_treduce_rank
  cc -std=c17 -O2 -Iinclude bench/nccl_treduce_rank.c -L"$build" -lredjit -ldl \
     -Wl,-rpath,"$PWD/$build" -o "$bin" || exit 2
fi
id=$(mktemp -u /tmp/rj_nccl_id.XXXXXX)
pids=()
for ((r = 0; r < n; r++)); do
  RJ_RANK=$r RJ_NRANKS=$n RJ_ID_FILE=$id "$bin" & pids+=($!)
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
rm -f "$id"
[ $fail -eq 0 ] && echo "nccl treduce: $n ranks passed" || echo "nccl treduce: FAILED"
exit $fail
