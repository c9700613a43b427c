#!/usr/bin/env python3
"""Requests of every kind at growing sizes, one JSON text a line, for bench/compile_bounds:
    python3 bench/compile_bounds.py [FAMILY...] | build/bench/compile_bounds
Each family walks one size up to (and past) its largest accepted value; compile time or memory
that grows faster than the size shows up as a jump between neighbouring lines."""
import json
import sys


def j(**kw):
    return json.dumps(kw, separators=(",", ":"))


def local_thread():
    for dt in ("f32", "i64", "f16"):
        for n in (64, 128, 256, 287, 512, 1024, 2048, 4096, 8192):
            yield j(kind="tile", op="sum", dtype=dt, scope="thread",
                    src={"mem": "local", "shape": [n]}, dst={"mem": "local", "shape": [1]},
                    axes=[0], accum=True)


def local_thread2d():
    for n in (16, 64, 71, 128, 256, 512, 1024):
        yield j(kind="tile", op="max", dtype="f16", scope="thread",
                src={"mem": "local", "shape": [n, 4]}, dst={"mem": "local", "shape": [4]}, axes=[0])
    for n in (16, 64, 128, 256, 512, 1024):  # many outputs, short folds
        yield j(kind="tile", op="sum", dtype="f32", scope="thread",
                src={"mem": "local", "shape": [4, n]}, dst={"mem": "local", "shape": [n]}, axes=[0])


def local_warp():
    for e in (6, 8, 16, 32, 64, 128, 256, 512):
        yield j(kind="tile", op="sum", dtype="f32", scope="warp",
                src={"mem": "local", "shape": [32, e],
                     "layout": {"shape": [32, e], "stride": ["1@lane", 1]}},
                dst={"mem": "local", "shape": [e],
                     "layout": {"shape": [e], "stride": [1], "replicate": [[32, "1@lane"]]}},
                axes=[0], accum=True)
    for s in (8, 56, 57, 128, 280, 819, 1600):
        yield j(kind="tile", op="sum", dtype="f16", scope="warp",
                src={"mem": "local", "shape": [32, 6],
                     "layout": {"shape": [32, 6], "stride": ["1@lane", 1]}},
                dst={"mem": "local", "shape": [6],
                     "layout": {"shape": [6], "stride": [s], "replicate": [[32, "1@lane"]]}},
                axes=[0], accum=True)


def local_warpgroup():
    for e in (2, 8, 32, 64, 128, 256):
        yield j(kind="tile", op="sum", dtype="f32", scope="warpgroup",
                src={"mem": "local", "shape": [128, e, 2],
                     "layout": {"shape": [128, e, 2], "stride": ["1@thread", 2, 1]}},
                dst={"mem": "local", "shape": [128, e],
                     "layout": {"shape": [128, e], "stride": ["1@thread", 1]}},
                axes=[2])


def shared():
    for dt, n in (("f32", 1024), ("f32", 4096), ("f32", 11000), ("f64", 5500), ("f16", 22000)):
        for scope, thr in (("cta", 1024), ("cta", 32), ("warp", 32), ("warpgroup", 128), ("thread", 1)):
            yield j(kind="tile", op="sum", dtype=dt, scope=scope, threads=thr,
                    src={"mem": "shared", "shape": [2, n // 2]}, dst={"mem": "shared", "shape": [2]},
                    axes=[1])
            yield j(kind="tile", op="max", dtype=dt, scope=scope, threads=thr,
                    src={"mem": "shared", "shape": [n // 4, 4]}, dst={"mem": "shared", "shape": [4]},
                    axes=[0])
    for nd in (2, 4, 6, 8):
        shape = [2] * nd + [4096 >> nd]
        yield j(kind="tile", op="sum", dtype="f32", scope="cta", threads=256,
                src={"mem": "shared", "shape": shape}, dst={"mem": "shared", "shape": [1]},
                axes=list(range(nd + 1)))
        yield j(kind="tile", op="sum", dtype="f32", scope="cta", threads=256,
                src={"mem": "shared", "shape": shape},
                dst={"mem": "shared", "shape": [2] * (nd // 2)}, axes=list(range(nd // 2, nd + 1)))
    for n in (100, 1000, 5000, 10000):  # a region of a long buffer, many outputs
        yield j(kind="tile", op="min", dtype="i32", scope="cta", threads=1024,
                src={"mem": "shared", "shape": [n, 1], "start": [1, 0], "extent": [n - 2, 1]},
                dst={"mem": "shared", "shape": [n - 2]}, axes=[1])
        yield j(kind="tile", op="sum", dtype="f32", scope="warp", threads=1024, active={"warp": 31},
                src={"mem": "shared", "shape": [3, n], "start": [1, 3], "extent": [2, n - 5]},
                dst={"mem": "shared", "shape": [2]}, axes=[1])


def subgroup():
    prims = ("shuffle", "broadcast", "shuffle_down", "shuffle_up", "shuffle_xor", "reduce_add",
             "reduce_min", "reduce_max", "reduce_all_add", "reduce_all_min", "reduce_all_max")
    for p in prims:
        for dt in ("f64", "i64", "f16"):
            yield j(kind="subgroup", primitive=p, dtype=dt, log2_size=5, threads=1024, blocks=65535)
    yield j(kind="subgroup", primitive="shuffle", dtype="bf16", threads=1024,
            index=[(7 * i + 3) % 32 for i in range(32)])


def tensor():
    for dt in ("f32", "f16", "i64", "f64"):
        for shape, axes in (([1 << 40], [0]), ([1 << 20, 1 << 20], [1]), ([1 << 20, 1 << 20], [0]),
                            ([3] * 8, [0, 2, 4, 6]), ([1 << 5] * 8, [1, 3, 5, 7]),
                            ([1 << 5] * 8, list(range(8))), ([100000], [0]), ([7, 1 << 37], [0])):
            yield j(kind="tensor", op="sum", dtype=dt, shape=shape, axes=axes)
            yield j(kind="tensor", op="max", dtype=dt, shape=shape, axes=axes, dynamic=True)
    for nd in (2, 4, 6, 8):
        shape = [5] * nd
        strides = [(5 ** (nd - 1 - d)) * 3 for d in range(nd)]
        yield j(kind="tensor", op="sum", dtype="f32", shape=shape, strides=strides,
                axes=list(range(0, nd, 2)))
        yield j(kind="tensor", op="sum", dtype="f32", shape=shape, strides=[0] * (nd - 1) + [1],
                axes=list(range(nd - 1)))
    for n in (16385 * 4, 40000 * 4, 65536 * 4):
        yield j(kind="tensor", op="sum", dtype="f32", shape=[n])


def treduce():
    for ranks in (1, 8, 64, 128, 129, 512, 1024):
        yield j(kind="treduce", op="sum", dtype="f32", ranks=ranks, shape=[4096, 1024])
    for ranks in (8, 128):
        yield j(kind="treduce", op="max", dtype="f16", ranks=ranks, shape=[3, 5, 7, 9, 11],
                strides=[10000, 1000, 100, 10, 1], dst_strides=[1, 3, 15, 105, 945],
                tile=[1, 1], pingpong=True, accum=True)
        for tile in ([1, 1], [64, 32], [1024, 1024], [1 << 20, 1 << 20]):
            yield j(kind="treduce", op="sum", dtype="f64", ranks=ranks, shape=[1 << 10, 1 << 10],
                    tile=tile, pingpong=True)


def local_irregular():
    # 2 x 2 x C outputs whose src slots go c-major and dst slots b-major: C loop nests
    for c in (16, 32, 64, 65, 128):
        yield j(kind="tile", op="sum", dtype="i64", scope="thread",
                src={"mem": "local", "shape": [2, 2, c, 2],
                     "layout": {"shape": [2, 2, c, 2], "stride": [1, 4 * c, 4, 2]}},
                dst={"mem": "local", "shape": [2, 2, c],
                     "layout": {"shape": [2, 2, c], "stride": [1, 2, 4]}},
                axes=[3], accum=True)


FAMILIES = dict(local_thread=local_thread, local_thread2d=local_thread2d, local_warp=local_warp,
                local_warpgroup=local_warpgroup, local_irregular=local_irregular, shared=shared, subgroup=subgroup, tensor=tensor,
                treduce=treduce)

if __name__ == "__main__":
    for name in sys.argv[1:] or FAMILIES:
        print("# " + name)
        for line in FAMILIES[name]():
            print(line)
