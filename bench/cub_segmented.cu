// CUB's DeviceSegmentedReduce (sum / max / min of f32 over int32 offsets) behind a C entry point,
// for bench/segmented_peers.py: built there with nvcc on the GPU machine and loaded by ctypes.
// cub_fixed_reduce: the same given every segment's exact length (CCCL 3.1's fixed-size overload,
// CUB's fastest path when the caller knows the lengths); -1 where this CUB lacks it (CUDA 13.0
// ships CCCL 3.0: give bench/segmented_peers.py a newer CCCL's headers, REDJIT_BENCH_CCCL).
//   nvcc -O3 -shared -Xcompiler -fPIC -o libcub_segmented.so bench/cub_segmented.cu
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_runtime.h>

static void *temp = nullptr;
static size_t temp_bytes = 0;

template <typename F>
static int run(F f, cudaStream_t stream) {
  size_t need = 0;
  if (f(nullptr, need) != cudaSuccess) return 1;
  if (need > temp_bytes) {
    if (temp) cudaFree(temp);
    temp_bytes = 0;
    if (cudaMalloc(&temp, need) != cudaSuccess) return 2;
    temp_bytes = need;
  }
  return f(temp, need) == cudaSuccess ? 0 : 3;
}

// op: 0 sum, 1 max, 2 min.  offsets: S + 1 int32 entries on the device.
extern "C" int cub_segmented_reduce(const float *in, float *out, int S, const int *offsets, int op,
                                    void *stream) {
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  auto f = [&](void *t, size_t &n) {
    if (op == 0)
      return cub::DeviceSegmentedReduce::Sum(t, n, in, out, S, offsets, offsets + 1, st);
    if (op == 1)
      return cub::DeviceSegmentedReduce::Max(t, n, in, out, S, offsets, offsets + 1, st);
    return cub::DeviceSegmentedReduce::Min(t, n, in, out, S, offsets, offsets + 1, st);
  };
  return run(f, st);
}

#if CUB_VERSION >= 300100 // the fixed-size overloads came in CCCL 3.1
#define HAVE_FIXED 1
#else
#define HAVE_FIXED 0
#endif

// op as above; S segments of `len` elements each, back to back from in.
extern "C" int cub_fixed_reduce(const float *in, float *out, long long S, int len, int op,
                                void *stream) {
#if HAVE_FIXED
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  auto f = [&](void *t, size_t &n) {
    if (op == 0) return cub::DeviceSegmentedReduce::Sum(t, n, in, out, S, len, st);
    if (op == 1) return cub::DeviceSegmentedReduce::Max(t, n, in, out, S, len, st);
    return cub::DeviceSegmentedReduce::Min(t, n, in, out, S, len, st);
  };
  return run(f, st);
#else
  (void)in, (void)out, (void)S, (void)len, (void)op, (void)stream;
  return -1;
#endif
}
