/* rj_treduce: a group of ranks' buffers -> a treduce request -> kernels on the root.
 *
 * Paths, per rank other than the root:
 *   direct  the rank's source is on the root's GPU, or peer access from the root's GPU to its GPU
 *           is possible (cuDeviceCanAccessPeer) and enabled (cuCtxEnablePeerAccess): the root's
 *           kernel loads it in place ("peer");
 *   staged  otherwise (or when RJ_TREDUCE_STAGED is asked for): cuMemcpyPeerAsync of the source's
 *           span into a staging buffer on the root, on a copy stream, then an accumulating kernel
 *           (ranks = 1, accum) folds it into the destination.  With ping-pong there are two
 *           staging buffers and the copy of staged rank i+1 runs while the kernel folds rank i;
 *           events order copy -> kernel (copied[b]) and kernel -> next copy into b (consumed[b]).
 *           Without ping-pong, one buffer: copy, fold, copy, fold.
 * When every rank is direct and there are at most 128, the request runs as given (one kernel,
 * the one `redjit ptx` shows).  Otherwise the direct ranks (root first) go in launches of up to
 * 128, the later ones accumulating, then the staged ranks.
 * The split path (every GPU reduces one slice of the element range) is jit/treduce_split.c, the
 * ring path (a chain through the GPUs, asked for only) jit/treduce_ring.c. */
#include "treduce.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RJ_API void rj_treduce_group_init_sized(rj_treduce_group *g, size_t size) {
  if (!g || size < sizeof g->struct_size) return;
  memset(g, 0, size < sizeof *g ? size : sizeof *g); /* a larger (newer) one is refused later */
  g->struct_size = (uint32_t)size;
}

/* The exported symbol (the header's macro of this name calls the sized one): what a binary built
 * against the header before `stream` and `async` calls, with a group of the older size. */
RJ_API void(rj_treduce_group_init)(rj_treduce_group *g) {
  rj_treduce_group_init_sized(g, RJ_TREDUCE_GROUP_SIZE_V1);
}

static bool same_shape(const rj_treduce_buf *a, const rj_treduce_buf *b, int *bad_dim) {
  for (int d = 0; d < a->ndim && d < b->ndim; d++)
    if (a->shape[d] != b->shape[d]) {
      *bad_dim = d;
      return false;
    }
  *bad_dim = a->ndim < b->ndim ? a->ndim : b->ndim;
  return a->ndim == b->ndim;
}

/* Row-major strides unless given. */
static void strides_of(const rj_treduce_buf *b, int64_t *st) {
  int64_t m = 1;
  for (int d = b->ndim - 1; d >= 0; d--) {
    st[d] = b->has_strides ? b->strides[d] : m;
    m *= b->shape[d] > 0 ? b->shape[d] : 1;
  }
}

static rj_status check_buf(ir_err *e, const char *name, const rj_treduce_buf *b, int bytes,
                           const rj_treduce_buf *root, const char *root_name) {
  if (!b->ptr) return ir_fail(e, RJ_EINVAL, "%s.ptr: NULL", name);
  if (b->ptr % (uint64_t)bytes)
    return ir_fail(e, RJ_EINVAL, "%s.ptr: 0x%" PRIx64 " is not aligned to the element size (%d)",
                   name, b->ptr, bytes);
  if (b->device < 0) return ir_fail(e, RJ_EINVAL, "%s.device: %d is negative", name, b->device);
  if (b->ndim < 1 || b->ndim > RJ_TREDUCE_MAX_DIMS)
    return ir_fail(e, RJ_EINVAL, "%s.ndim: expected 1 to 5 dims (got %d)", name, b->ndim);
  int d;
  if (root && !same_shape(b, root, &d)) {
    if (b->ndim != root->ndim)
      return ir_fail(e, RJ_EINVAL,
                     "%s.shape: %d dims, but %s has %d: every buffer has the root's shape", name,
                     b->ndim, root_name, root->ndim);
    return ir_fail(e, RJ_EINVAL,
                   "%s.shape[%d]: %lld, but %s.shape[%d] is %lld: every buffer has the root's "
                   "shape",
                   name, d, (long long)b->shape[d], root_name, d, (long long)root->shape[d]);
  }
  return RJ_OK;
}

/* Checks the group (naming the field) and builds its request; *full = the group with the fields
 * a caller of an older header lacks at their defaults. */
static rj_status group_request(ir_err *e, const rj_treduce_group *caller, rj_treduce_group *full,
                               rj_request *out) {
  if (!caller) return ir_fail(e, RJ_EINVAL, "group: NULL");
  if (caller->struct_size != sizeof *full && caller->struct_size != RJ_TREDUCE_GROUP_SIZE_V1 &&
      caller->struct_size != RJ_TREDUCE_GROUP_SIZE_V2)
    return ir_fail(e, RJ_EINVAL,
                   "group.struct_size: %u, this library expects %zu (or %zu, the group before "
                   "stream and async, or %zu, before ring_timeout_ms; use rj_treduce_group_init)",
                   caller->struct_size, sizeof *full, (size_t)RJ_TREDUCE_GROUP_SIZE_V1,
                   (size_t)RJ_TREDUCE_GROUP_SIZE_V2);
  memset(full, 0, sizeof *full);
  memcpy(full, caller, caller->struct_size);
  const rj_treduce_group *g = full;
  if (g->async != 0 && g->async != 1)
    return ir_fail(e, RJ_EINVAL, "async: %d (expected 0 or 1)", g->async);
  if (g->ring_timeout_ms < 0 || g->ring_timeout_ms > 3600000)
    return ir_fail(e, RJ_EINVAL, "ring_timeout_ms: %lld is outside 0..3600000 (0: 10000)",
                   (long long)g->ring_timeout_ms);
  if (g->ranks < 1 || g->ranks > 1024)
    return ir_fail(e, RJ_EINVAL, "ranks: %d is outside 1..1024", g->ranks);
  if (g->root < 0 || g->root >= g->ranks)
    return ir_fail(e, RJ_EINVAL, "root: %d is outside 0..%d", g->root, g->ranks - 1);
  if (!g->src) return ir_fail(e, RJ_EINVAL, "src: NULL (expected %d rank buffers)", g->ranks);
  if ((unsigned)g->path > RJ_TREDUCE_RING)
    return ir_fail(e, RJ_EINVAL, "path: unknown value %d", g->path);
  if (!ir_dtype(g->dtype)) return ir_fail(e, RJ_EINVAL, "dtype: unknown value %d", g->dtype);
  int bytes = ir_dtype(g->dtype)->bytes;
  const rj_treduce_buf *root = &g->src[g->root];
  char name[32], rname[32];
  snprintf(rname, sizeof rname, "src[%d]", g->root);
  rj_status s = check_buf(e, rname, root, bytes, NULL, NULL);
  if (s) return s;
  int64_t rst[5], st[5];
  strides_of(root, rst);
  for (int r = 0; r < g->ranks; r++) {
    snprintf(name, sizeof name, "src[%d]", r);
    if ((s = check_buf(e, name, &g->src[r], bytes, root, rname))) return s;
    strides_of(&g->src[r], st);
    for (int d = 0; d < root->ndim; d++)
      if (st[d] != rst[d])
        return ir_fail(e, RJ_EINVAL,
                       "src[%d].strides[%d]: %lld, but %s's is %lld: every rank's source has the "
                       "root's strides",
                       r, d, (long long)st[d], rname, (long long)rst[d]);
  }
  if ((s = check_buf(e, "dst", &g->dst, bytes, root, rname))) return s;
  if (g->dst.device != root->device)
    return ir_fail(e, RJ_EINVAL,
                   "dst.device: %d, but the root's source is on GPU %d (the destination is on the "
                   "root)",
                   g->dst.device, root->device);
  rj_request_init(out, RJ_KIND_TREDUCE);
  rj_treduce *t = &out->u.treduce;
  t->op = g->op;
  t->dtype = g->dtype;
  t->nan = g->nan;
  t->ranks = g->ranks;
  t->root = g->root;
  t->ndim = root->ndim;
  memcpy(t->shape, root->shape, sizeof t->shape);
  t->tile[0] = g->tile[0];
  t->tile[1] = g->tile[1];
  t->pingpong = g->pingpong != 0;
  t->accum = g->accum != 0;
  if (root->has_strides || g->dst.has_strides) {
    t->has_strides = 1;
    memcpy(t->strides, rst, sizeof rst);
    strides_of(&g->dst, t->dst_strides);
  }
  return ir_validate(out, e);
}

RJ_API rj_status rj_treduce_request(rj_ctx *ctx, const rj_treduce_group *g, rj_request *out) {
  JIT_NEED(ctx, out, "out");
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_treduce_group full;
  return jit_status(ctx, group_request(&ctx->err, g, &full, out));
}

RJ_API rj_status rj_treduce_run(rj_ctx *ctx, const rj_treduce_group *g, const rj_options *opt,
                                rj_treduce_result *res) {
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_treduce_result local;
  if (!res) res = &local;
  memset(res, 0, sizeof *res);
  rj_request req;
  rj_treduce_group full;
  rj_status s = group_request(&ctx->err, g, &full, &req);
  /* an earlier async ring call that gave up is reported before anything else runs */
  if (!s) s = jit_treduce_ring_deferred(ctx, "; this call did not run");
  if (s) return jit_status(ctx, s);
  g = &full;
  uint64_t *src = malloc(sizeof(uint64_t) * (size_t)g->ranks);
  int *dev = malloc(sizeof(int) * (size_t)g->ranks);
  if (!src || !dev) s = ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  for (int r = 0; !s && r < g->ranks; r++) {
    src[r] = g->src[r].ptr;
    dev[r] = g->src[r].device;
  }
  jit_tr_call call = {
      .stream = g->stream, .async = g->async, .ring_timeout_ns = g->ring_timeout_ms * 1000000};
  if (!s) s = jit_treduce_exec(ctx, &req, src, dev, g->dst.ptr, g->path, opt, &call, res);
  free(src);
  free(dev);
  return jit_status(ctx, s);
}

RJ_API rj_status rj_treduce_sync(rj_ctx *ctx) {
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = ctx->cuda ? jit_devres_sync(ctx) : RJ_OK; /* no driver: no call ever ran */
  if (!s) s = jit_treduce_ring_deferred(ctx, "");
  return jit_status(ctx, s);
}

/* ---------------------------------------------------------------- the engine */

rj_status jit_treduce_kernel(rj_ctx *ctx, const rj_request *req, const rj_options *opt, int dev,
                             rj_kernel **k, rj_treduce_result *res) {
  rj_options o;
  rj_options_init(&o);
  if (opt) {
    o.target = opt->target;
    o.ptx_version = opt->ptx_version;
  }
  o.device = dev;
  ir_err saved = ctx->err;
  rj_status s = rj_compile(ctx, req, &o, k); /* resets ctx->err */
  if (s) return s;
  ctx->err = saved;
  if (!res->variant[0]) {
    snprintf(res->variant, sizeof res->variant, "%s", (*k)->variant);
    snprintf(res->target, sizeof res->target, "%s", (*k)->target);
  }
  res->compile_ms += (*k)->compile_ms;
  return RJ_OK;
}

rj_status jit_treduce_fold(rj_ctx *ctx, const rj_request *req, const uint64_t *table, int n,
                           int dev, uint64_t dst, int slice, const rj_options *opt,
                           jit_tr_launch *L, int *nl, rj_treduce_result *res) {
  rj_status s = RJ_OK;
  for (int i = 0; !s && i < n; i += JIT_TR_PER_KERNEL) {
    rj_request sub = *req;
    sub.u.treduce.ranks = n - i < JIT_TR_PER_KERNEL ? n - i : JIT_TR_PER_KERNEL;
    sub.u.treduce.root = 0;
    sub.u.treduce.accum = i ? 1 : req->u.treduce.accum;
    sub.variant[0] = 0;
    jit_tr_launch *l = &L[(*nl)++];
    memset(l, 0, sizeof *l);
    l->n = sub.u.treduce.ranks;
    l->src = table + i;
    l->dst = dst;
    l->dev = dev;
    l->slice = slice;
    s = jit_treduce_kernel(ctx, &sub, opt, dev, &l->k, res);
  }
  return s;
}

rj_status jit_treduce_launch(rj_ctx *ctx, rt_cuda *rt, jit_tr_launch *l, void *stream,
                             rj_treduce_result *res) {
  void *args[1 + JIT_TR_PER_KERNEL];
  uint64_t dst = l->dst;
  args[0] = &dst;
  for (int k = 0; k < l->n; k++)
    args[1 + k] = (void *)&l->src[k];
  res->launches++;
  return rt_launch_async(rt, l->fn, l->k->grid, l->k->block, 0, args, stream, &ctx->err);
}

rj_status jit_tr_begin(rj_ctx *ctx, rt_cuda *rt, int rdev, void *ks, const jit_tr_call *call,
                       void *ev[2]) {
  ir_err *e = &ctx->err;
  void *evc = NULL;
  rj_status s = jit_dev_event(ctx, rt, rdev, 0, &ev[0]);
  if (!s) s = jit_dev_event(ctx, rt, rdev, 1, &ev[1]);
  /* the legacy default stream needs no event: ks is a blocking stream, so it already waits for
   * that stream's earlier work (and an event recorded there would wait for every blocking
   * stream of the GPU, other contexts' calls included) */
  if (!s && call->stream) s = jit_dev_event(ctx, rt, rdev, JIT_EV_CALLER, &evc);
  if (!s && evc) s = rt_event_record(rt, evc, call->stream, e);
  if (!s && evc) s = rt_stream_wait(rt, ks, evc, e);
  if (!s) s = rt_event_record(rt, ev[0], ks, e);
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

static rj_status exec(rj_ctx *ctx, const rj_request *req, const uint64_t *src, const int *dev,
                      uint64_t dst, rj_treduce_path path, const rj_options *opt,
                      const jit_tr_call *call, rj_treduce_result *res) {
  ir_err *e = &ctx->err;
  const rj_treduce *t = &req->u.treduce;
  int N = t->ranks, root = t->root, rdev = dev[root], bytes = ir_dtype(t->dtype)->bytes;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  rt_cuda *rt = NULL;
  int ndev = 0;
  rj_status s = jit_cuda(ctx, &rt);
  if (!s) s = rt_device_count(rt, &ndev, e);
  if (s) return s;
  for (int r = 0; r < N; r++)
    if (dev[r] < 0 || dev[r] >= ndev)
      return ir_fail(e, RJ_EINVAL, "src[%d].device: no GPU %d (%d present)", r, dev[r], ndev);
  if ((s = rt_enter(rt, rdev, e))) return s;
  s = rt_stream_check(rt, call->stream, rdev, "stream", e);
  rt_leave(rt);
  if (s) return s;
  /* 0. the ring path (asked for), the split path (asked for or picked: under auto it declines
   * when a GPU pair can't reach the other) */
  if (path == RJ_TREDUCE_RING) return jit_treduce_ring(ctx, rt, req, src, dev, dst, opt, call, res);
  rj_treduce_path take = path == RJ_TREDUCE_AUTO ? jit_treduce_auto(req, dev) : path;
  if (take == RJ_TREDUCE_SPLIT || take == RJ_TREDUCE_SPLIT_EQUAL) {
    bool declined = false;
    s = jit_treduce_split(ctx, rt, req, src, dev, dst, path, opt, call, res, &declined);
    if (s || !declined) return s;
    memset(res, 0, sizeof *res);
  }
  /* 1. each rank's path */
  int *order = malloc(sizeof(int) * (size_t)N * 2); /* direct ranks (root first), staged ranks */
  uint64_t *table = malloc(sizeof(uint64_t) * (size_t)(N + 1));
  if (!order || !table) {
    free(order);
    free(table);
    return ir_fail(e, RJ_ENOMEM, "out of memory");
  }
  int *staged = order + N, nd = 0, ns = 0;
  order[nd++] = root;
  for (int r = 0; !s && r < N; r++) {
    if (r == root) continue;
    if (path == RJ_TREDUCE_STAGED) {
      staged[ns++] = r;
      continue;
    }
    if (dev[r] == rdev) {
      order[nd++] = r;
      continue;
    }
    int can = 0;
    if ((s = rt_peer_can_access(rt, rdev, dev[r], &can, e))) break;
    if (can) {
      if ((s = rt_enter(rt, rdev, e))) break;
      s = rt_peer_enable(rt, dev[r], e);
      rt_leave(rt);
      if (s) break;
      order[nd++] = r;
      res->peer_ranks++;
    } else if (path == RJ_TREDUCE_PEER) {
      s = ir_fail(e, RJ_EUNSUPPORTED,
                  "path: peer, but GPU %d cannot access GPU %d (rank %d) directly "
                  "(cuDeviceCanAccessPeer = 0); use path auto or staged",
                  rdev, dev[r], r);
    } else {
      staged[ns++] = r;
    }
  }
  res->direct_ranks = nd;
  res->staged_ranks = ns;
  res->slices = res->gpus = g.numel ? 1 : 0;
  res->root_share = g.numel ? 1 : 0;
  snprintf(res->path, sizeof res->path, "%s", ns ? "staged" : "peer");
  /* 2. the kernels: the request as given, or launches of derived requests */
  jit_tr_launch L[1 + (1024 + JIT_TR_PER_KERNEL - 1) / JIT_TR_PER_KERNEL];
  int nl = 0;
  rj_kernel *kst = NULL;
  if (!s && ns == 0 && N <= JIT_TR_PER_KERNEL) {
    for (int r = 0; r < N; r++)
      table[r] = src[r];
    memset(&L[0], 0, sizeof L[0]);
    L[0].n = N;
    L[0].src = table;
    L[0].dst = dst;
    L[0].dev = rdev;
    s = jit_treduce_kernel(ctx, req, opt, rdev, &L[0].k, res);
    nl = 1;
  } else if (!s) {
    for (int i = 0; i < nd; i++)
      table[i] = src[order[i]];
    s = jit_treduce_fold(ctx, req, table, nd, rdev, dst, 0, opt, L, &nl, res);
    if (!s && ns) {
      rj_request sub = *req;
      sub.u.treduce.ranks = 1;
      sub.u.treduce.root = 0;
      sub.u.treduce.accum = 1;
      sub.variant[0] = 0;
      s = jit_treduce_kernel(ctx, &sub, opt, rdev, &kst, res);
    }
  }
  if (s || g.numel == 0) { /* nothing to move: the destination stays as it is */
    free(order);
    free(table);
    return s;
  }
  /* 3. load on the root's GPU, then enqueue everything on its streams */
  if ((s = rt_enter(rt, rdev, e))) {
    free(order);
    free(table);
    return s;
  }
  double ms = 0;
  for (int i = 0; !s && i < nl; i++) {
    s = jit_load(ctx, L[i].k, rdev, &ms);
    L[i].fn = L[i].k->function;
    res->load_ms += ms;
  }
  if (!s && kst) {
    s = jit_load(ctx, kst, rdev, &ms);
    res->load_ms += ms;
  }
  /* the context's streams and events of the root's GPU (kept between calls): stream 0 runs the
   * kernels, stream 1 the copies; events 0 / 1 frame the operation (jit_tr_begin / end), 2 + b /
   * 4 + b are buffer b's copied / consumed */
  void *ks = NULL, *cs = NULL, *ev[2] = {NULL, NULL}, *copied[2] = {0}, *consumed[2] = {0};
  uint64_t buf[2] = {0, 0};
  bool temporary[2] = {false, false};
  int nb = t->pingpong ? 2 : 1;
  size_t span = (size_t)g.src_span * (size_t)bytes;
  if (!s) s = jit_dev_stream(ctx, rt, rdev, 0, &ks);
  if (!s && ns) {
    s = jit_dev_stream(ctx, rt, rdev, 1, &cs);
    for (int b = 0; !s && b < nb; b++) { /* a temporary buffer: stream-ordered when async */
      s = jit_dev_stage(ctx, rt, rdev, b, span, call->async ? ks : NULL, &buf[b], &temporary[b]);
      if (!s) s = jit_dev_event(ctx, rt, rdev, 2 + b, &copied[b]);
      if (!s) s = jit_dev_event(ctx, rt, rdev, 4 + b, &consumed[b]);
    }
  }
  if (!s) s = jit_tr_begin(ctx, rt, rdev, ks, call, ev);
  for (int i = 0; !s && i < nl; i++)
    s = jit_treduce_launch(ctx, rt, &L[i], ks, res);
  if (!s && ns) s = rt_stream_wait(rt, cs, ev[0], e); /* copies start with the operation */
  for (int i = 0; !s && i < ns; i++) {
    int b = i % nb;
    if (i >= nb) s = rt_stream_wait(rt, cs, consumed[b], e); /* buffer b folded: reuse it */
    if (!s) s = rt_copy_peer_async(rt, buf[b], rdev, src[staged[i]], dev[staged[i]], span, cs, e);
    if (!s) s = rt_event_record(rt, copied[b], cs, e);
    if (!s) s = rt_stream_wait(rt, ks, copied[b], e);
    if (!s) {
      uint64_t one = buf[b];
      jit_tr_launch l = {.k = kst, .fn = kst->function, .n = 1, .src = &one, .dst = dst};
      s = jit_treduce_launch(ctx, rt, &l, ks, res);
    }
    if (!s) s = rt_event_record(rt, consumed[b], ks, e);
  }
  if (!s) s = jit_tr_end(ctx, rt, ks, call, ev, &res->ms);
  bool drain = s || !call->async; /* a failed call drains before it frees */
  rj_status s2 = ks && drain ? rt_stream_sync(rt, ks, e) : RJ_OK;
  if (cs && drain) {
    ir_err ignored = {0};
    rt_stream_sync(rt, cs, s2 ? &ignored : e);
  }
  if (!s) s = s2;
  for (int b = 0; b < 2; b++) { /* after the last fold: drained, or stream-ordered on ks */
    ir_err ignored = {0};
    if (temporary[b] && !call->async) rt_free(rt, buf[b]);
    if (temporary[b] && call->async) {
      rj_status sf = rt_free_async(rt, buf[b], ks, s ? &ignored : e);
      if (!s) s = sf;
    }
  }
  rt_leave(rt);
  free(order);
  free(table);
  return s;
}

rj_status jit_treduce_exec(rj_ctx *ctx, const rj_request *req, const uint64_t *src, const int *dev,
                           uint64_t dst, rj_treduce_path path, const rj_options *opt,
                           const jit_tr_call *call, rj_treduce_result *res) {
  double t0 = jit_now_ms();
  jit_tr_call wait = {.stream = NULL, .async = 0}; /* the default ring timeout */
  rj_status s = exec(ctx, req, src, dev, dst, path, opt, call ? call : &wait, res);
  res->call_ms = jit_now_ms() - t0;
  return s;
}
