#!/usr/bin/env python3
"""The total L2 norm of a parameter list, end to end from Python: redjit's list request (one
launch) against torch's foreach norm as torch.nn.utils.clip_grad_norm_ computes it
(torch._foreach_norm, then torch.linalg.vector_norm of the stacked norms), in the same run.

Lists: a GPT-2-124M-like parameter list (148 tensors, 124.4 M elements) and 2,000 tensors of
log-uniform sizes (1 .. 2^18 elements, seeded), each in f32 and bf16.  Methods:
  redjit multi_reduce   redjit.multi_reduce(xs, "norm", total=True, per_tensor=False, total_out=t)
                        (the table kept for the same list: one launch per call)
  redjit MultiList      m.reduce(...) of a MultiList built once
  torch foreach         vector_norm(stack(_foreach_norm(xs, 2)), 2)
Timings: back to back (CUDA events around ITERS calls, divided: the host's cost per call shows
when it exceeds the GPU's), and each method captured once in a CUDA graph and replayed ITERS
times.  Every method's total is checked against a float64 reference.
Usage: PYTHONPATH=tools/python REDJIT_LIBRARY=build/libredjit.so python3 bench/multi_peers.py
       [--iters N]"""
import argparse
import math
import random

import torch

import redjit


def gpt2_shapes(layers=12, d=768, vocab=50257, ctx=1024):
    s = [(vocab, d), (ctx, d)]
    for _ in range(layers):
        s += [(d,), (d,), (d, 3 * d), (3 * d,), (d, d), (d,), (d,), (d,), (d, 4 * d), (4 * d,),
              (4 * d, d), (d,)]
    return s + [(d,), (d,)]


def mixed_shapes(n=2000, seed=7):
    r = random.Random(seed)
    return [(int(2 ** r.uniform(0, 18)),) for _ in range(n)]


def make(shapes, dt, seed=1):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return [(torch.randn(s, device="cuda", generator=g) * 0.02).to(dt) for s in shapes]


def torch_norm(xs):
    return torch.linalg.vector_norm(torch.stack(torch._foreach_norm(xs, 2.0)), 2.0)


def methods(xs):
    out = torch.empty((), device="cuda", dtype=xs[0].dtype)
    m = redjit.MultiList(xs)
    return {
        "redjit multi_reduce": lambda: redjit.multi_reduce(xs, "norm", total=True,
                                                           per_tensor=False, total_out=out),
        "redjit MultiList": lambda: m.reduce("norm", total=True, per_tensor=False,
                                             total_out=out),
        "torch foreach": lambda: torch_norm(xs),
    }


def back_to_back(fn, iters):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e3 / iters


def graphed(fn, iters):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            fn()
    except Exception as e:  # noqa: BLE001 - report, do not stop the table
        return float("nan"), f"capture failed: {type(e).__name__}: {e}"
    for _ in range(5):
        g.replay()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        g.replay()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e3 / iters, ""


def check(fn, xs):
    want = math.sqrt(sum(float((x.double() ** 2).sum()) for x in xs))
    got = fn()
    torch.cuda.synchronize()
    got = float(got.double())
    return abs(got - want) / want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200)
    it = ap.parse_args().iters
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, redjit "
          f"{redjit.version()}; us per call (total L2 norm), {it} calls")
    print(f"{'list':<22} {'dtype':<5} {'method':<20} {'back-to-back':>12} {'graph':>9} "
          f"{'GB/s (graph)':>12} {'rel.err':>9} {'vs torch':>9}")
    for name, shapes in (("gpt2-124M (148)", gpt2_shapes()), ("mixed 2000", mixed_shapes())):
        for dt in (torch.float32, torch.bfloat16):
            xs = make(shapes, dt)
            nbytes = sum(x.numel() for x in xs) * xs[0].element_size()
            rows, ms = [], methods(xs)
            for meth, fn in ms.items():
                err = check(fn, xs)
                b2b = back_to_back(fn, it)
                gr, why = graphed(fn, it)
                rows.append((meth, b2b, gr, err, why))
            tb = [r for r in rows if r[0] == "torch foreach"][0]
            for meth, b2b, gr, err, why in rows:
                gbs = nbytes / (gr * 1e-6) / 1e9 if gr == gr else float("nan")
                print(f"{name:<22} {str(dt)[6:]:<5} {meth:<20} {b2b:>12.1f} {gr:>9.1f} "
                      f"{gbs:>12.0f} {err:>9.1e} {tb[1] / b2b:>8.2f}x {why}")


if __name__ == "__main__":
    main()
