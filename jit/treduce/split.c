/* The split path of rj_treduce: the root's kernel alone pulls every remote rank's
 * buffer through the root's one ingress link; here the element range is cut into one slice per
 * GPU the ranks live on, and GPU g reduces slice g of every rank's source (peer reads, sources
 * only read) straight into the root's destination (peer writes; under accum it folds the
 * destination's old value, read from the root).  The slices are sized by a model of the GPUs'
 * link traffic (each GPU's load, max(in, out, (in + out) / KAPPA): targets() below), minimising
 * the busiest GPU's load; with one rank on each of 4 or more GPUs that leaves the root without a
 * slice, on 2 GPUs with several ranks each it gives the root most of them.  The root's stream
 * starts and ends the operation, waiting for an event recorded after each other GPU's kernels;
 * the call stays synchronous.  rj_treduce_plan_make shows the plan without running it.
 *
 * A slice is a request of its own: the same request with the cut dim's extent replaced by the
 * slice's and the whole's strides made explicit, launched on pointers offset on the host by the
 * slice's start times the cut dim's stride.  passes/variants/treduce.c is reused unchanged, strided
 * views included (an offset along one dim of a strided view is again a strided view with the same
 * strides).  The fold order of every element is the reference's (the root first, then
 * i < root ? i : i+1), the same as on the peer path, so the results are bit for bit the peer
 * path's; only which GPU computes an element changes.
 *
 * With every rank on one GPU (forced), the slices run on SPLIT_ONE_GPU streams of that GPU: no
 * bandwidth to gain, but the same cutting, offsets and events, which is what lets one GPU test
 * them. */
#include "treduce.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLICES RJ_TREDUCE_MAX_SLICES /* one per GPU; the runtime handles devices 0..63 */

/* Auto takes the split path when the link model (below) says it saves at least this much of the
 * busiest GPU's link time, counted in bytes at one link direction's bandwidth.  From the two-GPU
 * benchmark (docs/TREDUCE.md): a modelled saving of 4.5 MiB (4 ranks of 16 MiB, equal slices)
 * measured 1.02x over peer, 9.4 MiB (6 ranks of 16 MiB) 1.21x, 18 MiB (4 of 64 MiB) 1.10x: the
 * split path's own cost (a launch per GPU, cross-GPU events) is worth a few MiB. */
#define SPLIT_MIN_SAVED ((double)(8 << 20))
/* The link model's one fitted constant: a GPU's port moves at most KAPPA times one direction's
 * bandwidth in both directions together (fitted on 2 x H200 NVLink: docs/TREDUCE.md). */
#define KAPPA 1.45
/* Forced split with every rank on one GPU: this many slices, on as many streams (odd, so that the
 * cuts are uneven). */
#define SPLIT_ONE_GPU 3
/* A cut is good enough when no slice holds more than SPLIT_SLACK times its target share. */
#define SPLIT_SLACK 1.125
/* Slice i of a split on one GPU uses the context's stream i and event 2 + i of that GPU. */
_Static_assert(SPLIT_ONE_GPU <= JIT_DEV_STREAMS && 2 + SPLIT_ONE_GPU <= JIT_DEV_EVENTS,
               "the context keeps too few streams / events per device for SPLIT_ONE_GPU");

/* How the element range is cut: slices [start, start + len) of padded dim `dim`; slice i runs on
 * the plan's GPU i (len 0: it idles). */
typedef struct cut {
  int dim, n;
  int64_t start[MAX_SLICES], len[MAX_SLICES];
} cut;

/* The split plan of a request for the ranks' GPUs. */
typedef struct plan {
  int N, G;              /* ranks; distinct GPUs (-1: more than MAX_SLICES) */
  int gpus[MAX_SLICES];  /* the root's first, then in rank order */
  int local[MAX_SLICES]; /* ranks on each */
  bool accum;            /* the other GPUs also read the destination's old values */
  int n;                 /* slices: G, or SPLIT_ONE_GPU on one GPU */
  double f[MAX_SLICES];  /* each slice's target share of the elements */
  cut c;
  double in[MAX_SLICES], out[MAX_SLICES], load[MAX_SLICES]; /* of the cut, in rank buffers */
  double peer_load, split_load, bytes;
} plan;

/* ---- the link model.  Every byte the split path moves between GPUs, in units of one rank's
 * buffer B, for GPU g with share f_g of the elements and n_g of the N ranks:
 *   in_g  = f_g (N - n_g)             its slice of every rank not on it
 *         + (1 - f_root)              the root only: the other GPUs' partial sums
 *         + f_g                       the others, under accum: the destination's old values
 *   out_g = n_g (1 - f_g)             its ranks' sources, read by the other GPUs' slices
 *         + f_g                       the others: their partial sums, written to the root
 *         + (1 - f_root)              the root, under accum: the old values the others read
 *   load_g = max(in_g, out_g, (in_g + out_g) / KAPPA)
 * in time units of B crossing one link direction.  The peer path's load is the root's in,
 * N - n_root.  Fitted on 2 x H200 (NV18) with KAPPA = 1.45, it predicts the measured times of the
 * peer path (2 to 6 ranks) and of split with equal and with ingress-balanced shares (4 and 6
 * ranks) within 3%, and of split with these shares within 4%; it is pessimistic (1.38 B
 * against 1.15 B measured) when only one GPU reads remotely and the other only receives.  Each load
 * depends on that GPU's share alone, so the shares minimising the largest load are found by
 * bisection on the load: at a load T each GPU's share may lie in an interval, and T is feasible
 * when the intervals can sum to 1. */
/* GPU g's in and out as affine functions of its share f: in = ai + bi f, out = ao + bo f. */
static void coeffs(const plan *p, int g, double *ai, double *bi, double *ao, double *bo) {
  int n = p->local[g], acc = p->accum;
  if (g == 0) { /* the root */
    *ai = 1;
    *bi = p->N - n - 1;
    *ao = n + acc;
    *bo = -(double)(n + acc);
  } else {
    *ai = 0;
    *bi = p->N - n + acc;
    *ao = n;
    *bo = 1 - n;
  }
}

static void traffic(const plan *p, int g, double f, double *in, double *out) {
  double ai, bi, ao, bo;
  coeffs(p, g, &ai, &bi, &ao, &bo);
  *in = ai + bi * f;
  *out = ao + bo * f;
}

static double load(const plan *p, int g, double f) {
  double in, out;
  traffic(p, g, f, &in, &out);
  return fmax(fmax(in, out), (in + out) / KAPPA);
}

/* The shares GPU g may take at load T: [*lo, *hi] within [0, 1] (empty: *lo > *hi), the
 * intersection of a + b f <= T over the load's three affine pieces. */
static void interval(const plan *p, int g, double T, double *lo, double *hi) {
  double ai, bi, ao, bo;
  coeffs(p, g, &ai, &bi, &ao, &bo);
  const double a[3] = {ai, ao, (ai + ao) / KAPPA}, b[3] = {bi, bo, (bi + bo) / KAPPA};
  *lo = 0;
  *hi = 1;
  for (int k = 0; k < 3; k++) {
    if (b[k] > 0)
      *hi = fmin(*hi, (T - a[k]) / b[k]);
    else if (b[k] < 0)
      *lo = fmax(*lo, (T - a[k]) / b[k]);
    else if (a[k] > T)
      *lo = 2; /* empty */
  }
}

/* The target shares.  Equal: 1/n each.  Balanced: the least largest load (above); within what
 * that load allows, the root takes as much as it may (its share crosses no link as partial sums)
 * and the rest is spread in proportion to what each other GPU may take. */
static void targets(plan *p, bool equal) {
  if (p->G < 2 || equal) {
    for (int i = 0; i < p->n; i++)
      p->f[i] = 1.0 / p->n;
    return;
  }
  double lo[MAX_SLICES], hi[MAX_SLICES], a = 0, b = p->N + 2.0; /* load(b) is feasible */
  for (int it = 0; it < 60; it++) {
    double T = (a + b) / 2, slo = 0, shi = 0;
    for (int g = 0; g < p->G; g++) {
      interval(p, g, T, &lo[g], &hi[g]);
      if (lo[g] > hi[g]) slo = 2; /* this GPU can't meet T */
      slo += lo[g];
      shi += hi[g];
    }
    if (slo <= 1 && shi >= 1)
      b = T;
    else
      a = T;
  }
  double T = b * (1 + 1e-9), rest = 1, room = 0;
  for (int g = 0; g < p->G; g++) {
    interval(p, g, T, &lo[g], &hi[g]);
    if (lo[g] > hi[g]) lo[g] = hi[g] = 0; /* cannot happen at a feasible T; be safe */
    if (g) rest -= lo[g];
  }
  p->f[0] = fmin(hi[0], fmax(lo[0], rest));
  rest = 1 - p->f[0];
  for (int g = 1; g < p->G; g++) {
    rest -= lo[g];
    room += hi[g] - lo[g];
  }
  for (int g = 1; g < p->G; g++)
    p->f[g] = lo[g] + (room > 0 ? rest * (hi[g] - lo[g]) / room : rest / (p->G - 1));
}

/* Deals `units` to the n slices by their shares: the floor of each, then the remaining units one
 * at a time to the largest remainders (the lower slice on a tie); a share of 0 gets none. */
static void deal(int64_t units, int n, const double *f, int64_t *a) {
  double rem[MAX_SLICES];
  int64_t left = units;
  for (int i = 0; i < n; i++) {
    double q = f[i] * (double)units;
    a[i] = (int64_t)q;
    if (a[i] > left) a[i] = left;
    left -= a[i];
    rem[i] = f[i] > 0 ? q - (double)a[i] : -1e300;
  }
  while (left > 0) {
    int best = 0;
    for (int i = 1; i < n; i++)
      if (rem[i] > rem[best]) best = i;
    a[best]++;
    rem[best] -= 1;
    left--;
  }
}

/* The cut of `units` units of u indices (the last unit clipped to ext) into slices; returns the
 * largest ratio of a slice's share to its target. */
static double lay(int64_t ext, int64_t u, int n, const double *f, cut *c) {
  int64_t units = (ext + u - 1) / u, a[MAX_SLICES], at = 0;
  deal(units, n, f, a);
  double over = 0;
  for (int i = 0; i < n; i++) {
    int64_t end = at + a[i] * u;
    c->start[i] = at;
    c->len[i] = (end < ext ? end : ext) - at;
    at = end < ext ? end : ext;
    double x = (double)c->len[i] / (double)ext;
    if (x > 0) over = fmax(over, f[i] > 0 ? x / f[i] : HUGE_VAL);
  }
  c->n = n;
  return over;
}

/* Cuts along one dim: the outermost (dim, unit) whose slices are all within SPLIT_SLACK of their
 * targets, else the closest (the outermost on a tie).  Rows and cols are tried in whole tiles
 * first (each slice keeps the whole's chunks), then in single rows / cols (a slice boundary then
 * cuts chunks, which become partial chunks of the slices: the kernel computes every chunk's valid
 * rows and cols at run time).  A single element, or none: one slice, the root's. */
static void plan_cut(const ir_treduce_geom *g, int n, const double *f, cut *c) {
  static const int dims[] = {0, 1, 2, 3, 3, 4, 4}, tiled[] = {0, 0, 0, 1, 0, 1, 0};
  double best = HUGE_VAL;
  int bd = -1;
  int64_t bu = 1;
  for (int i = 0; i < 7 && g->numel > 0; i++) { /* empty: one slice (and no launch) */
    int d = dims[i];
    int64_t ext = g->shape[d], u = tiled[i] ? (d == 3 ? g->TR : g->TC) : 1;
    if (tiled[i] && u == 1) continue; /* the same as single rows / cols */
    if ((ext + u - 1) / u < 2) continue;
    double over = lay(ext, u, n, f, c);
    if (over < best) {
      best = over;
      bd = d;
      bu = u;
    }
    if (over <= SPLIT_SLACK) break;
  }
  if (bd < 0) {
    c->dim = 4;
    c->n = 1;
    c->start[0] = 0;
    c->len[0] = g->shape[4];
    return;
  }
  lay(g->shape[bd], bu, n, f, c);
  c->dim = bd;
}

/* The plan: the ranks' GPUs, the target shares, the cut and the traffic model. */
static int make_plan(const rj_request *req, const int *dev, bool equal, plan *p) {
  const rj_treduce *t = &req->u.treduce;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  memset(p, 0, sizeof *p);
  p->N = t->ranks;
  p->G = jit_tr_gpus(t, dev, p->gpus, p->local);
  if (p->G < 0) return p->G;
  p->n = p->G >= 2 ? p->G : SPLIT_ONE_GPU;
  p->accum = t->accum;
  targets(p, equal);
  plan_cut(&g, p->n, p->f, &p->c);
  p->bytes = (double)g.numel * ir_dtype(t->dtype)->bytes;
  if (p->G < 2 || g.numel == 0) return p->G; /* nothing crosses a link */
  p->peer_load = p->N - p->local[0];
  for (int i = 0; i < p->c.n; i++) {
    double x = (double)p->c.len[i] / (double)g.shape[p->c.dim];
    traffic(p, i, x, &p->in[i], &p->out[i]);
    p->load[i] = load(p, i, x);
    p->split_load = fmax(p->split_load, p->load[i]);
  }
  return p->G;
}

/* The link model's path: split on two or more GPUs where it saves at least SPLIT_MIN_SAVED against
 * the peer path, else peer (auto's choice where no path table has the ranks and GPUs: choose.c). */
static rj_treduce_path auto_path(const plan *p) {
  return p->G >= 2 && (p->peer_load - p->split_load) * p->bytes >= SPLIT_MIN_SAVED
             ? RJ_TREDUCE_SPLIT
             : RJ_TREDUCE_PEER;
}

rj_treduce_path jit_treduce_model(const rj_request *req, const int *dev, char *why, size_t n) {
  plan p;
  int G = make_plan(req, dev, false, &p);
  if (G < 2) {
    snprintf(why, n, "model: peer (the ranks are on %s)",
             G == 1 ? "one GPU" : "more GPUs than a split takes");
    return RJ_TREDUCE_PEER;
  }
  rj_treduce_path take = auto_path(&p);
  char saved[32];
  jit_tr_size_text(fmax(0, (p.peer_load - p.split_load) * p.bytes), saved, sizeof saved);
  snprintf(why, n,
           "model: %s (the split saves %s of the busiest GPU's link time; auto splits from 8 MiB)",
           jit_tr_path_name(take), saved);
  return take;
}

RJ_API void rj_treduce_plan_init(rj_treduce_plan *p) {
  if (!p) return;
  memset(p, 0, sizeof *p);
  p->struct_size = sizeof *p;
}

rj_status jit_treduce_plan(rj_ctx *ctx, const rj_request *req, const int *rank_device,
                           rj_treduce_path path, rj_treduce_plan *out) {
  ir_err *e = &ctx->err;
  rj_status s = jit_validate(ctx, req);
  if (s) return s;
  if (out->struct_size != sizeof *out)
    return ir_fail(e, RJ_EINVAL,
                   "plan.struct_size: %u, this library expects %zu (use "
                   "rj_treduce_plan_init)",
                   out->struct_size, sizeof *out);
  if (req->kind != RJ_KIND_TREDUCE)
    return ir_fail(e, RJ_EINVAL, "kind: %s, plans are made for treduce requests",
                   ir_kind_name(req->kind));
  if (path != RJ_TREDUCE_AUTO && path != RJ_TREDUCE_SPLIT && path != RJ_TREDUCE_SPLIT_EQUAL &&
      path != RJ_TREDUCE_RING) {
    const char *name = path == RJ_TREDUCE_PEER     ? "peer"
                       : path == RJ_TREDUCE_STAGED ? "staged"
                                                   : "?";
    return ir_fail(e, RJ_EINVAL,
                   "path: %d (%s); plans are made for auto, split, split-equal "
                   "and ring",
                   path, name);
  }
  for (int r = 0; r < req->u.treduce.ranks; r++)
    if (rank_device[r] < 0)
      return ir_fail(e, RJ_EINVAL, "rank_device[%d]: %d is negative", r, rank_device[r]);
  plan p;
  if (make_plan(req, rank_device, path == RJ_TREDUCE_SPLIT_EQUAL, &p) < 0)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "rank_device: the ranks live on more "
                   "than %d GPUs",
                   MAX_SLICES);
  rj_treduce_plan_init(out);
  int64_t nc = 0;
  out->ring_load = jit_treduce_ring_facts(req, rank_device, &out->hops, &nc, out->ring_why,
                                          sizeof out->ring_why);
  out->chunks = (int)nc;
  out->path = path != RJ_TREDUCE_AUTO ? path : p.G >= 2 ? auto_path(&p) : RJ_TREDUCE_PEER;
  out->gpus = p.G;
  int pad = 5 - req->u.treduce.ndim;
  bool cut = p.bytes > 0 && p.c.n > 1 && p.c.dim >= pad;
  out->dim = cut ? p.c.dim - pad : -1;
  out->slices = p.c.n;
  out->bytes_per_rank = p.bytes;
  out->peer_load = p.peer_load;
  out->split_load = p.split_load;
  out->saved_bytes = (p.peer_load - p.split_load) * p.bytes;
  ir_treduce_geom g;
  ir_treduce_facts(&req->u.treduce, &g);
  for (int i = 0; i < p.c.n; i++) {
    rj_treduce_slice *sl = &out->slice[i];
    sl->device = p.G >= 2 ? p.gpus[i] : p.gpus[0];
    sl->local_ranks = p.G >= 2 ? p.local[i] : p.N;
    sl->start = p.c.start[i];
    sl->len = p.c.len[i];
    sl->share = g.numel ? (double)p.c.len[i] / (double)g.shape[p.c.dim] : 0;
    sl->in = p.in[i];
    sl->out = p.out[i];
    sl->load = p.load[i];
  }
  return RJ_OK;
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
static rj_status enable_pairs(rj_ctx *ctx, rt_cuda *rt, const int *gpus, int G, int *missing,
                              int *a, int *b) {
  rj_status s = RJ_OK;
  *missing = 0;
  for (int i = 0; !s && i < G; i++)
    for (int j = 0; !s && j < G; j++) {
      int can = 0;
      if (i == j) continue;
      if ((s = jit_tr_peer(ctx, rt, gpus[i], gpus[j], &can))) break;
      if (!can) {
        *missing = 1;
        *a = gpus[i];
        *b = gpus[j];
        return RJ_OK;
      }
    }
  return s;
}

/* A slice's GPU, stream and `done` event there (the context's, kept between calls). */
typedef struct slice_stream {
  int dev;
  void *stream, *done; /* slice 0: the root's stream (done unused); NULL: the slice is empty */
} slice_stream;

/* Enqueues slice i's launches on its stream (the current context is its GPU's). */
static rj_status enqueue(rj_ctx *ctx, jit_tr_launch *L, int nl, int i, const slice_stream *ss,
                         rj_treduce_result *res) {
  rj_status s = RJ_OK;
  for (int j = 0; !s && j < nl; j++)
    if (L[j].slice == i) s = jit_treduce_launch(ctx, &L[j], ss->stream, res);
  return s;
}

/* make_plan, or the plan the call's memo keeps for the same group and path (a repeated call
 * makes none). */
static int memo_plan(const rj_request *req, const int *dev, bool equal, const jit_tr_call *call,
                     plan *p) {
  jit_tr_memo *m = call->memo;
  rj_treduce_path want = equal ? RJ_TREDUCE_SPLIT_EQUAL : RJ_TREDUCE_SPLIT;
  if (m && m->split_plan && m->split_for == want) {
    memcpy(p, m->split_plan, sizeof *p);
    return p->G;
  }
  int G = make_plan(req, dev, equal, p);
  if (m && (m->split_plan || (m->split_plan = malloc(sizeof *p)))) {
    memcpy(m->split_plan, p, sizeof *p);
    m->split_for = want;
  }
  return G;
}

/* Step 1 of jit_treduce_split: the plan (the GPUs, the shares, the cut) and peer access between
 * every pair of GPUs.  *declined: auto should take another path (the status is then RJ_OK); a
 * forced split that cannot run fails instead. */
static rj_status plan_gpus(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const int *dev,
                           rj_treduce_path path, bool forced, const jit_tr_call *call, plan *p,
                           int *G, bool *declined) {
  ir_err *e = &ctx->err;
  int missing = 0, pa = 0, pb = 0;
  *G = memo_plan(req, dev, path == RJ_TREDUCE_SPLIT_EQUAL, call, p);
  *declined = !forced && (*G < 0);
  if (*G < 0) {
    if (!forced) return RJ_OK;
    return ir_fail(e, RJ_EUNSUPPORTED, "path: split, but the ranks live on more than %d GPUs",
                   MAX_SLICES);
  }
  rj_status s = enable_pairs(ctx, rt, p->gpus, *G, &missing, &pa, &pb);
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
  return RJ_OK;
}

/* Step 2: the result's description of the split (slice i runs on p->gpus[i], the root's first, or
 * on the root's GPU when it is the only one). */
static void describe_split(const rj_treduce *t, const int *dev, const ir_treduce_geom *g,
                           const cut *c, int G, rj_treduce_result *res) {
  int N = t->ranks, root_dev = dev[t->root];
  snprintf(res->path, sizeof res->path, "split");
  res->direct_ranks = N;
  for (int r = 0; r < N; r++)
    res->peer_ranks += dev[r] != root_dev;
  for (int i = 0; g->numel && i < c->n; i++)
    res->slices += c->len[i] > 0;
  res->gpus = G >= 2 ? res->slices : res->slices > 0;
  res->root_share = !g->numel ? 0 : G < 2 ? 1 : (double)c->len[0] / (double)g->shape[c->dim];
}

/* Step 3: per non-empty slice, the sources in fold order offset to the slice (row i of `table`,
 * N entries) and its kernels, appended to L[*nl..]; sets each slice's GPU in ss. */
static rj_status fold_slices(rj_ctx *ctx, const rj_request *req, const ir_treduce_geom *g,
                             const plan *p, int G, const uint64_t *src, int root_dev, uint64_t dst,
                             const rj_options *opt, uint64_t *table, jit_tr_launch *L, int *nl,
                             slice_stream *ss, rj_treduce_result *res) {
  const rj_treduce *t = &req->u.treduce;
  const cut *c = &p->c;
  int N = t->ranks, bytes = ir_dtype(t->dtype)->bytes;
  int dbytes = ir_dtype(ir_treduce_result(t))->bytes; /* a struct state's output: its field's */
  rj_status s = RJ_OK;
  for (int i = 0; !s && i < c->n; i++) {
    ss[i].dev = G >= 2 ? p->gpus[i] : root_dev;
    if (c->len[i] == 0) continue;
    int64_t so = c->start[i] * g->src_st[c->dim] * bytes,
            dof = c->start[i] * g->dst_st[c->dim] * dbytes;
    uint64_t *row = table + (size_t)i * (size_t)N;
    for (int k = 0; k < N; k++)
      row[k] = src[jit_tr_rank_at(t, k)] + (uint64_t)so;
    rj_request sub;
    slice_request(req, g, c, i, &sub);
    s = jit_treduce_fold(ctx, &sub, row, N, ss[i].dev, dst + (uint64_t)dof, i, 0, opt, L, nl, res);
  }
  return s;
}

/* Whether k is loaded on dev already (no context to enter for it). */
static bool loaded(const rj_kernel *k, int dev) {
  for (const jit_module *m = k->loads; m; m = m->next)
    if (m->dev == dev) return true;
  return false;
}

/* Step 4: loads every kernel on its GPU. */
static rj_status load_kernels(rj_ctx *ctx, rt_cuda *rt, jit_tr_launch *L, int nl,
                              rj_treduce_result *res) {
  rj_status s = RJ_OK;
  for (int j = 0; !s && j < nl; j++) {
    double ms = 0;
    if (loaded(L[j].k, L[j].dev)) continue;
    if ((s = rt_enter(rt, L[j].dev, &ctx->err))) break;
    s = jit_load(ctx, L[j].k, L[j].dev, &ms);
    res->load_ms += ms;
    rt_leave(rt);
  }
  return s;
}

/* Step 5a: the context's streams and events: slice 0 runs on the root's stream 0 (events 0 / 1
 * around the operation, jit_tr_begin / jit_tr_end); a non-empty slice i > 0 has stream 0 and
 * event 2 of its GPU (on one GPU: stream i, event 2 + i). */
static rj_status open_streams(rj_ctx *ctx, rt_cuda *rt, const cut *c, int G, slice_stream *ss) {
  rj_status s = RJ_OK;
  for (int i = 0; !s && i < c->n; i++) {
    if (i && c->len[i] == 0) continue;
    ss[i].stream = jit_dev_kept(ctx, ss[i].dev, true, G >= 2 ? 0 : i);
    ss[i].done = i ? jit_dev_kept(ctx, ss[i].dev, false, G >= 2 ? 2 : 2 + i) : NULL;
    if (ss[i].stream && (!i || ss[i].done)) continue; /* kept: no context to enter */
    if ((s = rt_enter(rt, ss[i].dev, &ctx->err))) break;
    s = jit_dev_stream(ctx, rt, ss[i].dev, G >= 2 ? 0 : i, &ss[i].stream);
    if (!s && i) s = jit_dev_event(ctx, rt, ss[i].dev, G >= 2 ? 2 : 2 + i, &ss[i].done);
    rt_leave(rt);
  }
  return s;
}

/* Step 5b: the root's stream starts (jit_tr_begin: after the caller's stream, ev[0]); every other
 * non-empty slice's stream waits for it, runs its kernels and records done; the root runs slice 0
 * (if any), waits for every done, and ends (jit_tr_end). */
static rj_status run_slices(rj_ctx *ctx, rt_cuda *rt, const cut *c, int root_dev, jit_tr_launch *L,
                            int nl, slice_stream *ss, const jit_tr_call *call,
                            rj_treduce_result *res) {
  ir_err *e = &ctx->err;
  void *ev[2] = {NULL, NULL};
  rj_status s = rt_enter(rt, root_dev, e);
  if (!s) {
    s = jit_tr_begin(ctx, rt, root_dev, ss[0].stream, call, true, ev);
    rt_leave(rt);
  }
  for (int i = 1; !s && i < c->n; i++) {
    if (!ss[i].stream) continue;
    if ((s = rt_enter(rt, ss[i].dev, e))) break;
    s = rt_stream_wait(rt, ss[i].stream, ev[0], e);
    if (!s) s = enqueue(ctx, L, nl, i, &ss[i], res);
    if (!s) s = rt_event_record(rt, ss[i].done, ss[i].stream, e);
    rt_leave(rt);
  }
  if (!s && !(s = rt_enter(rt, root_dev, e))) {
    s = enqueue(ctx, L, nl, 0, &ss[0], res);
    for (int i = 1; !s && i < c->n; i++)
      if (ss[i].stream) s = rt_stream_wait(rt, ss[0].stream, ss[i].done, e);
    if (!s) s = jit_tr_end(ctx, rt, ss[0].stream, call, ev, &res->ms);
    rt_leave(rt);
  }
  return s;
}

rj_status jit_treduce_split(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                            const int *dev, uint64_t dst, rj_treduce_path path, bool forced,
                            const rj_options *opt, const jit_tr_call *call, rj_treduce_result *res,
                            bool *declined) {
  const rj_treduce *t = &req->u.treduce;
  int N = t->ranks, root_dev = dev[t->root], G;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  plan p;
  rj_status s = plan_gpus(ctx, rt, req, dev, path, forced, call, &p, &G, declined);
  if (s || *declined) return s;
  const cut *c = &p.c;
  describe_split(t, dev, &g, c, G, res);
  int per = (N + JIT_TR_PER_KERNEL - 1) / JIT_TR_PER_KERNEL, nl = 0;
  /* the context's scratch, kept between calls: the tables, the launches, the streams */
  size_t nt = sizeof(uint64_t) * (size_t)N * (size_t)c->n,
         nL = sizeof(jit_tr_launch) * (size_t)per * (size_t)c->n;
  char *mem = jit_tr_scratch(ctx, nt + nL + sizeof(slice_stream) * (size_t)c->n);
  if (!mem) return ctx->err.status;
  uint64_t *table = (uint64_t *)mem;
  jit_tr_launch *L = (jit_tr_launch *)(mem + nt);
  slice_stream *ss = (slice_stream *)(mem + nt + nL);
  memset(ss, 0, sizeof *ss * (size_t)c->n);
  if (!s) s = fold_slices(ctx, req, &g, &p, G, src, root_dev, dst, opt, table, L, &nl, ss, res);
  if (!s && g.numel) { /* g.numel == 0: nothing to move, the destination stays as it is */
    s = load_kernels(ctx, rt, L, nl, res);
    if (!s) s = open_streams(ctx, rt, c, G, ss);
    if (!s) s = run_slices(ctx, rt, c, root_dev, L, nl, ss, call, res);
    /* a failed call drains every stream before returning (a waiting call that succeeded has
     * waited for the end, which comes after every slice's done) */
    for (int i = c->n - 1; s && i >= 0; i--) /* the others, then the root's */
      if (ss[i].stream) s = jit_tr_drain(rt, ss[i].dev, ss[i].stream, s, &ctx->err);
  }
  return s;
}
