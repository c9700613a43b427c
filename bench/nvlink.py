"""What bench/push_probe.py, bench/ring_probe.py and bench/tma_probe.py share: CuPy's runtime,
the GPU count, the bytes per rank from argv[1] (MiB, default 1024), peer access enabled between
every pair that allows it, the timer of the ring probes, and their hop kernel (HOP_SRC, CUDA)."""
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


# The ring probes' CUDA: one hop of the fold-and-push ring (the protocol of redjit's ring path:
# docs/TREDUCE.md "The ring path"), storing with 16-byte stores (tile 0) or bulk copies from shared
# memory (tile > 0 bytes, sm_90+), and the helpers it needs.
HOP_SRC = r"""
typedef unsigned long long u64;
#define NS 4
__device__ __forceinline__ unsigned sm_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ u64 ld_acq(const u64* p) { u64 v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_rel(u64* p, u64 v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               :: "l"(dst), "r"(sm_addr(src)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
/* thread 0: at most NS - 1 bulk stores still reading shared memory */
__device__ __forceinline__ void stage_free() {
  asm volatile("cp.async.bulk.wait_group.read 3;" ::: "memory"); }
__device__ __forceinline__ void stores_done() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

/* a hop of the fold-and-push ring: B blocks, block b folding steps b, b + B, ... into the next
   hop's inbox (the last hop: dst), counters ready / credit per block; tile > 0: the step folded into shared memory in tiles of `tile`
   bytes and stored by bulk copies, all complete before the step is published */
extern "C" __global__ void hop(const float4* __restrict__ own, long long n4, const float4* inbox,
    float4* next_inbox, float4* dst, u64* ready, u64* next_ready, u64* credit, u64* prev_credit,
    int nb, long long step4, int tile) {
  extern __shared__ __align__(128) float4 fsm[];
  int b = blockIdx.x, B = gridDim.x, k = 0;
  long long nsteps = (n4 + step4 - 1) / step4;
  for (long long i = 0, c = b; c < nsteps; ++i, c += B) {
    int slot = (int)(i % nb);
    if (threadIdx.x == 0) {
      if (inbox) while (ld_acq(&ready[b]) < (u64)i + 1) {}
      if (next_inbox && i >= nb) while (ld_acq(&credit[b]) < (u64)(i - nb + 1)) {}
    }
    __syncthreads();
    long long base = c * step4, len = min(step4, n4 - base);
    const float4* in = inbox ? inbox + ((long long)b * nb + slot) * step4 : 0;
    float4* out = next_inbox ? next_inbox + ((long long)b * nb + slot) * step4 : dst + base;
    if (tile == 0) {
      #pragma unroll 4
      for (long long j = threadIdx.x; j < len; j += blockDim.x) {
        float4 a = own[base + j];
        if (in) { float4 x = in[j]; a.x += x.x; a.y += x.y; a.z += x.z; a.w += x.w; }
        out[j] = a;
      }
    } else {
      int t4 = tile / 16;
      for (long long o = 0; o < len; o += t4, ++k) {
        int m = (int)min((long long)t4, len - o);
        float4* buf = fsm + (k % NS) * t4;
        if (threadIdx.x == 0) stage_free();
        __syncthreads();
        for (int j = threadIdx.x; j < m; j += blockDim.x) {
          float4 a = own[base + o + j];
          if (in) { float4 x = in[o + j]; a.x += x.x; a.y += x.y; a.z += x.z; a.w += x.w; }
          buf[j] = a;
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (threadIdx.x == 0) bulk_store(out + o, buf, (unsigned)m * 16);
      }
      if (threadIdx.x == 0) stores_done();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      if (next_inbox) { __threadfence_system(); st_rel(&next_ready[b], (u64)i + 1); }
      if (in) st_rel(&prev_credit[b], (u64)i + 1);
    }
  }
}
"""
