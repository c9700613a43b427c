/* The ring path of rj_treduce (issue 5): a chain through the ranks' GPUs in fold order.
 *
 * The split path (treduce_split.c) has every GPU read slices of every other GPU's sources: each
 * GPU's link carries traffic to and from all the others at once, and on 4 x H200 that all-to-all
 * pattern moves about 250-320 GB/s per GPU where a chain of point-to-point copies moves 384 (the
 * copy engines, pushing: bench/push_probe.py, docs/TREDUCE.md).  NCCL's reduce is such a ring.
 * Here the fold order (the root first, then i < root ? i : i+1: the peer path's) is cut into
 * hops, the maximal runs of consecutive ranks on one GPU (on one GPU, up to RING_ONE_GPU runs).
 * For each chunk of the element range, hop h folds what hop h-1 sent it (the partial result of
 * every earlier rank) with its own ranks' sources, on its own GPU, into a buffer there, and that
 * GPU's copy engine pushes the result into the next hop's buffer on the next GPU (cuMemcpyPeerAsync
 * on a stream of the sending GPU); the last hop's result goes into the root's destination (its
 * kernel writes it directly when it runs on the root's GPU).  Hop 0 with only the root's rank,
 * no accum, has nothing to fold: its copy engine pushes the root's source itself.  Under accum
 * hop 0 folds the destination's old value first, as the peer kernel does.
 *
 * Every element is folded in the peer path's order, starting from the op's identity, and the
 * partial results are stored in the dtype: the bits are the peer path's wherever the
 * accumulator is the dtype, and for max / min of f16 / bf16 too (exact in f32 and back).  A sum
 * of f16 / bf16 accumulates in f32 on the peer path, so its partial sums would round at every
 * hop: the ring refuses it.  It also refuses strided views (the chunks are ranges of the
 * row-major element order, and the copies move them whole).
 *
 * The chunks ramp up from RING_MIN bytes, doubling, to RING_PEAK and down again at the end, so
 * that filling and draining the chain costs a few small chunks while the middle runs in large
 * ones (few driver calls per byte).  Each hop's buffers are double (chunk k uses buffer k % 2);
 * events order them: in[b] filled (the sender's `sent`) -> kernel; kernel done (`kdone`) -> its
 * copy out, and -> the sender may refill in[b] two chunks later; copy done (`sent`) -> the kernel
 * may rewrite out[b].  The root's stream 0 starts and ends the operation.  The call stays
 * synchronous. */
#include "treduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_MIN ((int64_t)256 << 10) /* bytes: the first and last chunks */
#define RING_PEAK ((int64_t)16 << 20) /* bytes: the largest chunks */
#define RING_TILE 2048                /* a chunk kernel's tile: [1, 2048] of its 1-D range */
#define RING_ONE_GPU 3                /* hops when every rank is on one GPU (forced) */
#define RING_HOPS_PER_DEV 4           /* hops one GPU may hold (streams and events per hop) */
#define RING_MAX_HOPS (RING_HOPS_PER_DEV * RJ_TREDUCE_MAX_SLICES)
/* Hop j of a GPU uses the context's streams 2j (kernels) and 2j+1 (copies) and events 2+4j+b
 * (kdone[b]) and 4+4j+b (sent[b]) there; the root's events 0 and 1 time the operation. */
_Static_assert(2 * RING_HOPS_PER_DEV <= JIT_DEV_STREAMS &&
                   2 + 4 * RING_HOPS_PER_DEV <= JIT_DEV_EVENTS,
               "the context keeps too few streams / events per device for RING_HOPS_PER_DEV");

typedef struct hop {
  int dev;      /* its GPU */
  int first, n; /* its ranks: fold positions [first, first + n) (position 0 is the root's rank) */
  int j;        /* its index among its GPU's hops */
  bool in;      /* receives the previous hop's result (every hop but 0) */
  bool kernel;  /* folds (not: hop 0 with only the root's rank and no accum, a plain copy) */
  bool sends;   /* its result is copied on (not: a last hop whose kernel writes the destination) */
  bool out;     /* a kernel result that is copied on lives in its out buffers */
  int nsrc;     /* kernel sources: in, or the destination's old values (hop 0 under accum), and
                   its ranks */
} hop;

typedef struct ring {
  int H, G, rdev;
  hop h[RING_MAX_HOPS];
  int64_t numel;
  int bytes;
  double load; /* the busiest GPU's link traffic in B, one way */
} ring;

static int rank_at(const rj_treduce *t, int pos) {
  return pos == 0 ? t->root : (pos - 1 < t->root ? pos - 1 : pos);
}

/* Row-major and gap-free for the shape (dims of extent 1 may have any stride). */
static bool dense(const ir_treduce_geom *g, const int64_t *st) {
  int64_t m = 1;
  for (int d = 4; d >= 0; d--) {
    if (g->shape[d] > 1 && st[d] != m) return false;
    m *= g->shape[d];
  }
  return true;
}

/* The chain for a request with rank r on GPU dev[r]; false (and why) when the ring can't run it. */
static bool make_ring(const rj_request *req, const int *dev, ring *rg, char *why, size_t nwhy) {
  const rj_treduce *t = &req->u.treduce;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  memset(rg, 0, sizeof *rg);
  why[0] = 0;
  rg->numel = g.numel;
  rg->bytes = ir_dtype(t->dtype)->bytes;
  rg->rdev = dev[t->root];
  if (t->op == RJ_OP_SUM && (t->dtype == RJ_F16 || t->dtype == RJ_BF16)) {
    snprintf(why, nwhy,
             "a sum of %s would round its partial sums at every hop (the peer path rounds once)",
             ir_dtype(t->dtype)->name);
    return false;
  }
  if (g.numel && (!dense(&g, g.src_st) || !dense(&g, g.dst_st))) {
    snprintf(why, nwhy, "the %s is a strided view (the ring moves dense row-major buffers)",
             dense(&g, g.src_st) ? "destination" : "sources");
    return false;
  }
  int gpus[RJ_TREDUCE_MAX_SLICES], G = 0;
  for (int r = 0; r < t->ranks; r++) {
    int i = 0;
    while (i < G && gpus[i] != dev[r])
      i++;
    if (i == G) {
      if (G == RJ_TREDUCE_MAX_SLICES) {
        snprintf(why, nwhy, "the ranks live on more than %d GPUs", RJ_TREDUCE_MAX_SLICES);
        return false;
      }
      gpus[G++] = dev[r];
    }
  }
  rg->G = G;
  int per = G == 1 ? (t->ranks + RING_ONE_GPU - 1) / RING_ONE_GPU : 0;
  for (int pos = 0; pos < t->ranks; pos++) {
    int d = dev[rank_at(t, pos)];
    bool fresh = G == 1 ? pos % per == 0 : pos == 0 || rg->h[rg->H - 1].dev != d;
    if (fresh) {
      int j = 0;
      for (int k = 0; k < rg->H; k++)
        j += rg->h[k].dev == d;
      if (j == RING_HOPS_PER_DEV) {
        snprintf(why, nwhy,
                 "GPU %d holds more than %d runs of consecutive ranks in fold order (the root, "
                 "then i < root ? i : i+1)",
                 d, RING_HOPS_PER_DEV);
        return false;
      }
      rg->h[rg->H++] = (hop){.dev = d, .first = pos, .j = j};
    }
    rg->h[rg->H - 1].n++;
  }
  int in[RJ_TREDUCE_MAX_SLICES] = {0}, out[RJ_TREDUCE_MAX_SLICES] = {0};
  for (int k = 0; k < rg->H; k++) {
    hop *h = &rg->h[k];
    bool last = k == rg->H - 1;
    h->in = k > 0;
    h->kernel = k > 0 || h->n > 1 || t->accum;
    h->sends = !last || !h->kernel || h->dev != rg->rdev;
    h->out = h->kernel && h->sends;
    h->nsrc = h->n + (h->in || (k == 0 && t->accum && !last));
    int to = last ? rg->rdev : rg->h[k + 1].dev, gi = 0, gt = 0;
    while (gpus[gi] != h->dev)
      gi++;
    while (gpus[gt] != to)
      gt++;
    if (to != h->dev) {
      out[gi]++;
      in[gt]++;
    }
  }
  for (int i = 0; i < G; i++)
    rg->load = rg->load > in[i] ? rg->load : in[i] > out[i] ? in[i] : out[i];
  return true;
}

/* The chunk lengths (elements) of n elements: RING_MIN bytes doubling up to a peak (RING_PEAK,
 * or lower so that both ramps fit), peak-sized chunks with the remainder among them, and the
 * ramp down.  Writes them to len (NULL: only counts); returns the count. */
static int64_t chunks(int64_t n, int bytes, int64_t *len) {
  int64_t lo = RING_MIN / bytes, hi = RING_PEAK / bytes, ramp[32], s = 0, c = lo, k = 0;
  int nr = 0;
  if (n <= 0) return 0;
  while (c < hi && 2 * (s + c) + 2 * c <= n) { /* room for this level twice and a peak after it */
    ramp[nr++] = c;
    s += c;
    c *= 2;
  }
  int64_t peak = nr ? 2 * ramp[nr - 1] : n < hi ? n : hi, mid = n - 2 * s;
  for (int i = 0; i < nr; i++, k++)
    if (len) len[k] = ramp[i];
  if (mid % peak) {
    if (len) len[k] = mid % peak;
    k++;
  }
  for (int64_t i = 0; i < mid / peak; i++, k++)
    if (len) len[k] = peak;
  for (int i = nr - 1; i >= 0; i--, k++)
    if (len) len[k] = ramp[i];
  return k;
}

double jit_treduce_ring_facts(const rj_request *req, const int *dev, int *hops, int64_t *nchunks,
                              char *why, size_t nwhy) {
  ring *rg = malloc(sizeof *rg);
  if (!rg) {
    snprintf(why, nwhy, "out of memory");
    return -1;
  }
  bool ok = make_ring(req, dev, rg, why, nwhy);
  double load = ok ? rg->load : -1;
  *hops = ok ? rg->H : 0;
  *nchunks = ok ? chunks(rg->numel, rg->bytes, NULL) : 0;
  free(rg);
  return load;
}

/* Waits for every hop's streams, each in its context; keeps the first error unless s has one. */
static rj_status drain(rj_ctx *ctx, rt_cuda *rt, const ring *rg, rj_status s) {
  for (int k = rg->H - 1; k >= 0; k--)
    for (int i = 0; i < 2; i++) {
      ir_err ignored = {0};
      void *st = NULL;
      rj_status se = rt_enter(rt, rg->h[k].dev, s ? &ignored : &ctx->err);
      if (!se) {
        se = jit_dev_stream(ctx, rt, rg->h[k].dev, 2 * rg->h[k].j + i, &st);
        if (!se) se = rt_stream_sync(rt, st, s ? &ignored : &ctx->err);
        rt_leave(rt);
      }
      if (!s) s = se;
    }
  return s;
}

/* What a hop works with during the call. */
typedef struct lane {
  void *ks, *cs, *kdone[2], *sent[2];
  uint64_t in[2], out[2];
  jit_tr_launch *L; /* its kernels: per[u] launches for each distinct chunk length u */
} lane;

rj_status jit_treduce_ring(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                           const int *dev, uint64_t dst, const rj_options *opt,
                           rj_treduce_result *res) {
  ir_err *e = &ctx->err;
  const rj_treduce *t = &req->u.treduce;
  char why[128];
  ring *rg = malloc(sizeof *rg);
  if (!rg) return ir_fail(e, RJ_ENOMEM, "out of memory");
  if (!make_ring(req, dev, rg, why, sizeof why)) {
    free(rg);
    return ir_fail(e, RJ_EUNSUPPORTED, "path: ring, but %s", why);
  }
  int H = rg->H, B = rg->bytes;
  /* 1. peer access from each sending GPU to the next where cuDeviceCanAccessPeer allows (the copy
   * engines then push over NVLink); where it doesn't, cuMemcpyPeerAsync goes through the host */
  rj_status s = RJ_OK;
  for (int k = 0; !s && k < H; k++) {
    int a = rg->h[k].dev, b = k + 1 < H ? rg->h[k + 1].dev : rg->rdev, can = 0;
    if (a == b) continue;
    if ((s = rt_peer_can_access(rt, a, b, &can, e))) break;
    if (can && !(s = rt_enter(rt, a, e))) {
      s = rt_peer_enable(rt, b, e);
      rt_leave(rt);
    }
  }
  snprintf(res->path, sizeof res->path, "ring");
  res->direct_ranks = t->ranks;
  res->gpus = rg->G;
  res->hops = H;
  res->root_share = rg->numel && !rg->h[H - 1].sends && rg->h[H - 1].dev == rg->rdev ? 1 : 0;
  int64_t nc = chunks(rg->numel, B, NULL);
  res->slices = (int)nc;
  if (s || nc == 0) { /* nothing to move: the destination stays as it is */
    free(rg);
    return s;
  }
  /* 2. the chunks and their distinct lengths (at most a ramp, the peak and a remainder) */
  int64_t *len = malloc(sizeof(int64_t) * (size_t)nc), ul[40], maxlen = 0;
  int *li = malloc(sizeof(int) * (size_t)nc), nu = 0;
  lane *ln = calloc((size_t)H, sizeof *ln);
  int per = 0; /* launches per hop and length: ceil(nsrc / 128) of the hop with most sources */
  for (int k = 0; k < H; k++) {
    int p = (rg->h[k].nsrc + JIT_TR_PER_KERNEL - 1) / JIT_TR_PER_KERNEL;
    per = p > per ? p : per;
  }
  uint64_t *table = malloc(sizeof(uint64_t) * (size_t)(t->ranks + 1));
  if (!len || !li || !ln || !table) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  if (!s) chunks(rg->numel, B, len);
  for (int64_t c = 0; !s && c < nc; c++) {
    int u = 0;
    while (u < nu && ul[u] != len[c])
      u++;
    if (u == nu) ul[nu++] = len[c];
    li[c] = u;
    maxlen = len[c] > maxlen ? len[c] : maxlen;
  }
  /* 3. each folding hop's kernels for each length: a 1-D treduce of its sources */
  int *nl = calloc((size_t)H * (size_t)nu, sizeof(int));
  if (!s && !nl) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  for (int k = 0; !s && k < H; k++) {
    hop *h = &rg->h[k];
    if (!h->kernel) continue;
    if (!(ln[k].L = calloc((size_t)nu * (size_t)per, sizeof(jit_tr_launch)))) {
      s = ir_fail(e, RJ_ENOMEM, "out of memory");
      break;
    }
    for (int u = 0; !s && u < nu; u++) {
      rj_request sub;
      rj_request_init(&sub, RJ_KIND_TREDUCE);
      rj_treduce *st = &sub.u.treduce;
      st->op = t->op;
      st->dtype = t->dtype;
      st->nan = t->nan;
      st->ranks = h->nsrc;
      st->ndim = 1;
      st->shape[0] = ul[u];
      st->tile[0] = 1;
      st->tile[1] = RING_TILE;
      st->pingpong = t->pingpong;
      st->accum = k == 0 && t->accum && !h->sends && !h->in; /* writes dst, folding its old value */
      int n = 0;
      s = jit_treduce_fold(ctx, &sub, table, h->nsrc, h->dev, 0, 0, opt, ln[k].L + u * per, &n,
                           res);
      nl[k * nu + u] = n;
    }
    for (int q = 0; !s && q < nu * per; q++) {
      jit_tr_launch *l = &ln[k].L[q];
      if (!l->k) continue;
      double ms = 0;
      if ((s = rt_enter(rt, h->dev, e))) break;
      s = jit_load(ctx, l->k, h->dev, &ms);
      l->fn = l->k->function;
      res->load_ms += ms;
      rt_leave(rt);
    }
  }
  /* 4. each GPU's buffers (one region: its hops' in[2] and out[2]), streams and events */
  bool temporary[RJ_TREDUCE_MAX_SLICES] = {false};
  uint64_t region[RJ_TREDUCE_MAX_SLICES] = {0};
  int gdev[RJ_TREDUCE_MAX_SLICES], G = 0;
  size_t cb = (size_t)maxlen * (size_t)B; /* one chunk buffer */
  cb = (cb + 255) / 256 * 256;
  for (int k = 0; !s && k < H; k++) {
    int gi = 0;
    while (gi < G && gdev[gi] != rg->h[k].dev)
      gi++;
    if (gi < G) continue;
    gdev[G++] = rg->h[k].dev;
    size_t need = 0;
    for (int q = 0; q < H; q++)
      if (rg->h[q].dev == gdev[gi]) need += (size_t)2 * (rg->h[q].in + rg->h[q].out) * cb;
    if ((s = rt_enter(rt, gdev[gi], e))) break;
    if (need) s = jit_dev_stage(ctx, rt, gdev[gi], 2, need, &region[gi], &temporary[gi]);
    size_t at = 0;
    for (int q = 0; !s && q < H; q++) {
      hop *h = &rg->h[q];
      lane *l = &ln[q];
      if (h->dev != gdev[gi]) continue;
      for (int b = 0; b < 2; b++) {
        if (h->in) l->in[b] = region[gi] + at, at += cb;
        if (h->out) l->out[b] = region[gi] + at, at += cb;
      }
      s = jit_dev_stream(ctx, rt, h->dev, 2 * h->j, &l->ks);
      if (!s) s = jit_dev_stream(ctx, rt, h->dev, 2 * h->j + 1, &l->cs);
      for (int b = 0; !s && b < 2; b++) {
        s = jit_dev_event(ctx, rt, h->dev, 2 + 4 * h->j + b, &l->kdone[b]);
        if (!s) s = jit_dev_event(ctx, rt, h->dev, 4 + 4 * h->j + b, &l->sent[b]);
      }
    }
    rt_leave(rt);
  }
  /* 5. enqueue: the root's stream 0 (hop 0's kernel stream) starts; every stream waits for it */
  void *ev[2] = {NULL, NULL};
  if (!s && !(s = rt_enter(rt, rg->rdev, e))) {
    s = jit_dev_event(ctx, rt, rg->rdev, 0, &ev[0]);
    if (!s) s = jit_dev_event(ctx, rt, rg->rdev, 1, &ev[1]);
    if (!s) s = rt_event_record(rt, ev[0], ln[0].ks, e);
    rt_leave(rt);
  }
  for (int k = 0; !s && k < H; k++) {
    if ((s = rt_enter(rt, rg->h[k].dev, e))) break;
    if (k) s = rt_stream_wait(rt, ln[k].ks, ev[0], e);
    if (!s) s = rt_stream_wait(rt, ln[k].cs, ev[0], e);
    rt_leave(rt);
  }
  int64_t start = 0;
  for (int64_t c = 0; !s && c < nc; start += len[c], c++) {
    int b = (int)(c & 1);
    uint64_t off = (uint64_t)start * (uint64_t)B;
    for (int k = 0; !s && k < H; k++) {
      hop *h = &rg->h[k];
      lane *l = &ln[k];
      bool last = k == H - 1;
      uint64_t result = src[rank_at(t, h->first)] + off; /* hop 0 without a kernel */
      if ((s = rt_enter(rt, h->dev, e))) break;
      if (h->kernel) {
        int n = 0;
        if (h->in)
          table[n++] = l->in[b];
        else if (h->nsrc > h->n)
          table[n++] = dst + off; /* accum: the old value first */
        for (int i = 0; i < h->n; i++)
          table[n++] = src[rank_at(t, h->first + i)] + off;
        result = h->out ? l->out[b] : dst + off;
        if (h->in) s = rt_stream_wait(rt, l->ks, ln[k - 1].sent[b], e); /* in[b] is filled */
        if (!s && h->out && c >= 2) s = rt_stream_wait(rt, l->ks, l->sent[b], e); /* out[b] free */
        const jit_tr_launch *L = l->L + li[c] * per;
        for (int q = 0; !s && q < nl[k * nu + li[c]]; q++) { /* its sources: table + 128 q */
          jit_tr_launch one = L[q];
          one.dst = result;
          s = jit_treduce_launch(ctx, rt, &one, l->ks, res);
        }
        if (!s) s = rt_event_record(rt, l->kdone[b], l->ks, e);
      }
      if (!s && h->sends) {
        if (h->kernel) s = rt_stream_wait(rt, l->cs, l->kdone[b], e);
        if (!s && !last && c >= 2) /* the next hop has folded in[b]'s chunk c - 2 */
          s = rt_stream_wait(rt, l->cs, ln[k + 1].kdone[b], e);
        uint64_t to = last ? dst + off : ln[k + 1].in[b];
        int to_dev = last ? rg->rdev : rg->h[k + 1].dev;
        if (!s)
          s = rt_copy_peer_async(rt, to, to_dev, result, h->dev, (size_t)len[c] * B, l->cs, e);
        if (!s) s = rt_event_record(rt, l->sent[b], l->cs, e);
      }
      rt_leave(rt);
    }
  }
  /* 6. the root's stream waits for the last chunk's last step (every other step is before it) */
  if (!s && !(s = rt_enter(rt, rg->rdev, e))) {
    int b = (int)((nc - 1) & 1);
    const hop *h = &rg->h[H - 1];
    s = rt_stream_wait(rt, ln[0].ks, h->sends ? ln[H - 1].sent[b] : ln[H - 1].kdone[b], e);
    if (!s) s = rt_event_record(rt, ev[1], ln[0].ks, e);
    if (!s) s = rt_event_ms(rt, ev[0], ev[1], &res->ms, e);
    rt_leave(rt);
  }
  s = drain(ctx, rt, rg, s);
  for (int gi = 0; gi < G; gi++)
    if (temporary[gi] && rt_enter(rt, gdev[gi], &(ir_err){0}) == RJ_OK) {
      rt_free(rt, region[gi]);
      rt_leave(rt);
    }
  for (int k = 0; ln && k < H; k++)
    free(ln[k].L);
  free(ln);
  free(nl);
  free(len);
  free(li);
  free(table);
  free(rg);
  return s;
}
