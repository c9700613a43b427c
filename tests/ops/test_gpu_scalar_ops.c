/* GPU suite for the scalar ops prod, and, or, xor and mean: every variant that serves them, forced
 * (tensor rows / cols / generic / cluster, constant and runtime-size kernels; tile shared, local,
 * redux; treduce on the peer, staged, split and ring paths), every dtype each op takes, both NaN
 * policies where they apply, accum, shapes with tails and strided views, each against the
 * float64 / exact oracle of `run` (prod's inputs near 1, integer prod odd, and / or with sparse
 * bits: docs/CLI.md "redjit run").  Skips, saying so, without a GPU. */
#include "redjit_treduce.h"
#include "rjtest.h"

#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

static rj_ctx *ctx;
static int gpu, cases_run;

static const char *const new_ops[] = {"prod", "and", "or", "xor", "mean"};
static const char *const dtypes[] = {"f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"};
#define NOPS 5

static bool takes(int op, int d) {
  bool fl = d < 4;
  return op == 0 || (op == 4 ? fl : !fl);
}

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* seeds seeds of json; NaN inputs where the dtype is float (mean: nan = propagate only) */
static void run(const char *json, int seeds, int nans) {
  for (int s = 0; s < seeds; s++)
    rjt_run_ok(ctx, json, (uint64_t)(s * 7919 + 3), nans);
  cases_run++;
}

/* tensor views, with the variant each is forced onto ("" : dispatch's choice) */
typedef struct tcase {
  const char *view, *variant;
} tcase;
static const tcase tensor_cases[] = {
    {"\"shape\":[7]", "tensor_rows"},
    {"\"shape\":[1000003]", "tensor_rows"},
    {"\"shape\":[13,17],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[4099,33],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[3,100003],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[13,17],\"axes\":[0]", "tensor_cols"},
    {"\"shape\":[33,4099],\"axes\":[0]", "tensor_cols"},
    {"\"shape\":[100003,3],\"axes\":[0]", "tensor_cols"},
    {"\"shape\":[5,7,11],\"axes\":[1]", "tensor_cols"},
    {"\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[0]", "tensor_cols"},
    {"\"shape\":[5,7,11],\"axes\":[0,2]", "tensor_generic"},
    {"\"shape\":[4,6,8,10],\"axes\":[1,3]", "tensor_generic"},
    {"\"shape\":[100,37],\"strides\":[1,101],\"axes\":[0]", "tensor_generic"},
    {"\"shape\":[50,20],\"strides\":[40,2],\"axes\":[1]", "tensor_generic"},
    {"\"shape\":[8,16],\"strides\":[0,1],\"axes\":[0]", ""},
    {NULL, "tensor_cluster"}, /* 1-D of 40000 16-byte vectors and a tail: the dtype's */
};
#define NTENSOR ((int)(sizeof tensor_cases / sizeof tensor_cases[0]))

static const char *forced(const char *variant) {
  static char buf[64];
  snprintf(buf, sizeof buf, variant[0] ? ",\"variant\":\"%s\"" : "", variant);
  return buf;
}

/* every op x dtype it takes, constant and (rows / cols) runtime-size kernels, NaN both ways */
START_TEST(tensor_ops) {
  if (!gpu) return;
  const tcase *c = &tensor_cases[_i];
  bool cluster = !c->view;
  for (int o = 0; o < NOPS; o++)
    for (int d = 0; d < 8; d++) {
      if (!takes(o, d)) continue;
      char view[128];
      int vec = d < 2 ? 8 : d == 3 || d >= 6 ? 2 : 4;
      snprintf(view, sizeof view, "\"shape\":[%d]", 40000 * vec + 3);
      if (!cluster) snprintf(view, sizeof view, "%s", c->view);
      for (int dyn = 0; dyn < (cluster ? 1 : 2); dyn++)
        for (int nan = 0; nan < (d < 4 && o == 0 ? 2 : 1); nan++) {
          char v[64];
          snprintf(v, sizeof v, "%s", forced(c->variant));
          run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s%s,\"dynamic\":%s,"
                      "\"nan\":\"%s\"}",
                      new_ops[o], dtypes[d], view, v, dyn ? "true" : "false",
                      nan ? "ignore" : "propagate"),
              2, d < 4 ? 3 : 0);
        }
    }
}
END_TEST

/* accum folds the old value with prod / and / or / xor (mean refuses accum: test_scalar_ops.c) */
START_TEST(tensor_accum) {
  if (!gpu) return;
  static const char *const views[] = {"\"shape\":[100003]", "\"shape\":[257,1025],\"axes\":[1]",
                                      "\"shape\":[1025,257],\"axes\":[0]",
                                      "\"shape\":[6,7,8],\"axes\":[0,2]"};
  for (int i = 0; i < 4; i++)
    for (int o = 0; o < 4; o++)
      for (int d = 0; d < 8; d++)
        if (takes(o, d))
          run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"accum\":true}",
                      new_ops[o], dtypes[d], views[i]),
              2, 0);
}
END_TEST

/* acc_dtype "f64": sum, prod and mean of f16 / bf16 / f32 on every tensor view and variant,
 * constant and runtime-size, NaN both ways (sum, prod), accum (sum, prod); `run` holds them to the
 * output's rounding plus f64 roundoff (docs/CLI.md: an f32 accumulator fails that for f32 outputs;
 * for f16 / bf16 the exact cases below tell the accumulators apart). */
START_TEST(tensor_acc_f64) {
  if (!gpu) return;
  const tcase *c = &tensor_cases[_i];
  static const char *const ops[] = {"sum", "prod", "mean"};
  for (int o = 0; o < 3; o++)
    for (int d = 0; d < 3; d++) {
      char view[160];
      int vec = d < 2 ? 8 : 4;
      snprintf(view, sizeof view, "\"shape\":[%d]", 40000 * vec + 3);
      if (c->view) snprintf(view, sizeof view, "%s", c->view);
      for (int k = 0; k < (o < 2 ? 4 : 2); k++) { /* dynamic, then nan ignore, then accum */
        if (!c->view && k == 1) continue;
        run(rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s%s,"
                    "\"acc_dtype\":\"f64\"%s}",
                    ops[o], dtypes[d], view, forced(c->variant),
                    k == 1   ? ",\"dynamic\":true"
                    : k == 2 ? ",\"nan\":\"ignore\""
                    : k == 3 ? ",\"accum\":true"
                             : ""),
            2, k == 1 ? 0 : 3);
      }
    }
}
END_TEST

/* Sums whose one correct rounding neither an f32 accumulator nor a rounding through f32 to
 * nearest gives (element bits; an element not named is `rest`):
 *  - cancellations: 2^25, ones, -2^25 sum to exactly len - 2 in f64 (in f32, 2^25 + 1 is 2^25);
 *  - ties broken by a tiny element: f16 1 + 2^-11 + 2^-24 is 0x3c01 rounded once, 0x3c00 through
 *    f32 to nearest (1 + 2^-11, a tie, to even); bf16 1 + 2^-8 + 2^-24 likewise 0x3f81. */
typedef struct exact_case {
  const char *dtype;
  int len;                       /* elements per reduction */
  uint32_t first[3], last, rest; /* bits of elements 0..2 (0: rest), of the last one, others */
  uint32_t want;                 /* the result's bits (0: float len - 2, the f32 cancellation) */
} exact_case;
static const exact_case exact_cases[] = {
    {"f32", 3000001, {0x4c000000, 0, 0}, 0xcc000000, 0x3f800000, 0},
    {"bf16", 2097154, {0x4c00, 0, 0}, 0xcc00, 0x3f80, 0x4a00},
    {"f16", 3000001, {0x3c00, 0x1000, 0x0001}, 0, 0, 0x3c01},
    {"bf16", 3000001, {0x3f80, 0x3b80, 0x3380}, 0, 0, 0x3f81},
};

static uint32_t exact_bits(const exact_case *c, int i) {
  if (i < 3 && c->first[i]) return c->first[i];
  return i == c->len - 1 && c->last ? c->last : c->rest;
}

/* one exact case on rows ([4, len], axis 1), one 1-D input (len: several CTAs) and columns */
static void exact_views(const exact_case *c, void *h, int width) {
  static const char *const views[] = {"\"shape\":[4,%d],\"axes\":[1]", "\"shape\":[%d]",
                                      "\"shape\":[%d,4],\"axes\":[0]"};
  float f = (float)(c->len - 2);
  uint32_t want = c->want, got[4] = {0};
  if (!want) memcpy(&want, &f, sizeof want);
  for (int v = 0; v < 3; v++) {
    int rows = v == 1 ? 1 : 4, len = c->len;
    for (int r = 0; r < 4 * len; r++) {
      uint32_t b = exact_bits(c, v == 2 ? r / 4 : r % len); /* its place in its reduction */
      if (width == 4)
        ((uint32_t *)h)[r] = b;
      else
        ((uint16_t *)h)[r] = (uint16_t)b;
    }
    char view[64];
    snprintf(view, sizeof view, views[v], len);
    rj_request q;
    rjt_parse(ctx,
              rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"%s\",%s,"
                      "\"acc_dtype\":\"f64\"}",
                      c->dtype, view),
              &q);
    uint64_t src = 0, dst = 0;
    size_t bytes = (size_t)width * 4 * (size_t)c->len;
    ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes, &src), RJ_OK);
    ck_assert_int_eq(rj_device_alloc(ctx, 0, sizeof got, &dst), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, src, h, bytes), RJ_OK);
    ck_assert_int_eq(rj_reduce(ctx, &q, NULL, src, dst, NULL), RJ_OK);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, dst, (size_t)(width * rows)), RJ_OK);
    for (int r = 0; r < rows; r++) {
      uint32_t g = width == 4 ? got[r] : ((uint16_t *)got)[r];
      ck_assert_msg(g == want, "%s view %d output %d: bits 0x%x, expected 0x%x", c->dtype, v, r, g,
                    want);
    }
    rj_device_free(ctx, 0, src);
    rj_device_free(ctx, 0, dst);
    cases_run++;
  }
}

START_TEST(acc_f64_exact) {
  if (!gpu) return;
  const exact_case *c = &exact_cases[_i];
  int width = strcmp(c->dtype, "f32") == 0 ? 4 : 2;
  void *h = malloc((size_t)width * 4 * (size_t)c->len);
  ck_assert_ptr_nonnull(h);
  exact_views(c, h, width);
  free(h);
}
END_TEST

#define LOCAL_WARP                                                                                  \
  "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],"    \
  "\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4]," \
  "\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]"

/* tile shared (one level, two levels, thread scope, a region), local (warp, thread), redux */
START_TEST(tile_ops) {
  if (!gpu) return;
  static const char *const bodies[] = {
      "\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[16,40]},"
      "\"dst\":{\"mem\":\"shared\",\"shape\":[16]}",
      "\"scope\":\"cta\",\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":[2,3000]},"
      "\"dst\":{\"mem\":\"shared\",\"shape\":[2]}",
      "\"scope\":\"cta\",\"threads\":32,\"src\":{\"mem\":\"shared\",\"shape\":[32,32],\"start\":[1,1],"
      "\"extent\":[5,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[32],\"start\":[2],\"extent\":[5]},"
      "\"axes\":[-1]",
      "\"scope\":\"warpgroup\",\"threads\":256,\"active\":{\"warpgroup\":1},"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,300]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[6,10]},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[6]}",
      LOCAL_WARP,
      LOCAL_WARP ",\"variant\":\"local\"",
  };
  for (size_t b = 0; b < sizeof bodies / sizeof bodies[0]; b++)
    for (int o = 0; o < NOPS; o++)
      for (int d = 0; d < 8; d++)
        for (int acc = 0; acc < (o == 4 ? 1 : 2); acc++)
          if (takes(o, d))
            run(rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"accum\":%s}",
                        new_ops[o], dtypes[d], bodies[b], acc ? "true" : "false"),
                2, 0);
}
END_TEST

/* NaN policies of prod and mean (propagate) on the tile variants */
START_TEST(tile_nan) {
  if (!gpu) return;
  static const char *const bodies[] = {
      "\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[16,40]},"
      "\"dst\":{\"mem\":\"shared\",\"shape\":[16]}",
      LOCAL_WARP,
  };
  for (int b = 0; b < 2; b++)
    for (int d = 0; d < 4; d++)
      for (int k = 0; k < 3; k++) {
        const char *op = k == 2 ? "mean" : "prod", *nan = k == 1 ? "ignore" : "propagate";
        const char *j =
            rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"nan\":\"%s\"}", op,
                    dtypes[d], bodies[b], nan);
        for (int s = 0; s < 3; s++)
          rjt_run_ok(ctx, j, 100 + (uint64_t)s, 1 + s * 3);
        cases_run++;
      }
}
END_TEST

/* redux.sync.and / or / xor (i32, u32: whole warp) against the oracle */
START_TEST(redux_bitwise) {
  if (!gpu) return;
  for (int o = 1; o < 4; o++)
    for (int d = 4; d < 6; d++)
      run(rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"variant\":\"redux\",%s}",
                  new_ops[o], dtypes[d], LOCAL_WARP),
          3, 0);
}
END_TEST

/* treduce prod / and / or / xor: the automatic path, staged, and the ring where it serves */
START_TEST(treduce_ops) {
  if (!gpu) return;
  static const char *const shapes[] = {
      "\"ranks\":4,\"root\":1,\"shape\":[512,33],\"tile\":[64,33],\"pingpong\":true",
      "\"ranks\":3,\"root\":0,\"shape\":[100003]",
      "\"ranks\":5,\"root\":4,\"shape\":[300,1000],\"strides\":[1001,1],\"accum\":true",
      "\"ranks\":200,\"root\":7,\"shape\":[3,70],\"tile\":[2,64]",
  };
  static const rj_treduce_path paths[] = {RJ_TREDUCE_AUTO, RJ_TREDUCE_STAGED, RJ_TREDUCE_RING};
  for (int sh = 0; sh < 4; sh++)
    for (int o = 0; o < 4; o++)
      for (int d = 0; d < 8; d++) {
        if (!takes(o, d)) continue;
        const char *j = rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",%s}",
                                new_ops[o], dtypes[d], shapes[sh]);
        char json[1024];
        snprintf(json, sizeof json, "%s", j);
        for (int p = 0; p < 3; p++) {
          /* staged: one accumulating launch per rank, each rounding an f16 / bf16 product once
           * more (as sums): 199 roundings are past the oracle's tolerance */
          if (sh == 3 && d < 2 && o == 0 && paths[p] == RJ_TREDUCE_STAGED) continue;
          rj_request r;
          rjt_parse(ctx, json, &r);
          rj_check_opts opt;
          rj_check_opts_init(&opt);
          opt.seed = 50 + (uint64_t)sh;
          opt.nan_count = d < 4 ? 2 : 0;
          rj_check_result res = {.struct_size = sizeof res};
          rj_treduce_result tr = {.struct_size = sizeof tr};
          rj_status s = rj_treduce_check(ctx, &r, &opt, paths[p], &res, &tr);
          if (s == RJ_EUNSUPPORTED && paths[p] != RJ_TREDUCE_AUTO) continue; /* ring: refused */
          ck_assert_msg(s == RJ_OK, "run failed (%s): %s\n  path %d, request: %s",
                        rj_status_name(s), rj_errmsg(ctx), (int)paths[p], json);
          ck_assert_msg(res.ok, "wrong result (path %s, %lld wrong of %lld): %s\n  request: %s",
                        tr.path, (long long)res.wrong, (long long)res.checked, res.first_error,
                        json);
          cases_run++;
        }
      }
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_scalar_ops");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 1200);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, tensor_ops, 0, NTENSOR);
  tcase_add_test(tc, tensor_accum);
  tcase_add_test(tc, tile_ops);
  tcase_add_test(tc, tile_nan);
  tcase_add_test(tc, redux_bitwise);
  tcase_add_test(tc, treduce_ops);
  suite_add_tcase(s, tc);
  TCase *ta = tcase_create("acc_f64"); /* CK_RUN_CASE=acc_f64: acc_dtype "f64" alone */
  tcase_set_timeout(ta, 600);
  tcase_add_checked_fixture(ta, setup, teardown);
  tcase_add_loop_test(ta, tensor_acc_f64, 0, NTENSOR);
  tcase_add_loop_test(ta, acc_f64_exact, 0, (int)(sizeof exact_cases / sizeof exact_cases[0]));
  suite_add_tcase(s, ta);
  int failed = rjt_run_in_process(s);
  printf("%d scalar-op request cases run\n", cases_run);
  return failed ? 1 : 0;
}
