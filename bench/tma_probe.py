"""How fast a kernel can store over NVLink, against the copy engine, measured with CuPy.

treduce's ring (docs/TREDUCE.md "The ring path") stores every hop's partial results into the next
GPU with 16-byte stores from the SMs; on 4 x H200 that moves about 350 GB/s per link, where a copy
engine moves about 385 (bench/push_probe.py).  This probe times, one way (GPU 1 -> 0) and as a
ring (g -> g+1, every GPU sending and receiving at once):
  ce           cudaMemcpyPeerAsync on the sender's stream
  st16 B       a copy kernel of B blocks x 512 threads, four 16-byte loads in flight, then stores
  tma T        a copy kernel of one 256-thread block per SM: each block loads tiles of T KiB into
               shared memory and stores each with one bulk copy (cp.async.bulk.global.shared::cta,
               the Tensor Memory Accelerator), 4 tiles in flight
and the persistent fold-and-push ring of bench/ring_probe.py (B = 128 blocks, 128 KiB steps, 4
slots) with its stores made either way: 16-byte stores, or folded into shared memory and stored by
bulk copies.  Every result is checked.  The time is the host's, from all started to all done, median.
  python bench/tma_probe.py [MiB per rank, default 1024]"""
import cupy as cp
import numpy as np

from nvlink import G, HOP_SRC, S, rt, timed  # peer access enabled

SRC = HOP_SRC + r"""
extern "C" __global__ void st16(const int4* __restrict__ s, int4* d, long long n) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    int4 a = s[i], b = s[i + stride], c = s[i + 2 * stride], e = s[i + 3 * stride];
    d[i] = a; d[i + stride] = b; d[i + 2 * stride] = c; d[i + 3 * stride] = e;
  }
  for (; i < n; i += stride) d[i] = s[i];
}

extern "C" __global__ void tma(const int4* __restrict__ s, char* d, long long nbytes, int tile) {
  extern __shared__ __align__(128) int4 sm[];
  long long ntiles = nbytes / tile;
  int t16 = tile / 16, k = 0;
  for (long long t = blockIdx.x; t < ntiles; t += gridDim.x, ++k) {
    int4* buf = sm + (k % NS) * t16;
    if (threadIdx.x == 0) stage_free();
    __syncthreads();
    const int4* src = s + t * t16;
    for (int j = threadIdx.x; j < t16; j += blockDim.x) buf[j] = src[j];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) bulk_store(d + t * tile, buf, tile);
  }
  if (threadIdx.x == 0) stores_done();
}
"""
SM_BYTES = 4 * 32 << 10  # NS tiles of at most 32 KiB
HOPS = list(range(1, G)) + [0]
RB, RSTEP, RNB = 128, 128 << 10, 4
kern, own, inb, dst, flags, stream, sms = {}, {}, {}, {}, {}, {}, {}
for i in range(G):
    with cp.cuda.Device(i):
        kern[i] = {n: cp.RawKernel(SRC, n, options=("-std=c++17",)) for n in ("st16", "tma", "hop")}
        for n in ("tma", "hop"):
            kern[i][n].max_dynamic_shared_size_bytes = SM_BYTES
        sms[i] = cp.cuda.Device(i).attributes["MultiProcessorCount"]
        own[i] = cp.random.random(S // 4, dtype=cp.float32)
        inb[i] = cp.zeros(RB * RNB * RSTEP // 4, dtype=cp.float32)
        dst[i] = cp.zeros(S // 4, dtype=cp.float32)
        flags[i] = cp.zeros(2 * RB, dtype=cp.uint64)  # ready[RB], credit[RB]
        stream[i] = cp.cuda.Stream(non_blocking=True)
ring_want = sum(own[g].get().astype(np.float64) for g in range(G))
P = np.uint64


def copy(pairs, how, arg):
    """Every (a, b) of pairs: own[a] -> dst[b], sent by GPU a."""
    for a, b in pairs:
        with cp.cuda.Device(a):
            s, d = P(own[a].data.ptr), P(dst[b].data.ptr)
            if how == "ce":
                rt.memcpyPeerAsync(dst[b].data.ptr, b, own[a].data.ptr, a, S, stream[a].ptr)
            elif how == "st16":
                kern[a]["st16"]((arg,), (512,), (s, d, np.int64(S // 16)), stream=stream[a])
            else:
                kern[a]["tma"]((sms[a],), (256,), (s, d, np.int64(S), np.int32(arg << 10)),
                               stream=stream[a], shared_mem=4 * (arg << 10))


def copy_ok(pairs):
    bad = [b for a, b in pairs if not bool(cp.array_equal(dst[b], own[a]))]
    for _, b in pairs:
        dst[b].fill(0)
    return "ok" if not bad else "WRONG on GPU %s" % bad


def ring(tile):
    for k, g in enumerate(HOPS):
        nxt = HOPS[k + 1] if k + 1 < G else None
        prv = HOPS[k - 1] if k > 0 else None
        with cp.cuda.Device(g):
            kern[g]["hop"](
                (RB,), (512,),
                (P(own[g].data.ptr), np.int64(S // 16), P(inb[g].data.ptr if prv is not None else 0),
                 P(inb[nxt].data.ptr if nxt is not None else 0), P(dst[g].data.ptr),
                 P(flags[g].data.ptr), P(flags[nxt].data.ptr if nxt is not None else 0),
                 P(flags[g].data.ptr + 8 * RB), P(flags[prv].data.ptr + 8 * RB if prv is not None else 0),
                 np.int32(RNB), np.int64(RSTEP // 16), np.int32(tile << 10)),
                stream=stream[g], shared_mem=4 * (tile << 10))


print(f"{G} GPUs, {S >> 20} MiB per rank, {sms[0]} SMs")
patterns = (("one-way 1->0", [(1, 0)]), ("ring", [(g, (g + 1) % G) for g in range(G)]))
for name, pairs in patterns:
    for how, arg in (("ce", 0), ("st16", 132), ("st16", 264), ("st16", 1056), ("tma", 8), ("tma", 16),
                     ("tma", 32)):
        t = timed(lambda: copy(pairs, how, arg), flags)
        print(f"{name:13s} {how:5s} {arg:5d}  {t * 1e3:8.3f} ms  {S / t / 1e9:6.1f} GB/s per link"
              f"  {copy_ok(pairs)}")
for tile in (0, 8, 16, 32):
    t = timed(lambda: ring(tile), flags)
    err = float(np.max(np.abs(dst[0].get() - ring_want)))
    dst[0].fill(0)
    what = "16-byte stores" if tile == 0 else "bulk stores of %d KiB" % tile
    print(f"fold ring B={RB} step {RSTEP >> 10} KiB x {RNB}, {what:20s} {t * 1e3:8.3f} ms"
          f"  {S / t / 1e9:6.1f} GB/s  max err {err:.1e}")
