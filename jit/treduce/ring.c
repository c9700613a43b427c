/* The ring path of rj_treduce (issue 5): a chain through the ranks' GPUs in fold order, one
 * persistent kernel per hop, handing steps on through flags in memory.
 *
 * The split path (treduce_split.c) has every GPU read slices of every other GPU's sources: each
 * GPU's link carries traffic to and from all the others at once, and on 4 x H200 that all-to-all
 * pattern moves about 250-320 GB/s per GPU where a chain of point-to-point transfers moves 346-384
 * (bench/push_probe.py, docs/TREDUCE.md).  NCCL's reduce is such a ring.  Here the fold order (the
 * root first, then i < root ? i : i+1: the peer path's) is cut into hops, the maximal runs of
 * consecutive ranks on one GPU, at most RING_HOP_RANKS each (all ranks on one GPU: at least
 * RING_ONE_GPU hops, or one per rank when there are fewer).  Every hop runs passes/treduce_ring.c's
 * kernel once, B blocks on its GPU: block b folds steps b, b + B, ... (RING_STEP_BYTES each) of
 * what hop h-1 stored into its inbox with its own ranks' sources, and stores the result straight
 * into hop h+1's inbox over NVLink (the last hop: into the root's destination).  Counters in each
 * GPU's memory say which slots are full (ready, written by the sender) and free (credit, written by
 * the receiver); a call's counters start at base, which every call raises past all it publishes (by
 * its steps + 1: 2^64 steps of 128 KiB never come), so nothing is reset between calls.  Under
 * accum, hop 0 (on the root's GPU) folds the destination's old value first, as the peer kernel
 * does.
 *
 * The first version (session 4) pushed each hop's result with the copy engine, a kernel and a
 * copy per chunk, ordered by cross-GPU events: the host's calls and the events' latency left it
 * at 0.82 x NCCL on 4 GPUs.  A kernel per hop for the whole call has no host call per step.
 *
 * Every element is folded in the peer path's order, starting from the op's identity, and the
 * partial results are stored in the dtype: the bits are the peer path's wherever the
 * accumulator is the dtype, and for max / min of f16 / bf16 too (exact in f32 and back).  A sum
 * of f16 / bf16 accumulates in f32 on the peer path, so its partial sums would round at every
 * hop: the ring refuses it.  It also refuses strided views (steps are ranges of the row-major
 * element order) and GPU pairs without peer access (its kernels store into the next GPU).
 *
 * The kernels of one call must all run at once: B is at most the SMs of a GPU divided by the
 * hops on it, so they fit beside each other, and a wait gives up after the group's
 * ring_timeout_ms (RING_TIMEOUT_NS): the call then fails with RJ_ETIMEOUT instead of hanging.
 * A block that gives up stores base + 1 into the root GPU's status word, a page-locked host word
 * (jit_dev_status): a waiting call reads it after its kernels end; an async call returns once
 * enqueued, and its failure is found later, without a wait, by jit_treduce_ring_deferred (from
 * rj_treduce_sync or the next rj_treduce_run).  A GPU's inboxes are always kept (slot 2 of
 * jit_dev_keep): B x RING_NB steps per receiving hop, B at most its SMs over its hops, so at
 * most 512 KiB per SM (66 MiB on 132 SMs).  Stream-ordered memory could not serve an async call:
 * a device's default pool is closed to its peers, whose kernels store into the inboxes. */
#include "treduce.h"

#include "../../passes/variants/treduce_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_ONE_GPU 3      /* hops when every rank is on one GPU (at least) */
#define RING_HOP_RANKS 127  /* ranks one hop folds (its kernel: 128 sources) */
#define RING_HOPS_PER_DEV 8 /* hops one GPU may hold (a stream and an event each) */
#define RING_MAX_HOPS (RING_HOPS_PER_DEV * RJ_TREDUCE_MAX_SLICES)
#define RING_TIMEOUT_NS 10000000000LL /* a hop's wait for its neighbour, then RJ_ETIMEOUT */
/* Hop j of a GPU uses the context's stream j and event 2 + j there, and flags
 * j * RING_FLAG_BYTES of its counter region; the root's events 0 and 1 time the operation. */
_Static_assert(RING_HOPS_PER_DEV <= JIT_DEV_STREAMS && 2 + RING_HOPS_PER_DEV <= JIT_DEV_EVENTS &&
                   RING_HOPS_PER_DEV * RING_FLAG_BYTES <= JIT_DEV_FLAG_BYTES,
               "the context keeps too few streams / events / counters per device for the ring");

typedef struct hop {
  int dev;      /* its GPU */
  int first, n; /* its ranks: fold positions [first, first + n) (position 0 is the root's rank) */
  int j;        /* its index among its GPU's hops */
  int nsrc;     /* kernel sources: its ranks, and the destination's old values (hop 0, accum) */
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
  /* on one GPU: RING_ONE_GPU hops at least, ranks permitting */
  int nh = (t->ranks + RING_HOP_RANKS - 1) / RING_HOP_RANKS;
  nh = nh > RING_ONE_GPU ? nh : RING_ONE_GPU;
  int per = G == 1 ? (t->ranks + nh - 1) / nh : RING_HOP_RANKS;
  for (int pos = 0; pos < t->ranks; pos++) {
    int d = dev[rank_at(t, pos)];
    bool fresh = pos == 0 || rg->h[rg->H - 1].dev != d || rg->h[rg->H - 1].n == per;
    if (fresh) {
      int j = 0;
      for (int k = 0; k < rg->H; k++)
        j += rg->h[k].dev == d;
      if (j == RING_HOPS_PER_DEV) {
        snprintf(why, nwhy,
                 "GPU %d holds more than %d runs of consecutive ranks in fold order (the root, "
                 "then i < root ? i : i+1; %d ranks at most per run)",
                 d, RING_HOPS_PER_DEV, RING_HOP_RANKS);
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
    h->nsrc = h->n + (k == 0 && t->accum);
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

/* The status words of a root GPU: how many calls gave up, then the last one's base + 1 (the
 * kernel stores the second before it counts, with release: acquire loads see it). */
static uint64_t gave_up(const jit_devres *d, uint64_t *last) {
  uint64_t n = __atomic_load_n(&d->status[1], __ATOMIC_ACQUIRE);
  *last = __atomic_load_n(&d->status[0], __ATOMIC_ACQUIRE);
  return n;
}

rj_status jit_treduce_ring_deferred(rj_ctx *ctx, const char *after) {
  uint64_t calls = 0;
  char on[280] = "";
  int ngpu = 0;
  for (jit_devres *d = ctx->devres; d; d = d->next) { /* every root GPU's, in one report */
    uint64_t l = 0, n = d->status ? gave_up(d, &l) : 0;
    if (n <= d->reported) continue;
    calls += n - d->reported;
    d->reported = n;
    size_t at = strlen(on);
    snprintf(on + at, sizeof on - at, "%s%d", ngpu++ ? ", " : "", d->dev);
  }
  if (!calls) return RJ_OK;
  return ir_fail(&ctx->err, RJ_ETIMEOUT,
                 "%llu earlier asynchronous ring call%s gave up (rooted on GPU%s %s): a hop's "
                 "kernel waited longer than ring_timeout_ms for its neighbour's, and such a "
                 "call's destination is incomplete%s",
                 (unsigned long long)calls, calls > 1 ? "s" : "", ngpu > 1 ? "s" : "", on, after);
}

static int64_t steps(const ring *rg) {
  int64_t step = RING_STEP_BYTES / rg->bytes;
  return (rg->numel + step - 1) / step;
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
  *nchunks = ok ? steps(rg) : 0;
  free(rg);
  return load;
}

/* What a hop works with during the call. */
typedef struct lane {
  void *stream, *done;
  uint64_t inbox, flags; /* inbox: 0 on hop 0 */
  jit_tr_launch L;
} lane;

/* Peer access from GPU a to GPU b (a's kernels store into b's memory); RJ_EUNSUPPORTED naming
 * the pair where the driver has none. */
static rj_status reach(rt_cuda *rt, int a, int b, ir_err *e) {
  int can = 0;
  if (a == b) return RJ_OK;
  rj_status s = rt_peer_can_access(rt, a, b, &can, e);
  if (s) return s;
  if (!can)
    return ir_fail(e, RJ_EUNSUPPORTED,
                   "path: ring, but GPU %d cannot access GPU %d (cuDeviceCanAccessPeer): the "
                   "ring's kernels store into the next hop's GPU",
                   a, b);
  if ((s = rt_enter(rt, a, e))) return s;
  s = rt_peer_enable(rt, b, e);
  rt_leave(rt);
  return s;
}

rj_status jit_treduce_ring(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                           const int *dev, uint64_t dst, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res) {
  ir_err *e = &ctx->err;
  const rj_treduce *t = &req->u.treduce;
  char why[128];
  ring *rg = malloc(sizeof *rg);
  lane *ln = rg ? calloc(RING_MAX_HOPS, sizeof *ln) : NULL;
  if (!ln) {
    free(rg);
    return ir_fail(e, RJ_ENOMEM, "out of memory");
  }
  rj_status s = RJ_OK;
  if (!make_ring(req, dev, rg, why, sizeof why)) {
    free(ln);
    free(rg);
    return ir_fail(e, RJ_EUNSUPPORTED, "path: ring, but %s", why);
  }
  int H = rg->H;
  /* 1. peer access: each hop's GPU stores into the next hop's (its inbox and ready counters),
   * the previous hop's (credit counters) and the root's (the destination, the status word) */
  for (int k = 0; !s && k < H; k++) {
    int a = rg->h[k].dev;
    s = reach(rt, a, k + 1 < H ? rg->h[k + 1].dev : rg->rdev, e);
    if (!s && k) s = reach(rt, a, rg->h[k - 1].dev, e);
    if (!s) s = reach(rt, a, rg->rdev, e);
  }
  snprintf(res->path, sizeof res->path, "ring");
  res->direct_ranks = t->ranks;
  res->gpus = rg->G;
  res->hops = H;
  res->root_share = rg->numel && rg->h[H - 1].dev == rg->rdev ? 1 : 0;
  int64_t nst = steps(rg);
  res->slices = (int)nst;
  if (s || nst == 0) { /* nothing to move: the destination stays as it is */
    free(ln);
    free(rg);
    return s;
  }
  /* 2. B blocks per hop, the same on every hop: at most the SMs of a GPU over its hops, so that
   * a call's kernels all fit on their GPUs at once */
  int64_t B = nst < RING_MAXB ? nst : RING_MAXB;
  for (int k = 0; !s && k < H; k++) {
    int sms = 0, on = 0;
    for (int q = 0; q < H; q++)
      on += rg->h[q].dev == rg->h[k].dev;
    s = rt_device_sms(rt, rg->h[k].dev, &sms, e);
    if (!s && sms / on < B) B = sms / on > 0 ? sms / on : 1;
  }
  /* 3. each hop's kernel: its sources' count decides it (one per dtype, op, nan and count) */
  uint64_t *table = malloc(sizeof(uint64_t) * (size_t)(t->ranks + H));
  if (!s && !table) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  for (int k = 0, at = 0; !s && k < H; k++) {
    hop *h = &rg->h[k];
    rj_request sub;
    rj_request_init(&sub, RJ_KIND_TREDUCE);
    snprintf(sub.variant, sizeof sub.variant, "treduce_ring");
    rj_treduce *st = &sub.u.treduce;
    st->op = t->op;
    st->dtype = t->dtype;
    st->nan = t->nan;
    st->ranks = h->nsrc;
    st->ndim = 1;
    st->shape[0] = 1; /* the element count is a parameter: one kernel serves every size */
    uint64_t *mine = table + at, any = dst;
    int n = 0;
    if (h->nsrc > h->n) mine[n++] = dst; /* accum: the old value first */
    for (int i = 0; i < h->n; i++)
      mine[n++] = src[rank_at(t, h->first + i)];
    for (int i = 0; i < n; i++)
      any |= mine[i];
    st->tile[0] = 1; /* tile[1]: elements per access, 16 bytes where every pointer allows */
    st->tile[1] = any % 16 ? 1 : 16 / rg->bytes;
    at += n;
    jit_tr_launch *l = &ln[k].L;
    l->n = n;
    l->src = mine;
    l->dev = h->dev;
    s = jit_treduce_kernel(ctx, &sub, opt, h->dev, &l->k, res);
    double ms = 0;
    if (!s && !(s = rt_enter(rt, h->dev, e))) {
      s = jit_load(ctx, l->k, h->dev, &ms);
      l->fn = l->k->function;
      res->load_ms += ms;
      /* a hop kernel that uses local memory (ptxas may spill a few bytes) must not find the
       * stack limit below it: a launch that grew it would wait for the device to idle, behind
       * this call's other hops, which wait for it */
      if (!s) s = rt_fit_stack(rt, l->fn, e);
      rt_leave(rt);
    }
  }
  /* 4. each GPU's inboxes (one region: B x RING_NB steps per receiving hop), counters,
   * streams and events */
  uint64_t region[RJ_TREDUCE_MAX_SLICES] = {0};
  int gdev[RJ_TREDUCE_MAX_SLICES], G = 0;
  size_t ib = (size_t)B * RING_NB * (size_t)RING_STEP_BYTES; /* one inbox */
  for (int k = 0; !s && k < H; k++) {
    int gi = 0;
    while (gi < G && gdev[gi] != rg->h[k].dev)
      gi++;
    if (gi < G) continue;
    gdev[G++] = rg->h[k].dev;
    size_t need = 0;
    for (int q = 1; q < H; q++)
      need += rg->h[q].dev == gdev[gi] ? ib : 0;
    uint64_t flags = 0;
    if ((s = rt_enter(rt, gdev[gi], e))) break;
    if (need) s = jit_dev_keep(ctx, rt, gdev[gi], 2, need, &region[gi]);
    if (!s) s = jit_dev_flags(ctx, rt, gdev[gi], &flags);
    size_t at = 0;
    for (int q = 0; !s && q < H; q++) {
      hop *h = &rg->h[q];
      if (h->dev != gdev[gi]) continue;
      if (q) ln[q].inbox = region[gi] + at, at += ib;
      ln[q].flags = flags + (uint64_t)h->j * RING_FLAG_BYTES;
      s = jit_dev_stream(ctx, rt, h->dev, h->j, &ln[q].stream);
      if (!s) s = jit_dev_event(ctx, rt, h->dev, 2 + h->j, &ln[q].done);
    }
    rt_leave(rt);
  }
  jit_devres *rd = NULL; /* the root's status word */
  if (!s && !(s = rt_enter(rt, rg->rdev, e))) {
    s = jit_dev_status(ctx, rt, rg->rdev, &rd);
    rt_leave(rt);
  }
  /* 5. enqueue: the root's stream 0 (hop 0's) starts after the caller's; every hop's stream waits
   * for it, runs its kernel and marks it done; the root's stream waits for all of them */
  uint64_t base = ctx->ring_base, status = rd ? (uint64_t)(uintptr_t)rd->status : 0;
  ctx->ring_base += (uint64_t)nst + 1; /* above every counter this call publishes */
  int64_t timeout = call->ring_timeout_ns ? call->ring_timeout_ns : RING_TIMEOUT_NS;
  void *ev[2] = {NULL, NULL};
  /* the hops must all be able to start together: the streams they share with earlier calls of
   * this context (an async call waiting on its caller's stream, say) are drained of that work
   * first, by starting only after each one's backlog (its done event, recorded now) */
  for (int k = 1; !s && k < H; k++) {
    if (ln[k].stream == ln[0].stream || (s = rt_enter(rt, rg->h[k].dev, e))) continue;
    s = rt_event_record(rt, ln[k].done, ln[k].stream, e);
    rt_leave(rt);
    if (!s && !(s = rt_enter(rt, rg->rdev, e))) {
      s = rt_stream_wait(rt, ln[0].stream, ln[k].done, e);
      rt_leave(rt);
    }
  }
  /* and ring calls run one after the other: a call's hops (and, on GPUs this call does not use,
   * an earlier call's late senders) store into inboxes and counters the next call reuses at other
   * offsets, so the start waits for the previous ring call's end, wherever it was rooted */
  void *end = NULL, *prev = NULL;
  if (!s && !(s = rt_enter(rt, rg->rdev, e))) {
    s = jit_dev_event(ctx, rt, rg->rdev, JIT_EV_RING_END, &end);
    rt_leave(rt);
  }
  if (!s && ctx->ring_end_dev >= 0 && !(s = rt_enter(rt, ctx->ring_end_dev, e))) {
    s = jit_dev_event(ctx, rt, ctx->ring_end_dev, JIT_EV_RING_END, &prev);
    rt_leave(rt);
  }
  if (!s && !(s = rt_enter(rt, rg->rdev, e))) {
    if (prev) s = rt_stream_wait(rt, ln[0].stream, prev, e);
    if (!s) s = jit_tr_begin(ctx, rt, rg->rdev, ln[0].stream, call, ev);
    rt_leave(rt);
  }
  for (int k = 0; !s && k < H; k++) {
    lane *l = &ln[k];
    bool last = k == H - 1;
    uint64_t out = dst, in = l->inbox, next = last ? 0 : ln[k + 1].inbox;
    uint64_t flags = l->flags, next_ready = last ? 0 : ln[k + 1].flags;
    uint64_t prev_credit = k ? ln[k - 1].flags + RING_MAXB * 8 : 0;
    int64_t numel = rg->numel;
    void *args[RING_FIXED + JIT_TR_PER_KERNEL] = {
        &out, &in, &next, &flags, &next_ready, &prev_credit, &status, &numel, &base, &timeout};
    for (int i = 0; i < l->L.n; i++)
      args[RING_FIXED + i] = (void *)&l->L.src[i];
    unsigned grid[3] = {(unsigned)B, 1, 1};
    if ((s = rt_enter(rt, rg->h[k].dev, e))) break;
    if (l->stream != ln[0].stream) s = rt_stream_wait(rt, l->stream, ev[0], e);
    if (!s) s = rt_launch_async(rt, l->L.fn, grid, l->L.k->block, 0, args, l->stream, e);
    if (!s) res->launches++;
    if (!s) s = rt_event_record(rt, l->done, l->stream, e);
    rt_leave(rt);
  }
  if (!s && !(s = rt_enter(rt, rg->rdev, e))) {
    for (int k = 1; !s && k < H; k++)
      if (ln[k].stream != ln[0].stream) s = rt_stream_wait(rt, ln[0].stream, ln[k].done, e);
    if (!s) s = rt_event_record(rt, end, ln[0].stream, e);
    if (!s) ctx->ring_end_dev = rg->rdev;
    if (!s) s = jit_tr_end(ctx, rt, ln[0].stream, call, ev, &res->ms);
    rt_leave(rt);
  }
  /* 6. an async call that got this far returns now; a waiting (or failed) one drains */
  bool drain = s || !call->async;
  for (int k = H - 1; drain && k >= 0; k--)
    if (ln[k].stream) s = jit_tr_drain(rt, rg->h[k].dev, ln[k].stream, s, e);
  /* 7. a drained call: did a hop give up? (it stored base + 1, then counted the call)  Reported
   * here, with the earlier async calls not yet reported; a call that failed otherwise (a failed
   * launch leaves the launched hops to give up) returns its own error, its giving up counts as
   * reported, and the earlier calls' are left to the next look */
  uint64_t last = 0, n = drain && rd ? gave_up(rd, &last) : 0;
  if (drain && rd && last == base + 1) {
    uint64_t earlier = n - rd->reported - 1;
    char more[80] = "";
    if (earlier)
      snprintf(more, sizeof more, "; %llu earlier asynchronous ring call%s gave up too",
               (unsigned long long)earlier, earlier > 1 ? "s" : "");
    if (s) { /* failed otherwise: only this call's giving up is reported (the earlier, later) */
      rd->reported++;
    } else {
      rd->reported = n;
      s = ir_fail(e, RJ_ETIMEOUT,
                  "path: ring: a hop's kernel waited more than %lld ms (ring_timeout_ms) for its "
                  "neighbour's and gave up (did other work keep a hop from running?); the "
                  "destination is incomplete%s",
                  (long long)(timeout / 1000000), more);
    }
  }
  free(table);
  free(ln);
  free(rg);
  return s;
}
