/* The NCCL backend of treduce: the same request, across processes, as ncclReduce on a communicator
 * the caller made.  libnccl.so.2 is opened with dlopen per call (no link dependency, no global
 * state); NCCL's enums are written out here (nccl.h is not needed to build). */
#include "../jit.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* nccl.h: ncclDataType_t and ncclRedOp_t values (stable since NCCL 2.0; bf16 since 2.10) */
enum {
  NC_INT32 = 2,
  NC_UINT32 = 3,
  NC_INT64 = 4,
  NC_UINT64 = 5,
  NC_FLOAT16 = 6,
  NC_FLOAT32 = 7,
  NC_FLOAT64 = 8,
  NC_BFLOAT16 = 9
};
enum { NC_SUM = 0, NC_MAX = 2, NC_MIN = 3 };

typedef int (*nc_version_fn)(int *);
typedef int (*nc_count_fn)(void *, int *);
typedef const char *(*nc_errstr_fn)(int);
typedef int (*nc_reduce_fn)(const void *, void *, size_t, int, int, int, void *, void *);

RJ_API void rj_nccl_args_init(rj_nccl_args *a) {
  if (!a) return;
  memset(a, 0, sizeof *a);
  a->struct_size = sizeof *a;
  a->synchronize = 1;
}

static rj_status open_nccl(ir_err *e, void **lib, int *version) {
  *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!*lib) {
    const char *why = dlerror();
    return ir_fail(e, RJ_ENODEV, "no NCCL: dlopen(libnccl.so.2) failed: %.300s",
                   why ? why : "not found");
  }
  nc_version_fn v = (nc_version_fn)dlsym(*lib, "ncclGetVersion");
  if (!v || v(version) != 0) {
    dlclose(*lib);
    *lib = NULL;
    return ir_fail(e, RJ_ENODEV, "no NCCL: libnccl.so.2 lacks a working ncclGetVersion");
  }
  return RJ_OK;
}

RJ_API rj_status rj_nccl_version(rj_ctx *ctx, int *version) {
  JIT_NEED(ctx, version, "version");
  memset(&ctx->err, 0, sizeof ctx->err);
  void *lib = NULL;
  *version = 0;
  rj_status s = open_nccl(&ctx->err, &lib, version);
  if (lib) dlclose(lib);
  return jit_status(ctx, s);
}

/* What ncclReduce cannot express, as RJ_EUNSUPPORTED with the reason. */
static rj_status nccl_limits(ir_err *e, const rj_treduce *t) {
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
  bool fl = ir_dtype(t->dtype)->is_float;
  if (fl && t->op == RJ_OP_SUM && t->nan == RJ_NAN_IGNORE)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "nan: ignore; NCCL's sum cannot skip NaN addends (use nan = propagate)");
  if (fl && t->op != RJ_OP_SUM && t->nan == RJ_NAN_PROPAGATE)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "nan: propagate; NCCL's float %s is fmax/fmin, which skips NaN: ask for nan = "
                   "ignore to get NCCL's behaviour",
                   ir_op_name(t->op));
  return RJ_OK;
}

RJ_API rj_status rj_treduce_nccl(rj_ctx *ctx, const rj_request *req, const rj_nccl_args *a) {
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  ir_err *e = &ctx->err;
  rj_status s = jit_validate(ctx, req);
  if (s) return jit_status(ctx, s);
  if (req->kind != RJ_KIND_TREDUCE)
    return jit_status(ctx, ir_fail(e, RJ_EINVAL, "kind: %s; the NCCL backend runs treduce requests",
                                   ir_kind_name(req->kind)));
  const rj_treduce *t = &req->u.treduce;
  if (!a) return jit_status(ctx, ir_fail(e, RJ_EINVAL, "args: NULL"));
  if (a->struct_size != sizeof *a)
    return jit_status(ctx, ir_fail(e, RJ_EINVAL,
                                   "args.struct_size: %u, this library expects %zu (use "
                                   "rj_nccl_args_init)",
                                   a->struct_size, sizeof *a));
  if (!a->comm) return jit_status(ctx, ir_fail(e, RJ_EINVAL, "args.comm: NULL"));
  if (!a->src) return jit_status(ctx, ir_fail(e, RJ_EINVAL, "args.src: NULL"));
  if ((s = nccl_limits(e, t))) return jit_status(ctx, s);
  static const int dtypes[] = {NC_FLOAT16, NC_BFLOAT16, NC_FLOAT32, NC_FLOAT64,
                               NC_INT32,   NC_UINT32,   NC_INT64,   NC_UINT64}; /* ORDER DTYPE */
  static const int ops[] = {NC_SUM, NC_MAX, NC_MIN};
  void *lib = NULL;
  int version = 0;
  if ((s = open_nccl(e, &lib, &version))) return jit_status(ctx, s);
  nc_count_fn count = (nc_count_fn)dlsym(lib, "ncclCommCount");
  nc_count_fn rank = (nc_count_fn)dlsym(lib, "ncclCommUserRank");
  nc_errstr_fn errstr = (nc_errstr_fn)dlsym(lib, "ncclGetErrorString");
  nc_reduce_fn reduce = (nc_reduce_fn)dlsym(lib, "ncclReduce");
  int n = 0, me = 0, r = 0;
  int64_t numel = 1;
  for (int d = 0; d < t->ndim; d++)
    numel *= t->shape[d];
  if (!count || !rank || !errstr || !reduce)
    s = ir_fail(e, RJ_ENODEV, "NCCL %d lacks ncclCommCount / ncclCommUserRank / ncclReduce",
                version);
  else if (t->dtype == RJ_BF16 && version < 21000)
    s = ir_fail(e, RJ_EUNSUPPORTED, "dtype: bf16 needs NCCL 2.10 or newer (found %d)", version);
  else if ((r = count(a->comm, &n)) != 0)
    s = ir_fail(e, RJ_EINVAL, "args.comm: ncclCommCount failed: %s", errstr(r));
  else if ((r = rank(a->comm, &me)) != 0)
    s = ir_fail(e, RJ_EINVAL, "args.comm: ncclCommUserRank failed: %s", errstr(r));
  else if (n != t->ranks)
    s = ir_fail(e, RJ_EINVAL, "ranks: %d, but the communicator has %d ranks", t->ranks, n);
  else if (me == t->root && !a->dst)
    s = ir_fail(e, RJ_EINVAL, "args.dst: NULL on the root (rank %d)", me);
  else if (numel > 0 &&
           (r = reduce((const void *)(uintptr_t)a->src, (void *)(uintptr_t)a->dst, (size_t)numel,
                       dtypes[t->dtype], ops[t->op], t->root, a->comm, a->stream)) != 0)
    s = ir_fail(e, RJ_ECUDA, "ncclReduce failed: %s", errstr(r));
  if (!s && a->synchronize && numel > 0) {
    rt_cuda *rt = NULL;
    if (!(s = jit_cuda(ctx, &rt))) s = rt_stream_sync(rt, a->stream, e);
  }
  dlclose(lib);
  return jit_status(ctx, s);
}
