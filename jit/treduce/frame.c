/* The frame every treduce path puts around its work on the root's GPU, so that the operation is
 * ordered on the caller's stream: jit_tr_begin (after the caller's earlier work), jit_tr_end (the
 * caller's stream waits for the operation, or the call waits and times it), and jit_tr_drain (a
 * stream waited for without hiding an earlier failure). */
#include "treduce.h"

rj_status jit_tr_begin(rj_ctx *ctx, rt_cuda *rt, int root_dev, void *ks, const jit_tr_call *call,
                       bool mark, void *ev[2]) {
  ir_err *e = &ctx->err;
  void *evc = NULL;
  rj_status s = jit_dev_event(ctx, rt, root_dev, 0, &ev[0]);
  if (!s) s = jit_dev_event(ctx, rt, root_dev, 1, &ev[1]);
  /* the legacy default stream needs no event: ks is a blocking stream, so it already waits for
   * that stream's earlier work (and an event recorded there would wait for every blocking
   * stream of the GPU, other contexts' calls included) */
  if (!s && call->stream) s = jit_dev_event(ctx, rt, root_dev, JIT_EV_CALLER, &evc);
  if (!s && evc) s = rt_event_record(rt, evc, call->stream, e);
  if (!s && evc) s = rt_stream_wait(rt, ks, evc, e);
  if (!s && mark) s = rt_event_record(rt, ev[0], ks, e);
  return s;
}

rj_status jit_tr_end(rj_ctx *ctx, rt_cuda *rt, void *ks, const jit_tr_call *call, void *ev[2],
                     double *ms) {
  ir_err *e = &ctx->err;
  rj_status s = rt_event_record(rt, ev[1], ks, e);
  if (s) return s;
  if (call->async) return rt_stream_wait(rt, call->stream, ev[1], e);
  return rt_event_ms(rt, ev[0], ev[1], ms, e);
}

rj_status jit_tr_drain(rt_cuda *rt, int dev, void *stream, rj_status s, ir_err *e) {
  ir_err ignored = {0};
  rj_status se = rt_enter(rt, dev, s ? &ignored : e);
  if (!se) {
    se = rt_stream_sync(rt, stream, s ? &ignored : e);
    rt_leave(rt);
  }
  return s ? s : se;
}
