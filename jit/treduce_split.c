/* The split path of rj_treduce (issue 5): the root's kernel alone pulls N-1 whole buffers through
 * the root's one ingress link; here the element range is cut into one slice per GPU the ranks live
 * on, and GPU g reduces slice g of every rank's source (peer reads, sources only read) straight
 * into the root's destination (peer writes; under accum it folds the destination's old value, read
 * from the root).  The root's GPU does slice 0 on its stream, which then waits for an event
 * recorded after each other GPU's kernels; the call stays synchronous.
 *
 * A slice is a request of its own: the same request with the cut dim's extent replaced by the
 * slice's and the whole's strides made explicit, launched on pointers offset on the host by the
 * slice's start times the cut dim's stride.  passes/treduce.c is reused unchanged, strided views
 * included (an offset along one dim of a strided view is again a strided view with the same
 * strides).  The fold order of every element is the reference's (the root first, then
 * i < root ? i : i+1), the same as on the peer path, so the results are bit for bit the peer
 * path's; only which GPU computes an element changes.
 *
 * With every rank on one GPU (forced), the slices run on SPLIT_ONE_GPU streams of that GPU: no
 * bandwidth to gain, but the same cutting, offsets and events, which is what lets one GPU test
 * them. */
#include "treduce.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLICES 64 /* one per GPU; the runtime handles devices 0..63 */

/* Auto takes the split path from this many bytes per rank.  Below it the saving is a few
 * microseconds at most (at 1 MiB per rank and ~400 GB/s of NVLink ingress, the peer path moves
 * (N-1) MiB through the root's link in ~2.6 us per MiB; the split path about half of that on 4
 * GPUs), the same order as what the split path adds: one launch per GPU and a cross-GPU event
 * wait.  An estimate, to be set from the benchmark on >= 3 GPUs (docs/TREDUCE.md). */
#define SPLIT_MIN_BYTES ((int64_t)1 << 20)
/* ... and from this many GPUs.  With one rank per GPU the root's ingress is (N-1)B on the peer path
 * and 2(N-1)B/N split (docs/TREDUCE.md): equal at N = 2 (B each), 2B -> 1.33B at 3, 3B -> 1.5B at
 * 4.  On 2 GPUs split only adds work, so it is forced there, never picked. */
#define SPLIT_MIN_GPUS 3
/* Forced split with every rank on one GPU: this many slices, on as many streams (odd, so that the
 * cuts are uneven). */
#define SPLIT_ONE_GPU 3
/* A cut is balanced when its largest slice holds at most SPLIT_SLACK / slices of the elements. */
#define SPLIT_SLACK 1.125

/* The distinct GPUs of the ranks, the root's first, then in rank order; -1 past MAX_SLICES. */
static int gpu_set(const rj_treduce *t, const int *dev, int *gpus) {
  int G = 0;
  gpus[G++] = dev[t->root];
  for (int r = 0; r < t->ranks; r++) {
    int known = 0;
    for (int i = 0; i < G && !known; i++)
      known = gpus[i] == dev[r];
    if (known) continue;
    if (G == MAX_SLICES) return -1;
    gpus[G++] = dev[r];
  }
  return G;
}

bool jit_treduce_auto_split(const rj_request *req, const int *dev) {
  const rj_treduce *t = &req->u.treduce;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  int gpus[MAX_SLICES];
  return g.numel * ir_dtype(t->dtype)->bytes >= SPLIT_MIN_BYTES &&
         gpu_set(t, dev, gpus) >= SPLIT_MIN_GPUS;
}

/* How the element range is cut: slices [start, start + len) of padded dim `dim`. */
typedef struct cut {
  int dim, n;
  int64_t start[MAX_SLICES], len[MAX_SLICES];
} cut;

/* Cuts into at most `want` slices along one dim: the outermost (dim, unit) whose largest slice is
 * within SPLIT_SLACK of 1/want, else the most balanced (the outermost on a tie).  Rows and cols
 * are tried in whole tiles first (each slice keeps the whole's chunks), then in single rows / cols
 * (a slice boundary then cuts chunks, which become partial chunks of the slices: the kernel
 * computes every chunk's valid rows and cols at run time).  Units are dealt evenly, the first
 * slices taking one more; the last slice ends at the dim's end.  A single element, or none: one
 * slice. */
static void plan_cut(const ir_treduce_geom *g, int want, cut *c) {
  static const int dims[] = {0, 1, 2, 3, 3, 4, 4}, tiled[] = {0, 0, 0, 1, 0, 1, 0};
  double best = 2;
  int bd = -1;
  int64_t bu = 1;
  for (int i = 0; i < 7 && g->numel > 0; i++) { /* empty: one slice (and no launch) */
    int d = dims[i];
    int64_t ext = g->shape[d], u = tiled[i] ? (d == 3 ? g->TR : g->TC) : 1;
    if (tiled[i] && u == 1) continue; /* the same as single rows / cols */
    int64_t units = (ext + u - 1) / u;
    if (units < 2) continue;
    int64_t k = units < want ? units : want;
    int64_t big = (units + k - 1) / k * u;
    double f = (double)(big < ext ? big : ext) / (double)ext;
    if (f < best) {
      best = f;
      bd = d;
      bu = u;
    }
    if (f <= SPLIT_SLACK / want) break;
  }
  if (bd < 0) {
    c->dim = 4;
    c->n = 1;
    c->start[0] = 0;
    c->len[0] = g->shape[4];
    return;
  }
  int64_t ext = g->shape[bd], units = (ext + bu - 1) / bu;
  int64_t k = units < want ? units : want, at = 0;
  c->dim = bd;
  c->n = (int)k;
  for (int64_t i = 0; i < k; i++) {
    int64_t end = at + (units / k + (i < units % k)) * bu;
    c->start[i] = at;
    c->len[i] = (end < ext ? end : ext) - at;
    at = end;
  }
}

/* Slice i of req: the cut dim's extent is the slice's, the strides the whole's (explicit). */
static void slice_request(const rj_request *req, const ir_treduce_geom *g, const cut *c, int i,
                          rj_request *out) {
  *out = *req;
  rj_treduce *t = &out->u.treduce;
  int pad = 5 - t->ndim;
  for (int k = 0; k < t->ndim; k++) {
    t->strides[k] = g->src_st[pad + k];
    t->dst_strides[k] = g->dst_st[pad + k];
  }
  t->has_strides = 1;
  if (c->dim >= pad) t->shape[c->dim - pad] = c->len[i];
}

/* Peer access between every pair of the GPUs.  Checks every pair first; *missing = 1 (nothing
 * enabled) when one can't, with the pair in *a -> *b. */
static rj_status enable_pairs(rt_cuda *rt, const int *gpus, int G, int *missing, int *a, int *b,
                              ir_err *e) {
  rj_status s = RJ_OK;
  *missing = 0;
  for (int i = 0; !s && i < G; i++)
    for (int j = 0; !s && j < G; j++) {
      int can = 0;
      if (i == j) continue;
      if ((s = rt_peer_can_access(rt, gpus[i], gpus[j], &can, e))) break;
      if (!can) {
        *missing = 1;
        *a = gpus[i];
        *b = gpus[j];
        return RJ_OK;
      }
    }
  for (int i = 0; !s && i < G; i++) {
    if ((s = rt_enter(rt, gpus[i], e))) break;
    for (int j = 0; !s && j < G; j++)
      if (j != i) s = rt_peer_enable(rt, gpus[j], e);
    rt_leave(rt);
  }
  return s;
}

/* Per-slice streams and events, freed in their devices' contexts after draining. */
typedef struct lane {
  int dev;
  void *stream, *done; /* slice 0: the root's stream; done unused */
} lane;

/* Enqueues slice i's launches on its lane (the current context is the lane's). */
static rj_status enqueue(rj_ctx *ctx, rt_cuda *rt, jit_tr_launch *L, int nl, int i, lane *ln,
                         rj_treduce_result *res) {
  rj_status s = RJ_OK;
  for (int j = 0; !s && j < nl; j++)
    if (L[j].slice == i) s = jit_treduce_launch(ctx, rt, &L[j], ln->stream, res);
  return s;
}

/* Drains every lane (each in its context), then frees streams and events.  Keeps the first
 * error in e unless s already holds one. */
static rj_status drain(rt_cuda *rt, lane *ln, int n, void *ev[2], rj_status s, ir_err *e) {
  for (int i = n - 1; i >= 0; i--) { /* the other GPUs' lanes, then the root's */
    if (!ln[i].stream) continue;
    ir_err ignored = {0};
    rj_status se = rt_enter(rt, ln[i].dev, s ? &ignored : e);
    if (se) {
      if (!s) s = se;
      continue;
    }
    rj_status s2 = rt_stream_sync(rt, ln[i].stream, s ? &ignored : e);
    if (!s) s = s2;
    rt_event_free(rt, ln[i].done);
    rt_stream_free(rt, ln[i].stream);
    if (i == 0) rt_event_pair_free(rt, ev);
    rt_leave(rt);
  }
  return s;
}

rj_status jit_treduce_split(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                            const int *dev, uint64_t dst, bool forced, const rj_options *opt,
                            rj_treduce_result *res, bool *declined) {
  ir_err *e = &ctx->err;
  const rj_treduce *t = &req->u.treduce;
  int N = t->ranks, root = t->root, rdev = dev[root], bytes = ir_dtype(t->dtype)->bytes;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  /* 1. the GPUs, and peer access between every pair of them */
  int gpus[MAX_SLICES], G = gpu_set(t, dev, gpus), missing = 0, pa = 0, pb = 0;
  *declined = !forced && (G < 0);
  if (G < 0) {
    if (!forced) return RJ_OK;
    return ir_fail(e, RJ_EUNSUPPORTED, "path: split, but the ranks live on more than %d GPUs",
                   MAX_SLICES);
  }
  rj_status s = enable_pairs(rt, gpus, G, &missing, &pa, &pb, e);
  if (s) return s;
  *declined = !forced && missing;
  if (missing) {
    if (!forced) return RJ_OK;
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "path: split, but GPU %d cannot access GPU %d directly (cuDeviceCanAccessPeer "
                   "= 0): every GPU of the ranks must reach every other; use path auto, peer or "
                   "staged",
                   pa, pb);
  }
  /* 2. the cut: one slice per GPU (slice i on gpus[i], the root's first), or SPLIT_ONE_GPU */
  cut c;
  plan_cut(&g, G >= 2 ? G : SPLIT_ONE_GPU, &c);
  snprintf(res->path, sizeof res->path, "split");
  res->direct_ranks = N;
  for (int r = 0; r < N; r++)
    res->peer_ranks += dev[r] != rdev;
  res->slices = g.numel ? c.n : 0;
  res->gpus = g.numel ? (G >= 2 ? c.n : 1) : 0;
  /* 3. per slice: the sources in fold order, offset to the slice; its kernels */
  int per = (N + JIT_TR_PER_KERNEL - 1) / JIT_TR_PER_KERNEL, nl = 0;
  uint64_t *table = malloc(sizeof(uint64_t) * (size_t)N * (size_t)c.n);
  jit_tr_launch *L = malloc(sizeof *L * (size_t)per * (size_t)c.n);
  lane *ln = calloc((size_t)c.n, sizeof *ln);
  if (!table || !L || !ln) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  for (int i = 0; !s && i < c.n; i++) {
    int64_t so = c.start[i] * g.src_st[c.dim] * bytes, dof = c.start[i] * g.dst_st[c.dim] * bytes;
    uint64_t *row = table + (size_t)i * (size_t)N;
    for (int k = 0; k < N; k++)
      row[k] = src[k == 0 ? root : (k - 1 < root ? k - 1 : k)] + (uint64_t)so;
    rj_request sub;
    slice_request(req, &g, &c, i, &sub);
    ln[i].dev = G >= 2 ? gpus[i] : rdev;
    s = jit_treduce_fold(ctx, &sub, row, N, ln[i].dev, dst + (uint64_t)dof, i, opt, L, &nl, res);
  }
  if (s || g.numel == 0) { /* nothing to move: the destination stays as it is */
    free(table);
    free(L);
    free(ln);
    return s;
  }
  /* 4. load every kernel on its GPU */
  for (int j = 0; !s && j < nl; j++) {
    double ms = 0;
    if ((s = rt_enter(rt, L[j].dev, e))) break;
    s = jit_load(ctx, L[j].k, L[j].dev, &ms);
    L[j].fn = L[j].k->function;
    res->load_ms += ms;
    rt_leave(rt);
  }
  /* 5. streams and events first (none of their creation is timed); then the root's stream starts
   * (ev[0]); every other slice's stream waits for it, runs its kernels and records done; the root
   * runs slice 0, waits for every done, and ends (ev[1]) */
  void *ev[2] = {NULL, NULL};
  for (int i = 0; !s && i < c.n; i++) {
    if ((s = rt_enter(rt, ln[i].dev, e))) break;
    s = rt_stream_new(rt, &ln[i].stream, e);
    if (!s) s = i ? rt_event_new(rt, &ln[i].done, e) : rt_event_pair(rt, ev, e);
    rt_leave(rt);
  }
  if (!s && !(s = rt_enter(rt, rdev, e))) {
    s = rt_event_record(rt, ev[0], ln[0].stream, e);
    rt_leave(rt);
  }
  for (int i = 1; !s && i < c.n; i++) {
    if ((s = rt_enter(rt, ln[i].dev, e))) break;
    s = rt_stream_wait(rt, ln[i].stream, ev[0], e);
    if (!s) s = enqueue(ctx, rt, L, nl, i, &ln[i], res);
    if (!s) s = rt_event_record(rt, ln[i].done, ln[i].stream, e);
    rt_leave(rt);
  }
  if (!s && !(s = rt_enter(rt, rdev, e))) {
    s = enqueue(ctx, rt, L, nl, 0, &ln[0], res);
    for (int i = 1; !s && i < c.n; i++)
      s = rt_stream_wait(rt, ln[0].stream, ln[i].done, e);
    if (!s) s = rt_event_record(rt, ev[1], ln[0].stream, e);
    if (!s) s = rt_event_ms(rt, ev[0], ev[1], &res->ms, e);
    rt_leave(rt);
  }
  /* 6. drain every stream before freeing anything */
  s = drain(rt, ln, c.n, ev, s, e);
  free(table);
  free(L);
  free(ln);
  return s;
}
