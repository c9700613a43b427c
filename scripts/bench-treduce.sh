#!/usr/bin/env bash
# treduce benchmark for the multi-GPU machine (prepared, not yet run: see docs/TREDUCE.md).
# For 4 KiB .. 1 GiB per rank (f32, shape [rows, 1024] / [1, n]), times redjit's root kernel
# (`redjit bench`, ranks on GPUs r mod count, path auto) and NCCL's reduce through
# torch.distributed (bench/treduce_nccl.py, one process per GPU), on the same machine in the
# same run.  Writes JSON lines to $OUT/treduce-bench.jsonl and a table to stdout.
#   scripts/bench-treduce.sh [RANKS]       (default: every GPU)
set -uo pipefail
cd "$(dirname "$0")/.."
cli=${REDJIT_CLI:-${CARRY:-carry}/redjit}
out=${OUT:-/tmp/rjout}; mkdir -p "$out"
n=${1:-$(nvidia-smi -L | wc -l)}
log=$out/treduce-bench.jsonl; : > "$log"
nvidia-smi topo -m > "$out/topo.txt" 2>&1 || true
for ((b = 12; b <= 30; b += 2)); do          # 4 KiB .. 1 GiB per rank
  elems=$(( (1 << b) / 4 ))
  if (( elems >= 1024 )); then shape="[$((elems / 1024)),1024]"; tile="[64,1024]"; else shape="[1,$elems]"; tile="[1,$elems]"; fi
  for pp in true false; do
    req="{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":$n,\"root\":0,\"shape\":$shape,\"tile\":$tile,\"pingpong\":$pp}"
    echo "$req" > "$out/req.json"
    r=$("$cli" bench "$out/req.json" 2>&1 | tail -1)
    echo "{\"engine\":\"redjit\",\"bytes_per_rank\":$((1 << b)),\"pingpong\":$pp,\"result\":$r}" >> "$log"
  done
done
if python3 -c "import torch" 2>/dev/null; then
  python3 -m torch.distributed.run --standalone --nproc_per_node="$n" bench/treduce_nccl.py \
    --min-log2 12 --max-log2 30 --step 2 >> "$log" 2> "$out/treduce_nccl.err" || echo "NCCL run failed: $out/treduce_nccl.err"
else
  echo "no torch: NCCL side skipped" | tee -a "$out/treduce_nccl.err"
fi
python3 - "$log" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    try: j = json.loads(line)
    except Exception: continue
    key = j["bytes_per_rank"]
    if j["engine"] == "redjit" and j["result"].get("ok"):
        best = rows.setdefault(key, {}).get("redjit")
        ms = j["result"]["kernel_ms"]
        if best is None or ms < best: rows[key]["redjit"] = ms
    if j["engine"] == "nccl": rows.setdefault(key, {})["nccl"] = j["ms"]
print("%12s %12s %12s %8s" % ("bytes/rank", "redjit ms", "nccl ms", "speedup"))
for k in sorted(rows):
    r, c = rows[k].get("redjit"), rows[k].get("nccl")
    print("%12d %12s %12s %8s" % (k, "%.4f" % r if r else "-", "%.4f" % c if c else "-",
          "%.2fx" % (c / r) if r and c else "-"))
PY
