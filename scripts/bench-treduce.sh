#!/usr/bin/env bash
# treduce vs NCCL's reduce, one call on a multi-GPU machine (about 2-4 minutes on 2 x H200).
# For 4 KiB .. 1 GiB per rank (f32 sum, root 0, shape [rows, 1024] tile [64, 1024], or [1, n]),
# times redjit (`redjit bench`: ranks on GPUs r mod count, the whole operation on the root's
# stream by CUDA events, median of 25 runs, 7 from 256 MiB; also the host's time of a whole call)
# on the automatic path and on the split path forced with balanced and with equal slices, then
# NCCL's reduce and all-reduce through torch.distributed (bench/treduce_nccl.py, one process per
# GPU, the same sizes, warm-ups and run counts; NCCL_COLLECTIVES=reduce for the reduce alone), in
# the same run.  Then, unless EXTRA=0, redjit with two and
# three ranks per GPU (no NCCL equivalent: NCCL takes one rank per GPU): peer, split (balanced),
# split-equal and auto at 16 / 64 / 256 MiB per rank.
# Writes JSON lines to $OUT/treduce-bench.jsonl, the table to stdout and $OUT/treduce-bench.txt.
#   [CARRY=carry] [REDJIT_CLI=...] [NCCL_PY=...] [PY=python3] [MIN_LOG2=12] [MAX_LOG2=30] \
#     [PATHS="auto split split-equal ring"] [EXTRA=1] \
# (auto reads the path table REDJIT_TREDUCE_TABLE names, or the kernel cache folder's: docs/TREDUCE.md)
#     scripts/bench-treduce.sh [RANKS]
# The script may also be run from a carry folder (bash carry/bench-treduce.sh): it works from the
# folder above its own.  NCCL_PY defaults to $CARRY/treduce_nccl.py when that exists, else
# bench/treduce_nccl.py; PY to /opt/torch/.venv/bin/python when that exists, else python3.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${CARRY:-carry}
cli=${REDJIT_CLI:-$carry/redjit}
if [ -z "${NCCL_PY:-}" ]; then
  if [ -f "$carry/treduce_nccl.py" ]; then NCCL_PY=$carry/treduce_nccl.py; else NCCL_PY=bench/treduce_nccl.py; fi
fi
if [ -z "${PY:-}" ]; then
  if [ -x /opt/torch/.venv/bin/python ]; then PY=/opt/torch/.venv/bin/python; else PY=python3; fi
fi
# NCCL from torch's wheel; no NVLink SHARP / multicast (the machines' rule)
ncclw=$("$PY" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
[ -d "${ncclw:-}" ] || ncclw=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib
export LD_LIBRARY_PATH=$ncclw${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
out=${OUT:-/tmp/rjout}; mkdir -p "$out"
n=${1:-$(nvidia-smi -L | wc -l)}
log=$out/treduce-bench.jsonl; : > "$log"
nvidia-smi topo -m > "$out/topo.txt" 2>&1 || true
echo "redjit: $cli; NCCL side: $PY $NCCL_PY; $n ranks" | tee "$out/treduce-bench.txt"

# one `redjit bench` → one JSON line in the log: bench B RANKS PATH
bench() {
  local b=$1 ranks=$2 path=$3 elems=$(( (1 << $1) / 4 )) shape tile r
  if (( elems >= 1024 )); then shape="[$((elems / 1024)),1024]"; tile="[64,1024]"; else shape="[1,$elems]"; tile="[1,$elems]"; fi
  req="{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":$ranks,\"root\":0,\"shape\":$shape,\"tile\":$tile,\"pingpong\":true}"
  r=$(timeout 90 "$cli" bench "$req" --path "$path" 2>&1 | tail -1)
  [[ $r == \{* ]] || r="{\"ok\": false, \"error\": \"$(echo "$r" | tr -d '"\\' | head -c 200)\"}"
  echo "{\"engine\":\"redjit\",\"bytes_per_rank\":$((1 << b)),\"ranks\":$ranks,\"asked\":\"$path\",\"result\":$r}" >> "$log"
}

t0=$SECONDS
max=${MAX_LOG2:-30} # 1 GiB per rank (MAX_LOG2 lowers it, for a quick try)
min=${MIN_LOG2:-12} # 4 KiB per rank (MIN_LOG2 raises it)
for ((b = min; b <= max; b += 2)); do # 4 KiB .. 1 GiB per rank
  for p in ${PATHS:-auto split split-equal ring}; do bench $b "$n" $p; done
done
echo "redjit: $((SECONDS - t0)) s" | tee -a "$out/treduce-bench.txt"
t0=$SECONDS
if "$PY" -c "import torch" 2>/dev/null; then
  timeout 240 "$PY" -m torch.distributed.run --standalone --nproc_per_node="$n" "$NCCL_PY" \
    --min-log2 "$min" --max-log2 "$max" --step 2 --collectives "${NCCL_COLLECTIVES:-reduce,allreduce}" >> "$log" 2> "$out/treduce_nccl.err" ||
    echo "NCCL run failed: see $out/treduce_nccl.err (tail below)" | tee -a "$out/treduce-bench.txt"
  tail -5 "$out/treduce_nccl.err" >&2
else
  echo "no torch for $PY: NCCL side skipped" | tee -a "$out/treduce_nccl.err"
fi
echo "nccl: $((SECONDS - t0)) s" | tee -a "$out/treduce-bench.txt"
if [ "${EXTRA:-1}" != 0 ]; then # several ranks per GPU: peer, split (balanced), split-equal
  for k in 2 3; do
    for b in 24 26 28; do
      ((b <= max)) || continue
      for p in peer split split-equal ring auto; do bench $b $((k * n)) $p; done
    done
  done
fi

"$PY" - "$log" "$n" <<'PY' | tee -a "$out/treduce-bench.txt"
import json, sys
n = int(sys.argv[2])
rows, fails = {}, []  # (ranks, bytes) -> {column: (us, path, slices, root_share, call_us)}
for line in open(sys.argv[1]):
    try: j = json.loads(line)
    except Exception: continue
    b = j["bytes_per_rank"]
    if j["engine"] == "nccl":
        col_name = "nccl-ar" if j.get("collective") == "allreduce" else "nccl"
        rows.setdefault((j["ranks"], b), {})[col_name] = (j["ms"] * 1e3, "nccl", 0, 0, None)
        continue
    r = j["result"]
    if not r.get("ok"):
        fails.append("%d B/rank, %d ranks, %s: %s" % (b, j["ranks"], j["asked"], r.get("error")))
        continue
    rows.setdefault((j["ranks"], b), {})[j["asked"]] = (
        r["kernel_ms"] * 1e3, r.get("path", "?"), r.get("slices", 0), r.get("root_share", 0),
        r["call_ms"] * 1e3 if "call_ms" in r else None)

def us(v): return "%.1f" % v if v is not None else "-"
def sp(a, b): return "%.2fx" % (a / b) if a and b else "-"
def col(r, k, i=0): return r[k][i] if k in r else None
print("\ntreduce, f32 sum, %d ranks on %d GPUs, root 0: GPU time of one call (us, median by events);"
      " call = the host's time of the whole call" % (n, n))
print("%12s %9s %6s %9s %9s %9s %11s %9s %9s %9s %9s %9s %9s %9s %11s %9s %9s" % ("bytes/rank",
      "auto us", "path", "call us", "peer us", "split us", "split-eq us", "ring us", "nccl us",
      "nccl-ar us", "auto/nccl", "split/ncl", "ring/ncl", "split/eq", "fastest", "best/auto",
      "auto/ar"))
for (k, b) in sorted(rows):
    if k != n: continue
    r = rows[(k, b)]
    a, p, s, e, g, c, ar = (col(r, "auto"), col(r, "peer"), col(r, "split"), col(r, "split-equal"),
                            col(r, "ring"), col(r, "nccl"), col(r, "nccl-ar"))
    # the fastest path measured here (peer, split, split-equal, ring): what auto should take
    best = min(((v, k2) for k2, v in (("peer", p), ("split", s), ("split-equal", e),
               ("ring", g)) if v), default=(None, "-"))
    print("%12d %9s %6s %9s %9s %9s %11s %9s %9s %9s %9s %9s %9s %9s %11s %9s %9s" % (b, us(a),
          col(r, "auto", 1) or "-", us(col(r, "auto", 4)), us(p), us(s), us(e), us(g), us(c),
          us(ar), sp(c, a), sp(c, s), sp(c, g), sp(e, s), best[1], sp(best[0], a), sp(ar, a)))
print("(x = the second time over the first: > 1 means the first named is faster; best/auto < 1:"
      " auto missed the fastest path; auto/ar: NCCL's all-reduce over auto)")
for per in (2, 3):
    keys = sorted(b for (k, b) in rows if k == per * n)
    if not keys: continue
    print("\n%d ranks on %d GPUs (%d per GPU; no NCCL equivalent), root 0" % (per * n, n, per))
    print("%12s %9s %9s %11s %9s %9s %6s %10s %9s %9s %9s" % ("bytes/rank", "peer us", "split us",
          "split-eq us", "ring us", "auto us", "path", "root share", "peer/split", "eq/split",
          "ring/split"))
    for b in keys:
        r = rows[(per * n, b)]
        p, s, e, g, a = (col(r, "peer"), col(r, "split"), col(r, "split-equal"), col(r, "ring"),
                         col(r, "auto"))
        print("%12d %9s %9s %11s %9s %9s %6s %10s %9s %9s %9s" % (b, us(p), us(s), us(e), us(g),
              us(a), col(r, "auto", 1) or "-", "%.3f" % col(r, "split", 3) if s else "-", sp(p, s),
              sp(e, s), sp(s, g)))
for f in fails: print("FAILED:", f)
PY
