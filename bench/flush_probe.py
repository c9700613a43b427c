#!/usr/bin/env python3
"""Benchmark probe: how much of a do_bench number is the L2 flush's dirty write-back?

triton.testing.do_bench flushes L2 by writing 256 MB of zeros before every timed run, so every
timed kernel starts with L2 full of dirty lines and pays their write-back as it allocates its own
lines.  This times the same functions three ways (median of events around each call):
  zero  - do_bench's flush (cache.zero_() of 256 MB), then the call
  read  - the same 256 MB *read* (cache.sum()) instead: L2 is flushed but clean
  none  - no flush; inputs rotated through >= 256 MB so nothing is L2-resident
and prints µs per case for copy, cupy.sum, ours (rj_reduce), and an empty-ish launch.
Usage: flush_probe.py LIBREDJIT cases.txt"""
import ctypes, sys, statistics
import torch

try:
    import cupy
except Exception:  # noqa
    cupy = None
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from peers import Redjit, DT  # noqa: E402

CACHE = torch.empty(256 << 20, dtype=torch.int8, device="cuda")


def timed(fns, flush, reps=60):
    """fns: list of callables (rotated); returns the median µs."""
    s = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    e = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(10):
        fns[i % len(fns)]()
    for i in range(reps):
        if flush == "zero":
            CACHE.zero_()
        elif flush == "read":
            CACHE.sum(dtype=torch.int32)
        s[i].record()
        fns[i % len(fns)]()
        e[i].record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in zip(s, e)) * 1e3


def main():
    rj = Redjit(sys.argv[1])
    cases = [l.split() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
    tiny = torch.empty(1, device="cuda")
    print("| case | flush | empty µs | copy µs | cupy µs | ours µs | ours/copy (rate) |")
    print("|---|---|---|---|---|---|---|")
    for name, dt, op, axes, shape in cases:
        shape = [int(x) for x in shape.split(",")]
        ax = [int(a) for a in axes.split(",")]
        t = DT[dt]
        nbytes = 1
        for d in shape:
            nbytes *= d
        nbytes *= torch.tensor([], dtype=t).element_size()
        nset = max(1, min(16, (256 << 20) // max(nbytes, 1)))
        xs = []
        for _ in range(nset):
            if t.is_floating_point:
                xs.append(torch.rand(shape, device="cuda").to(t))
            else:
                xs.append(torch.randint(-100, 101, shape, device="cuda", dtype=t))
        kept = [s for i, s in enumerate(shape) if i not in ax] or [1]
        y = torch.empty(kept, device="cuda", dtype=t)
        xc = torch.empty_like(xs[0])
        req = rj.request('{"kind":"tensor","op":"%s","dtype":"%s","shape":%s,"axes":%s}'
                         % (op, dt, shape, ax))
        cx = [cupy.asarray(x) for x in xs] if cupy is not None and dt != "bf16" else None
        cf = {"sum": "sum", "max": "max", "min": "min"}[op]
        for flush in ("zero", "read", "none"):
            r = {}
            r["empty"] = timed([lambda: tiny.zero_()], flush)
            r["copy"] = timed([lambda x=x: xc.copy_(x) for x in xs], flush)
            if cx:
                r["cupy"] = timed([lambda c=c: getattr(cupy, cf)(c, axis=tuple(ax)) for c in cx], flush)
            r["ours"] = timed([lambda x=x: rj.reduce(req, x, y) for x in xs], flush)
            # rate ratio: ours reads nbytes, copy moves 2*nbytes
            ratio = (nbytes / r["ours"]) / (2 * nbytes / r["copy"])
            c = f"{r['cupy']:.1f}" if "cupy" in r else "—"
            print(f"| {name} | {flush} | {r['empty']:.1f} | {r['copy']:.1f} | {c} | {r['ours']:.1f} | {ratio:.2f} |",
                  flush=True)
        del xs, y, xc, cx
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
