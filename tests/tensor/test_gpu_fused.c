/* GPU suite for fused maps (docs/TENSOR.md "Fused maps"): every built-in map x float dtype x
 * tensor variant (rows, cols, generic, cluster forced; runtime-size rows and cols) x NaN policy,
 * the epilogues, broadcast (stride 0) and strided other inputs, masks of other dtypes (f16 data
 * with an f32 / u32 / i64 mask), all-zero masks (seeds whose bits 6-7 are 0: `run`'s inputs),
 * each against the float64 oracle of `run`; the masked mean (f16 / bf16 / f32 / f64 data with f32,
 * i8, u8 and bool masks on every view; all-zero masks give NaN) against the oracle and, read back
 * from rj_reduce, against a host reference; and the L2 norm of values whose squares overflow the
 * dtype (and f32), read back from rj_reduce, against the exact result; a caller's map as LLVM IR
 * (Huber's loss of f32 x, y; an f16 x with an i8 weight) on every view under mean / sum / max,
 * against its C reference (rj_check_opts.map_ref), and a caller's epilogue (a square root in IR)
 * against its own (epilogue_ref).  Skips without a GPU.
 * One part: CK_RUN_CASE=masked (or map_ir) build/tests/test_gpu_fused. */
#include "rjtest.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static rj_ctx *ctx;
static int gpu, cases_run;

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* seeds 3 (masks all zero) and 7922, 15841 (random 0 / 1 masks) */
static void run(const char *json, int nans) {
  for (int s = 0; s < 3; s++)
    rjt_run_ok(ctx, json, (uint64_t)(s * 7919 + 3), nans);
  cases_run++;
}

static const char *const dtypes[] = {"f16", "bf16", "f32", "f64"};
/* a map, the op it reduces with, and whether it takes input 1 */
typedef struct mcase {
  const char *map, *op;
  bool two;
} mcase;
static const mcase maps[] = {
    {"abs", "sum", false},   {"abs", "max", false},        {"square", "sum", false},
    {"mul", "sum", true},    {"sub_square", "mean", true}, {"abs_sub", "mean", true},
    {"where", "sum", true},  {"where", "min", true},       {"nonzero", "sum", false},
    {"where", "mean", true}, /* the masked mean: divided by the selected count */
};
#define NMAPS ((int)(sizeof maps / sizeof maps[0]))

static const char *const views[] = {
    "\"shape\":[13,17],\"axes\":[1],\"variant\":\"tensor_rows\"",
    "\"shape\":[3,100003],\"axes\":[1],\"variant\":\"tensor_rows\"",
    "\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[1],\"variant\":\"tensor_rows\"",
    "\"shape\":[33,4099],\"axes\":[0],\"variant\":\"tensor_cols\"",
    "\"shape\":[5,7,11],\"axes\":[1],\"variant\":\"tensor_cols\"",
    "\"shape\":[5,7,11],\"axes\":[0,2],\"variant\":\"tensor_generic\"",
    "\"shape\":[100,37],\"strides\":[1,101],\"axes\":[0],\"variant\":\"tensor_generic\"",
    "\"shape\":[%d],\"variant\":\"tensor_cluster\"", /* 40000 vectors + 3 (view_of) */
    "\"shape\":[257,1025],\"axes\":[1],\"dynamic\":true",
    "\"shape\":[1025,257],\"axes\":[0],\"dynamic\":true",
};
#define NVIEWS ((int)(sizeof views / sizeof views[0]))
/* view v for dtype d: the cluster's length in the dtype's vectors */
static const char *view_of(int v, int d) {
  static char buf[128];
  snprintf(buf, sizeof buf, views[v], 40000 * (d < 2 ? 8 : d == 2 ? 4 : 2) + 3);
  return buf;
}

/* reductions of more than 65504 / 2 elements: an f16 sum of |x|, x^2 or a count overflows */
static bool f16_overflows(int view, int d, const char *what) {
  bool positive = strstr(what, "abs") || strstr(what, "square") || strstr(what, "nonzero") ||
                  strstr(what, "sumsq") || strstr(what, "\"p\":1") || strstr(what, "count");
  bool sums = strstr(what, "sum") || strstr(what, "\"p\":1") || strstr(what, "count");
  return d == 0 && (view == 1 || view == 7) && positive && sums && !strstr(what, "sqrt");
}

/* every map x dtype on view _i, NaN propagate, and ignore for f16 and f32 (others in src's layout,
 * src's dtype) */
START_TEST(maps_views) {
  if (!gpu) return;
  for (int m = 0; m < NMAPS; m++)
    for (int d = 0; d < 4; d++)
      for (int nan = 0; nan < (strcmp(maps[m].op, "mean") && d % 2 == 0 ? 2 : 1); nan++) {
        char what[64];
        snprintf(what, sizeof what, "%s %s", maps[m].map, maps[m].op);
        if (f16_overflows(_i, d, what)) continue;
        char others[64] = "";
        if (maps[m].two)
          snprintf(others, sizeof others, ",\"others\":[{\"dtype\":\"%s\"}]", dtypes[d]);
        run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"map\":\"%s\"%s,"
                    "\"nan\":\"%s\"}",
                    maps[m].op, dtypes[d], view_of(_i, d), maps[m].map, others,
                    nan ? "ignore" : "propagate"),
            3);
      }
}
END_TEST

/* the epilogues after sum / mean / max, and the named ops, on view _i */
START_TEST(epilogues) {
  if (!gpu || _i == 1 || _i == 2 || _i == 4 || _i == 6) return; /* one view of each kind */
  static const char *const tails[] = {
      "\"op\":\"sum\",\"map\":\"square\",\"epilogue\":\"sqrt\"",
      "\"op\":\"mean\",\"map\":\"abs\",\"epilogue\":\"log\"",
      "\"op\":\"max\",\"map\":\"abs\",\"epilogue\":\"log\"",
      "\"op\":\"sum\",\"epilogue\":\"scale\",\"scale\":-0.375",
      "\"op\":\"sum\",\"map\":\"abs\",\"epilogue\":\"sqrt\",\"acc_dtype\":\"f64\"",
      "\"op\":\"norm\"",
      "\"op\":\"norm\",\"p\":1",
      "\"op\":\"norm\",\"p\":\"inf\"",
      "\"op\":\"sumsq\"",
      "\"op\":\"amax\"",
      "\"op\":\"count_nonzero\"",
  };
  for (int k = 0; k < (int)(sizeof tails / sizeof tails[0]); k++)
    for (int d = 0; d < 4; d++) {
      if ((strstr(tails[k], "acc_dtype") && d == 3) || f16_overflows(_i, d, tails[k])) continue;
      run(rjt_fmt("{\"kind\":\"tensor\",\"dtype\":\"%s\",%s,%s}", dtypes[d], view_of(_i, d),
                  tails[k]),
          0);
    }
  static const char *const two[] = {"dot", "mse", "l1"};
  for (int k = 0; k < 3; k++)
    for (int d = 0; d < 4; d++)
      run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"others\":[{"
                  "\"dtype\":\"%s\"}]}",
                  two[k], dtypes[d], view_of(_i, d), dtypes[d]),
          0);
}
END_TEST

/* other inputs of their own layout: broadcast (stride 0) rows / columns, transposed, masks of
 * other dtypes, and accum */
START_TEST(layouts) {
  if (!gpu) return;
  static const char *const cases[] = {
      /* a per-row mean broadcast along the reduced dim: (x - mu)^2 */
      "\"op\":\"sum\",\"dtype\":\"%s\",\"shape\":[64,1000],\"axes\":[1],\"map\":\"sub_square\","
      "\"others\":[{\"dtype\":\"%s\",\"strides\":[1,0]}]",
      /* one weight vector for every row */
      "\"op\":\"sum\",\"dtype\":\"%s\",\"shape\":[64,1000],\"axes\":[1],\"map\":\"mul\","
      "\"others\":[{\"dtype\":\"%s\",\"strides\":[0,1]}]",
      "\"op\":\"sum\",\"dtype\":\"%s\",\"shape\":[1000,64],\"axes\":[0],\"map\":\"mul\","
      "\"others\":[{\"dtype\":\"%s\",\"strides\":[0,1]}]",
      /* a transposed other input */
      "\"op\":\"sum\",\"dtype\":\"%s\",\"shape\":[40,300],\"axes\":[1],\"map\":\"mul\","
      "\"others\":[{\"dtype\":\"%s\",\"strides\":[1,40]}]",
      "\"op\":\"max\",\"dtype\":\"%s\",\"shape\":[5,7,11],\"axes\":[0,2],\"map\":\"abs_sub\","
      "\"others\":[{\"dtype\":\"%s\",\"strides\":[0,11,1]}]",
      /* padded src rows, the other dense */
      "\"op\":\"sum\",\"dtype\":\"%s\",\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[1],"
      "\"map\":\"mul\",\"others\":[{\"dtype\":\"%s\",\"strides\":[1000,1]}]",
      "\"op\":\"sum\",\"dtype\":\"%s\",\"shape\":[257,1025],\"axes\":[1],\"map\":\"mul\","
      "\"others\":[{\"dtype\":\"%s\"}],\"accum\":true",
  };
  for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++)
    for (int d = 0; d < 4; d++) {
      char fmt[512];
      snprintf(fmt, sizeof fmt, "{\"kind\":\"tensor\",%s}", cases[c]);
      run(rjt_fmt(fmt, dtypes[d], dtypes[d]), 2);
    }
  /* masks of other dtypes, broadcast or not */
  static const char *const masks[] = {"f32", "u32", "i64", "f16", "f64"};
  static const char *const mviews[] = {"\"shape\":[64,1000],\"axes\":[1]",
                                       "\"shape\":[1000,64],\"axes\":[0]",
                                       "\"shape\":[5,7,11],\"axes\":[0,2]", "\"shape\":[320003]"};
  for (int m = 0; m < 5; m++)
    for (int v = 0; v < 4; v++)
      for (int d = 0; d < 4; d++)
        run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"%s\",%s,\"map\":\"where\","
                    "\"others\":[{\"dtype\":\"%s\"}]}",
                    dtypes[d], mviews[v], masks[m]),
            2);
  /* integer data: masked sum / max, count_nonzero (exact) */
  static const char *const ints[] = {"i32", "u32", "i64", "u64"};
  for (int d = 0; d < 4; d++)
    for (int v = 0; v < 4; v++) {
      run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"%s\",%s,\"map\":\"where\","
                  "\"others\":[{\"dtype\":\"f32\"}]}",
                  ints[d], mviews[v]),
          0);
      run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"%s\",%s,\"map\":\"where\","
                  "\"others\":[{\"dtype\":\"u32\"}]}",
                  ints[d], mviews[v]),
          0);
      run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"count_nonzero\",\"dtype\":\"%s\",%s}", ints[d],
                  mviews[v]),
          0);
    }
  run("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f16\",\"shape\":[64,1000],\"axes\":[1],"
      "\"map\":\"where\",\"others\":[{\"dtype\":\"f32\",\"strides\":[1,0]}]}",
      2);
}
END_TEST

/* ---- the L2 norm of values whose squares overflow the dtype (and f32 for bf16 / f32) */
static uint16_t bf16_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16); /* exact for the values below */
}

/* norm of n copies of the element `bits` (width bytes) in one output, read back as double */
static double norm_of(const char *dt, const void *elem, int width, int n) {
  char *h = malloc((size_t)n * (size_t)width);
  for (int i = 0; i < n; i++)
    memcpy(h + (size_t)i * (size_t)width, elem, (size_t)width);
  rj_devptr src = 0, dst = 0;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)n * (size_t)width, &src), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 16, &dst), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, src, h, (size_t)n * (size_t)width), RJ_OK);
  rj_request r;
  rjt_parse(ctx,
            rjt_fmt("{\"kind\":\"tensor\",\"op\":\"norm\",\"dtype\":\"%s\",\"shape\":[%d]}", dt, n),
            &r);
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, src, dst, NULL), RJ_OK);
  unsigned char out[8] = {0};
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, out, dst, (size_t)width), RJ_OK);
  rj_device_free(ctx, 0, src);
  rj_device_free(ctx, 0, dst);
  free(h);
  double v = 0;
  if (width == 8) {
    memcpy(&v, out, 8);
  } else if (width == 4) {
    float f;
    memcpy(&f, out, 4);
    v = f;
  } else if (strcmp(dt, "bf16") == 0) {
    uint32_t u = (uint32_t)(out[0] | out[1] << 8) << 16;
    float f;
    memcpy(&f, &u, 4);
    v = f;
  } else { /* f16, normal values */
    unsigned b = (unsigned)(out[0] | out[1] << 8);
    v = ((b & 0x7c00) == 0x7c00) ? INFINITY
                                 : ldexp(1.0 + (b & 0x3ff) / 1024.0, (int)((b >> 10) & 31) - 15);
  }
  return v;
}

START_TEST(l2_no_overflow) {
  if (!gpu) return;
  uint16_t h = 0x7600; /* f16 24576: its square overflows f16 */
  ck_assert_double_eq(norm_of("f16", &h, 2, 4), 49152.0);
  h = 0x7bff; /* f16 max 65504 */
  ck_assert_double_eq(norm_of("f16", &h, 2, 1), 65504.0);
  uint16_t b = bf16_bits(0x1p120f); /* squares overflow f32 */
  ck_assert_double_eq(norm_of("bf16", &b, 2, 16), 0x1p122);
  b = 0x7f7f; /* bf16 max */
  ck_assert_double_eq(norm_of("bf16", &b, 2, 1), 0x1.fep127);
  float f = 0x1p120f;
  ck_assert_double_eq(norm_of("f32", &f, 4, 1 << 14), 0x1p127);
  f = 3.4028234663852886e38f; /* f32 max */
  ck_assert_double_eq(norm_of("f32", &f, 4, 1), (double)f);
  f = 1e30f;
  double got = norm_of("f32", &f, 4, 1000);
  ck_assert_msg(fabs(got - sqrt(1000.0) * 1e30) <= 1e-6 * sqrt(1000.0) * 1e30, "%g", got);
  double x = 1e150; /* f64: squares within range */
  ck_assert_double_eq_tol(norm_of("f64", &x, 8, 1000), sqrt(1000.0) * 1e150, 1e-12 * 3.2e151);
  cases_run += 8;
}
END_TEST

/* ---- the masked mean: mixed dtypes through `run`'s oracle (seed 3: all-zero masks, NaN) */
START_TEST(masked_views) {
  if (!gpu) return;
  static const char *const masks[] = {"f32", "i8", "u8", "bool"};
  static const char *const data[] = {"f16", "bf16", "f32"};
  for (int v = 0; v < NVIEWS; v++)
    for (int m = 0; m < 4; m++)
      for (int d = 0; d < 3; d++)
        run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"masked_mean\",\"dtype\":\"%s\",%s,"
                    "\"others\":[{\"dtype\":\"%s\"}]}",
                    data[d], view_of(v, d < 2 ? 0 : 2), masks[m]),
            m == 0 ? 2 : 0);
  /* a per-row mask broadcast along the reduced dim, an epilogue, an f64 accumulator */
  run("{\"kind\":\"tensor\",\"op\":\"mean\",\"dtype\":\"f16\",\"shape\":[64,1000],\"axes\":[1],"
      "\"map\":\"where\",\"others\":[{\"dtype\":\"i8\",\"strides\":[1,0]}],\"epilogue\":\"sqrt\"}",
      0);
  run("{\"kind\":\"tensor\",\"op\":\"masked_mean\",\"dtype\":\"bf16\",\"shape\":[3,100003],"
      "\"axes\":[1],\"others\":[{\"dtype\":\"f32\"}],\"acc_dtype\":\"f64\"}",
      0);
}
END_TEST

/* f16 data (element i of row r: (i % 7) - 3 + r / 8) with an f32 and an i8 mask (i % 3 == 0 in
 * even rows; none in odd rows) through rj_reduce_n, against the host's mean of the selected
 * elements: odd rows NaN */
static void masked_rows(const char *mdt, int mbytes, int R, int N, bool cols) {
  uint16_t *x = malloc((size_t)R * (size_t)N * 2);
  unsigned char *m = calloc((size_t)R * (size_t)N, (size_t)mbytes);
  double *want = calloc((size_t)R, sizeof *want);
  int *cnt = calloc((size_t)R, sizeof *cnt);
  for (int r = 0; r < R; r++)
    for (int i = 0; i < N; i++) {
      double v = (i % 7) - 3 + r / 8.0; /* exact in f16 */
      size_t at = cols ? (size_t)i * (size_t)R + (size_t)r : (size_t)r * (size_t)N + (size_t)i;
      int sign = v < 0, e = 0;
      double a = fabs(v);
      uint16_t b = 0;
      if (a != 0) {
        double f = frexp(a, &e); /* a = f 2^e, f in [0.5, 1) */
        b = (uint16_t)(((e - 1 + 15) << 10) | (int)((f * 2 - 1) * 1024));
      }
      x[at] = (uint16_t)(b | sign << 15);
      bool on = r % 2 == 0 && i % 3 == 0;
      if (on && mbytes == 4) {
        float one = 1;
        memcpy(m + at * 4, &one, 4);
      } else if (on) {
        m[at] = 1;
      }
      if (on) want[r] += v, cnt[r]++;
    }
  rj_devptr src = 0, msk = 0, dst = 0;
  size_t n = (size_t)R * (size_t)N;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, n * 2, &src), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, n * (size_t)mbytes, &msk), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)R * 2, &dst), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, src, x, n * 2), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, msk, m, n * (size_t)mbytes), RJ_OK);
  rj_request q;
  rjt_parse(ctx,
            rjt_fmt("{\"kind\":\"tensor\",\"op\":\"masked_mean\",\"dtype\":\"f16\",\"shape\":[%d,"
                    "%d],\"axes\":[%d],\"others\":[{\"dtype\":\"%s\"}]}",
                    cols ? N : R, cols ? R : N, cols ? 0 : 1, mdt),
            &q);
  ck_assert_int_eq(rj_reduce_n(ctx, &q, NULL, src, &msk, 1, dst, 0, NULL), RJ_OK);
  uint16_t *got = malloc((size_t)R * 2);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, dst, (size_t)R * 2), RJ_OK);
  for (int r = 0; r < R; r++) {
    unsigned b = got[r];
    bool nan = (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
    if (cnt[r] == 0) {
      ck_assert_msg(nan, "%s row %d: 0x%04x, expected NaN (no element selected)", mdt, r, b);
      continue;
    }
    double e = (b >> 10) & 31, f = b & 0x3ff;
    double g = (e ? ldexp(1 + f / 1024, (int)e - 15) : ldexp(f / 1024, -14)) * (b >> 15 ? -1 : 1);
    double w = want[r] / cnt[r];
    ck_assert_msg(fabs(g - w) <= 2e-3 * fabs(w) + 1e-3, "%s row %d: %g, expected %g", mdt, r, g, w);
  }
  rj_device_free(ctx, 0, src);
  rj_device_free(ctx, 0, msk);
  rj_device_free(ctx, 0, dst);
  free(x), free(m), free(want), free(cnt), free(got);
  cases_run++;
}

START_TEST(masked_host) {
  if (!gpu) return;
  masked_rows("f32", 4, 64, 1000, false);
  masked_rows("i8", 1, 64, 1000, false);
  masked_rows("i8", 1, 64, 4099, true);
  masked_rows("f32", 4, 1, 1 << 20, false); /* one row of 2^20: split, all selected in row 0 */
}
END_TEST

/* ---- a caller's map (LLVM IR) against its C reference (rj_check_opts.map_ref) */
#define HUBER_IR                                                                                   \
  "define float @huber(float %x, float %y) {\\n  %d = fsub float %x, %y\\n"                        \
  "  %a = call float @llvm.fabs.f32(float %d)\\n  %s = fcmp olt float %a, 1.0\\n"                  \
  "  %q = fmul float %d, %d\\n  %h = fmul float %q, 0.5\\n  %l = fsub float %a, 0.5\\n"            \
  "  %r = select i1 %s, float %h, float %l\\n  ret float %r\\n}\\n"                                \
  "declare float @llvm.fabs.f32(float)\\n"
/* f16 x, an i8 weight: float(x) * float(w) + 0.25 */
#define AFFINE_IR                                                                                  \
  "define float @aff(half %x, i8 %w) {\\n  %f = fpext half %x to float\\n"                         \
  "  %g = sitofp i8 %w to float\\n  %p = fmul float %f, %g\\n  %r = fadd float %p, 0.25\\n"        \
  "  ret float %r\\n}\\n"

static double huber_ref(const double *in, int n, void *ud) {
  (void)n, (void)ud;
  double d = in[0] - in[1], a = fabs(d);
  return a < 1 ? 0.5 * d * d : a - 0.5;
}

static double affine_ref(const double *in, int n, void *ud) {
  (void)n, (void)ud;
  return in[0] * in[1] + 0.25;
}

static double sqrt_ref(double v, void *ud) {
  (void)ud;
  return sqrt(v);
}

static void run_refs(const char *json, double (*ref)(const double *, int, void *),
                     double (*eref)(double, void *)) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  for (int s = 0; s < 3; s++) {
    rj_check_opts o;
    rj_check_opts_init(&o);
    o.seed = (uint64_t)(s * 7919 + 3);
    o.map_ref = ref;
    o.epilogue_ref = eref;
    rj_check_result res = {.struct_size = sizeof res};
    rj_status st = rj_check(ctx, &r, &o, &res);
    ck_assert_msg(st == RJ_OK, "%s: %s", rj_status_name(st), rj_errmsg(ctx));
    ck_assert_msg(res.ok, "variant %s: %lld wrong of %lld: %s\n  %s", res.variant,
                  (long long)res.wrong, (long long)res.checked, res.first_error, json);
  }
  cases_run++;
}

static void run_ref(const char *json, double (*ref)(const double *, int, void *)) {
  run_refs(json, ref, NULL);
}

#define SQRT_IR                                                                                    \
  "define float @rt(float %v) {\\n  %r = call float @llvm.sqrt.f32(float %v)\\n  ret float "       \
  "%r\\n}\\ndeclare float @llvm.sqrt.f32(float)\\n"

START_TEST(map_ir) {
  if (!gpu) return;
  static const char *const ops[] = {"mean", "sum", "max"};
  for (int v = 0; v < NVIEWS; v++)
    for (int k = 0; k < 3; k++) {
      run_ref(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",%s,\"others\":[{"
                      "\"dtype\":\"f32\"}],\"map\":{\"ir\":\"%s\",\"function\":\"huber\"}}",
                      ops[k], view_of(v, 2), HUBER_IR),
              huber_ref);
      if (k == 1) continue; /* an f16 sum of |x w| up to 127 |x| may pass 65504 */
      run_ref(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f16\",%s,\"others\":[{"
                      "\"dtype\":\"i8\"}],\"map\":{\"ir\":\"%s\",\"function\":\"aff\"}}",
                      ops[k], view_of(v, 0), AFFINE_IR),
              affine_ref);
    }
  /* a caller's epilogue: its own module after a built-in map, or in the map's module */
  for (int v = 0; v < NVIEWS; v++) {
    run_refs(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"bf16\",%s,\"map\":"
                     "\"square\",\"epilogue\":{\"ir\":\"%s\",\"function\":\"rt\"}}",
                     view_of(v, 0), SQRT_IR),
             NULL, sqrt_ref);
    run_refs(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"mean\",\"dtype\":\"f32\",%s,\"others\":[{"
                     "\"dtype\":\"f32\"}],\"map\":{\"ir\":\"%s%s\",\"function\":\"huber\"},"
                     "\"epilogue\":{\"function\":\"rt\"}}",
                     view_of(v, 2), HUBER_IR, SQRT_IR),
             huber_ref, sqrt_ref);
  }
  /* without a reference: refused, naming the field */
  rj_request r;
  rjt_parse(ctx,
            rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,100],"
                    "\"axes\":[1],\"others\":[{\"dtype\":\"f32\"}],\"map\":{\"ir\":\"%s\","
                    "\"function\":\"huber\"}}",
                    HUBER_IR),
            &r);
  rj_check_opts o;
  rj_check_opts_init(&o);
  rj_check_result res = {.struct_size = sizeof res};
  ck_assert_int_eq(rj_check(ctx, &r, &o, &res), RJ_EUNSUPPORTED);
  ck_assert(strstr(rj_errmsg(ctx), "map: a caller's map (LLVM IR) has no CPU oracle"));
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_fused");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, maps_views, 0, NVIEWS);
  tcase_add_loop_test(tc, epilogues, 0, NVIEWS);
  tcase_add_test(tc, layouts);
  tcase_add_test(tc, l2_no_overflow);
  suite_add_tcase(s, tc);
  TCase *mk = tcase_create("masked");
  tcase_set_timeout(mk, 600);
  tcase_add_checked_fixture(mk, setup, teardown);
  tcase_add_test(mk, masked_views);
  tcase_add_test(mk, masked_host);
  suite_add_tcase(s, mk);
  TCase *ir = tcase_create("map_ir");
  tcase_set_timeout(ir, 600);
  tcase_add_checked_fixture(ir, setup, teardown);
  tcase_add_test(ir, map_ir);
  suite_add_tcase(s, ir);
  int failed = rjt_run_in_process(s);
  printf("%d fused request cases run\n", cases_run);
  return failed ? 1 : 0;
}
