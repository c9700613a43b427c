/* treduce's public entries: a group of ranks' buffers, checked field by field and turned into a
 * treduce request (rj_treduce_request), run on the GPUs (rj_treduce_run, through
 * jit_treduce_exec: dispatch.c), and the wait for a context's calls in flight (rj_treduce_sync). */
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

/* The exported symbol (the header's macro of this name calls the sized one): for bindings. */
RJ_API void(rj_treduce_group_init)(rj_treduce_group *g) {
  rj_treduce_group_init_sized(g, sizeof *g);
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
  char field[48];
  snprintf(field, sizeof field, "%s.ptr", name);
  rj_status s = jit_aligned(e, field, b->ptr, (unsigned)bytes, "element");
  if (s) return s;
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

/* Checks the group (naming the field) and builds its request; *full = a copy of the group. */
static rj_status group_request(ir_err *e, const rj_treduce_group *caller, rj_treduce_group *full,
                               rj_request *out) {
  if (!caller) return ir_fail(e, RJ_EINVAL, "group: NULL");
  if (caller->struct_size != sizeof *full)
    return ir_fail(e, RJ_EINVAL,
                   "group.struct_size: %u, this library expects %zu (use rj_treduce_group_init; "
                   "a group of a redjit 0.1 header is not read)",
                   caller->struct_size, sizeof *full);
  *full = *caller;
  const rj_treduce_group *g = full;
  if (g->async != 0 && g->async != 1)
    return ir_fail(e, RJ_EINVAL, "async: %d (expected 0 or 1)", g->async);
  if (g->ring_timeout_ms < 0 || g->ring_timeout_ms > 3600000)
    return ir_fail(e, RJ_EINVAL, "ring_timeout_ms: %lld is outside 0..3600000 (0: 10000)",
                   (long long)g->ring_timeout_ms);
  if (g->dynamic != 0 && g->dynamic != 1)
    return ir_fail(e, RJ_EINVAL, "dynamic: %d (expected 0 or 1)", g->dynamic);
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
  rj_request_init(out, RJ_KIND_TREDUCE);
  rj_treduce *t = &out->u.treduce;
  t->op = g->op;
  t->dtype = g->dtype;
  t->combine = g->combine; /* op custom's (validation refuses one for other ops) */
  /* the destination holds the output: a struct state's field combine.result (ir_validate checks
   * the field; a bad one reads as the dtype here) */
  int dbytes = ir_dtype(ir_treduce_result(t)) ? ir_dtype(ir_treduce_result(t))->bytes : bytes;
  if ((s = check_buf(e, "dst", &g->dst, dbytes, root, rname))) return s;
  if (g->dst.device != root->device)
    return ir_fail(e, RJ_EINVAL,
                   "dst.device: %d, but the root's source is on GPU %d (the destination is on the "
                   "root)",
                   g->dst.device, root->device);
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
  t->dynamic = g->dynamic;
  t->invariant = g->invariant;
  if (root->has_strides || g->dst.has_strides) {
    t->has_strides = 1;
    memcpy(t->strides, rst, sizeof rst);
    strides_of(&g->dst, t->dst_strides);
  }
  return ir_validate(out, e);
}

RJ_API rj_status rj_treduce_request(rj_ctx *ctx, const rj_treduce_group *g, rj_request *out) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, out, "out");
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_treduce_group full;
  return jit_done(ctx, group_request(&ctx->err, g, &full, out));
}

/* The size of rj_treduce_result's first version (fields are only appended). */
#define TREDUCE_RESULT_V1 sizeof(rj_treduce_result)

static rj_status run_group(rj_ctx *ctx, const rj_treduce_group *g, const rj_options *opt,
                           rj_treduce_result *res);

RJ_API rj_status rj_treduce_run(rj_ctx *ctx, const rj_treduce_group *g, const rj_options *opt,
                                rj_treduce_result *res) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (res && ir_result_in(&ctx->err, res, TREDUCE_RESULT_V1, "res"))
    return jit_done(ctx, RJ_EINVAL);
  rj_treduce_result out = {.struct_size = sizeof out};
  rj_status s = run_group(ctx, g, opt, &out);
  if (res) ir_result_out(res, &out, sizeof out);
  return jit_done(ctx, s);
}

/* Whether g is the memo's group, byte for byte (its src[] and opt's target and PTX version too). */
static bool memo_hit(const jit_tr_memo *m, const rj_treduce_group *g, const rj_options *opt) {
  const char *target = opt && opt->target ? opt->target : "auto";
  int ptx = opt ? opt->ptx_version : 0;
  /* the struct size first: it was checked when remembered, so that many bytes may be read */
  return m->valid && g->struct_size == m->caller.struct_size &&
         memcmp(g, &m->caller, g->struct_size) == 0 && ptx == m->ptx_version &&
         strcmp(target, m->target) == 0 &&
         memcmp(g->src, m->bufs, sizeof *m->bufs * (size_t)g->ranks) == 0;
}

/* Remembers the checked group g (the caller's bytes), its full form and request; the arrays grow
 * only for more ranks than before.  Not for op custom (its IR text may change behind the
 * pointer) or a long target name. */
static rj_status memo_put(rj_ctx *ctx, jit_tr_memo *m, const rj_treduce_group *g,
                          const rj_treduce_group *full, const rj_request *req,
                          const rj_options *opt) {
  const char *target = opt && opt->target ? opt->target : "auto";
  m->valid = false;
  if (full->op == RJ_OP_CUSTOM || strlen(target) >= sizeof m->target) return RJ_OK;
  if (m->cap < full->ranks) {
    free(m->bufs);
    free(m->src);
    free(m->dev);
    m->bufs = malloc(sizeof *m->bufs * (size_t)full->ranks);
    m->src = malloc(sizeof *m->src * (size_t)full->ranks);
    m->dev = malloc(sizeof *m->dev * (size_t)full->ranks);
    m->cap = m->bufs && m->src && m->dev ? full->ranks : 0;
    if (!m->cap) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  }
  memset(&m->caller, 0, sizeof m->caller);
  memcpy(&m->caller, g, g->struct_size);
  m->group = *full;
  memcpy(m->bufs, full->src, sizeof *m->bufs * (size_t)full->ranks);
  for (int r = 0; r < full->ranks; r++) {
    m->src[r] = full->src[r].ptr;
    m->dev[r] = full->src[r].device;
  }
  m->req = *req;
  snprintf(m->target, sizeof m->target, "%s", target);
  m->ptx_version = opt ? opt->ptx_version : 0;
  m->take = RJ_TREDUCE_AUTO;
  m->split_for = RJ_TREDUCE_AUTO;
  m->valid = true;
  return RJ_OK;
}

/* The request of g, from the context's memo when g repeats the last call's bytes (nothing
 * checked or built again), else checked field by field and remembered. */
static rj_status group_memo(rj_ctx *ctx, const rj_treduce_group *g, const rj_options *opt,
                            const jit_tr_memo **out) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (!st) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  jit_tr_memo *m = &st->memo;
  if (g && memo_hit(m, g, opt)) {
    *out = m;
    return RJ_OK;
  }
  m->valid = false;
  rj_request req;
  rj_treduce_group full;
  rj_status s = group_request(&ctx->err, g, &full, &req);
  if (!s) s = memo_put(ctx, m, g, &full, &req, opt);
  if (s || m->valid) {
    *out = m;
    return s;
  }
  /* not remembered (op custom): this call's own copy in the scratch */
  size_t n = sizeof(jit_tr_memo) + (sizeof(uint64_t) + sizeof(int)) * (size_t)full.ranks;
  char *mem = jit_tr_scratch_call(ctx, n);
  if (!mem) return ctx->err.status;
  jit_tr_memo *c = (jit_tr_memo *)mem;
  memset(c, 0, sizeof *c);
  c->group = full;
  c->req = req;
  c->src = (uint64_t *)(mem + sizeof *c);
  c->dev = (int *)(c->src + full.ranks);
  for (int r = 0; r < full.ranks; r++) {
    c->src[r] = full.src[r].ptr;
    c->dev[r] = full.src[r].device;
  }
  *out = c;
  return RJ_OK;
}

/* rj_treduce_run's work, into the library's full result. */
static rj_status run_group(rj_ctx *ctx, const rj_treduce_group *g, const rj_options *opt,
                           rj_treduce_result *res) {
  const jit_tr_memo *m = NULL;
  rj_status s = group_memo(ctx, g, opt, &m);
  /* an earlier async ring call that gave up is reported before anything else runs */
  if (!s) s = jit_treduce_ring_deferred(ctx, "; this call did not run");
  if (s) return s;
  g = &m->group;
  jit_tr_call call = {.stream = g->stream,
                      .async = g->async,
                      .ring_timeout_ns = g->ring_timeout_ms * 1000000,
                      .memo = m->valid ? (jit_tr_memo *)m : NULL};
  jit_cache_hold(ctx, 1); /* the kernels compiled for this call stay until it launched them */
  s = jit_treduce_exec(ctx, &m->req, m->src, m->dev, g->dst.ptr, g->path, opt, &call, res);
  jit_cache_hold(ctx, -1);
  return s;
}

RJ_API rj_status rj_treduce_sync(rj_ctx *ctx) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = ctx->cuda ? jit_devres_sync(ctx) : RJ_OK; /* no driver: no call ever ran */
  if (!s) s = jit_treduce_ring_deferred(ctx, "");
  return jit_done(ctx, s);
}
