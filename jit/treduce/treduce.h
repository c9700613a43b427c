/* jit/treduce/ — treduce, a layer above the core: a group of ranks' buffers -> a treduce
 * request -> kernels on one or more GPUs.  It uses the core's compile (rj_compile), load and
 * launch (jit_load, jit_launch), driver (jit_cuda) and runtime/; its state hangs off the context
 * in one slot (ctx->treduce, freed through ctx->treduce_free).  A map of the folder:
 *
 *   api.c       the public entries: groups (checked, turned into a request), run, sync
 *   dispatch.c  jit_treduce_exec: the checks every call makes, then the path it takes
 *   peer.c      the peer and staged paths (the root's GPU folds every rank)
 *   split.c     the split path (every GPU folds a slice), its link model and plans
 *   ring.c      the ring path (a chain of persistent hop kernels)
 *   kernels.c   what the paths share: compiling a fold, cutting it into launches, launching
 *   frame.c     the frame around every path's work on the caller's stream
 *   devres.c    the context's treduce state: streams, events, buffers, counters per device
 *   nccl.c      the NCCL backend (libnccl through runtime/nccl.c)
 *
 * The dispatcher calls the paths; the paths call kernels.c, frame.c and devres.c; nothing calls
 * back up. */
#ifndef RJ_JIT_TREDUCE_H
#define RJ_JIT_TREDUCE_H

#include "../jit.h"
#include "redjit_treduce.h"

#define JIT_TR_PER_KERNEL                                                                          \
  128 /* sources one kernel reads (passes/variants/treduce.c's TR_MAX_RANKS) */

/* The caller's stream ordering (rj_treduce_group's stream and async). */
typedef struct jit_tr_call {
  void *stream;            /* of the root's GPU; NULL: the legacy default stream */
  int async;               /* return once enqueued */
  int64_t ring_timeout_ns; /* the ring's hops' wait before they give up; 0: RING_TIMEOUT_NS */
} jit_tr_call;

/* dispatch.c.  Runs a validated treduce request: src[r] on device dev[r], dst on dev[req root].
 * Compiles and loads what it needs, picks the path (and each rank's), launches after the work on
 * call->stream (NULL: the legacy default stream, waiting), and waits (or, async, makes
 * call->stream wait).  res is filled (not NULL). */
rj_status jit_treduce_exec(rj_ctx *ctx, const rj_request *req, const uint64_t *src, const int *dev,
                           uint64_t dst, rj_treduce_path path, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res);

/* The paths.  Each gets the driver and a request whose devices exist and whose stream belongs to
 * the root's GPU, and fills res.
 * peer.c: the peer and staged paths (path: RJ_TREDUCE_AUTO, _PEER or _STAGED). */
rj_status jit_treduce_peer(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                           const int *dev, uint64_t dst, rj_treduce_path path,
                           const rj_options *opt, const jit_tr_call *call, rj_treduce_result *res);
/* split.c: the path auto takes for the ranks' GPUs (RJ_TREDUCE_PEER or _SPLIT: the traffic
 * model's saving, assuming peer access), and the split path itself (path: RJ_TREDUCE_SPLIT or
 * _SPLIT_EQUAL forced, or RJ_TREDUCE_AUTO).  Under auto it sets *declined, touching nothing, when
 * a pair of the GPUs cannot access each other; forced, that is RJ_EUNSUPPORTED naming the pair. */
rj_treduce_path jit_treduce_auto(const rj_request *req, const int *dev);
rj_status jit_treduce_split(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                            const int *dev, uint64_t dst, rj_treduce_path path,
                            const rj_options *opt, const jit_tr_call *call, rj_treduce_result *res,
                            bool *declined);
/* ring.c: the ring path's load (the busiest GPU's link traffic, in rank buffers, one way), hops
 * and chunks for a request with rank r on GPU dev[r]; -1 (and why) when the ring can't run it.
 * The path itself (only when asked for: RJ_EUNSUPPORTED, naming the cause, when it can't run the
 * request). */
double jit_treduce_ring_facts(const rj_request *req, const int *dev, int *hops, int64_t *nchunks,
                              char *why, size_t nwhy);
rj_status jit_treduce_ring(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                           const int *dev, uint64_t dst, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res);
/* RJ_ETIMEOUT (once per failed call) when an asynchronous ring call of the context has given up
 * since the last report, looking at the status words without waiting; `after` ends the message
 * (what the caller's call did about it). */
rj_status jit_treduce_ring_deferred(rj_ctx *ctx, const char *after);

/* kernels.c.  The rank at fold position pos: the root first, then i < root ? i : i+1 (the
 * reference's order, every path's); a non-commutative custom combine's: rank order
 * (ir_treduce_rank_at). */
int jit_tr_rank_at(const rj_treduce *t, int pos);
/* The distinct GPUs of the ranks into gpus[RJ_TREDUCE_MAX_SLICES], the root's first, then in rank
 * order, and (local, when not NULL) how many ranks each holds; their count, or -1 when there are
 * more than RJ_TREDUCE_MAX_SLICES. */
int jit_tr_gpus(const rj_treduce *t, const int *dev, int *gpus, int *local);
/* One kernel launch: k over n sources into dst on device dev, with req's geometry and, for a
 * runtime-size kernel (np = 1), req's element count as its last parameter. */
typedef struct jit_tr_launch {
  rj_kernel *k;
  int dev, slice;
  int n;               /* sources */
  const uint64_t *src; /* n pointers (into the caller's table) */
  uint64_t dst;
  unsigned grid[3], block[3]; /* req's: the kernel's own, or a runtime-size kernel's plan's */
  int np;                     /* 0: a constant kernel; 1: numel is a kernel parameter */
  int64_t numel;
} jit_tr_launch;
/* Compiles req for device dev (opt's target and PTX version) into l->k with req's launch (l's
 * geometry, np and numel; its other fields untouched), filling res's variant / target and adding
 * its compile time.  A dynamic request over dense buffers finds a kernel compiled for any other
 * element count of its bucket (no compile). */
rj_status jit_treduce_kernel(rj_ctx *ctx, const rj_request *req, const rj_options *opt, int dev,
                             jit_tr_launch *l, rj_treduce_result *res);
/* Appends to L (at *nl) the launches that fold the n sources table[] (in fold order: the root's
 * first) into dst: up to 128 per kernel, root 0, the later kernels accumulating (the first only
 * under req's accum).  later: the passes the caller launches after these (0: this fold's last
 * launch writes the result; op mean divides there, the others are partial sums).  A mean of f16
 * / bf16 in more than one pass in all (this fold's and `later`) is refused, RJ_EUNSUPPORTED:
 * the one place that check is made. */
rj_status jit_treduce_fold(rj_ctx *ctx, const rj_request *req, const uint64_t *table, int n,
                           int dev, uint64_t dst, int slice, int later, const rj_options *opt,
                           jit_tr_launch *L, int *nl, rj_treduce_result *res);
/* op mean, a pass sub of t's fold: the final pass divides by every rank's count (mean_count),
 * the others are op sum (other ops: nothing changes). */
void jit_tr_mean_pass(const rj_treduce *t, rj_treduce *sub, bool final);
/* Enqueues l on stream in the current context (l->dev's), loading its kernel there if it is not
 * yet; counts it in res. */
rj_status jit_treduce_launch(rj_ctx *ctx, const jit_tr_launch *l, void *stream,
                             rj_treduce_result *res);

/* frame.c.  The frame every path puts around an operation, on the root's GPU (the current context
 * must be its).  begin makes ks (the root's stream 0) start after the work enqueued on
 * call->stream before the call (by an event; for the legacy default stream, NULL, ks's being a
 * blocking stream does it), and records ev[0] on ks: every other stream of the operation waits
 * for it first.  end, once every other stream's done is joined into ks, records ev[1] there and
 * either makes call->stream wait for it (async: *ms = 0) or waits for it and times the
 * operation. */
rj_status jit_tr_begin(rj_ctx *ctx, rt_cuda *rt, int root_dev, void *ks, const jit_tr_call *call,
                       void *ev[2]);
rj_status jit_tr_end(rj_ctx *ctx, rt_cuda *rt, void *ks, const jit_tr_call *call, void *ev[2],
                     double *ms);
/* Waits for stream on GPU dev (entering its context).  Returns s, or the wait's failure when s is
 * RJ_OK: an earlier failure is never hidden by a later one (whose message then goes nowhere). */
rj_status jit_tr_drain(rt_cuda *rt, int dev, void *stream, rj_status s, ir_err *e);

/* devres.c: what a context keeps on each device between calls (streams, events, staging buffers,
 * the ring's counters and status words), made on first use. */
#define JIT_DEV_STREAMS 8
#define JIT_DEV_EVENTS 18
#define JIT_EV_CALLER 17   /* event 17 of the root's GPU: recorded on the caller's stream */
#define JIT_EV_RING_END 16 /* event 16 of a ring call's root's GPU: that call's end (all hops) */
#define JIT_DEV_STAGES 3   /* staging slots: 0, 1 the staged path, 2 the ring path */
#define JIT_DEV_FLAG_BYTES 32768          /* the ring path's counters on one device */
#define JIT_STAGE_KEEP ((size_t)64 << 20) /* larger staging buffers are not kept */
typedef struct jit_devres {
  int dev;
  void *stream[JIT_DEV_STREAMS], *event[JIT_DEV_EVENTS];
  uint64_t stage[JIT_DEV_STAGES];
  size_t stage_bytes[JIT_DEV_STAGES];
  uint64_t flags;    /* JIT_DEV_FLAG_BYTES, zeroed when made: the ring path's counters */
  uint64_t *status;  /* page-locked host words of the ring calls rooted here: [0] base + 1 of the
                        last call a hop gave up in, [1] how many calls gave up (ring.c) */
  uint64_t reported; /* of those calls, how many were reported */
  struct jit_devres *next;
} jit_devres;
/* The context's treduce state (ctx->treduce). */
typedef struct jit_treduce_state {
  jit_devres *devres; /* per device, made on first use */
  uint64_t ring_base; /* the next ring call's counter base (ring.c) */
  int ring_end_dev;   /* the GPU whose JIT_EV_RING_END marks the last ring call's end; -1 */
} jit_treduce_state;
/* The context's state, made on first use (which also sets ctx->treduce_free); NULL when out of
 * memory. */
jit_treduce_state *jit_treduce_state_of(rj_ctx *ctx);
/* Stream i / event i of device dev (the current context must be dev's), made on first use and
 * kept; a staging buffer b of at least `bytes`, kept when it is at most JIT_STAGE_KEEP (else
 * *temporary: with `ordered` NULL the caller rt_frees it after draining, else it is allocated on
 * stream `ordered` and the caller rt_free_asyncs it there after its last use); rj_ctx_free
 * drains and releases them all. */
rj_status jit_dev_stream(rj_ctx *ctx, rt_cuda *rt, int dev, int i, void **out);
rj_status jit_dev_event(rj_ctx *ctx, rt_cuda *rt, int dev, int i, void **out);
rj_status jit_dev_stage(rj_ctx *ctx, rt_cuda *rt, int dev, int b, size_t bytes, void *ordered,
                        uint64_t *out, bool *temporary);
/* The same buffer b, kept whatever its size (the ring's inboxes: other GPUs' kernels store into
 * them, and stream-ordered memory of a device's default pool is not open to its peers).  A kept
 * buffer grows only after every device's streams drain: another GPU's kernel may store into it. */
rj_status jit_dev_keep(rj_ctx *ctx, rt_cuda *rt, int dev, int b, size_t bytes, uint64_t *out);
/* The device's counter region (JIT_DEV_FLAG_BYTES), zeroed when it is made, kept until the
 * context is freed; the current context must be dev's. */
rj_status jit_dev_flags(rj_ctx *ctx, rt_cuda *rt, int dev, uint64_t *out);
/* The device's ring status word (page-locked host memory, zeroed when made, a device address on
 * every GPU too) and its record of what was reported; kept until the context is freed. */
rj_status jit_dev_status(rj_ctx *ctx, rt_cuda *rt, int dev, jit_devres **out);
/* Waits for every stream the context keeps, on every device (rj_treduce_sync); all of them even
 * when one fails (the first failure is returned). */
rj_status jit_devres_sync(rj_ctx *ctx);

#endif
