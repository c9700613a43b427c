"""Can copy engines carry treduce's ring faster than SM stores?  A chain of copy-engine transfers
ordered on the GPUs alone, measured with CuPy.

SM stores move at most about 365 GB/s per NVLink link on 4 x H200 and copy engines 394
(bench/tma_probe.py), so a ring whose hops hand their chunks on by copy engine could beat NCCL's
reduce at 1 GiB per rank where the SM-store ring cannot (docs/PERFORMANCE.md "How close to the
links").  This probe times the transfer half of such a ring, without the folds: hops 1, 2, ...,
G-1, 0 (the root last), chunks of C bytes.  Hop h's stream (on its own GPU), for each chunk k:
  wait until chunk k is in its inbox (hop 0 of the chain: its own buffer, no wait)
       -- cuStreamWaitValue64 on a counter in its own memory, written by the previous hop;
  wait until the next hop has passed on chunk k - D (its inbox has D slots)
       -- a counter in this GPU's memory, written by the next hop's stream;
  copy the chunk into the next hop's inbox slot (the root: its destination);
  write base + k // P + 1 into the next hop's counter k % P, and the same into the previous hop's
  "passed on" counter k % P (cuStreamWriteValue64 to a peer's memory).
Every stream first waits on a gate that opens once everything is enqueued, so the time reported
is the GPUs' alone (as a captured graph would replay it), beside the host's enqueue time; with P
streams per hop, chunk k runs on stream k % P and counts on counters of its own.  Reported: the
time from the gate's opening to all done, the per-link rate, the host's enqueue time,
for several C and D, beside one copy-engine transfer of the whole buffer (the ceiling).  The
root's destination is checked against the source of hop 0 of the chain.
Measured on 4 x H200 (docs/PERFORMANCE.md "How close to the links"): 316 GB/s per link at 1 GiB
(32 MiB chunks, 4 slots, one stream), below both one copy (395) and the SM-store ring.
  python bench/ce_ring_probe.py [MiB per rank, default 1024]"""
import ctypes
import statistics
import time

import cupy as cp

from nvlink import G, S, rt, sync_all  # peer access enabled

cuda = ctypes.CDLL("libcuda.so.1")
GEQ = 0x0  # CU_STREAM_WAIT_VALUE_GEQ
WRITE_DEFAULT = 0x0


def _fn(name):
    for n in (name + "_v2", name):  # the _v2 entry points need no device attribute (CUDA 12+)
        try:
            f = getattr(cuda, n)
            f.restype = ctypes.c_int
            f.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint]
            return f
        except AttributeError:
            pass
    raise SystemExit("libcuda has no " + name)


wait64, write64 = _fn("cuStreamWaitValue64"), _fn("cuStreamWriteValue64")


def check(rc, what):
    if rc:
        raise SystemExit("%s failed: CUresult %d" % (what, rc))


HOPS = list(range(1, G)) + [0]  # the root (GPU 0) last: its copy lands in its destination
MAXD, MAXC, MAXP = 8, 32 << 20, 2
GATED_OPS = 400  # the most operations a stream may hold behind the closed gate: a longer chain
# fills a stream's queue (it is finite) and blocks the host for ever; such chunk sizes are skipped
own, inbox, dst, ready, passed, go, streams, kick = {}, {}, {}, {}, {}, {}, {}, {}
for g in range(G):
    with cp.cuda.Device(g):
        own[g] = cp.random.random(S // 4, dtype=cp.float32)
        inbox[g] = cp.empty(MAXD * MAXC // 4, dtype=cp.float32)
        dst[g] = cp.zeros(S // 4, dtype=cp.float32)
        ready[g] = cp.zeros(MAXP, dtype=cp.uint64)   # per parity: chunks in this GPU's inbox
        passed[g] = cp.zeros(MAXP, dtype=cp.uint64)  # per parity: chunks the next hop passed on
        go[g] = cp.zeros(1, dtype=cp.uint64)         # the gate every stream waits on first
        streams[g] = [cp.cuda.Stream(non_blocking=True) for _ in range(MAXP)]
        kick[g] = cp.cuda.Stream(non_blocking=True)


def enqueue_hop(i, k, C, D, P, base):
    """Hop HOPS[i]'s work on chunk k: on stream k % P, whose chunks count on counter k % P."""
    g, last = HOPS[i], i == len(HOPS) - 1
    p, j = k % P, k // P
    st = streams[g][p].ptr
    nxt = None if last else HOPS[i + 1]
    if k < P:
        check(wait64(st, go[g].data.ptr, base + 1, GEQ), "wait go")
    src = own[g].data.ptr + k * C if i == 0 else inbox[g].data.ptr + (k % D) * C
    if i > 0:
        check(wait64(st, ready[g].data.ptr + 8 * p, base + j + 1, GEQ), "wait ready")
    if nxt is not None and k >= D:
        check(wait64(st, passed[g].data.ptr + 8 * p, base + j - D // P + 1, GEQ), "wait passed")
    to = dst[g].data.ptr + k * C if last else inbox[nxt].data.ptr + (k % D) * C
    rt.memcpyAsync(to, src, C, 4, st)  # cudaMemcpyDefault (UVA: a peer copy)
    if nxt is not None:
        check(write64(st, ready[nxt].data.ptr + 8 * p, base + j + 1, WRITE_DEFAULT), "write ready")
    if i > 0:
        prev = HOPS[i - 1]
        check(write64(st, passed[prev].data.ptr + 8 * p, base + j + 1, WRITE_DEFAULT),
              "write passed")


def enqueue(C, D, P, base):
    """The whole chain for chunks of C bytes, D slots per inbox, P streams per hop, behind the
    gate; counters start at base (they only rise)."""
    for k in range(S // C):
        for i, g in enumerate(HOPS):
            with cp.cuda.Device(g):
                enqueue_hop(i, k, C, D, P, base)


def open_gate(base):
    for g in range(G):
        with cp.cuda.Device(g):
            check(write64(kick[g].ptr, go[g].data.ptr, base + 1, WRITE_DEFAULT), "write go")


BASE = [0]  # where the counters stand: they only rise, across every configuration


def timed_chain(C, D, P, reps=5):
    """(GPU time from the gate's opening to all done, the host's enqueue time) medians."""
    times, host = [], []
    for _ in range(reps):
        base = BASE[0]
        sync_all()
        t0 = time.perf_counter()
        enqueue(C, D, P, base)
        t1 = time.perf_counter()
        open_gate(base)
        sync_all()
        times.append(time.perf_counter() - t1)
        host.append(t1 - t0)
        BASE[0] = base + S // C + 1
    return statistics.median(times[1:]), statistics.median(host[1:])


def one_copy(reps=5):
    times = []
    for _ in range(reps):
        sync_all()
        t0 = time.perf_counter()
        rt.memcpyPeerAsync(dst[0].data.ptr, 0, own[1].data.ptr, 1, S, streams[1][0].ptr)
        sync_all()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:])


print(f"{G} GPUs, {S >> 20} MiB per rank, chain {HOPS}", flush=True)
t = one_copy()
print(f"one copy 1 -> 0                        {t * 1e3:8.3f} ms  {S / t / 1e9:6.1f} GB/s",
      flush=True)
for C, D, P in ((32 << 20, 4, 1), (32 << 20, 4, 2), (16 << 20, 4, 1), (16 << 20, 4, 2),
                (8 << 20, 4, 2), (8 << 20, 8, 2), (4 << 20, 4, 2), (4 << 20, 8, 2)):
    if S % C or C > MAXC or D > MAXD or P > MAXP or D % P or 5 * (S // C) // P > GATED_OPS:
        continue
    t, h = timed_chain(C, D, P)
    ok = bool(cp.array_equal(dst[0], own[HOPS[0]]))
    print(f"chain C = {C >> 20:3d} MiB x {D} slots, {P} streams  {t * 1e3:8.3f} ms"
          f"  {S / t / 1e9:6.1f} GB/s per link  (host enqueue {h * 1e3:7.3f} ms)"
          f"  {'ok' if ok else 'WRONG'}", flush=True)
    dst[0].fill(0)
