"""Push vs pull over NVLink for treduce's split traffic, measured with CuPy.

The split path's traffic with one rank on each of G GPUs, root 0 holding no slice: every GPU s
sends slice g (1/(G-1) of its buffer) to every slice owner g != s, and every owner g sends its
slice of partial sums to the root.  Each GPU moves about one buffer each way.  This probe times
that traffic, and a ring (s -> s+1, one buffer each, NCCL's pattern), four ways:
  ce-push  cudaMemcpyPeerAsync on a stream of the sending GPU (its copy engine writes)
  ce-pull  the same on a stream of the receiving GPU (its copy engine reads)
  k-push   a copy kernel on the sending GPU (16-byte stores to the peer)
  k-pull   a copy kernel on the receiving GPU (16-byte loads from the peer)
Every transfer has its own stream; the time is the host's, from all started to all done, median.
  python bench/push_probe.py [MiB per rank, default 1024]"""
import statistics
import time

import cupy as cp
import numpy as np

from nvlink import G, S, rt  # peer access enabled
SRC = "extern \"C\" __global__ void cp16(const int4* __restrict__ s, int4* __restrict__ d, long long n) {" \
      " for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;" \
      " i += (long long)gridDim.x * blockDim.x) d[i] = s[i]; }"
kern = {}
src, dst = {}, {}
for i in range(G):
    with cp.cuda.Device(i):
        kern[i] = cp.RawModule(code=SRC).get_function("cp16")
        src[i] = cp.ones(S // 4, dtype=cp.float32)
        dst[i] = cp.zeros(S // 4 * 2, dtype=cp.float32)  # room for what it receives


def split_transfers():
    T = S // (G - 1) // 16 * 16
    t, recv = [], {g: 0 for g in range(G)}
    for s in range(G):
        for g in range(1, G):
            if g != s:
                t.append((s, src[s].data.ptr + (g - 1) * T, g, dst[g].data.ptr + recv[g], T))
                recv[g] += T
    for g in range(1, G):
        t.append((g, src[g].data.ptr + (g - 1) * T, 0, dst[0].data.ptr + recv[0], T))
        recv[0] += T
    return t


def ring_transfers():
    return [(s, src[s].data.ptr, (s + 1) % G, dst[(s + 1) % G].data.ptr, S) for s in range(G)]


def one_way():
    return [(1, src[1].data.ptr, 0, dst[0].data.ptr, S)]


def run(transfers, mode, reps=7):
    streams = []
    for (a, _, b, _, _) in transfers:
        dev = a if mode.endswith("push") else b
        with cp.cuda.Device(dev):
            streams.append((dev, cp.cuda.Stream(non_blocking=True)))
    times = []
    for _ in range(reps):
        for i in range(G):
            cp.cuda.Device(i).synchronize()
        t0 = time.perf_counter()
        for (a, pa, b, pb, n), (dev, st) in zip(transfers, streams):
            with cp.cuda.Device(dev):
                if mode.startswith("ce"):
                    rt.memcpyPeerAsync(pb, b, pa, a, n, st.ptr)
                else:
                    kern[dev]((64,), (512,), (np.uint64(pa), np.uint64(pb), np.int64(n // 16)), stream=st)
        for i in range(G):
            cp.cuda.Device(i).synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:])


print(f"{G} GPUs, {S >> 20} MiB per rank")
for name, fn in (("one-way 1->0", one_way), ("ring", ring_transfers), ("split", split_transfers)):
    tr = fn()
    for mode in ("ce-push", "ce-pull", "k-push", "k-pull"):
        t = run(tr, mode)
        per_gpu_out = max(sum(n for (a, _, _, _, n) in tr if a == g) for g in range(G))
        print(f"{name:14s} {mode:8s} {t * 1e3:8.3f} ms  busiest GPU out {per_gpu_out / t / 1e9:6.1f} GB/s")
