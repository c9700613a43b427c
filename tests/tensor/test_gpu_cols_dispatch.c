/* GPU suite for the default column requests that dispatch gives tensor_inv_cols (the invariant
 * mode's column kernel, where it is faster than tensor_cols: passes/variants/tensor_inv_cols.c,
 * default_faster_here): f16 / bf16 sums and means (the plan of 4 columns a thread, its aligned and
 * unaligned rows) and var / std of f32, f16 and bf16 (lanes and segments), 2-D columns and a
 * middle axis, NaN policies and var's correction, each against `run`'s float64 oracle with
 * poisoned outputs and misaligned starts.  The variant is forced: a request the rule stops routing
 * is refused, and the test says so.  Skips, saying so, without a GPU. */
#include "rjtest.h"

static rj_ctx *ctx;
static int gpu;

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

static void run(const char *op, const char *dt, const char *view, const char *more) {
  const char *json = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s%s,"
                             "\"variant\":\"tensor_inv_cols\"}",
                             op, dt, view, more);
  char req[512];
  snprintf(req, sizeof req, "%s", json);
  for (int s = 0; s < 3; s++)
    rjt_run_ok(ctx, req, (uint64_t)(s * 7919 + 11), 0);
}

static const char *const sum_views[] = {
    "\"shape\":[300,4100],\"axes\":[0]",   /* a partial tile of 128 columns */
    "\"shape\":[64,1030],\"axes\":[0]",    /* 1030: rows not a multiple of 4 columns */
    "\"shape\":[3,200,1536],\"axes\":[1]", /* a middle axis */
    "\"shape\":[5000,1024],\"axes\":[0]",  /* segments (over 4096 rows) */
};
static const char *const var_views[] = {
    "\"shape\":[2049,64],\"axes\":[0]", "\"shape\":[1024,100],\"axes\":[0]",
    "\"shape\":[2,1100,64],\"axes\":[1]", "\"shape\":[20003,70],\"axes\":[0]", /* segments */
};

START_TEST(sums_and_means) {
  if (!gpu) return;
  static const char *const dts[] = {"f16", "bf16"}, *const ops[] = {"sum", "mean"};
  for (int d = 0; d < 2; d++)
    for (int o = 0; o < 2; o++) {
      run(ops[o], dts[d], sum_views[_i], "");
      if (o == 0) run(ops[o], dts[d], sum_views[_i], ",\"nan\":\"ignore\""); /* (not mean's) */
    }
}
END_TEST

START_TEST(var_std) {
  if (!gpu) return;
  static const char *const dts[] = {"f32", "f16", "bf16"}, *const ops[] = {"var", "std"};
  for (int d = 0; d < 3; d++)
    for (int o = 0; o < 2; o++) {
      run(ops[o], dts[d], var_views[_i], "");
      run(ops[o], dts[d], var_views[_i], ",\"nan\":\"ignore\",\"correction\":0");
    }
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_cols_dispatch");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 1200);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, sums_and_means, 0, (int)(sizeof sum_views / sizeof sum_views[0]));
  tcase_add_loop_test(tc, var_std, 0, (int)(sizeof var_views / sizeof var_views[0]));
  suite_add_tcase(s, tc);
  return rjt_run_in_process(s) ? 1 : 0;
}
