/* `run` and `bench` for treduce requests: rank r's source on GPU r mod the GPU count (so every
 * rank may share one GPU), random sources (CONTRACT.md's distribution, NaNs on request), a
 * poisoned destination (random under accum) between poisoned guards, the float64 oracle (integers
 * exact), every destination element compared (and digested, so that paths compare bit for bit),
 * every byte around and between the destination's elements checked unchanged, and every source
 * (with its guards) checked unchanged.  bench fills large buffers with a repeated random block
 * doubled on the device, so a 1 GiB rank costs no host fill. */
#include "treduce/treduce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD JIT_GUARD

typedef struct rankbuf {
  int dev;
  uint64_t dptr; /* the allocation (guards included) */
  void *host;    /* GUARD + span + GUARD elements, as uploaded */
} rankbuf;

typedef struct setup {
  int N, ndev;
  int64_t span, dspan;
  int bytes;
  rankbuf *rk; /* N sources, then the destination */
  uint64_t *src;
  int *dev;
} setup;

static void teardown(rt_cuda *rt, setup *u) {
  if (u->rk)
    for (int r = 0; r <= u->N; r++) {
      if (u->rk[r].dptr && rt_enter(rt, u->rk[r].dev, &(ir_err){0}) == RJ_OK) {
        rt_free(rt, u->rk[r].dptr);
        rt_leave(rt);
      }
      free(u->rk[r].host);
    }
  free(u->rk);
  free(u->src);
  free(u->dev);
}

/* Allocates b's buffer of `bytes` and uploads the host's first `have` bytes of it; when have <
 * bytes, the rest is that block repeated, doubled on the device (bench: no host fill of huge
 * buffers).  Waits for the device, so that other GPUs' kernels see the data. */
static rj_status upload(rt_cuda *rt, rankbuf *b, size_t bytes, size_t have, ir_err *e) {
  rj_status s = rt_enter(rt, b->dev, e);
  if (s) return s;
  s = rt_alloc(rt, bytes, &b->dptr, e);
  if (!s) s = rt_htod(rt, b->dptr, b->host, have, e);
  for (size_t at = have; !s && at < bytes; at *= 2)
    s = rt_dtod(rt, b->dptr + at, b->dptr, at < bytes - at ? at : bytes - at, e);
  if (!s) s = rt_sync(rt, e);
  rt_leave(rt);
  return s;
}

static rj_status download(rt_cuda *rt, const rankbuf *b, void *out, size_t bytes, ir_err *e) {
  rj_status s = rt_enter(rt, b->dev, e);
  if (s) return s;
  s = rt_dtoh(rt, out, b->dptr, bytes, e);
  rt_leave(rt);
  return s;
}

/* bench: a buffer above this many elements holds a random block of it, repeated (check: every
 * element random, guards poisoned). */
#define BENCH_BLOCK ((int64_t)1 << 20)

/* Sources and destination on their GPUs: random sources (and destination under accum), poisoned
 * guards and destination.  bench: see BENCH_BLOCK. */
static rj_status make(rj_ctx *ctx, rt_cuda *rt, const rj_treduce *t, const ir_treduce_geom *g,
                      uint64_t seed, int nans, bool bench, setup *u) {
  ir_err *e = &ctx->err;
  memset(u, 0, sizeof *u);
  u->N = t->ranks;
  u->bytes = ir_dtype(t->dtype)->bytes;
  u->span = g->src_span;
  u->dspan = g->dst_span;
  rj_status s = rt_device_count(rt, &u->ndev, e);
  if (s) return s;
  if (u->ndev < 1) return ir_fail(e, RJ_ENODEV, "no GPU");
  u->rk = calloc((size_t)u->N + 1, sizeof *u->rk);
  u->src = calloc((size_t)u->N, sizeof *u->src);
  u->dev = calloc((size_t)u->N, sizeof *u->dev);
  if (!u->rk || !u->src || !u->dev) return ir_fail(e, RJ_ENOMEM, "out of memory");
  ir_rng rng;
  ir_rng_seed(&rng, seed);
  for (int r = 0; r <= u->N; r++) {
    int64_t n = r < u->N ? u->span : u->dspan;
    rankbuf *b = &u->rk[r];
    b->dev = r < u->N ? r % u->ndev : t->root % u->ndev;
    int64_t all = n + 2 * GUARD, have = bench && all > BENCH_BLOCK ? BENCH_BLOCK : all;
    b->host = malloc((size_t)have * (size_t)u->bytes);
    if (!b->host) return ir_fail(e, RJ_ENOMEM, "out of memory (%lld elements)", (long long)have);
    ir_fill_poison(t->dtype, b->host, have);
    if (have < all) /* bench, large: a random block (guards included), repeated */
      ir_fill_random(&rng, t->dtype, b->host, have);
    else if (r < u->N || t->accum)
      ir_fill_random(&rng, t->dtype, (char *)b->host + (size_t)GUARD * (size_t)u->bytes, n);
    if ((s = upload(rt, b, (size_t)all * (size_t)u->bytes, (size_t)have * (size_t)u->bytes, e)))
      return s;
  }
  if (ir_dtype(t->dtype)->is_float && u->span > 0) /* NaNs in random ranks' sources */
    for (int i = 0; i < nans; i++) {
      int r = (int)(ir_rng_next(&rng) % (uint64_t)u->N);
      int64_t at = (int64_t)(ir_rng_next(&rng) % (uint64_t)u->span);
      rankbuf *b = &u->rk[r];
      ir_store_f64(t->dtype, (char *)b->host + (size_t)GUARD * (size_t)u->bytes, at, NAN);
      if ((s = rt_enter(rt, b->dev, e))) return s;
      s = rt_htod(rt, b->dptr + (uint64_t)(GUARD + at) * (uint64_t)u->bytes,
                  (char *)b->host + (size_t)(GUARD + at) * (size_t)u->bytes, (size_t)u->bytes, e);
      if (!s) s = rt_sync(rt, e);
      rt_leave(rt);
      if (s) return s;
    }
  for (int r = 0; r < u->N; r++) {
    u->src[r] = u->rk[r].dptr + (uint64_t)GUARD * (uint64_t)u->bytes;
    u->dev[r] = u->rk[r].dev;
  }
  return RJ_OK;
}

static void copy_result(rj_check_result *res, const rj_treduce_result *tr) {
  snprintf(res->variant, sizeof res->variant, "%s", tr->variant);
  snprintf(res->target, sizeof res->target, "%s", tr->target);
  res->compile_ms = tr->compile_ms;
  res->load_ms = tr->load_ms;
  res->kernel_ms = tr->ms;
}

static rj_status check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                       rj_treduce_path path, rj_check_result *res, rj_treduce_result *tr) {
  const rj_treduce *t = &req->u.treduce;
  ir_err *e = &ctx->err;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  rt_cuda *rt = NULL;
  setup u;
  rj_status s = jit_cuda(ctx, &rt);
  if (s) return s;
  void *got = NULL;
  unsigned char *seen = NULL;
  if ((s = make(ctx, rt, t, &g, o->seed, o->nan_count, false, &u))) goto out;
  rj_options opt = o->compile;
  s = jit_treduce_exec(ctx, req, u.src, u.dev, u.rk[u.N].dptr + (uint64_t)GUARD * (uint64_t)u.bytes,
                       path, &opt, NULL, tr);
  copy_result(res, tr);
  if (s) goto out;
  /* the destination */
  int64_t most = (u.span > u.dspan ? u.span : u.dspan) + 2 * GUARD;
  got = malloc((size_t)most * (size_t)u.bytes);
  seen = calloc((size_t)u.dspan + 1, 1);
  if (!got || !seen) {
    s = ir_fail(e, RJ_ENOMEM, "out of memory");
    goto out;
  }
  size_t dbytes = (size_t)(u.dspan + 2 * GUARD) * (size_t)u.bytes;
  if ((s = download(rt, &u.rk[u.N], got, dbytes, e))) goto out;
  const void *old = (char *)u.rk[u.N].host + (size_t)GUARD * (size_t)u.bytes;
  const void *d = (char *)got + (size_t)GUARD * (size_t)u.bytes;
  uint64_t digest = 0xcbf29ce484222325u; /* FNV-1a 64 of the elements, in element order */
  for (int64_t i = 0; i < g.numel; i++) {
    int64_t rem = i, so = 0, dof = 0;
    for (int k = 4; k >= 0; k--) {
      int64_t c = rem % g.shape[k];
      rem /= g.shape[k];
      so += c * g.src_st[k];
      dof += c * g.dst_st[k];
    }
    ir_value ref;
    ir_oracle_init(t->op, t->dtype, &ref);
    if (t->accum) ir_oracle_add(t->op, t->dtype, t->nan, &ref, old, dof);
    for (int k = 0; k < u.N; k++) {
      int r = k == 0 ? t->root : (k - 1 < t->root ? k - 1 : k);
      ir_oracle_add(t->op, t->dtype, t->nan, &ref,
                    (char *)u.rk[r].host + (size_t)GUARD * (size_t)u.bytes, so);
    }
    for (int k = 0; k < u.bytes; k++)
      digest = (digest ^ ((const unsigned char *)d)[dof * u.bytes + k]) * 0x100000001b3u;
    double ae, re;
    bool ok = ir_compare(t->op, t->dtype, &ref, d, dof, &ae, &re);
    res->checked++;
    seen[dof] = 1;
    if (!isinf(ae) && ae > res->max_abs_err) res->max_abs_err = ae;
    if (!isinf(re) && re > res->max_rel_err) res->max_rel_err = re;
    if (!ok) {
      res->wrong++;
      if (isinf(ae)) res->max_abs_err = res->max_rel_err = INFINITY;
      jit_note(res, "dst element %lld (offset %lld): got %.17g (bits 0x%llx), expected %.17g",
               (long long)i, (long long)dof, ir_load_f64(t->dtype, d, dof),
               (unsigned long long)ir_load_bits(t->dtype, d, dof),
               ir_dtype(t->dtype)->is_float ? ref.f : (double)(int64_t)ref.u);
    }
  }
  tr->dst_digest = digest;
  const void *dall = got, *oall = u.rk[u.N].host;
  for (int64_t i = 0; i < u.dspan + 2 * GUARD; i++) {
    int64_t off = i - GUARD;
    if (off >= 0 && off < u.dspan && seen[off]) continue;
    if (ir_load_bits(t->dtype, dall, i) != ir_load_bits(t->dtype, oall, i)) {
      res->outside_written++;
      jit_note(res, "destination offset %lld, outside its elements, was written", (long long)off);
    }
  }
  /* the sources, guards included */
  for (int r = 0; r < u.N; r++) {
    size_t sb = (size_t)(u.span + 2 * GUARD) * (size_t)u.bytes;
    if ((s = download(rt, &u.rk[r], got, sb, e))) goto out;
    if (memcmp(got, u.rk[r].host, sb)) {
      res->outside_written++;
      jit_note(res, "rank %d's source (or its guards) changed", r);
    }
  }
  res->ok = res->wrong == 0 && res->outside_written == 0;
out:
  teardown(rt, &u);
  free(got);
  free(seen);
  return s;
}

/* The public entry points' common start: defaults, validation, the kind and the path. */
static rj_status begin(rj_ctx *ctx, const rj_request *req, const rj_check_opts **o,
                       rj_check_opts *full, rj_treduce_path path, const char *who) {
  jit_check_opts(*o, full);
  *o = full;
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = jit_validate(ctx, req);
  if (!s && req->kind != RJ_KIND_TREDUCE)
    s = ir_fail(&ctx->err, RJ_EINVAL, "kind: %s, %s runs treduce requests", ir_kind_name(req->kind),
                who);
  if (!s && (unsigned)path > RJ_TREDUCE_RING)
    s = ir_fail(&ctx->err, RJ_EINVAL, "path: unknown value %d", path);
  return s;
}

static rj_status bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                       rj_treduce_path path, rj_bench_result *res, rj_treduce_result *tr);

/* rj_treduce_check (cres) and rj_treduce_bench (bres): results cleared, the request and path
 * checked, then the run. */
static rj_status entry(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                       rj_treduce_path path, rj_check_result *cres, rj_bench_result *bres,
                       rj_treduce_result *tres, const char *who) {
  rj_check_opts dflt;
  rj_treduce_result tl;
  if (!tres) tres = &tl;
  if (cres) memset(cres, 0, sizeof *cres);
  if (bres) memset(bres, 0, sizeof *bres);
  memset(tres, 0, sizeof *tres);
  rj_status s = begin(ctx, req, &o, &dflt, path, who);
  if (!s) s = cres ? check(ctx, req, o, path, cres, tres) : bench(ctx, req, o, path, bres, tres);
  return jit_status(ctx, s);
}

RJ_API rj_status rj_treduce_check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                                  rj_treduce_path path, rj_check_result *res,
                                  rj_treduce_result *tres) {
  JIT_NEED(ctx, res, "res");
  return entry(ctx, req, o, path, res, NULL, tres, "rj_treduce_check");
}

rj_status jit_check_treduce(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_check_result *res) {
  rj_treduce_result tr;
  memset(&tr, 0, sizeof tr);
  return check(ctx, req, o, RJ_TREDUCE_AUTO, res, &tr);
}

static rj_status bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                       rj_treduce_path path, rj_bench_result *res, rj_treduce_result *tr) {
  const rj_treduce *t = &req->u.treduce;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  rt_cuda *rt = NULL;
  setup u;
  rj_status s = jit_cuda(ctx, &rt);
  if (s) return s;
  if ((s = make(ctx, rt, t, &g, o->seed, 0, true, &u))) goto out;
  double bytes = (double)g.numel * ir_dtype(t->dtype)->bytes * (t->ranks + 1 + t->accum);
  enum { WARM = 3, MAXRUNS = 25 };
  int runs = bytes > (double)(1 << 28) ? 7 : MAXRUNS;
  double ms[MAXRUNS], call[MAXRUNS];
  rj_options opt = o->compile;
  uint64_t dst = u.rk[u.N].dptr + (uint64_t)GUARD * (uint64_t)u.bytes;
  for (int i = 0; !s && i < WARM + runs; i++) {
    memset(tr, 0, sizeof *tr);
    s = jit_treduce_exec(ctx, req, u.src, u.dev, dst, path, &opt, NULL, tr);
    if (i >= WARM) {
      ms[i - WARM] = tr->ms;
      call[i - WARM] = tr->call_ms;
    }
  }
  snprintf(res->variant, sizeof res->variant, "%s", tr->variant);
  snprintf(res->target, sizeof res->target, "%s", tr->target);
  if (!s) {
    rj_bench_result calls;
    jit_bench_done(call, runs, bytes, &calls); /* the median host time of a whole call */
    jit_bench_done(ms, runs, bytes, res);
    tr->ms = res->kernel_ms;
    tr->call_ms = calls.kernel_ms;
  }
out:
  teardown(rt, &u);
  return s;
}

RJ_API rj_status rj_treduce_bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                                  rj_treduce_path path, rj_bench_result *res,
                                  rj_treduce_result *tres) {
  JIT_NEED(ctx, res, "res");
  return entry(ctx, req, o, path, NULL, res, tres, "rj_treduce_bench");
}

rj_status jit_bench_treduce(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_bench_result *res) {
  rj_treduce_result tr;
  memset(&tr, 0, sizeof tr);
  return bench(ctx, req, o, RJ_TREDUCE_AUTO, res, &tr);
}
