#!/usr/bin/env python3
"""Where the time of a back-to-back fused call goes, on a GPU: for sum, sumsq, dot, masked_sum
and masked_mean on [65536, 128] f32 along rows (a uint8 mask), with the inputs rotated over 30
sets (as bench/fused_peers.py's "steady" timing), per op:

  host us     the Python call's host time: perf_counter around 200 calls, no synchronisation
              inside (fewer calls than the launch queue holds, so the GPU does not hold the host)
  C us        the same with the launch alone: rj_tensor_launch_n (rj_tensor_launch for sum) of
              the kernel reduce's memo holds, through ctypes, arguments built beforehand
  steady us   GPU time per call, CUDA events around 600 rotated calls (fused_peers' steady)
  one-input   the same, every call on the first input set (no rotation)
  sync us     one call then torch.cuda.synchronize, wall time (the latency of a lone call)
  kernels     kernels the GPU ran per call (torch.profiler), their names and mean duration
  API         CUDA driver / runtime calls per call the profiler saw (cuLaunchKernel, any
              synchronisation, allocation or stream query shows here; the one
              synchronisation that ends the profiled loop counts 1/60)

A call whose steady time is far above both its host time and its kernel's duration waits on
something else (a synchronisation, an allocation, a second kernel); the API column names it.

Run on a GPU machine from the repository root (torch needed):
  REDJIT_LIBRARY=carry/libredjit.so.0.2 PYTHONPATH=tools/python python3 bench/fused_host_probe.py
Options: --sets N (rotation sets, default 30), --ops sum,dot,... (a subset).
"""
import argparse
import collections
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import steady, use_checkout  # noqa: E402

use_checkout()

import redjit  # noqa: E402

SHAPE = (65536, 128)
OPS = ("sum", "sumsq", "dot", "masked_sum", "masked_mean")


def call_of(op):
    if op in ("sum", "sumsq"):
        return lambda it: redjit.reduce(it["x"], op, 1, out=it["o"])
    other = "y" if op == "dot" else "m"
    return lambda it: redjit.reduce(it["x"], op, 1, others=(it[other],), out=it["o"])


def bare_call(torch, op, items):
    """fn(item) launching the memo's kernel for op alone (None: no memo entry found)"""
    c = redjit._ctx()
    st = torch.cuda.current_stream().cuda_stream
    cp = ctypes.c_void_p(c.ptr)
    if op == "sum":
        ent = [v for k, v in c.memo.items() if k[0].__class__ is not str and k[5] == "sum"]
        if not ent:
            return None
        fn, h, arg, _ = ent[-1]
        return lambda it: fn(cp, h, arg, it["x"].data_ptr(), it["o"].data_ptr(), st)
    ent = [v for k, v in c.memo.items() if k[0] == "fused torch" and k[6] == op]
    launch_n = getattr(c, "launch_n", None)
    if not ent or launch_n is None:
        return None  # a package without the fused memo
    k, dev, _, arr, n = ent[-1]
    other = "y" if op == "dot" else "m"

    def run(it):
        if n:
            arr[0] = it[other].data_ptr()
        return launch_n(cp, k, dev, it["x"].data_ptr(), arr, n, it["o"].data_ptr(), 0, st)
    return run


def host_us(torch, fn, items, n=200):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(n):
        fn(items[i % len(items)])
    dt = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    return dt


def sync_us(torch, fn, items, n=50):
    best = []
    for i in range(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn(items[i % len(items)])
        torch.cuda.synchronize()
        best.append((time.perf_counter() - t) * 1e6)
    best.sort()
    return best[len(best) // 2]


def profile(torch, fn, items, n=60):
    """(kernels per call, {kernel name: mean us}, {API name: calls per call})"""
    from torch.profiler import ProfilerActivity, profile as prof_
    torch.cuda.synchronize()
    with prof_(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for i in range(n):
            fn(items[i % len(items)])
        torch.cuda.synchronize()
    kern, api = collections.defaultdict(list), collections.Counter()
    for e in p.events():
        dev = str(getattr(e, "device_type", ""))
        name = e.name
        if dev.endswith("CUDA"):
            us = getattr(e, "device_time", None)
            if us is None:
                us = getattr(e, "cuda_time", 0)
            kern[name].append(us)
        elif name.startswith("cu"):  # cuLaunchKernel, cudaStreamSynchronize, cuMemAlloc...
            api[name] += 1
    nk = sum(len(v) for v in kern.values()) / n
    means = {k[:60]: sum(v) / len(v) for k, v in kern.items()}
    return nk, means, {k: v / n for k, v in api.items()}


def main():
    ap = argparse.ArgumentParser(description="host and GPU time per fused call, kernels and "
                                 "CUDA calls per call (docstring: columns)")
    ap.add_argument("--sets", type=int, default=30)
    ap.add_argument("--ops", default=",".join(OPS))
    args = ap.parse_args()
    import torch
    torch.manual_seed(0)
    items = []
    for _ in range(args.sets):
        x = torch.randn(SHAPE, device="cuda")
        items.append({"x": x, "y": torch.randn(SHAPE, device="cuda"),
                      "m": (torch.rand(SHAPE, device="cuda") > 0.5).to(torch.uint8),
                      "o": torch.empty(SHAPE[0], device="cuda")})
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  redjit "
          f"{redjit.version()} ({redjit.library_path()}, package {redjit.__file__})")
    print(f"[65536, 128] f32 along rows, {args.sets} rotated input sets\n")
    print("| op | host us | C us | steady us | one-input us | sync us | kernels / call | "
          "kernel us | API calls / call |")
    print("|---|---|---|---|---|---|---|---|---|")
    for op in args.ops.split(","):
        fn = call_of(op)
        for i in range(3):
            fn(items[i])
        torch.cuda.synchronize()
        bare = bare_call(torch, op, items)
        h = host_us(torch, fn, items)
        cb = f"{host_us(torch, bare, items):.1f}" if bare else "-"
        st = steady(torch, fn, items, 600) * 1e3
        one = steady(torch, fn, items[:1], 600) * 1e3
        sy = sync_us(torch, fn, items)
        nk, means, api = profile(torch, fn, items)
        ks = "; ".join(f"{k} {v:.1f}" for k, v in means.items())
        apis = "; ".join(f"{k} {v:.2f}" for k, v in sorted(api.items()))
        print(f"| {op} | {h:.1f} | {cb} | {st:.1f} | {one:.1f} | {sy:.1f} | {nk:.2f} | {ks} | "
              f"{apis} |", flush=True)


if __name__ == "__main__":
    main()
