/* Running on the GPU through the public API: device memory, loading and launching a compiled
 * kernel, waiting for a device, timing work on a stream.  Each call enters the device's primary
 * context for its duration. */
#include "jit.h"

#include <string.h>

static rj_status enter(rj_ctx *ctx, int device, rt_cuda **rt) {
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = jit_cuda(ctx, rt);
  if (!s) s = rt_enter(*rt, device, &ctx->err);
  return s;
}

RJ_API rj_status rj_device_alloc(rj_ctx *ctx, int device, size_t bytes, rj_devptr *ptr) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, ptr, "ptr");
  rt_cuda *rt = NULL;
  *ptr = 0;
  rj_status s = enter(ctx, device, &rt);
  if (s) return jit_done(ctx, s);
  s = rt_alloc(rt, bytes, ptr, &ctx->err);
  rt_leave(rt);
  return jit_done(ctx, s);
}

RJ_API rj_status rj_device_free(rj_ctx *ctx, int device, rj_devptr ptr) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  rt_cuda *rt = NULL;
  rj_status s = enter(ctx, device, &rt);
  if (s) return jit_done(ctx, s);
  rt_free(rt, ptr);
  rt_leave(rt);
  return jit_done(ctx, RJ_OK);
}

RJ_API rj_status rj_memcpy_htod(rj_ctx *ctx, int device, rj_devptr dst, const void *src,
                                size_t bytes) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, src || !bytes, "src");
  rt_cuda *rt = NULL;
  rj_status s = enter(ctx, device, &rt);
  if (s) return jit_done(ctx, s);
  s = rt_htod(rt, dst, src, bytes, &ctx->err);
  rt_leave(rt);
  return jit_done(ctx, s);
}

RJ_API rj_status rj_memcpy_dtoh(rj_ctx *ctx, int device, void *dst, rj_devptr src, size_t bytes) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, dst || !bytes, "dst");
  rt_cuda *rt = NULL;
  rj_status s = enter(ctx, device, &rt);
  if (s) return jit_done(ctx, s);
  s = rt_dtoh(rt, dst, src, bytes, &ctx->err);
  rt_leave(rt);
  return jit_done(ctx, s);
}

RJ_API rj_status rj_kernel_launch(rj_ctx *ctx, rj_kernel *k, int device, const unsigned grid[3],
                                  const unsigned block[3], unsigned shared_bytes, void **args,
                                  double *ms) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (!k || !grid || !block)
    return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "k, grid and block are required"));
  for (int i = 0; i < 3; i++)
    if (!grid[i] || !block[i])
      return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "%s[%d]: must be at least 1",
                                   grid[i] ? "block" : "grid", i));
  rt_cuda *rt = NULL;
  rj_status s = enter(ctx, device, &rt);
  if (s) return jit_done(ctx, s);
  double waited_ms = 0; /* a launch through this call is always waited for */
  jit_launch_args l = {.shared = shared_bytes, .args = args, .ms = ms ? ms : &waited_ms};
  memcpy(l.grid, grid, sizeof l.grid);
  memcpy(l.block, block, sizeof l.block);
  s = jit_launch(ctx, k, device, &l);
  rt_leave(rt);
  return jit_done(ctx, s);
}

RJ_API rj_status rj_kernel_load(rj_ctx *ctx, rj_kernel *k, int device, double *ms) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, k, "k");
  rt_cuda *rt = NULL;
  if (ms) *ms = 0;
  rj_status s = enter(ctx, device, &rt);
  if (s) return jit_done(ctx, s);
  s = jit_load(ctx, k, device, ms);
  rt_leave(rt);
  return jit_done(ctx, s);
}

RJ_API rj_status rj_device_sync(rj_ctx *ctx, int device) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  rt_cuda *rt = NULL;
  rj_status s = enter(ctx, device, &rt);
  if (s) return jit_done(ctx, s);
  s = rt_sync(rt, &ctx->err);
  rt_leave(rt);
  return jit_done(ctx, s);
}

RJ_API rj_status rj_stream_time(rj_ctx *ctx, int device, void *stream, rj_enqueue_fn enqueue,
                                void *ud, double *ms) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, enqueue, "enqueue");
  rt_cuda *rt = NULL;
  void *ev[2] = {NULL, NULL};
  double t = 0;
  rj_status s = enter(ctx, device, &rt);
  if (s) return jit_done(ctx, s);
  if (!(s = rt_event_pair(rt, ev, &ctx->err)) &&
      !(s = rt_event_record(rt, ev[0], stream, &ctx->err)))
    s = enqueue(ctx, ud); /* its own status and message */
  if (!s && !(s = rt_event_record(rt, ev[1], stream, &ctx->err)))
    s = rt_event_ms(rt, ev[0], ev[1], &t, &ctx->err);
  rt_event_pair_free(rt, ev);
  rt_leave(rt);
  if (!s && ms) *ms = t;
  return jit_done(ctx, s);
}
