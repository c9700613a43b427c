/* GPU suite for tensor reductions: many shapes (primes, 1, sizes that are not a
 * multiple of the vector width, views with misaligned rows; every seed also shifts the view's
 * start by seed mod 8 elements), every dtype and op, accum, NaN both ways, several axes, strided
 * views — each against the float64 oracle with poisoned outputs and guards, and every
 * deterministic request launched twice (bitwise equal, checked by `run`).  Skips without a GPU. */
#include "custom_ir.h"
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

/* ---- op custom: the caller's combine as LLVM IR (tests/custom/test_custom.c has the rest) */

static const char add_f32[] =
    "define float @add(float %a, float %b) {\n  %c = fadd float %a, %b\n  ret float %c\n}\n";
static const char add_i64[] =
    "define i64 @add(i64 %a, i64 %b) {\n  %c = add i64 %a, %b\n  ret i64 %c\n}\n";
/* 2x2 matrices of 16-bit integers mod 2^16 packed in a u64 (a0 a1 / a2 a3, a0 lowest), their
 * product: associative, not commutative, identity 0x0001000000000001; mm_c is the same in C */
static const char mm_ir[] =
    "define i64 @mm(i64 %a, i64 %b) {\n"
    "  %a0 = trunc i64 %a to i16\n  %a1s = lshr i64 %a, 16\n  %a1 = trunc i64 %a1s to i16\n"
    "  %a2s = lshr i64 %a, 32\n  %a2 = trunc i64 %a2s to i16\n  %a3s = lshr i64 %a, 48\n"
    "  %a3 = trunc i64 %a3s to i16\n"
    "  %b0 = trunc i64 %b to i16\n  %b1s = lshr i64 %b, 16\n  %b1 = trunc i64 %b1s to i16\n"
    "  %b2s = lshr i64 %b, 32\n  %b2 = trunc i64 %b2s to i16\n  %b3s = lshr i64 %b, 48\n"
    "  %b3 = trunc i64 %b3s to i16\n"
    "  %p0 = mul i16 %a0, %b0\n  %q0 = mul i16 %a1, %b2\n  %c0 = add i16 %p0, %q0\n"
    "  %p1 = mul i16 %a0, %b1\n  %q1 = mul i16 %a1, %b3\n  %c1 = add i16 %p1, %q1\n"
    "  %p2 = mul i16 %a2, %b0\n  %q2 = mul i16 %a3, %b2\n  %c2 = add i16 %p2, %q2\n"
    "  %p3 = mul i16 %a2, %b1\n  %q3 = mul i16 %a3, %b3\n  %c3 = add i16 %p3, %q3\n"
    "  %z0 = zext i16 %c0 to i64\n  %z1 = zext i16 %c1 to i64\n  %z2 = zext i16 %c2 to i64\n"
    "  %z3 = zext i16 %c3 to i64\n  %s1 = shl i64 %z1, 16\n  %s2 = shl i64 %z2, 32\n"
    "  %s3 = shl i64 %z3, 48\n  %o1 = or i64 %z0, %s1\n  %o2 = or i64 %o1, %s2\n"
    "  %o3 = or i64 %o2, %s3\n  ret i64 %o3\n}\n";
#define MM_ID 0x0001000000000001ull

static uint64_t mm_c(uint64_t a, uint64_t b) {
  uint16_t x[4], y[4], c[4];
  for (int i = 0; i < 4; i++)
    x[i] = (uint16_t)(a >> (16 * i)), y[i] = (uint16_t)(b >> (16 * i));
  c[0] = (uint16_t)(x[0] * y[0] + x[1] * y[2]);
  c[1] = (uint16_t)(x[0] * y[1] + x[1] * y[3]);
  c[2] = (uint16_t)(x[2] * y[0] + x[3] * y[2]);
  c[3] = (uint16_t)(x[2] * y[1] + x[3] * y[3]);
  return c[0] | (uint64_t)c[1] << 16 | (uint64_t)c[2] << 32 | (uint64_t)c[3] << 48;
}

/* A tensor request over a contiguous shape[0 .. nd) reducing axes[0 .. na). */
static void tensor_req(rj_request *r, rj_op op, rj_dtype dt, int nd, const int64_t *shape, int na,
                       const int *axes) {
  rj_request_init(r, RJ_KIND_TENSOR);
  r->u.tensor.op = op;
  r->u.tensor.dtype = dt;
  r->u.tensor.ndim = nd;
  memcpy(r->u.tensor.shape, shape, sizeof(int64_t) * (size_t)nd);
  r->u.tensor.naxes = na;
  memcpy(r->u.tensor.axes, axes, sizeof(int) * (size_t)na);
}

typedef struct cview {
  int nd, na;
  int64_t shape[3];
  int axes[3];
} cview;

static const cview cviews[] = {
    {2, 1, {64, 1000}, {1}},  {2, 1, {1000, 64}, {0}},      {2, 1, {7, 100003}, {1}},
    {2, 1, {100003, 3}, {0}}, {1, 1, {1000003}, {0}},       {2, 1, {1, 1}, {1}},
    {2, 1, {5, 33}, {1}},     {3, 2, {12, 34, 56}, {0, 2}}, {3, 1, {9, 700, 5}, {1}},
};
#define NCVIEWS ((int)(sizeof cviews / sizeof cviews[0]))

/* Outputs and the reduced length of a view, and the source offset of (output o, reduced i). */
static int64_t cview_at(const cview *v, int64_t o, int64_t i) {
  int64_t idx[3], at = 0;
  for (int d = v->nd - 1; d >= 0; d--) {
    bool red = false;
    for (int a = 0; a < v->na; a++)
      red |= v->axes[a] == d;
    int64_t *x = red ? &i : &o;
    idx[d] = *x % v->shape[d];
    *x /= v->shape[d];
  }
  for (int d = 0; d < v->nd; d++)
    at = at * v->shape[d] + idx[d];
  return at;
}

static void cview_sizes(const cview *v, int64_t *outs, int64_t *len) {
  *outs = *len = 1;
  for (int d = 0; d < v->nd; d++) {
    bool red = false;
    for (int a = 0; a < v->na; a++)
      red |= v->axes[a] == d;
    *(red ? len : outs) *= v->shape[d];
  }
}

/* rj_reduce of r on src into a host buffer of outs 8-byte slots (poisoned first). */
static void reduce_to_host(const rj_request *r, uint64_t src, uint64_t dst, int64_t outs,
                           void *host) {
  memset(host, 0xa5, (size_t)outs * 8);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dst, host, (size_t)outs * 8), RJ_OK);
  rj_status st = rj_reduce(ctx, r, NULL, src, dst, NULL);
  ck_assert_msg(st == RJ_OK, "rj_reduce: %s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, host, dst, (size_t)outs * 8), RJ_OK);
}

/* A commutative custom sum (f32 fadd, i64 add) is op sum forced onto the same variant, bit for
 * bit; the matrix product (not commutative) is the CPU's left fold in index order, exactly. */
START_TEST(custom_combines) {
  if (!gpu) return;
  size_t maxn = 12 * 34 * 56 + 1000003 + 16;
  uint64_t *hx = malloc(maxn * 8), *a = malloc(1000003 * 8), *b = malloc(1000003 * 8);
  ck_assert(hx && a && b);
  uint64_t s = 987654321;
  for (size_t i = 0; i < maxn; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    hx[i] = s ^ (s >> 29);
  }
  float *fx = (float *)hx; /* f32 inputs: finite values in [-1, 1) */
  for (size_t i = 0; i < maxn; i++)
    fx[i] = (float)((double)(hx[i] >> 40) / (double)(1 << 24) * 2 - 1);
  uint64_t *ux = malloc(maxn * 8);
  for (size_t i = 0; i < maxn; i++)
    s = s * 6364136223846793005ULL + 1442695040888963407ULL, ux[i] = s ^ (s >> 31);
  uint64_t dfx = 0, dux = 0, dy = 0;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, maxn * 8, &dfx), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, maxn * 8, &dux), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 1000003 * 8, &dy), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dfx, hx, maxn * 8), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dux, ux, maxn * 8), RJ_OK);
  for (int c = 0; c < NCVIEWS; c++) {
    const cview *v = &cviews[c];
    int64_t outs, len;
    cview_sizes(v, &outs, &len);
    for (int d = 0; d < 2; d++) { /* f32, then i64 */
      rj_request r, q;
      tensor_req(&r, RJ_OP_CUSTOM, d ? RJ_I64 : RJ_F32, v->nd, v->shape, v->na, v->axes);
      r.u.tensor.combine.ir = d ? add_i64 : add_f32;
      snprintf(r.u.tensor.combine.fn, sizeof r.u.tensor.combine.fn, "add");
      r.u.tensor.combine.identity = d ? 0 : 0x80000000u;
      r.u.tensor.combine.commutative = 1;
      rj_kernel *k = NULL;
      ck_assert_msg(rj_compile(ctx, &r, NULL, &k) == RJ_OK, "%s", rj_errmsg(ctx));
      tensor_req(&q, RJ_OP_SUM, d ? RJ_I64 : RJ_F32, v->nd, v->shape, v->na, v->axes);
      snprintf(q.variant, sizeof q.variant, "%s", rj_kernel_variant(k));
      uint64_t src = (d ? dux : dfx) + (uint64_t)(c % 3) * 8; /* misaligned starts too */
      reduce_to_host(&r, src, dy, outs, a);
      reduce_to_host(&q, src, dy, outs, b);
      size_t bytes = (size_t)outs * (d ? 8 : 4);
      ck_assert_msg(memcmp(a, b, bytes) == 0, "view %d %s: custom sum differs from sum (%s)", c,
                    d ? "i64" : "f32", rj_kernel_variant(k));
      cases_run++;
    }
    rj_request m;
    tensor_req(&m, RJ_OP_CUSTOM, RJ_U64, v->nd, v->shape, v->na, v->axes);
    m.u.tensor.combine.ir = mm_ir;
    snprintf(m.u.tensor.combine.fn, sizeof m.u.tensor.combine.fn, "mm");
    m.u.tensor.combine.identity = MM_ID;
    uint64_t off = (uint64_t)(c % 3);
    reduce_to_host(&m, dux + off * 8, dy, outs, a);
    for (int64_t o = 0; o < outs; o++) {
      uint64_t want = MM_ID;
      for (int64_t i = 0; i < len; i++)
        want = mm_c(want, ux[off + (uint64_t)cview_at(v, o, i)]);
      ck_assert_msg(a[o] == want, "view %d output %lld: 0x%016llx, expected 0x%016llx", c,
                    (long long)o, (unsigned long long)a[o], (unsigned long long)want);
    }
    cases_run++;
  }
  rj_device_free(ctx, 0, dfx);
  rj_device_free(ctx, 0, dux);
  rj_device_free(ctx, 0, dy);
  free(hx);
  free(ux);
  free(a);
  free(b);
}
END_TEST

/* ---- op custom with struct states (tests/custom_ir.h) and f16 scalar states */

typedef struct host_src {
  float *f;    /* f32 elements in [-1, 1), on a grid of 1/64 (ties for argmax) */
  int32_t *i;  /* i32 elements */
  uint16_t *h; /* f16 bit patterns: finite, nonzero */
  uint64_t df, di, dh, dy;
  size_t n;
} host_src;

static void src_make(host_src *h) {
  h->n = 12 * 34 * 56 + 1000003 + 16;
  h->f = malloc(h->n * 4), h->i = malloc(h->n * 4), h->h = malloc(h->n * 2);
  ck_assert(h->f && h->i && h->h);
  uint64_t s = 123456789;
  for (size_t i = 0; i < h->n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t x = s ^ (s >> 29);
    h->f[i] = (float)((double)(x >> 58) / 32.0 - 1); /* 64 levels */
    h->i[i] = (int32_t)(uint32_t)(x >> 17);
    uint16_t b = (uint16_t)(x >> 40);
    if ((b & 0x7c00) == 0x7c00) b ^= 0x4000; /* no inf / NaN */
    if ((b & 0x7fff) == 0) b |= 1;           /* no zeros (max's -0 / +0 order) */
    h->h[i] = b;
  }
  ck_assert_int_eq(rj_device_alloc(ctx, 0, h->n * 4, &h->df), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, h->n * 4, &h->di), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, h->n * 2, &h->dh), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 1000003 * 8, &h->dy), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, h->df, h->f, h->n * 4), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, h->di, h->i, h->n * 4), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, h->dh, h->h, h->n * 2), RJ_OK);
}

static void src_free(host_src *h) {
  rj_device_free(ctx, 0, h->df);
  rj_device_free(ctx, 0, h->di);
  rj_device_free(ctx, 0, h->dh);
  rj_device_free(ctx, 0, h->dy);
  free(h->f);
  free(h->i);
  free(h->h);
}

/* a struct state on view v: nf fields, the IR's functions */
static void state_req(rj_request *r, const cview *v, rj_dtype dt, const char *ir, const char *fn,
                      const char *lift, const char *finish, int nf, const rj_dtype *fields,
                      const uint64_t *ids, int result, int commutative) {
  tensor_req(r, RJ_OP_CUSTOM, dt, v->nd, v->shape, v->na, v->axes);
  rj_tensor *t = &r->u.tensor;
  t->combine.ir = ir;
  snprintf(t->combine.fn, sizeof t->combine.fn, "%s", fn);
  snprintf(t->combine.lift, sizeof t->combine.lift, "%s", lift);
  snprintf(t->combine.finish, sizeof t->combine.finish, "%s", finish);
  t->combine.nfields = nf;
  for (int i = 0; i < nf; i++)
    t->combine.fields[i] = fields[i], t->combine.field_identity[i] = ids[i];
  t->combine.result = result;
  t->combine.commutative = commutative;
}

/* Welford's state {n, mean, M2} of f32 elements, finished as the sample variance (f64), against
 * the two-pass float64 variance; every view, misaligned starts too. */
START_TEST(custom_welford) {
  if (!gpu) return;
  host_src h;
  src_make(&h);
  static const rj_dtype f[3] = {RJ_I64, RJ_F64, RJ_F64};
  static const uint64_t id[3] = {0, 0, 0};
  double *y = malloc(1000003 * 8);
  for (int c = 0; c < NCVIEWS; c++) {
    const cview *v = &cviews[c];
    int64_t outs, len;
    cview_sizes(v, &outs, &len);
    rj_request r;
    state_req(&r, v, RJ_F32, WELFORD_IR, "wcomb", "wlift", "wfin", 3, f, id, 2, 1);
    uint64_t off = (uint64_t)(c % 3);
    reduce_to_host(&r, h.df + off * 4, h.dy, outs, y);
    for (int64_t o = 0; o < outs; o++) {
      double mean = 0, m2 = 0;
      for (int64_t i = 0; i < len; i++)
        mean += h.f[off + (uint64_t)cview_at(v, o, i)];
      mean /= (double)len;
      for (int64_t i = 0; i < len; i++) {
        double d = h.f[off + (uint64_t)cview_at(v, o, i)] - mean;
        m2 += d * d;
      }
      double want = m2 / (double)(len - 1);
      if (len < 2)
        ck_assert_msg(isnan(y[o]), "view %d output %lld: %g, expected NaN (n - 1 = 0)", c,
                      (long long)o, y[o]);
      else
        ck_assert_msg(fabs(y[o] - want) <= 1e-10 * fabs(want) + 1e-300,
                      "view %d output %lld: %.17g, expected %.17g", c, (long long)o, y[o], want);
    }
    cases_run++;
  }
  free(y);
  src_free(&h);
}
END_TEST

/* rj_bench of a struct state whose result (Welford's f64 variance) is wider than the input (f32):
 * the destination holds the result's dtype, and its bytes are counted at that width. */
START_TEST(custom_bench_result_width) {
  if (!gpu) return;
  static const rj_dtype f[3] = {RJ_I64, RJ_F64, RJ_F64};
  static const uint64_t id[3] = {0, 0, 0};
  const cview *v = &cviews[0]; /* 64 rows of 1000 */
  int64_t outs, len;
  cview_sizes(v, &outs, &len);
  rj_request r;
  state_req(&r, v, RJ_F32, WELFORD_IR, "wcomb", "wlift", "wfin", 3, f, id, 2, 1);
  rj_check_opts o;
  rj_check_opts_init(&o);
  rj_bench_result res = {.struct_size = sizeof res};
  ck_assert_msg(rj_bench(ctx, &r, &o, &res) == RJ_OK, "%s", rj_errmsg(ctx));
  double want = (double)(outs * len) * 4 + (double)outs * 8;
  ck_assert_msg(res.bytes == want, "bytes %.0f, expected %.0f (f64 outputs)", res.bytes, want);
  cases_run++;
}
END_TEST

/* An argmax written as a state {value, index} (ties: the smaller index): the first index of the
 * largest element, exactly; the elements take 64 values, so ties are everywhere. */
START_TEST(custom_argmax_state) {
  if (!gpu) return;
  host_src h;
  src_make(&h);
  static const rj_dtype f[2] = {RJ_F32, RJ_I64};
  static const uint64_t id[2] = {0xff800000u, 0x7fffffffffffffffull};
  int64_t *y = malloc(1000003 * 8);
  for (int c = 0; c < NCVIEWS; c++)
    for (int comm = 1; comm >= 0; comm--) { /* the ordered variant serves it too */
      const cview *v = &cviews[c];
      int64_t outs, len;
      cview_sizes(v, &outs, &len);
      rj_request r;
      state_req(&r, v, RJ_F32, ARGMAX_IR, "acomb", "alift", "", 2, f, id, 1, comm);
      uint64_t off = (uint64_t)(c % 3);
      reduce_to_host(&r, h.df + off * 4, h.dy, outs, y);
      for (int64_t o = 0; o < outs; o++) {
        int64_t best = 0;
        for (int64_t i = 1; i < len; i++)
          if (h.f[off + (uint64_t)cview_at(v, o, i)] > h.f[off + (uint64_t)cview_at(v, o, best)])
            best = i;
        ck_assert_msg(y[o] == best, "view %d (%s) output %lld: %lld, expected %lld", c,
                      comm ? "commutative" : "ordered", (long long)o, (long long)y[o],
                      (long long)best);
      }
      cases_run++;
    }
  free(y);
  src_free(&h);
}
END_TEST

/* A non-commutative struct state (2x2 matrices mod 2^32 as four u32 fields, each element lifted
 * with its index): exactly the CPU's left fold in index order. */
START_TEST(custom_matrix_order) {
  if (!gpu) return;
  host_src h;
  src_make(&h);
  static const rj_dtype f[4] = {RJ_U32, RJ_U32, RJ_U32, RJ_U32};
  static const uint64_t id[4] = {1, 0, 0, 1};
  uint32_t *y = malloc(1000003 * 8);
  for (int c = 0; c < NCVIEWS; c++) {
    const cview *v = &cviews[c];
    int64_t outs, len;
    cview_sizes(v, &outs, &len);
    rj_request r;
    state_req(&r, v, RJ_I32, MATRIX_IR, "mmul", "mlift", "mfin", 4, f, id, 0, 0);
    uint64_t off = (uint64_t)(c % 3);
    reduce_to_host(&r, h.di + off * 4, h.dy, outs, y);
    for (int64_t o = 0; o < outs; o++) {
      uint32_t m[4] = {1, 0, 0, 1};
      for (int64_t i = 0; i < len; i++)
        matrix_fold(m, (uint32_t)h.i[off + (uint64_t)cview_at(v, o, i)], i);
      ck_assert_msg(y[o] == matrix_finish(m), "view %d output %lld: %u, expected %u", c,
                    (long long)o, y[o], matrix_finish(m));
    }
    cases_run++;
  }
  free(y);
  src_free(&h);
}
END_TEST

/* f16 elements, a scalar state: a custom max over halves is op max forced on the same variant,
 * bit for bit. */
START_TEST(custom_half_max) {
  if (!gpu) return;
  host_src h;
  src_make(&h);
  uint64_t *a = malloc(1000003 * 8), *b = malloc(1000003 * 8);
  for (int c = 0; c < NCVIEWS; c++) {
    const cview *v = &cviews[c];
    int64_t outs, len;
    cview_sizes(v, &outs, &len);
    rj_request r, q;
    tensor_req(&r, RJ_OP_CUSTOM, RJ_F16, v->nd, v->shape, v->na, v->axes);
    r.u.tensor.combine.ir = HMAX_IR;
    snprintf(r.u.tensor.combine.fn, sizeof r.u.tensor.combine.fn, "hmax");
    r.u.tensor.combine.identity = 0xfc00u;
    r.u.tensor.combine.commutative = 1;
    rj_kernel *k = NULL;
    ck_assert_msg(rj_compile(ctx, &r, NULL, &k) == RJ_OK, "%s", rj_errmsg(ctx));
    tensor_req(&q, RJ_OP_MAX, RJ_F16, v->nd, v->shape, v->na, v->axes);
    snprintf(q.variant, sizeof q.variant, "%s", rj_kernel_variant(k));
    uint64_t src = h.dh + (uint64_t)(c % 3) * 2;
    reduce_to_host(&r, src, h.dy, outs, a);
    reduce_to_host(&q, src, h.dy, outs, b);
    ck_assert_msg(memcmp(a, b, (size_t)outs * 2) == 0, "view %d: custom f16 max differs (%s)", c,
                  rj_kernel_variant(k));
    cases_run++;
  }
  free(a);
  free(b);
  src_free(&h);
}
END_TEST

/* argmax / argmin with "values": the indices are the plain op's, and each value is the source
 * element at its index, bit for bit (f32 with ties, i32, f16; every view, misaligned starts). */
START_TEST(argmax_values) {
  if (!gpu) return;
  host_src h;
  src_make(&h);
  int64_t *ia = malloc(1000003 * 8), *ib = malloc(1000003 * 8);
  uint64_t *va = malloc(1000003 * 8), dv = 0;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 1000003 * 8, &dv), RJ_OK);
  static const rj_dtype dts[3] = {RJ_F32, RJ_I32, RJ_F16};
  for (int c = 0; c < NCVIEWS; c++)
    for (int d = 0; d < 3; d++)
      for (int op = 0; op < 2; op++) {
        const cview *v = &cviews[c];
        int64_t outs, len;
        cview_sizes(v, &outs, &len);
        rj_request r, q;
        rj_op o = op ? RJ_OP_ARGMIN : RJ_OP_ARGMAX;
        tensor_req(&r, o, dts[d], v->nd, v->shape, v->na, v->axes);
        r.u.tensor.values = 1;
        tensor_req(&q, o, dts[d], v->nd, v->shape, v->na, v->axes);
        int bytes = d == 2 ? 2 : 4;
        uint64_t off = (uint64_t)(c % 3), base = d == 0 ? h.df : d == 1 ? h.di : h.dh;
        const char *host = d == 0   ? (const char *)h.f
                           : d == 1 ? (const char *)h.i
                                    : (const char *)h.h;
        memset(va, 0xa5, (size_t)outs * 8);
        ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dv, va, (size_t)outs * 8), RJ_OK);
        ck_assert_int_eq(rj_memcpy_htod(ctx, 0, h.dy, va, (size_t)outs * 8), RJ_OK);
        rj_status st =
            rj_reduce_values(ctx, &r, NULL, base + off * (uint64_t)bytes, h.dy, dv, NULL);
        ck_assert_msg(st == RJ_OK, "rj_reduce_values: %s", rj_errmsg(ctx));
        ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, ia, h.dy, (size_t)outs * 8), RJ_OK);
        ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, va, dv, (size_t)outs * 8), RJ_OK);
        reduce_to_host(&q, base + off * (uint64_t)bytes, h.dy, outs, ib);
        for (int64_t x = 0; x < outs; x++) {
          ck_assert_msg(ia[x] == ib[x],
                        "view %d dtype %d op %d output %lld: index %lld, the plain "
                        "op's %lld",
                        c, d, op, (long long)x, (long long)ia[x], (long long)ib[x]);
          ck_assert(ia[x] >= 0 && ia[x] < len);
          const char *want = host + (off + (uint64_t)cview_at(v, x, ia[x])) * (uint64_t)bytes;
          ck_assert_msg(memcmp((const char *)va + x * bytes, want, (size_t)bytes) == 0,
                        "view %d dtype %d op %d output %lld: the value is not the element at its "
                        "index",
                        c, d, op, (long long)x);
        }
        cases_run++;
      }
  rj_device_free(ctx, 0, dv);
  free(ia);
  free(ib);
  free(va);
  src_free(&h);
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
  tcase_add_test(tc, custom_combines);
  suite_add_tcase(s, tc);
  TCase *cs = tcase_create("custom_struct"); /* CK_RUN_CASE=custom_struct runs these alone */
  tcase_set_timeout(cs, 600);
  tcase_add_checked_fixture(cs, setup, teardown);
  tcase_add_test(cs, custom_welford);
  tcase_add_test(cs, custom_bench_result_width);
  tcase_add_test(cs, custom_argmax_state);
  tcase_add_test(cs, custom_matrix_order);
  tcase_add_test(cs, custom_half_max);
  suite_add_tcase(s, cs);
  TCase *vs = tcase_create("values"); /* CK_RUN_CASE=values */
  tcase_set_timeout(vs, 600);
  tcase_add_checked_fixture(vs, setup, teardown);
  tcase_add_test(vs, argmax_values);
  suite_add_tcase(s, vs);
  int failed = rjt_run_in_process(s);
  printf("%d tensor request cases run\n", cases_run);
  return failed ? 1 : 0;
}
