/* rj_reduce_multi: a list request over a device table of tensors, in one launch on the caller's
 * stream (docs/TENSOR.md "Many tensors").  The table stays in device memory: nothing is copied,
 * allocated or waited for per call, so the launch can be captured in a CUDA graph and replayed. */
#include "jit.h"

#include <stdio.h>
#include <string.h>

/* The call's arguments against the request. */
static rj_status check_call(rj_ctx *ctx, const rj_request *req, rj_devptr table, int64_t n,
                            rj_devptr dst, rj_devptr total) {
  if (!req) return ir_fail(&ctx->err, RJ_EINVAL, "request: NULL");
  if (req->kind != RJ_KIND_TENSOR || !req->u.tensor.list_count)
    return ir_fail(&ctx->err, RJ_EINVAL,
                   "list: rj_reduce_multi takes a tensor request with \"list\" (rj_reduce takes "
                   "the others)");
  const rj_tensor *t = &req->u.tensor;
  if (!table) return ir_fail(&ctx->err, RJ_EINVAL, "table: NULL device pointer");
  rj_status s = jit_aligned(&ctx->err, "table", table, 8, "fields (int64)");
  if (s) return s;
  if (n != t->list_count)
    return ir_fail(&ctx->err, RJ_EINVAL, "n: %lld tensors, the request's list.count is %lld",
                   (long long)n, (long long)t->list_count);
  if (total && !t->list_total)
    return ir_fail(&ctx->err, RJ_EINVAL,
                   "total: the request has no total (set \"list\": {\"total\": true})");
  if (!dst && !total)
    return ir_fail(&ctx->err, RJ_EINVAL, "dst: NULL device pointer, and no total either");
  return RJ_OK;
}

/* dst and total aligned to the result's dtype (k's request: validated). */
static rj_status check_outputs(rj_ctx *ctx, const rj_kernel *k, rj_devptr dst, rj_devptr total) {
  rj_dtype r = ir_tensor_result(&k->req.u.tensor);
  char what[32];
  snprintf(what, sizeof what, "dtype %s", ir_dtype(r)->name);
  unsigned b = (unsigned)ir_dtype(r)->bytes;
  rj_status s = dst ? jit_aligned(&ctx->err, "dst", dst, b, what) : RJ_OK;
  return s || !total ? s : jit_aligned(&ctx->err, "total", total, b, what);
}

/* Launches k (planned as plan) with (table, dst, total, n) on dev's primary context. */
static rj_status launch(rj_ctx *ctx, rj_kernel *k, const pass_plan *plan, int dev, uint64_t ptr[3],
                        int64_t n, void *stream) {
  rt_cuda *rt = NULL;
  bool pushed = false;
  rj_status s = jit_cuda(ctx, &rt);
  if (s || (s = rt_enter_lazy(rt, dev, &pushed, &ctx->err))) return s;
  void *args[4] = {&ptr[0], &ptr[1], &ptr[2], &n};
  jit_launch_args l = {.args = args, .stream = stream};
  memcpy(l.grid, plan->grid, sizeof l.grid);
  memcpy(l.block, plan->block, sizeof l.block);
  s = jit_launch(ctx, k, dev, &l);
  if (pushed) rt_leave(rt);
  return s;
}

RJ_API rj_status rj_reduce_multi(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                                 rj_devptr table, int64_t n, rj_devptr dst, rj_devptr total,
                                 void *stream) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = check_call(ctx, req, table, n, dst, total);
  if (s) return jit_done(ctx, s);
  rj_options dflt;
  if (!opt) {
    rj_options_init(&dflt);
    opt = &dflt;
  }
  pass_plan plan;
  rj_kernel *k = NULL;
  if ((s = jit_compile(ctx, req, opt, &k, &plan)) || (s = check_outputs(ctx, k, dst, total)))
    return jit_done(ctx, s);
  uint64_t ptr[3] = {table, dst, total};
  return jit_done(ctx, launch(ctx, k, &plan, opt->device, ptr, n, stream));
}
