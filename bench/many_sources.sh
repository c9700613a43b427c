#!/usr/bin/env bash
# Kernels that fold many sources (passes/srcfold.c), on one GPU, through several builds of redjit
# (builds of the same source with -D changed, or of two commits), f32 sum (16-byte accesses in the
# ring) and bf16 max, 16 MiB per rank, median GPU time of 25 runs (`kernel_ms`) and the bandwidth
# it means (every rank's bytes read once).
#  - MODE=ring (default): `redjit bench --path ring` with 3 x S ranks, so the ring's 3 hops fold
#    S sources each, beside the peer path of the first build (column "peer").
#  - MODE=peer: `redjit bench --path peer` with S ranks (one kernel reading every rank), ping-pong
#    on and off (PINGPONG="true false"), for every build (columns "NAME pp=...").
#   [MODE=ring|peer] [S_LIST="4 8 ..."] bench/many_sources.sh NAME=DIR [NAME=DIR ...]
#   (DIR: a folder with redjit and its libraries)
# JSON lines to $OUT/ring-sources.jsonl (MODE=peer: peer-ranks.jsonl), the table to stdout.
set -uo pipefail
out=${OUT:-/tmp/rjout}
mode=${MODE:-ring}
mkdir -p "$out"
log=$out/ring-sources.jsonl
[ "$mode" = peer ] && log=$out/peer-ranks.jsonl
: > "$log"
S_LIST=${S_LIST:-"4 8 12 16 17 24 32 48 64 96 127"}
first=${1#*=}
for spec in "$@"; do
  name=${spec%%=*} dir=${spec#*=}
  for dt in f32 bf16; do
    op=sum; [ $dt = bf16 ] && op=max
    for s in $S_LIST; do
      ranks=$((3 * s)) rows=4096 runs="ring:$name peer:peer" pps=false
      [ $dt = bf16 ] && rows=8192
      [ "$dir" != "$first" ] && runs="ring:$name"
      [ "$mode" = peer ] && ranks=$s runs="peer:$name" pps=${PINGPONG:-"true false"}
      for pp in $pps; do
        for run in $runs; do
          p=${run%%:*} col=${run#*:}
          [ "$mode" = peer ] && col="$col pp=$pp"
          req="{\"kind\":\"treduce\",\"op\":\"$op\",\"dtype\":\"$dt\",\"ranks\":$ranks,\"root\":0,\"shape\":[$rows,1024],\"pingpong\":$pp}"
          r=$(timeout 120 "$dir/redjit" bench "$req" --path $p 2>&1 | tail -1)
          [[ $r == \{* ]] || r="{\"ok\": false, \"error\": \"$(echo "$r" | tr -d '"\\' | head -c 200)\"}"
          echo "{\"build\":\"$col\",\"path\":\"$p\",\"dtype\":\"$dt\",\"sources\":$s,\"ranks\":$ranks,\"result\":$r}" >> "$log"
        done
      done
    done
  done
done
python3 - "$log" "$mode" <<'PY'
import json, sys
rows, builds, fails, nranks = {}, [], [], {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    col = j["build"]
    if col not in builds: builds.append(col)
    r = j["result"]
    if not r.get("ok"):
        fails.append("%s %s %d sources: %s" % (col, j["dtype"], j["sources"], r.get("error")))
        continue
    rows.setdefault((j["dtype"], j["sources"]), {})[col] = r["kernel_ms"]
    nranks[(j["dtype"], j["sources"])] = j["ranks"]
peer = sys.argv[2] == "peer"
for dt in ("f32", "bf16"):
    print("\n%s, %s, 16 MiB per rank: ms (GB/s of sources read)" % (dt,
          "the peer kernel on one GPU" if peer else "3 hops on one GPU"))
    print("%8s" % ("ranks" if peer else "sources") + "".join("%20s" % b for b in builds))
    for (d, s) in sorted(k for k in rows if k[0] == dt):
        r = rows[(d, s)]
        cells = ["%9.3f (%6.0f)" % (r[b], nranks[(d, s)] * 16 * 2**20 / r[b] / 1e6) if b in r
                 else "-" for b in builds]
        print("%8d" % s + "".join("%20s" % c for c in cells))
for f in fails: print("FAILED:", f)
PY
