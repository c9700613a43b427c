/* The ring path of rj_treduce: a chain through the ranks' GPUs in fold order, one
 * persistent kernel per hop, handing steps on through flags in memory.  The kernel and this file
 * share their protocol through passes/variants/treduce_ring.h.
 *
 * The split path (split.c) has every GPU read slices of every other GPU's sources: each
 * GPU's link carries traffic to and from all the others at once, and on 4 x H200 that all-to-all
 * pattern moves about 250-320 GB/s per GPU where a chain of point-to-point transfers moves 346-384
 * (bench/push_probe.py, docs/TREDUCE.md).  NCCL's reduce is such a ring.  Here the fold order (the
 * root first, then i < root ? i : i+1: the peer path's) is cut into hops, the maximal runs of
 * consecutive ranks on one GPU, at most RING_HOP_RANKS each (all ranks on one GPU: at least
 * RING_ONE_GPU hops, or one per rank when there are fewer).  Every hop runs
 * passes/variants/treduce_ring.c's kernel once, B blocks on its GPU: block b folds steps b, b + B,
 * ... (RING_STEP_BYTES each) of what hop h-1 stored into its inbox with its own ranks' sources, and
 * stores the result straight into hop h+1's inbox over NVLink (the last hop: into the root's
 * destination).  Counters in each GPU's memory say which slots are full (ready, written by the
 * sender) and free (credit, written by the receiver); a call's counters start at base, which every
 * call raises past all it publishes (by its steps + 1: 2^64 steps of 128 KiB never come), so
 * nothing is reset between calls.  Under accum, hop 0 (on the root's GPU) folds the destination's
 * old value first, as the peer kernel does.
 *
 * Pushing each hop's result with the copy engine, a kernel and a copy per chunk, ordered by
 * cross-GPU events, reaches only 0.82 x NCCL on 4 GPUs: the host's calls and the events' latency
 * dominate.  A kernel per hop for the whole call has no host call per step.
 *
 * Every element is folded in the peer path's order, starting from the op's identity, and the
 * partial results are stored in the dtype: the bits are the peer path's wherever the
 * accumulator is the dtype, and for max / min of f16 / bf16 too (exact in f32 and back).  A sum
 * of f16 / bf16 accumulates in f32 on the peer path, so its partial sums would round at every
 * hop: the ring refuses it (and a mean or product of them).  A mean's hops hand on partial sums;
 * the last hop divides by the group's ranks (the hop request's mean_count).  A custom combine is
 * folded in the same order, fn(earlier ranks, later ranks); a non-commutative one folds in rank
 * order (ir_treduce_rank_at), so its chain starts at rank 0, and the ring refuses it unless rank
 * 0 is on the root's GPU (hop 0 runs on the root's GPU).  It also refuses strided views (steps
 * are ranges of the row-major element order) and GPU pairs without peer access (its kernels
 * store into the next GPU).
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

/* The chain: its hops in fold order and the facts of the element range. */
typedef struct ring {
  int nhops, ngpus; /* hops; distinct GPUs among the ranks' */
  int root_dev;     /* the root's GPU (the last hop stores into its destination) */
  hop h[RING_MAX_HOPS];
  int64_t numel;
  int bytes;
  double load; /* the busiest GPU's link traffic in B, one way */
} ring;

/* Why the ring can't run t (into why), or NULL: sums, means and products of f16 / bf16, strided
 * views, a non-commutative combine whose chain (rank order) would not start on the root's GPU. */
static const char *refusal(const rj_treduce *t, const int *dev, char *why, size_t nwhy) {
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  bool arith = t->op == RJ_OP_SUM || t->op == RJ_OP_PROD || t->op == RJ_OP_MEAN;
  if (arith && (t->dtype == RJ_F16 || t->dtype == RJ_BF16)) {
    snprintf(why, nwhy,
             "a %s of %s would round its partial results at every hop (the peer path rounds once)",
             t->op == RJ_OP_PROD  ? "product"
             : t->op == RJ_OP_SUM ? "sum"
                                  : "mean",
             ir_dtype(t->dtype)->name);
    return why;
  }
  if (t->op == RJ_OP_CUSTOM && t->combine.nfields) {
    snprintf(why, nwhy,
             "a struct state (combine.state) would have to cross every hop as a state, and the "
             "hops hand on dtype values (the peer and split paths fold it in one pass)");
    return why;
  }
  if (ir_treduce_rank_order(t) && dev[0] != dev[t->root]) {
    snprintf(why, nwhy,
             "a non-commutative combine's chain starts at rank 0 (GPU %d), not on the root's GPU "
             "%d",
             dev[0], dev[t->root]);
    return why;
  }
  if (g.numel && (!ir_treduce_dense(&g, g.src_st) || !ir_treduce_dense(&g, g.dst_st))) {
    snprintf(why, nwhy, "the %s is a strided view (the ring moves dense row-major buffers)",
             ir_treduce_dense(&g, g.src_st) ? "destination" : "sources");
    return why;
  }
  return NULL;
}

/* The hops: the fold order cut into maximal runs of consecutive ranks on one GPU, of at most
 * per_hop ranks; false (and why) when a GPU would hold more than RING_HOPS_PER_DEV. */
static bool cut_hops(const rj_treduce *t, const int *dev, int per_hop, ring *rg, char *why,
                     size_t nwhy) {
  for (int pos = 0; pos < t->ranks; pos++) {
    int d = dev[jit_tr_rank_at(t, pos)];
    hop *last = rg->nhops ? &rg->h[rg->nhops - 1] : NULL;
    if (!last || last->dev != d || last->n == per_hop) {
      int j = 0;
      for (int k = 0; k < rg->nhops; k++)
        j += rg->h[k].dev == d;
      if (j == RING_HOPS_PER_DEV) {
        snprintf(why, nwhy,
                 "GPU %d holds more than %d runs of consecutive ranks in fold order (the root, "
                 "then i < root ? i : i+1; %d ranks at most per run)",
                 d, RING_HOPS_PER_DEV, RING_HOP_RANKS);
        return false;
      }
      rg->h[rg->nhops++] = (hop){.dev = d, .first = pos, .j = j};
    }
    rg->h[rg->nhops - 1].n++;
  }
  return true;
}

/* The busiest GPU's link traffic: hops handing on to another GPU, in or out (gpus: the ngpus
 * distinct GPUs). */
static void link_load(const rj_treduce *t, const int *gpus, ring *rg) {
  int in[RJ_TREDUCE_MAX_SLICES] = {0}, out[RJ_TREDUCE_MAX_SLICES] = {0};
  for (int k = 0; k < rg->nhops; k++) {
    hop *h = &rg->h[k];
    bool last = k == rg->nhops - 1;
    h->nsrc = h->n + (k == 0 && t->accum);
    int to = last ? rg->root_dev : rg->h[k + 1].dev, gi = 0, gt = 0;
    while (gpus[gi] != h->dev)
      gi++;
    while (gpus[gt] != to)
      gt++;
    if (to != h->dev) {
      out[gi]++;
      in[gt]++;
    }
  }
  for (int i = 0; i < rg->ngpus; i++)
    rg->load = rg->load > in[i] ? rg->load : in[i] > out[i] ? in[i] : out[i];
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
  rg->root_dev = dev[t->root];
  if (refusal(t, dev, why, nwhy)) return false;
  int gpus[RJ_TREDUCE_MAX_SLICES];
  rg->ngpus = jit_tr_gpus(t, dev, gpus, NULL);
  if (rg->ngpus < 0) {
    snprintf(why, nwhy, "the ranks live on more than %d GPUs", RJ_TREDUCE_MAX_SLICES);
    return false;
  }
  /* on one GPU: RING_ONE_GPU hops at least, ranks permitting */
  int nh = (t->ranks + RING_HOP_RANKS - 1) / RING_HOP_RANKS;
  nh = nh > RING_ONE_GPU ? nh : RING_ONE_GPU;
  int per_hop = rg->ngpus == 1 ? (t->ranks + nh - 1) / nh : RING_HOP_RANKS;
  if (!cut_hops(t, dev, per_hop, rg, why, nwhy)) return false;
  link_load(t, gpus, rg);
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
  const jit_treduce_state *st = ctx->treduce;
  for (jit_devres *d = st ? st->devres : NULL; d; d = d->next) { /* every root GPU's, at once */
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
  *hops = ok ? rg->nhops : 0;
  *nchunks = ok ? steps(rg) : 0;
  free(rg);
  return load;
}

/* What a hop works with during the call. */
typedef struct hop_state {
  void *stream, *done;   /* the context's stream j and event 2 + j of the hop's GPU */
  uint64_t inbox, flags; /* inbox: 0 on hop 0 */
  jit_tr_launch L;
} hop_state;

/* A ring call in progress, from its chain to its report. */
typedef struct ring_call {
  rj_ctx *ctx;
  rt_cuda *rt;
  ir_err *e;
  const rj_treduce *t;
  ring *rg;
  hop_state *hs;        /* RING_MAX_HOPS */
  uint64_t *table;      /* every hop's kernel sources, one run after the other */
  int64_t nsteps;       /* of the element range */
  int64_t blocks;       /* per hop, the same on every hop */
  jit_devres *root_res; /* the root GPU's, with its status word */
  uint64_t base;        /* the call's counter base */
  int64_t timeout_ns;   /* a hop's wait before it gives up */
  void *ev[2], *end;    /* the frame's events; the root's JIT_EV_RING_END */
} ring_call;

/* Peer access from GPU a to GPU b (a's kernels store into b's memory); RJ_EUNSUPPORTED naming
 * the pair where the driver has none. */
static rj_status reach(ring_call *rc, int a, int b) {
  int can = 0;
  if (a == b) return RJ_OK;
  rj_status s = jit_tr_peer(rc->ctx, rc->rt, a, b, &can); /* enabled where it can */
  if (s) return s;
  if (!can)
    return ir_fail(rc->e, RJ_EUNSUPPORTED,
                   "path: ring, but GPU %d cannot access GPU %d (cuDeviceCanAccessPeer): the "
                   "ring's kernels store into the next hop's GPU",
                   a, b);
  return RJ_OK;
}

/* Step 1: each hop's GPU stores into the next hop's (its inbox and ready counters), the previous
 * hop's (credit counters) and the root's (the destination, the status word). */
static rj_status reach_neighbours(ring_call *rc) {
  const ring *rg = rc->rg;
  rj_status s = RJ_OK;
  for (int k = 0; !s && k < rg->nhops; k++) {
    int a = rg->h[k].dev;
    s = reach(rc, a, k + 1 < rg->nhops ? rg->h[k + 1].dev : rg->root_dev);
    if (!s && k) s = reach(rc, a, rg->h[k - 1].dev);
    if (!s) s = reach(rc, a, rg->root_dev);
  }
  return s;
}

/* Step 2: the blocks per hop, the same on every hop: at most the SMs of a GPU over its hops, so
 * that a call's kernels all fit on their GPUs at once. */
static rj_status pick_blocks(ring_call *rc) {
  const ring *rg = rc->rg;
  rc->blocks = rc->nsteps < RING_MAXB ? rc->nsteps : RING_MAXB;
  rj_status s = RJ_OK;
  for (int k = 0; !s && k < rg->nhops; k++) {
    int sms = 0, on = 0;
    for (int q = 0; q < rg->nhops; q++)
      on += rg->h[q].dev == rg->h[k].dev;
    s = rt_device_sms(rc->rt, rg->h[k].dev, &sms, rc->e);
    if (!s && sms / on < rc->blocks) rc->blocks = sms / on > 0 ? sms / on : 1;
  }
  return s;
}

/* The hop kernel's request for hop h with sources mine[n]: its sources' count decides it (one
 * per dtype, op, nan and count); tile[1], the elements per access, is 16 bytes' worth where
 * every pointer allows. */
static void hop_request(const ring_call *rc, const hop *h, const uint64_t *mine, int n,
                        uint64_t dst, rj_request *sub) {
  const rj_treduce *t = rc->t;
  rj_request_init(sub, RJ_KIND_TREDUCE);
  snprintf(sub->variant, sizeof sub->variant, "treduce_ring");
  rj_treduce *st = &sub->u.treduce;
  st->op = t->op;
  st->dtype = t->dtype;
  st->nan = t->nan;
  st->ranks = h->nsrc;
  st->ndim = 1;
  st->shape[0] = 1; /* the element count is a parameter: one kernel serves every size */
  uint64_t any = dst;
  for (int i = 0; i < n; i++)
    any |= mine[i];
  st->tile[0] = 1;
  st->tile[1] = any % 16 ? 1 : 16 / rc->rg->bytes;
  if (t->op == RJ_OP_MEAN) st->mean_count = t->ranks; /* the last hop divides by every rank */
  st->combine = t->combine;                           /* op custom: the combine (none otherwise) */
}

/* Step 3: each hop's sources (under accum, hop 0 reads the destination's old value first) and
 * kernel, compiled and loaded on its GPU. */
static rj_status hop_kernels(ring_call *rc, const uint64_t *src, uint64_t dst,
                             const rj_options *opt, rj_treduce_result *res) {
  const ring *rg = rc->rg;
  rj_status s = RJ_OK;
  for (int k = 0, at = 0; !s && k < rg->nhops; k++) {
    const hop *h = &rg->h[k];
    uint64_t *mine = rc->table + at;
    int n = 0;
    if (h->nsrc > h->n) mine[n++] = dst; /* accum: the old value first */
    for (int i = 0; i < h->n; i++)
      mine[n++] = src[jit_tr_rank_at(rc->t, h->first + i)];
    rj_request sub;
    hop_request(rc, h, mine, n, dst, &sub);
    at += n;
    jit_tr_launch *l = &rc->hs[k].L;
    l->n = n;
    l->src = mine;
    l->dev = h->dev;
    s = jit_treduce_kernel(rc->ctx, &sub, opt, h->dev, l, res);
    double ms = 0;
    if (!s && !(s = rt_enter(rc->rt, h->dev, rc->e))) {
      s = jit_load(rc->ctx, l->k, h->dev, &ms);
      res->load_ms += ms;
      /* a hop kernel that uses local memory (ptxas may spill a few bytes) must not find the
       * stack limit below it: a launch that grew it would wait for the device to idle, behind
       * this call's other hops, which wait for it */
      if (!s) s = rt_fit_stack(rc->rt, l->k->function, rc->e);
      rt_leave(rc->rt);
    }
  }
  return s;
}

/* Step 4, on one GPU: its inboxes (one region: blocks x RING_NB steps per receiving hop),
 * counters, and each of its hops' stream and event.  The current context is dev's. */
static rj_status gpu_buffers(ring_call *rc, int dev) {
  const ring *rg = rc->rg;
  size_t ib = (size_t)rc->blocks * RING_NB * (size_t)RING_STEP_BYTES; /* one inbox */
  size_t need = 0;
  for (int q = 1; q < rg->nhops; q++)
    need += rg->h[q].dev == dev ? ib : 0;
  uint64_t region = 0, flags = 0;
  rj_status s = RJ_OK;
  if (need) s = jit_dev_keep(rc->ctx, rc->rt, dev, 2, need, &region);
  if (!s) s = jit_dev_flags(rc->ctx, rc->rt, dev, &flags);
  size_t at = 0;
  for (int q = 0; !s && q < rg->nhops; q++) {
    const hop *h = &rg->h[q];
    hop_state *hs = &rc->hs[q];
    if (h->dev != dev) continue;
    if (q) hs->inbox = region + at, at += ib;
    hs->flags = flags + (uint64_t)h->j * RING_FLAG_BYTES;
    s = jit_dev_stream(rc->ctx, rc->rt, h->dev, h->j, &hs->stream);
    if (!s) s = jit_dev_event(rc->ctx, rc->rt, h->dev, 2 + h->j, &hs->done);
  }
  return s;
}

/* Step 4: every GPU's buffers (gpu_buffers), then the root's status word. */
static rj_status hop_buffers(ring_call *rc) {
  const ring *rg = rc->rg;
  int done[RJ_TREDUCE_MAX_SLICES], ndone = 0;
  rj_status s = RJ_OK;
  for (int k = 0; !s && k < rg->nhops; k++) {
    int dev = rg->h[k].dev, gi = 0;
    while (gi < ndone && done[gi] != dev)
      gi++;
    if (gi < ndone) continue;
    done[ndone++] = dev;
    if ((s = rt_enter(rc->rt, dev, rc->e))) break;
    s = gpu_buffers(rc, dev);
    rt_leave(rc->rt);
  }
  if (!s && !(s = rt_enter(rc->rt, rg->root_dev, rc->e))) {
    s = jit_dev_status(rc->ctx, rc->rt, rg->root_dev, &rc->root_res);
    rt_leave(rc->rt);
  }
  return s;
}

/* Step 5: the start, on the root's stream 0 (hop 0's).  The hops must all be able to start
 * together: the streams they share with earlier calls of this context (an async call waiting on
 * its caller's stream, say) are drained of that work first, by starting only after each one's
 * backlog (its done event, recorded now).  And ring calls run one after the other: a call's hops
 * (and, on GPUs this call does not use, an earlier call's late senders) store into inboxes and
 * counters the next call reuses at other offsets, so the start waits for the previous ring
 * call's end, wherever it was rooted.  Then the frame begins (after the caller's stream). */
static rj_status start(ring_call *rc, jit_treduce_state *st, const jit_tr_call *call) {
  const ring *rg = rc->rg;
  hop_state *hs = rc->hs;
  rt_cuda *rt = rc->rt;
  rj_status s = RJ_OK;
  for (int k = 1; !s && k < rg->nhops; k++) {
    if (hs[k].stream == hs[0].stream || (s = rt_enter(rt, rg->h[k].dev, rc->e))) continue;
    s = rt_event_record(rt, hs[k].done, hs[k].stream, rc->e);
    rt_leave(rt);
    if (!s && !(s = rt_enter(rt, rg->root_dev, rc->e))) {
      s = rt_stream_wait(rt, hs[0].stream, hs[k].done, rc->e);
      rt_leave(rt);
    }
  }
  void *prev = NULL;
  if (!s && !(s = rt_enter(rt, rg->root_dev, rc->e))) {
    s = jit_dev_event(rc->ctx, rt, rg->root_dev, JIT_EV_RING_END, &rc->end);
    rt_leave(rt);
  }
  if (!s && st->ring_end_dev >= 0 && !(s = rt_enter(rt, st->ring_end_dev, rc->e))) {
    s = jit_dev_event(rc->ctx, rt, st->ring_end_dev, JIT_EV_RING_END, &prev);
    rt_leave(rt);
  }
  if (!s && !(s = rt_enter(rt, rg->root_dev, rc->e))) {
    if (prev) s = rt_stream_wait(rt, hs[0].stream, prev, rc->e);
    if (!s) s = jit_tr_begin(rc->ctx, rt, rg->root_dev, hs[0].stream, call, true, rc->ev);
    rt_leave(rt);
  }
  return s;
}

/* Step 6: every hop's stream waits for the start, runs its kernel (blocks blocks) and marks it
 * done. */
static rj_status launch_hops(ring_call *rc, uint64_t dst, rj_treduce_result *res) {
  const ring *rg = rc->rg;
  hop_state *hs = rc->hs;
  uint64_t status = rc->root_res ? (uint64_t)(uintptr_t)rc->root_res->status : 0;
  rj_status s = RJ_OK;
  for (int k = 0; !s && k < rg->nhops; k++) {
    hop_state *h = &hs[k];
    bool last = k == rg->nhops - 1;
    uint64_t out = dst, in = h->inbox, next = last ? 0 : hs[k + 1].inbox;
    uint64_t flags = h->flags, next_ready = last ? 0 : hs[k + 1].flags;
    uint64_t prev_credit = k ? hs[k - 1].flags + RING_MAXB * 8 : 0;
    int64_t numel = rg->numel;
    void *args[RING_FIXED + JIT_TR_PER_KERNEL] = {[RING_P_DST] = &out,
                                                  [RING_P_IN] = &in,
                                                  [RING_P_NEXT] = &next,
                                                  [RING_P_FLAGS] = &flags,
                                                  [RING_P_NEXT_READY] = &next_ready,
                                                  [RING_P_PREV_CREDIT] = &prev_credit,
                                                  [RING_P_STATUS] = &status,
                                                  [RING_P_NUMEL] = &numel,
                                                  [RING_P_BASE] = &rc->base,
                                                  [RING_P_TIMEOUT] = &rc->timeout_ns};
    for (int i = 0; i < h->L.n; i++)
      args[RING_FIXED + i] = (void *)&h->L.src[i];
    jit_launch_args la = {.grid = {(unsigned)rc->blocks, 1, 1}, .args = args, .stream = h->stream};
    memcpy(la.block, h->L.k->plan.block, sizeof la.block);
    if ((s = rt_enter(rc->rt, rg->h[k].dev, rc->e))) break;
    if (h->stream != hs[0].stream) s = rt_stream_wait(rc->rt, h->stream, rc->ev[0], rc->e);
    if (!s) s = jit_launch(rc->ctx, h->L.k, h->L.dev, &la);
    if (!s) res->launches++;
    if (!s) s = rt_event_record(rc->rt, h->done, h->stream, rc->e);
    rt_leave(rc->rt);
  }
  return s;
}

/* Step 7: the root's stream waits for every hop, marks the ring call's end, and ends the frame. */
static rj_status finish(ring_call *rc, jit_treduce_state *st, const jit_tr_call *call,
                        rj_treduce_result *res) {
  const ring *rg = rc->rg;
  hop_state *hs = rc->hs;
  rj_status s = rt_enter(rc->rt, rg->root_dev, rc->e);
  if (s) return s;
  for (int k = 1; !s && k < rg->nhops; k++)
    if (hs[k].stream != hs[0].stream) s = rt_stream_wait(rc->rt, hs[0].stream, hs[k].done, rc->e);
  if (!s) s = rt_event_record(rc->rt, rc->end, hs[0].stream, rc->e);
  if (!s) st->ring_end_dev = rg->root_dev;
  if (!s) s = jit_tr_end(rc->ctx, rc->rt, hs[0].stream, call, rc->ev, &res->ms);
  rt_leave(rc->rt);
  return s;
}

/* Step 8, for a drained call: did a hop give up? (it stored base + 1, then counted the call)
 * Reported here, with the earlier async calls not yet reported; a call that failed otherwise (a
 * failed launch leaves the launched hops to give up) returns its own error s, its giving up
 * counts as reported, and the earlier calls' are left to the next look. */
static rj_status report(ring_call *rc, rj_status s) {
  jit_devres *rd = rc->root_res;
  uint64_t last = 0, n = rd ? gave_up(rd, &last) : 0;
  if (!rd || last != rc->base + 1) return s;
  uint64_t earlier = n - rd->reported - 1;
  char more[80] = "";
  if (earlier)
    snprintf(more, sizeof more, "; %llu earlier asynchronous ring call%s gave up too",
             (unsigned long long)earlier, earlier > 1 ? "s" : "");
  if (s) { /* failed otherwise: only this call's giving up is reported (the earlier, later) */
    rd->reported++;
    return s;
  }
  rd->reported = n;
  return ir_fail(rc->e, RJ_ETIMEOUT,
                 "path: ring: a hop's kernel waited more than %lld ms (ring_timeout_ms) for its "
                 "neighbour's and gave up (did other work keep a hop from running?); the "
                 "destination is incomplete%s",
                 (long long)(rc->timeout_ns / 1000000), more);
}

/* Steps 2 to 8, once the chain is known and reachable and there is something to move. */
static rj_status run_ring(ring_call *rc, const uint64_t *src, uint64_t dst, const rj_options *opt,
                          const jit_tr_call *call, rj_treduce_result *res) {
  rj_status s = pick_blocks(rc);
  rc->table = malloc(sizeof(uint64_t) * (size_t)(rc->t->ranks + rc->rg->nhops));
  if (!s && !rc->table) s = ir_fail(rc->e, RJ_ENOMEM, "out of memory");
  if (!s) s = hop_kernels(rc, src, dst, opt, res);
  if (!s) s = hop_buffers(rc);
  /* the counters of this call start at base; the next call's above all it publishes */
  jit_treduce_state *st = jit_treduce_state_of(rc->ctx);
  if (!st) return s ? s : ir_fail(rc->e, RJ_ENOMEM, "out of memory");
  rc->base = st->ring_base;
  st->ring_base += (uint64_t)rc->nsteps + 1;
  rc->timeout_ns = call->ring_timeout_ns ? call->ring_timeout_ns : RING_TIMEOUT_NS;
  if (!s) s = start(rc, st, call);
  if (!s) s = launch_hops(rc, dst, res);
  if (!s) s = finish(rc, st, call, res);
  /* an async call that got this far returns now; a waiting (or failed) one drains */
  if (!s && call->async) return s;
  for (int k = rc->rg->nhops - 1; k >= 0; k--)
    if (rc->hs[k].stream) s = jit_tr_drain(rc->rt, rc->rg->h[k].dev, rc->hs[k].stream, s, rc->e);
  return report(rc, s);
}

rj_status jit_treduce_ring(rj_ctx *ctx, rt_cuda *rt, const rj_request *req, const uint64_t *src,
                           const int *dev, uint64_t dst, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res) {
  ring_call rc = {.ctx = ctx, .rt = rt, .e = &ctx->err, .t = &req->u.treduce};
  char why[128];
  rc.rg = malloc(sizeof *rc.rg);
  rc.hs = rc.rg ? calloc(RING_MAX_HOPS, sizeof *rc.hs) : NULL;
  bool made = rc.hs && make_ring(req, dev, rc.rg, why, sizeof why);
  rj_status s = RJ_OK;
  if (!rc.hs)
    s = ir_fail(rc.e, RJ_ENOMEM, "out of memory");
  else if (!made)
    s = ir_fail(rc.e, RJ_EUNSUPPORTED, "path: ring, but %s", why);
  else
    s = reach_neighbours(&rc);
  if (made) {
    const ring *rg = rc.rg;
    snprintf(res->path, sizeof res->path, "ring");
    res->direct_ranks = rc.t->ranks;
    res->gpus = rg->ngpus;
    res->hops = rg->nhops;
    res->root_share = rg->numel && rg->h[rg->nhops - 1].dev == rg->root_dev ? 1 : 0;
    rc.nsteps = steps(rg);
    res->slices = (int)rc.nsteps;
  }
  /* nothing to move (an empty buffer): the destination stays as it is */
  if (!s && rc.nsteps) s = run_ring(&rc, src, dst, opt, call, res);
  free(rc.table);
  free(rc.hs);
  free(rc.rg);
  return s;
}
