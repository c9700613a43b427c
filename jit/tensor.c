/* The public tensor call (issue 6): rj_reduce, and the SM count the tensor lowering reads. */
#include "../passes/tensor.h"
#include "jit.h"

#include <stdio.h>
#include <string.h>

_Static_assert(TNS_NP <= JIT_TENSOR_MAXP, "jit_targs holds every size parameter");

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

static bool same_tensor(const rj_tensor *a, const rj_tensor *b) {
  if (a->op != b->op || a->dtype != b->dtype || a->ndim != b->ndim || a->naxes != b->naxes ||
      a->has_strides != b->has_strides || a->accum != b->accum || a->nan != b->nan ||
      a->deterministic != b->deterministic || a->dynamic != b->dynamic || a->ndim < 1 ||
      a->ndim > RJ_MAX_DIMS || a->naxes < 0 || a->naxes > RJ_MAX_DIMS)
    return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d] || (a->has_strides && a->strides[d] != b->strides[d]))
      return false;
  for (int i = 0; i < a->naxes; i++)
    if (a->axes[i] != b->axes[i]) return false;
  return true;
}

/* Repeated calls: the kernel at the head of the cache (rj_reduce moves the kernel it launches
 * there) is the one rj_compile would return when the request's fields are the same (so it was
 * validated), it was compiled for the target `opt` resolves to, with PTX version 0 and no
 * emulation, for the SM count of opt's device (the "|0|smsN" end of its key), and it is loaded
 * on opt's device.  Skips validation, the canonical JSON and the cache walk. */
static rj_kernel *fast_kernel(rj_ctx *ctx, const rj_request *req, const rj_options *opt) {
  rj_kernel *k = ctx->kernels;
  if (!k || k->loaded_on != opt->device || k->req.kind != RJ_KIND_TENSOR || opt->ptx_version ||
      !strstr(k->key, "|0|sms") || !same_tensor(&k->req.u.tensor, &req->u.tensor) ||
      strcmp(k->req.variant, req->variant) != 0)
    return NULL;
  const ir_target *tg = NULL;
  ir_err saved = ctx->err;
  if (jit_target(ctx, opt, &tg) != RJ_OK || tg->emulated || strcmp(tg->name, k->target) != 0) {
    ctx->err = saved;
    return NULL;
  }
  char sms[24]; /* the SM count the plan was made for (two GPUs of one target may differ) */
  snprintf(sms, sizeof sms, "|0|sms%d", jit_tensor_sms(ctx, opt));
  size_t n = strlen(k->key), m = strlen(sms);
  return n >= m && strcmp(k->key + n - m, sms) == 0 ? k : NULL;
}

/* Moves k to the head of the cache list (the fast path looks there first). */
static void to_front(rj_ctx *ctx, rj_kernel *k) {
  for (rj_kernel **p = &ctx->kernels; *p; p = &(*p)->next)
    if (*p == k) {
      *p = k->next;
      k->next = ctx->kernels;
      ctx->kernels = k;
      return;
    }
}

rj_status jit_tensor_args(rj_ctx *ctx, const rj_kernel *k, const rj_request *req, uint64_t src,
                          uint64_t dst, jit_targs *a) {
  a->ptr[0] = src;
  a->ptr[1] = dst;
  a->args[0] = &a->ptr[0];
  a->args[1] = &a->ptr[1];
  memcpy(a->grid, k->grid, sizeof a->grid);
  memcpy(a->block, k->block, sizeof a->block);
  if (!k->dyn_np) return RJ_OK;
  /* a runtime-size kernel: this shape's plan, for the SM count the kernel was compiled for */
  tns_dyn d;
  char why[256];
  const char *no = tns_dynamic(req, ir_target_find(k->target), k->sms, &d, why, sizeof why);
  if (no || d.np != k->dyn_np || strcmp(d.bucket, k->bucket) != 0)
    return ir_fail(
        &ctx->err, RJ_ELLVM,
        "internal: the runtime-size kernel of bucket \"%s\" does not serve this shape (%s)",
        k->bucket, no ? no : d.bucket);
  for (int i = 0; i < d.np; i++) {
    a->p[i] = d.p[i];
    a->args[2 + i] = &a->p[i];
  }
  a->grid[0] = d.grid;
  a->grid[1] = a->grid[2] = 1;
  a->block[0] = d.block;
  a->block[1] = a->block[2] = 1;
  return RJ_OK;
}

RJ_API rj_status rj_reduce(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                           const void *src, void *dst, void *stream) {
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (!req) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "request: NULL"));
  if (req->kind != RJ_KIND_TENSOR)
    return jit_done(ctx,
                    ir_fail(&ctx->err, RJ_EINVAL, "kind: rj_reduce takes tensor requests (got %s)",
                            ir_kind_name(req->kind) ? ir_kind_name(req->kind) : "?"));
  if (!src) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "src: NULL device pointer"));
  if (!dst) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "dst: NULL device pointer"));
  rj_options dflt;
  if (!opt) {
    rj_options_init(&dflt);
    opt = &dflt;
  }
  rj_status s;
  /* dynamic requests: rj_compile validates, plans and finds the bucket's kernel (no JSON) */
  rj_kernel *k = req->u.tensor.dynamic ? NULL : fast_kernel(ctx, req, opt);
  if (!k) {
    if ((s = rj_compile(ctx, req, opt, &k))) return s;
    to_front(ctx, k);
  }
  rt_cuda *rt = NULL;
  if ((s = jit_cuda(ctx, &rt))) return jit_done(ctx, s);
  if ((s = rt_enter(rt, opt->device, &ctx->err))) return jit_done(ctx, s);
  jit_targs a;
  if (!(s = jit_tensor_args(ctx, k, req, (uint64_t)(uintptr_t)src, (uint64_t)(uintptr_t)dst, &a))) {
    jit_launch_args l = {.args = a.args, .stream = stream};
    memcpy(l.grid, a.grid, sizeof l.grid);
    memcpy(l.block, a.block, sizeof l.block);
    s = jit_launch(ctx, k, opt->device, &l);
  }
  rt_leave(rt);
  return jit_done(ctx, s);
}
