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
  write chunk k + 1 into the next hop's counter, and k + 1 into the previous hop's "passed on"
  counter (cuStreamWriteValue64 to a peer's memory).
Everything is enqueued before the first copy ends; no host call waits per chunk.  Reported: the
time from the first enqueue to all done, the per-link rate, and the host's enqueue time alone,
for several C and D, beside one copy-engine transfer of the whole buffer (the ceiling).  The
root's destination is checked against the source of hop 0 of the chain.
Written without a GPU at hand: not yet run.
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
MAXD, MAXC = 8, 64 << 20
own, inbox, dst, ready, passed, stream = {}, {}, {}, {}, {}, {}
for g in range(G):
    with cp.cuda.Device(g):
        own[g] = cp.random.random(S // 4, dtype=cp.float32)
        inbox[g] = cp.empty(MAXD * MAXC // 4, dtype=cp.float32)
        dst[g] = cp.zeros(S // 4, dtype=cp.float32)
        ready[g] = cp.zeros(1, dtype=cp.uint64)   # chunks in this GPU's inbox
        passed[g] = cp.zeros(1, dtype=cp.uint64)  # chunks the next hop has passed on
        stream[g] = cp.cuda.Stream(non_blocking=True)


def enqueue(C, D, base):
    """The whole chain for chunks of C bytes, D slots; counters start at base (they only rise)."""
    n = S // C
    for k in range(n):
        for i, g in enumerate(HOPS):
            st = stream[g].ptr
            first, last = i == 0, i == len(HOPS) - 1
            nxt = HOPS[i + 1] if not last else None
            src = own[g].data.ptr + k * C if first else inbox[g].data.ptr + (k % D) * C
            if not first:
                check(wait64(st, ready[g].data.ptr, base + k + 1, GEQ), "wait ready")
            if nxt is not None and k >= D:
                check(wait64(st, passed[g].data.ptr, base + k - D + 1, GEQ), "wait passed")
            to = dst[g].data.ptr + k * C if last else inbox[nxt].data.ptr + (k % D) * C
            with cp.cuda.Device(g):
                rt.memcpyAsync(to, src, C, 4, st)  # cudaMemcpyDefault (UVA: peer copy)
            if nxt is not None:
                check(write64(st, ready[nxt].data.ptr, base + k + 1, WRITE_DEFAULT), "write ready")
            if not first:
                prev = HOPS[i - 1]
                check(write64(st, passed[prev].data.ptr, base + k + 1, WRITE_DEFAULT),
                      "write passed")


def timed_chain(C, D, reps=5):
    times, host, base = [], [], 0
    for _ in range(reps):
        sync_all()
        t0 = time.perf_counter()
        enqueue(C, D, base)
        t1 = time.perf_counter()
        sync_all()
        times.append(time.perf_counter() - t0)
        host.append(t1 - t0)
        base += S // C + 1
    return statistics.median(times[1:]), statistics.median(host[1:])


def one_copy(reps=5):
    times = []
    for _ in range(reps):
        sync_all()
        t0 = time.perf_counter()
        rt.memcpyPeerAsync(dst[0].data.ptr, 0, own[1].data.ptr, 1, S, stream[1].ptr)
        sync_all()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:])


print(f"{G} GPUs, {S >> 20} MiB per rank, chain {HOPS}")
t = one_copy()
print(f"one copy 1 -> 0                      {t * 1e3:8.3f} ms  {S / t / 1e9:6.1f} GB/s")
for C, D in ((1 << 20, 4), (2 << 20, 4), (4 << 20, 4), (8 << 20, 4), (16 << 20, 4), (4 << 20, 8)):
    if S % C or C > MAXC or D > MAXD:
        continue
    t, h = timed_chain(C, D)
    ok = bool(cp.array_equal(dst[0], own[HOPS[0]]))
    print(f"chain C = {C >> 20:3d} MiB x {D} slots  {t * 1e3:8.3f} ms  {S / t / 1e9:6.1f} GB/s per link"
          f"  (host enqueue {h * 1e3:6.3f} ms)  {'ok' if ok else 'WRONG'}")
    dst[0].fill(0)
