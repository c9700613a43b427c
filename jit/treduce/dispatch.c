/* jit_treduce_exec: the checks every treduce call makes (the ranks' GPUs exist, the caller's
 * stream is the root GPU's), then the path it takes:
 *   auto     the path the path tables or the link model pick (choose.c);
 *   ring     when asked for or picked (ring.c; auto takes it only where every pair of its GPUs
 *            has peer access);
 *   split    when asked for or picked (split.c); under auto it declines, touching nothing, when a
 *            pair of the GPUs cannot reach each other;
 *   peer / staged  otherwise (peer.c: the root's GPU folds every rank, reading some in place and
 *            copying the others; auto's peer stages the ranks it cannot read). */
#include "treduce.h"

#include <string.h>

/* The ranks' devices exist and the caller's stream belongs to the root's GPU (the count read once
 * per context). */
static rj_status check_devices(rj_ctx *ctx, rt_cuda *rt, const rj_treduce *t, const int *dev,
                               const jit_tr_call *call) {
  ir_err *e = &ctx->err;
  int ndev = 0;
  rj_status s = jit_tr_device_count(ctx, rt, &ndev);
  if (s) return s;
  for (int r = 0; r < t->ranks; r++)
    if (dev[r] < 0 || dev[r] >= ndev)
      return ir_fail(e, RJ_EINVAL, "src[%d].device: no GPU %d (%d present)", r, dev[r], ndev);
  if (!call->stream) return RJ_OK; /* the legacy default stream is every context's */
  int root_dev = dev[t->root];
  if ((s = rt_enter(rt, root_dev, e))) return s;
  s = rt_stream_check(rt, call->stream, root_dev, "stream", e);
  rt_leave(rt);
  return s;
}

/* Auto's ring needs peer access between every pair of its GPUs (checked here, where a forced
 * ring fails naming the pair): false to take the link model's path instead. */
static bool ring_reachable(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const int *dev,
                           rj_status *s) {
  int gpus[RJ_TREDUCE_MAX_SLICES];
  int G = jit_tr_gpus(&req->u.treduce, dev, gpus, NULL);
  for (int i = 0; !*s && i < G; i++)
    for (int j = 0; !*s && j < G; j++) {
      int can = 1;
      if (i != j && (*s = jit_tr_peer(ctx, rt, gpus[i], gpus[j], &can))) return false;
      if (!can) return false;
    }
  return G > 0;
}

/* The ring under capture into a CUDA graph: its hops wait for counters that rise with every call
 * from a base the call passes them, so a replayed graph would wait for a base long passed.
 * Refused when asked for; auto takes the link model's path instead. */
static rj_status ring_capture(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const int *dev,
                              rj_treduce_path path, const jit_tr_call *call,
                              rj_treduce_path *take) {
  int capturing = 0;
  rj_status s = rt_enter(rt, dev[req->u.treduce.root], &ctx->err);
  if (s) return s;
  s = rt_stream_capturing(rt, call->stream, &capturing, &ctx->err);
  rt_leave(rt);
  if (s || !capturing) return s;
  if (path == RJ_TREDUCE_RING)
    return ir_fail(&ctx->err, RJ_EUNSUPPORTED,
                   "path: ring, but the stream is being captured into a CUDA graph: the ring's "
                   "hops wait for counters that rise with every call, which a replay would not "
                   "raise; capture the peer, staged or split path");
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  *take = jit_treduce_model(req, dev, st->why, sizeof st->why);
  return RJ_OK;
}

/* Auto's path: the memo's when the group repeats and the tables are the same, else chosen (and
 * kept in the memo). */
static rj_status auto_path(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const int *dev,
                           const jit_tr_call *call, rj_treduce_path *take) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (!st) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  jit_tr_memo *m = call->memo;
  if (m && m->take != RJ_TREDUCE_AUTO && m->take_gen == st->table_gen) {
    *take = m->take;
    return RJ_OK;
  }
  rj_status s = RJ_OK;
  *take = jit_treduce_auto(ctx, req, dev, jit_tr_gpu_name(ctx, rt, dev[req->u.treduce.root]),
                           st->why, sizeof st->why);
  if (*take == RJ_TREDUCE_RING && !ring_reachable(ctx, rt, req, dev, &s) && !s)
    *take = jit_treduce_model(req, dev, st->why, sizeof st->why);
  if (!s && m) {
    m->take = *take;
    m->take_gen = st->table_gen;
  }
  return s;
}

static rj_status take_path(rj_ctx *ctx, const rj_request *req, const uint64_t *src, const int *dev,
                           uint64_t dst, rj_treduce_path path, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res) {
  rt_cuda *rt = NULL;
  rj_status s = jit_cuda(ctx, &rt);
  if (!s) s = check_devices(ctx, rt, &req->u.treduce, dev, call);
  if (s) return s;
  rj_treduce_path take = path;
  if (path == RJ_TREDUCE_AUTO && (s = auto_path(ctx, rt, req, dev, call, &take))) return s;
  if (take == RJ_TREDUCE_RING && (s = ring_capture(ctx, rt, req, dev, path, call, &take))) return s;
  if (take == RJ_TREDUCE_RING) return jit_treduce_ring(ctx, rt, req, src, dev, dst, opt, call, res);
  if (take == RJ_TREDUCE_SPLIT || take == RJ_TREDUCE_SPLIT_EQUAL) {
    bool declined = false;
    s = jit_treduce_split(ctx, rt, req, src, dev, dst, take, path != RJ_TREDUCE_AUTO, opt, call,
                          res, &declined);
    if (s || !declined) return s;
    memset(res, 0, sizeof *res);
    take = RJ_TREDUCE_AUTO; /* peer where it can, staged elsewhere */
  }
  if (path == RJ_TREDUCE_AUTO) take = RJ_TREDUCE_AUTO; /* peer where it can, staged elsewhere */
  return jit_treduce_peer(ctx, rt, req, src, dev, dst, take, opt, call, res);
}

rj_status jit_treduce_exec(rj_ctx *ctx, const rj_request *req, const uint64_t *src, const int *dev,
                           uint64_t dst, rj_treduce_path path, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res) {
  double t0 = jit_now_ms();
  jit_tr_call wait = {.stream = NULL, .async = 0}; /* the default ring timeout */
  rj_status s = take_path(ctx, req, src, dev, dst, path, opt, call ? call : &wait, res);
  res->call_ms = jit_now_ms() - t0;
  return s;
}
