/* `run` and `bench` for treduce requests: rank r's source on GPU r mod the GPU count (so every
 * rank may share one GPU), random sources (docs/CLI.md's distribution, NaNs on request), a
 * poisoned destination (random under accum) between poisoned guards, the float64 oracle (integers
 * exact), every destination element compared (and digested, so that paths compare bit for bit),
 * every byte around and between the destination's elements checked unchanged, and every source
 * (with its guards) checked unchanged.  bench fills large buffers with a repeated random block,
 * so a 1 GiB rank costs no host fill.  The reduction itself is rj_treduce_run's: each rank's
 * buffer, the destination and the path go in an rj_treduce_group. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rankbuf {
  int dev;
  rj_devptr dptr; /* the allocation (guards included) */
  void *host;     /* HR_GUARD + span + HR_GUARD elements, as uploaded */
} rankbuf;

typedef struct setup {
  int N, ndev;
  int64_t span, dspan;
  int bytes;
  rankbuf *rk;         /* N sources, then the destination */
  rj_treduce_buf *buf; /* the group's: N sources, then the destination */
} setup;

static void teardown(rj_ctx *ctx, setup *u, rj_status s) {
  if (u->rk)
    for (int r = 0; r <= u->N; r++) {
      hr_free(ctx, u->rk[r].dev, u->rk[r].dptr, s);
      free(u->rk[r].host);
    }
  free(u->rk);
  free(u->buf);
}

/* Allocates b's buffer of `bytes` and uploads the host's first `have` bytes of it; when have <
 * bytes, the rest is that block repeated (bench: no host fill of huge buffers).  Waits for the
 * device, so that other GPUs' kernels see the data. */
static rj_status upload(rj_ctx *ctx, rankbuf *b, size_t bytes, size_t have) {
  rj_status s = rj_device_alloc(ctx, b->dev, bytes, &b->dptr);
  for (size_t at = 0; !s && at < bytes; at += have)
    s = rj_memcpy_htod(ctx, b->dev, b->dptr + at, b->host, have < bytes - at ? have : bytes - at);
  if (!s) s = rj_device_sync(ctx, b->dev);
  return s;
}

/* bench: a buffer above this many elements holds a random block of it, repeated (check: every
 * element random, guards poisoned). */
#define BENCH_BLOCK ((int64_t)1 << 20)

/* Buffer r (the destination when r == N) on its GPU: random sources (and destination under
 * accum), poisoned guards and destination.  bench: see BENCH_BLOCK. */
static rj_status make_rank(rj_ctx *ctx, const rj_treduce *t, int r, bool bench, hr_rng *rng,
                           setup *u) {
  int64_t n = r < u->N ? u->span : u->dspan;
  rankbuf *b = &u->rk[r];
  b->dev = r < u->N ? r % u->ndev : t->root % u->ndev;
  int64_t all = n + 2 * HR_GUARD, have = bench && all > BENCH_BLOCK ? BENCH_BLOCK : all;
  b->host = malloc((size_t)have * (size_t)u->bytes);
  if (!b->host)
    return rj_error_set(ctx, RJ_ENOMEM, "out of memory (%lld elements)", (long long)have);
  hr_fill_poison(t->dtype, b->host, have);
  if (have < all) /* bench, large: a random block (guards included), repeated */
    hr_fill_random(rng, t->dtype, b->host, have);
  else if (r < u->N || t->accum)
    hr_fill_op(rng, t->op, t->dtype, (char *)b->host + (size_t)HR_GUARD * (size_t)u->bytes, n,
               t->ranks);
  return upload(ctx, b, (size_t)all * (size_t)u->bytes, (size_t)have * (size_t)u->bytes);
}

/* NaNs in random ranks' sources, on the host and the device. */
static rj_status make_nans(rj_ctx *ctx, const rj_treduce *t, int nans, hr_rng *rng, setup *u) {
  rj_status s = RJ_OK;
  if (!ir_dtype(t->dtype)->is_float || u->span <= 0) return s;
  for (int i = 0; !s && i < nans; i++) {
    int r = (int)(hr_rng_next(rng) % (uint64_t)u->N);
    int64_t at = (int64_t)(hr_rng_next(rng) % (uint64_t)u->span);
    rankbuf *b = &u->rk[r];
    char *elem = (char *)b->host + (size_t)(HR_GUARD + at) * (size_t)u->bytes;
    hr_store_f64(t->dtype, elem, 0, NAN);
    s = rj_memcpy_htod(ctx, b->dev, b->dptr + (uint64_t)(HR_GUARD + at) * (uint64_t)u->bytes, elem,
                       (size_t)u->bytes);
    if (!s) s = rj_device_sync(ctx, b->dev);
  }
  return s;
}

/* The group's buffer of rank r (the destination when r == N). */
static void group_buf(const rj_treduce *t, const setup *u, int r, rj_treduce_buf *b) {
  memset(b, 0, sizeof *b);
  b->ptr = u->rk[r].dptr + (uint64_t)HR_GUARD * (uint64_t)u->bytes;
  b->device = u->rk[r].dev;
  b->ndim = t->ndim;
  memcpy(b->shape, t->shape, sizeof b->shape);
  b->has_strides = t->has_strides;
  memcpy(b->strides, r < u->N ? t->strides : t->dst_strides, sizeof b->strides);
}

/* Sources and destination on their GPUs, and the group's buffers. */
static rj_status make(rj_ctx *ctx, const rj_treduce *t, const ir_treduce_geom *g, uint64_t seed,
                      int nans, bool bench, setup *u) {
  memset(u, 0, sizeof *u);
  u->N = t->ranks;
  u->bytes = ir_dtype(t->dtype)->bytes;
  u->span = g->src_span;
  u->dspan = g->dst_span;
  rj_status s = rj_device_count(ctx, &u->ndev);
  if (s) return s;
  if (u->ndev < 1) return rj_error_set(ctx, RJ_ENODEV, "no GPU");
  u->rk = calloc((size_t)u->N + 1, sizeof *u->rk);
  u->buf = calloc((size_t)u->N + 1, sizeof *u->buf);
  if (!u->rk || !u->buf) return hr_nomem(ctx);
  hr_rng rng;
  hr_rng_seed(&rng, seed);
  for (int r = 0; !s && r <= u->N; r++)
    s = make_rank(ctx, t, r, bench, &rng, u);
  if (!s) s = make_nans(ctx, t, nans, &rng, u);
  for (int r = 0; !s && r <= u->N; r++)
    group_buf(t, u, r, &u->buf[r]);
  return s;
}

/* rj_treduce_run of the request over u's buffers on `path`. */
static rj_status run(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                     rj_treduce_path path, const setup *u, rj_treduce_result *tr) {
  const rj_treduce *t = &req->u.treduce;
  rj_treduce_group grp;
  rj_treduce_group_init(&grp);
  grp.ranks = t->ranks;
  grp.root = t->root;
  grp.src = u->buf;
  grp.dst = u->buf[u->N];
  grp.op = t->op;
  grp.dtype = t->dtype;
  grp.nan = t->nan;
  grp.tile[0] = t->tile[0];
  grp.tile[1] = t->tile[1];
  grp.pingpong = t->pingpong;
  grp.accum = t->accum;
  grp.dynamic = t->dynamic;
  grp.path = path;
  grp.combine = t->combine; /* op custom (bench only: check has no oracle for it) */
  return rj_treduce_run(ctx, &grp, &o->compile, tr);
}

static void copy_result(rj_check_result *res, const rj_treduce_result *tr) {
  snprintf(res->variant, sizeof res->variant, "%s", tr->variant);
  snprintf(res->target, sizeof res->target, "%s", tr->target);
  res->compile_ms = tr->compile_ms;
  snprintf(res->cache, sizeof res->cache, "%s", tr->cache);
  res->cache_ms = tr->cache_ms;
  res->load_ms = tr->load_ms;
  res->kernel_ms = tr->ms;
}

/* Every destination element (d: the download's payload) against the fold of the ranks' in fold
 * order (the root's first, after the old value under accum), or under no_check only written (not
 * poison; accum: nothing); seen[offset] marks the elements; returns the digest (FNV-1a 64 of the
 * elements' bytes, in element order). */
static uint64_t compare_elements(const rj_treduce *t, const ir_treduce_geom *g, const setup *u,
                                 const void *d, bool no_check, unsigned char *seen,
                                 rj_check_result *res) {
  const void *old = (char *)u->rk[u->N].host + (size_t)HR_GUARD * (size_t)u->bytes;
  uint64_t digest = 0xcbf29ce484222325u;
  for (int64_t i = 0; i < g->numel; i++) {
    int64_t rem = i, so = 0, dof = 0;
    for (int k = 4; k >= 0; k--) {
      int64_t c = rem % g->shape[k];
      rem /= g->shape[k];
      so += c * g->src_st[k];
      dof += c * g->dst_st[k];
    }
    for (int k = 0; k < u->bytes; k++)
      digest = (digest ^ ((const unsigned char *)d)[dof * u->bytes + k]) * 0x100000001b3u;
    seen[dof] = 1;
    if (no_check) {
      if (!t->accum && hr_is_poison(t->dtype, d, dof)) {
        res->wrong++;
        hr_note(res,
                "dst element %lld (offset %lld) was never written (no_check: values not "
                "compared)",
                (long long)i, (long long)dof);
      }
      continue;
    }
    hr_value ref;
    hr_oracle_init(t->op, t->dtype, &ref);
    if (t->accum) hr_oracle_add(t->op, t->dtype, t->nan, &ref, old, dof);
    for (int k = 0; k < u->N; k++) {
      int r = ir_treduce_rank_at(t, k);
      hr_oracle_add(t->op, t->dtype, t->nan, &ref,
                    (char *)u->rk[r].host + (size_t)HR_GUARD * (size_t)u->bytes, so);
    }
    hr_oracle_finish(t->op, &ref, ir_treduce_mean_count(t)); /* op mean: sum / ranks */
    hr_check_elem(res, t->op, t->dtype, &ref, d, dof, "dst element %lld (offset %lld)",
                  (long long)i, (long long)dof);
  }
  return digest;
}

/* Every element of the destination's download (guards included) that is not one of its
 * elements holds what was uploaded. */
static void compare_outside(const rj_treduce *t, const setup *u, const void *got,
                            const unsigned char *seen, rj_check_result *res) {
  const void *was = u->rk[u->N].host;
  for (int64_t i = 0; i < u->dspan + 2 * HR_GUARD; i++) {
    int64_t off = i - HR_GUARD;
    if (off >= 0 && off < u->dspan && seen[off]) continue;
    if (hr_load_bits(t->dtype, got, i) != hr_load_bits(t->dtype, was, i)) {
      hr_outside(res, 1, "destination offset %lld, outside its elements, was written",
                 (long long)off);
    }
  }
}

/* The destination checked, then the sources, guards included, unchanged. */
static rj_status verify(rj_ctx *ctx, const rj_treduce *t, const ir_treduce_geom *g, const setup *u,
                        bool no_check, rj_check_result *res, rj_treduce_result *tr) {
  int64_t most = (u->span > u->dspan ? u->span : u->dspan) + 2 * HR_GUARD;
  void *got = malloc((size_t)most * (size_t)u->bytes);
  unsigned char *seen = calloc((size_t)u->dspan + 1, 1);
  const rankbuf *dst = &u->rk[u->N];
  rj_status s = !got || !seen ? hr_nomem(ctx) : RJ_OK;
  if (!s)
    s = rj_memcpy_dtoh(ctx, dst->dev, got, dst->dptr,
                       (size_t)(u->dspan + 2 * HR_GUARD) * (size_t)u->bytes);
  if (!s) {
    const void *d = (char *)got + (size_t)HR_GUARD * (size_t)u->bytes;
    tr->dst_digest = compare_elements(t, g, u, d, no_check, seen, res);
    compare_outside(t, u, got, seen, res);
  }
  for (int r = 0; !s && r < u->N; r++) {
    size_t sb = (size_t)(u->span + 2 * HR_GUARD) * (size_t)u->bytes;
    s = rj_memcpy_dtoh(ctx, u->rk[r].dev, got, u->rk[r].dptr, sb);
    if (!s && memcmp(got, u->rk[r].host, sb)) {
      hr_outside(res, 1, "rank %d's source (or its guards) changed", r);
    }
  }
  if (!s) res->ok = res->wrong == 0 && res->outside_written == 0;
  free(got);
  free(seen);
  return s;
}

static rj_status check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                       rj_treduce_path path, const ir_treduce_geom *g, const setup *u,
                       rj_check_result *res, rj_treduce_result *tr) {
  rj_status s = run(ctx, req, o, path, u, tr);
  copy_result(res, tr);
  return s ? s : verify(ctx, &req->u.treduce, g, u, o->no_check, res, tr);
}

/* bench's state: the buffers, and every timed run's whole-call host time. */
typedef struct trbench {
  const rj_request *req;
  const rj_check_opts *o;
  rj_treduce_path path;
  const setup *u;
  rj_treduce_result *tr;
  int warm;
  double *call;
} trbench;

static rj_status bench_run(rj_ctx *ctx, void *ud, int i, double *ms) {
  trbench *b = ud;
  rj_status s = run(ctx, b->req, b->o, b->path, b->u, b->tr);
  *ms = b->tr->ms;
  if (i >= b->warm) b->call[i - b->warm] = b->tr->call_ms;
  return s;
}

static rj_status bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                       rj_treduce_path path, const ir_treduce_geom *g, const setup *u,
                       rj_bench_result *res, rj_treduce_result *tr) {
  const rj_treduce *t = &req->u.treduce;
  enum { WARM = 3, MAXRUNS = 25 };
  double ms[MAXRUNS], call[MAXRUNS];
  double bytes = (double)g->numel * ir_dtype(t->dtype)->bytes * (t->ranks + 1 + t->accum);
  int runs = bytes > (double)(1 << 28) ? 7 : MAXRUNS;
  trbench b = {.req = req, .o = o, .path = path, .u = u, .tr = tr, .warm = WARM, .call = call};
  rj_status s = hr_bench_loop(ctx, WARM, runs, bench_run, &b, ms, bytes, res);
  snprintf(res->variant, sizeof res->variant, "%s", tr->variant);
  snprintf(res->target, sizeof res->target, "%s", tr->target);
  if (!s) {
    rj_bench_result calls = {.struct_size = sizeof(rj_bench_result)};
    hr_bench_done(call, runs, bytes, &calls); /* the median host time of a whole call */
    tr->ms = res->kernel_ms;
    tr->call_ms = calls.kernel_ms;
  }
  return s;
}

rj_status hr_treduce(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                     rj_treduce_path path, rj_check_result *cres, rj_bench_result *bres,
                     rj_treduce_result *tres) {
  ir_treduce_geom g;
  ir_treduce_facts(&req->u.treduce, &g);
  if (cres && req->u.treduce.op == RJ_OP_CUSTOM && !o->no_check) /* before any launch */
    return rj_error_set(ctx, RJ_EUNSUPPORTED,
                        "op: \"custom\" has no CPU oracle (the caller's IR does not run on the "
                        "CPU); check it with rj_treduce_run against your own reference, or "
                        "launch it unchecked (no_check, `redjit run --no-check`)");
  if (req->u.treduce.op == RJ_OP_CUSTOM && req->u.treduce.combine.nfields)
    return rj_error_set(ctx, RJ_EUNSUPPORTED,
                        "combine.state: rj_check (no_check) and rj_bench of kind treduce run "
                        "scalar states (their buffers are of the dtype); launch a struct state "
                        "with rj_treduce_run");
  if (req->u.treduce.mean_count) /* a group has no such field: rj_treduce_run sets it itself */
    return rj_error_set(ctx, RJ_EUNSUPPORTED,
                        "mean_count: %lld; rj_treduce_run sets it on its own launches (a group "
                        "divides by its ranks)",
                        (long long)req->u.treduce.mean_count);
  setup u;
  rj_status s = make(ctx, &req->u.treduce, &g, o->seed, cres ? o->nan_count : 0, !cres, &u);
  if (!s && cres) s = check(ctx, req, o, path, &g, &u, cres, tres);
  if (!s && !cres) s = bench(ctx, req, o, path, &g, &u, bres, tres);
  teardown(ctx, &u, s);
  return s;
}

/* rj_treduce_check (cres) and rj_treduce_bench (bres): results cleared, defaults, the request,
 * its kind and the path checked, then the run. */
static rj_status entry(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                       rj_treduce_path path, rj_check_result *cres, rj_bench_result *bres,
                       rj_treduce_result *tres, const char *who) {
  hr_results r;
  rj_check_opts full;
  rj_status s = hr_enter(ctx, o, cres, bres, tres, &r, &full);
  if (s) return s;
  s = rj_request_validate(ctx, req);
  if (!s && req->kind != RJ_KIND_TREDUCE)
    s = rj_error_set(ctx, RJ_EINVAL, "kind: %s, %s runs treduce requests", ir_kind_name(req->kind),
                     who);
  if (!s && (unsigned)path > RJ_TREDUCE_RING)
    s = rj_error_set(ctx, RJ_EINVAL, "path: unknown value %d", path);
  if (!s) s = hr_treduce(ctx, req, &full, path, cres ? &r.check : NULL, &r.bench, &r.treduce);
  hr_results_end(&r, cres, bres, tres);
  return hr_done(ctx, s);
}

RJ_API rj_status rj_treduce_check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                                  rj_treduce_path path, rj_check_result *res,
                                  rj_treduce_result *tres) {
  return entry(ctx, req, o, path, res, NULL, tres, "rj_treduce_check");
}

RJ_API rj_status rj_treduce_bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                                  rj_treduce_path path, rj_bench_result *res,
                                  rj_treduce_result *tres) {
  return entry(ctx, req, o, path, NULL, res, tres, "rj_treduce_bench");
}
