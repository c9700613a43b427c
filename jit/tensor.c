/* The public tensor calls: rj_reduce (rj_compile's pipeline, whose memo serves repeated calls),
 * rj_tensor_launch (a kernel the caller kept), and the launch arguments of a tensor kernel from
 * its plan. */
#include "jit.h"

#include <stdio.h>
#include <string.h>

_Static_assert(PASS_PLAN_NP <= JIT_TENSOR_MAXP, "jit_targs holds every size parameter");

/* A launch's pointers: src, dst, values (0: none), the request's other inputs, and with
 * "segments" (seg) the offsets and the status word (0: none). */
typedef struct tptrs {
  uint64_t src, dst, values;
  const rj_devptr *others;
  int nothers;
  bool seg;
  uint64_t offsets, status;
} tptrs;

/* The launch of a kernel planned as plan: its geometry, (src, dst, values?, others...) and the
 * plan's size parameters. */
static void plan_args(const pass_plan *plan, const tptrs *q, jit_targs *a) {
  int n = q->values ? 3 : 2; /* argmax / argmin values: a third pointer after dst */
  a->ptr[0] = q->src;
  a->ptr[1] = q->dst;
  a->ptr[2] = q->values;
  for (int i = 0; i < q->nothers; i++)
    a->ptr[n++] = q->others[i];
  if (q->seg) a->ptr[n++] = q->offsets, a->ptr[n++] = q->status;
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
                             const tptrs *q, void *stream) {
  rt_cuda *rt = NULL;
  bool pushed = false;
  rj_status s = jit_cuda(ctx, &rt);
  if (s || (s = rt_enter_lazy(rt, dev, &pushed, &ctx->err))) return s;
  jit_targs a;
  plan_args(plan, q, &a);
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

/* The call's other inputs against the request's nothers. */
static rj_status check_others(rj_ctx *ctx, const rj_tensor *t, const tptrs *q) {
  if (q->nothers != t->nothers)
    return ir_fail(&ctx->err, RJ_EINVAL,
                   "others: the request takes %d inputs besides src, the call gives %d%s",
                   t->nothers, q->nothers, q->nothers ? "" : " (use rj_reduce_n)");
  for (int i = 0; i < q->nothers; i++)
    if (!q->others || !q->others[i])
      return ir_fail(&ctx->err, RJ_EINVAL, "others[%d]: NULL device pointer", i);
  if (!t->segments != !q->seg)
    return ir_fail(&ctx->err, RJ_EINVAL,
                   q->seg ? "segments: the request has none (use rj_reduce / rj_tensor_launch)"
                          : "segments: the request reduces segments: launch it with "
                            "rj_reduce_segments / rj_tensor_launch_segments");
  if (q->seg && !q->offsets)
    return ir_fail(&ctx->err, RJ_EINVAL, "segments: NULL offsets device pointer");
  if (!q->seg) return RJ_OK;
  bool i32 = t->segments_dtype == RJ_I32;
  rj_status s = jit_aligned(&ctx->err, "segments: offsets", q->offsets, i32 ? 4 : 8,
                            i32 ? "dtype i32" : "dtype i64");
  return s ? s : jit_aligned(&ctx->err, "segments: status", q->status, 4, "status word (u32)");
}

/* An array's element 0 aligned to its dtype (0: not given). */
static rj_status check_aligned(rj_ctx *ctx, const char *name, int i, uint64_t ptr, rj_dtype dt) {
  char field[32], what[32];
  snprintf(field, sizeof field, i < 0 ? "%s" : "%s[%d]", name, i);
  snprintf(what, sizeof what, "dtype %s", ir_dtype(dt)->name);
  return ptr ? jit_aligned(&ctx->err, field, ptr, (unsigned)ir_dtype(dt)->bytes, what) : RJ_OK;
}

/* A launch's pointers against the request: non-NULL, as many as it takes. */
static rj_status check_ptrs(rj_ctx *ctx, const rj_tensor *t, const tptrs *q, bool with) {
  if (!q->src) return ir_fail(&ctx->err, RJ_EINVAL, "src: NULL device pointer");
  if (!q->dst) return ir_fail(&ctx->err, RJ_EINVAL, "dst: NULL device pointer");
  rj_status s = check_values(ctx, t, with, q->values);
  return s ? s : check_others(ctx, t, q);
}

/* ... and aligned to their dtypes (t validated: its dtypes are known). */
static rj_status check_alignment(rj_ctx *ctx, const rj_tensor *t, const tptrs *q) {
  rj_status s;
  if ((s = check_aligned(ctx, "src", -1, q->src, t->dtype)) ||
      (s = check_aligned(ctx, "dst", -1, q->dst, ir_tensor_result(t))) ||
      (s = check_aligned(ctx, "values", -1, q->values, t->dtype)))
    return s;
  for (int i = 0; i < q->nothers && !s; i++)
    s = check_aligned(ctx, "others", i, q->others[i], t->other_dtype[i]);
  return s;
}

/* A list request's kernel takes a table, not src: rj_reduce_multi launches it. */
static rj_status not_list(rj_ctx *ctx) {
  return ir_fail(&ctx->err, RJ_EINVAL,
                 "list: a list request launches through rj_reduce_multi (a table of tensors)");
}

static rj_status reduce(rj_ctx *ctx, const rj_request *req, const rj_options *opt, const tptrs *q,
                        bool with, void *stream) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (!req) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "request: NULL"));
  if (req->kind != RJ_KIND_TENSOR)
    return jit_done(ctx,
                    ir_fail(&ctx->err, RJ_EINVAL, "kind: rj_reduce takes tensor requests (got %s)",
                            ir_kind_name(req->kind) ? ir_kind_name(req->kind) : "?"));
  if (req->u.tensor.list_count) return jit_done(ctx, not_list(ctx));
  rj_status s = check_ptrs(ctx, &req->u.tensor, q, with);
  if (s) return jit_done(ctx, s);
  rj_options dflt;
  if (!opt) {
    rj_options_init(&dflt);
    opt = &dflt;
  }
  /* a repeated request: the memo by its bytes (jit_memo_find), no validation, plan or JSON */
  pass_plan plan;
  rj_kernel *k = NULL;
  if ((s = jit_compile(ctx, req, opt, &k, &plan)) ||
      (s = check_alignment(ctx, &k->req.u.tensor, q)))
    return jit_done(ctx, s);
  return jit_done(ctx, launch_plan(ctx, k, &plan, opt->device, q, stream));
}

RJ_API rj_status rj_reduce(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_devptr src,
                           rj_devptr dst, void *stream) {
  tptrs q = {.src = src, .dst = dst};
  return reduce(ctx, req, opt, &q, false, stream);
}

RJ_API rj_status rj_reduce_values(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                                  rj_devptr src, rj_devptr dst, rj_devptr values, void *stream) {
  tptrs q = {.src = src, .dst = dst, .values = values};
  return reduce(ctx, req, opt, &q, true, stream);
}

RJ_API rj_status rj_reduce_n(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                             rj_devptr src, const rj_devptr *others, int nothers, rj_devptr dst,
                             rj_devptr values, void *stream) {
  tptrs q = {.src = src, .dst = dst, .values = values, .others = others, .nothers = nothers};
  bool with = req && req->kind == RJ_KIND_TENSOR && req->u.tensor.values;
  return reduce(ctx, req, opt, &q, with, stream);
}

static rj_status tensor_launch(rj_ctx *ctx, rj_kernel *k, int device, const tptrs *q, bool with,
                               void *stream) {
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
  if (k->req.u.tensor.list_count) return jit_done(ctx, not_list(ctx));
  rj_status s = check_ptrs(ctx, &k->req.u.tensor, q, with);
  if (s || (s = check_alignment(ctx, &k->req.u.tensor, q))) return jit_done(ctx, s);
  return jit_done(ctx, launch_plan(ctx, k, &k->plan, device, q, stream));
}

RJ_API rj_status rj_tensor_launch(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                  rj_devptr dst, void *stream) {
  tptrs q = {.src = src, .dst = dst};
  return tensor_launch(ctx, k, device, &q, false, stream);
}

RJ_API rj_status rj_tensor_launch_values(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                         rj_devptr dst, rj_devptr values, void *stream) {
  tptrs q = {.src = src, .dst = dst, .values = values};
  return tensor_launch(ctx, k, device, &q, true, stream);
}

RJ_API rj_status rj_tensor_launch_n(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                    const rj_devptr *others, int nothers, rj_devptr dst,
                                    rj_devptr values, void *stream) {
  tptrs q = {.src = src, .dst = dst, .values = values, .others = others, .nothers = nothers};
  bool with = k && k->req.kind == RJ_KIND_TENSOR && k->req.u.tensor.values;
  return tensor_launch(ctx, k, device, &q, with, stream);
}

RJ_API rj_status rj_reduce_segments(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                                    rj_devptr src, rj_devptr offsets, rj_devptr dst,
                                    rj_devptr status, void *stream) {
  tptrs q = {.src = src, .dst = dst, .seg = true, .offsets = offsets, .status = status};
  return reduce(ctx, req, opt, &q, false, stream);
}

RJ_API rj_status rj_tensor_launch_segments(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                           rj_devptr offsets, rj_devptr dst, rj_devptr status,
                                           void *stream) {
  tptrs q = {.src = src, .dst = dst, .seg = true, .offsets = offsets, .status = status};
  return tensor_launch(ctx, k, device, &q, false, stream);
}
