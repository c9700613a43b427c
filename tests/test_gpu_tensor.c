/* GPU suite for tensor reductions: many shapes (primes, 1, sizes that are not a
 * multiple of the vector width, views with misaligned rows; every seed also shifts the view's
 * start by seed mod 8 elements), every dtype and op, accum, NaN both ways, several axes, strided
 * views — each against the float64 oracle with poisoned outputs and guards, and every
 * deterministic request launched twice (bitwise equal, checked by `run`).  Skips without a GPU. */
#include "rjtest.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static rj_ctx *ctx;
static int gpu;
static int cases_run;

static const char *const ops[] = {"sum", "max", "min"};
static const char *const dtypes[] = {"f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"};

static void run(const char *json, int seeds, int nans) {
  for (int s = 0; s < seeds; s++)
    rjt_run_ok(ctx, json, (uint64_t)(s * 7919 + s), nans);
  cases_run++;
}

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* shape / axes / strides fragments */
static const char *const shapes[] = {
    "\"shape\":[1]",
    "\"shape\":[7]",
    "\"shape\":[1000003]",
    "\"shape\":[65536]",
    "\"shape\":[3,1],\"axes\":[1]",
    "\"shape\":[13,17],\"axes\":[1]",
    "\"shape\":[13,17],\"axes\":[0]",
    "\"shape\":[4099,33],\"axes\":[1]",
    "\"shape\":[33,4099],\"axes\":[0]",
    "\"shape\":[3,100003],\"axes\":[1]",
    "\"shape\":[100003,3],\"axes\":[0]",
    "\"shape\":[1031,129],\"axes\":[-1]",
    "\"shape\":[5,7,11],\"axes\":[1]",
    "\"shape\":[5,7,11],\"axes\":[0,2]",
    "\"shape\":[4,6,8,10],\"axes\":[1,3]",
    "\"shape\":[2,3,4,5],\"axes\":[0,1,2,3]",
    "\"shape\":[64,3,129],\"axes\":[0,1]",
    "\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[1]",
    "\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[0]",
    "\"shape\":[100,37],\"strides\":[1,101],\"axes\":[0]",
    "\"shape\":[100,37],\"strides\":[1,101],\"axes\":[1]",
    "\"shape\":[50,20],\"strides\":[40,2],\"axes\":[1]",
    "\"shape\":[8,16],\"strides\":[0,1],\"axes\":[0]",
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

START_TEST(shapes_all_dtypes_ops) {
  if (!gpu) return;
  for (int d = 0; d < 8; d++)
    for (int o = 0; o < 3; o++)
      run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s}", ops[o], dtypes[d],
                  shapes[_i]),
          2, 0);
}
END_TEST

START_TEST(accum_nan) {
  if (!gpu) return;
  const char *sh[] = {"\"shape\":[100003]", "\"shape\":[257,1025],\"axes\":[1]",
                      "\"shape\":[1025,257],\"axes\":[0]", "\"shape\":[6,7,8],\"axes\":[0,2]",
                      "\"shape\":[20000,40],\"axes\":[1]"};
  for (int i = 0; i < 5; i++)
    for (int d = 0; d < 4; d++)
      for (int o = 0; o < 3; o++) {
        run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"accum\":true}",
                    ops[o], dtypes[d], sh[i]),
            2, 0);
        for (int n = 0; n < 2; n++)
          run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"nan\":\"%s\"}",
                      ops[o], dtypes[d], sh[i], n ? "ignore" : "propagate"),
              2, 3);
      }
}
END_TEST

/* tensor_cluster (one cluster of 8 CTAs finishing in distributed shared memory): the smallest and
 * largest sizes it takes for every dtype (16385 .. 65536 16-byte vectors; odd lengths so the
 * scalar tail runs), every op, accum, NaN both ways; forced, so the variant itself is checked. */
START_TEST(cluster_sizes) {
  if (!gpu) return;
  static const int vec[8] = {8, 8, 4, 2, 4, 4, 2, 2};
  for (int d = 0; d < 8; d++) {
    long long n[2] = {16385LL * vec[d] + 3, 65536LL * vec[d] - 1};
    for (int i = 0; i < 2; i++)
      for (int o = 0; o < 3; o++) {
        char base[256]; /* rjt_fmt's buffer is reused by the next call */
        snprintf(base, sizeof base,
                 "\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\","
                 "\"shape\":[%lld],\"variant\":\"tensor_cluster\"",
                 ops[o], dtypes[d], n[i]);
        run(rjt_fmt("{%s}", base), 2, 0);
        run(rjt_fmt("{%s,\"accum\":true}", base), 1, 0);
        if (d < 4)
          for (int k = 0; k < 2; k++)
            run(rjt_fmt("{%s,\"nan\":\"%s\"}", base, k ? "ignore" : "propagate"), 1, 3);
      }
  }
}
END_TEST

/* The benchmark shapes, and determinism off (same kernels; still checked). */
START_TEST(bench_shapes) {
  if (!gpu) return;
  const char *sh[] = {"\"shape\":[16777216]",
                      "\"shape\":[4096,4096],\"axes\":[1]",
                      "\"shape\":[4096,4096],\"axes\":[0]",
                      "\"shape\":[65536,128],\"axes\":[1]",
                      "\"shape\":[65536,128],\"axes\":[0]",
                      "\"shape\":[128,65536],\"axes\":[1]",
                      "\"shape\":[1024,32768],\"axes\":[1]",
                      "\"shape\":[32,4194304],\"axes\":[1]"};
  for (int i = 0; i < 8; i++) {
    run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",%s}", sh[i]), 1, 0);
    run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"bf16\",%s}", sh[i]), 1, 0);
    run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"min\",\"dtype\":\"i32\",%s,\"deterministic\":false}",
                sh[i]),
        1, 0);
  }
}
END_TEST

/* ---- runtime-size kernels ("dynamic": true): the same views through kernels whose sizes are
 * parameters (generic views: constant kernels), one seed per case, the seed varying the view's
 * start alignment across dtypes and ops. */
START_TEST(dynamic_all_dtypes_ops) {
  if (!gpu) return;
  for (int d = 0; d < 8; d++)
    for (int o = 0; o < 3; o++)
      rjt_run_ok(ctx,
                 rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"dynamic\":true}",
                         ops[o], dtypes[d], shapes[_i]),
                 (uint64_t)(d * 3 + o + _i), 0),
          cases_run++;
}
END_TEST

START_TEST(dynamic_accum_nan) {
  if (!gpu) return;
  const char *sh[] = {"\"shape\":[100003]", "\"shape\":[257,1025],\"axes\":[1]",
                      "\"shape\":[1025,257],\"axes\":[0]", "\"shape\":[20000,40],\"axes\":[1]",
                      "\"shape\":[3,999,260],\"axes\":[1]"};
  for (int i = 0; i < 5; i++)
    for (int d = 0; d < 4; d++)
      for (int o = 0; o < 3; o++) {
        rjt_run_ok(ctx,
                   rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"accum\":true,"
                           "\"dynamic\":true}",
                           ops[o], dtypes[d], sh[i]),
                   (uint64_t)(i + d + o), 0);
        for (int n = 0; n < 2; n++)
          rjt_run_ok(
              ctx,
              rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"nan\":\"%s\","
                      "\"dynamic\":true}",
                      ops[o], dtypes[d], sh[i], n ? "ignore" : "propagate"),
              (uint64_t)(i + d + o + n), 3);
        cases_run += 3;
      }
}
END_TEST

/* Shapes of each class, several per plan bucket: within one dtype/op every bucket compiles once
 * (rjt_made grows by the number of distinct buckets rj_explain names), and every
 * shape, run through the shared kernel, is right (float64 oracle, poisoned outputs, two bitwise
 * equal launches).  Shapes of one bucket alternate, so counters and workspaces are reused. */
static const char *const shared_shapes[] = {
    "\"shape\":[4099,33],\"axes\":[1]",
    "\"shape\":[5003,35],\"axes\":[1]",
    "\"shape\":[3001,29],\"axes\":[1]",
    "\"shape\":[700,31],\"strides\":[37,1],\"axes\":[1]",
    "\"shape\":[31,700],\"strides\":[1,33],\"axes\":[0]",
    "\"shape\":[1000003]",
    "\"shape\":[2000003]",
    "\"shape\":[1048577]",
    "\"shape\":[3,100003],\"axes\":[1]",
    "\"shape\":[5,200009],\"axes\":[1]",
    "\"shape\":[7,77777],\"strides\":[77781,1],\"axes\":[1]",
    "\"shape\":[1000]",
    "\"shape\":[1]",
    "\"shape\":[1024,1024],\"axes\":[0]",
    "\"shape\":[1000,1028],\"axes\":[0]",
    "\"shape\":[2,3000,2052],\"axes\":[1]",
    "\"shape\":[33,4099],\"axes\":[0]",
    "\"shape\":[41,5001],\"axes\":[0]",
    "\"shape\":[1025,257],\"axes\":[0]",
    "\"shape\":[2049,129],\"axes\":[0]",
    "\"shape\":[100,37],\"strides\":[1,101],\"axes\":[0]",
    "\"shape\":[4099,33],\"axes\":[1]",
    "\"shape\":[1000003]",
    "\"shape\":[1024,1024],\"axes\":[0]",
    "\"shape\":[1025,257],\"axes\":[0]",
};
#define NSHARED ((int)(sizeof shared_shapes / sizeof shared_shapes[0]))

/* The bucket rj_explain names for a dynamic request ("" when it keeps a constant kernel). */
static void bucket_of(const char *json, char *out, size_t n) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  const char *text = NULL;
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  const char *b = strstr(text, "bucket \"");
  out[0] = 0;
  if (b) {
    b += strlen("bucket \"");
    size_t k = strcspn(b, "\"");
    snprintf(out, n, "%.*s", (int)k, b);
  }
}

START_TEST(dynamic_shared_kernels) {
  if (!gpu) return;
  static const char *const dt[] = {"f32", "bf16", "i32", "f64", "u64", "f16"};
  static const char *const op[] = {"sum", "max", "min", "sum", "max", "sum"};
  for (int d = 0; d < 6; d++) {
    char buckets[NSHARED][64];
    int nb = 0;
    long long c0 = rjt_made(ctx);
    for (int i = 0; i < NSHARED; i++) {
      char json[512], b[64];
      snprintf(json, sizeof json,
               "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"dynamic\":true}", op[d],
               dt[d], shared_shapes[i]);
      bucket_of(json, b, sizeof b);
      ck_assert_msg(b[0], "%s: no runtime-size kernel", json);
      bool seen = false;
      for (int j = 0; j < nb; j++)
        seen |= strcmp(buckets[j], b) == 0;
      if (!seen) snprintf(buckets[nb++], sizeof buckets[0], "%s", b);
      rjt_run_ok(ctx, json, (uint64_t)(i * 5 + d), 0);
      cases_run++;
      ck_assert_msg(rjt_made(ctx) - c0 == nb,
                    "%s: %lld compiles for %d buckets (a kernel was not reused)", json,
                    rjt_made(ctx) - c0, nb);
    }
    ck_assert_msg(nb < NSHARED - 8, "%s: only %d shapes shared a bucket", dt[d], NSHARED - nb);
  }
}
END_TEST

/* rj_reduce itself (the path callers use) on device memory: shapes of shared buckets in turn,
 * each against a host reference (f32 sum: float64 with the run tolerance; i32 max: exact). */
START_TEST(dynamic_rj_reduce) {
  if (!gpu) return;
  static const int64_t sh[][2] = {{4099, 33}, {5003, 35}, {1, 1000003}, {3, 100003},
                                  {1, 7},     {4099, 33}, {2, 2000003}, {1, 1000003}};
  size_t maxn = 4000006 + 16, maxo = 5003;
  float *hx = malloc(maxn * sizeof(float)), *hy = malloc(maxo * sizeof(float));
  int32_t *ix = malloc(maxn * sizeof(int32_t)), *iy = malloc(maxo * sizeof(int32_t));
  ck_assert(hx && hy && ix && iy);
  uint64_t s = 12345;
  for (size_t i = 0; i < maxn; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    hx[i] = (float)((double)(s >> 40) / (double)(1 << 24) * 2 - 1);
    ix[i] = (int32_t)((s >> 33) % 201) - 100;
  }
  uint64_t dx = 0, dy = 0, dix = 0, diy = 0;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, maxn * 4, &dx), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, maxo * 4, &dy), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, maxn * 4, &dix), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, maxo * 4, &diy), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dx, hx, maxn * 4), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dix, ix, maxn * 4), RJ_OK);
  long long c0 = rjt_made(ctx);
  for (size_t c = 0; c < sizeof sh / sizeof sh[0]; c++) {
    int64_t M = sh[c][0], N = sh[c][1], off = (int64_t)(c % 5); /* misaligned starts */
    for (int k = 0; k < 2; k++) {
      rj_request r;
      rjt_parse(ctx,
                rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%lld,%lld],"
                        "\"axes\":[1],\"dynamic\":true}",
                        k ? "max" : "sum", k ? "i32" : "f32", (long long)M, (long long)N),
                &r);
      uint64_t src = (k ? dix : dx) + (uint64_t)off * 4, dst = k ? diy : dy;
      rj_status st = rj_reduce(ctx, &r, NULL, src, dst, NULL);
      ck_assert_msg(st == RJ_OK, "rj_reduce %lld x %lld: %s", (long long)M, (long long)N,
                    rj_errmsg(ctx));
      ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, k ? (void *)iy : (void *)hy, dst, (size_t)M * 4),
                       RJ_OK);
      for (int64_t m = 0; m < M; m++) {
        double ref = 0, mag = 0;
        int32_t best = INT32_MIN;
        for (int64_t n = 0; n < N; n++) {
          size_t at = (size_t)(off + m * N + n);
          ref += hx[at];
          mag += fabs(hx[at]);
          if (ix[at] > best) best = ix[at];
        }
        if (k)
          ck_assert_msg(iy[m] == best, "i32 max %lld x %lld row %lld: %d, expected %d",
                        (long long)M, (long long)N, (long long)m, iy[m], best);
        else
          ck_assert_msg(fabs(hy[m] - ref) <= 1e-5 * mag + 1e-30,
                        "f32 sum %lld x %lld row %lld: %.9g, expected %.9g", (long long)M,
                        (long long)N, (long long)m, (double)hy[m], ref);
      }
      cases_run++;
    }
  }
  /* f32 sum and i32 max, each: lanes G=4, rows split (1-D and 3 / 2 rows), one CTA (1 x 7) */
  ck_assert_msg(rjt_made(ctx) - c0 <= 8, "%lld compiles for 8 shapes x 2 requests",
                rjt_made(ctx) - c0);
  rj_device_free(ctx, 0, dx);
  rj_device_free(ctx, 0, dy);
  rj_device_free(ctx, 0, dix);
  rj_device_free(ctx, 0, diy);
  free(hx);
  free(hy);
  free(ix);
  free(iy);
}
END_TEST

/* rj_tensor_launch of rj_compile's kernel writes what rj_reduce writes for the same request
 * (bitwise: the requests are deterministic), for a full, a rows, a columns and a strided view. */
START_TEST(tensor_launch_as_reduce) {
  if (!gpu) return;
  static const char *const reqs[] = {
      "\"dtype\":\"f32\",\"shape\":[1024]}",
      "\"dtype\":\"f32\",\"shape\":[1000003]}",
      "\"dtype\":\"f32\",\"shape\":[1024,1024],\"axes\":[1]}",
      "\"dtype\":\"f64\",\"shape\":[300,700],\"axes\":[0]}",
      "\"dtype\":\"f32\",\"shape\":[100,37],\"strides\":[1,101],\"axes\":[0]}",
  };
  size_t n = 1100000, bytes = n * 8;
  double *h = malloc(bytes), *a = malloc(bytes), *b = malloc(bytes);
  ck_assert(h && a && b);
  uint64_t s = 99;
  for (size_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    h[i] = (double)(s >> 40) / (double)(1 << 24) - 0.5; /* f32 reads see other values: fine */
  }
  rj_devptr src = 0, d1 = 0, d2 = 0;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes, &src), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes, &d1), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes, &d2), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, src, h, bytes), RJ_OK);
  for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
    rj_request r;
    rjt_parse(ctx, rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",%s", reqs[i]), &r);
    rj_kernel *k = NULL;
    ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, d1, h, 1024 * 8), RJ_OK); /* equal past the output */
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, d2, h, 1024 * 8), RJ_OK);
    ck_assert_int_eq(rj_reduce(ctx, &r, NULL, src, d1, NULL), RJ_OK);
    for (int rep = 0; rep < 2; rep++) /* the second launch: loaded already */
      ck_assert_msg(rj_tensor_launch(ctx, k, 0, src, d2, NULL) == RJ_OK, "%s: %s", reqs[i],
                    rj_errmsg(ctx));
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, a, d1, 1024 * 8), RJ_OK);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, b, d2, 1024 * 8), RJ_OK);
    ck_assert_msg(memcmp(a, b, 1024 * 8) == 0, "%s: rj_tensor_launch differs from rj_reduce",
                  reqs[i]);
    cases_run++;
  }
  rj_device_free(ctx, 0, src);
  rj_device_free(ctx, 0, d1);
  rj_device_free(ctx, 0, d2);
  free(h);
  free(a);
  free(b);
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_tensor");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 1200);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, shapes_all_dtypes_ops, 0, NSHAPES);
  tcase_add_test(tc, accum_nan);
  tcase_add_test(tc, bench_shapes);
  tcase_add_test(tc, cluster_sizes);
  tcase_add_loop_test(tc, dynamic_all_dtypes_ops, 0, NSHAPES);
  tcase_add_test(tc, dynamic_accum_nan);
  tcase_add_test(tc, dynamic_shared_kernels);
  tcase_add_test(tc, dynamic_rj_reduce);
  tcase_add_test(tc, tensor_launch_as_reduce);
  suite_add_tcase(s, tc);
  int failed = rjt_run_in_process(s);
  printf("%d tensor request cases run\n", cases_run);
  return failed ? 1 : 0;
}
