/* The public entry points of redjit_check.h (rj_check, rj_bench; treduce's own are in
 * check_treduce.c), and the frames every kind's run and bench sit in: compile -> load -> check,
 * and the bench loop (warm-ups, runs on fresh data, the median). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RJ_API void rj_check_opts_init(rj_check_opts *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
  opt->struct_size = sizeof *opt;
  rj_options_init(&opt->compile);
}

void hr_check_opts(const rj_check_opts *in, rj_check_opts *full) {
  rj_check_opts_init(full);
  if (in) {
    size_t n = in->struct_size < sizeof *full ? in->struct_size : sizeof *full;
    memcpy(full, in, n);
    full->struct_size = sizeof *full;
  }
}

rj_status hr_done(rj_ctx *ctx, rj_status s) {
  if (!s || !rj_errmsg(ctx)[0]) rj_error_set(ctx, s, NULL);
  return s;
}

/* The size of each result struct's first version: a caller's struct_size below it is refused.
 * Fields are only appended, so these stay what they are when the structs grow. */
#define CHECK_RESULT_V1 sizeof(rj_check_result)
#define BENCH_RESULT_V1 sizeof(rj_bench_result)
#define TREDUCE_RESULT_V1 sizeof(rj_treduce_result)

static rj_status result_size(rj_ctx *ctx, const void *res, size_t least, const char *what) {
  uint32_t size;
  memcpy(&size, res, sizeof size); /* struct_size is every result's first field */
  if (size >= least) return RJ_OK;
  return rj_error_set(ctx, RJ_EINVAL,
                      "%s.struct_size: %u is below the %zu bytes of its first version (set it to "
                      "sizeof the struct before the call)",
                      what, size, least);
}

/* Copies full into the caller's res, as far as both sizes reach, keeping res's struct_size. */
static void result_copy(void *res, const void *full, size_t full_size) {
  uint32_t size;
  memcpy(&size, res, sizeof size);
  size_t n = size < full_size ? size : full_size;
  memcpy((char *)res + sizeof size, (const char *)full + sizeof size, n - sizeof size);
  if (size > full_size) memset((char *)res + full_size, 0, size - full_size);
}

rj_status hr_results_begin(rj_ctx *ctx, hr_results *r, const rj_check_result *cres,
                           const rj_bench_result *bres, const rj_treduce_result *tres) {
  memset(r, 0, sizeof *r);
  r->check.struct_size = sizeof r->check;
  r->bench.struct_size = sizeof r->bench;
  r->treduce.struct_size = sizeof r->treduce;
  rj_status s = RJ_OK;
  if (cres) s = result_size(ctx, cres, CHECK_RESULT_V1, "res");
  if (!s && bres) s = result_size(ctx, bres, BENCH_RESULT_V1, "res");
  if (!s && tres) s = result_size(ctx, tres, TREDUCE_RESULT_V1, "tres");
  return s;
}

void hr_results_end(const hr_results *r, rj_check_result *cres, rj_bench_result *bres,
                    rj_treduce_result *tres) {
  if (cres) result_copy(cres, &r->check, sizeof r->check);
  if (bres) result_copy(bres, &r->bench, sizeof r->bench);
  if (tres) result_copy(tres, &r->treduce, sizeof r->treduce);
}

rj_status hr_enter(rj_ctx *ctx, const rj_check_opts *o, const rj_check_result *cres,
                   const rj_bench_result *bres, const rj_treduce_result *tres, hr_results *r,
                   rj_check_opts *full) {
  if (!ctx) return RJ_EINVAL;
  if (!cres && !bres) return rj_error_set(ctx, RJ_EINVAL, "res: NULL");
  rj_status s = hr_results_begin(ctx, r, cres, bres, tres);
  if (s) return hr_done(ctx, s);
  hr_check_opts(o, full);
  return RJ_OK;
}

/* Compiles req and loads it on o->compile.device, naming its variant and target; *compile_ms
 * and *load_ms may be NULL. */
static rj_status prepare(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                         char variant[RJ_NAME_MAX], char target[16], double *compile_ms,
                         double *load_ms, rj_kernel **k) {
  rj_status s = rj_compile(ctx, req, &o->compile, k);
  if (s) return s;
  snprintf(variant, RJ_NAME_MAX, "%s", rj_kernel_variant(*k));
  snprintf(target, 16, "%s", rj_kernel_target(*k));
  if (compile_ms) *compile_ms = rj_kernel_compile_ms(*k);
  return rj_kernel_load(ctx, *k, o->compile.device, load_ms);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void hr_bench_done(double *ms, int runs, double bytes, rj_bench_result *res) {
  qsort(ms, (size_t)runs, sizeof ms[0], cmp_double);
  res->runs = runs;
  res->kernel_ms = ms[runs / 2];
  res->bytes = bytes;
  res->gbps = res->kernel_ms > 0 ? bytes / (res->kernel_ms * 1e6) : 0;
}

rj_status hr_bench_loop(rj_ctx *ctx, int warm, int runs, hr_bench_run run, void *ud, double *ms,
                        double bytes, rj_bench_result *res) {
  rj_status s = RJ_OK;
  for (int i = 0; !s && i < warm + runs; i++) {
    double m = 0;
    s = run(ctx, ud, i, &m);
    if (i >= warm) ms[i - warm] = m;
  }
  if (!s) hr_bench_done(ms, runs, bytes, res);
  return s;
}

/* hr_bench_kernel's state: up to 3 buffers, one host block as large as the largest. */
typedef struct kbench {
  rj_kernel *k;
  int device, nfresh;
  rj_dtype t;
  const int64_t *n;
  rj_devptr ptr[3];
  void *args[3];
  void *host;
  hr_rng g;
} kbench;

static rj_status kbench_run(rj_ctx *ctx, void *ud, int i, double *ms) {
  (void)i;
  kbench *b = ud;
  size_t bytes = (size_t)ir_dtype(b->t)->bytes;
  rj_status s = RJ_OK;
  for (int j = 0; !s && j < b->nfresh; j++) { /* fresh data every run */
    hr_fill_random(&b->g, b->t, b->host, b->n[j]);
    s = rj_memcpy_htod(ctx, b->device, b->ptr[j], b->host, (size_t)b->n[j] * bytes);
  }
  unsigned grid[3], block[3], shared;
  rj_kernel_dims(b->k, grid, block, &shared);
  if (!s) s = rj_kernel_launch(ctx, b->k, b->device, grid, block, shared, b->args, ms);
  return s;
}

rj_status hr_bench_kernel(rj_ctx *ctx, const rj_check_opts *o, rj_kernel *k, rj_dtype t, int nbuf,
                          const int64_t *n, int nfresh, double bytes, rj_bench_result *res) {
  enum { WARM = 3, RUNS = 25 };
  double ms[RUNS];
  kbench b = {.k = k, .device = o->compile.device, .nfresh = nfresh, .t = t, .n = n};
  hr_rng_seed(&b.g, o->seed);
  int64_t most = 0;
  rj_status s = RJ_OK;
  for (int j = 0; !s && j < nbuf; j++) {
    s = rj_device_alloc(ctx, b.device, (size_t)n[j] * (size_t)ir_dtype(t)->bytes, &b.ptr[j]);
    b.args[j] = &b.ptr[j];
    most = n[j] > most ? n[j] : most;
  }
  if (!s && !(b.host = malloc((size_t)most * (size_t)ir_dtype(t)->bytes))) s = hr_nomem(ctx);
  if (!s) s = hr_bench_loop(ctx, WARM, RUNS, kbench_run, &b, ms, bytes, res);
  free(b.host);
  for (int j = 0; j < nbuf; j++)
    hr_free(ctx, b.device, b.ptr[j], s);
  return s;
}

/* run and bench, per request kind (ORDER KIND: rj_kind values index this table); treduce's
 * kernels are rj_treduce_run's, outside these frames. */
static const struct {
  hr_check_fn *check;
  hr_bench_fn *bench;
} by_kind[] = {
    [RJ_KIND_TILE] = {hr_check_tile, hr_bench_tile},
    [RJ_KIND_SUBGROUP] = {hr_check_subgroup, hr_bench_subgroup},
    [RJ_KIND_TENSOR] = {hr_check_tensor, hr_bench_tensor},
};

/* The kind's run (checking) or bench of a validated request into r. */
static rj_status run_body(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, hr_results *r,
                          bool checking) {
  rj_check_result *c = checking ? &r->check : NULL;
  if (req->kind == RJ_KIND_TREDUCE)
    return hr_treduce(ctx, req, o, RJ_TREDUCE_AUTO, c, &r->bench, &r->treduce);
  rj_kernel *k = NULL;
  rj_status s;
  if (c) {
    s = prepare(ctx, req, o, c->variant, c->target, &c->compile_ms, &c->load_ms, &k);
    return s ? s : by_kind[req->kind].check(ctx, req, o, k, c);
  }
  s = prepare(ctx, req, o, r->bench.variant, r->bench.target, NULL, NULL, &k);
  return s ? s : by_kind[req->kind].bench(ctx, req, o, k, &r->bench);
}

/* Defaults, validation, then the kind's run (cres) or bench (bres), its results handed out as
 * far as the caller's struct reaches. */
static rj_status run_kind(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                          rj_check_result *cres, rj_bench_result *bres) {
  hr_results r;
  rj_check_opts full;
  rj_status s = hr_enter(ctx, o, cres, bres, NULL, &r, &full);
  if (s) return s;
  s = rj_request_validate(ctx, req);
  if (!s) s = run_body(ctx, req, &full, &r, cres != NULL);
  hr_results_end(&r, cres, bres, NULL);
  return hr_done(ctx, s);
}

RJ_API rj_status rj_check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                          rj_check_result *res) {
  return run_kind(ctx, req, o, res, NULL);
}

RJ_API rj_status rj_bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                          rj_bench_result *res) {
  return run_kind(ctx, req, o, NULL, res);
}
