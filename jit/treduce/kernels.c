/* What the paths of treduce share: the fold order and the ranks' GPUs, compiling a fold for a
 * device (through the core's jit_compile), cutting a fold of many sources into launches of at most
 * JIT_TR_PER_KERNEL, and launching one (through the core's jit_launch). */
#include "treduce.h"

#include <stdio.h>
#include <string.h>

int jit_tr_rank_at(const rj_treduce *t, int pos) {
  return ir_treduce_rank_at(t, pos);
}

int jit_tr_gpus(const rj_treduce *t, const int *dev, int *gpus, int *local) {
  int ngpus = 1;
  gpus[0] = dev[t->root];
  if (local) memset(local, 0, sizeof(int) * RJ_TREDUCE_MAX_SLICES);
  for (int r = 0; r < t->ranks; r++) {
    int i = 0;
    while (i < ngpus && gpus[i] != dev[r])
      i++;
    if (i == ngpus) {
      if (ngpus == RJ_TREDUCE_MAX_SLICES) return -1;
      gpus[ngpus++] = dev[r];
    }
    if (local) local[i]++;
  }
  return ngpus;
}

rj_status jit_treduce_kernel(rj_ctx *ctx, const rj_request *req, const rj_options *opt, int dev,
                             jit_tr_launch *l, rj_treduce_result *res) {
  rj_kernel **k = &l->k;
  rj_options o;
  rj_options_init(&o);
  if (opt) {
    o.target = opt->target;
    o.ptx_version = opt->ptx_version;
  }
  o.device = dev;
  ir_err saved = ctx->err;
  pass_plan plan;
  /* the cache owns the kernel (rj_treduce_run holds evictions until its kernels are launched) */
  memset(&ctx->err, 0, sizeof ctx->err); /* as a public call starts */
  long long compiles = ctx->compiles, memory_hits = ctx->memory_hits;
  rj_status s = jit_compile(ctx, req, &o, k, &plan);
  if (s) return s;
  ctx->err = saved;
  /* the launch is req's plan's (a runtime-size kernel's own plan is the shape it was made for) */
  bool runtime = plan.np > 0;
  memcpy(l->grid, plan.grid, sizeof l->grid);
  memcpy(l->block, plan.block, sizeof l->block);
  l->np = plan.np;
  l->numel = runtime ? plan.p[0] : 0;
  if (!res->variant[0]) {
    snprintf(res->variant, sizeof res->variant, "%s", (*k)->variant);
    snprintf(res->target, sizeof res->target, "%s", (*k)->target);
  }
  /* the time this call spent: a compile here, a disk read, or nothing (a memory hit) */
  bool miss = ctx->compiles > compiles,
       disk = !miss && ctx->memory_hits == memory_hits && (*k)->from_disk;
  if (miss) res->compile_ms += (*k)->compile_ms;
  if (disk) res->cache_ms += (*k)->disk_ms;
  if (miss || strcmp(res->cache, "miss"))
    snprintf(res->cache, sizeof res->cache, "%s",
             miss                                  ? "miss"
             : disk || !strcmp(res->cache, "disk") ? "disk"
                                                   : "memory");
  return RJ_OK;
}

void jit_tr_mean_pass(const rj_treduce *t, rj_treduce *sub, bool final) {
  if (t->op != RJ_OP_MEAN) return;
  sub->mean_count = final ? ir_treduce_mean_count(t) : 0;
  if (!final) sub->op = RJ_OP_SUM; /* a partial sum, divided by the final pass */
  if (sub->mean_count == sub->ranks) sub->mean_count = 0; /* the request as given: its key */
}

/* RJ_EUNSUPPORTED for a mean of f16 / bf16 in more than one pass (partial sums in the dtype),
 * and for a struct state in more than one pass (a launch stores the output, not the state). */
static rj_status mean_passes(const rj_treduce *t, int passes, ir_err *e) {
  if (t->op == RJ_OP_CUSTOM && t->combine.nfields && passes > 1)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "combine.state: a struct state over %d ranks takes %d passes here (launches of "
                   "at most %d ranks, staged ranks), and a launch stores the output (field "
                   "combine.result or finish's), not the state the next would fold on; read every "
                   "rank directly in one launch (at most %d ranks with peer access)",
                   t->ranks, passes, JIT_TR_PER_KERNEL, JIT_TR_PER_KERNEL);
  if (t->op != RJ_OP_MEAN || passes < 2 || (t->dtype != RJ_F16 && t->dtype != RJ_BF16))
    return RJ_OK;
  return ir_fail(e, RJ_EUNSUPPORTED,
                 "op: a mean of %s over %d ranks takes %d passes here (launches of at most %d "
                 "ranks, staged ranks), whose partial sums would round to %s where the mean "
                 "accumulates in f32; reduce with f32, or read every rank directly in one launch",
                 ir_dtype(t->dtype)->name, t->ranks, passes, JIT_TR_PER_KERNEL,
                 ir_dtype(t->dtype)->name);
}

rj_status jit_treduce_fold(rj_ctx *ctx, const rj_request *req, const uint64_t *table, int n,
                           int dev, uint64_t dst, int slice, int later, const rj_options *opt,
                           jit_tr_launch *L, int *nl, rj_treduce_result *res) {
  bool final = later == 0;
  int passes = (n + JIT_TR_PER_KERNEL - 1) / JIT_TR_PER_KERNEL + later;
  rj_status s = mean_passes(&req->u.treduce, passes, &ctx->err);
  for (int i = 0; !s && i < n; i += JIT_TR_PER_KERNEL) {
    rj_request sub = *req;
    sub.u.treduce.ranks = n - i < JIT_TR_PER_KERNEL ? n - i : JIT_TR_PER_KERNEL;
    sub.u.treduce.root = 0;
    sub.u.treduce.accum = i ? 1 : req->u.treduce.accum;
    jit_tr_mean_pass(&req->u.treduce, &sub.u.treduce, final && i + JIT_TR_PER_KERNEL >= n);
    sub.variant[0] = 0;
    jit_tr_launch *l = &L[(*nl)++];
    memset(l, 0, sizeof *l);
    l->n = sub.u.treduce.ranks;
    l->src = table + i;
    l->dst = dst;
    l->dev = dev;
    l->slice = slice;
    s = jit_treduce_kernel(ctx, &sub, opt, dev, l, res);
  }
  return s;
}

rj_status jit_treduce_launch(rj_ctx *ctx, const jit_tr_launch *l, void *stream,
                             rj_treduce_result *res) {
  void *args[1 + JIT_TR_PER_KERNEL + 1];
  uint64_t dst = l->dst;
  int64_t numel = l->numel;
  args[0] = &dst;
  for (int k = 0; k < l->n; k++)
    args[1 + k] = (void *)&l->src[k];
  if (l->np) args[1 + l->n] = &numel; /* a runtime-size kernel: (dst, src..., n) */
  jit_launch_args la = {.args = args, .stream = stream};
  memcpy(la.grid, l->grid, sizeof la.grid);
  memcpy(la.block, l->block, sizeof la.block);
  res->launches++;
  return jit_launch(ctx, l->k, l->dev, &la);
}
