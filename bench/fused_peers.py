#!/usr/bin/env python3
"""Fused maps against their peers: redjit's dot, dot_ir (the same with the product as a caller's
map in LLVM IR: its cost beside the built-in map), norm (p = 2, summed in f64), norm_f32 (the
same with "acc_dtype": "f32", the peers' accumulator: f32 squares, which overflow past 1.8e19),
sumsq, masked_sum, masked_mean and mse (through the Python package: redjit.dot / norm / reduce) against redjit's
plain sum of the same shape, torch's unfused expressions ((x * y).sum(dim), (x * x).sum(dim),
torch.where(m, x, 0).sum(dim), ...), torch's fused functions where they exist (torch.dot,
torch.linalg.vecdot, torch.linalg.vector_norm, torch.nn.functional.mse_loss), a CuPy
ReductionKernel of the same expression, and a small Triton kernel written for the case; on
4096 x 4096 and 65536 x 128 along rows (axis 1), and 1-D 2^24 and 2^28 (full reductions).

GB/s count every input read once (x, and y or the uint8 mask) and the output written once.
"ours / sum" is the op's rate over redjit's plain sum of x alone on the same shape and timing,
the sum timed again in the op's own rounds (the rate of reading bytes: the goal is >= 0.95).
"ours / best peer" is over the fastest peer.

Two timings per function, as bench/peers.py and bench/state_ops_peers.py take them:
  flushed  triton.testing.do_bench: median, L2 flushed (256 MB of zeros) before every run; the
           median of --rounds such runs (default 3), each function's taken in turn with the
           others' of its row (so a drift of the GPU's clocks falls on every function alike);
  steady   back-to-back calls over inputs rotated through >= 2 GiB (nothing L2-resident), CUDA
           events around the whole loop, the median of three loops: the time per call a
           pipeline of reductions sees.
Each redjit result is checked against torch's float64 reference before timing (f32: relative
1e-4 of the largest |value|; bf16 / f16: 2e-2); a wrong one prints "NO" in column ok.

The Triton kernels: one program per row (BLOCK columns a step, f32 accumulator) for the 2-D
shapes; 1-D: programs of 64 Ki elements each, their partials added by tl.atomic_add into one f32
(so each 1-D call also zeroes it, and norm / mse take one more tiny kernel, sqrt / divide).

Run on a GPU machine from the repository root, after scripts/carry.sh on the build machine:
  REDJIT_LIBRARY=carry/libredjit.so.0.2 PYTHONPATH=tools/python python3 bench/fused_peers.py
Options: --shapes rows,tall,1d24,1d28 (a subset), --ops sum,dot,... (a subset), --dtype f32 |
bf16 | f16 (default f32), --reps N (steady calls per rotation set, default 200), --rounds R
(flushed runs per function, default 3), --dry (no GPU,
no torch: compiles every redjit request of the run for sm_90 and prints the plan).
"""
import argparse
import datetime
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import STEADY_BYTES, flushed, names, steady, use_checkout  # noqa: E402

use_checkout()

import redjit  # noqa: E402

SHAPES = {  # name: (shape, axes)
    "rows": ([4096, 4096], [1]),
    "tall": ([65536, 128], [1]),
    "1d24": ([1 << 24], [0]),
    "1d28": ([1 << 28], [0]),
}
OPS = ["sum", "dot", "dot_ir", "norm", "norm_f32", "sumsq", "masked_sum", "masked_mean", "mse"]
TWO = {"dot": "y", "dot_ir": "y", "mse": "y", "masked_sum": "m", "masked_mean": "m"}  # input 2
# dot_ir: the dot with the product as the caller's map (LLVM IR): its cost beside dot's built-in
# map (the goal: within 3 %); f32 only (the IR's types)
MUL_IR = ("define float @mul(float %x, float %y) {\n  %r = fmul float %x, %y\n"
          "  ret float %r\n}\n")
TRITON_OP = {"dot": 0, "dot_ir": 0, "sumsq": 1, "norm": 2, "norm_f32": 2, "masked_sum": 3,
             "masked_mean": 4, "mse": 5}


def request(op, shape, axes, dtype):
    r = {"kind": "tensor", "op": op, "dtype": dtype, "shape": shape, "axes": axes}
    if op in TWO:
        r["others"] = [{"dtype": dtype if TWO[op] == "y" else "u8"}]
    if op == "dot_ir":
        r.update(op="sum", map={"ir": MUL_IR, "function": "mul"})
    if op == "norm_f32":
        r.update(op="norm", acc_dtype="f32")
    return r


def dry(args):
    print(f"dry run (no GPU): redjit {redjit.version()} from {redjit.library_path()}\n")
    print("| shape | axes | op | variant | grid x block |")
    print("|---|---|---|---|---|")
    for s in args.shapes:
        shape, axes = SHAPES[s]
        for op in args.ops:
            k = redjit.compile(request(op, shape, axes, args.dtype), target="sm_90")
            print(f"| {shape} | {axes} | {op} | {k.variant} | {k.grid[0]} x {k.block[0]} |")
    print("\nevery request compiled; run without --dry on a GPU machine for the timings")


def ours(op, axes):
    """fn(item) -> out: redjit's call for op"""
    ax = tuple(axes)

    def call(it):
        x, o = it["x"], it["out"]
        if op == "sum":
            return redjit.reduce(x, "sum", ax, out=o)
        if op == "dot":
            return redjit.dot(x, it["y"], ax, out=o)
        if op == "dot_ir":
            return redjit.reduce(x, "sum", ax, others=(it["y"],), out=o,
                                 map={"ir": MUL_IR, "function": "mul"})
        if op == "norm":
            return redjit.norm(x, 2, ax, out=o)
        if op == "norm_f32":  # the peers' accumulator: f32 squares (may overflow)
            return redjit.reduce(x, "norm", ax, out=o, acc_dtype="f32")
        if op == "sumsq":
            return redjit.reduce(x, "sumsq", ax, out=o)
        other = it["y"] if TWO[op] == "y" else it["m"]
        return redjit.reduce(x, op, ax, others=(other,), out=o)
    return call


def reference(torch, op, it, dim):
    x = it["x"].double()
    y = it["y"].double()
    m = it["mb"]
    return {"sum": lambda: x.sum(dim), "dot": lambda: (x * y).sum(dim),
            "dot_ir": lambda: (x * y).sum(dim),
            "norm": lambda: torch.linalg.vector_norm(x, 2, dim),
            "norm_f32": lambda: torch.linalg.vector_norm(x, 2, dim), "sumsq": lambda: (x * x).sum(dim),
            "masked_sum": lambda: torch.where(m, x, 0).sum(dim),
            "masked_mean": lambda: torch.where(m, x, 0).sum(dim) / m.sum(dim),
            "mse": lambda: ((x - y) ** 2).mean(dim)}[op]()


def torch_peers(torch, op, dim, one_d):
    """name -> fn(item): torch's unfused expression, and its fused function where there is one"""
    F = torch.nn.functional
    p = {}
    if op == "sum":
        p["torch"] = lambda it: torch.sum(it["x"], dim=dim)
    elif op in ("dot", "dot_ir"):
        p["torch unfused"] = lambda it: (it["x"] * it["y"]).sum(dim)
        p["torch fused"] = ((lambda it: torch.dot(it["x"], it["y"])) if one_d else
                            (lambda it: torch.linalg.vecdot(it["x"], it["y"], dim=dim)))
    elif op in ("norm", "norm_f32"):
        p["torch unfused"] = lambda it: (it["x"] * it["x"]).sum(dim).sqrt()
        p["torch fused"] = lambda it: torch.linalg.vector_norm(it["x"], 2, dim)
    elif op == "sumsq":
        p["torch unfused"] = lambda it: (it["x"] * it["x"]).sum(dim)
    elif op == "masked_sum":
        p["torch unfused"] = lambda it: torch.where(it["mb"], it["x"], 0).sum(dim)
    elif op == "masked_mean":
        p["torch unfused"] = lambda it: (torch.where(it["mb"], it["x"], 0).sum(dim) /
                                         it["mb"].sum(dim))
    elif op == "mse":
        p["torch unfused"] = lambda it: ((it["x"] - it["y"]) ** 2).mean(dim)
        if one_d:
            p["torch fused"] = lambda it: F.mse_loss(it["x"], it["y"])
    return p


def cupy_peer(cupy, op, dim):
    """fn(item) -> a CuPy ReductionKernel of op's expression (None: no such kernel)"""
    RK = cupy.ReductionKernel
    k = {"sum": RK("T x", "T z", "x", "a + b", "z = a", "0", "rj_sum"),
         "dot": RK("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "rj_dot"),
         "dot_ir": RK("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "rj_dot"),
         "norm": RK("T x", "T z", "(float)x * (float)x", "a + b", "z = sqrt(a)", "0", "rj_nrm2"),
         "norm_f32": RK("T x", "T z", "(float)x * (float)x", "a + b", "z = sqrt(a)", "0",
                        "rj_nrm2"),
         "sumsq": RK("T x", "T z", "x * x", "a + b", "z = a", "0", "rj_sumsq"),
         "masked_sum": RK("T x, M m", "T z", "m ? x : T(0)", "a + b", "z = a", "0", "rj_msum"),
         "mse": RK("T x, T y", "T z", "(x - y) * (x - y)", "a + b",
                   "z = a / (_in_ind.size() / _out_ind.size())", "0", "rj_mse")}.get(op)
    if op == "masked_mean":  # a (sum, count) pair: two sums of one expression each
        s = RK("T x, M m", "float32 z", "m ? (float)x : 0.0f", "a + b", "z = a", "0", "rj_msum2")
        c = RK("M m", "float32 z", "m ? 1.0f : 0.0f", "a + b", "z = a", "0", "rj_mcount")
        return lambda it: s(it["cx"], it["cm"], axis=dim) / c(it["cm"], axis=dim)
    if k is None:
        return None
    if op in TWO:
        return lambda it: k(it["cx"], it["cy"] if TWO[op] == "y" else it["cm"], axis=dim)
    return lambda it: k(it["cx"], axis=dim)


def triton_kernels(triton, tl):
    @triton.jit
    def rows(X, Y, Z, N, OP: tl.constexpr, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        cnt = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, N, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            ok = cols < N
            x = tl.load(X + row * N + cols, mask=ok, other=0).to(tl.float32)
            if OP == 0:
                v = x * tl.load(Y + row * N + cols, mask=ok, other=0).to(tl.float32)
            elif OP == 1 or OP == 2:
                v = x * x
            elif OP == 3 or OP == 4:
                on = tl.load(Y + row * N + cols, mask=ok, other=0) != 0
                v = tl.where(on, x, 0.0)
                cnt += on.to(tl.float32)
            else:
                d = x - tl.load(Y + row * N + cols, mask=ok, other=0).to(tl.float32)
                v = d * d
            acc += v
        s = tl.sum(acc, 0)
        if OP == 2:
            s = tl.sqrt(s)
        if OP == 4:
            s = s / tl.sum(cnt, 0)
        if OP == 5:
            s = s / N
        tl.store(Z + row, s)

    @triton.jit
    def flat(X, Y, Z, C, N, OP: tl.constexpr, BLOCK: tl.constexpr, ITERS: tl.constexpr):
        base = tl.program_id(0).to(tl.int64) * BLOCK * ITERS
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        cnt = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(ITERS):
            idx = base + i * BLOCK + tl.arange(0, BLOCK)
            ok = idx < N
            x = tl.load(X + idx, mask=ok, other=0).to(tl.float32)
            if OP == 0:
                v = x * tl.load(Y + idx, mask=ok, other=0).to(tl.float32)
            elif OP == 1 or OP == 2:
                v = x * x
            elif OP == 3 or OP == 4:
                on = tl.load(Y + idx, mask=ok, other=0) != 0
                v = tl.where(on, x, 0.0)
                cnt += on.to(tl.float32)
            else:
                d = x - tl.load(Y + idx, mask=ok, other=0).to(tl.float32)
                v = d * d
            acc += v
        tl.atomic_add(Z, tl.sum(acc, 0))
        if OP == 4:
            tl.atomic_add(C, tl.sum(cnt, 0))

    return rows, flat


def triton_peer(torch, triton, kernels, op, shape):
    """fn(item) for op on shape (f32 result, as redjit's of f32)"""
    rows, flat = kernels
    code = TRITON_OP.get(op, 1)
    if len(shape) == 2:
        M, N = shape
        block = min(1024, triton.next_power_of_2(N))

        def call2(it):
            z = it["tz"]
            other = it["y"] if TWO.get(op) == "y" else it["m"]
            rows[(M,)](it["x"], other, z, N, OP=code, BLOCK=block)
            return z
        return None if op == "sum" else call2
    n = shape[0]
    BLOCK, ITERS = 1024, 64
    grid = (triton.cdiv(n, BLOCK * ITERS),)

    def call1(it):
        z, c = it["tz"], it["tc"]
        z.zero_()
        if op == "masked_mean":
            c.zero_()
        other = it["y"] if TWO.get(op) == "y" else it["m"]
        flat[grid](it["x"], other, z, c, n, OP=code, BLOCK=BLOCK, ITERS=ITERS)
        if op in ("norm", "norm_f32"):
            return z.sqrt()
        if op == "masked_mean":
            return z / c
        if op == "mse":
            return z / n
        return z
    return None if op == "sum" else call1


def close(torch, got, ref, dtype):
    g, r = got.reshape(ref.shape).double(), ref
    tol = 1e-4 if dtype == "f32" else 2e-2
    scale = max(1e-30, float(r.abs().nan_to_num(0).max()))
    nan = torch.isnan(r)
    return bool((torch.isnan(g) == nan).all()) and bool(((g - r).abs()[~nan] <= tol * scale).all())


def make_items(torch, cupy, shape, dims, tdt, nbytes_per_set):
    nset = max(2, -(-STEADY_BYTES // nbytes_per_set))
    kept = [s for i, s in enumerate(shape) if i not in dims]
    items = []
    for _ in range(nset):
        x = torch.randn(shape, device="cuda").to(tdt)
        y = torch.randn(shape, device="cuda").to(tdt)
        m = (torch.rand(shape, device="cuda") > 0.5).to(torch.uint8)
        it = {"x": x, "y": y, "m": m, "mb": m.bool(),
              "out": torch.empty(kept, device="cuda", dtype=tdt),
              "tz": torch.empty(kept or [1], device="cuda", dtype=torch.float32),
              "tc": torch.empty([1], device="cuda", dtype=torch.float32)}
        if cupy is not None:
            it.update(cx=cupy.asarray(x) if tdt != torch.bfloat16 else None, cy=cupy.asarray(y)
                      if tdt != torch.bfloat16 else None, cm=cupy.asarray(m))
        items.append(it)
    return items


def time_all(torch, triton, fns, items, reps, rounds):
    """ms per call of each fn: "NAME" flushed, the median of `rounds` do_bench runs taken in turn
    with every other fn's (round 1 of each, then round 2, ...: a drift of the clocks falls on all
    alike); "NAME steady", steady's median of three loops"""
    runs = {name: [] for name in fns}
    for _ in range(rounds):
        for name, f in fns.items():
            runs[name].append(flushed(torch, triton, lambda f=f: f(items[0])))
    res = {name: sorted(t)[len(t) // 2] for name, t in runs.items()}
    for name, f in fns.items():
        res[name + " steady"] = steady(torch, f, items, reps)
    return res


def run_shape(torch, triton, kernels, cupy, args, name):
    shape, axes = SHAPES[name]
    dim, one_d = axes[0], len(shape) == 1
    tdt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    esz = torch.tensor([], dtype=tdt).element_size()
    n = math.prod(shape)
    kept = [s for i, s in enumerate(shape) if i not in axes]
    outb = esz * max(1, math.prod(kept))
    items = make_items(torch, cupy, shape, axes, tdt, n * (2 * esz + 1))
    for op in args.ops:
        read = n * esz + (n * esz if TWO.get(op) == "y" else n if op in TWO else 0)
        mine = ours(op, axes)
        got = mine(items[0])
        torch.cuda.synchronize()
        ok = close(torch, got, reference(torch, op, items[0], dim), args.dtype)
        fns = {"ours": mine}
        fns.update(torch_peers(torch, op, dim, one_d))
        if cupy is not None and tdt != torch.bfloat16:
            cp = cupy_peer(cupy, op, dim)
            if cp is not None:
                fns["cupy RK"] = cp
        tp = triton_peer(torch, triton, kernels, op, shape)
        if tp is not None:
            fns["triton"] = tp
        if op != "sum":  # the reference rate, timed in the same rounds
            fns["ours sum"] = ours("sum", axes)
        ms = time_all(torch, triton, fns, items, args.reps, args.rounds)
        res = {k: ((n * esz if k.startswith("ours sum") else read) + outb) / (v * 1e6)
               for k, v in ms.items()}  # GB/s
        if op == "sum":
            res["ours sum"], res["ours sum steady"] = res["ours"], res["ours steady"]
        peers = {k: v for k, v in res.items()
                 if not k.startswith("ours") and not k.endswith("steady")}
        best = max(peers, key=peers.get) if peers else None
        rs = res["ours"] / res["ours sum"]
        rss = res["ours steady"] / res["ours sum steady"]
        cell = lambda k: f"{res[k]:.0f}" if k in res else "—"  # noqa: E731
        pk = ["torch unfused", "torch fused", "cupy RK", "triton"]
        cols = " | ".join(f"{cell(k)} / {cell(k + ' steady')}" for k in pk)
        if op == "sum":
            cols = f"{cell('torch')} / {cell('torch steady')} | — | " + " | ".join(
                f"{cell(k)} / {cell(k + ' steady')}" for k in pk[2:])
        vs = f"{res['ours'] / peers[best]:.2f} ({best})" if best else "—"
        print(f"| {name} {shape} | {op} | {res['ours']:.0f} / {res['ours steady']:.0f} | "
              f"{rs:.2f} / {rss:.2f} | {cols} | {vs} | {'yes' if ok else 'NO'} |", flush=True)
    del items
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(
        description="redjit's fused maps (dot, norm, sumsq, masked sum / mean, mse) against "
        "torch, CuPy ReductionKernel and Triton: GB/s, ratio to redjit's sum (docstring: method)")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--dtype", default="f32", choices=("f32", "bf16", "f16"))
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dry", action="store_true")
    args = ap.parse_args()
    args.shapes = names(ap, args.shapes, SHAPES, "--shapes")
    args.ops = names(ap, args.ops, OPS, "--ops")
    args.ops = ["sum"] + [o for o in args.ops if o != "sum"]  # the reference rate first
    if args.dtype != "f32":  # the caller's IR map is written for f32
        args.ops = [o for o in args.ops if o != "dot_ir"]
    if args.dry:
        dry(args)
        return
    import torch
    import triton
    import triton.language as tl
    try:
        import cupy
    except Exception:  # noqa
        cupy = None
    torch.manual_seed(0)
    now = datetime.datetime.now(datetime.timezone.utc)
    print(f"GPU: {torch.cuda.get_device_name()}  date: {now:%Y-%m-%d %H:%M} UTC  torch "
          f"{torch.__version__}  triton {triton.__version__}  cupy "
          f"{cupy.__version__ if cupy else '-'}  redjit {redjit.version()}  dtype {args.dtype}\n")
    print("GB/s flushed / steady (inputs read once + output written once); flushed: do_bench "
          f"median, L2 flushed; steady: back-to-back calls over inputs rotated through >= "
          f"{STEADY_BYTES >> 30} GiB; masks uint8\n")
    print("| shape | op | ours | ours / sum | torch unfused | torch fused | cupy RK | triton | "
          "ours / best peer (flushed) | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    kernels = triton_kernels(triton, tl)
    for s in args.shapes:
        run_shape(torch, triton, kernels, cupy, args, s)


if __name__ == "__main__":
    main()
