/* GPU suite for tensor reductions (issue 6): many shapes (primes, 1, sizes that are not a
 * multiple of the vector width, views with misaligned rows; every seed also shifts the view's
 * start by seed mod 8 elements), every dtype and op, accum, NaN both ways, several axes, strided
 * views — each against the float64 oracle with poisoned outputs and guards, and every
 * deterministic request launched twice (bitwise equal, checked by `run`).  Skips without a GPU. */
#include "rjtest.h"

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
        snprintf(base, sizeof base, "\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\","
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
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  printf("%d tensor request cases run\n", cases_run);
  return failed ? 1 : 0;
}
