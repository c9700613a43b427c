/* The NCCL backend of treduce: the same request, across processes, as ncclReduce on a communicator
 * the caller made.  libnccl.so.2 is opened per call through runtime/nccl.c (no link dependency,
 * no global state); here, what a request may ask of it and the checks of the caller's arguments. */
#include "treduce.h"

#include "../../runtime/nccl.h"

#include <string.h>

RJ_API void rj_nccl_args_init(rj_nccl_args *a) {
  if (!a) return;
  memset(a, 0, sizeof *a);
  a->struct_size = sizeof *a;
  a->synchronize = 1;
}

RJ_API rj_status rj_nccl_version(rj_ctx *ctx, int *version) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, version, "version");
  memset(&ctx->err, 0, sizeof ctx->err);
  rt_nccl *nc = NULL;
  *version = 0;
  rj_status s = rt_nccl_open(&nc, version, &ctx->err);
  rt_nccl_close(nc);
  return jit_done(ctx, s);
}

/* What ncclReduce cannot express, as RJ_EUNSUPPORTED with the reason. */
static rj_status nccl_limits(ir_err *e, const rj_treduce *t) {
  if (t->invariant)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "invariant: ncclReduce is not invariant (its summation order follows NCCL's "
                   "algorithm, protocol and topology, so the bits change with the GPUs and their "
                   "count): use rj_treduce_run in one process");
  if (t->has_strides) {
    int64_t m = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
      if ((t->shape[d] > 1 && (t->strides[d] != m || t->dst_strides[d] != m)))
        return ir_fail(e, RJ_EUNSUPPORTED,
                       "strides: ncclReduce takes contiguous buffers; dim %d has strides %lld / "
                       "%lld (source / destination), not %lld",
                       d, (long long)t->strides[d], (long long)t->dst_strides[d], (long long)m);
      m *= t->shape[d];
    }
  }
  if (t->accum)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "accum: ncclReduce overwrites the destination; it cannot fold its old value");
  if (t->op == RJ_OP_CUSTOM)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "op: \"custom\"; NCCL has no user-defined reduction ops (its ncclRedOpCreate* "
                   "make scaled sums only): use rj_treduce_run in one process");
  if (t->op != RJ_OP_SUM && t->op != RJ_OP_PROD && t->op != RJ_OP_MAX && t->op != RJ_OP_MIN &&
      t->op != RJ_OP_MEAN)
    return ir_fail(e, RJ_EUNSUPPORTED, "op: \"%s\"; ncclReduce does sum, prod, max, min and mean",
                   ir_op_name(t->op));
  if (t->mean_count && t->mean_count != t->ranks)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "mean_count: %lld; ncclAvg divides by the communicator's size (%d ranks)",
                   (long long)t->mean_count, t->ranks);
  bool fl = ir_dtype(t->dtype)->is_float;
  bool arith = t->op == RJ_OP_SUM || t->op == RJ_OP_PROD || t->op == RJ_OP_MEAN;
  if (fl && arith && t->nan == RJ_NAN_IGNORE)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "nan: ignore; NCCL's %s cannot skip NaN inputs (use nan = propagate)",
                   ir_op_name(t->op));
  if (fl && !arith && t->nan == RJ_NAN_PROPAGATE)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "nan: propagate; NCCL's float %s is fmax/fmin, which skips NaN: ask for nan = "
                   "ignore to get NCCL's behaviour",
                   ir_op_name(t->op));
  return RJ_OK;
}

/* The communicator's checks against the request, then ncclReduce of numel elements (none: no
 * call). */
static rj_status reduce(const rt_nccl *nc, int version, const rj_treduce *t, const rj_nccl_args *a,
                        int64_t numel, ir_err *e) {
  int n = 0, me = 0, r = 0;
  rj_status s = rt_nccl_need_reduce(nc, e);
  if (s) return s;
  if (t->dtype == RJ_BF16 && version < 21000)
    return ir_fail(e, RJ_EUNSUPPORTED, "dtype: bf16 needs NCCL 2.10 or newer (found %d)", version);
  if (t->op == RJ_OP_MEAN && version < 21000)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "op: \"mean\" is ncclAvg, which needs NCCL 2.10 or newer (found %d); reduce "
                   "with sum and divide by the ranks",
                   version);
  if ((r = rt_nccl_count(nc, a->comm, &n)) != 0)
    return ir_fail(e, RJ_EINVAL, "args.comm: ncclCommCount failed: %s", rt_nccl_error(nc, r));
  if ((r = rt_nccl_user_rank(nc, a->comm, &me)) != 0)
    return ir_fail(e, RJ_EINVAL, "args.comm: ncclCommUserRank failed: %s", rt_nccl_error(nc, r));
  if (n != t->ranks)
    return ir_fail(e, RJ_EINVAL, "ranks: %d, but the communicator has %d ranks", t->ranks, n);
  if (me == t->root && !a->dst)
    return ir_fail(e, RJ_EINVAL, "args.dst: NULL on the root (rank %d)", me);
  if (numel > 0 && (r = rt_nccl_reduce(nc, a->src, a->dst, (size_t)numel, t->dtype, t->op, t->root,
                                       a->comm, a->stream)) != 0)
    return ir_fail(e, RJ_ECUDA, "ncclReduce failed: %s", rt_nccl_error(nc, r));
  return RJ_OK;
}

RJ_API rj_status rj_treduce_nccl(rj_ctx *ctx, const rj_request *req, const rj_nccl_args *a) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  ir_err *e = &ctx->err;
  rj_status s = jit_validate(ctx, req);
  if (s) return jit_done(ctx, s);
  if (req->kind != RJ_KIND_TREDUCE)
    return jit_done(ctx, ir_fail(e, RJ_EINVAL, "kind: %s; the NCCL backend runs treduce requests",
                                 ir_kind_name(req->kind)));
  const rj_treduce *t = &req->u.treduce;
  if (!a) return jit_done(ctx, ir_fail(e, RJ_EINVAL, "args: NULL"));
  if (a->struct_size != sizeof *a)
    return jit_done(ctx, ir_fail(e, RJ_EINVAL,
                                 "args.struct_size: %u, this library expects %zu (use "
                                 "rj_nccl_args_init)",
                                 a->struct_size, sizeof *a));
  if (!a->comm) return jit_done(ctx, ir_fail(e, RJ_EINVAL, "args.comm: NULL"));
  if (!a->src) return jit_done(ctx, ir_fail(e, RJ_EINVAL, "args.src: NULL"));
  if ((s = nccl_limits(e, t))) return jit_done(ctx, s);
  rt_nccl *nc = NULL;
  int version = 0;
  if ((s = rt_nccl_open(&nc, &version, e))) return jit_done(ctx, s);
  int64_t numel = 1;
  for (int d = 0; d < t->ndim; d++)
    numel *= t->shape[d];
  s = reduce(nc, version, t, a, numel, e);
  if (!s && a->synchronize && numel > 0) {
    rt_cuda *rt = NULL;
    if (!(s = jit_cuda(ctx, &rt))) s = rt_stream_sync(rt, a->stream, e);
  }
  rt_nccl_close(nc);
  return jit_done(ctx, s);
}
