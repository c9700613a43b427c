/* GPU suite for the state ops (argmax argmin var std logsumexp) of tensor requests: every op x
 * dtype x class (rows, cols, generic; each also forced onto tensor_generic) x nan policy x input
 * style, shapes with tails, misaligned starts (seed mod 8), strided and broadcast views, rows and
 * columns split over CTAs, runtime-size kernels, var's correction, and the 1-D sizes of
 * tensor_cluster (case `cluster`), argmax / argmin with "values" (case `values`) — each against the
 * long-double oracle of jit/harness/oracle_state.c (argmax / argmin exact, the first index of
 * ties), every launch twice (bitwise equal).  Input styles (seed bits 3-4): 0 ties (argmax) or
 * plain, 1 large offsets (var: 1e4 + noise in f32) or exp overflow territory (logsumexp x 80),
 * 2 huge magnitudes, -inf rows and +inf elements, 3 constant rows or the largest magnitudes.
 * Skips without a GPU. */
#include "rjtest.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static rj_ctx *ctx;
static int gpu;
static int cases_run;

static const char *const sops[] = {"argmax", "argmin", "var", "std", "logsumexp"};
static const char *const dtypes[] = {"f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"};
static const char *const nans[] = {"propagate", "propagate", "ignore"};

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

static const char *const shapes[] = {
    "\"shape\":[1]",
    "\"shape\":[7]",
    "\"shape\":[65536]",
    "\"shape\":[1000003]",
    "\"shape\":[13,17],\"axes\":[1]",
    "\"shape\":[13,17],\"axes\":[0]",
    "\"shape\":[4099,33],\"axes\":[1]",
    "\"shape\":[33,4099],\"axes\":[0]",
    "\"shape\":[3,300007],\"axes\":[1]",
    "\"shape\":[30011,5],\"axes\":[0]",
    "\"shape\":[5,7,11],\"axes\":[1]",
    "\"shape\":[5,7,11],\"axes\":[0,2]",
    "\"shape\":[4,6,8,10],\"axes\":[1,3]",
    "\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[1]",
    "\"shape\":[100,37],\"strides\":[1,101],\"axes\":[0]",
    "\"shape\":[50,20],\"strides\":[40,2],\"axes\":[1]",
    "\"shape\":[8,16],\"strides\":[0,1],\"axes\":[0]",
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* one request, one run per input style (seed = style * 8 + a start offset) */
static void run_styles(const char *json, int nan_count) {
  for (int style = 0; style < 4; style++)
    rjt_run_ok(ctx, json, (uint64_t)(style * 8 + (style * 3 + cases_run) % 8), nan_count);
  cases_run++;
}

START_TEST(every_op_dtype_shape) {
  if (!gpu) return;
  for (int o = 0; o < 5; o++)
    for (int d = 0; d < 8; d++) {
      if (d >= 4 && o >= 2) continue; /* var std logsumexp: floats only */
      for (int n = 0; n < (d < 4 ? 3 : 1); n++)
        for (int g = 0; g < 2; g++) {
          char req[512];
          snprintf(req, sizeof req,
                   "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"nan\":\"%s\"%s}",
                   sops[o], dtypes[d], shapes[_i], nans[n],
                   g ? ",\"variant\":\"tensor_generic\"" : "");
          run_styles(req, n ? 3 : 0);
        }
    }
}
END_TEST

START_TEST(runtime_size) {
  if (!gpu) return;
  for (int o = 0; o < 5; o++)
    for (int d = 0; d < 4; d++) {
      char req[512];
      snprintf(req, sizeof req,
               "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"dynamic\":true}", sops[o],
               dtypes[d], shapes[_i]);
      run_styles(req, 0);
    }
}
END_TEST

/* long rows and tall columns: split over CTAs, the last CTA folds the states */
static const char *const split_shapes[] = {"\"shape\":[2,3000001],\"axes\":[1]",
                                           "\"shape\":[200003,64],\"axes\":[0]",
                                           "\"shape\":[4,50001,3],\"axes\":[1]"};
#define NSPLITS ((int)(sizeof split_shapes / sizeof split_shapes[0]))

START_TEST(splits) {
  if (!gpu) return;
  const char *shape = split_shapes[_i];
  for (int o = 0; o < 5; o++)
    for (int d = 0; d < 4; d++)
      for (int dyn = 0; dyn < 2; dyn++) {
        char req[512];
        snprintf(req, sizeof req, "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s%s}",
                 sops[o], dtypes[d], shape, dyn ? ",\"dynamic\":true" : "");
        run_styles(req, 0);
        if (dyn) continue;
        snprintf(req, sizeof req,
                 "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"nan\":\"ignore\"}",
                 sops[o], dtypes[d], shape);
        rjt_run_ok(ctx, req, 1, 5);
      }
}
END_TEST

/* var / std corrections, n <= correction included (inf or nan, as torch) */
START_TEST(corrections) {
  if (!gpu) return;
  const char *sh[] = {"\"shape\":[64,1],\"axes\":[1]", "\"shape\":[64,2],\"axes\":[1]",
                      "\"shape\":[3,1000],\"axes\":[1]", "\"shape\":[1000,3],\"axes\":[0]"};
  for (int i = 0; i < 4; i++)
    for (int o = 2; o < 4; o++)
      for (int c = 0; c < 4; c++) {
        char req[512];
        snprintf(req, sizeof req,
                 "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",%s,\"correction\":%d}",
                 sops[o], sh[i], c == 3 ? 5 : c);
        run_styles(req, 0);
      }
}
END_TEST

/* rj_bench's bytes: the source read once at its dtype's size, the destination written once at
 * its own (argmax / argmin: 8-byte indices, whatever the source), read once more under accum;
 * and the pin rj_bench's compile took is released (the kernel stays cached, unpinned). */
START_TEST(bench_bytes) {
  if (!gpu) return;
  static const struct {
    const char *json;
    double bytes;
  } cases[] = {
      {"{\"kind\":\"tensor\",\"op\":\"argmax\",\"dtype\":\"f16\",\"shape\":[4099,33],\"axes\":[1]}",
       4099.0 * 33 * 2 + 4099.0 * 8},
      {"{\"kind\":\"tensor\",\"op\":\"argmin\",\"dtype\":\"f32\",\"shape\":[33,4099],\"axes\":[0]}",
       33.0 * 4099 * 4 + 4099.0 * 8},
      {"{\"kind\":\"tensor\",\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[4099,33],\"axes\":[1]}",
       4099.0 * 33 * 4 + 4099.0 * 4},
      {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[4099,33],\"axes\":[1],"
       "\"accum\":true}",
       4099.0 * 33 * 2 + 2 * 4099.0 * 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rj_request r;
    rjt_parse(ctx, cases[i].json, &r);
    rj_check_opts o;
    rj_check_opts_init(&o);
    rj_bench_result res = {.struct_size = sizeof res};
    rj_status s = rj_bench(ctx, &r, &o, &res);
    ck_assert_msg(s == RJ_OK, "%s: %s", cases[i].json, rj_errmsg(ctx));
    ck_assert_msg(res.bytes == cases[i].bytes, "%s: bytes %.0f, expected %.0f", cases[i].json,
                  res.bytes, cases[i].bytes);
    rj_cache_stats st = {.struct_size = sizeof st};
    ck_assert_int_eq(rj_ctx_cache_stats(ctx, &st), RJ_OK);
    ck_assert_int_eq(st.kernels_pinned, 0);
  }
}
END_TEST

/* tensor_cluster (sm_90+): 1-D sizes one cluster takes (forced, so that a size it declines fails
 * here), every op x dtype x nan policy x input style, a tail past the last full vector */
START_TEST(cluster) {
  if (!gpu) return;
  /* two sizes per element width: just past one CTA's reach, and a larger one with a tail */
  static const long long sizes[4][2] = {{65540, 262141},
                                        {131080, 524283},
                                        {32770, 131071},
                                        {65540, 262141}}; /* 4-, 2-, 8-byte, and i32 / u32 */
  for (int o = 0; o < 5; o++)
    for (int d = 0; d < 8; d++) {
      if (d >= 4 && o >= 2) continue; /* var std logsumexp: floats only */
      int w = d < 2 ? 1 : d == 3 || d >= 6 ? 2 : d == 2 ? 0 : 3;
      for (int n = 0; n < (d < 4 ? 3 : 1); n++)
        for (int z = 0; z < 2; z++) {
          char req[512];
          snprintf(req, sizeof req,
                   "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%lld],"
                   "\"nan\":\"%s\",\"variant\":\"tensor_cluster\"}",
                   sops[o], dtypes[d], sizes[w][z], nans[n]);
          run_styles(req, n ? 3 : 0);
        }
    }
}
END_TEST

/* argmax / argmin with "values" through rj_check: the index against the oracle and each value bit
 * for bit against the source element at it (NaNs under propagate: the first NaN's own bits; an
 * all-NaN row under ignore: -inf / +inf), in rows, cols, generic (forced), runtime-size and
 * cluster kernels; checked counts the values too; bench counts the values written. */
/* The views x dtypes x nan policies of case values; nan16: only f16 / bf16 with NaNs under
 * propagate (a NaN value, which crosses f32 in the kernel), else every other combination. */
static void values_views(bool nan16) {
  static const char *const vshapes[] = {
      "\"shape\":[4099,33],\"axes\":[1]",
      "\"shape\":[33,4099],\"axes\":[0]",
      "\"shape\":[5,7,11],\"axes\":[0,2]",
      "\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[1],\"variant\":\"tensor_generic\"",
      "\"shape\":[4099,33],\"axes\":[1],\"dynamic\":true",
      "\"variant\":\"tensor_cluster\",\"shape\":", /* + the dtype's size */
  };
  /* tensor_cluster's 1-D sizes (with a tail), by element width: 2, 4, 8 bytes */
  static const char *const csize[8] = {"[524283]", "[524283]", "[262141]", "[131071]",
                                       "[262141]", "[262141]", "[131071]", "[131071]"};
  for (int o = 0; o < 2; o++)
    for (int d = 0; d < 8; d++)
      for (size_t v = 0; v < sizeof vshapes / sizeof vshapes[0]; v++)
        for (int n = 0; n < (d < 4 ? 3 : 1); n++) {
          if (nan16 != (d < 2 && n == 1)) continue;
          char req[512];
          snprintf(req, sizeof req,
                   "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s%s,\"nan\":\"%s\","
                   "\"values\":true,\"deterministic\":true}",
                   sops[o], dtypes[d], vshapes[v], v == 5 ? csize[d] : "", nans[n]);
          run_styles(req, n ? 3 : 0);
        }
}

START_TEST(values) {
  if (!gpu) return;
  values_views(false);
  rj_request r; /* checked: indices and values */
  rjt_parse(ctx,
            "{\"kind\":\"tensor\",\"op\":\"argmax\",\"dtype\":\"f16\",\"shape\":[13,17],"
            "\"axes\":[1],\"values\":true}",
            &r);
  rj_check_opts co;
  rj_check_opts_init(&co);
  rj_check_result res = {.struct_size = sizeof res};
  ck_assert_int_eq(rj_check(ctx, &r, &co, &res), RJ_OK);
  ck_assert_msg(res.ok && res.checked == 2 * 13, "%lld checked: %s", (long long)res.checked,
                res.first_error);
  rj_bench_result b = {.struct_size = sizeof b};
  ck_assert_int_eq(rj_bench(ctx, &r, &co, &b), RJ_OK);
  ck_assert_msg(b.bytes == 13.0 * 17 * 2 + 13.0 * 8 + 13.0 * 2, "bytes %.0f", b.bytes);
}
END_TEST

/* f16 / bf16 with NaNs under propagate: the value of a row whose first NaN wins must be that
 * NaN's own bits (rj_check: bit for bit).  The kernel widens the element to f32 and narrows it
 * back (cvt.f32.f16, cvt.rn.f16.f32): should the GPU canonicalise a NaN there (0x7fff), this case
 * fails and says so, apart from case values. */
START_TEST(values_nan16) {
  if (!gpu) return;
  values_views(true);
}
END_TEST

/* var of f32 data with a large offset (off + u, u uniform in [-1, 1) rounded to f32: a variance
 * near 1/3), through rj_reduce on rows, cols, generic and cluster kernels: the worst relative
 * error against a long-double two-pass reference, printed per offset and view.  The threads' means
 * cross the combine in f32, so at 1e6 (f32 spacing 2^-4) each is off by up to 2^-5; the host
 * model of the same arithmetic (tests/ops/state_host, "var f32 of 1e+06 + U[-1,1)") gives about
 * 2-4 % there, and about 2e-4 at 1e4.  Bounds: 1e-3 at 1e4 (docs/TENSOR.md: about 3 digits), 0.1 at
 * 1e6; the printed figures are the measurement. */
START_TEST(offset_error) {
  if (!gpu) return;
  static const struct {
    const char *shape;
    int64_t outs, len;
  } views[] = {
      {"\"shape\":[64,4096],\"axes\":[1]", 64, 4096},
      {"\"shape\":[4096,64],\"axes\":[0]", 64, 4096},
      {"\"shape\":[8,4096,8],\"axes\":[1]", 64, 4096},
      {"\"shape\":[131072],\"variant\":\"tensor_cluster\"", 1, 131072},
  };
  static const double offs[2] = {1e4, 1e6};
  const int64_t n = 64 * 4096;
  float *x = malloc((size_t)n * sizeof *x), y[64];
  uint64_t dx = 0, dy = 0, r = 12345;
  ck_assert_ptr_nonnull(x);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)n * sizeof *x, &dx), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, sizeof y, &dy), RJ_OK);
  for (int o = 0; o < 2; o++) {
    for (int64_t i = 0; i < n; i++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      x[i] = (float)(offs[o] + (double)(r >> 11) * 0x1p-52 - 1);
    }
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dx, x, (size_t)n * sizeof *x), RJ_OK);
    for (size_t v = 0; v < sizeof views / sizeof views[0]; v++) {
      rj_request q;
      rjt_parse(
          ctx, rjt_fmt("{\"kind\":\"tensor\",\"op\":\"var\",\"dtype\":\"f32\",%s}", views[v].shape),
          &q);
      ck_assert_msg(rj_reduce(ctx, &q, NULL, dx, dy, NULL) == RJ_OK, "%s", rj_errmsg(ctx));
      ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, y, dy, (size_t)views[v].outs * sizeof *y), RJ_OK);
      double worst = 0;
      for (int64_t p = 0; p < views[v].outs; p++) {
        /* element k of output p: rows p*len + k; cols k*64 + p; generic (p/8)*len*8 + k*8 + p%8;
         * cluster k */
        long double s = 0, m2 = 0;
        for (int pass = 0; pass < 2; pass++) {
          long double mean = s / views[v].len;
          for (int64_t k = 0; k < views[v].len; k++) {
            int64_t at = v == 0   ? p * 4096 + k
                         : v == 1 ? k * 64 + p
                         : v == 2 ? (p / 8) * 4096 * 8 + k * 8 + p % 8
                                  : k;
            if (pass == 0)
              s += x[at];
            else
              m2 += (x[at] - mean) * (x[at] - mean);
          }
        }
        double ref = (double)(m2 / (views[v].len - 1)), rel = fabs(y[p] - ref) / ref;
        if (!(rel <= worst)) worst = rel;
      }
      printf("var f32 of %g + U[-1,1), %s: worst relative error %.3g\n", offs[o], views[v].shape,
             worst);
      ck_assert_msg(worst <= (o ? 0.1 : 1e-3), "%g + U[-1,1), %s: relative error %g", offs[o],
                    views[v].shape, worst);
    }
  }
  rj_device_free(ctx, 0, dx);
  rj_device_free(ctx, 0, dy);
  free(x);
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_tensor_state");
  /* cases small enough to run side by side in one device call of 10 minutes: CK_RUN_CASE=
   * shapes0 / shapes1 (the shapes in halves), runtime (runtime-size kernels, corrections, bench),
   * splits0 / splits1 / splits2 (one split shape each) */
  for (int h = 0; h < 2; h++) {
    TCase *th = tcase_create(h ? "shapes1" : "shapes0");
    tcase_set_timeout(th, 1200);
    tcase_add_checked_fixture(th, setup, teardown);
    tcase_add_loop_test(th, every_op_dtype_shape, h ? NSHAPES / 2 : 0, h ? NSHAPES : NSHAPES / 2);
    suite_add_tcase(s, th);
  }
  TCase *tc = tcase_create("runtime");
  tcase_set_timeout(tc, 1200);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, runtime_size, 0, NSHAPES);
  tcase_add_test(tc, corrections);
  tcase_add_test(tc, bench_bytes);
  suite_add_tcase(s, tc);
  for (int i = 0; i < NSPLITS; i++) {
    static const char *const names[] = {"splits0", "splits1", "splits2"};
    _Static_assert(sizeof names / sizeof names[0] == NSPLITS, "a case name per split shape");
    TCase *ts = tcase_create(names[i]);
    tcase_set_timeout(ts, 1200);
    tcase_add_checked_fixture(ts, setup, teardown);
    tcase_add_loop_test(ts, splits, i, i + 1);
    suite_add_tcase(s, ts);
  }
  TCase *tk = tcase_create("cluster"); /* CK_RUN_CASE=cluster: this one alone (sm_90+) */
  tcase_set_timeout(tk, 600);
  tcase_add_checked_fixture(tk, setup, teardown);
  tcase_add_test(tk, cluster);
  suite_add_tcase(s, tk);
  TCase *to = tcase_create("offset"); /* CK_RUN_CASE=offset: var f32's error at large offsets */
  tcase_set_timeout(to, 300);
  tcase_add_checked_fixture(to, setup, teardown);
  tcase_add_test(to, offset_error);
  suite_add_tcase(s, to);
  TCase *tv = tcase_create("values"); /* CK_RUN_CASE=values: this one alone */
  tcase_set_timeout(tv, 600);
  tcase_add_checked_fixture(tv, setup, teardown);
  tcase_add_test(tv, values);
  suite_add_tcase(s, tv);
  TCase *tn = tcase_create("values_nan16"); /* CK_RUN_CASE=values_nan16: NaN payloads of f16 */
  tcase_set_timeout(tn, 600);
  tcase_add_checked_fixture(tn, setup, teardown);
  tcase_add_test(tn, values_nan16);
  suite_add_tcase(s, tn);
  int failed = rjt_run_in_process(s);
  printf("%d state-op request cases run\n", cases_run);
  return failed ? 1 : 0;
}
