/* The peer and staged paths of rj_treduce: the root's GPU folds every rank.
 *
 * Paths, per rank other than the root:
 *   direct  the rank's source is on the root's GPU, or peer access from the root's GPU to its GPU
 *           is possible (cuDeviceCanAccessPeer) and enabled (cuCtxEnablePeerAccess): the root's
 *           kernel loads it in place ("peer");
 *   staged  otherwise (or when RJ_TREDUCE_STAGED is asked for): cuMemcpyPeerAsync of the source's
 *           span into a staging buffer on the root, on a copy stream, then an accumulating kernel
 *           (ranks = 1, accum) folds it into the destination.  With ping-pong there are two
 *           staging buffers and the copy of staged rank i+1 runs while the kernel folds rank i;
 *           events order copy -> kernel (copied[b]) and kernel -> next copy into b (consumed[b]).
 *           Without ping-pong, one buffer: copy, fold, copy, fold.
 * When every rank is direct and there are at most 128, the request runs as given (one kernel,
 * the one `redjit ptx` shows).  Otherwise the direct ranks (root first) go in launches of up to
 * 128, the later ones accumulating, then the staged ranks.  op mean: every launch but the last
 * sums, the last divides by all the ranks (jit_tr_mean_pass); a non-commutative custom combine
 * takes its direct ranks in rank order and refuses staged ones (they would come after). */
#include "treduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ranks by path: direct (the root first), then staged, each in rank order. */
typedef struct rank_paths {
  int *direct, *staged; /* N each, in one allocation (direct's) */
  int ndirect, nstaged;
} rank_paths;

/* A staged path's resources on the root's GPU: the context's streams and events, kept between
 * calls.  Stream 0 runs the kernels, stream 1 the copies; events 0 / 1 frame the operation
 * (jit_tr_begin / end), 2 + b / 4 + b are staging buffer b's copied / consumed. */
typedef struct staging {
  void *ks, *cs, *ev[2], *copied[2], *consumed[2];
  uint64_t buf[2];
  bool temporary[2]; /* allocated for this call (larger than JIT_STAGE_KEEP) */
  int nbuf;          /* 2 with ping-pong, else 1 */
  size_t span;       /* bytes of one rank's source */
} staging;

/* Step 1: each rank's path.  Direct where the root's GPU can load it (peer access enabled here);
 * a forced peer path refuses a rank it can't reach. */
static rj_status sort_ranks(rj_ctx *ctx, rt_cuda *rt, const rj_treduce *t, const int *dev,
                            rj_treduce_path path, rank_paths *rp, rj_treduce_result *res) {
  ir_err *e = &ctx->err;
  int root_dev = dev[t->root];
  rj_status s = RJ_OK;
  bool in_rank_order = ir_treduce_rank_order(t); /* else the root first */
  if (!in_rank_order) rp->direct[rp->ndirect++] = t->root;
  for (int r = 0; !s && r < t->ranks; r++) {
    if (r == t->root) {
      if (in_rank_order) rp->direct[rp->ndirect++] = r;
      continue;
    }
    if (path == RJ_TREDUCE_STAGED) {
      rp->staged[rp->nstaged++] = r;
      continue;
    }
    if (dev[r] == root_dev) {
      rp->direct[rp->ndirect++] = r;
      continue;
    }
    int can = 0;
    if ((s = jit_tr_peer(ctx, rt, root_dev, dev[r], &can))) break; /* enabled where it can */
    if (can) {
      rp->direct[rp->ndirect++] = r;
      res->peer_ranks++;
    } else if (path == RJ_TREDUCE_PEER) {
      s = ir_fail(e, RJ_EUNSUPPORTED,
                  "path: peer, but GPU %d cannot access GPU %d (rank %d) directly "
                  "(cuDeviceCanAccessPeer = 0); use path auto or staged",
                  root_dev, dev[r], r);
    } else {
      rp->staged[rp->nstaged++] = r;
    }
  }
  bool fl = ir_dtype(t->dtype)->is_float;
  bool arith =
      t->op == RJ_OP_SUM || t->op == RJ_OP_PROD || t->op == RJ_OP_MEAN || t->op == RJ_OP_CUSTOM;
  if (!s && t->invariant && fl && arith && rp->nstaged)
    s = ir_fail(e, RJ_EUNSUPPORTED,
                "invariant: staged ranks (rank %d: GPU %d without peer access from the root's GPU "
                "%d, or path staged) are folded after the direct ones, so the bits would depend on "
                "the GPUs' links (path peer or split, every rank readable by the root)",
                rp->staged[0], dev[rp->staged[0]], root_dev);
  if (!s && in_rank_order && rp->nstaged)
    s = ir_fail(e, RJ_EUNSUPPORTED,
                "path: %s; staged ranks (rank %d: GPU %d without peer access from the root's GPU "
                "%d, or path staged) are folded after the direct ones, and the combine is not "
                "commutative: it needs rank order (path peer, every rank readable by the root)",
                path == RJ_TREDUCE_STAGED ? "staged" : "auto", rp->staged[0], dev[rp->staged[0]],
                root_dev);
  return s;
}

/* Step 2: the kernels.  All direct and at most 128 ranks: the request as given, one launch;
 * otherwise launches of derived requests over table[] (the direct ranks' sources in fold order),
 * and kstaged[0], the 1-rank accumulating kernel that folds a staging buffer, its k and launch
 * (kstaged[1]: the last staged rank's, which divides for op mean; else the same). */
static rj_status make_kernels(rj_ctx *ctx, const rj_request *req, const uint64_t *src, int root_dev,
                              uint64_t dst, const rj_options *opt, const rank_paths *rp,
                              uint64_t *table, jit_tr_launch *L, int *nl, jit_tr_launch *kstaged,
                              rj_treduce_result *res) {
  int N = req->u.treduce.ranks;
  if (rp->nstaged == 0 && N <= JIT_TR_PER_KERNEL) {
    for (int r = 0; r < N; r++)
      table[r] = src[r];
    memset(&L[0], 0, sizeof L[0]);
    L[0].n = N;
    L[0].src = table;
    L[0].dst = dst;
    L[0].dev = root_dev;
    *nl = 1;
    return jit_treduce_kernel(ctx, req, opt, root_dev, &L[0], res);
  }
  for (int i = 0; i < rp->ndirect; i++)
    table[i] = src[rp->direct[i]];
  const rj_treduce *t = &req->u.treduce;
  /* the staged ranks' kernels are the passes after the direct ranks' fold (one each) */
  rj_status s = jit_treduce_fold(ctx, req, table, rp->ndirect, root_dev, dst, 0, rp->nstaged, opt,
                                 L, nl, res);
  for (int k = 0; !s && rp->nstaged && k < 2; k++) {
    rj_request sub = *req;
    sub.u.treduce.ranks = 1;
    sub.u.treduce.root = 0;
    sub.u.treduce.accum = 1;
    sub.variant[0] = 0;
    jit_tr_mean_pass(t, &sub.u.treduce, k == 1);
    if (k == 1 && t->op != RJ_OP_MEAN)
      kstaged[1] = kstaged[0];
    else
      s = jit_treduce_kernel(ctx, &sub, opt, root_dev, &kstaged[k], res);
  }
  return s;
}

/* Step 3: every kernel loaded on the root's GPU, its streams, events and staging buffers (a
 * temporary buffer is stream-ordered when the call is async).  The current context is the
 * root's. */
static rj_status prepare(rj_ctx *ctx, rt_cuda *rt, int root_dev, jit_tr_launch *L, int nl,
                         const jit_tr_launch *kstaged, int nstaged, const jit_tr_call *call,
                         staging *sg, rj_treduce_result *res) {
  double ms = 0;
  rj_status s = RJ_OK;
  for (int i = 0; !s && i < nl; i++) {
    s = jit_load(ctx, L[i].k, root_dev, &ms);
    res->load_ms += ms;
  }
  for (int k = 0; !s && k < 2 && kstaged[k].k; k++) {
    s = jit_load(ctx, kstaged[k].k, root_dev, &ms);
    res->load_ms += ms;
  }
  if (!s) s = jit_dev_stream(ctx, rt, root_dev, 0, &sg->ks);
  if (!s && nstaged) {
    s = jit_dev_stream(ctx, rt, root_dev, 1, &sg->cs);
    for (int b = 0; !s && b < sg->nbuf; b++) {
      s = jit_dev_stage(ctx, rt, root_dev, b, sg->span, call->async ? sg->ks : NULL, &sg->buf[b],
                        &sg->temporary[b]);
      if (!s) s = jit_dev_event(ctx, rt, root_dev, 2 + b, &sg->copied[b]);
      if (!s) s = jit_dev_event(ctx, rt, root_dev, 4 + b, &sg->consumed[b]);
    }
  }
  return s;
}

/* Step 4: the operation on the root's streams: the direct launches, then each staged rank copied
 * into buffer i % nbuf (once the fold before has consumed it) and folded. */
static rj_status enqueue(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                         const int *dev, uint64_t dst, const rank_paths *rp, jit_tr_launch *L,
                         int nl, const jit_tr_launch *kstaged, const jit_tr_call *call, staging *sg,
                         rj_treduce_result *res) {
  ir_err *e = &ctx->err;
  int root_dev = dev[req->u.treduce.root];
  /* ev[0]: the staged copies start there, a waiting call's time too */
  rj_status s = jit_tr_begin(ctx, rt, root_dev, sg->ks, call, rp->nstaged || !call->async, sg->ev);
  for (int i = 0; !s && i < nl; i++)
    s = jit_treduce_launch(ctx, &L[i], sg->ks, res);
  if (!s && rp->nstaged) s = rt_stream_wait(rt, sg->cs, sg->ev[0], e); /* copies start with it */
  for (int i = 0; !s && i < rp->nstaged; i++) {
    int b = i % sg->nbuf, r = rp->staged[i];
    if (i >= sg->nbuf) s = rt_stream_wait(rt, sg->cs, sg->consumed[b], e); /* b folded: reuse */
    if (!s) s = rt_copy_peer_async(rt, sg->buf[b], root_dev, src[r], dev[r], sg->span, sg->cs, e);
    if (!s) s = rt_event_record(rt, sg->copied[b], sg->cs, e);
    if (!s) s = rt_stream_wait(rt, sg->ks, sg->copied[b], e);
    if (!s) {
      uint64_t one = sg->buf[b];
      jit_tr_launch l = kstaged[i + 1 == rp->nstaged]; /* the last one writes the result */
      l.dev = root_dev;
      l.n = 1;
      l.src = &one;
      l.dst = dst;
      s = jit_treduce_launch(ctx, &l, sg->ks, res);
    }
    if (!s) s = rt_event_record(rt, sg->consumed[b], sg->ks, e);
  }
  if (!s) s = jit_tr_end(ctx, rt, sg->ks, call, sg->ev, &res->ms);
  return s;
}

/* Step 5: a failed call drains its streams (a waiting call that succeeded has waited for the
 * operation's end, after every copy and fold); temporary buffers are freed after the last fold
 * (waited for, or stream-ordered on the kernel stream). */
static rj_status finish(rt_cuda *rt, const jit_tr_call *call, staging *sg, rj_status s, ir_err *e) {
  bool drain = s != RJ_OK; /* a failed call drains before it frees */
  rj_status s2 = sg->ks && drain ? rt_stream_sync(rt, sg->ks, e) : RJ_OK;
  if (sg->cs && drain) {
    ir_err ignored = {0};
    rt_stream_sync(rt, sg->cs, s2 ? &ignored : e);
  }
  if (!s) s = s2;
  for (int b = 0; b < 2; b++) {
    ir_err ignored = {0};
    if (sg->temporary[b] && !call->async) rt_free(rt, sg->buf[b]);
    if (sg->temporary[b] && call->async) {
      rj_status sf = rt_free_async(rt, sg->buf[b], sg->ks, s ? &ignored : e);
      if (!s) s = sf;
    }
  }
  return s;
}

rj_status jit_treduce_peer(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                           const int *dev, uint64_t dst, rj_treduce_path path,
                           const rj_options *opt, const jit_tr_call *call, rj_treduce_result *res) {
  ir_err *e = &ctx->err;
  const rj_treduce *t = &req->u.treduce;
  int N = t->ranks, root_dev = dev[t->root];
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  /* the context's scratch, kept between calls: the table, then the ranks by path */
  size_t nt = sizeof(uint64_t) * (size_t)(N + 1);
  char *mem = jit_tr_scratch(ctx, nt + sizeof(int) * (size_t)N * 2);
  if (!mem) return ctx->err.status;
  uint64_t *table = (uint64_t *)mem;
  rank_paths rp = {.direct = (int *)(mem + nt)};
  rp.staged = rp.direct + N;
  rj_status s = sort_ranks(ctx, rt, t, dev, path, &rp, res);
  res->direct_ranks = rp.ndirect;
  res->staged_ranks = rp.nstaged;
  res->slices = res->gpus = g.numel ? 1 : 0;
  res->root_share = g.numel ? 1 : 0;
  snprintf(res->path, sizeof res->path, "%s", rp.nstaged ? "staged" : "peer");
  jit_tr_launch L[1 + (1024 + JIT_TR_PER_KERNEL - 1) / JIT_TR_PER_KERNEL];
  int nl = 0;
  jit_tr_launch kstaged[2] = {{.k = NULL}, {.k = NULL}};
  if (!s) s = make_kernels(ctx, req, src, root_dev, dst, opt, &rp, table, L, &nl, kstaged, res);
  /* nothing to move (an empty buffer): the destination stays as it is */
  bool pushed = false; /* the root's context pushed here (not when current already) */
  if (!s && g.numel && !(s = rt_enter_lazy(rt, root_dev, &pushed, e))) {
    staging sg = {.nbuf = t->pingpong ? 2 : 1,
                  .span = (size_t)g.src_span * (size_t)ir_dtype(t->dtype)->bytes};
    s = prepare(ctx, rt, root_dev, L, nl, kstaged, rp.nstaged, call, &sg, res);
    if (!s) s = enqueue(ctx, rt, req, src, dev, dst, &rp, L, nl, kstaged, call, &sg, res);
    s = finish(rt, call, &sg, s, e);
    if (pushed) rt_leave(rt);
  }
  return s;
}
