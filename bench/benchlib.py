"""What the Python peer benchmarks (fused_peers.py, segmented_peers.py, state_ops_peers.py) share:
finding the redjit package and library of this checkout, and the two timings of the docs'
method (docs/PERFORMANCE.md): "flushed" (triton.testing.do_bench's median, L2 flushed before
every run) and "steady" (back-to-back calls over inputs rotated through >= 2 GiB, CUDA events
around the whole loop, the median of three loops)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
STEADY_BYTES = 2 << 30  # the rotated inputs of "steady" span at least this


def use_checkout():
    """Puts this checkout's Python package first on sys.path and, unless REDJIT_LIBRARY is set,
    points it at carry/ or build/'s libredjit (the first that exists)."""
    sys.path.insert(0, os.path.join(REPO, "tools", "python"))
    if os.environ.get("REDJIT_LIBRARY"):
        return
    for cand in ("carry/libredjit.so.0.2", "build/libredjit.so.0.2"):
        if os.path.exists(os.path.join(REPO, cand)):
            os.environ["REDJIT_LIBRARY"] = os.path.join(REPO, cand)
            return


def names(ap, value, known, flag):
    """An option's comma-separated value as a list, each a name of known (else ap.error naming
    the option)"""
    out = value.split(",")
    for v in out:
        if v not in known:
            ap.error(f"{flag}: unknown {v!r} (one of {', '.join(known)})")
    return out


def flushed(torch, triton, fn, warmup=25, rep=100):
    """ms: triton.testing.do_bench's median (L2 flushed before each run), or without triton the
    same by hand: 256 MiB written before each of 30 runs, CUDA events around each."""
    if triton is not None:
        return triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median")
    junk = torch.empty(64 << 20, dtype=torch.int32, device="cuda")
    times = []
    for i in range(35):
        junk.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        if i >= 5:
            times.append(s.elapsed_time(e))
    return sorted(times)[len(times) // 2]


def steady(torch, fn, items, reps, loops=3):
    """ms per call: the median of `loops` timed loops, each reps calls of fn(item) back to back
    over the rotated items with CUDA events around the whole loop (3 calls first, not timed); the
    median keeps one disturbed loop (a clock change, another process) out of the figure"""
    for i in range(3):
        fn(items[i % len(items)])
    torch.cuda.synchronize()
    per_call = []
    for _ in range(loops):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for i in range(reps):
            fn(items[i % len(items)])
        e.record()
        torch.cuda.synchronize()
        per_call.append(s.elapsed_time(e) / reps)
    return sorted(per_call)[len(per_call) // 2]
