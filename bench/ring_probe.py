"""What a ring of persistent fold-and-push kernels reaches for treduce, measured with CuPy.

Ranks one per GPU, root 0; hops in the order 1, 2, ..., G-1, 0.  Each hop runs ONE kernel for
the whole operation: B blocks, block b taking chunks b, b+B, b+2B, ... of STEP bytes.  For each
chunk, block b waits (ld.acquire.sys on a counter in its own memory) until hop h-1 has stored the
chunk's partial sums into b's slot of this hop's inbox, adds its own rank's chunk, stores the
result straight into hop h+1's inbox over NVLink (the root: into its destination), then bumps
hop h+1's `ready` counter (st.release.sys) and hop h-1's `credit` counter (the slot is free
again).  NB slots per block; no host call per chunk, no copy engine.  For scale it also times a
copy engine's one-way copy and the plain k-push copy kernel.
The hop kernel is bench/nvlink.py's HOP_SRC (tile 0: 16-byte stores), shared with
bench/tma_probe.py; it needs sm_90 or later (its bulk-store path).
  python bench/ring_probe.py [MiB per rank, default 1024]"""
import cupy as cp
import numpy as np

from nvlink import G, HOP_SRC, S, rt, timed  # peer access enabled
SRC = HOP_SRC + r"""
extern "C" __global__ void cp16(const int4* __restrict__ s, int4* __restrict__ d, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) d[i] = s[i]; }
"""
HOPS = list(range(1, G)) + [0]
MAXB, MAXBUF = 256, 64 << 20
mod, own, inb, dst, flags, stream = {}, {}, {}, {}, {}, {}
for i in range(G):
    with cp.cuda.Device(i):
        mod[i] = cp.RawModule(code=SRC)
        own[i] = cp.random.random(S // 4, dtype=cp.float32)
        inb[i] = cp.zeros(MAXBUF // 4, dtype=cp.float32)
        dst[i] = cp.zeros(S // 4, dtype=cp.float32)
        flags[i] = cp.zeros(2 * MAXB, dtype=cp.uint64)  # ready[MAXB], credit[MAXB]
        stream[i] = cp.cuda.Stream(non_blocking=True)
want = sum(own[g].get().astype(np.float64) for g in range(G))


def ring(B, threads, step, nb):
    step4 = step // 16
    for k, g in enumerate(HOPS):
        nxt = HOPS[k + 1] if k + 1 < G else None
        prv = HOPS[k - 1] if k > 0 else None
        p = lambda a: np.uint64(a)
        with cp.cuda.Device(g):
            mod[g].get_function("hop")(
                (B,), (threads,),
                (p(own[g].data.ptr), np.int64(S // 16), p(inb[g].data.ptr if prv is not None else 0),
                 p(inb[nxt].data.ptr if nxt is not None else 0), p(dst[g].data.ptr),
                 p(flags[g].data.ptr), p(flags[nxt].data.ptr if nxt is not None else 0),
                 p(flags[g].data.ptr + 8 * MAXB), p(flags[prv].data.ptr + 8 * MAXB if prv is not None else 0),
                 np.int32(nb), np.int64(step4), np.int32(0)), stream=stream[g])


def ce():
    with cp.cuda.Device(1):
        rt.memcpyPeerAsync(dst[0].data.ptr, 0, own[1].data.ptr, 1, S, stream[1].ptr)


def kpush(blocks):
    with cp.cuda.Device(1):
        mod[1].get_function("cp16")((blocks,), (512,), (np.uint64(own[1].data.ptr),
                                                        np.uint64(dst[0].data.ptr), np.int64(S // 16)),
                                    stream=stream[1])


print(f"{G} GPUs, {S >> 20} MiB per rank")
t = timed(ce, flags)
print(f"one-way 1->0 copy engine                 {t * 1e3:8.3f} ms  {S / t / 1e9:6.1f} GB/s")
for blocks in (64, 264, 1056):
    t = timed(lambda: kpush(blocks), flags)
    print(f"one-way 1->0 k-push {blocks:5d} x 512         {t * 1e3:8.3f} ms  {S / t / 1e9:6.1f} GB/s")
# B x step is the window a hop has in flight: a hop's first results reach the next hop about one
# window's link time after it starts, so the chain's fill is (hops - 1) windows
for B, threads, step, nb in ((128, 512, 128 << 10, 4), (64, 512, 128 << 10, 4), (128, 512, 32 << 10, 4),
                             (128, 512, 16 << 10, 4), (128, 512, 16 << 10, 8), (128, 512, 8 << 10, 8),
                             (64, 512, 32 << 10, 8), (64, 512, 16 << 10, 8), (32, 512, 64 << 10, 8),
                             (128, 256, 16 << 10, 8), (256, 256, 8 << 10, 8)):
    assert B * step * nb <= MAXBUF
    t = timed(lambda: ring(B, threads, step, nb), flags)
    err = float(np.max(np.abs(dst[0].get() - want)))
    print(f"persistent ring B={B:3d} x {threads:4d} step {step >> 10:4d} KiB x {nb}  {t * 1e3:8.3f} ms"
          f"  {S / t / 1e9:6.1f} GB/s  max err {err:.1e}")
    dst[0].fill(0)
