"""Host cost per call of a repeated reduction from Python on a GPU: redjit.reduce against
torch.sum and cupy.sum, on tensors where the launch dominates (1 Ki and 1 Mi f32, a full
reduction) and a row reduction (1024 x 1024 f32, axis 1), with out given and allocated, plus the
C call alone (rj_tensor_launch and rj_reduce through ctypes, arguments built beforehand).  Fused
calls on the same cases: redjit.dot, redjit.norm and the masked mean (redjit.reduce(x,
"masked_mean", others=(mask,)); redjit.mean(x, where=mask)) beside torch's fused functions
(torch.linalg.vecdot, torch.linalg.vector_norm) and unfused expressions, and
rj_tensor_launch_n alone.

Method: every call is made 3 times first (compile, load, allocator warm), then timed as REPEATS
runs of N back-to-back calls on the framework's current stream, with time.perf_counter around
each run and no synchronisation inside it (the device is synchronised between runs, outside the
timing); a call's cost is the run's time / N, and the table gives the median and the best run.
Nothing is subtracted.  The GPU keeps up with these kernels, so the figure is the host's work per
call (the launch included); a kernel slower than the host would show its own time instead.
After timing, each case's redjit result is checked against torch's.

Run on a GPU machine, from the repository root where scripts/carry.sh put the library:
  REDJIT_LIBRARY=carry/libredjit.so.0.2 PYTHONPATH=tools/python python3 bench/python_host_cost.py
(REDJIT_LIBRARY defaults to carry/libredjit.so.0.2, then build/libredjit.so.0.2, when unset.)  The
package imported is the first redjit on PYTHONPATH, then this tree's tools/python: pointing
PYTHONPATH and REDJIT_LIBRARY at another checkout's measures that version with the same script.
Environment: N (default 2000), REPEATS (default 15).
"""
import ctypes
import datetime
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import use_checkout  # noqa: E402

use_checkout()

import redjit  # noqa: E402

N = int(os.environ.get("N", "2000"))
REPEATS = int(os.environ.get("REPEATS", "15"))


def timed(fn, sync):
    for _ in range(3):
        fn()
    sync()
    runs = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        for _ in range(N):
            fn()
        runs.append((time.perf_counter() - t) / N * 1e6)
        sync()
    return statistics.median(runs), min(runs)


def bare_calls(torch, x, y, axis):
    """The C entry points alone, through ctypes, their arguments built beforehand."""
    c = redjit._ctx()
    axes = tuple(range(x.dim())) if axis is None else (axis,)
    rq = redjit.tensor_request(tuple(x.shape), None, axes, "f32")
    k = redjit.compile(rq, device=x.get_device())
    kp, xp, yp = ctypes.c_void_p(k._ptr), x.data_ptr(), y.data_ptr()
    st = torch.cuda.current_stream().cuda_stream
    req = c.parse(rq)
    dev = x.get_device()
    opts = c.options(dev)
    cp = ctypes.c_void_p(c.ptr)
    reduce_ = c.L.rj_reduce
    out = [("rj_reduce alone (ctypes)", lambda: reduce_(cp, req, opts, xp, yp, st))]
    launch = getattr(c, "launch", None)  # a package before rj_tensor_launch has none
    if launch is not None:
        out.insert(0, ("rj_tensor_launch alone (ctypes)",
                       lambda: launch(cp, kp, dev, xp, yp, st)))
    return out


def fused_calls(torch, cupy, x, axis, y, kept):
    """(label, redjit call, torch call or None) for the fused ops on x: the redjit call writes y,
    the torch one returns its result (checked against y after timing)."""
    dim = tuple(range(x.dim())) if axis is None else axis
    vdim = -1 if axis is None else axis  # vecdot: one dim (the 1-D cases have one)
    w = torch.randn_like(x)
    m = torch.rand(x.shape, device="cuda") > 0.5
    mu = m.to(torch.uint8)
    yt = torch.empty(kept, device="cuda")
    out = [("redjit.dot(x, w, out=y)", lambda: redjit.dot(x, w, axis, out=y),
            lambda: (x * w).sum(dim)),
           ("torch.linalg.vecdot(x, w, out=)", lambda: torch.linalg.vecdot(x, w, dim=vdim,
                                                                          out=yt), None),
           ("(x * w).sum(dim)", lambda: (x * w).sum(dim), None),
           ("redjit.norm(x, 2, out=y)", lambda: redjit.norm(x, 2, axis, out=y),
            lambda: torch.linalg.vector_norm(x, 2, dim)),
           ("torch.linalg.vector_norm(x, 2, out=)",
            lambda: torch.linalg.vector_norm(x, 2, dim, out=yt), None),
           ("redjit.reduce(x, \"masked_mean\", others=(m,), out=y)",
            lambda: redjit.reduce(x, "masked_mean", axis, others=(mu,), out=y),
            lambda: torch.where(m, x, 0).sum(dim) / m.sum(dim)),
           ("redjit.mean(x, where=m)", lambda: redjit.mean(x, axis=axis, where=m), None),
           ("torch.where(m, x, 0).sum(dim) / m.sum(dim)",
            lambda: torch.where(m, x, 0).sum(dim) / m.sum(dim), None)]
    if cupy is not None:
        xc, wc, yc = cupy.asarray(x), cupy.asarray(w), cupy.asarray(y)
        out.append(("redjit.dot(x, w, out=y), CuPy arrays",
                    lambda: redjit.dot(xc, wc, axis, out=yc), None))
    c = redjit._ctx()
    launch_n = getattr(c, "launch_n", None)  # a package before the fused memo has none
    if launch_n is not None:
        redjit.dot(x, w, axis, out=y)
        e = [v for k, v in c.memo.items() if k[0] == "fused torch" and k[6] == "dot"][-1]
        k, dev, _, arr, n = e
        arr[0] = w.data_ptr()
        cp, xp, yp = ctypes.c_void_p(c.ptr), x.data_ptr(), y.data_ptr()
        st = torch.cuda.current_stream().cuda_stream
        out.append(("rj_tensor_launch_n alone (ctypes), dot",
                    lambda: launch_n(cp, k, dev, xp, arr, n, yp, 0, st), None))
    return out


def main():
    try:
        import torch
    except ImportError as e:
        sys.exit(f"python_host_cost: torch is not importable ({e})")
    if not torch.cuda.is_available():
        sys.exit("python_host_cost: torch sees no CUDA GPU")
    try:
        import cupy
    except ImportError:
        cupy = None
    sync = torch.cuda.synchronize
    cases = [("1 Ki f32, full", (1024,), None), ("1 Mi f32, full", (1 << 20,), None),
             ("1024 x 1024 f32, rows", (1024, 1024), 1)]
    rows, bad = [], []
    for name, shape, axis in cases:
        x = torch.randn(*shape, device="cuda")
        kept = () if axis is None else tuple(n for i, n in enumerate(shape) if i != axis)
        y, yt = torch.empty(kept, device="cuda"), torch.empty(kept, device="cuda")
        dim = tuple(range(x.dim())) if axis is None else axis
        calls = [("redjit.reduce(x, out=y)", lambda: redjit.reduce(x, "sum", axis, out=y)),
                 ("redjit.reduce(x)", lambda: redjit.reduce(x, "sum", axis)),
                 ("torch.sum(x, dim, out=y)", lambda: torch.sum(x, dim, out=yt)),
                 ("torch.sum(x, dim)", lambda: torch.sum(x, dim))]
        if cupy is not None:
            xc = cupy.asarray(x)  # the same memory, through __cuda_array_interface__
            yc = cupy.empty(kept, dtype=cupy.float32)
            calls += [("cupy.sum(x, axis, out=y)", lambda: cupy.sum(xc, axis, out=yc)),
                      ("redjit.reduce(x, out=y), CuPy arrays",
                       lambda: redjit.reduce(xc, "sum", axis, out=yc))]
        calls += bare_calls(torch, x, y, axis)
        for label, fn in calls:
            med, best = timed(fn, sync)
            rows.append((name, label, med, best))
        for label, fn, ref in fused_calls(torch, cupy, x, axis, y, kept):
            med, best = timed(fn, sync)
            rows.append((name + ", fused", label, med, best))
            if ref is not None:
                fn()
                want = ref()
                sync()
                if not torch.allclose(y, want, rtol=1e-4, atol=1e-3):
                    bad.append(f"{name} {label}")
        redjit.reduce(x, "sum", axis, out=y)
        torch.sum(x, dim, out=yt)
        sync()
        if not torch.allclose(y, yt, rtol=1e-4, atol=1e-3):
            bad.append(name)
    dev = torch.cuda.get_device_name()
    print(f"{datetime.date.today()}, {dev}, python {sys.version.split()[0]}, torch "
          f"{torch.__version__}" + (f", cupy {cupy.__version__}" if cupy else ", no cupy") +
          f", redjit {redjit.version()} ({redjit.library_path()})")
    print(f"median and best of {REPEATS} runs of {N} calls each, no synchronisation inside a run\n")
    print("| case | call | host µs per call (median) | best run |")
    print("| --- | --- | --- | --- |")
    for name, label, med, best in rows:
        print(f"| {name} | `{label}` | {med:.1f} | {best:.1f} |")
    if bad:
        sys.exit(f"python_host_cost: redjit differs from torch in: {', '.join(bad)}")


if __name__ == "__main__":
    main()
