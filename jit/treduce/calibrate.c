/* rj_treduce_calibrate: the path table of this machine.  Every path (peer, staged, split,
 * split-equal, ring) is timed on buffers the calibration allocates (rank r on GPU r mod the GPU
 * count, the destination on the root's), f32 sums of shape [bytes / 4096, 1024] with tile
 * [64, 1024] and ping-pong, as scripts/bench-treduce.sh times them; the median GPU time of the
 * runs (rj_treduce_result.ms) is the table's row.  A path that cannot run the group
 * (RJ_EUNSUPPORTED: no peer access, the ring's limits) gets no row. */
#include "treduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAL_MAX_RANKS 64

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The buffers: ranks sources of `bytes` and the root's destination. */
typedef struct cal_bufs {
  int ranks, ndev;
  rj_treduce_buf src[CAL_MAX_RANKS], dst;
} cal_bufs;

static void bufs_free(rj_ctx *ctx, rt_cuda *rt, cal_bufs *b) {
  for (int r = 0; r <= b->ranks; r++) {
    rj_treduce_buf *x = r < b->ranks ? &b->src[r] : &b->dst;
    ir_err ignored = {0};
    if (x->ptr && !rt_enter(rt, x->device, &ignored)) {
      rt_free(rt, x->ptr);
      rt_leave(rt);
    }
    x->ptr = 0;
  }
  (void)ctx;
}

static rj_status bufs_alloc(rj_ctx *ctx, rt_cuda *rt, cal_bufs *b, size_t bytes) {
  rj_status s = RJ_OK;
  for (int r = 0; !s && r <= b->ranks; r++) {
    rj_treduce_buf *x = r < b->ranks ? &b->src[r] : &b->dst;
    x->device = r < b->ranks ? r % b->ndev : 0;
    if ((s = rt_enter(rt, x->device, &ctx->err))) break;
    s = rt_alloc(rt, bytes, &x->ptr, &ctx->err);
    rt_leave(rt);
  }
  return s;
}

/* The median GPU time (us) of `runs` calls of path p at `bytes` per rank, after one warm-up;
 * RJ_EUNSUPPORTED when p cannot run the group. */
static rj_status time_path(rj_ctx *ctx, cal_bufs *b, int64_t bytes, rj_treduce_path p, int runs,
                           double *us) {
  int64_t elems = bytes / 4, cols = elems >= 1024 ? 1024 : elems;
  for (int r = 0; r <= b->ranks; r++) {
    rj_treduce_buf *x = r < b->ranks ? &b->src[r] : &b->dst;
    x->ndim = 2;
    x->shape[0] = elems / cols;
    x->shape[1] = cols;
  }
  rj_treduce_group g;
  rj_treduce_group_init(&g);
  g.ranks = b->ranks;
  g.root = 0;
  g.src = b->src;
  g.dst = b->dst;
  g.op = RJ_OP_SUM;
  g.dtype = RJ_F32;
  g.tile[0] = elems >= 1024 ? 64 : 1;
  g.tile[1] = cols;
  g.pingpong = 1;
  g.path = p;
  double ms[101];
  rj_status s = RJ_OK;
  for (int i = -1; !s && i < runs; i++) {
    rj_treduce_result res = {.struct_size = sizeof res};
    s = rj_treduce_run(ctx, &g, NULL, &res);
    if (i >= 0) ms[i] = res.ms;
  }
  if (s) return s;
  qsort(ms, (size_t)runs, sizeof ms[0], cmp_double);
  *us = 1000 * ms[runs / 2];
  return RJ_OK;
}

/* Times every path at every size into t's rows; *gave_up counts the timings that ended in
 * RJ_ETIMEOUT (a ring's hop gave up: no row). */
static rj_status measure(rj_ctx *ctx, cal_bufs *b, int G, int min_log2, int max_log2, int runs,
                         jit_tr_table *t, int *gave_up) {
  rj_status s = RJ_OK;
  for (int lg = min_log2; !s && lg <= max_log2; lg += 2)
    for (int p = RJ_TREDUCE_PEER; !s && p <= RJ_TREDUCE_RING; p++) {
      double us = 0;
      s = time_path(ctx, b, (int64_t)1 << lg, (rj_treduce_path)p, runs, &us);
      if (s == RJ_EUNSUPPORTED || s == RJ_ETIMEOUT) { /* cannot run here, or a ring gave up */
        if (s == RJ_ETIMEOUT) (*gave_up)++;
        s = RJ_OK;
        continue;
      }
      if (s) break;
      if (t->nrows == JIT_TR_TABLE_ROWS)
        return ir_fail(&ctx->err, RJ_EINVAL, "table: more than %d rows", JIT_TR_TABLE_ROWS);
      t->row[t->nrows++] = (jit_tr_row){.ranks = b->ranks,
                                        .gpus = G,
                                        .bytes = (int64_t)1 << lg,
                                        .path = (rj_treduce_path)p,
                                        .us = us > 0 ? us : 0.1};
    }
  return s;
}

/* The new table: the context's own rows of other ranks and GPUs, then the measured ones. */
static void start_table(rj_ctx *ctx, jit_tr_table *t, int ranks, int G, const char *gpu, int runs) {
  const jit_treduce_state *st = ctx->treduce;
  memset(t, 0, sizeof *t);
  snprintf(t->origin, sizeof t->origin, "calibrated");
  snprintf(t->device, sizeof t->device, "%s", gpu);
  snprintf(t->source, sizeof t->source,
           "rj_treduce_calibrate: f32 sum, root 0, rank r on GPU r mod %d, median of %d runs", G,
           runs);
  const jit_tr_table *old = st && st->table_mode == 1 ? st->table : NULL;
  if (!old || strcmp(old->device, gpu) != 0) return;
  for (int i = 0; i < old->nrows; i++)
    if (old->row[i].ranks != ranks || old->row[i].gpus != G) t->row[t->nrows++] = old->row[i];
}

RJ_API rj_status rj_treduce_calibrate(rj_ctx *ctx, int ranks, int min_log2, int max_log2,
                                      int runs) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  ir_err *e = &ctx->err;
  if (ranks < 1 || ranks > CAL_MAX_RANKS)
    return jit_done(ctx, ir_fail(e, RJ_EINVAL, "ranks: %d is outside 1..%d", ranks, CAL_MAX_RANKS));
  if (min_log2 < 12 || max_log2 > 40 || min_log2 > max_log2)
    return jit_done(ctx, ir_fail(e, RJ_EINVAL,
                                 "min_log2 %d, max_log2 %d: expected 12 <= min <= max <= 40",
                                 min_log2, max_log2));
  if (runs < 1 || runs > 101)
    return jit_done(ctx, ir_fail(e, RJ_EINVAL, "runs: %d is outside 1..101", runs));
  rt_cuda *rt = NULL;
  int ndev = 0;
  rj_status s = jit_cuda(ctx, &rt);
  if (!s) s = jit_tr_device_count(ctx, rt, &ndev);
  if (!s && ndev < 1) s = ir_fail(e, RJ_ENODEV, "no GPU");
  const char *gpu = s ? NULL : jit_tr_gpu_name(ctx, rt, 0);
  cal_bufs *b = s ? NULL : calloc(1, sizeof *b);
  jit_tr_table *t = s ? NULL : malloc(sizeof *t);
  if (!s && (!b || !t)) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  if (s) {
    free(b);
    free(t);
    return jit_done(ctx, s);
  }
  b->ranks = ranks;
  b->ndev = ndev;
  int G = ranks < ndev ? ranks : ndev;
  start_table(ctx, t, ranks, G, gpu ? gpu : "any", runs); /* a name it cannot read: any */
  s = bufs_alloc(ctx, rt, b, (size_t)1 << max_log2);
  int gave_up = 0; /* ring timings that ended in RJ_ETIMEOUT: said in the table's source */
  if (!s) s = measure(ctx, b, G, min_log2, max_log2, runs, t, &gave_up);
  if (!s) s = rj_treduce_sync(ctx); /* nothing in flight; an earlier async failure said now */
  size_t k = strlen(t->source);
  if (gave_up && k < sizeof t->source)
    snprintf(t->source + k, sizeof t->source - k, "; %d ring timing(s) gave up (no rows)", gave_up);
  bufs_free(ctx, rt, b);
  free(b);
  if (s) {
    free(t);
    return jit_done(ctx, s);
  }
  return jit_done(ctx, jit_tr_table_own(ctx, t));
}
