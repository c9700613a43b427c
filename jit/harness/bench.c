/* The one bench loop of every kind (warm-ups, runs on fresh data, the median) and the bench of
 * a kernel over device buffers (tile, subgroup). */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

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
