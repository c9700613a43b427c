#!/usr/bin/env python3
"""Generates tests/corpus/requests.jsonl: a fixed corpus of redjit requests for scripts/ptx-corpus.sh.

The corpus is the evidence for refactorings that promise "behaviour unchanged": run
scripts/ptx-corpus.sh on a build before the change and on a build after it, then compare the two
output directories (`scripts/ptx-corpus.sh --compare A B`).  Every PTX file, every `explain`
listing and every refusal (exit status and message) must be byte-identical.

One line per request:
    {"name": "...", "target": "sm_90", "flags": [...], "request": {...}}
- name: unique, file-safe ([A-Za-z0-9._-]), ending in the target (and flags); the output files
  are named after it.
- target: passed as `--target` (default sm_90; never `auto`, which would depend on the GPU).
- flags (optional): further CLI options for both `redjit ptx` and `redjit explain`
  (`--emulate-packed`, `--ptx-version N`; docs/CLI.md).
- request: the request JSON (shared/CONTRACT.md, docs/TENSOR.md, docs/TREDUCE.md, ...).

It covers every registered variant (`redjit variants`; forced through the request's "variant"
field where the docs allow it), kind, op, dtype, nan policy, scope, layouts, odd sizes and tails,
dynamic tensors, every target of the target table, and requests that are refused (invalid, no
variant accepts, unknown target, PTX version too old).  Every request compiles in well under a
second (`redjit ptx` timed on each: the slowest took 0.2 s on a 2-core machine; keep it so when
adding requests), and the whole corpus runs in about a minute there.

Deterministic: no randomness, no clock, no environment.  Python 3 standard library only.
Usage: python3 tests/corpus/gen.py [OUT]   (default: requests.jsonl next to this script)
"""

import json
import os
import re
import sys
import zlib

OPS = ["sum", "max", "min"]
DTYPES = ["f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]

# Every target of the table (the unknown-target message lists them; docs/TARGETS.md).
TARGETS = ["sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_90a",
           "sm_100", "sm_100a", "sm_100f", "sm_103", "sm_103a", "sm_103f",
           "sm_110", "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f",
           "sm_121", "sm_121a", "sm_121f"]

# A request that names no target gets one picked by a hash of its JSON (stable when other requests
# are added or removed): mostly sm_90, the default of `--target auto` without a GPU, and a spread
# over the others.  Sections that need a particular target name it.
SPREAD = ["sm_90", "sm_90", "sm_90", "sm_80", "sm_90a", "sm_100a", "sm_86", "sm_120"]

entries = []
names = set()
seen = set()
NAME_OK = re.compile(r"^[A-Za-z0-9._-]+$")


def add(name, request, target=None, flags=None):
    """Appends one corpus line; an exact repeat (same request, target, flags) is skipped."""
    if target is None:
        target = SPREAD[zlib.crc32(json.dumps(request, sort_keys=True).encode()) % len(SPREAD)]
    key = (json.dumps(request, sort_keys=True), target, tuple(flags or ()))
    if key in seen:
        return
    seen.add(key)
    name = name + "-" + target
    if flags:
        name += "-" + "-".join(f.lstrip("-") for f in flags)
    if not NAME_OK.match(name):
        raise SystemExit("gen.py: name not file-safe: " + name)
    if name in names:
        raise SystemExit("gen.py: duplicate name: " + name)
    names.add(name)
    e = {"name": name, "target": target}
    if flags:
        e["flags"] = list(flags)
    e["request"] = request
    entries.append(e)


def tag(op=None, dtype=None, accum=False, nan=None):
    parts = [p for p in (op, dtype) if p]
    if accum:
        parts.append("acc")
    if nan:
        parts.append("nan" + nan[:3])
    return "-".join(parts)


def tile(op, dtype, body, accum=None, nan=None, variant=None):
    r = {"kind": "tile", "op": op, "dtype": dtype}
    r.update(body)
    if accum is not None:
        r["accum"] = accum
    if nan is not None:
        r["nan"] = nan
    if variant is not None:
        r["variant"] = variant
    return r


def buf(mem, shape, layout=None, start=None, extent=None):
    b = {"mem": mem, "shape": shape}
    if start is not None:
        b["start"] = start
    if extent is not None:
        b["extent"] = extent
    if layout is not None:
        b["layout"] = layout
    return b


# Layouts (shared/CONTRACT.md)
LANE32 = {"shape": [32], "stride": ["1@lane"]}
ALL32 = {"shape": [1], "stride": [1], "replicate": [[32, "1@lane"]]}


def mma_src(J):
    return buf("local", [16, 8 * J],
               {"shape": [[2, 8], [J, 4, 2]], "stride": [[2, "4@lane"], [4, "1@lane", 1]]})


MMA_DST = buf("local", [16], {"shape": [[2, 8]], "stride": [[1, "4@lane"]],
                              "replicate": [[4, "1@lane"]]})
WARP_ALL = {"scope": "warp", "src": buf("local", [32], LANE32), "dst": buf("local", [1], ALL32)}


def packed(length):
    return {"scope": "thread", "src": buf("local", [length]), "dst": buf("local", [1])}


# ------------------------------------------------------------------ tile: shared
SHARED_SHAPES = [
    ("32x32-ax-1", [32, 32], {"shape": [32]}, [-1], 32),
    ("32x32-ax0", [32, 32], {"shape": [32]}, [0], 32),
    ("8x16x2x22", [8, 16, 2, 22], {"shape": [8, 16]}, [-2, -1], 128),
    ("4x8x6-ax1", [4, 8, 6], {"shape": [4, 6]}, [1], 32),
    ("32x7", [32, 7], {"shape": [32]}, [-1], 32),
    ("32x32-region", None, None, [-1], 32),
]
for si, (label, src, dst, axes, threads) in enumerate(SHARED_SHAPES):
    if src is None:
        s = buf("shared", [32, 32], start=[1, 1], extent=[5, 8])
        d = buf("shared", [32], start=[2], extent=[5])
    else:
        s, d = buf("shared", src), dict(mem="shared", **dst)
    full = si == 0  # every op x dtype on one shape; on the rest half the dtypes, one op each
    for di, dt in enumerate(DTYPES):
        if not full and (si + di) % 2:
            continue
        for oi, op in enumerate(OPS):
            if not full and oi != (si + di // 2) % 3:
                continue
            acc = (di + oi) % 2 == 1
            body = {"scope": "cta", "threads": threads, "src": s, "dst": d, "axes": axes}
            add("tile-shared-%s-%s" % (label, tag(op, dt, acc)), tile(op, dt, body, accum=acc))

# sub-scopes of a 256-thread CTA
SUBSCOPES = [("warp5", {"scope": "warp", "active": {"warp": 5}}),
             ("wg0", {"scope": "warpgroup", "active": {"warpgroup": 0}}),
             ("wg1", {"scope": "warpgroup", "active": {"warpgroup": 1}}),
             ("thread65", {"scope": "thread", "active": {"thread": 65}})]
for ci, (label, sc) in enumerate(SUBSCOPES):
    for oi, op in enumerate(OPS):
        dt = DTYPES[(ci * 3 + oi) % 8]
        acc = (ci + oi) % 2 == 0
        body = dict(sc, threads=256, src=buf("shared", [4, 8]), dst=buf("shared", [4]))
        add("tile-shared-sub-%s-%s" % (label, tag(op, dt, acc)), tile(op, dt, body, accum=acc))

# long rows, warps cooperating, partial warps, odd lengths
LONG = [
    ("cta256-1x4096", {"scope": "cta", "threads": 256}, [1, 4096], [1], None),
    ("cta1024-3x1000", {"scope": "cta", "threads": 1024}, [3, 1000], [3], None),
    ("cta512-5x777", {"scope": "cta", "threads": 512}, [5, 777], [5, 1], None),
    ("cta96-2x2000", {"scope": "cta", "threads": 96}, [2, 2000], [2], None),
    ("cta96-1x2000", {"scope": "cta", "threads": 96}, [1, 2000], [1], None),
    ("cta320-1x3000", {"scope": "cta", "threads": 320}, [1, 3000], [1], None),
    ("wg1-2x1024", {"scope": "warpgroup", "threads": 256, "active": {"warpgroup": 1}},
     [2, 1024], [2], None),
    ("cta48-7x16", {"scope": "cta", "threads": 48}, [7, 16], [7], None),
    ("cta8-3x100", {"scope": "cta", "threads": 8}, [3, 100], [3], None),
    ("cta1-3x5", {"scope": "cta", "threads": 1}, [3, 5], [3], None),
    ("warp-100x3", {"scope": "warp"}, [100, 3], [100], None),
    ("cta64-6x5x4x3-ax02", {"scope": "cta", "threads": 64}, [6, 5, 4, 3], [5, 3], [0, 2]),
    ("cta256-2x3000", {"scope": "cta", "threads": 256}, [2, 3000], [2], None),
    ("cta128-1x1", {"scope": "cta", "threads": 128}, [1, 1], [1], None),
    ("cta32-1x33", {"scope": "cta", "threads": 32}, [1, 33], [1], None),
    ("cta64-9x65", {"scope": "cta", "threads": 64}, [9, 65], [9], None),
]
for ci, (label, sc, src, dst, axes) in enumerate(LONG):
    for oi, op in enumerate(OPS):
        if oi == ci % 3 or (ci >= 6 and oi != (ci + 1) % 3):
            continue
        dt = DTYPES[(ci + 3 * oi) % 8]
        acc = (ci + oi) % 2 == 1
        body = dict(sc, src=buf("shared", src), dst=buf("shared", dst))
        if axes is not None:
            body["axes"] = axes
        add("tile-shared-long-%s-%s" % (label, tag(op, dt, acc)), tile(op, dt, body, accum=acc))

# ------------------------------------------------------------------ tile: nan policies
NAN_BODIES = [
    ("shared-16x40", {"scope": "cta", "threads": 64, "src": buf("shared", [16, 40]),
                      "dst": buf("shared", [16])}),
    ("shared-2x3000", {"scope": "cta", "threads": 256, "src": buf("shared", [2, 3000]),
                       "dst": buf("shared", [2])}),
    ("warp-32x4", {"scope": "warp",
                   "src": buf("local", [32, 4], {"shape": [32, 4], "stride": ["1@lane", 1]}),
                   "dst": buf("local", [4], {"shape": [4], "stride": [1],
                                             "replicate": [[32, "1@lane"]]}),
                   "axes": [0]}),
    ("thread-6x10", {"scope": "thread", "src": buf("local", [6, 10]), "dst": buf("local", [6])}),
]
for bi, (label, body) in enumerate(NAN_BODIES):
    for oi, op in enumerate(OPS):
        for ni, nan in enumerate(["propagate", "ignore"]):
            dt = FLOATS[(bi + oi + ni) % 4]
            acc = (bi + ni) % 2 == 1
            add("tile-nan-%s-%s" % (label, tag(op, dt, acc, nan)),
                tile(op, dt, body, accum=acc, nan=nan))
# nan on an integer dtype: accepted, no effect
add("tile-nan-int-i64-thread65", tile("sum", "i64", {
    "scope": "thread", "threads": 128, "active": {"thread": 65},
    "src": buf("shared", [4, 8]), "dst": buf("shared", [4])}, nan="ignore"))
add("tile-nan-int-u32-warp", tile("max", "u32", WARP_ALL, nan="ignore"))

# ------------------------------------------------------------------ tile: local, thread-wise
THREAD_SHAPES = [([1], [1], [0]), ([4], [1], [0]), ([7], [1], [0]), ([16], [1], [0]),
                 ([32], [1], [0]), ([4, 8], [8], [0]), ([4, 8], [4], [1]),
                 ([3, 4, 5], [4], [0, 2]), ([2, 3, 4], [2, 3], [-1]), ([2, 3, 4], [3, 4], [0])]
for ci, (src, dst, axes) in enumerate(THREAD_SHAPES):
    label = "x".join(map(str, src)) + "-ax" + "".join(str(a) for a in axes)
    for oi, op in enumerate(OPS):
        if oi == (ci + 1) % 3:
            continue
        dt = DTYPES[(ci + oi * 3) % 8]
        acc = (ci + oi) % 2 == 0
        body = {"scope": "thread", "src": buf("local", src), "dst": buf("local", dst),
                "axes": axes}
        add("tile-local-thread-%s-%s" % (label, tag(op, dt, acc)), tile(op, dt, body, accum=acc))

# one row of registers per lane, regions, reduced dims kept
VIEW = [
    ("row64", buf("local", [32, 64], {"shape": [32, 64], "stride": ["1@lane", 1]}),
     buf("local", [32, 1], {"shape": [32, 1], "stride": ["1@lane", 1]}), [-1]),
    ("row64-slice", buf("local", [32, 64], {"shape": [32, 64], "stride": ["1@lane", 1]},
                        start=[0, 16], extent=[32, 16]),
     buf("local", [32, 1], {"shape": [32, 1], "stride": ["1@lane", 1]}), [-1]),
    ("4x8-ax12", buf("local", [32, 4, 8], {"shape": [32, 4, 8], "stride": ["1@lane", 8, 1]}),
     buf("local", [32, 1, 1], {"shape": [32, 1, 1], "stride": ["1@lane", 1, 1]}), [1, 2]),
    ("4x8-ax-1", buf("local", [32, 4, 8], {"shape": [32, 4, 8], "stride": ["1@lane", 8, 1]}),
     buf("local", [32, 4, 1], {"shape": [32, 4, 1], "stride": ["1@lane", 1, 1]}), [-1]),
    ("4x8-ax1", buf("local", [32, 4, 8], {"shape": [32, 4, 8], "stride": ["1@lane", 8, 1]}),
     buf("local", [32, 1, 8], {"shape": [32, 1, 8], "stride": ["1@lane", 8, 1]}), [1]),
    ("dst-region", buf("local", [32, 8], {"shape": [32, 8], "stride": ["1@lane", 1]},
                       start=[4, 0], extent=[8, 8]),
     buf("local", [32], {"shape": [32], "stride": ["1@lane"]}, start=[4], extent=[8]), [-1]),
]
for ci, (label, s, d, axes) in enumerate(VIEW):
    for oi, op in enumerate(OPS):
        if oi == (ci + 2) % 3:
            continue
        dt = DTYPES[(2 * ci + oi) % 8]
        acc = (ci + oi) % 2 == 1
        body = {"scope": "warp", "src": s, "dst": d, "axes": axes}
        add("tile-local-view-%s-%s" % (label, tag(op, dt, acc)), tile(op, dt, body, accum=acc))

# mma / wgmma accumulator fragments on 1, 4 and 8 warps
for wi, warps in enumerate([1, 4, 8]):
    for ji, J in enumerate([1, 2, 4, 16]):
        op = OPS[(wi + ji) % 3]
        dt = ["f32", "f16"][(wi + ji) % 2]
        acc = ji % 2 == 0
        body = {"scope": "warp", "threads": 32 * warps, "src": mma_src(J), "dst": MMA_DST}
        add("tile-local-mma-w%d-J%d-%s" % (warps, J, tag(op, dt, acc)),
            tile(op, dt, body, accum=acc))
for di, dt in enumerate(DTYPES):
    op = OPS[di % 3]
    body = {"scope": "warp", "src": mma_src(2), "dst": MMA_DST}
    add("tile-local-mma-J2-%s" % tag(op, dt, di % 2 == 1), tile(op, dt, body, accum=di % 2 == 1))

# warp / warpgroup shuffles
SHUF = [
    ("all32", WARP_ALL),
    ("32x4-ax0", {"scope": "warp",
                  "src": buf("local", [32, 4], {"shape": [32, 4], "stride": ["1@lane", 1]}),
                  "dst": buf("local", [4], {"shape": [4], "stride": [1],
                                            "replicate": [[32, "1@lane"]]}), "axes": [0]}),
    ("32x2x2-gapped", {"scope": "warp",
                       "src": buf("local", [32, 2, 2], {"shape": [32, 2, 2],
                                                        "stride": ["1@lane", 2, 4]}),
                       "dst": buf("local", [2, 2], {"shape": [2, 2], "stride": [2, 4],
                                                    "replicate": [[32, "1@lane"]]}),
                       "axes": [0]}),
    ("wg-128x16", {"scope": "warpgroup",
                   "src": buf("local", [128, 16], {"shape": [128, 16],
                                                   "stride": ["1@thread", 1]}),
                   "dst": buf("local", [128, 1], {"shape": [128, 1],
                                                  "stride": ["1@thread", 1]})}),
    ("lane0-only", {"scope": "warp", "src": buf("local", [32], LANE32),
                    "dst": buf("local", [1], {"shape": [1], "stride": [1]})}),
    ("groups8", {"scope": "warp",
                 "src": buf("local", [4, 8, 3], {"shape": [4, 8, 3],
                                                 "stride": ["8@lane", "1@lane", 1]}),
                 "dst": buf("local", [4], {"shape": [4], "stride": ["8@lane"],
                                           "replicate": [[8, "1@lane"]]}), "axes": [1, 2]}),
    ("wg1-per-warp", {"scope": "warpgroup", "threads": 256, "active": {"warpgroup": 1},
                      "src": buf("local", [4, 32], {"shape": [4, 32],
                                                    "stride": ["32@thread", "1@lane"]}),
                      "dst": buf("local", [4], {"shape": [4], "stride": ["32@thread"],
                                                "replicate": [[32, "1@lane"]]})}),
    ("split-lanes", {"scope": "warp",
                     "src": buf("local", [32], {"shape": [[4, 8]], "stride": [["8@lane", "1@lane"]]}),
                     "dst": buf("local", [1], {"shape": [1], "stride": [1],
                                               "replicate": [[32, "1@lane"]]})}),
]
for ci, (label, body) in enumerate(SHUF):
    for oi, op in enumerate(OPS):
        dt = DTYPES[(ci + 5 * oi) % 8]
        acc = (ci + oi) % 2 == 1
        add("tile-local-shfl-%s-%s" % (label, tag(op, dt, acc)), tile(op, dt, body, accum=acc))

# ------------------------------------------------------------------ tile: redux
for tg in ["sm_80", "sm_90", "sm_100a"]:
    for di, dt in enumerate(["i32", "u32"]):
        for oi, op in enumerate(OPS):
            if tg == "sm_100a" and (oi + di) % 2:
                continue
            add("tile-redux-%s" % tag(op, dt, oi == 1), tile(op, dt, WARP_ALL, accum=oi == 1), tg)
for ti, tg in enumerate(["sm_100a", "sm_103f", "sm_100f", "sm_103a"]):
    for oi, op in enumerate(["max", "min"]):
        for ni, nan in enumerate(["propagate", "ignore"]):
            if ti >= 2 and (oi + ni) % 2 != ti % 2:
                continue
            add("tile-redux-f32-%s" % tag(op, nan=nan), tile(op, "f32", WARP_ALL, nan=nan), tg)
# declines: f32 sum, 64-bit, f32 min/max without redux.sync.f32, lanes not spanning the warp
add("tile-redux-decl-f32sum", tile("sum", "f32", WARP_ALL), "sm_100a")
add("tile-redux-decl-i64max", tile("max", "i64", WARP_ALL), "sm_100a")
for tg in ["sm_90", "sm_110a"]:
    add("tile-redux-decl-f32max", tile("max", "f32", WARP_ALL), tg)
add("tile-redux-decl-mma-i32", tile("max", "i32", {"scope": "warp", "src": mma_src(2),
                                                    "dst": MMA_DST}))
add("tile-redux-wg-i32", tile("sum", "i32", SHUF[6][1]))
# forcing
add("tile-force-local-u32max", tile("max", "u32", WARP_ALL, variant="local"))
add("tile-force-redux-i32sum", tile("sum", "i32", WARP_ALL, variant="redux"))
add("tile-force-redux-f32max", tile("max", "f32", WARP_ALL, variant="redux"), "sm_100a")

# ------------------------------------------------------------------ tile: sm100_packed
for li, L in enumerate([8, 9, 15, 16, 17, 32, 63, 64, 100]):
    for oi, op in enumerate(OPS):
        if oi == li % 3:
            continue
        acc = (li + oi) % 2 == 1
        nan = ["propagate", "ignore"][(li // 2 + oi) % 2]
        add("tile-packed-L%d-%s" % (L, tag(op, None, acc, nan)),
            tile(op, "f32", packed(L), accum=acc, nan=nan), "sm_100a")
for op in OPS:  # every accum x nan at one length
    for acc in [False, True]:
        for nan in ["propagate", "ignore"]:
            add("tile-packed-L24-%s" % tag(op, None, acc, nan),
                tile(op, "f32", packed(24), accum=acc, nan=nan), "sm_100a")
for ti, tg in enumerate(["sm_100", "sm_100f", "sm_103", "sm_110", "sm_120", "sm_121a"]):
    for op in [OPS[ti % 3]]:
        add("tile-packed-L32-%s" % op, tile(op, "f32", packed(32)), tg)
for tg in ["sm_90", "sm_80"]:
    for oi, op in enumerate(OPS):
        for L in [[8, 17, 100][(oi + len(tg)) % 3]]:
            add("tile-packed-emu-L%d-%s" % (L, op), tile(op, "f32", packed(L)), tg,
                ["--emulate-packed"])
    add("tile-packed-noemu-L32-sum", tile("sum", "f32", packed(32)), tg)
add("tile-packed-emu-L32-sum", tile("sum", "f32", packed(32)), "sm_100a", ["--emulate-packed"])
add("tile-packed-decl-L7", tile("sum", "f32", packed(7)), "sm_100a")
add("tile-packed-decl-f64", tile("sum", "f64", packed(32)), "sm_100a")
add("tile-packed-decl-2d", tile("max", "f32", {"scope": "thread", "src": buf("local", [4, 8]),
                                               "dst": buf("local", [4])}), "sm_100a")
add("tile-packed-decl-shared", tile("min", "f32", {"scope": "thread",
                                                   "src": buf("shared", [32]),
                                                   "dst": buf("shared", [1])}), "sm_100a")
add("tile-force-packed-L64-max", tile("max", "f32", packed(64), variant="sm100_packed"), "sm_100a")
add("tile-force-local-L64-max", tile("max", "f32", packed(64), variant="local"), "sm_100a")
# explicit PTX versions
add("tile-ptxver88-packed-L32-sum", tile("sum", "f32", packed(32)), "sm_100a",
    ["--ptx-version", "88"])
add("tile-ptxver86-packed-L32-sum", tile("sum", "f32", packed(32)), "sm_100a",
    ["--ptx-version", "86"])
add("tile-ptxver88-packed-L16-max", tile("max", "f32", packed(16)), "sm_100a",
    ["--ptx-version", "88"])
add("tile-ptxver80-seed000", tile("sum", "f32", {
    "scope": "cta", "threads": 32, "src": buf("shared", [4, 8]), "dst": buf("shared", [4]),
    "axes": [-1]}), "sm_90", ["--ptx-version", "80"])

# ------------------------------------------------------------------ tile: shared forced / misc
SEED000 = tile("sum", "f32", {"scope": "cta", "threads": 32, "src": buf("shared", [4, 8]),
                              "dst": buf("shared", [4]), "axes": [-1]})
SEED001 = tile("sum", "f32", packed(4))
SEED002 = tile("sum", "f32", packed(32))
add("tile-seed000", SEED000)
add("tile-seed001", SEED001)
add("tile-seed002", SEED002)
add("tile-force-shared-seed000", dict(SEED000, variant="shared"))
add("tile-force-auto-seed000", dict(SEED000, variant="auto"))
add("tile-shared-warpscope-32", tile("sum", "f32", {"scope": "warp", "src": buf("shared", [32]),
                                                    "dst": buf("shared", [1])}))
add("tile-shared-wg-default", tile("max", "bf16", {"scope": "warpgroup",
                                                   "src": buf("shared", [8, 128]),
                                                   "dst": buf("shared", [8])}))
add("tile-shared-thread-default", tile("min", "i32", {"scope": "thread",
                                                      "src": buf("shared", [5, 3]),
                                                      "dst": buf("shared", [5])}))
add("tile-shared-keepdims", tile("sum", "f64", {"scope": "cta", "threads": 64,
                                                "src": buf("shared", [6, 10, 4]),
                                                "dst": buf("shared", [6, 1, 4]), "axes": [1]}))
add("tile-shared-allaxes", tile("max", "u64", {"scope": "cta", "threads": 128,
                                               "src": buf("shared", [3, 7, 11]),
                                               "dst": buf("shared", [1]), "axes": [0, 1, 2]}))

# ------------------------------------------------------------------ subgroup
PRIMS = ["shuffle", "broadcast", "shuffle_down", "shuffle_up", "shuffle_xor", "reduce_add",
         "reduce_min", "reduce_max", "reduce_all_add", "reduce_all_min", "reduce_all_max",
         "invocation_id"]


def sg(prim, dt, **kw):
    r = {"kind": "subgroup", "primitive": prim, "dtype": dt}
    r.update(kw)
    return r


for pi, prim in enumerate(PRIMS):
    for di, dt in enumerate(DTYPES):
        if prim == "invocation_id" and dt in FLOATS:
            continue
        # the five shuffles move values alike: half the dtypes each (all of them over the five)
        if pi < 5 and (di + pi) % 2:
            continue
        kw = {"threads": [32, 64, 128][(pi + di) % 3], "blocks": [1, 2, 3][(pi + 2 * di) % 3]}
        if prim.startswith("reduce"):
            kw["log2_size"] = 5
        elif prim == "shuffle":
            kw["index"] = (pi + di * 5) % 32
        elif prim != "invocation_id":
            kw["arg"] = [1, 16, 7, 31, 3, 0, 17, 30][di]
        add("sg-%s-%s" % (prim, dt), sg(prim, dt, **kw))
for prim in ["reduce_max", "reduce_all_add"]:
    for k in range(6):
        dt = ["i32", "f64", "f16", "u64", "bf16", "f32"][(k + len(prim)) % 6]
        add("sg-%s-k%d-%s" % (prim, k, dt), sg(prim, dt, log2_size=k, threads=64, blocks=2))
add("sg-reduce_min-default-k", sg("reduce_min", "i32"))
add("sg-reduce_all_max-k5-t1024", sg("reduce_all_max", "u32", log2_size=5, threads=1024,
                                     blocks=7))
add("sg-shuffle-list-rev-f32", sg("shuffle", "f32", index=list(range(31, -1, -1))))
add("sg-shuffle-list-xor1-i64", sg("shuffle", "i64", index=[l ^ 1 for l in range(32)]))
add("sg-shuffle-list-bcast0-bf16", sg("shuffle", "bf16", index=[0] * 32))
add("sg-shuffle-list-rot3-u32", sg("shuffle", "u32", index=[(l + 3) % 32 for l in range(32)]))
for arg in [0, 1, 17, 31]:
    add("sg-shuffle_up-arg%d-f32" % arg, sg("shuffle_up", "f32", arg=arg, threads=64))
    add("sg-shuffle_down-arg%d-i32" % arg, sg("shuffle_down", "i32", arg=arg, threads=64))
for arg in [0, 5, 31]:
    add("sg-shuffle_xor-arg%d-f64" % arg, sg("shuffle_xor", "f64", arg=arg))
    add("sg-broadcast-arg%d-u64" % arg, sg("broadcast", "u64", arg=arg))
add("sg-shuffle-ignored-log2-f32", sg("shuffle", "f32", index=4, log2_size=3))
add("sg-force-subgroup", sg("reduce_all_add", "i64", log2_size=5, threads=64, blocks=1,
                            variant="subgroup"))

# ------------------------------------------------------------------ subgroup: mul, and, or, xor
for pi, prim in enumerate(["reduce_mul", "reduce_and", "reduce_or", "reduce_xor",
                           "reduce_all_mul", "reduce_all_and", "reduce_all_or", "reduce_all_xor"]):
    for di, dt in enumerate(DTYPES):
        if "mul" not in prim and dt in FLOATS:
            continue
        if (di + pi) % 2 and dt not in ("i32", "u32"):
            continue  # half the other dtypes each; i32 / u32 (redux.sync at k = 5) always
        k = 5 if (di + pi) % 3 else 3
        add("sg-%s-k%d-%s" % (prim, k, dt), sg(prim, dt, log2_size=k, threads=64, blocks=2))
add("sg-reduce_all_xor-k4-i32", sg("reduce_all_xor", "i32", log2_size=4))
for pi, op in enumerate(["argmax", "argmin", "var", "std", "logsumexp"]):
    for al in ["", "all_"]:
        for di, dt in enumerate(DTYPES):
            if (pi >= 2 and dt not in FLOATS) or (di + pi + len(al)) % 3:
                continue
            kw = {"log2_size": [5, 3, 0][(di + pi) % 3], "threads": 64}
            if op in ("var", "std") and di % 2:
                kw["correction"] = 0
            add("sg-reduce_%s%s-k%d-%s" % (al, op, kw["log2_size"], dt),
                sg("reduce_%s%s" % (al, op), dt, **kw))
add("sg-reduce_and-k0-u64", sg("reduce_and", "u64", log2_size=0))

# ------------------------------------------------------------------ tile: state ops
STATE_OPS = ["argmax", "argmin", "var", "std", "logsumexp"]
STATE_BODIES = [
    ("shared-cta64", {"scope": "cta", "threads": 64, "src": buf("shared", [16, 40]),
                      "dst": buf("shared", [16])}),
    ("shared-2level", {"scope": "cta", "threads": 256, "src": buf("shared", [2, 3000]),
                       "dst": buf("shared", [2])}),
    ("shared-wg", {"scope": "warpgroup", "threads": 256, "active": {"warpgroup": 1},
                   "src": buf("shared", [2, 1024]), "dst": buf("shared", [2])}),
    ("shared-thread", {"scope": "thread", "src": buf("shared", [3, 5]),
                       "dst": buf("shared", [3])}),
    ("local-warp", WARP_ALL),
    ("local-lanes8", {"scope": "warp",
                      "src": buf("local", [4, 8, 3], {"shape": [4, 8, 3],
                                                      "stride": ["8@lane", "1@lane", 1]}),
                      "dst": buf("local", [4], {"shape": [4], "stride": ["8@lane"],
                                                "replicate": [[8, "1@lane"]]}),
                      "axes": [1, 2]}),
    ("local-thread", {"scope": "thread", "src": buf("local", [6, 10]), "dst": buf("local", [6])}),
    ("local-looped", {"scope": "thread", "src": buf("local", [300, 4]), "dst": buf("local", [4]),
                      "axes": [0]}),
]
for bi, (label, body) in enumerate(STATE_BODIES):
    for oi, op in enumerate(STATE_OPS):
        dts = ["f32", "bf16", "f64", "f16"] + (["i32", "u64"] if oi < 2 else [])
        for di, dt in enumerate(dts):
            if (bi + oi + di) % 3:
                continue  # a third of op x dtype per body (every pair over the bodies)
            nan = "ignore" if (bi + di) % 2 and dt in FLOATS else None
            r = tile(op, dt, body, nan=nan)
            if op == "var" and bi % 2:
                r["correction"] = 0
            add("tile-state-%s-%s" % (label, tag(op, dt, nan=nan)), r)
for op in STATE_OPS:  # redux and sm100_packed decline, saying why
    add("tile-state-redux-declines-%s" % op, tile(op, "i32" if op.startswith("arg") else "f32",
                                                  WARP_ALL), "sm_90")
    add("tile-state-packed-declines-%s" % op, tile(op, "f32", packed(32)), "sm_100a")

# ------------------------------------------------------------------ tensor
def tensor(op, dt, shape, axes=None, strides=None, **kw):
    r = {"kind": "tensor", "op": op, "dtype": dt, "shape": shape}
    if axes is not None:
        r["axes"] = axes
    if strides is not None:
        r["strides"] = strides
    r.update(kw)
    return r


def tlabel(shape, axes=None, strides=None):
    s = "x".join(map(str, shape))
    if axes is not None:
        s += "-ax" + "_".join(str(a) for a in axes)
    if strides is not None:
        s += "-st" + "_".join(map(str, strides))
    return s.replace("-ax-", "-axm").replace("_-", "_m")


TSHAPES = [
    ([1], None, None), ([7], None, None), ([1000003], None, None), ([65536], None, None),
    ([3, 1], [1], None), ([13, 17], [1], None), ([13, 17], [0], None), ([4099, 33], [1], None),
    ([33, 4099], [0], None), ([3, 100003], [1], None), ([100003, 3], [0], None),
    ([1031, 129], [-1], None), ([5, 7, 11], [1], None), ([5, 7, 11], [0, 2], None),
    ([4, 6, 8, 10], [1, 3], None), ([2, 3, 4, 5], [0, 1, 2, 3], None),
    ([64, 3, 129], [0, 1], None), ([9, 1000], [1], [1003, 1]), ([9, 1000], [0], [1003, 1]),
    ([100, 37], [0], [1, 101]), ([100, 37], [1], [1, 101]), ([50, 20], [1], [40, 2]),
    ([8, 16], [0], [0, 1]), ([8, 16, 32], [1, 2], None), ([8, 1, 32], [0, 1], None),
    ([4, 5, 6], [0, 2], None), ([64, 32], [0], [1, 64]), ([3, 999, 260], [1], None),
    ([257, 1025], [1], None), ([1025, 257], [0], None), ([20000, 40], [1], None),
    ([700, 31], [1], [37, 1]), ([31, 700], [0], [1, 33]), ([7, 77777], [1], [77781, 1]),
    ([2, 3, 4, 5, 6, 7, 8, 9], [1, 3, 5, 7], None), ([77773, 131], [1], None),
    ([30011, 77], [0], None), ([4096], None, None), ([1048577], None, None),
]
for si, (shape, axes, strides) in enumerate(TSHAPES):
    for k in range(1 + (si % 3 == 1)):  # one or two op / dtype pairs per shape, rotating
        op = OPS[(si + k) % 3]
        dt = DTYPES[(3 * si + 5 * k) % 8]
        extra = {}
        if (si + k) % 4 == 1:
            extra["accum"] = True
        if dt in FLOATS and (si + k) % 3 == 2:
            extra["nan"] = "ignore"
        add("tns-%s-%s" % (tlabel(shape, axes, strides),
                           tag(op, dt, extra.get("accum", False), extra.get("nan"))),
            tensor(op, dt, shape, axes, strides, **extra))
# every op x dtype on three classes
for shape, axes in [([100003], None), ([257, 1025], [1]), ([1025, 257], [0]),
                    ([6, 7, 8], [0, 2])]:
    for oi, op in enumerate(OPS):
        for di, dt in enumerate(DTYPES):
            if (oi + di + len(shape)) % 2:
                continue
            add("tns-all-%s-%s" % (tlabel(shape, axes), tag(op, dt)),
                tensor(op, dt, shape, axes))
# the benchmark shapes (sizes are JIT constants: large shapes compile as fast as small ones)
BENCH = [([16777216], None), ([268435456], None), ([4096, 4096], [1]), ([4096, 4096], [0]),
         ([65536, 128], [1]), ([65536, 128], [0]), ([128, 65536], [1]), ([1024, 32768], [1]),
         ([1024, 32768], [0]), ([32, 4194304], [1])]
for bi, (shape, axes) in enumerate(BENCH):
    add("tns-bench-%s-sum-f32" % tlabel(shape, axes), tensor("sum", "f32", shape, axes))
    if bi % 2:
        continue
    dt = ["bf16", "f16", "f64", "i32", "u64"][bi % 5]
    op = OPS[(bi + 1) % 3]
    add("tns-bench-%s-%s-nodet" % (tlabel(shape, axes), tag(op, dt)),
        tensor(op, dt, shape, axes, deterministic=False))
# tensor_cluster: 16385 .. 65536 16-byte vectors, sm_90+
for n, dt in [(65540, "f32"), (100003, "f32"), (262144, "f32"), (262148, "f32"),
              (65536, "f32"), (131080, "f16"), (500000, "bf16"), (32770, "f64"),
              (100003, "i64"), (200003, "u32")]:
    for tg in ["sm_90"] + (["sm_80", "sm_100a"] if dt == "f32" else []):
        add("tns-cluster-%d-sum-%s" % (n, dt), tensor("sum", dt, [n]), tg)
for op in ["max", "min"]:
    add("tns-cluster-100003-%s-accum-nanign" % op,
        tensor(op, "f32", [100003], accum=True, nan="ignore"), "sm_90")
add("tns-force-cluster-100003", tensor("sum", "f32", [100003], variant="tensor_cluster"), "sm_90")
for i, (op, dt) in enumerate([("argmax", "f32"), ("argmin", "bf16"), ("var", "f32"),
                              ("std", "f64"), ("logsumexp", "f16"), ("argmax", "i64")]):
    n = (131080 if dt in ("f16", "bf16") else 65540) + 8 * i  # past one CTA's reach
    add("tns-cluster-state-%s-%s" % (op, dt), tensor(op, dt, [n]), "sm_90")
add("bad-tns-force-cluster-1000", tensor("sum", "f32", [1000], variant="tensor_cluster"), "sm_90")
add("bad-tns-force-cluster-2d", tensor("sum", "f32", [400, 1000], [1], variant="tensor_cluster"),
    "sm_90")
add("bad-tns-force-cluster-sm80", tensor("sum", "f32", [100003], variant="tensor_cluster"), "sm_80")
add("tns-force-cluster-dyn", tensor("sum", "f32", [100003], variant="tensor_cluster",
                                    dynamic=True), "sm_90")
add("tns-force-generic-rows", tensor("sum", "f32", [64, 1000], [1], variant="tensor_generic"))
add("bad-tns-force-rows-cols", tensor("sum", "f32", [1000, 64], [0], variant="tensor_rows"))
add("bad-tns-force-cols-rows", tensor("max", "f32", [64, 1000], [1], variant="tensor_cols"))
add("tns-force-rows", tensor("min", "i32", [64, 1000], [1], variant="tensor_rows"))
add("tns-force-cols", tensor("min", "i32", [1000, 64], [0], variant="tensor_cols"))
# "acc_dtype": "f64": sum / prod / mean of f16 / bf16 / f32 folded in f64 on every tensor variant
ACC64 = [("sum", "f32", [20000, 40], [1], {}), ("mean", "bf16", [1025, 257], [0], {}),
         ("prod", "f16", [5, 7, 11], [0, 2], {"nan": "ignore"}), ("sum", "f32", [100003], None, {}),
         ("sum", "f16", [3, 100003], [1], {"dynamic": True}),
         ("sum", "f32", [1025, 257], [0], {"dynamic": True, "accum": True}),
         ("sum", "f32", [268435456], None, {}), ("mean", "f64", [64, 1000], [1], {})]
for i, (op, dt, shape, axes, kw) in enumerate(ACC64):
    add("tns-acc64-%s-%s" % (tlabel(shape, axes), tag(op, dt)),
        tensor(op, dt, shape, axes, acc_dtype="f64", **kw), ["sm_90", "sm_80", "sm_100a"][i % 3])
add("tns-acc32-default-bf16", tensor("sum", "bf16", [64, 1000], [1], acc_dtype="f32"))
for label, r in (("max", tensor("max", "f32", [64, 1000], [1], acc_dtype="f64")),
                 ("i32", tensor("sum", "i32", [64, 1000], [1], acc_dtype="f64")),
                 ("f64-f32", tensor("sum", "f64", [64, 1000], [1], acc_dtype="f32")),
                 ("argmax", tensor("argmax", "f32", [64, 1000], [1], acc_dtype="f64"))):
    add("bad-tns-acc64-" + label, r)
# dynamic ("dynamic": true): runtime-size kernels for rows and columns; generic stays constant
DYN = [("sum", "f32", [268435456], None, None, {}),
       ("max", "bf16", [4096, 4096], [1], None, {"nan": "ignore"}),
       ("min", "f64", [65536, 128], [1], None, {"accum": True}),
       ("sum", "i64", [128, 65536], [1], None, {}),
       ("sum", "f32", [1, 65536], None, None, {}),
       ("sum", "f32", [4096, 4096], [0], None, {}),
       ("max", "bf16", [1024, 32768], [0], None, {}),
       ("sum", "u64", [30011, 77], [0], None, {}),
       ("sum", "f16", [1000], None, None, {}),
       ("max", "u32", [77773, 131], [1], None, {"deterministic": False}),
       ("sum", "f32", [100003], None, None, {}),
       ("min", "f32", [9, 1000], [1], [1003, 1], {}),
       ("sum", "i32", [100, 37], [0], [1, 101], {}),
       ("sum", "f32", [5, 7, 11], [0, 2], None, {}),
       ("max", "f16", [8, 16], [0], [0, 1], {}),
       ("sum", "f64", [3, 999, 260], [1], None, {"accum": True}),
       ("max", "i64", [32, 4194304], [1], None, {})]
for op, dt, shape, axes, strides, extra in DYN:
    add("tns-dyn-%s-%s" % (tlabel(shape, axes, strides),
                           tag(op, dt, extra.get("accum", False), extra.get("nan"))),
        tensor(op, dt, shape, axes, strides, dynamic=True, **extra))
add("tns-dyn-false-1000", tensor("sum", "f32", [1000], dynamic=False))
for tg in ["sm_80", "sm_100a", "sm_120"]:
    add("tns-dyn-rows-4096x4096", tensor("sum", "f32", [4096, 4096], [1], dynamic=True), tg)
    add("tns-rows-4099x33-max-bf16", tensor("max", "bf16", [4099, 33], [1]), tg)
    add("tns-cols-33x4099-min-i64", tensor("min", "i64", [33, 4099], [0]), tg)

# fused maps ("map", "others", "epilogue"; named ops): every map on rows / cols / generic /
# cluster / runtime-size kernels, broadcast and strided other inputs, masks of other dtypes
FMAP = [("abs", "sum", None), ("square", "sum", None), ("mul", "sum", "same"),
        ("sub_square", "mean", "same"), ("abs_sub", "max", "same"), ("where", "sum", "f32"),
        ("nonzero", "sum", None)]
FVIEW = [([64, 1000], [1], {}), ([1000, 64], [0], {}), ([5, 7, 11], [0, 2], {}),
         ([400003], None, {"variant": "tensor_cluster"}), ([257, 1025], [1], {"dynamic": True}),
         ([1025, 257], [0], {"dynamic": True})]
for i, (m, op, other) in enumerate(FMAP):
    for j, (shape, axes, kw) in enumerate(FVIEW):
        dt = ["f16", "bf16", "f32", "f64"][(i + j) % 4]
        if "variant" in kw:  # one cluster: 16385 .. 65536 16-byte vectors
            shape = [40000 * {"f16": 8, "bf16": 8, "f32": 4, "f64": 2}[dt] + 3]
        extra = dict(kw)
        if other:
            extra["others"] = [{"dtype": dt if other == "same" else other}]
        add("tns-fused-%s-%s-%s" % (m, tlabel(shape, axes), tag(op, dt)),
            tensor(op, dt, shape, axes, map=m, **extra), ["sm_90", "sm_80", "sm_100a"][j % 3])
for name, dt, kw in (("dot", "f32", {"others": [{"dtype": "f32"}]}), ("sumsq", "bf16", {}),
                     ("norm", "f16", {}), ("norm", "f32", {"p": 1}),
                     ("norm", "bf16", {"p": "inf"}), ("amax", "f32", {}),
                     ("mse", "f32", {"others": [{"dtype": "f32"}]}),
                     ("l1", "f64", {"others": [{"dtype": "f64"}]}),
                     ("count_nonzero", "f16", {})):
    add("tns-fused-op-%s-%s%s" % (name, dt, "-p%s" % kw["p"] if "p" in kw else ""),
        tensor(name, dt, [4096, 4096], [1], **kw))
for label, r in (
        ("bcast-row", tensor("sum", "f32", [64, 1000], [1], map="sub_square",
                             others=[{"dtype": "f32", "strides": [1, 0]}])),
        ("bcast-col", tensor("sum", "bf16", [1000, 64], [0], map="mul",
                             others=[{"dtype": "bf16", "strides": [0, 1]}])),
        ("mask-u32", tensor("max", "f16", [64, 1000], [1], map="where",
                            others=[{"dtype": "u32"}])),
        ("sqrt", tensor("sum", "f32", [64, 1000], [1], map="square", epilogue="sqrt")),
        ("log", tensor("mean", "f64", [1000, 64], [0], map="abs", epilogue="log")),
        ("scale", tensor("sum", "f16", [100003], epilogue="scale", scale=0.125))):
    add("tns-fused-" + label, r)
add("tns-fused-int-where-i64", tensor("max", "i64", [1000, 64], [0], map="where",
                                     others=[{"dtype": "f16"}]))
add("tns-fused-int-count-u32", tensor("count_nonzero", "u32", [64, 1000], [1], dynamic=True))
for label, r in (("map-int", tensor("sum", "i32", [64, 1000], [1], map="abs")),
                 ("map-argmax", tensor("argmax", "f32", [64, 1000], [1], map="abs")),
                 ("others-missing", tensor("sum", "f32", [64, 1000], [1], map="mul")),
                 ):
    add("bad-tns-fused-" + label, r)
# the masked mean: op mean with map "where" divides by the count of selected elements
add("tns-fused-where-mean", tensor("mean", "f32", [64, 1000], [1], map="where",
                                   others=[{"dtype": "f32"}]))

# ------------------------------------------------------------------ treduce (peer kernel)
def tred(op, dt, ranks, shape, root=None, tile_=None, pingpong=None, **kw):
    r = {"kind": "treduce", "op": op, "dtype": dt, "ranks": ranks}
    if root is not None:
        r["root"] = root
    r["shape"] = shape
    if tile_ is not None:
        r["tile"] = tile_
    if pingpong is not None:
        r["pingpong"] = pingpong
    r.update(kw)
    return r


def trlabel(ranks, root, shape, tile_):
    s = "r%d" % ranks
    if root is not None:
        s += "root%d" % root
    s += "-" + "x".join(map(str, shape))
    if tile_ is not None:
        s += "-t" + "x".join(map(str, tile_))
    return s


REF_SHAPES = [([1, 256], [1, 256]), ([1, 4096], [1, 4096]), ([128, 32], [16, 32]),
              ([256, 64], [32, 64]), ([512, 32], [64, 32])]
for si, (shape, tl) in enumerate(REF_SHAPES):
    for ni, R in enumerate([2, 8] if si % 2 else [4]):
        for root in [[0, R - 1][(si + ni) % 2]]:
            dt = ["f32", "i32"][(si + ni + root) % 2]
            pp = (si + ni) % 2 == 0
            add("tr-ref-%s-sum-%s-pp%d" % (trlabel(R, root, shape, tl), dt, pp),
                tred("sum", dt, R, shape, root, tl, pp))
for oi, op in enumerate(OPS):
    for di, dt in enumerate(DTYPES):
        if oi == di % 3:
            continue
        pp = (oi + di) % 2 == 1
        add("tr-ops-%s-%s-pp%d" % (trlabel(4, 2, [128, 32], [16, 32]), tag(op, dt), pp),
            tred(op, dt, 4, [128, 32], 2, [16, 32], pp))
PARTIAL = [([100, 32], [16, 32]), ([64, 37], [64, 16]), ([100, 37], [16, 32]), ([7, 5], [3, 2]),
           ([1000], [1, 300]), ([3, 50, 70], [16, 32]), ([2, 3, 17, 19], [4, 8]),
           ([2, 2, 3, 9, 33], [5, 7]), ([5, 1, 1], [1, 1]), ([33, 1025], None),
           ([2000, 3], [999, 2]), ([1, 1, 1, 0, 256], [1, 256]), ([4, 0], None), ([1], None)]
for ci, (shape, tl) in enumerate(PARTIAL):
    for k in range(1 + ci % 2):
        dt = ["f16", "bf16", "f32", "f64", "i32", "u64"][(ci + 3 * k) % 6]
        op = OPS[(ci + k) % 3]
        R = 2 + (ci % 3) * 3
        root = (ci + k) % R
        pp = (ci + k) % 2 == 1
        add("tr-part-%s-%s-pp%d" % (trlabel(R, root, shape, tl), tag(op, dt), pp),
            tred(op, dt, R, shape, root, tl, pp))
# strides, accum, nan
add("tr-strided-r3-20x30-sum-f32",
    tred("sum", "f32", 3, [20, 30], 1, [8, 16], True, strides=[40, 1], dst_strides=[1, 20]))
add("tr-strided-r5-3x20x30-max-i32-acc",
    tred("max", "i32", 5, [3, 20, 30], 4, [7, 9], None, strides=[1000, 45, 2], accum=True))
add("tr-strided-r2-4x4-dst-only-sum-i32",
    tred("sum", "i32", 2, [4, 4], None, None, None, dst_strides=[1, 4]))
add("tr-strided-r4-2x1x45-sum-bf16",
    tred("sum", "bf16", 4, [2, 1, 45], 3, [2, 16], True, strides=[100, 50, 1]))
add("tr-acc-r3-40x50-sum-bf16", tred("sum", "bf16", 3, [40, 50], None, [16, 16], True,
                                     accum=True))
add("tr-acc-r2-4-sum-f32", tred("sum", "f32", 2, [4], accum=True))
for op in OPS:
    for nan in ["propagate", "ignore"]:
        for dt in [["f32", "f16"][(len(op) + len(nan)) % 2]]:
            add("tr-nan-r3-64x64-%s" % tag(op, dt, nan=nan),
                tred(op, dt, 3, [64, 64], None, [16, 64], True, nan=nan))
# many ranks: the source table in shared memory beyond 16
for R in [1, 16, 17, 33, 64, 128]:
    for pp in [False, True]:
        dt = "f32" if pp else "bf16"
        add("tr-many-%s-sum-%s-pp%d" % (trlabel(R, R // 2, [4096, 1024], None), dt, pp),
            tred("sum", dt, R, [4096, 1024], R // 2, None, pp))
add("tr-seed", tred("sum", "f32", 4, [512, 32], 1, [64, 32], True))
add("tr-force-treduce", tred("sum", "f32", 4, [512, 32], 1, [64, 32], True, variant="treduce"))
# runtime-size kernels ("dynamic": true): n a parameter over dense buffers; strided stays constant
add("tr-dyn-r3root1-1000003-sum-f32", tred("sum", "f32", 3, [1000003], 1, dynamic=True))
add("tr-dyn-r4root1-512x32-t64x32-sum-f32-pp",
    tred("sum", "f32", 4, [512, 32], 1, [64, 32], True, dynamic=True))
add("tr-dyn-r40root7-1001-max-bf16", tred("max", "bf16", 40, [1001], 7, dynamic=True))
add("tr-dyn-r2-7-t2x8-sum-f16-accum",
    tred("sum", "f16", 2, [7], None, [2, 8], True, accum=True, dynamic=True), "sm_80")
add("tr-dyn-strided-r3-4x5", tred("sum", "f32", 3, [4, 5], None, strides=[8, 1],
                                  dst_strides=[5, 1], dynamic=True))

# ------------------------------------------------------------------ treduce_ring (forced only)
VEC = {"f16": 8, "bf16": 8, "f32": 4, "f64": 2, "i32": 4, "u32": 4, "i64": 2, "u64": 2}
for di, dt in enumerate(DTYPES):
    for ni, n in enumerate([1, 2, 16, 17, 40, 127]):
        if ni % 3 != di % 3:
            continue
        op = OPS[(di + ni) % 3]
        v = VEC[dt] if (di + ni) % 2 else 1
        add("ring-r%d-v%d-%s" % (n, v, tag(op, dt)),
            tred(op, dt, n, [1], None, [1, v], None, variant="treduce_ring"))
for nan in ["propagate", "ignore"]:
    add("ring-r4-v4-max-f32-nan%s" % nan[:3],
        tred("max", "f32", 4, [1], None, [1, 4], None, variant="treduce_ring", nan=nan))
add("ring-r4-v4-sum-f32-acc",
    tred("sum", "f32", 4, [1], None, [1, 4], None, variant="treduce_ring", accum=True))
add("ring-r3-v1-sum-i32-2d", tred("sum", "i32", 3, [64, 33], None, [1, 1], None,
                                  variant="treduce_ring"))

# ------------------------------------------------------------------ treduce mean and custom
ADD_F32 = "define float @add(float %a, float %b) {\n  %c = fadd float %a, %b\n  ret float %c\n}\n"
AFFINE_I64 = ("define i64 @aff(i64 %p, i64 %q) {\n  %pa = trunc i64 %p to i32\n"
              "  %ph = lshr i64 %p, 32\n  %pb = trunc i64 %ph to i32\n  %qa = trunc i64 %q to i32\n"
              "  %qh = lshr i64 %q, 32\n  %qb = trunc i64 %qh to i32\n  %a = mul i32 %pa, %qa\n"
              "  %t = mul i32 %pb, %qa\n  %b = add i32 %t, %qb\n  %az = zext i32 %a to i64\n"
              "  %bz = zext i32 %b to i64\n  %bs = shl i64 %bz, 32\n  %r = or i64 %az, %bs\n"
              "  ret i64 %r\n}\n")
for R, root, dt in [(3, 1, "f32"), (4, 0, "f32"), (5, 2, "f16"), (3, 0, "bf16"), (7, 6, "f64"),
                    (40, 3, "f32")]:
    add("tr-mean-%s-%s" % (trlabel(R, root, [37, 70], [16, 64]), dt),
        tred("mean", dt, R, [37, 70], root, [16, 64], R % 2 == 1))
add("tr-mean-count5-acc-r3-f32", tred("mean", "f32", 3, [37, 70], None, [16, 64], True,
                                      mean_count=5, accum=True))
add("ring-r2-v4-mean-f32-count6", tred("mean", "f32", 2, [1], None, [1, 4], None,
                                       variant="treduce_ring", mean_count=6))
for comm in [True, False]:
    add("tr-custom-add-f32-r5root2-comm%d" % comm,
        tred("custom", "f32", 5, [37, 70], 2, [16, 64], True,
             combine={"ir": ADD_F32, "function": "add", "identity": -0.0, "commutative": comm}))
    add("tr-custom-aff-i64-r20root2-comm%d" % comm,
        tred("custom", "i64", 20, [37, 70], 2, [16, 64], True,
             combine={"ir": AFFINE_I64, "function": "aff", "identity": 1, "commutative": comm}))
add("ring-r3-v1-custom-aff-i64", tred("custom", "i64", 3, [1], None, [1, 1], None,
                                      variant="treduce_ring",
                                      combine={"ir": AFFINE_I64, "function": "aff",
                                               "identity": 1}))

# treduce custom: f16 / bf16 scalar states (kept in the dtype), struct states (tests/custom_ir.h)
HADD_F16 = "define half @hadd(half %a, half %b) {\n  %c = fadd half %a, %b\n  ret half %c\n}\n"
BADD_BF16 = ("define bfloat @badd(bfloat %a, bfloat %b) {\n  %c = fadd bfloat %a, %b\n"
             "  ret bfloat %c\n}\n")
WF = "{ i64, double, double }"
WELFORD = (
    "define " + WF + " @wlift(float %x, i64 %i) {\n  %d = fpext float %x to double\n"
    "  %a = insertvalue " + WF + " { i64 1, double 0.0, double 0.0 }, double %d, 1\n"
    "  ret " + WF + " %a\n}\n"
    "define " + WF + " @wcomb(" + WF + " %a, " + WF + " %b) {\n"
    "  %na = extractvalue " + WF + " %a, 0\n  %nb = extractvalue " + WF + " %b, 0\n"
    "  %ma = extractvalue " + WF + " %a, 1\n  %mb = extractvalue " + WF + " %b, 1\n"
    "  %qa = extractvalue " + WF + " %a, 2\n  %qb = extractvalue " + WF + " %b, 2\n"
    "  %n = add i64 %na, %nb\n  %fa = sitofp i64 %na to double\n"
    "  %fb = sitofp i64 %nb to double\n  %fn = sitofp i64 %n to double\n"
    "  %d = fsub double %mb, %ma\n  %r = fdiv double %fb, %fn\n  %dr = fmul double %d, %r\n"
    "  %m = fadd double %ma, %dr\n  %dd = fmul double %d, %dr\n  %c = fmul double %dd, %fa\n"
    "  %q0 = fadd double %qa, %qb\n  %q = fadd double %q0, %c\n"
    "  %s0 = insertvalue " + WF + " undef, i64 %n, 0\n"
    "  %s1 = insertvalue " + WF + " %s0, double %m, 1\n"
    "  %s2 = insertvalue " + WF + " %s1, double %q, 2\n"
    "  %ea = icmp eq i64 %na, 0\n  %t = select i1 %ea, " + WF + " %b, " + WF + " %s2\n"
    "  %eb = icmp eq i64 %nb, 0\n  %u = select i1 %eb, " + WF + " %a, " + WF + " %t\n"
    "  ret " + WF + " %u\n}\n"
    "define double @wfin(" + WF + " %s) {\n"
    "  %n = extractvalue " + WF + " %s, 0\n  %q = extractvalue " + WF + " %s, 2\n"
    "  %n1 = sub i64 %n, 1\n  %f = sitofp i64 %n1 to double\n  %v = fdiv double %q, %f\n"
    "  ret double %v\n}\n")
WELFORD_COMBINE = {"ir": WELFORD, "function": "wcomb", "lift": "wlift", "finish": "wfin",
                   "result": 2, "commutative": True,
                   "state": [{"dtype": "i64", "identity": 0}, {"dtype": "f64", "identity": 0},
                             {"dtype": "f64", "identity": 0}]}
ARGMAX_STATE = "{ float, i64 }"
ARGMAX = (
    "define " + ARGMAX_STATE + " @alift(float %x, i64 %i) {\n"
    "  %a = insertvalue " + ARGMAX_STATE + " undef, float %x, 0\n"
    "  %b = insertvalue " + ARGMAX_STATE + " %a, i64 %i, 1\n  ret " + ARGMAX_STATE + " %b\n}\n"
    "define " + ARGMAX_STATE + " @acomb(" + ARGMAX_STATE + " %a, " + ARGMAX_STATE + " %b) {\n"
    "  %va = extractvalue " + ARGMAX_STATE + " %a, 0\n  %vb = extractvalue " + ARGMAX_STATE +
    " %b, 0\n  %ia = extractvalue " + ARGMAX_STATE + " %a, 1\n  %ib = extractvalue " +
    ARGMAX_STATE + " %b, 1\n  %gt = fcmp ogt float %va, %vb\n  %eq = fcmp oeq float %va, %vb\n"
    "  %lt = icmp slt i64 %ia, %ib\n  %tie = and i1 %eq, %lt\n  %ta = or i1 %gt, %tie\n"
    "  %r = select i1 %ta, " + ARGMAX_STATE + " %a, " + ARGMAX_STATE + " %b\n"
    "  ret " + ARGMAX_STATE + " %r\n}\n")
for dt, ir, fn, R, root in [("f16", HADD_F16, "hadd", 5, 2), ("bf16", BADD_BF16, "badd", 20, 7)]:
    add("tr-custom-%s-%s-r%droot%d" % (fn, dt, R, root),
        tred("custom", dt, R, [37, 70], root, [16, 64], True,
             combine={"ir": ir, "function": fn, "identity": -0.0, "commutative": True}))
add("tr-custom-hadd-f16-r3-acc", tred("custom", "f16", 3, [37, 70], 1, [16, 64], None, accum=True,
                                      combine={"ir": HADD_F16, "function": "hadd",
                                               "identity": -0.0, "commutative": True}))
add("ring-r3-v8-custom-hadd-f16", tred("custom", "f16", 3, [1], None, [1, 8], None,
                                       variant="treduce_ring",
                                       combine={"ir": HADD_F16, "function": "hadd",
                                                "identity": -0.0, "commutative": True}))
for R, root in [(5, 2), (40, 33)]:
    add("tr-custom-welford-f32-r%droot%d" % (R, root),
        tred("custom", "f32", R, [37, 70], root, [16, 64], True, combine=WELFORD_COMBINE))
add("tr-custom-welford-f32-r3-dyn", tred("custom", "f32", 3, [1000003], None, None, None,
                                         dynamic=True, combine=WELFORD_COMBINE))
add("tr-custom-argmax-f32-r6root4-comm0",
    tred("custom", "f32", 6, [37, 70], 4, [16, 64], True,
         combine={"ir": ARGMAX, "function": "acomb", "lift": "alift", "result": 1,
                  "commutative": False,
                  "state": [{"dtype": "f32", "identity": "0xff800000"},
                            {"dtype": "i64", "identity": "0x7fffffffffffffff"}]}))
add("bad-tr-custom-welford-acc", tred("custom", "f32", 3, [37, 70], None, None, None, accum=True,
                                      combine=WELFORD_COMBINE))
add("bad-ring-custom-welford", tred("custom", "f32", 3, [1], None, [1, 1], None,
                                    variant="treduce_ring", combine=WELFORD_COMBINE))

# ------------------------------------------------------------------ every target
TARGET_SWEEP = [
    ("seed000", SEED000),
    ("seed002", SEED002),
    ("packed-max17", tile("max", "f32", packed(17))),
    ("redux-i32sum", tile("sum", "i32", WARP_ALL)),
    ("redux-f32max", tile("max", "f32", WARP_ALL)),
    ("mma-sum-f16", tile("sum", "f16", {"scope": "warp", "src": mma_src(2), "dst": MMA_DST})),
    ("sg-reduce_all_add-i64", sg("reduce_all_add", "i64", log2_size=5, threads=64, blocks=1)),
    ("tns-100003-sum-f32", tensor("sum", "f32", [100003])),
    ("tns-1031x129-max-bf16", tensor("max", "bf16", [1031, 129], [-1])),
    ("tns-dyn-cols-sum-f32", tensor("sum", "f32", [4096, 4096], [0], dynamic=True)),
    ("tns-generic-min-f64", tensor("min", "f64", [4, 5, 6], [0, 2])),
    ("tr-seed", tred("sum", "f32", 4, [512, 32], 1, [64, 32], True)),
    ("ring-r16-v4-sum-f32", tred("sum", "f32", 16, [1], None, [1, 4], None,
                                 variant="treduce_ring")),
]
MAIN_TARGETS = ["sm_80", "sm_90a", "sm_100a"]  # (sm_90 is the most common target elsewhere)
for ti, tg in enumerate(TARGETS):
    for li, (label, req) in enumerate(TARGET_SWEEP):
        if tg in MAIN_TARGETS or li % 6 == ti % 6:
            add("tgt-" + label, req, tg)
add("tgt-emu-packed-sum32", SEED002, "sm_89", ["--emulate-packed"])
add("tgt-emu-packed-max17", tile("max", "f32", packed(17)), "sm_120", ["--emulate-packed"])

# ------------------------------------------------------------------ refused (exit status 2)
BAD = [
    ("empty-object", {}),
    ("kind-unknown", {"kind": "blob"}),
    ("kind-not-string", {"kind": 7}),
    ("tile-op-prod", dict(SEED000, op="prod")),
    ("tile-argmax-accum", dict(SEED000, op="argmax", accum=True)),
    ("tile-var-i32", dict(SEED000, op="var", dtype="i32")),
    ("tile-argmin-correction", dict(SEED000, op="argmin", correction=0)),
    ("tile-std-correction-neg", dict(SEED000, op="std", correction=-1)),
    ("tile-argmax-shared-i64-too-big", tile("argmax", "f16", {"scope": "warp",
                                                              "src": buf("shared", [5000, 2]),
                                                              "dst": buf("shared", [5000])})),
    ("sg-reduce_and-f32", sg("reduce_and", "f32", log2_size=5)),
    ("sg-reduce_all_xor-bf16", sg("reduce_all_xor", "bf16", log2_size=2)),
    ("sg-reduce_prod", sg("reduce_prod", "f32")),
    ("sg-reduce_var-i64", sg("reduce_var", "i64", log2_size=5)),
    ("sg-reduce_add-correction", sg("reduce_add", "f32", correction=0)),
    ("tile-dtype-f8", dict(SEED000, dtype="f8")),
    ("tile-scope-grid", dict(SEED000, scope="grid")),
    ("tile-no-op", {k: v for k, v in SEED000.items() if k != "op"}),
    ("tile-cta-no-threads", {k: v for k, v in SEED000.items() if k != "threads"}),
    ("tile-threads-2048", dict(SEED000, threads=2048)),
    ("tile-unknown-field", dict(SEED000, colour=1)),
    ("tile-dst-count", dict(SEED000, dst=buf("shared", [5]))),
    ("tile-axes-range", dict(SEED000, axes=[2])),
    ("tile-shared-too-big-f64", tile("sum", "f64", {"scope": "cta", "threads": 32,
                                                    "src": buf("shared", [1, 6143]),
                                                    "dst": buf("shared", [1])})),
    ("tile-warp-threads-48", tile("sum", "f32", {"scope": "warp", "threads": 48,
                                                 "src": buf("shared", [4, 8]),
                                                 "dst": buf("shared", [4])})),
    ("tile-warp-shared-no-active", tile("sum", "f32", {"scope": "warp", "threads": 64,
                                                       "src": buf("shared", [4, 8]),
                                                       "dst": buf("shared", [4])})),
    ("tile-layout-short", tile("sum", "f32", {"scope": "warp",
                                              "src": buf("local", [32], {"shape": [16],
                                                                         "stride": ["1@lane"]}),
                                              "dst": buf("local", [1])})),
    ("tile-layout-at-warp", tile("sum", "f32", {"scope": "warp",
                                                "src": buf("local", [32], {"shape": [32],
                                                                           "stride": ["1@warp"]}),
                                                "dst": buf("local", [1])})),
    ("tile-layout-no-stride", tile("sum", "f32", {"scope": "warp",
                                                  "src": buf("local", [32], {"shape": [32]}),
                                                  "dst": buf("local", [1])})),
    ("tile-thread-lane-layout", tile("sum", "f32", {"scope": "thread",
                                                    "src": buf("local", [32], LANE32),
                                                    "dst": buf("local", [1])})),
    ("tile-replicate-slot", tile("sum", "f32", {"scope": "warp",
                                                "src": buf("local", [32], LANE32),
                                                "dst": buf("local", [1], {
                                                    "shape": [1], "stride": [1],
                                                    "replicate": [[32, 1]]})})),
    ("tile-warp-no-layout", tile("sum", "f32", {"scope": "warp", "src": buf("local", [3, 5]),
                                                "dst": buf("local", [3])})),
    ("tile-wg-no-layout", tile("max", "i64", {"scope": "warpgroup", "src": buf("local", [9]),
                                              "dst": buf("local", [1])})),
    ("tile-shared-64k", tile("max", "u64", {"scope": "cta", "threads": 256,
                                            "src": buf("shared", [2, 4096]),
                                            "dst": buf("shared", [2])})),
    ("tile-active-unknown", dict(SEED000, scope="warp", active={"block": 1})),
    ("tile-nan-bad", dict(SEED000, nan="maybe")),
    ("tile-force-unknown-variant", dict(SEED000, variant="nosuch")),
    ("tile-force-local-on-shared", dict(SEED000, variant="local")),
    ("tile-force-tensor-rows-on-tile", dict(SEED000, variant="tensor_rows")),
    ("tile-force-variant-empty", dict(SEED000, variant="")),
    ("sg-log2-6", sg("reduce_add", "i32", log2_size=6)),
    ("sg-log2-neg", sg("reduce_all_max", "i32", log2_size=-1)),
    ("sg-index-3", sg("shuffle", "i32", index=[1, 2, 3])),
    ("sg-index-32", sg("shuffle", "f32", index=32)),
    ("sg-bcast-40", sg("broadcast", "i32", arg=40)),
    ("sg-up-neg", sg("shuffle_up", "f32", arg=-1)),
    ("sg-threads-48", sg("reduce_add", "i32", threads=48)),
    ("sg-prim-twist", sg("twist", "i32")),
    ("sg-lane-id-f32", sg("invocation_id", "f32")),
    ("sg-lane-id-bf16", sg("invocation_id", "bf16")),
    ("tns-zero-dim", tensor("sum", "f32", [4, 0], [1])),
    ("tns-no-dims", tensor("sum", "f32", [])),
    ("tns-axis-repeat", tensor("sum", "f32", [4, 8], [1, -1])),
    ("tns-axis-range", tensor("sum", "f32", [4, 8], [-3])),
    ("tns-strides-count", tensor("sum", "f32", [4, 8], [1], [1])),
    ("tns-zero-kept-stride", tensor("sum", "f32", [4, 8], [1], [0, 1])),
    ("tns-overlap", tensor("sum", "f32", [4, 8, 3], [1], [2, 1, 1])),
    ("tns-overlap-dyn", tensor("sum", "f32", [4, 8, 3], [1], [2, 1, 1], dynamic=True)),
    ("tns-axes-empty-overlap", tensor("sum", "f32", [4, 4], [], [2, 1])),
    ("tns-huge-strides", tensor("sum", "f32", [1048576, 1048576], [1],
                                [4503599627370496, 1])),
    ("tns-det-2", tensor("sum", "f32", [4, 8], deterministic=2)),
    ("tns-dyn-1", tensor("sum", "f32", [4, 8], dynamic=1)),
    ("tns-unknown-field", tensor("sum", "f32", [4, 8], [1], colour=1)),
    ("tr-ranks-0", tred("sum", "f32", 0, [4])),
    ("tr-root-range", tred("sum", "f32", 4, [4], 4)),
    ("tr-tile-0", tred("sum", "f32", 4, [4, 4], None, [0, 4])),
    ("tr-tile-1-0", tred("sum", "f32", 2, [4, 4], None, [4, 0])),
    ("tr-6-dims", tred("sum", "f32", 2, [1, 2, 3, 4, 5, 6])),
    ("tr-neg-dim", tred("sum", "f32", 2, [4, -1])),
    ("tr-strides-count", tred("sum", "f32", 2, [4, 4], strides=[1])),
    ("tr-dst-overlap", tred("sum", "f32", 2, [4, 4], dst_strides=[1, 1])),
    ("tr-op-prod", tred("prod", "f32", 2, [4])),
    ("tr-nan-x", tred("sum", "f32", 2, [4], nan="x")),
    ("tr-huge", tred("sum", "f32", 2, [4503599627370496, 4503599627370496, 4, 4, 4],
                     strides=[1, 1, 1, 1, 1])),
    ("tr-force-ring-bad-vec", tred("sum", "f32", 4, [1], None, [1, 3],
                                   variant="treduce_ring")),
    ("tr-force-ring-200", tred("sum", "f32", 200, [1], None, [1, 4], variant="treduce_ring")),
    ("tr-dyn-1", tred("sum", "f32", 2, [4], dynamic=1)),
    ("tr-force-tile-variant", tred("sum", "f32", 2, [4], variant="shared")),
]
for label, req in BAD:
    add("bad-" + label, req)
for tg in ["sm_75", "sm_101", "SM_90", "sm_nope"]:
    add("bad-target-seed000", SEED000, tg)
add("bad-redux-f32-sm90", tile("max", "f32", WARP_ALL, variant="redux"), "sm_90")
add("bad-packed-sm90", tile("sum", "f32", packed(32), variant="sm100_packed"), "sm_90")
add("bad-ptxver85-sm100a", SEED002, "sm_100a", ["--ptx-version", "85"])
add("bad-ptxver87-packed-max16", tile("max", "f32", packed(16)), "sm_100a",
    ["--ptx-version", "87"])
add("bad-ptxver89", SEED002, "sm_90", ["--ptx-version", "89"])
add("bad-ptxver78-sm90a", SEED002, "sm_90a", ["--ptx-version", "78"])

# State ops (argmax argmin var std logsumexp; docs/REQUESTS.md): each class of view (rows, cols,
# generic), a long 1-D split row, runtime-size kernels, nan ignore, an integer argmax.
STATE_OPS = ["argmax", "argmin", "var", "std", "logsumexp"]
for op in STATE_OPS:
    for shape, axes in [([300, 1000], [1]), ([1000, 300], [0]), ([4, 5, 6], [0, 2]),
                        ([1 << 24], None), ([4096, 4096], [1]), ([4096, 4096], [0])]:
        add("tns-state-%s-%s" % (tlabel(shape, axes), tag(op, "f32")),
            tensor(op, "f32", shape, axes), "sm_90")
    add("tns-state-dyn-%s-%s" % (tlabel([1000, 300], [0]), tag(op, "bf16", nan="ignore")),
        tensor(op, "bf16", [1000, 300], [0], nan="ignore", dynamic=True), "sm_90")
    add("tns-state-%s-%s" % (tlabel([33, 4099], [1]), tag(op, "f64", nan="ignore")),
        tensor(op, "f64", [33, 4099], [1], nan="ignore"), "sm_90")
add("tns-state-%s-%s" % (tlabel([64, 1000], [1]), tag("argmax", "i32")),
    tensor("argmax", "i32", [64, 1000], [1]), "sm_90")


# ------------------------------------------------------------------ op custom, kinds tile and subgroup
HADD_F16 = "define half @hadd(half %a, half %b) {\n  %c = fadd half %a, %b\n  ret half %c\n}\n"
XOR_U64 = "define i64 @x(i64 %a, i64 %b) {\n  %c = xor i64 %a, %b\n  ret i64 %c\n}\n"


def comb(ir, fn, identity, comm):
    return {"ir": ir, "function": fn, "identity": identity, "commutative": comm}


WARP_LOCAL = {"scope": "warp",
              "src": buf("local", [32, 4], {"shape": [32, 4], "stride": ["1@lane", 1]}),
              "dst": buf("local", [4], {"shape": [4], "stride": [1],
                                        "replicate": [[32, "1@lane"]]}),
              "axes": [0]}
for comm in [True, False]:
    c = "comm%d" % comm
    t = tile("custom", "f32", {"scope": "warp", "src": buf("shared", [4, 64]),
                               "dst": buf("shared", [4]), "axes": [-1]})
    t["combine"] = comb(ADD_F32, "add", -0.0, comm)
    add("tile-custom-add-warp-4x64-f32-" + c, t, "sm_90")
    t = tile("custom", "i64", {"scope": "cta", "threads": 256, "src": buf("shared", [2, 300]),
                               "dst": buf("shared", [2]), "axes": [-1]})
    t["combine"] = comb(AFFINE_I64, "aff", 1, comm)
    add("tile-custom-aff-cta256-2x300-i64-" + c, t, "sm_90")
    t = tile("custom", "f16", dict(WARP_LOCAL))
    t["combine"] = comb(HADD_F16, "hadd", -0.0, comm)
    add("tile-custom-hadd-local-warp-32x4-f16-" + c, t, "sm_90")
    for prim in ["reduce_custom", "reduce_all_custom"]:
        add("sg-%s-aff-i64-k5-%s" % (prim, c),
            sg(prim, "i64", log2_size=5, threads=64, combine=comb(AFFINE_I64, "aff", 1, comm)),
            "sm_90")
        add("sg-%s-hadd-f16-k3-%s" % (prim, c),
            sg(prim, "f16", log2_size=3, threads=64, combine=comb(HADD_F16, "hadd", -0.0, comm)),
            "sm_90")
t = tile("custom", "u64", dict(WARP_LOCAL))
t["combine"] = comb(XOR_U64, "x", 0, True)
add("tile-custom-xor-local-warp-32x4-u64", t, "sm_100a")
# struct states (combine.state) in kinds tile and subgroup: Welford (f64 output), argmax (i64)
ARGMAX_COMBINE = {"ir": ARGMAX, "function": "acomb", "lift": "alift", "result": 1,
                  "commutative": True,
                  "state": [{"dtype": "f32", "identity": "0xff800000"},
                            {"dtype": "i64", "identity": "0x7fffffffffffffff"}]}
ARGMAX_COMBINE0 = dict(ARGMAX_COMBINE, commutative=False)
for name, body in [("warp-4x64", {"scope": "warp", "src": buf("shared", [4, 64]),
                                  "dst": buf("shared", [4]), "axes": [-1]}),
                   ("cta256-2x300", {"scope": "cta", "threads": 256,
                                     "src": buf("shared", [2, 300]), "dst": buf("shared", [2]),
                                     "axes": [-1]}),
                   ("local-warp-32x4", dict(WARP_LOCAL))]:
    for cname, cb in [("welford", WELFORD_COMBINE), ("argmax", ARGMAX_COMBINE)]:
        t = tile("custom", "f32", dict(body))
        t["combine"] = cb
        add("tile-custom-%s-%s-f32" % (cname, name), t, "sm_90")
t = tile("custom", "f32", {"scope": "warp", "src": buf("shared", [4, 64]),
                           "dst": buf("shared", [4]), "axes": [-1]})
t["combine"] = ARGMAX_COMBINE0
add("tile-custom-argmax-warp-4x64-f32-comm0", t, "sm_90")
t = tile("custom", "f32", dict(WARP_LOCAL))
t["combine"] = ARGMAX_COMBINE0
add("bad-tile-custom-argmax-local-warp-32x4-f32-comm0", t, "sm_90")
t = tile("custom", "f32", {"scope": "warp", "src": buf("shared", [4, 64]),
                           "dst": buf("shared", [4]), "axes": [-1]}, accum=True)
t["combine"] = WELFORD_COMBINE
add("bad-tile-custom-welford-warp-4x64-f32-acc", t, "sm_90")
for prim in ["reduce_custom", "reduce_all_custom"]:
    add("sg-%s-welford-f32-k5" % prim,
        sg(prim, "f32", log2_size=5, threads=64, combine=WELFORD_COMBINE), "sm_90")
    add("sg-%s-argmax-f32-k3-comm0" % prim,
        sg(prim, "f32", log2_size=3, threads=64, combine=ARGMAX_COMBINE0), "sm_90")

# ------------------------------------------------------------------ tensor-only dtypes, empty views
# i8 u8 i16 u16 bool e4m3 e5m2 on every tensor variant (constant and runtime-size), their result
# dtypes; zero-size dims and axes []; the other kinds' refusals.
SMALL_DTYPES = ["i8", "u8", "i16", "u16", "bool", "e4m3", "e5m2"]
SMALL_VIEWS = [("rows", [4099, 1000], [1], "tensor_rows"), ("cols", [1000, 4096], [0], "tensor_cols"),
               ("generic", [5, 7, 11], [0, 2], "tensor_generic")]
for di, dt in enumerate(SMALL_DTYPES):
    fp8 = dt in ("e4m3", "e5m2")
    ops = ["sum", "max", "argmax", "mean", "var"] + (["logsumexp"] if fp8 else ["prod", "xor"])
    for oi, op in enumerate(ops):
        for vname, shape, axes, var in SMALL_VIEWS:
            tg = ["sm_90", "sm_80"][(di + oi) % 2]
            add("tensor-%s-%s-%s" % (dt, op, vname),
                tensor(op, dt, shape, axes, variant=var), tg)
            if var != "tensor_generic":
                add("tensor-%s-%s-%s-dyn" % (dt, op, vname),
                    tensor(op, dt, shape, axes, variant=var, dynamic=True), tg)
    n = 40000 * (8 if dt in ("i16", "u16") else 16) + 3
    add("tensor-%s-sum-cluster" % dt, tensor("sum", dt, [n], variant="tensor_cluster"), "sm_90")
    add("tensor-%s-max-values" % dt, tensor("argmax", dt, [33, 1025], [1], values=True),
        "sm_90")
    add("tensor-%s-and-accum" % dt if not fp8 else "tensor-%s-min-accum" % dt,
        tensor("min" if fp8 else "and", dt, [1025, 33], [0], accum=True), "sm_90")
    add("bad-tile-%s" % dt, tile("sum", dt, dict(WARP_LOCAL)), "sm_90")
    add("bad-tensor-%s-accf64" % dt, tensor("sum", dt, [64], acc_dtype="f64"), "sm_90")
for name, req in [
        ("sum-4x0-ax1", tensor("sum", "f32", [4, 0], [1])),
        ("mean-0-dyn", tensor("mean", "i8", [0], dynamic=True)),
        ("var-3x0x5-ax01", tensor("var", "e4m3", [3, 0, 5], [0, 1])),
        ("max-0x4-ax1", tensor("max", "f32", [0, 4], [1])),
        ("logsumexp-6x0-ax1", tensor("logsumexp", "f16", [6, 0], [1])),
        ("sum-37x41-noaxes", tensor("sum", "u8", [37, 41], [])),
        ("var-37x41-noaxes", tensor("var", "f32", [37, 41], [])),
        ("argmax-6x5-s7-noaxes", tensor("argmax", "i16", [6, 5], [], strides=[7, 1]))]:
    add("tensor-empty-%s" % name, req, "sm_90")
add("bad-tensor-empty-max-4x0-ax1", tensor("max", "f32", [4, 0], [1]), "sm_90")
add("bad-tensor-empty-argmin-0", tensor("argmin", "u8", [0]), "sm_90")
add("bad-tensor-logsumexp-i8", tensor("logsumexp", "i8", [64]), "sm_90")
add("bad-tensor-prod-e5m2", tensor("prod", "e5m2", [64]), "sm_90")

# ------------------------------------------------------------------ tensor: segments, lists, invariant
def seg(op, dt, shape, count, odt="i32", **kw):
    return tensor(op, dt, shape, [0], segments={"count": count, "dtype": odt}, **kw)


for name, req in [
        ("sum-f32-1d", seg("sum", "f32", [1000003], 1000)),
        ("max-bf16-2d", seg("max", "bf16", [200000, 3], 77, "i64", nan="ignore")),
        ("argmax-f16-1d", seg("argmax", "f16", [65537], 33)),
        ("mean-f32-2d-wide", seg("mean", "f32", [9000, 129], 5)),
        ("var-f64-1d", seg("var", "f64", [100003], 100, "i64")),
        ("and-u8-1d", seg("and", "u8", [200003], 2000)),
        ("logsumexp-f32-1d", seg("logsumexp", "f32", [1 << 20], 4096)),
        ("prod-i16-1d", seg("prod", "i16", [4099], 7))]:
    add("tns-seg-" + name, req)
add("bad-tns-seg-strided", seg("sum", "f32", [1000, 4], 10, strides=[8, 1]), "sm_90")
add("bad-tns-seg-axis1", tensor("sum", "f32", [100, 40], [1], segments={"count": 10}), "sm_90")


def lst(op, dt, count, total=False, **kw):
    r = {"kind": "tensor", "op": op, "dtype": dt, "list": {"count": count, "total": total}}
    r.update(kw)
    return r


for name, req in [
        ("sum-f32-150-total", lst("sum", "f32", 150, True)),
        ("norm-bf16-2000-total", lst("norm", "bf16", 2000, True)),
        ("max-i32-10", lst("max", "i32", 10)),
        ("prod-f16-300", lst("prod", "f16", 300, True)),
        ("count-u8-10240", lst("count_nonzero", "u8", 10240)),
        ("sumsq-f64-7-total", lst("sumsq", "f64", 7, True))]:
    add("tns-list-" + name, req)
add("bad-tns-list-mean-total", lst("mean", "f32", 4, True), "sm_90")
add("bad-tns-list-count", lst("sum", "f32", 10241), "sm_90")
for name, req in [
        ("sum-f32-rows", tensor("sum", "f32", [4096, 100000], [1], invariant=True)),
        ("sum-bf16-cols", tensor("sum", "bf16", [1024, 32768], [0], invariant=True)),
        ("sum-f32-cols", tensor("sum", "f32", [4096, 4096], [0], invariant=True)),
        ("var-f64-cols-long", tensor("var", "f64", [65536, 128], [0], invariant=True)),
        ("masked-mean-bf16-cols-long", tensor("mean", "bf16", [70000, 128], [0], map="where",
                                              others=[{"dtype": "u8"}], invariant=True)),
        ("var-f32-rows", tensor("var", "f32", [64, 5000], [1], invariant=True)),
        ("logsumexp-f32-1d", tensor("logsumexp", "f32", [1 << 20], invariant=True)),
        ("argmax-f16-rows", tensor("argmax", "f16", [300, 777], [1], invariant=True)),
        ("mean-f16-dyn", tensor("mean", "f16", [64, 4096], [1], invariant=True, dynamic=True)),
        ("seg-sum-f32-1d", seg("sum", "f32", [1000003], 1000, invariant=True)),
        ("seg-var-bf16-2d", seg("var", "bf16", [20000, 64], 40, "i64", invariant=True)),
        ("list-norm-bf16", lst("norm", "bf16", 150, True, invariant=True))]:
    for tg in ("sm_80", "sm_90a", "sm_100a"):
        add("tns-inv-" + name, req, tg)
add("bad-tns-inv-nondet", tensor("sum", "f32", [64, 64], [1], invariant=True,
                                 deterministic=False), "sm_90")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "requests.jsonl")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for e in entries:
            f.write(json.dumps(e, separators=(", ", ": ")) + "\n")
    print("gen.py: %d requests -> %s" % (len(entries), out), file=sys.stderr)


if __name__ == "__main__":
    main()
