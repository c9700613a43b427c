#!/usr/bin/env python3
"""How many kernels a program that sees the tensor benchmark's shapes compiles: the 22 cases of
bench/cases.txt in f32, bf16 and f16 (the i32 cases once), constant and runtime-size
("dynamic": true), for one target, no GPU.  Kernels are told apart by their PTX; a class is
(variant, op, dtype, layout), the layout 1-D, rows or columns as the case's name says.
Prints the totals and the classes holding more than one kernel (docs/PERFORMANCE.md, "Kernels
per shape class").
Usage: shape_sweep.py [cases.txt] [--target sm_90]"""
import collections
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import REPO, use_checkout  # noqa: E402

use_checkout()
os.environ.setdefault("REDJIT_CACHE_DISABLE", "1")  # every kernel compiled here

import redjit  # noqa: E402


def requests(path):
    """(layout, request) of every case x dtype"""
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        name, dt, op, axes, shape = line.split()
        layout = "1-D" if name.startswith("1d") else "rows" if "rows" in name else "cols"
        for d in ([dt] if dt == "i32" else ["f32", "bf16", "f16"]):
            yield layout, {"kind": "tensor", "op": op, "dtype": d,
                           "shape": [int(s) for s in shape.split(",")],
                           "axes": [int(a) for a in axes.split(",")]}


def sweep(path, target, dynamic):
    classes, n = collections.defaultdict(set), 0
    for layout, r in requests(path):
        k = redjit.compile(dict(r, dynamic=dynamic), target=target)
        classes[(k.variant, r["op"], r["dtype"], layout)].add(
            hashlib.sha1(k.ptx.encode()).hexdigest())
        n += 1
    return n, classes


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    target = sys.argv[sys.argv.index("--target") + 1] if "--target" in sys.argv else "sm_90"
    if "--target" in sys.argv:
        args.remove(target)
    path = args[0] if args else os.path.join(REPO, "bench", "cases.txt")
    for dynamic in (False, True):
        n, classes = sweep(path, target, dynamic)
        kernels = len(set().union(*classes.values()))
        print(f"{'runtime-size' if dynamic else 'constant'}: {n} requests, {kernels} kernels, "
              f"{len(classes)} classes, at most {max(len(v) for v in classes.values())} a class")
        for c, v in sorted(classes.items()):
            if len(v) > 1:
                print(f"  {' '.join(c)}: {len(v)} kernels")


if __name__ == "__main__":
    main()
