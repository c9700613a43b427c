"""What bench/push_probe.py and bench/ring_probe.py share: CuPy's runtime, the GPU count, the
bytes per rank from argv[1] (MiB, default 1024), and peer access enabled between every pair
that allows it."""
import sys

import cupy as cp

rt = cp.cuda.runtime
G = rt.getDeviceCount()
S = (int(sys.argv[1]) if len(sys.argv) > 1 else 1024) << 20
for _i in range(G):
    with cp.cuda.Device(_i):
        for _j in range(G):
            if _i != _j and rt.deviceCanAccessPeer(_i, _j):
                rt.deviceEnablePeerAccess(_j)
