/* GPU suite for the tensor-only dtypes i8 u8 i16 u16 bool e4m3 e5m2: every op each takes on every
 * tensor variant, forced (rows, cols, generic, cluster; constant and runtime-size kernels), odd
 * sizes and strided views, NaN inputs for float8, accum, values and deterministic, axes [] (one
 * element per output), zero-size dims (the identity; no outputs: nothing launched), each against
 * `run`'s float64 / exact oracle (integers and max / min / argmax exact; float8 sums and means to
 * f32's roundoff).  Skips, saying so, without a GPU. CK_RUN_CASE=ops: the op x dtype x view matrix
 * alone; CK_RUN_CASE=more: the rest. */
#include "rjtest.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static rj_ctx *ctx;
static int gpu, cases_run;

static const char *const dts[] = {"i8", "u8", "i16", "u16", "bool", "e4m3", "e5m2"};
#define NDT 7
static const char *const ops[] = {"sum",    "max",    "min",  "prod", "and", "or",       "xor",
                                  "argmax", "argmin", "mean", "var",  "std", "logsumexp"};
#define NOP 13

static bool takes(int o, int d) {
  bool fp8 = d >= 5;
  if (o >= 3 && o <= 6) return !fp8; /* prod and or xor */
  if (o == 12) return fp8;           /* logsumexp */
  return true;
}

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

static void run(const char *json, int seeds, int nans) {
  for (int s = 0; s < seeds; s++)
    rjt_run_ok(ctx, json, (uint64_t)(s * 7919 + 5), nans);
  cases_run++;
}

typedef struct tcase {
  const char *view, *variant;
} tcase;
static const tcase views[] = {
    {"\"shape\":[7]", "tensor_rows"},
    {"\"shape\":[1000003]", "tensor_rows"},
    {"\"shape\":[13,17],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[4099,33],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[3,100003],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[9,1000],\"strides\":[1003,1],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[13,17],\"axes\":[0]", "tensor_cols"},
    {"\"shape\":[333,4096],\"axes\":[0]", "tensor_cols"},
    {"\"shape\":[100003,3],\"axes\":[0]", "tensor_cols"},
    {"\"shape\":[5,7,48],\"axes\":[1]", "tensor_cols"},
    {"\"shape\":[5,7,11],\"axes\":[0,2]", "tensor_generic"},
    {"\"shape\":[100,37],\"strides\":[1,101],\"axes\":[0]", "tensor_generic"},
    {"\"shape\":[8,16],\"strides\":[0,1],\"axes\":[0]", ""},
    {NULL, "tensor_cluster"}, /* 1-D of 40000 16-byte vectors and 3 elements */
};
#define NVIEWS ((int)(sizeof views / sizeof views[0]))

/* the request of op o, dtype d on view v (variant forced), more fields appended */
static const char *req(int o, int d, const tcase *v, const char *more) {
  char view[64];
  int vec = d == 2 || d == 3 ? 8 : 16;
  snprintf(view, sizeof view, "\"shape\":[%d]", 40000 * vec + 3);
  char var[64] = "";
  if (v->variant[0]) snprintf(var, sizeof var, ",\"variant\":\"%s\"", v->variant);
  return rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s%s%s}", ops[o], dts[d],
                 v->view ? v->view : view, var, more);
}

/* every op x dtype it takes on view _i, constant and (rows / cols) runtime-size kernels; NaNs in
 * float8 inputs both ways */
START_TEST(ops_matrix) {
  if (!gpu) return;
  const tcase *v = &views[_i];
  bool dyn_ok = v->view && strcmp(v->variant, "tensor_generic") && v->variant[0];
  for (int d = 0; d < NDT; d++)
    for (int o = 0; o < NOP; o++) {
      if (!takes(o, d)) continue;
      bool fp8 = d >= 5;
      run(req(o, d, v, ""), 1, fp8 ? 3 : 0);
      if (dyn_ok) run(req(o, d, v, ",\"dynamic\":true"), 1, 0);
      if (fp8 && o != 9 && o != 10 && o != 11) run(req(o, d, v, ",\"nan\":\"ignore\""), 1, 3);
    }
}
END_TEST

/* accum (the old output, of the result dtype, folded in), values, deterministic */
START_TEST(accum_values) {
  if (!gpu) return;
  static const tcase some[] = {{"\"shape\":[100003]", ""},
                               {"\"shape\":[257,1025],\"axes\":[1]", ""},
                               {"\"shape\":[1025,256],\"axes\":[0]", ""},
                               {"\"shape\":[6,7,8],\"axes\":[0,2]", ""}};
  for (int i = 0; i < 4; i++)
    for (int d = 0; d < NDT; d++) {
      for (int o = 0; o < 7; o++)
        if (takes(o, d)) run(req(o, d, &some[i], ",\"accum\":true"), 2, 0);
      run(req(7, d, &some[i], ",\"values\":true"), 2, d >= 5 ? 2 : 0);
      run(req(8, d, &some[i], ",\"values\":true"), 1, 0);
      run(req(0, d, &some[i], ",\"deterministic\":true"), 1, 0);
      run(req(10, d, &some[i], ",\"correction\":0"), 1, 0);
    }
}
END_TEST

/* axes []: each output is the op of one element (sum: x, mean: x, var: 0 or NaN with
 * correction 1, argmax: 0, max: x), written in the result dtype */
START_TEST(no_axes) {
  if (!gpu) return;
  static const tcase some[] = {{"\"shape\":[1000],\"axes\":[]", ""},
                               {"\"shape\":[37,41],\"axes\":[]", ""},
                               {"\"shape\":[6,5],\"strides\":[7,1],\"axes\":[]", ""}};
  for (int i = 0; i < 3; i++)
    for (int d = 0; d < NDT; d++)
      for (int o = 0; o < NOP; o++)
        if (takes(o, d)) run(req(o, d, &some[i], ""), 1, 0);
  static const char *const f[] = {"f16", "f32", "i32", "u64"};
  for (int i = 0; i < 4; i++)
    for (int o = 0; o < NOP; o++) {
      const char *j = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[33,"
                              "9],\"axes\":[]}",
                              ops[o], f[i]);
      rj_request r;
      if (rj_request_parse(ctx, j, &r) == RJ_OK) run(j, 1, 0);
    }
}
END_TEST

/* zero-size dims: an empty reduction writes the identity (sum 0, prod 1, and all ones, mean var
 * std NaN, logsumexp -inf) into every (poisoned) output; no outputs: nothing launched, success */
START_TEST(empty) {
  if (!gpu) return;
  static const char *const some[] = {"\"shape\":[4,0],\"axes\":[1]",
                                     "\"shape\":[0,37],\"axes\":[0]",
                                     "\"shape\":[3,0,5],\"axes\":[0,1]", "\"shape\":[0]"};
  static const char *const dt[] = {"f32", "f16", "i32", "u64", "i8", "bool", "e4m3"};
  for (int i = 0; i < 4; i++)
    for (int d = 0; d < 7; d++)
      for (int o = 0; o < NOP; o++) {
        if (o == 1 || o == 2 || o == 7 || o == 8) continue; /* refused: test_dtypes.c */
        for (int dyn = 0; dyn < 2; dyn++) {
          const char *j = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,"
                                  "\"dynamic\":%s}",
                                  ops[o], dt[d], some[i], dyn ? "true" : "false");
          rj_request r;
          if (rj_request_parse(ctx, j, &r) == RJ_OK) run(j, 1, 0);
        }
      }
  /* no outputs: any op, max included (NumPy returns an empty array) */
  static const char *const none[] = {"\"shape\":[0,5],\"axes\":[1]", "\"shape\":[0,0],\"axes\":[1]",
                                     "\"shape\":[7,0],\"axes\":[]"};
  for (int i = 0; i < 3; i++)
    for (int o = 0; o < NOP; o++) {
      const char *j = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s}", ops[o],
                              o == 12 ? "f32" : "i16", none[i]);
      char json[256];
      snprintf(json, sizeof json, "%s", j);
      rj_request r;
      if (rj_request_parse(ctx, json, &r) != RJ_OK) continue;
      rj_check_opts co;
      rj_check_opts_init(&co);
      rj_check_result res = {.struct_size = sizeof(rj_check_result)};
      ck_assert_msg(rj_check(ctx, &r, &co, &res) == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
      ck_assert_msg(res.ok && res.checked == 0 && res.wrong == 0, "%s: %s", json, res.first_error);
      cases_run++;
    }
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_dtypes");
  TCase *tc = tcase_create("ops");
  tcase_set_timeout(tc, 1200);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, ops_matrix, 0, NVIEWS);
  suite_add_tcase(s, tc);
  TCase *tm = tcase_create("more");
  tcase_set_timeout(tm, 1200);
  tcase_add_checked_fixture(tm, setup, teardown);
  tcase_add_test(tm, accum_values);
  tcase_add_test(tm, no_axes);
  tcase_add_test(tm, empty);
  suite_add_tcase(s, tm);
  int failed = rjt_run_in_process(s);
  printf("%d dtype request cases run\n", cases_run);
  return failed ? 1 : 0;
}
