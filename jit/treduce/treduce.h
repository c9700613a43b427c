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
 *   devres.c    the context's treduce state: streams, events, buffers, counters per device, the
 *               GPU count and names, peer access per pair, scratch memory
 *   choose.c    auto's path: the path tables it reads, the choice and why; plan_make's frame
 *   table.c     path tables: the text format, the built-in table, the pick among paths
 *   calibrate.c rj_treduce_calibrate: a path table measured on the machine
 *   nccl.c      the NCCL backend (libnccl through runtime/nccl.c)
 *
 * The dispatcher calls choose.c and the paths; the paths call kernels.c, frame.c and devres.c;
 * choose.c calls table.c, split.c's model and ring.c's facts; nothing calls back up. */
#ifndef RJ_JIT_TREDUCE_H
#define RJ_JIT_TREDUCE_H

#include "../jit.h"
#include "redjit_treduce.h"

#define JIT_TR_PER_KERNEL                                                                          \
  128 /* sources one kernel reads (passes/variants/treduce.c's TR_MAX_RANKS) */

/* The caller's stream ordering (rj_treduce_group's stream and async). */
typedef struct jit_tr_call {
  void *stream;             /* of the root's GPU; NULL: the legacy default stream */
  int async;                /* return once enqueued */
  int64_t ring_timeout_ns;  /* the ring's hops' wait before they give up; 0: RING_TIMEOUT_NS */
  struct jit_tr_memo *memo; /* the repeated group's memo (auto's path kept there); NULL: none */
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
rj_treduce_path jit_treduce_model(const rj_request *req, const int *dev, char *why, size_t n);
rj_status jit_treduce_split(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                            const int *dev, uint64_t dst, rj_treduce_path path, bool forced,
                            const rj_options *opt, const jit_tr_call *call, rj_treduce_result *res,
                            bool *declined);
/* rj_treduce_plan_make's work, without the call's frame: the plan of req for rank r on GPU
 * rank_device[r], its path the one asked for or, for RJ_TREDUCE_AUTO, the link model's
 * (choose.c then puts auto's own). */
rj_status jit_treduce_plan(rj_ctx *ctx, const rj_request *req, const int *rank_device,
                           rj_treduce_path path, rj_treduce_plan *out);
/* choose.c: the path auto takes (peer, split, split-equal or ring; peer stages what it cannot read)
 * for the ranks' GPUs, from the context's path tables where they have the ranks and GPUs, else from
 * the link model (jit_treduce_model), with why.  gpu: the root GPU's name (NULL: unknown; a table
 * of another GPU is then used too). */
rj_treduce_path jit_treduce_auto(rj_ctx *ctx, const rj_request *req, const int *dev,
                                 const char *gpu, char *why, size_t n);
/* GPU dev's name (kept per device; NULL when it cannot be read).  _quiet: opens the driver if it
 * can, and leaves ctx->err as it was (NULL without a driver or GPU). */
const char *jit_tr_gpu_name(rj_ctx *ctx, rt_cuda *rt, int dev);
const char *jit_tr_gpu_name_quiet(rj_ctx *ctx, int dev);
/* Peer access from dev to peer: *can as cuDeviceCanAccessPeer says, enabled in dev's primary
 * context (made current here) when it can; each pair asked of the driver once per context. */
rj_status jit_tr_peer(rj_ctx *ctx, rt_cuda *rt, int dev, int peer, int *can);
/* The GPU count, read once per context. */
rj_status jit_tr_device_count(rj_ctx *ctx, rt_cuda *rt, int *n);
/* At least `bytes` of scratch kept in the context (NULL: out of memory, said in ctx->err): the
 * paths' (jit_tr_scratch) and a call's own, used across the path (jit_tr_scratch_call). */
void *jit_tr_scratch(rj_ctx *ctx, size_t bytes);
void *jit_tr_scratch_call(rj_ctx *ctx, size_t bytes);
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
 * blocking stream does it), and (mark) records ev[0] on ks: every other stream of the operation
 * waits for it first, and a waiting call's time starts there (an async call on ks alone need not
 * mark it).  end, once every other stream's done is joined into ks, records ev[1] there and
 * either makes call->stream wait for it (async: *ms = 0) or waits for it and times the
 * operation. */
rj_status jit_tr_begin(rj_ctx *ctx, rt_cuda *rt, int root_dev, void *ks, const jit_tr_call *call,
                       bool mark, void *ev[2]);
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
/* table.c: path tables (the measured GPU time of each path at a ladder of bytes per rank). */
#define JIT_TR_TABLE_ROWS 1024
typedef struct jit_tr_row {
  int ranks, gpus, line; /* line: where the row was read (messages) */
  int64_t bytes;         /* per rank */
  rj_treduce_path path;
  double us; /* the GPU time of one operation */
} jit_tr_row;
typedef struct jit_tr_table {
  char origin[320]; /* "default", "calibrated", a file name in quotes: in messages and `why` */
  char device[128]; /* the GPU it was measured on; "any": every GPU */
  char source[256]; /* how it was measured ("" : not said) */
  int nrows;
  jit_tr_row row[JIT_TR_TABLE_ROWS];
} jit_tr_table;
/* Parses len bytes of table text into t; RJ_EINVAL naming origin and the line that does not
 * parse. */
rj_status jit_tr_table_parse(const char *text, size_t len, const char *origin, jit_tr_table *t,
                             ir_err *e);
rj_status jit_tr_table_read(const char *file, jit_tr_table *t, ir_err *e); /* a file's */
rj_status jit_tr_table_default(jit_tr_table *t, ir_err *e);                /* the built-in */
char *jit_tr_table_format(const jit_tr_table *t); /* its text (malloc'd; NULL: out of memory) */
/* The fastest of the `eligible` paths (bit 1 << path) t has for `ranks` ranks on `gpus` GPUs at
 * `bytes` per rank, with why; false when t cannot say (no rows for ranks and gpus, bytes below
 * its smallest size, no eligible path estimated there). */
bool jit_tr_table_pick(const jit_tr_table *t, int ranks, int gpus, double bytes, unsigned eligible,
                       rj_treduce_path *path, char *why, size_t n);
const char *jit_tr_path_name(rj_treduce_path p); /* "peer", "split-equal" ... */
/* choose.c: t (malloc'd) becomes the context's own table (rj_treduce_calibrate's). */
rj_status jit_tr_table_own(rj_ctx *ctx, jit_tr_table *t);
void jit_tr_size_text(double bytes, char *buf, size_t n); /* "4 KiB", "1 GiB", "1.5 MiB" */

/* A repeated call's memo (api.c): the group's bytes as last seen and what they made. */
typedef struct jit_tr_memo {
  bool valid;
  rj_treduce_group caller; /* the caller's struct_size bytes, zero beyond */
  rj_treduce_group group;  /* with the fields an older header lacks at their defaults */
  rj_treduce_buf *bufs;    /* the group's src[] as it was (group.src points here) */
  int cap;                 /* entries of bufs, src and dev */
  char target[32];         /* opt's target, ptx_version */
  int ptx_version;
  rj_treduce_path take;      /* auto's path for it (RJ_TREDUCE_AUTO: not chosen yet) */
  void *split_plan;          /* split.c's plan for it (kept allocated), made for path split_for */
  rj_treduce_path split_for; /* RJ_TREDUCE_SPLIT or _SPLIT_EQUAL; RJ_TREDUCE_AUTO: none */
  uint64_t take_gen;         /* the tables' generation it was chosen with */
  rj_request req;            /* the request it made */
  uint64_t *src;             /* the ranks' pointers and devices */
  int *dev;
} jit_tr_memo;

/* The context's treduce state (ctx->treduce). */
typedef struct jit_treduce_state {
  jit_devres *devres; /* per device, made on first use */
  uint64_t ring_base; /* the next ring call's counter base (ring.c) */
  int ring_end_dev;   /* the GPU whose JIT_EV_RING_END marks the last ring call's end; -1 */
  /* the path tables auto reads (choose.c): the context's own (set), else the resolved one
   * (environment, cache folder); then the built-in one */
  int table_mode;        /* 0 automatic, 1 the context's own (table), 2 none: the model alone */
  uint64_t table_gen;    /* changes with the tables (a memo's path is chosen again) */
  bool resolved;         /* table_mode 0: the environment and cache folder were read */
  jit_tr_table *table;   /* the context's own, or the resolved one (NULL: none) */
  jit_tr_table *builtin; /* parsed on first use; NULL with builtin_off (REDJIT_TREDUCE_TABLE=off) */
  bool builtin_off;
  char table_note[400]; /* why a table that was found is not read ("" : nothing to say) */
  /* per device: the GPU count (0: not read yet), names, peer access from d to p (bit p of
   * peer_on[d]: enabled in d's primary context; peer_no[d]: cannot) */
  int ndev;
  char *name[RJ_TREDUCE_MAX_SLICES];
  uint64_t peer_on[RJ_TREDUCE_MAX_SLICES], peer_no[RJ_TREDUCE_MAX_SLICES];
  jit_tr_memo memo;
  /* scratch the paths reuse between calls (grown, never shrunk): bytes of `scratch` */
  void *scratch, *scratch_call;
  size_t scratch_bytes, scratch_call_bytes;
  char why[400]; /* the last choice's reason (rj_treduce_choose) */
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
/* Stream (or event) i of dev if the context has made it already, else NULL (no context needed). */
void *jit_dev_kept(rj_ctx *ctx, int dev, bool stream, int i);
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
