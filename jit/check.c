/* Running a request on the GPU against the CPU oracle (`redjit run`), and timing it
 * (`redjit bench`).  Inputs, poison and tolerances follow CONTRACT.md. */
#include "jit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD JIT_GUARD

/* A device buffer with poisoned guards, mirrored on the host. */
typedef struct dbuf {
  rj_dtype t;
  int64_t n;    /* payload elements */
  void *host;   /* GUARD + n + GUARD elements */
  uint64_t dev; /* device copy of host */
} dbuf;

static void *payload(dbuf *b) {
  return (char *)b->host + (size_t)GUARD * (size_t)ir_dtype(b->t)->bytes;
}

static size_t dbytes(const dbuf *b) {
  return (size_t)(b->n + 2 * GUARD) * (size_t)ir_dtype(b->t)->bytes;
}

static rj_status dbuf_make(rt_cuda *rt, dbuf *b, rj_dtype t, int64_t n, ir_err *e) {
  b->t = t;
  b->n = n;
  b->dev = 0;
  b->host = malloc(dbytes(b));
  if (!b->host) return ir_fail(e, RJ_ENOMEM, "out of memory");
  ir_fill_poison(t, b->host, n + 2 * GUARD);
  return rt_alloc(rt, dbytes(b), &b->dev, e);
}

static rj_status dbuf_up(rt_cuda *rt, dbuf *b, ir_err *e) {
  return rt_htod(rt, b->dev, b->host, dbytes(b), e);
}

static void dbuf_free(rt_cuda *rt, dbuf *b) {
  if (rt) rt_free(rt, b->dev);
  free(b->host);
  b->host = NULL;
  b->dev = 0;
}

/* Downloads b into out (GUARD + n + GUARD elements) and counts changed guard elements. */
static rj_status dbuf_down(rt_cuda *rt, dbuf *b, void *out, int64_t *guard_hits, ir_err *e) {
  rj_status s = rt_dtoh(rt, out, b->dev, dbytes(b), e);
  if (s) return s;
  for (int64_t i = 0; i < GUARD; i++) {
    *guard_hits += !ir_is_poison(b->t, out, i);
    *guard_hits += !ir_is_poison(b->t, out, GUARD + b->n + i);
  }
  return RJ_OK;
}

void jit_note(rj_check_result *res, const char *fmt, ...) {
  if (res->first_error[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->first_error, sizeof res->first_error, fmt, ap);
  va_end(ap);
}

static void check_elem(rj_check_result *res, const rj_tile *t, const ir_value *ref, const void *got,
                       int64_t i, const char *where) {
  double ae, re;
  bool ok = ir_compare(t->op, t->dtype, ref, got, i, &ae, &re);
  res->checked++;
  if (!isinf(ae) && ae > res->max_abs_err) res->max_abs_err = ae;
  if (!isinf(re) && re > res->max_rel_err) res->max_rel_err = re;
  if (!ok) {
    res->wrong++;
    if (isinf(ae)) res->max_abs_err = res->max_rel_err = INFINITY;
    jit_note(res, "%s: got %.17g (bits 0x%llx), expected %.17g", where,
             ir_load_f64(t->dtype, got, i), (unsigned long long)ir_load_bits(t->dtype, got, i),
             ir_dtype(t->dtype)->is_float ? ref->f : (double)(int64_t)ref->u);
  }
}

/* The tile harness: see passes/harness.c for the kernel side. */
static rj_status check_tile(rj_ctx *ctx, rt_cuda *rt, rj_kernel *k, const rj_check_opts *o,
                            rj_check_result *res) {
  const rj_tile *t = &k->req.u.tile;
  ir_err *e = &ctx->err;
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  int64_t nsrc = ir_numel(&t->src), ndst = ir_numel(&t->dst);
  int bytes = ir_dtype(t->dtype)->bytes;
  bool local = t->src.mem == RJ_MEM_LOCAL;
  int Ts = t->scope == RJ_SCOPE_THREAD ? 1 : t->scope == RJ_SCOPE_CTA ? f.threads : f.scope_threads;
  ir_placement pd = {0};
  dbuf src = {0}, dst = {0}, out = {0};
  ir_value *ref = NULL;
  int64_t *dsp = NULL;
  void *dst_init = NULL, *got = NULL;
  rj_status s = RJ_OK;
  ir_rng g;
  ir_rng_seed(&g, o->seed);
  /* 1. inputs: random src (with NaNs if asked), dst random under accum else poison */
  if ((s = dbuf_make(rt, &src, t->dtype, nsrc, e))) goto out;
  if ((s = dbuf_make(rt, &dst, t->dtype, ndst, e))) goto out;
  ir_fill_random(&g, t->dtype, payload(&src), nsrc);
  if (ir_dtype(t->dtype)->is_float)
    for (int i = 0; i < o->nan_count; i++)
      ir_store_f64(t->dtype, payload(&src), (int64_t)(ir_rng_next(&g) % (uint64_t)nsrc), NAN);
  if (t->accum) ir_fill_random(&g, t->dtype, payload(&dst), ndst);
  dst_init = malloc((size_t)ndst * (size_t)bytes);
  ref = malloc(sizeof(ir_value) * (size_t)f.spatial_len);
  dsp = malloc(sizeof(int64_t) * (size_t)ndst);
  if (!dst_init || !ref || !dsp) {
    s = ir_fail(e, RJ_ENOMEM, "out of memory");
    goto out;
  }
  memcpy(dst_init, payload(&dst), (size_t)ndst * (size_t)bytes);
  if ((s = dbuf_up(rt, &src, e)) || (s = dbuf_up(rt, &dst, e))) goto out;
  /* 2. the reference */
  ir_oracle_tile(t, payload(&src), t->accum ? dst_init : NULL, ref);
  for (int64_t y = 0; y < ndst; y++)
    dsp[y] = -1;
  for (int64_t sp = 0; sp < f.spatial_len; sp++)
    dsp[ir_dst_offset(t, sp)] = sp;
  /* 3. launch */
  void *args[3] = {&src.dev, &dst.dev, &out.dev};
  uint64_t srcp = src.dev + (uint64_t)GUARD * (uint64_t)bytes;
  uint64_t dstp = dst.dev + (uint64_t)GUARD * (uint64_t)bytes, outp = 0;
  args[0] = &srcp;
  args[1] = &dstp;
  if (local) {
    if ((s = ir_place(&t->dst, Ts, "dst", &pd, e))) goto out;
    if ((s = dbuf_make(rt, &out, t->dtype, (int64_t)f.threads * pd.nslots, e))) goto out;
    if ((s = dbuf_up(rt, &out, e))) goto out;
    outp = out.dev + (uint64_t)GUARD * (uint64_t)bytes;
    args[2] = &outp;
  }
  if ((s = rt_launch(rt, k->function, k->grid, k->block, 0, args, &res->kernel_ms, e))) goto out;
  /* 4. compare */
  int64_t guard_hits = 0;
  char where[96];
  size_t most = dbytes(&src);
  if (dbytes(&dst) > most) most = dbytes(&dst);
  if (local && dbytes(&out) > most) most = dbytes(&out);
  got = malloc(most);
  if (!got) {
    s = ir_fail(e, RJ_ENOMEM, "out of memory");
    goto out;
  }
  if ((s = dbuf_down(rt, &src, got, &guard_hits, e))) goto out;
  if (memcmp((char *)got + GUARD * bytes, payload(&src), (size_t)nsrc * (size_t)bytes)) {
    res->outside_written++;
    jit_note(res, "the source buffer changed");
  }
  if (!local) {
    if ((s = dbuf_down(rt, &dst, got, &guard_hits, e))) goto out;
    void *d = (char *)got + GUARD * bytes;
    for (int64_t y = 0; y < ndst; y++) {
      if (dsp[y] >= 0) {
        snprintf(where, sizeof where, "dst element %lld", (long long)y);
        check_elem(res, t, &ref[dsp[y]], d, y, where);
      } else if (ir_load_bits(t->dtype, d, y) != ir_load_bits(t->dtype, dst_init, y)) {
        res->outside_written++;
        jit_note(res, "dst element %lld, outside the destination region, was written",
                 (long long)y);
      }
    }
  } else {
    if ((s = dbuf_down(rt, &dst, got, &guard_hits, e))) goto out;
    if ((s = dbuf_down(rt, &out, got, &guard_hits, e))) goto out;
    void *d = (char *)got + GUARD * bytes;
    for (int tid = 0; tid < f.threads; tid++) {
      int inst = tid / Ts, u = tid % Ts;
      bool on = t->active == RJ_ACTIVE_ALL || inst == t->active_index;
      for (int j = 0; j < pd.nslots; j++) {
        int64_t i = (int64_t)tid * pd.nslots + j, y = on ? pd.elem[(int64_t)u * pd.nslots + j] : -1;
        if (!on) {
          if (!ir_is_poison(t->dtype, d, i)) {
            res->outside_written++;
            jit_note(res, "thread %d is not active but wrote its registers", tid);
          }
        } else if (y >= 0 && dsp[y] >= 0) {
          snprintf(where, sizeof where, "thread %d dst slot %d (element %lld)", tid, j,
                   (long long)y);
          check_elem(res, t, &ref[dsp[y]], d, i, where);
        } else if (y >= 0 && ir_load_bits(t->dtype, d, i) != ir_load_bits(t->dtype, dst_init, y)) {
          res->outside_written++;
          jit_note(res,
                   "thread %d dst slot %d holds element %lld outside the region, and it changed",
                   tid, j, (long long)y);
        }
      }
    }
  }
  if (guard_hits) {
    res->outside_written += guard_hits;
    jit_note(res, "%lld elements around the device buffers were written", (long long)guard_hits);
  }
  res->ok = res->wrong == 0 && res->outside_written == 0;
out:
  ir_placement_free(&pd);
  dbuf_free(rt, &src);
  dbuf_free(rt, &dst);
  dbuf_free(rt, &out);
  free(ref);
  free(dsp);
  free(dst_init);
  free(got);
  return s;
}

rj_status jit_prepare(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel **k,
                      rt_cuda **rt, double *load_ms) {
  rj_status s = rj_compile(ctx, req, &o->compile, k);
  if (s) return s;
  if ((s = jit_cuda(ctx, rt))) return s;
  if ((s = rt_enter(*rt, o->compile.device, &ctx->err))) return s;
  if ((s = jit_load(ctx, *k, o->compile.device, load_ms))) rt_leave(*rt);
  return s;
}

rj_status jit_prepare_check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_kernel **k, rt_cuda **rt, rj_check_result *res) {
  *k = NULL;
  rj_status s = jit_prepare(ctx, req, o, k, rt, &res->load_ms);
  if (*k) {
    snprintf(res->variant, sizeof res->variant, "%s", (*k)->variant);
    snprintf(res->target, sizeof res->target, "%s", (*k)->target);
    res->compile_ms = (*k)->compile_ms;
  }
  return s;
}

rj_status jit_prepare_bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_kernel **k, rt_cuda **rt, rj_bench_result *res) {
  *k = NULL;
  rj_status s = jit_prepare(ctx, req, o, k, rt, NULL);
  if (*k) {
    snprintf(res->variant, sizeof res->variant, "%s", (*k)->variant);
    snprintf(res->target, sizeof res->target, "%s", (*k)->target);
  }
  return s;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void jit_bench_done(double *ms, int runs, double bytes, rj_bench_result *res) {
  qsort(ms, (size_t)runs, sizeof ms[0], cmp_double);
  res->runs = runs;
  res->kernel_ms = ms[runs / 2];
  res->bytes = bytes;
  res->gbps = res->kernel_ms > 0 ? bytes / (res->kernel_ms * 1e6) : 0;
}

rj_status jit_checked(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                      rj_check_result *res, jit_check_body body) {
  rj_kernel *k;
  rt_cuda *rt = NULL;
  rj_status s = jit_prepare_check(ctx, req, o, &k, &rt, res);
  if (s) return s;
  s = body(ctx, rt, k, o, res);
  rt_leave(rt);
  return s;
}

rj_status jit_check_tile(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                         rj_check_result *res) {
  return jit_checked(ctx, req, o, res, check_tile);
}

/* run and bench, per request kind (ORDER KIND: rj_kind values index this table) */
static const struct {
  rj_status (*check)(rj_ctx *, const rj_request *, const rj_check_opts *, rj_check_result *);
  rj_status (*bench)(rj_ctx *, const rj_request *, const rj_check_opts *, rj_bench_result *);
} by_kind[] = {
    [RJ_KIND_TILE] = {jit_check_tile, jit_bench_tile},
    [RJ_KIND_SUBGROUP] = {jit_check_subgroup, jit_bench_subgroup},
    [RJ_KIND_TENSOR] = {jit_check_tensor, jit_bench_tensor},
    [RJ_KIND_TREDUCE] = {jit_check_treduce, jit_bench_treduce},
};

void jit_check_opts(const rj_check_opts *in, rj_check_opts *full) {
  rj_check_opts_init(full);
  if (in) {
    size_t n = in->struct_size < sizeof *full ? in->struct_size : sizeof *full;
    memcpy(full, in, n);
    full->struct_size = sizeof *full;
  }
}

/* Validates req and points *o at a whole rj_check_opts (jit_check_opts). */
static rj_status start(rj_ctx *ctx, const rj_request *req, const rj_check_opts **o,
                       rj_check_opts *full) {
  jit_check_opts(*o, full);
  *o = full;
  memset(&ctx->err, 0, sizeof ctx->err);
  return jit_validate(ctx, req);
}

RJ_API rj_status rj_check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                          rj_check_result *res) {
  rj_check_opts dflt;
  JIT_NEED(ctx, res, "res");
  memset(res, 0, sizeof *res);
  rj_status s = start(ctx, req, &o, &dflt);
  if (!s) s = by_kind[req->kind].check(ctx, req, o, res);
  return jit_status(ctx, s);
}

RJ_API rj_status rj_bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                          rj_bench_result *res) {
  rj_check_opts dflt;
  JIT_NEED(ctx, res, "res");
  memset(res, 0, sizeof *res);
  rj_status s = start(ctx, req, &o, &dflt);
  if (!s) s = by_kind[req->kind].bench(ctx, req, o, res);
  return jit_status(ctx, s);
}

rj_status jit_bench_tile(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                         rj_bench_result *res) {
  rj_kernel *k;
  rt_cuda *rt = NULL;
  rj_status s = jit_prepare_bench(ctx, req, o, &k, &rt, res);
  if (s) return s;
  const rj_tile *t = &req->u.tile;
  int bytes = ir_dtype(t->dtype)->bytes;
  int64_t nsrc = ir_numel(&t->src), ndst = ir_numel(&t->dst);
  ir_placement pd = {0};
  if (!s && t->src.mem == RJ_MEM_LOCAL)
    s = ir_place(&t->dst, t->scope == RJ_SCOPE_THREAD ? 1 : ir_scope_threads(t->scope), "dst", &pd,
                 &ctx->err);
  int64_t nout = (int64_t)k->block[0] * pd.nslots;
  uint64_t bufs[3] = {0, 0, 0};
  if (!s) s = rt_alloc(rt, (size_t)(nsrc * bytes), &bufs[0], &ctx->err);
  if (!s) s = rt_alloc(rt, (size_t)(ndst * bytes), &bufs[1], &ctx->err);
  if (!s) s = rt_alloc(rt, (size_t)(nout * bytes), &bufs[2], &ctx->err);
  void *host = s ? NULL : malloc((size_t)(nsrc > ndst ? nsrc : ndst) * (size_t)bytes);
  ir_rng g;
  ir_rng_seed(&g, o->seed);
  enum { WARM = 3, RUNS = 25 };
  double ms[RUNS];
  void *args[3] = {&bufs[0], &bufs[1], &bufs[2]};
  for (int i = 0; !s && i < WARM + RUNS; i++) {
    ir_fill_random(&g, t->dtype, host, nsrc); /* fresh data every run */
    s = rt_htod(rt, bufs[0], host, (size_t)(nsrc * bytes), &ctx->err);
    if (!s) {
      ir_fill_random(&g, t->dtype, host, ndst);
      s = rt_htod(rt, bufs[1], host, (size_t)(ndst * bytes), &ctx->err);
    }
    double m = 0;
    if (!s) s = rt_launch(rt, k->function, k->grid, k->block, 0, args, &m, &ctx->err);
    if (i >= WARM) ms[i - WARM] = m;
  }
  if (!s) jit_bench_done(ms, RUNS, (double)(nsrc + ndst) * bytes, res);
  free(host);
  for (int i = 0; i < 3; i++)
    rt_free(rt, bufs[i]);
  ir_placement_free(&pd);
  rt_leave(rt);
  return s;
}
