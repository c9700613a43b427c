/* A stand-in for libcuda.so.1 that counts the driver calls made through it (tests/
 * test_treduce_calls.c loads it in place of the driver, through LD_LIBRARY_PATH): FAKE_CUDA_GPUS
 * devices (default 4) named "Fake GPU", compute capability 9.0, 132 SMs, peer access between
 * every pair.  Device memory is addresses nothing reads; page-locked host memory is real.  Every
 * call succeeds; nothing runs.  fake_cuda_calls(name) / fake_cuda_total() / fake_cuda_reset()
 * read and clear the counts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent, *CUlinkState;

#define FAKE_MAX_GPUS 16
#define FAKE_NAMES 64

static struct {
  const char *name;
  long long n;
} counts[FAKE_NAMES];
static int ncounts;
static long long total;

/* Counts one call of `name` (a literal: one entry per function). */
static void count(const char *name) {
  total++;
  for (int i = 0; i < ncounts; i++)
    if (counts[i].name == name) {
      counts[i].n++;
      return;
    }
  if (ncounts < FAKE_NAMES) counts[ncounts++] = (__typeof__(counts[0])){name, 1};
}
#define COUNT() count(__func__)

long long fake_cuda_calls(const char *name) {
  for (int i = 0; i < ncounts; i++)
    if (strcmp(counts[i].name, name) == 0) return counts[i].n;
  return 0;
}
long long fake_cuda_total(void) {
  return total;
}
void fake_cuda_reset(void) {
  ncounts = 0;
  total = 0;
}

static int ctx_of[FAKE_MAX_GPUS]; /* a primary context is the address of its entry */
static CUcontext stack[64];
static int depth;
static CUdeviceptr next_ptr = 0x10000000ull;

static int gpus(void) {
  const char *e = getenv("FAKE_CUDA_GPUS");
  int n = e ? atoi(e) : 4;
  return n < 1 ? 1 : n > FAKE_MAX_GPUS ? FAKE_MAX_GPUS : n;
}

CUresult cuInit(unsigned f) {
  (void)f;
  COUNT();
  return 0;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  (void)r;
  *s = "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  (void)r;
  *s = "fake";
  return 0;
}
CUresult cuDeviceGetCount(int *n) {
  COUNT();
  *n = gpus();
  return 0;
}
CUresult cuDeviceGet(CUdevice *d, int i) {
  COUNT();
  *d = i;
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  (void)d;
  COUNT();
  *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 16 ? 132 : 1; /* CC major, minor, SMs */
  return 0;
}
CUresult cuDeviceGetName(char *name, int n, CUdevice d) {
  (void)d;
  COUNT();
  strncpy(name, "Fake GPU", (size_t)n);
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  COUNT();
  *c = &ctx_of[d];
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  (void)d;
  return 0;
}
CUresult cuCtxPushCurrent_v2(CUcontext c) {
  COUNT();
  if (depth < 64) stack[depth++] = c;
  return 0;
}
CUresult cuCtxPopCurrent_v2(CUcontext *c) {
  COUNT();
  *c = depth ? stack[--depth] : NULL;
  return 0;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
  COUNT();
  *c = depth ? stack[depth - 1] : NULL;
  return 0;
}
CUresult cuCtxSynchronize(void) {
  COUNT();
  return 0;
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, void *o, void **v) {
  (void)image, (void)n, (void)o, (void)v;
  COUNT();
  *m = malloc(1);
  return 0;
}
CUresult cuModuleUnload(CUmodule m) {
  free(m);
  return 0;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  (void)name;
  COUNT();
  *f = m;
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  COUNT();
  *p = next_ptr;
  next_ptr += (n + 0xffff) & ~(size_t)0xffff;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  (void)p;
  COUNT();
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  (void)d, (void)s, (void)n;
  COUNT();
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  (void)s;
  COUNT();
  memset(d, 0, n);
  return 0;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned sh, CUstream s, void **a, void **x) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sh, (void)s, (void)a;
  (void)x;
  COUNT();
  return 0;
}
CUresult cuEventCreate(CUevent *e, unsigned f) {
  (void)f;
  COUNT();
  *e = malloc(1);
  return 0;
}
CUresult cuEventDestroy_v2(CUevent e) {
  free(e);
  return 0;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
  (void)e, (void)s;
  COUNT();
  return 0;
}
CUresult cuEventSynchronize(CUevent e) {
  (void)e;
  COUNT();
  return 0;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  (void)a, (void)b;
  COUNT();
  *ms = 0.01f;
  return 0;
}
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f) {
  (void)s, (void)e, (void)f;
  COUNT();
  return 0;
}
CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n,
                           CUstream st) {
  (void)d, (void)dc, (void)s, (void)sc, (void)n, (void)st;
  COUNT();
  return 0;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  (void)d, (void)s, (void)n, (void)st;
  COUNT();
  return 0;
}
CUresult cuDeviceCanAccessPeer(int *can, CUdevice a, CUdevice b) {
  (void)a, (void)b;
  COUNT();
  *can = 1;
  return 0;
}
CUresult cuCtxEnablePeerAccess(CUcontext c, unsigned f) {
  (void)c, (void)f;
  COUNT();
  return 0;
}
/* A stream remembers its context (cuStreamGetCtx). */
CUresult cuStreamCreate(CUstream *s, unsigned f) {
  (void)f;
  COUNT();
  CUcontext *c = malloc(sizeof *c);
  *c = depth ? stack[depth - 1] : NULL;
  *s = c;
  return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) {
  free(s);
  return 0;
}
CUresult cuStreamSynchronize(CUstream s) {
  (void)s;
  COUNT();
  return 0;
}
CUresult cuStreamGetCtx(CUstream s, CUcontext *c) {
  COUNT();
  *c = s ? *(CUcontext *)s : depth ? stack[depth - 1] : NULL;
  return 0;
}
CUresult cuStreamIsCapturing(CUstream s, int *status) {
  (void)s;
  COUNT();
  *status = 0;
  return 0;
}
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) {
  (void)s;
  return cuMemAlloc_v2(p, n);
}
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  (void)p, (void)s;
  COUNT();
  return 0;
}
CUresult cuMemAllocHost_v2(void **p, size_t n) {
  COUNT();
  *p = calloc(1, n);
  return *p ? 0 : 2;
}
CUresult cuMemFreeHost(void *p) {
  free(p);
  return 0;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  (void)d, (void)s, (void)n;
  COUNT();
  return 0;
}
CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f) {
  (void)attr, (void)f;
  COUNT();
  *v = 0;
  return 0;
}
CUresult cuCtxGetLimit(size_t *v, int what) {
  (void)what;
  COUNT();
  *v = 1024;
  return 0;
}
CUresult cuCtxSetLimit(int what, size_t v) {
  (void)what, (void)v;
  COUNT();
  return 0;
}
CUresult cuDriverGetVersion(int *v) {
  COUNT();
  *v = 13000;
  return 0;
}
/* The linker: a failure, so that kernels load as PTX (cuModuleLoadDataEx). */
CUresult cuLinkCreate_v2(unsigned n, void *o, void **v, CUlinkState *st) {
  (void)n, (void)o, (void)v, (void)st;
  COUNT();
  return 1;
}
CUresult cuLinkAddData_v2(CUlinkState st, int type, void *data, size_t n, const char *name,
                          unsigned no, void *o, void **v) {
  (void)st, (void)type, (void)data, (void)n, (void)name, (void)no, (void)o, (void)v;
  return 1;
}
CUresult cuLinkComplete(CUlinkState st, void **out, size_t *n) {
  (void)st, (void)out, (void)n;
  return 1;
}
CUresult cuLinkDestroy(CUlinkState st) {
  (void)st;
  return 0;
}
