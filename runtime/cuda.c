/* The CUDA driver through dlopen("libcuda.so.1"): a table of entry points per rt_cuda. */
#include "rt.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_SYM_CACHE 48 /* entry points rt_sym keeps */

struct rt_cuda {
  void *lib;
  CUresult (*Init)(unsigned);
  CUresult (*GetErrorName)(CUresult, const char **);
  CUresult (*GetErrorString)(CUresult, const char **);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice);
  CUresult (*CtxPushCurrent)(CUcontext);
  CUresult (*CtxPopCurrent)(CUcontext *);
  CUresult (*CtxGetCurrent)(CUcontext *);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, CUjit_option *, void **);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void **, void **);
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  /* treduce's per-chunk calls (looked up once: the ring path makes thousands per call) */
  CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*MemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  int retained[64]; /* primary contexts retained, per device */
  CUcontext ctx[64];
  struct {
    const char *name; /* the caller's literal (compared by address) */
    void *fn;
  } syms[RT_SYM_CACHE]; /* entry points rt_sym found */
  int nsyms;
};

static rj_status cu_fail(rt_cuda *rt, ir_err *e, const char *call, CUresult r) {
  const char *name = "?", *str = "";
  if (rt->GetErrorName) rt->GetErrorName(r, &name);
  if (rt->GetErrorString) rt->GetErrorString(r, &str);
  return ir_fail(e, RJ_ECUDA, "%s failed: %s (%s)", call, name, str);
}

#define CK(call, expr)                                                                             \
  do {                                                                                             \
    CUresult r_ = (expr);                                                                          \
    if (r_ != CUDA_SUCCESS) return cu_fail(rt, e, call, r_);                                       \
  } while (0)

rj_status rt_open(rt_cuda **out, ir_err *e) {
  *out = NULL;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return ir_fail(e, RJ_ENODEV, "no CUDA driver: dlopen(libcuda.so.1) failed");
  rt_cuda *rt = calloc(1, sizeof *rt);
  if (!rt) {
    dlclose(lib);
    return ir_fail(e, RJ_ENOMEM, "out of memory");
  }
  rt->lib = lib;
  struct {
    void **slot;
    const char *name;
  } syms[] = {
      {(void **)&rt->Init, "cuInit"},
      {(void **)&rt->GetErrorName, "cuGetErrorName"},
      {(void **)&rt->GetErrorString, "cuGetErrorString"},
      {(void **)&rt->DeviceGetCount, "cuDeviceGetCount"},
      {(void **)&rt->DeviceGet, "cuDeviceGet"},
      {(void **)&rt->DeviceGetAttribute, "cuDeviceGetAttribute"},
      {(void **)&rt->DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {(void **)&rt->DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
      {(void **)&rt->CtxPushCurrent, "cuCtxPushCurrent_v2"},
      {(void **)&rt->CtxPopCurrent, "cuCtxPopCurrent_v2"},
      {(void **)&rt->CtxGetCurrent, "cuCtxGetCurrent"},
      {(void **)&rt->CtxSynchronize, "cuCtxSynchronize"},
      {(void **)&rt->ModuleLoadDataEx, "cuModuleLoadDataEx"},
      {(void **)&rt->ModuleUnload, "cuModuleUnload"},
      {(void **)&rt->ModuleGetFunction, "cuModuleGetFunction"},
      {(void **)&rt->MemAlloc, "cuMemAlloc_v2"},
      {(void **)&rt->MemFree, "cuMemFree_v2"},
      {(void **)&rt->MemcpyHtoD, "cuMemcpyHtoD_v2"},
      {(void **)&rt->MemcpyDtoH, "cuMemcpyDtoH_v2"},
      {(void **)&rt->LaunchKernel, "cuLaunchKernel"},
      {(void **)&rt->EventCreate, "cuEventCreate"},
      {(void **)&rt->EventDestroy, "cuEventDestroy_v2"},
      {(void **)&rt->EventRecord, "cuEventRecord"},
      {(void **)&rt->EventSynchronize, "cuEventSynchronize"},
      {(void **)&rt->EventElapsedTime, "cuEventElapsedTime"},
      {(void **)&rt->StreamWaitEvent, "cuStreamWaitEvent"},
      {(void **)&rt->MemcpyPeerAsync, "cuMemcpyPeerAsync"},
      {(void **)&rt->MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    *syms[i].slot = dlsym(lib, syms[i].name);
    if (!*syms[i].slot) {
      rj_status s = ir_fail(e, RJ_ENODEV, "CUDA driver lacks %s", syms[i].name);
      rt_close(rt);
      return s;
    }
  }
  CUresult r = rt->Init(0);
  if (r != CUDA_SUCCESS) {
    const char *name = "?";
    rt->GetErrorName(r, &name);
    rj_status s = ir_fail(e, RJ_ENODEV, "no usable GPU: cuInit failed: %s", name);
    rt_close(rt);
    return s;
  }
  *out = rt;
  return RJ_OK;
}

void rt_close(rt_cuda *rt) {
  if (!rt) return;
  for (int d = 0; d < 64; d++)
    if (rt->retained[d]) {
      CUdevice dev;
      if (rt->DeviceGet(&dev, d) == CUDA_SUCCESS) rt->DevicePrimaryCtxRelease(dev);
    }
  dlclose(rt->lib);
  free(rt);
}

rj_status rt_device_count(rt_cuda *rt, int *n, ir_err *e) {
  CK("cuDeviceGetCount", rt->DeviceGetCount(n));
  return RJ_OK;
}

/* Attribute `what` of GPU dev (checked against the device count). */
static rj_status device_attr(rt_cuda *rt, int dev, CUdevice_attribute what, int *out, ir_err *e) {
  int n = 0;
  CK("cuDeviceGetCount", rt->DeviceGetCount(&n));
  if (dev < 0 || dev >= n) return ir_fail(e, RJ_ENODEV, "device: no GPU %d (%d present)", dev, n);
  CUdevice d;
  CK("cuDeviceGet", rt->DeviceGet(&d, dev));
  CK("cuDeviceGetAttribute", rt->DeviceGetAttribute(out, what, d));
  return RJ_OK;
}

rj_status rt_device_cc(rt_cuda *rt, int dev, int *major, int *minor, ir_err *e) {
  rj_status s = device_attr(rt, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, major, e);
  if (!s) s = device_attr(rt, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, minor, e);
  return s;
}

/* dev's primary context, retained once per rt_cuda (released by rt_close). */
static rj_status primary(rt_cuda *rt, int dev, CUcontext *out, ir_err *e) {
  if (dev >= 0 && dev < 64 && rt->retained[dev]) { /* the per-chunk path: no driver call */
    *out = rt->ctx[dev];
    return RJ_OK;
  }
  int n = 0;
  CK("cuDeviceGetCount", rt->DeviceGetCount(&n));
  if (dev < 0 || dev >= n || dev >= 64)
    return ir_fail(e, RJ_ENODEV, "device: no GPU %d (%d present)", dev, n);
  if (!rt->retained[dev]) {
    CUdevice d;
    CK("cuDeviceGet", rt->DeviceGet(&d, dev));
    CK("cuDevicePrimaryCtxRetain", rt->DevicePrimaryCtxRetain(&rt->ctx[dev], d));
    rt->retained[dev] = 1;
  }
  *out = rt->ctx[dev];
  return RJ_OK;
}

rj_status rt_enter(rt_cuda *rt, int dev, ir_err *e) {
  CUcontext c = NULL;
  rj_status s = primary(rt, dev, &c, e);
  if (s) return s;
  CK("cuCtxPushCurrent", rt->CtxPushCurrent(c));
  return RJ_OK;
}

void rt_leave(rt_cuda *rt) {
  CUcontext c;
  rt->CtxPopCurrent(&c);
}

rj_status rt_enter_lazy(rt_cuda *rt, int dev, bool *pushed, ir_err *e) {
  CUcontext c = NULL, cur = NULL;
  *pushed = false;
  rj_status s = primary(rt, dev, &c, e);
  if (s) return s;
  if (rt->CtxGetCurrent(&cur) == CUDA_SUCCESS && cur == c) return RJ_OK;
  CK("cuCtxPushCurrent", rt->CtxPushCurrent(c));
  *pushed = true;
  return RJ_OK;
}

rj_status rt_module_load(rt_cuda *rt, const void *image, const char *entry, void **mod, void **fn,
                         ir_err *e) {
  char log[4096] = "";
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
  CUmodule m;
  CUresult r = rt->ModuleLoadDataEx(&m, image, 2, opts, vals);
  if (r != CUDA_SUCCESS) {
    cu_fail(rt, e, "cuModuleLoadDataEx", r);
    size_t k = strlen(e->msg);
    snprintf(e->msg + k, sizeof e->msg - k, ": %.600s", log);
    return RJ_ECUDA;
  }
  CUfunction f;
  r = rt->ModuleGetFunction(&f, m, entry);
  if (r != CUDA_SUCCESS) {
    rt->ModuleUnload(m);
    return cu_fail(rt, e, "cuModuleGetFunction", r);
  }
  *mod = m;
  *fn = f;
  return RJ_OK;
}

void rt_module_unload(rt_cuda *rt, void *mod) {
  if (mod) rt->ModuleUnload((CUmodule)mod);
}

rj_status rt_alloc(rt_cuda *rt, size_t bytes, uint64_t *ptr, ir_err *e) {
  CUdeviceptr p;
  CK("cuMemAlloc", rt->MemAlloc(&p, bytes ? bytes : 1));
  *ptr = (uint64_t)p;
  return RJ_OK;
}

void rt_free(rt_cuda *rt, uint64_t ptr) {
  if (ptr) rt->MemFree((CUdeviceptr)ptr);
}

rj_status rt_htod(rt_cuda *rt, uint64_t dst, const void *src, size_t bytes, ir_err *e) {
  CK("cuMemcpyHtoD", rt->MemcpyHtoD((CUdeviceptr)dst, src, bytes));
  return RJ_OK;
}

rj_status rt_dtoh(rt_cuda *rt, void *dst, uint64_t src, size_t bytes, ir_err *e) {
  CK("cuMemcpyDtoH", rt->MemcpyDtoH(dst, (CUdeviceptr)src, bytes));
  return RJ_OK;
}

rj_status rt_launch(rt_cuda *rt, void *fn, const unsigned g[3], const unsigned b[3],
                    unsigned shared, void **args, double *ms, ir_err *e) {
  CUevent ev[2] = {0, 0};
  CK("cuEventCreate", rt->EventCreate(&ev[0], CU_EVENT_DEFAULT));
  CUresult r = rt->EventCreate(&ev[1], CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = rt->EventRecord(ev[0], NULL);
  const char *call = "cuEventRecord";
  if (r == CUDA_SUCCESS) {
    call = "cuLaunchKernel";
    r = rt->LaunchKernel((CUfunction)fn, g[0], g[1], g[2], b[0], b[1], b[2], shared, NULL, args,
                         NULL);
  }
  if (r == CUDA_SUCCESS) {
    call = "cuEventRecord";
    r = rt->EventRecord(ev[1], NULL);
  }
  if (r == CUDA_SUCCESS) {
    call = "kernel execution (cuEventSynchronize)";
    r = rt->EventSynchronize(ev[1]);
  }
  float t = 0;
  if (r == CUDA_SUCCESS) {
    call = "cuEventElapsedTime";
    r = rt->EventElapsedTime(&t, ev[0], ev[1]);
  }
  rt->EventDestroy(ev[0]);
  if (ev[1]) rt->EventDestroy(ev[1]);
  if (r != CUDA_SUCCESS) return cu_fail(rt, e, call, r);
  if (ms) *ms = t;
  return RJ_OK;
}

/* ---------------------------------------------------------------- treduce */

void *rt_sym(rt_cuda *rt, const char *name) {
  /* callers pass string literals: a name is found by its address first, without a dlsym per
   * call (the treduce calls look up a few entry points each time) */
  for (int i = 0; i < rt->nsyms; i++)
    if (rt->syms[i].name == name) return rt->syms[i].fn;
  void *fn = dlsym(rt->lib, name);
  if (fn && rt->nsyms < RT_SYM_CACHE) {
    rt->syms[rt->nsyms].name = name;
    rt->syms[rt->nsyms++].fn = fn;
  }
  return fn;
}

/* Looks driver function name up as var (returning CUresult, taking the rest), failing with the
 * name when the driver lacks it. */
#define SYM(var, name, ...)                                                                        \
  CUresult (*var)(__VA_ARGS__) = (CUresult(*)(__VA_ARGS__))rt_sym(rt, name);                       \
  if (!var) return ir_fail(e, RJ_ECUDA, "the CUDA driver lacks %s", name)

rj_status rt_device_name(rt_cuda *rt, int dev, char *name, int n, ir_err *e) {
  SYM(f, "cuDeviceGetName", char *, int, CUdevice);
  CUdevice d;
  CK("cuDeviceGet", rt->DeviceGet(&d, dev));
  CK("cuDeviceGetName", f(name, n, d));
  return RJ_OK;
}

rj_status rt_peer_can_access(rt_cuda *rt, int dev, int peer, int *can, ir_err *e) {
  SYM(f, "cuDeviceCanAccessPeer", int *, CUdevice, CUdevice);
  CUdevice a, b;
  CK("cuDeviceGet", rt->DeviceGet(&a, dev));
  CK("cuDeviceGet", rt->DeviceGet(&b, peer));
  CK("cuDeviceCanAccessPeer", f(can, a, b));
  return RJ_OK;
}

rj_status rt_peer_enable(rt_cuda *rt, int peer, ir_err *e) {
  SYM(f, "cuCtxEnablePeerAccess", CUcontext, unsigned);
  CUcontext pc = NULL;
  rj_status s = primary(rt, peer, &pc, e);
  if (s) return s;
  CUresult r = f(pc, 0);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return cu_fail(rt, e, "cuCtxEnablePeerAccess", r);
  return RJ_OK;
}

rj_status rt_stream_new(rt_cuda *rt, void **stream, ir_err *e) {
  SYM(f, "cuStreamCreate", CUstream *, unsigned);
  CUstream st;
  CK("cuStreamCreate", f(&st, CU_STREAM_DEFAULT));
  *stream = st;
  return RJ_OK;
}

void rt_stream_free(rt_cuda *rt, void *stream) {
  CUresult (*f)(CUstream) = (CUresult(*)(CUstream))rt_sym(rt, "cuStreamDestroy_v2");
  if (f && stream) f((CUstream)stream);
}

rj_status rt_stream_sync(rt_cuda *rt, void *stream, ir_err *e) {
  SYM(f, "cuStreamSynchronize", CUstream);
  CK("cuStreamSynchronize (the reduction's work)", f((CUstream)stream));
  return RJ_OK;
}

rj_status rt_event_new(rt_cuda *rt, void **ev, ir_err *e) {
  CUevent v;
  CK("cuEventCreate", rt->EventCreate(&v, CU_EVENT_DEFAULT));
  *ev = v;
  return RJ_OK;
}

void rt_event_free(rt_cuda *rt, void *ev) {
  if (ev) rt->EventDestroy((CUevent)ev);
}

rj_status rt_stream_wait(rt_cuda *rt, void *stream, void *ev, ir_err *e) {
  CK("cuStreamWaitEvent", rt->StreamWaitEvent((CUstream)stream, (CUevent)ev, 0));
  return RJ_OK;
}

rj_status rt_copy_peer_async(rt_cuda *rt, uint64_t dst, int dst_dev, uint64_t src, int src_dev,
                             size_t bytes, void *stream, ir_err *e) {
  if (dst_dev == src_dev) { /* ranks sharing the root's GPU: a plain device-to-device copy */
    CK("cuMemcpyDtoDAsync",
       rt->MemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, (CUstream)stream));
    return RJ_OK;
  }
  CUcontext dc, sc;
  rj_status s = primary(rt, dst_dev, &dc, e);
  if (!s) s = primary(rt, src_dev, &sc, e);
  if (s) return s;
  CK("cuMemcpyPeerAsync",
     rt->MemcpyPeerAsync((CUdeviceptr)dst, dc, (CUdeviceptr)src, sc, bytes, (CUstream)stream));
  return RJ_OK;
}

rj_status rt_stream_check(rt_cuda *rt, void *stream, int dev, const char *what, ir_err *e) {
  SYM(f, "cuStreamGetCtx", CUstream, CUcontext *);
  CUcontext want = NULL, got = NULL;
  rj_status s = primary(rt, dev, &want, e);
  if (s) return s;
  CUresult r = f((CUstream)stream, &got);
  if (r != CUDA_SUCCESS) return cu_fail(rt, e, what, r);
  if (got != want)
    return ir_fail(e, RJ_EINVAL,
                   "%s: %p is not a stream of GPU %d's primary context (the root's GPU)", what,
                   stream, dev);
  return RJ_OK;
}

rj_status rt_stream_capturing(rt_cuda *rt, void *stream, int *capturing, ir_err *e) {
  *capturing = 0;
  if (!stream) return RJ_OK;
  SYM(f, "cuStreamIsCapturing", CUstream, CUstreamCaptureStatus *);
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CK("cuStreamIsCapturing", f((CUstream)stream, &st));
  *capturing = st != CU_STREAM_CAPTURE_STATUS_NONE;
  return RJ_OK;
}

rj_status rt_alloc_async(rt_cuda *rt, size_t bytes, void *stream, uint64_t *ptr, ir_err *e) {
  SYM(f, "cuMemAllocAsync", CUdeviceptr *, size_t, CUstream);
  CUdeviceptr p = 0;
  CK("cuMemAllocAsync", f(&p, bytes, (CUstream)stream));
  *ptr = (uint64_t)p;
  return RJ_OK;
}

rj_status rt_free_async(rt_cuda *rt, uint64_t ptr, void *stream, ir_err *e) {
  SYM(f, "cuMemFreeAsync", CUdeviceptr, CUstream);
  CK("cuMemFreeAsync", f((CUdeviceptr)ptr, (CUstream)stream));
  return RJ_OK;
}

rj_status rt_host_alloc(rt_cuda *rt, size_t bytes, void **ptr, ir_err *e) {
  SYM(f, "cuMemAllocHost_v2", void **, size_t);
  *ptr = NULL;
  CK("cuMemAllocHost", f(ptr, bytes));
  memset(*ptr, 0, bytes);
  return RJ_OK;
}

void rt_host_free(rt_cuda *rt, void *ptr) {
  CUresult (*f)(void *) = (CUresult(*)(void *))rt_sym(rt, "cuMemFreeHost");
  if (f && ptr) f(ptr);
}

rj_status rt_dtod(rt_cuda *rt, uint64_t dst, uint64_t src, size_t bytes, ir_err *e) {
  SYM(f, "cuMemcpyDtoD_v2", CUdeviceptr, CUdeviceptr, size_t);
  CK("cuMemcpyDtoD", f((CUdeviceptr)dst, (CUdeviceptr)src, bytes));
  return rt_sync(rt, e);
}

rj_status rt_sync(rt_cuda *rt, ir_err *e) {
  CK("cuCtxSynchronize", rt->CtxSynchronize());
  return RJ_OK;
}

/* ---------------------------------------------------------------- tensor reductions */

rj_status rt_device_sms(rt_cuda *rt, int dev, int *sms, ir_err *e) {
  return device_attr(rt, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sms, e);
}

rj_status rt_launch_async(rt_cuda *rt, void *fn, const unsigned g[3], const unsigned b[3],
                          unsigned shared, void **args, void *stream, ir_err *e) {
  CK("cuLaunchKernel", rt->LaunchKernel((CUfunction)fn, g[0], g[1], g[2], b[0], b[1], b[2], shared,
                                        (CUstream)stream, args, NULL));
  return RJ_OK;
}

rj_status rt_fit_stack(rt_cuda *rt, void *fn, ir_err *e) {
  SYM(attr, "cuFuncGetAttribute", int *, CUfunction_attribute, CUfunction);
  SYM(get, "cuCtxGetLimit", size_t *, CUlimit);
  SYM(set, "cuCtxSetLimit", CUlimit, size_t);
  int local = 0;
  size_t have = 0;
  CK("cuFuncGetAttribute", attr(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, (CUfunction)fn));
  CK("cuCtxGetLimit", get(&have, CU_LIMIT_STACK_SIZE));
  if ((size_t)local > have) CK("cuCtxSetLimit", set(CU_LIMIT_STACK_SIZE, (size_t)local));
  return RJ_OK;
}

rj_status rt_event_pair(rt_cuda *rt, void *ev[2], ir_err *e) {
  ev[0] = ev[1] = NULL;
  CK("cuEventCreate", rt->EventCreate((CUevent *)&ev[0], CU_EVENT_DEFAULT));
  CUresult r = rt->EventCreate((CUevent *)&ev[1], CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) {
    rt->EventDestroy((CUevent)ev[0]);
    ev[0] = NULL;
    return cu_fail(rt, e, "cuEventCreate", r);
  }
  return RJ_OK;
}

void rt_event_pair_free(rt_cuda *rt, void *ev[2]) {
  for (int i = 0; i < 2; i++)
    if (ev[i]) rt->EventDestroy((CUevent)ev[i]);
}

rj_status rt_event_record(rt_cuda *rt, void *ev, void *stream, ir_err *e) {
  CK("cuEventRecord", rt->EventRecord((CUevent)ev, (CUstream)stream));
  return RJ_OK;
}

rj_status rt_event_ms(rt_cuda *rt, void *start, void *end, double *ms, ir_err *e) {
  CK("the GPU work (cuEventSynchronize)", rt->EventSynchronize((CUevent)end));
  float t = 0;
  CK("cuEventElapsedTime", rt->EventElapsedTime(&t, (CUevent)start, (CUevent)end));
  *ms = t;
  return RJ_OK;
}

/* ---------------------------------------------------------------- cubins */

rj_status rt_driver_version(rt_cuda *rt, int *version, ir_err *e) {
  SYM(f, "cuDriverGetVersion", int *);
  CK("cuDriverGetVersion", f(version));
  return RJ_OK;
}

rj_status rt_link_cubin(rt_cuda *rt, const char *ptx, int accel, unsigned char **cubin, size_t *len,
                        ir_err *e) {
  SYM(create, "cuLinkCreate_v2", unsigned, CUjit_option *, void **, CUlinkState *);
  SYM(add, "cuLinkAddData_v2", CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned,
      CUjit_option *, void **);
  SYM(complete, "cuLinkComplete", CUlinkState, void **, size_t *);
  SYM(destroy, "cuLinkDestroy", CUlinkState);
  char log[4096] = "";
  CUjit_option opts[3] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_TARGET};
  void *vals[3] = {log, (void *)(uintptr_t)sizeof log,
                   (void *)(uintptr_t)(CU_COMPUTE_ACCELERATED_TARGET_BASE + accel)};
  CUlinkState st = NULL;
  *cubin = NULL;
  *len = 0;
  CK("cuLinkCreate", create(accel ? 3 : 2, opts, vals, &st));
  const char *call = "cuLinkAddData";
  CUresult r = add(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "redjit.ptx", 0, NULL, NULL);
  void *out = NULL;
  size_t n = 0;
  if (r == CUDA_SUCCESS) {
    call = "cuLinkComplete";
    r = complete(st, &out, &n);
  }
  if (r == CUDA_SUCCESS && n && (*cubin = malloc(n))) { /* the linker's copy dies with st */
    memcpy(*cubin, out, n);
    *len = n;
  }
  destroy(st);
  if (r != CUDA_SUCCESS) {
    cu_fail(rt, e, call, r);
    size_t k = strlen(e->msg);
    snprintf(e->msg + k, sizeof e->msg - k, ": %.600s", log);
    return RJ_ECUDA;
  }
  return *cubin ? RJ_OK : ir_fail(e, RJ_ENOMEM, "out of memory (a cubin of %zu bytes)", n);
}
