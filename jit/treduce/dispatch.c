/* jit_treduce_exec: the checks every treduce call makes (the ranks' GPUs exist, the caller's
 * stream is the root GPU's), then the path it takes:
 *   ring     only when asked for (ring.c);
 *   split    when asked for, or picked by auto from the link model (split.c); under auto it
 *            declines, touching nothing, when a pair of the GPUs cannot reach each other;
 *   peer / staged  otherwise (peer.c: the root's GPU folds every rank, reading some in place and
 *            copying the others). */
#include "treduce.h"

#include <string.h>

/* The ranks' devices exist and the caller's stream belongs to the root's GPU. */
static rj_status check_devices(rt_cuda *rt, const rj_treduce *t, const int *dev,
                               const jit_tr_call *call, ir_err *e) {
  int ndev = 0;
  rj_status s = rt_device_count(rt, &ndev, e);
  if (s) return s;
  for (int r = 0; r < t->ranks; r++)
    if (dev[r] < 0 || dev[r] >= ndev)
      return ir_fail(e, RJ_EINVAL, "src[%d].device: no GPU %d (%d present)", r, dev[r], ndev);
  int root_dev = dev[t->root];
  if ((s = rt_enter(rt, root_dev, e))) return s;
  s = rt_stream_check(rt, call->stream, root_dev, "stream", e);
  rt_leave(rt);
  return s;
}

static rj_status take_path(rj_ctx *ctx, const rj_request *req, const uint64_t *src, const int *dev,
                           uint64_t dst, rj_treduce_path path, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res) {
  rt_cuda *rt = NULL;
  rj_status s = jit_cuda(ctx, &rt);
  if (!s) s = check_devices(rt, &req->u.treduce, dev, call, &ctx->err);
  if (s) return s;
  if (path == RJ_TREDUCE_RING) return jit_treduce_ring(ctx, rt, req, src, dev, dst, opt, call, res);
  rj_treduce_path take = path == RJ_TREDUCE_AUTO ? jit_treduce_auto(req, dev) : path;
  if (take == RJ_TREDUCE_SPLIT || take == RJ_TREDUCE_SPLIT_EQUAL) {
    bool declined = false;
    s = jit_treduce_split(ctx, rt, req, src, dev, dst, path, opt, call, res, &declined);
    if (s || !declined) return s;
    memset(res, 0, sizeof *res);
  }
  return jit_treduce_peer(ctx, rt, req, src, dev, dst, path, opt, call, res);
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
