#!/usr/bin/env python3
"""Segmented reductions against their peers: redjit's "segments" requests (rj_reduce_segments
through ctypes, the request parsed once: no Python argument handling in the timed call) against
torch.segment_reduce (offsets) and CUB's DeviceSegmentedReduce without a hint
(bench/cub_segmented.cu, built with nvcc at the start of the run when nvcc is there; its result
is checked too), and, where every segment has one length and the CUB has CCCL 3's fixed-size
overload (CCCL 3.1 or later: CUDA 13.0 ships 3.0, so set REDJIT_BENCH_CCCL to a newer CCCL
checkout whose cub/, thrust/ and libcudacxx/include/ nvcc then reads first), CUB given that exact
length ("cub exact": its fastest path for the case; not counted as the best peer, which is the best
without a hint).  f32 over N = 2^26 elements (256 MiB) by default, cut into segments of one
length each (1, 8, 64, 1 Ki, 64 Ki, 16 Mi) and a power-law mix (lengths drawn
from a Pareto law, alpha 1.2, from 1 to 16 Mi, shuffled; "mix-sorted": the same lengths longest
first); int32 offsets for redjit, int64 for torch (what it takes).

Two timings per function, as bench/state_ops_peers.py takes them:
  flushed  triton.testing.do_bench: median, L2 flushed before every run;
  steady   back-to-back calls over inputs rotated through >= 2 GiB (nothing L2-resident), CUDA
           events around the whole loop: the time per call a pipeline of reductions sees.
GB/s: "eff" counts the input x alone (the figure the goals are stated in); "all" adds the
offsets read and the outputs written.  Each result is checked against torch's float64 reduction
(rtol 1e-4) before timing.

Run on a GPU machine from the repository root, after scripts/carry.sh on the build machine:
  REDJIT_LIBRARY=carry/libredjit.so.0.2 PYTHONPATH=tools/python python3 bench/segmented_peers.py
Options: --lengths 1,8,64,1024,65536,16777216,mix,mix-sorted (a subset), --ops sum,max,mean, --log2n 26,
--reps N (steady calls per rotation set, default 50), --peers torch,cub,cub_exact (the peers
timed; empty: redjit alone, e.g. to compare two libraries in one call), --dry (no GPU: compiles
every redjit request of the run for sm_90 and prints explain's choice)."""
import argparse
import ctypes
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import HERE, STEADY_BYTES, flushed, steady, use_checkout  # noqa: E402

use_checkout()

import redjit  # noqa: E402

LENGTHS = ["1", "8", "64", "1024", "65536", "16777216", "mix", "mix-sorted"]


def lengths_of(name, n, seed=0):
    """Segment lengths summing to n: all `name` long (the last one shorter), the mix, or the mix
    sorted longest first (mix-sorted: long segments next to each other, as length-sorted or
    bucketed batches have them)."""
    if name == "mix-sorted":
        return sorted(lengths_of("mix", n, seed), reverse=True)
    if name != "mix":
        L = int(name)
        out = [L] * (n // L)
        if n % L:
            out.append(n % L)
        return out
    import random
    rng = random.Random(seed)
    out, left = [], n
    while left > 0:
        L = min(int(rng.paretovariate(1.2)), 1 << 24, left)
        out.append(L)
        left -= L
    rng.shuffle(out)
    return out


def request(op, n, s):
    return {"kind": "tensor", "op": op, "dtype": "f32", "shape": [n],
            "segments": {"count": s, "dtype": "i32"}}


def dry(args):
    n = 1 << args.log2n
    print(f"dry run (no GPU): redjit {redjit.version()} from {redjit.library_path()}\n")
    for name in args.lengths:
        s = len(lengths_of(name, n))
        for op in args.ops:
            t = redjit.explain(request(op, n, s), target="sm_90")
            line = next(x for x in t.splitlines() if " chosen" in x)
            print(f"{name:>9} S={s:<9} {op:<5} {line}")
    print("\nevery request compiled; run without --dry on a GPU machine for the timings")


class Ours:
    """rj_reduce_segments of a request parsed once, on torch's current stream."""

    def __init__(self, torch, op, n, s):
        L = ctypes.CDLL(redjit.library_path())
        self.L, self.torch = L, torch
        L.rj_ctx_new.restype = ctypes.c_void_p
        L.rj_errmsg.restype = ctypes.c_char_p
        L.rj_errmsg.argtypes = [ctypes.c_void_p]
        L.rj_request_parse.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        L.rj_request_size.restype = ctypes.c_size_t
        u64 = ctypes.c_uint64
        L.rj_reduce_segments.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, u64,
                                         u64, u64, u64, ctypes.c_void_p]
        self.ctx = L.rj_ctx_new()
        self.req = ctypes.create_string_buffer(L.rj_request_size())
        if L.rj_request_parse(self.ctx, json.dumps(request(op, n, s)).encode(), self.req):
            raise RuntimeError(L.rj_errmsg(self.ctx).decode())

    def __call__(self, x, off, y):
        s = self.L.rj_reduce_segments(self.ctx, self.req, None, x.data_ptr(), off.data_ptr(),
                                      y.data_ptr(), 0,
                                      self.torch.cuda.current_stream().cuda_stream)
        if s:
            raise RuntimeError(self.L.rj_errmsg(self.ctx).decode())
        return y


def reference(torch, x, lens_t, op):
    return torch.segment_reduce(x.double(), op, lengths=lens_t, unsafe=True)


def cub_peer(torch, op):
    """CUB's DeviceSegmentedReduce (bench/cub_segmented.cu, built here with nvcc into a temporary
    directory, once): fn(x, off32, y), or None with the reason printed."""
    global _CUB
    if op not in ("sum", "max", "min"):
        return None
    if _CUB is None:
        import shutil
        import subprocess
        import tempfile
        _CUB = False
        nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                         if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
        if not nvcc:
            print("(cub: no nvcc: the CUB column is empty)", flush=True)
            return None
        so = os.path.join(tempfile.mkdtemp(), "libcub_segmented.so")
        cccl = os.environ.get("REDJIT_BENCH_CCCL")  # a CCCL checkout's headers, before nvcc's
        inc = [f"-I{cccl}/{d}" for d in ("cub", "thrust", "libcudacxx/include")] if cccl else []
        cmd = [nvcc, "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", *inc, "-o", so,
               os.path.join(HERE, "cub_segmented.cu")]
        r = subprocess.run(cmd[:1] + ["-arch=native"] + cmd[1:], capture_output=True, text=True)
        if r.returncode:  # an nvcc without -arch=native: its default target, JIT-compiled
            r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            print(f"(cub: nvcc failed: {r.stderr.strip()[:200]})", flush=True)
            return None
        L = ctypes.CDLL(so)
        L.cub_segmented_reduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                           ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        L.cub_fixed_reduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong,
                                       ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        _CUB = L
    if not _CUB:
        return None
    code = {"sum": 0, "max": 1, "min": 2}[op]

    def run(x, off, y):
        s = _CUB.cub_segmented_reduce(x.data_ptr(), y.data_ptr(), y.numel(), off.data_ptr(), code,
                                      torch.cuda.current_stream().cuda_stream)
        if s:
            raise RuntimeError(f"cub_segmented_reduce: {s}")
        return y
    return run


def cub_fixed_peer(torch, op, lens):
    """CUB given the exact segment length (its fixed-size overload) where every segment has one
    length: fn(x, y), or None (lengths differ, or this CUB lacks the overload: probed once)."""
    global _FIXED
    if cub_peer(torch, op) is None or len(set(lens)) != 1:
        return None
    code, n = {"sum": 0, "max": 1, "min": 2}[op], lens[0]

    def run(x, y):
        s = _CUB.cub_fixed_reduce(x.data_ptr(), y.data_ptr(), y.numel(), n, code,
                                  torch.cuda.current_stream().cuda_stream)
        if s:
            raise RuntimeError(f"cub_fixed_reduce: {s}")
        return y
    if _FIXED is None:  # one segment of one element
        one = torch.zeros(2, device="cuda")
        s = _CUB.cub_fixed_reduce(one.data_ptr(), one[1:].data_ptr(), 1, 1, code,
                                  torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        _FIXED = s == 0
        if s == -1:
            print("(cub exact: this CUB lacks the fixed-size overload, CCCL < 3.1: set "
                  "REDJIT_BENCH_CCCL to a newer CCCL checkout)", flush=True)
        elif s:
            print(f"(cub exact: cub_fixed_reduce failed: {s})", flush=True)
    return run if _FIXED else None


_CUB = None
_FIXED = None  # the fixed-size overload: None until probed


def run_case(torch, triton, cupy, args, name, op):
    n = 1 << args.log2n
    lens = lengths_of(name, n)
    s = len(lens)
    lens_t = torch.tensor(lens, device="cuda", dtype=torch.int64)
    off64 = torch.zeros(s + 1, device="cuda", dtype=torch.int64)
    off64[1:] = torch.cumsum(lens_t, 0)
    off32 = off64.to(torch.int32)
    nset = max(2, -(-STEADY_BYTES // (4 * n)))
    xs = [torch.rand(n, device="cuda").sub_(0.5) for _ in range(nset)]
    x = xs[0]
    y = torch.empty(s, device="cuda")
    ours = Ours(torch, op, n, s)
    ref = reference(torch, x, lens_t, op)
    got = ours(x, off32, y)
    torch.cuda.synchronize()
    keep = lens_t > 0
    ok = bool(torch.allclose(got.double()[keep], ref[keep], rtol=1e-4, atol=1e-4))
    eff = lambda ms: 4 * n / (ms * 1e6)  # noqa: E731
    allb = lambda ms, ob: (4 * n + ob + 4 * s) / (ms * 1e6)  # noqa: E731
    res = {}
    fns = {"ours": (lambda x: ours(x, off32, y), 4 * (s + 1)),
           "torch": (lambda x: torch.segment_reduce(x, op, offsets=off64, unsafe=True),
                     8 * (s + 1))}
    cub = cub_peer(torch, op) if "cub" in args.peers else None
    if "torch" not in args.peers:
        del fns["torch"]
    if cub is not None:
        yc = torch.empty_like(y)
        fns["cub"] = (lambda x: cub(x, off32, yc), 4 * (s + 1))
        cub(x, off32, yc)
        torch.cuda.synchronize()
        okc = bool(torch.allclose(yc.double()[keep], ref[keep], rtol=1e-4, atol=1e-4))
        if not okc:
            print(f"  (cub {name} {op}: its result differs from torch's float64 reference)")
    fixed = cub_fixed_peer(torch, op, lens) if "cub_exact" in args.peers else None
    if fixed is not None:
        yf = torch.empty_like(y)
        fns["cub_exact"] = (lambda x: fixed(x, yf), 0)
        fixed(x, yf)
        torch.cuda.synchronize()
        if not bool(torch.allclose(yf.double()[keep], ref[keep], rtol=1e-4, atol=1e-4)):
            print(f"  (cub exact {name} {op}: its result differs from torch's float64 reference)")
    for k, (f, ob) in fns.items():
        try:
            ms = flushed(torch, triton, lambda: f(x), warmup=10, rep=50)
            mss = steady(torch, f, xs, args.reps)
            res[k] = (eff(ms), allb(ms, ob), eff(mss), ms * 1e3)
        except Exception as e:  # noqa: a peer that cannot run this case
            res[k] = None
            print(f"  ({k} {name} {op}: {type(e).__name__}: {str(e)[:80]})", flush=True)
    cell = lambda k, i: f"{res[k][i]:.0f}" if res.get(k) else "—"  # noqa: E731
    best = max((v[0] for k, v in res.items() if k not in ("ours", "cub_exact") and v),
               default=None)
    vs = f"{res['ours'][0] / best:.2f}" if best and res.get("ours") else "—"
    ex = res.get("cub_exact")
    vx = f"{res['ours'][0] / ex[0]:.2f}" if ex and res.get("ours") else "—"
    print(f"| {name} | {s} | {op} | {cell('ours', 0)} | {cell('ours', 1)} | {cell('ours', 2)} | "
          f"{cell('ours', 3)} | {cell('torch', 0)} | {cell('torch', 2)} | {cell('cub', 0)} | "
          f"{cell('cub', 2)} | {cell('cub_exact', 0)} | {cell('cub_exact', 2)} | {vs} | {vx} | "
          f"{'yes' if ok else 'NO'} |", flush=True)
    del xs, x, y
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description="redjit's segmented reductions against torch / CUB "
                                 "(docstring: method)")
    ap.add_argument("--lengths", default=",".join(LENGTHS))
    ap.add_argument("--ops", default="sum")
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--peers", default="torch,cub,cub_exact",
                    help="the peers timed beside redjit (comma-separated; empty: none)")
    ap.add_argument("--dry", action="store_true")
    args = ap.parse_args()
    args.peers = [p for p in args.peers.split(",") if p]
    for p in args.peers:
        if p not in ("torch", "cub", "cub_exact"):
            ap.error(f"--peers: unknown {p!r} (torch, cub, cub_exact)")
    args.lengths = args.lengths.split(",")
    args.ops = args.ops.split(",")
    for s in args.lengths:
        if s not in LENGTHS and not s.isdigit():
            ap.error(f"--lengths: unknown {s!r}")
    for o in args.ops:
        if o not in ("sum", "max", "min", "mean", "prod"):
            ap.error(f"--ops: {o!r} is not one torch.segment_reduce has (sum max min mean prod)")
    if args.dry:
        dry(args)
        return
    import torch
    try:
        import triton
    except ImportError:  # flushed timings by the fallback below
        triton = None
    try:
        import cupy
    except Exception:  # noqa
        cupy = None
    torch.manual_seed(0)
    print(f"GPU: {torch.cuda.get_device_name()}  date: "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  torch "
          f"{torch.__version__}  triton "
          f"{triton.__version__ if triton else '- (flushed: own loop)'}  cupy "
          f"{cupy.__version__ if cupy else '-'}  redjit {redjit.version()}\n")
    print(f"f32, N = 2^{args.log2n}; GB/s eff: x read once; all: + offsets + outputs; flushed: "
          f"do_bench median, L2 flushed; steady: inputs rotated through >= "
          f"{STEADY_BYTES >> 30} GiB\n")
    print("| lengths | S | op | ours eff | ours all | ours steady | ours µs | torch eff | "
          "torch steady | cub eff | cub steady | cub exact eff | cub exact steady | "
          "ours / best peer (no hint) | ours / cub exact | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.lengths:
        for op in args.ops:
            run_case(torch, triton, cupy, args, name, op)


if __name__ == "__main__":
    main()
