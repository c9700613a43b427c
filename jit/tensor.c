/* The public tensor calls: rj_reduce (a fast path for repeated calls, else rj_compile's pipeline),
 * rj_tensor_launch (a kernel the caller kept), and the launch arguments of a tensor kernel from
 * its plan. */
#include "jit.h"

#include <stdio.h>
#include <string.h>

_Static_assert(PASS_PLAN_NP <= JIT_TENSOR_MAXP, "jit_targs holds every size parameter");

/* acc_dtype "f64" where it changes the kernel (an f64 input accumulates in f64 either way) */
static bool wide_acc(const rj_tensor *t) {
  return t->acc_f64 && t->dtype != RJ_F64;
}

static bool same_tensor(const rj_tensor *a, const rj_tensor *b) {
  if (a->op != b->op || a->dtype != b->dtype || a->ndim != b->ndim || a->naxes != b->naxes ||
      a->has_strides != b->has_strides || a->accum != b->accum || a->nan != b->nan ||
      a->deterministic != b->deterministic || a->dynamic != b->dynamic || a->ndim < 1 ||
      a->ndim > RJ_MAX_DIMS || a->naxes < 0 || a->naxes > RJ_MAX_DIMS)
    return false;
  if ((a->op == RJ_OP_VAR || a->op == RJ_OP_STD) && a->correction != b->correction) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d] || (a->has_strides && a->strides[d] != b->strides[d]))
      return false;
  for (int i = 0; i < a->naxes; i++)
    if (a->axes[i] != b->axes[i]) return false;
  if (a->values != b->values || wide_acc(a) != wide_acc(b)) return false;
  if (a->op == RJ_OP_CUSTOM) /* the combine's text decides, not where it lies */
    return a->combine.ir && b->combine.ir && a->combine.identity == b->combine.identity &&
           a->combine.commutative == b->combine.commutative &&
           strcmp(a->combine.fn, b->combine.fn) == 0 && strcmp(a->combine.ir, b->combine.ir) == 0 &&
           a->combine.nfields == b->combine.nfields &&
           memcmp(a->combine.fields, b->combine.fields, sizeof a->combine.fields) == 0 &&
           memcmp(a->combine.field_identity, b->combine.field_identity,
                  sizeof a->combine.field_identity) == 0 &&
           strcmp(a->combine.lift, b->combine.lift) == 0 &&
           strcmp(a->combine.finish, b->combine.finish) == 0 &&
           a->combine.result == b->combine.result;
  return true;
}

/* Repeated calls: the kernel at the head of the cache (rj_reduce moves the kernel it launches
 * there) is the one rj_compile would return when the request's fields are the same (so it was
 * validated), and its key ends as rj_compile's would (the target opt resolves to, opt's PTX
 * version, the SM count of opt's device when its plan read one), and it is loaded on opt's
 * device.  Skips validation, dispatch, the plan, the canonical JSON and the cache walk. */
static rj_kernel *fast_kernel(rj_ctx *ctx, const rj_request *req, const rj_options *opt) {
  rj_kernel *k = ctx->kernels;
  if (jit_text_check(ctx, req))
    return NULL; /* a stale parsed text, not read: jit_compile refuses */
  if (!k || k->loaded_on != opt->device || k->req.kind != RJ_KIND_TENSOR ||
      !same_tensor(&k->req.u.tensor, &req->u.tensor) || strcmp(k->req.variant, req->variant) != 0)
    return NULL;
  const ir_target *tg = NULL;
  ir_err saved = ctx->err;
  if (jit_target(ctx, opt, &tg) != RJ_OK) {
    ctx->err = saved;
    return NULL;
  }
  char tail[64]; /* the SM count the plan was made for (two GPUs of one target may differ) */
  jit_key_tail(tail, sizeof tail, tg, opt->ptx_version,
               k->plan.sms ? jit_device_sms(ctx, opt->device) : 0);
  size_t n = strlen(k->key), m = strlen(tail);
  return n >= m && strcmp(k->key + n - m, tail) == 0 ? k : NULL;
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

/* The launch of a kernel planned as plan: its geometry, (src, dst) and the plan's size
 * parameters. */
static void plan_args(const pass_plan *plan, uint64_t src, uint64_t dst, uint64_t values,
                      jit_targs *a) {
  int n = values ? 3 : 2; /* argmax / argmin values: a third pointer after dst */
  a->ptr[0] = src;
  a->ptr[1] = dst;
  a->ptr[2] = values;
  for (int i = 0; i < n; i++)
    a->args[i] = &a->ptr[i];
  memcpy(a->grid, plan->grid, sizeof a->grid);
  memcpy(a->block, plan->block, sizeof a->block);
  for (int i = 0; i < plan->np; i++) {
    a->p[i] = plan->p[i];
    a->args[n + i] = &a->p[i];
  }
}

/* Launches tensor kernel k, planned as plan, on device dev's primary context (pushed unless it is
 * current already) and `stream`. */
static rj_status launch_plan(rj_ctx *ctx, rj_kernel *k, const pass_plan *plan, int dev,
                             uint64_t src, uint64_t dst, uint64_t values, void *stream) {
  rt_cuda *rt = NULL;
  bool pushed = false;
  rj_status s = jit_cuda(ctx, &rt);
  if (s || (s = rt_enter_lazy(rt, dev, &pushed, &ctx->err))) return s;
  jit_targs a;
  plan_args(plan, src, dst, values, &a);
  jit_launch_args l = {.args = a.args, .stream = stream};
  memcpy(l.grid, a.grid, sizeof l.grid);
  memcpy(l.block, a.block, sizeof l.block);
  s = jit_launch(ctx, k, dev, &l);
  if (pushed) rt_leave(rt);
  return s;
}

/* Whether the request's values flag and the call agree (values: the call's pointer, or 0 for
 * rj_reduce / rj_tensor_launch). */
static rj_status check_values(rj_ctx *ctx, const rj_tensor *t, bool with, uint64_t values) {
  if (t->values && !with)
    return ir_fail(&ctx->err, RJ_EINVAL,
                   "values: the request writes the extreme values too: launch it with "
                   "rj_reduce_values / rj_tensor_launch_values");
  if (!t->values && with)
    return ir_fail(&ctx->err, RJ_EINVAL,
                   "values: the request does not ask for them (set \"values\": true, op argmax "
                   "or argmin)");
  if (with && !values) return ir_fail(&ctx->err, RJ_EINVAL, "values: NULL device pointer");
  return RJ_OK;
}

static rj_status reduce(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_devptr src,
                        rj_devptr dst, bool with, rj_devptr values, void *stream) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (!req) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "request: NULL"));
  if (req->kind != RJ_KIND_TENSOR)
    return jit_done(ctx,
                    ir_fail(&ctx->err, RJ_EINVAL, "kind: rj_reduce takes tensor requests (got %s)",
                            ir_kind_name(req->kind) ? ir_kind_name(req->kind) : "?"));
  if (!src) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "src: NULL device pointer"));
  if (!dst) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "dst: NULL device pointer"));
  rj_status s = check_values(ctx, &req->u.tensor, with, values);
  if (s) return jit_done(ctx, s);
  rj_options dflt;
  if (!opt) {
    rj_options_init(&dflt);
    opt = &dflt;
  }
  /* dynamic requests: the pipeline plans them and finds the bucket's kernel (no JSON) */
  pass_plan fresh;
  rj_kernel *k = req->u.tensor.dynamic ? NULL : fast_kernel(ctx, req, opt);
  const pass_plan *plan = k ? &k->plan : &fresh;
  if (k) {
    ctx->memory_hits++;
    jit_cache_touch(ctx, k);
    if (jit_log_on(ctx))
      jit_log(ctx, "memory hit %016llx %s", (unsigned long long)k->hash, k->variant);
  } else {
    if ((s = jit_compile(ctx, req, opt, &k, &fresh))) return jit_done(ctx, s);
    to_front(ctx, k);
  }
  return jit_done(ctx, launch_plan(ctx, k, plan, opt->device, src, dst, values, stream));
}

RJ_API rj_status rj_reduce(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_devptr src,
                           rj_devptr dst, void *stream) {
  return reduce(ctx, req, opt, src, dst, false, 0, stream);
}

RJ_API rj_status rj_reduce_values(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                                  rj_devptr src, rj_devptr dst, rj_devptr values, void *stream) {
  return reduce(ctx, req, opt, src, dst, true, values, stream);
}

static rj_status tensor_launch(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src, rj_devptr dst,
                               bool with, rj_devptr values, void *stream) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, k, "kernel");
  ctx->err.status = RJ_OK;
  ctx->err.msg[0] = 0;
  if (k->ctx != ctx) /* its loads are that context's, which another thread may be using */
    return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "kernel: compiled in another context"));
  if (k->req.kind != RJ_KIND_TENSOR)
    return jit_done(ctx,
                    ir_fail(&ctx->err, RJ_EINVAL,
                            "kernel: not compiled from a tensor request (variant %s)", k->variant));
  if (k->plan.np)
    return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL,
                                 "kernel: a runtime-size kernel (a dynamic request) takes its "
                                 "sizes from the request: use rj_reduce"));
  if (!src) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "src: NULL device pointer"));
  if (!dst) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "dst: NULL device pointer"));
  rj_status s = check_values(ctx, &k->req.u.tensor, with, values);
  if (s) return jit_done(ctx, s);
  return jit_done(ctx, launch_plan(ctx, k, &k->plan, device, src, dst, values, stream));
}

RJ_API rj_status rj_tensor_launch(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                  rj_devptr dst, void *stream) {
  return tensor_launch(ctx, k, device, src, dst, false, 0, stream);
}

RJ_API rj_status rj_tensor_launch_values(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                         rj_devptr dst, rj_devptr values, void *stream) {
  return tensor_launch(ctx, k, device, src, dst, true, values, stream);
}
