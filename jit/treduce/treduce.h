/* treduce (issue 5): the multi-rank engine shared by rj_treduce (jit/treduce.c, the peer and
 * staged paths; jit/treduce_split.c, the split path) and `run` / `bench` (jit/check_treduce.c). */
#ifndef RJ_JIT_TREDUCE_H
#define RJ_JIT_TREDUCE_H

#include "../jit.h"

#define JIT_TR_PER_KERNEL 128 /* sources one kernel reads (passes/treduce.c's TR_MAX_RANKS) */

/* The caller's stream ordering (rj_treduce_group's stream and async). */
typedef struct jit_tr_call {
  void *stream;            /* of the root's GPU; NULL: the legacy default stream */
  int async;               /* return once enqueued */
  int64_t ring_timeout_ns; /* the ring's hops' wait before they give up; 0: RING_TIMEOUT_NS */
} jit_tr_call;

/* Runs a validated treduce request: src[r] on device dev[r], dst on dev[req root].  Compiles and
 * loads what it needs, picks the path (and each rank's), launches after the work on
 * call->stream, and waits (or, async, makes call->stream wait).  res is filled (not NULL). */
rj_status jit_treduce_exec(rj_ctx *ctx, const rj_request *req, const uint64_t *src, const int *dev,
                           uint64_t dst, rj_treduce_path path, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res);

/* The frame every path puts around an operation, on the root's GPU (the current context must be
 * its).  begin makes ks (the root's stream 0) start after the work enqueued on call->stream
 * before the call (by an event; for the legacy default stream, NULL, ks's being a blocking stream
 * does it), and records ev[0] on ks: every other stream of the operation waits for it
 * first.  end, once every other stream's done is joined into ks, records ev[1] there and either
 * makes call->stream wait for it (async: *ms = 0) or waits for it and times the operation. */
rj_status jit_tr_begin(rj_ctx *ctx, rt_cuda *rt, int rdev, void *ks, const jit_tr_call *call,
                       void *ev[2]);
rj_status jit_tr_end(rj_ctx *ctx, rt_cuda *rt, void *ks, const jit_tr_call *call, void *ev[2],
                     double *ms);
/* Waits for stream on GPU dev (entering its context).  Returns s, or the wait's failure when s is
 * RJ_OK: an earlier failure is never hidden by a later one (whose message then goes nowhere). */
rj_status jit_tr_drain(rt_cuda *rt, int dev, void *stream, rj_status s, ir_err *e);

/* One kernel launch: k (loaded as fn on dev) over n sources into dst. */
typedef struct jit_tr_launch {
  rj_kernel *k;
  void *fn; /* k's function on dev, set once loaded */
  int dev, slice;
  int n;               /* sources */
  const uint64_t *src; /* n pointers (into the caller's table) */
  uint64_t dst;
} jit_tr_launch;

/* Compiles req for device dev (opt's target and PTX version), filling res's variant / target
 * and adding its compile time. */
rj_status jit_treduce_kernel(rj_ctx *ctx, const rj_request *req, const rj_options *opt, int dev,
                             rj_kernel **k, rj_treduce_result *res);
/* Appends to L (at *nl) the launches that fold the n sources table[] (in fold order: the root's
 * first) into dst: up to 128 per kernel, root 0, the later kernels accumulating (the first only
 * under req's accum). */
rj_status jit_treduce_fold(rj_ctx *ctx, const rj_request *req, const uint64_t *table, int n,
                           int dev, uint64_t dst, int slice, const rj_options *opt,
                           jit_tr_launch *L, int *nl, rj_treduce_result *res);
/* Enqueues l (loaded) on stream in the current context; counts it in res. */
rj_status jit_treduce_launch(rj_ctx *ctx, rt_cuda *rt, jit_tr_launch *l, void *stream,
                             rj_treduce_result *res);

/* treduce_split.c: the path auto takes for the ranks' GPUs (RJ_TREDUCE_PEER or _SPLIT: the
 * traffic model's saving, assuming peer access), and the split path itself (path:
 * RJ_TREDUCE_SPLIT or _SPLIT_EQUAL forced, or RJ_TREDUCE_AUTO).  Under auto it sets *declined,
 * touching nothing, when a pair of the GPUs cannot access each other; forced, that is
 * RJ_EUNSUPPORTED naming the pair. */
rj_treduce_path jit_treduce_auto(const rj_request *req, const int *dev);
rj_status jit_treduce_split(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                            const int *dev, uint64_t dst, rj_treduce_path path,
                            const rj_options *opt, const jit_tr_call *call, rj_treduce_result *res,
                            bool *declined);

/* treduce_ring.c: the ring path's load (the busiest GPU's link traffic, in rank buffers, one
 * way), hops and chunks for a request with rank r on GPU dev[r]; -1 (and why) when the ring
 * can't run it.  The path itself (only when asked for: RJ_EUNSUPPORTED, naming the cause, when
 * it can't run the request). */
double jit_treduce_ring_facts(const rj_request *req, const int *dev, int *hops, int64_t *nchunks,
                              char *why, size_t nwhy);
rj_status jit_treduce_ring(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                           const int *dev, uint64_t dst, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res);
/* RJ_ETIMEOUT (once per failed call) when an asynchronous ring call of the context has given up
 * since the last report, looking at the status words without waiting; `after` ends the message
 * (what the caller's call did about it). */
rj_status jit_treduce_ring_deferred(rj_ctx *ctx, const char *after);

#endif
