/* The public tensor call (issue 6): rj_reduce, and the SM count the tensor lowering reads. */
#include "jit.h"

#include <string.h>

int jit_tensor_sms(rj_ctx *ctx, const rj_options *opt) {
  rt_cuda *rt = NULL;
  ir_err saved = ctx->err;
  int sms = 0;
  if (jit_cuda(ctx, &rt) != RJ_OK ||
      rt_device_sms(rt, opt ? opt->device : 0, &sms, &ctx->err) != RJ_OK)
    sms = 0;
  ctx->err = saved;
  return sms;
}

RJ_API rj_status rj_reduce(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                           const void *src, void *dst, void *stream) {
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (!req) return jit_status(ctx, ir_fail(&ctx->err, RJ_EINVAL, "request: NULL"));
  if (req->kind != RJ_KIND_TENSOR)
    return jit_status(ctx, ir_fail(&ctx->err, RJ_EINVAL,
                                   "kind: rj_reduce takes tensor requests (got %s)",
                                   ir_kind_name(req->kind) ? ir_kind_name(req->kind) : "?"));
  if (!src) return jit_status(ctx, ir_fail(&ctx->err, RJ_EINVAL, "src: NULL device pointer"));
  if (!dst) return jit_status(ctx, ir_fail(&ctx->err, RJ_EINVAL, "dst: NULL device pointer"));
  rj_options dflt;
  if (!opt) {
    rj_options_init(&dflt);
    opt = &dflt;
  }
  rj_kernel *k = NULL;
  rj_status s = rj_compile(ctx, req, opt, &k);
  if (s) return s;
  rt_cuda *rt = NULL;
  if ((s = jit_cuda(ctx, &rt))) return jit_status(ctx, s);
  if ((s = rt_enter(rt, opt->device, &ctx->err))) return jit_status(ctx, s);
  if (!(s = jit_load(ctx, k, opt->device, NULL))) {
    uint64_t a = (uint64_t)(uintptr_t)src, b = (uint64_t)(uintptr_t)dst;
    void *args[2] = {&a, &b};
    s = rt_launch_async(rt, k->function, k->grid, k->block, 0, args, stream, &ctx->err);
  }
  rt_leave(rt);
  return jit_status(ctx, s);
}
