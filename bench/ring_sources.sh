#!/usr/bin/env bash
# The ring's hop kernel with many sources (passes/treduce_ring.c): `redjit bench --path ring` on
# one GPU, 3 x S ranks, so the ring's 3 hops fold S sources each, for S from 4 to 127, through
# several builds of redjit (a build of the same source with -DRING_UNROLL / -DRING_BATCH changed),
# beside the peer path (one kernel reading every rank) of the first build.  f32 sum (16-byte
# accesses) and bf16 max, 16 MiB per rank.  Median GPU time of 25 runs (`kernel_ms`) and the
# bandwidth it means: every rank's bytes read once.
#   bench/ring_sources.sh NAME=DIR [NAME=DIR ...]   (DIR: a folder with redjit and its libraries)
# JSON lines to $OUT/ring-sources.jsonl, the table to stdout.
set -uo pipefail
out=${OUT:-/tmp/rjout}
mkdir -p "$out"
log=$out/ring-sources.jsonl
: > "$log"
S_LIST=${S_LIST:-"4 8 12 16 17 24 32 48 64 96 127"}
first=${1#*=}
for spec in "$@"; do
  name=${spec%%=*} dir=${spec#*=}
  for dt in f32 bf16; do
    op=sum; [ $dt = bf16 ] && op=max
    for s in $S_LIST; do
      ranks=$((3 * s)) rows=4096
      [ $dt = bf16 ] && rows=8192
      req="{\"kind\":\"treduce\",\"op\":\"$op\",\"dtype\":\"$dt\",\"ranks\":$ranks,\"root\":0,\"shape\":[$rows,1024]}"
      for p in ring peer; do
        [ $p = peer ] && [ "$dir" != "$first" ] && continue
        r=$(timeout 120 "$dir/redjit" bench "$req" --path $p 2>&1 | tail -1)
        [[ $r == \{* ]] || r="{\"ok\": false, \"error\": \"$(echo "$r" | tr -d '"\\' | head -c 200)\"}"
        echo "{\"build\":\"$name\",\"path\":\"$p\",\"dtype\":\"$dt\",\"sources\":$s,\"ranks\":$ranks,\"result\":$r}" >> "$log"
      done
    done
  done
done
python3 - "$log" <<'PY'
import json, sys
rows, builds, fails = {}, [], []
for line in open(sys.argv[1]):
    j = json.loads(line)
    col = j["build"] if j["path"] == "ring" else "peer"
    if col not in builds: builds.append(col)
    r = j["result"]
    if not r.get("ok"):
        fails.append("%s %s %d sources: %s" % (col, j["dtype"], j["sources"], r.get("error")))
        continue
    rows.setdefault((j["dtype"], j["sources"]), {})[col] = r["kernel_ms"]
for dt in ("f32", "bf16"):
    print("\n%s, 3 hops on one GPU, 16 MiB per rank: ms (GB/s of sources read)" % dt)
    print("%8s" % "sources" + "".join("%20s" % b for b in builds))
    for (d, s) in sorted(k for k in rows if k[0] == dt):
        r = rows[(d, s)]
        cells = ["%9.3f (%6.0f)" % (r[b], 3 * s * 16 * 2**20 / r[b] / 1e6) if b in r else "-"
                 for b in builds]
        print("%8d" % s + "".join("%20s" % c for c in cells))
for f in fails: print("FAILED:", f)
PY
