"""What bench/push_probe.py, bench/ring_probe.py and bench/tma_probe.py share: CuPy's runtime,
the GPU count, the bytes per rank from argv[1] (MiB, default 1024), peer access enabled between
every pair that allows it, and the timer of the ring probes."""
import statistics
import sys
import time

import cupy as cp

rt = cp.cuda.runtime
G = rt.getDeviceCount()
S = (int(sys.argv[1]) if len(sys.argv) > 1 else 1024) << 20
for _i in range(G):
    with cp.cuda.Device(_i):
        for _j in range(G):
            if _i != _j and rt.deviceCanAccessPeer(_i, _j):
                rt.deviceEnablePeerAccess(_j)


def sync_all():
    for i in range(G):
        cp.cuda.Device(i).synchronize()


def timed(fn, flags, reps=7):
    """The median host time of fn() over reps runs but the first, each started with every GPU
    idle and each GPU's flags (a CuPy array per GPU) zeroed."""
    times = []
    for _ in range(reps):
        for i in range(G):
            with cp.cuda.Device(i):
                flags[i].fill(0)
        sync_all()
        t0 = time.perf_counter()
        fn()
        sync_all()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:])
