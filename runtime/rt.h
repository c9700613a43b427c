/* runtime/ — the only code that touches the CUDA driver.  libcuda.so.1 is opened with dlopen
 * when first needed, so everything up to PTX works with no driver.  Handles cross this interface
 * as plain integers and pointers; cuda.h stays inside runtime/. */
#ifndef RJ_RT_H
#define RJ_RT_H

#include "../ir/ir.h"

typedef struct rt_cuda rt_cuda;

/* Opens the driver and cuInit's it; RJ_ENODEV when libcuda or a GPU is missing. */
rj_status rt_open(rt_cuda **out, ir_err *e);
void rt_close(rt_cuda *rt);
rj_status rt_device_count(rt_cuda *rt, int *n, ir_err *e);
rj_status rt_device_cc(rt_cuda *rt, int dev, int *major, int *minor, ir_err *e);
/* The device's name (cuDeviceGetName) into name[n]. */
rj_status rt_device_name(rt_cuda *rt, int dev, char *name, int n, ir_err *e);
/* Makes device dev's primary context current (pushed); rt_leave pops it. */
rj_status rt_enter(rt_cuda *rt, int dev, ir_err *e);
void rt_leave(rt_cuda *rt);
/* rt_enter, unless dev's primary context is current already (as the CUDA runtime leaves it):
 * *pushed says whether it was pushed, and only then does the caller rt_leave. */
rj_status rt_enter_lazy(rt_cuda *rt, int dev, bool *pushed, ir_err *e);

/* Loads image (PTX text, JIT-compiled by the driver, or a cubin made by rt_link_cubin) into the
 * current context and finds its function entry. */
rj_status rt_module_load(rt_cuda *rt, const void *image, const char *entry, void **mod, void **fn,
                         ir_err *e);
/* The driver's version (cuDriverGetVersion: 1000 * major + 10 * minor).  No context. */
rj_status rt_driver_version(rt_cuda *rt, int *version, ir_err *e);
/* PTX into a cubin for the current context's device by the driver's linker (cuLinkCreate,
 * cuLinkAddData, cuLinkComplete): *cubin (malloc'd, *len bytes) is the caller's.  accel: 0, or
 * the compute capability (90 for sm_90a) of PTX for an architecture-specific target, linked for
 * that target.  The linker's error log ends the message of a failure. */
rj_status rt_link_cubin(rt_cuda *rt, const char *ptx, int accel, unsigned char **cubin, size_t *len,
                        ir_err *e);
void rt_module_unload(rt_cuda *rt, void *mod);
rj_status rt_alloc(rt_cuda *rt, size_t bytes, uint64_t *ptr, ir_err *e);
void rt_free(rt_cuda *rt, uint64_t ptr);
rj_status rt_htod(rt_cuda *rt, uint64_t dst, const void *src, size_t bytes, ir_err *e);
rj_status rt_dtoh(rt_cuda *rt, void *dst, uint64_t src, size_t bytes, ir_err *e);
/* Launches fn and waits for it; *ms is the kernel time measured with events (may be NULL). */
rj_status rt_launch(rt_cuda *rt, void *fn, const unsigned grid[3], const unsigned block[3],
                    unsigned shared, void **args, double *ms, ir_err *e);

/* ---- treduce: peers, streams, events, asynchronous copies and launches.  These look
 * their driver entry points up by name on use (no table slots), and need rt_enter of the device
 * whose context they work in, unless said otherwise.  Streams and events are opaque pointers. */
/* cuDeviceCanAccessPeer(dev -> peer): 1 when dev's kernels can load peer's memory.  No context. */
rj_status rt_peer_can_access(rt_cuda *rt, int dev, int peer, int *can, ir_err *e);
/* Lets the current context (dev's) load peer's allocations; "already enabled" is success. */
rj_status rt_peer_enable(rt_cuda *rt, int peer, ir_err *e);
rj_status rt_stream_new(rt_cuda *rt, void **stream, ir_err *e); /* synchronises with stream 0 */
void rt_stream_free(rt_cuda *rt, void *stream);
rj_status rt_stream_sync(rt_cuda *rt, void *stream, ir_err *e);
rj_status rt_event_new(rt_cuda *rt, void **ev, ir_err *e);
void rt_event_free(rt_cuda *rt, void *ev);
rj_status rt_stream_wait(rt_cuda *rt, void *stream, void *ev, ir_err *e);
/* cuMemcpyPeerAsync from (src_dev, src) to (dst_dev, dst) on stream (cuMemcpyDtoDAsync when
 * both are one GPU); the devices' primary contexts are retained here. */
rj_status rt_copy_peer_async(rt_cuda *rt, uint64_t dst, int dst_dev, uint64_t src, int src_dev,
                             size_t bytes, void *stream, ir_err *e);
/* RJ_EINVAL naming `what` unless stream belongs to dev's primary context (NULL and the special
 * handles are the current context's: call it inside rt_enter(dev)). */
rj_status rt_stream_check(rt_cuda *rt, void *stream, int dev, const char *what, ir_err *e);
/* *capturing = 1 when stream is being captured into a CUDA graph (cuStreamIsCapturing); NULL,
 * the legacy default stream, never is. */
rj_status rt_stream_capturing(rt_cuda *rt, void *stream, int *capturing, ir_err *e);
/* Stream-ordered allocation and free on stream (cuMemAllocAsync / cuMemFreeAsync, the device's
 * default pool): the memory is usable by work ordered after the allocation on stream, and must
 * not be touched by work that may run after the free. */
rj_status rt_alloc_async(rt_cuda *rt, size_t bytes, void *stream, uint64_t *ptr, ir_err *e);
rj_status rt_free_async(rt_cuda *rt, uint64_t ptr, void *stream, ir_err *e);
/* Page-locked host memory, zeroed (cuMemAllocHost): with unified addressing (every GPU redjit
 * runs on) the pointer is also a device address, valid in every context, so kernels on any GPU
 * store to it and the host reads it without a copy or a wait. */
rj_status rt_host_alloc(rt_cuda *rt, size_t bytes, void **ptr, ir_err *e);
void rt_host_free(rt_cuda *rt, void *ptr);
/* Device-to-device copy in the current context, then waits for all of that context's work
 * (cuMemcpyDtoD + cuCtxSynchronize). */
rj_status rt_dtod(rt_cuda *rt, uint64_t dst, uint64_t src, size_t bytes, ir_err *e);
/* Waits for all work of the current context (cuCtxSynchronize). */
rj_status rt_sync(rt_cuda *rt, ir_err *e);
/* A driver entry point by name (NULL when this driver lacks it), for runtime/-only callers. */
void *rt_sym(rt_cuda *rt, const char *name);

/* tensor reductions */
rj_status rt_device_sms(rt_cuda *rt, int dev, int *sms, ir_err *e); /* multiprocessors */
/* Launches fn on stream (a CUstream; NULL: the legacy default stream) without waiting. */
rj_status rt_launch_async(rt_cuda *rt, void *fn, const unsigned grid[3], const unsigned block[3],
                          unsigned shared, void **args, void *stream, ir_err *e);
rj_status rt_event_pair(rt_cuda *rt, void *ev[2], ir_err *e);
void rt_event_pair_free(rt_cuda *rt, void *ev[2]);
rj_status rt_event_record(rt_cuda *rt, void *ev, void *stream, ir_err *e);
/* Waits for end; *ms = the time from start to end. */
rj_status rt_event_ms(rt_cuda *rt, void *start, void *end, double *ms, ir_err *e);
/* Raises the current context's per-thread stack (CU_LIMIT_STACK_SIZE) to fn's local memory
 * where it is smaller, so that launching fn never makes the driver grow it: a launch that grows
 * it first waits for all of the device's work, which never ends when that work waits for the
 * kernel being launched (the ring's hops).  Raising it here waits for the device's earlier work
 * instead, once per size. */
rj_status rt_fit_stack(rt_cuda *rt, void *fn, ir_err *e);

#endif
